import subprocess
import sys
import time

# Processes that start a fresh interpreter own all their memory: taking off what a process forked
# from the zygote shares with it left a few hundred MiB of each uncounted.
grab = "import mmap, time; m = mmap.mmap(-1, 300 * 1024**2, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS | mmap.MAP_POPULATE); time.sleep(60)"
children = []
for _ in range(6):
    try:
        children.append(subprocess.Popen([sys.executable, "-c", grab]))
    except OSError:
        break
time.sleep(60)
