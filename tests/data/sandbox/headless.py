"""A process whose main thread ends while a second thread forks a sleeper and lives on.

    python headless.py [--alone] [UID]

In a session of its own, as UID if given (run as root then); with --alone the thread forks
nothing, so the process's ended main thread and its live one are all there is of it.

/proc then shows the process as a zombie although its thread still runs (and could fork
again): what the supervisor's sweep must still find and kill. Run as a script, in a fresh
interpreter: a process forked from one whose OpenMP threads ran (torch) cannot end its main
thread alone. Prints "x" once the sleeper is forked (or, alone, once the thread runs)."""

import ctypes
import os
import sys
import threading
import time

SLEEP = 20  # seconds: long past any test, short enough not to linger if one leaks it


def forker(alone: bool) -> None:
    if not alone and os.fork() == 0:
        time.sleep(SLEEP)
        os._exit(0)
    sys.stdout.write("x")
    sys.stdout.flush()
    time.sleep(SLEEP)


if __name__ == "__main__":
    if os.getsid(0) != os.getpid():
        os.setsid()
    args = sys.argv[1:]
    alone = "--alone" in args
    uid = next((int(a) for a in args if a != "--alone"), None)
    if uid is not None:
        os.setgroups([])
        os.setgid(uid)
        os.setuid(uid)
    threading.Thread(target=forker, args=(alone,), daemon=True).start()
    time.sleep(0.2)
    ctypes.CDLL(None).pthread_exit(None)  # ends only the main thread
