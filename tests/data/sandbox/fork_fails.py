"""A zygote whose fork fails: it must answer that it could not start the job, and serve the next one.

    python fork_fails.py FOLDER

Run as a user that RLIMIT_NPROC binds (not root: the test runs it in a user namespace of its
own). Starts a zygote in FOLDER, lowers the zygote's process cap below what it runs, asks for a
job, raises the cap again, asks again; prints the two answers' statuses and errors as JSON."""

import json
import resource
import subprocess
import sys

from attngrade import sandbox

folder = sys.argv[1]
listener = sandbox.listen(folder)
proc = subprocess.Popen(sandbox.zygote_command(["--serve", str(listener.fileno())]), pass_fds=(listener.fileno(),),
                        stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=sandbox._zygote_env(), cwd=folder)
path = listener.getsockname()
listener.close()
assert proc.stdout.readline().strip() == b"ready"
request = {"files": {"dataset.py": ""}, "job": {"kind": "span_corruption", "cases": []}, "timeout": 20}
hard = resource.prlimit(proc.pid, resource.RLIMIT_NPROC)[1]
answers = []
for cap in (1, hard):
    resource.prlimit(proc.pid, resource.RLIMIT_NPROC, (cap, hard))
    try:
        answer = sandbox._ask_socket(path, request, 60)
    except (OSError, EOFError) as err:
        answer = {"status": f"no answer: {type(err).__name__}: {err}"}
    answers.append({"status": answer.get("status"), "error": answer.get("error", ""), "alive": proc.poll() is None})
proc.stdin.close()
proc.wait(timeout=30)
print(json.dumps(answers))
