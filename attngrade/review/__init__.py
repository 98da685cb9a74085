"""`grade review`: a local web app where course staff grade what waits for them, group by group.

- `embed`: text to vectors (the small wordllama model of the `embed` extra, else hashed n-grams);
- `grouping`: answers grouped by normalized text and by meaning, ordered by meaning, suggestions
  from graded neighbours, near-identical answers across students (an aid to people, never a grader);
- `classroom`: a run's OUT and its staff store (`outputs.staff`) as parts, groups and members;
- `app`: the Starlette app (token on every request, strict CSP, jinja2 templates, one static script);
- `server`: binds 127.0.0.1, prints the URL with its token, runs uvicorn.
"""
