"""One module per measurement of bench/run.py; each has a `run(opts, ...)` that prints as it goes and
returns what bench-results.json records.

    realistic    the synthetic class graded by `grade run` (realistic, worst case, or 100,000)
    memory       the peak memory of that run's process tree
    executors    --workers 1 / --workers 2 / --executor dask, and the two-worker ratio pairs
    check_kinds  CPU per distinct answer, by check kind (bench/check_times.py)
    code         the code-check class (sandboxed student code) with each executor
    baseline     the same class graded by another checkout: the part verdicts that differ
    review       the staff grading app (`grade review`) at class scale (bench/review_bench.py)
    cold         `grade check` as a fresh process against the `import sympy, numpy` floor
    otter        Otter-Grader's `otter run` and `grade run` on the same 20 answers
    profiles     cProfile and stage timings of the runs whose target was missed
"""
