import base64
import glob
import json
import os
import re
import socket
import struct

# Ask the zygote for a job of our own: a daemon that outlives everything, no time limit worth
# the name, a process cap of a thousand. Its socket's path was in the zygote's command line and
# environment, which every child inherits; the test may also give it (__ZYGOTE__).
paths = {p for p in "__ZYGOTE__".split(":") if p}
for source in ("/proc/self/cmdline", "/proc/self/environ", "/proc/1/cmdline"):
    try:
        text = open(source, "rb").read().decode("utf-8", "replace")
    except OSError:
        continue
    for folder in re.findall(r"/[\w./-]*attngrade-zygote-\w+", text):
        paths.update(glob.glob(folder + "/sock") + glob.glob(folder + "/*/sock"))
paths.update(glob.glob("/tmp/attngrade-zygote-*/sock") + glob.glob("/tmp/attngrade-zygote-*/*/sock"))
daemon = ("import os, time\nif os.fork() == 0:\n    os.setsid()\n    time.sleep(600)\ntime.sleep(600)\n")
request = {"files": {"dataset.py": base64.b64encode(daemon.encode()).decode()},
           "job": {"kind": "span_corruption", "cases": []}, "timeout": 600,
           "limits": {"processes": 1000, "cpu_seconds": 600, "memory": 8 * 1024**3}}
body = json.dumps(request).encode()
outcome = []
for path in sorted(paths):
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as conn:
            conn.settimeout(2)
            conn.connect(path)
            if conn.recv(1) != b"\x01":
                outcome.append("refused")
                continue
            conn.sendall(struct.pack(">Q", len(body)) + body)
            outcome.append("served")
    except OSError as err:
        outcome.append(type(err).__name__)
raise SystemExit(f"zygote: {len(paths)} found, served {outcome.count('served')}")
