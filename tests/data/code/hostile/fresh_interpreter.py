import subprocess
import sys
import time

# Processes that start a fresh interpreter own all their memory: taking off what a process forked
# from the zygote shares with it left a few hundred MiB of each uncounted. Where Landlock is there,
# no program starts at all.
grab = "import mmap, time; m = mmap.mmap(-1, 300 * 1024**2, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS | mmap.MAP_POPULATE); time.sleep(60)"
children = []
for _ in range(6):
    try:
        children.append(subprocess.Popen([sys.executable, "-c", grab]))
    except OSError as err:
        raise RuntimeError(f"could not start a program: {err}") from None
time.sleep(60)
