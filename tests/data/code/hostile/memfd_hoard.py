import os
import time

# Memory-backed files written but never mapped, in two processes (each stays within its open-files
# limit): no process's resident memory shows them and no address-space limit holds them; the job's
# memory cap missed them. Where seccomp is there, none can be made at all.
os.fork()
held = []
for i in range(50):
    try:
        fd = os.memfd_create(f"hoard-{i}")
        os.write(fd, b"\x01" * (15 * 1024**2))
        held.append(fd)
    except OSError as err:
        raise RuntimeError(f"could not make a memory-backed file: {err.strerror}") from None
time.sleep(60)
