import glob
import os
import socket

# Path-named Unix sockets of the machine: a world-writable one (reachable from any uid) and the
# grader's own (reachable from its uid), given by the test, and whatever lies where sockets do.
candidates = [p for p in "__SOCKETS__".split(":") if p]
for pattern in ("/tmp/*", "/tmp/*/*", "/tmp/*/*/*", "/run/*", "/run/*/*", "/var/run/*", "/var/run/*/*",
                "/run/user/*/*", "/dev/shm/*", os.path.expanduser("~/.*/*")):
    candidates += glob.glob(pattern)
reached = []
for path in candidates:
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as conn:
            conn.settimeout(1)
            conn.connect(path)
            conn.sendall(b"leaked")
            reached.append(path)
    except OSError:
        pass
raise SystemExit(f"unix sockets reached: {len(reached)} {reached[:3]}")
