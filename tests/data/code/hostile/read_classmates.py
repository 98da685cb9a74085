import os

# The class folder and the output folder, found on the grader's command line in /proc, and every
# classmate's files and earlier results read from them: where only file permissions guard the grader's
# folders (a container without Landlock), they must be the grader's alone.
roots = set()
try:
    pids = [p for p in os.listdir("/proc") if p.isdigit()]
except OSError:
    pids = []
for pid in pids:
    try:
        argv = open(f"/proc/{pid}/cmdline", "rb").read().split(b"\0")
    except OSError:
        continue
    if b"run" in argv and len(argv) > argv.index(b"run") + 1:
        roots.add(argv[argv.index(b"run") + 1].decode("utf-8", "replace"))
    if b"-o" in argv and len(argv) > argv.index(b"-o") + 1:
        roots.add(argv[argv.index(b"-o") + 1].decode("utf-8", "replace"))
read = 0
for root in sorted(roots):
    for here, _, names in os.walk(root):
        for name in names:
            try:
                with open(os.path.join(here, name), "rb") as f:
                    f.read(100)
                read += 1
            except OSError:
                pass
raise RuntimeError(f"classmates' files read: {read}")
