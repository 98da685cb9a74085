import os

for path in ("__TARGET__", "../escaped.txt", "/tmp/attngrade-escaped.txt", os.path.expanduser("~/escaped.txt")):
    try:
        with open(path, "w") as handle:
            handle.write("escaped")
    except OSError:
        pass
try:
    os.remove("__TARGET__.keep")
except OSError:
    pass
raise SystemExit(0)
