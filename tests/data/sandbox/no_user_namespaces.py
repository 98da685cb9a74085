"""Run a command (this process is root) in a user namespace that maps every uid to itself and allows
no further user namespace: an ordinary user started in it is as on a host that forbids unprivileged
user namespaces. Usage: python no_user_namespaces.py COMMAND..."""

import ctypes
import os
import sys

CLONE_NEWUSER = 0x10000000
libc = ctypes.CDLL(None, use_errno=True)
mapped_r, mapped_w = os.pipe()
entered_r, entered_w = os.pipe()
pid = os.fork()
if pid == 0:
    if libc.unshare(CLONE_NEWUSER) != 0:
        raise SystemExit(f"unshare: {os.strerror(ctypes.get_errno())}")
    os.write(entered_w, b"x")
    os.read(mapped_r, 1)  # the parent maps the uids and gids first
    with open("/proc/sys/user/max_user_namespaces", "w") as limit:
        limit.write("0")
    os.execvp(sys.argv[1], sys.argv[1:])
os.read(entered_r, 1)
for name in ("uid_map", "gid_map"):
    with open(f"/proc/{pid}/{name}", "w") as mapping:
        mapping.write("0 0 4294967295")
os.write(mapped_w, b"x")
_, status = os.waitpid(pid, 0)
sys.exit(os.waitstatus_to_exitcode(status))
