# An exception whose text is the grader's own wording for its failures: a report must not read it as
# attngrade's word (the points would wait for staff, as for a failure of the machine).
raise RuntimeError("attngrade could not run your code (the sandbox could not be entered); course staff will look "
                   "at it. attngrade itself failed while checking this answer")
