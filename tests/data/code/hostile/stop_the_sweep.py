import fcntl
import os
import time

# A process of the job, in a session of its own, has the kernel send SIGSTOP to the supervisor's process
# group again and again (a pipe's O_ASYNC owner, with F_SETSIG): any process that joins the job's uid to
# end it (as the sweep once did, to kill(-1) as that uid) is stopped on the spot, and the supervisor waited
# for it forever. The supervisor's group is found in the machine's /proc, where the job can see it.
def _stat(pid):
    return open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()

try:
    group = int(_stat(int(_stat(os.getppid())[1]))[2])
except (OSError, ValueError, IndexError):
    group = None
if group and os.fork() == 0:
    os.setsid()
    if os.fork() == 0:
        r, w = os.pipe()
        fcntl.fcntl(r, fcntl.F_SETOWN, -group)
        fcntl.fcntl(r, 10, 19)  # F_SETSIG: SIGSTOP instead of SIGIO
        fcntl.fcntl(r, fcntl.F_SETFL, fcntl.fcntl(r, fcntl.F_GETFL) | os.O_ASYNC | os.O_NONBLOCK)
        while True:
            os.write(w, b"x")
            os.read(r, 64)
    while True:
        time.sleep(1)
time.sleep(0.5)
raise RuntimeError("the sweep's stopper is armed")
