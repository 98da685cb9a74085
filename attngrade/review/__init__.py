"""`grade review`: a local web app where a team of course staff grade what waits for them, group by group.

- `embed`: text to vectors (the small wordllama model of the `embed` extra, else hashed n-grams);
- `grouping`: answers grouped by normalized text and by meaning, ordered by meaning, suggestions
  from graded neighbours, near-identical answers across students (an aid to people, never a grader);
- `classroom`: a run's OUT and its staff store (`attngrade.staff`) as parts, groups and members;
- `names`: how a student is shown (a pseudonym graded anonymously, else the id with look-alikes escaped);
- `solutions`: a part's reference solution and rubric, for staff;
- `inputs`: what a request may hold, checked before anything reads it;
- `api`: the JSON API, every change carrying the versions it saw;
- `guard`: graders' secrets (never a cookie), the Host, bounds and security headers;
- `app`: the Starlette routes (page shells and the API) and one static script;
- `server`: a loopback address of the run's own, each grader's URL printed, uvicorn.
"""
