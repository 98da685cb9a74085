import os

# Files just under the size limit of one file, as many as fit: without a working folder of its own
# size (a container that refuses mounts), they filled the machine's disk.
block = b"\0" * (1024 * 1024)
written = 0
for i in range(10_000):
    try:
        with open(f"blob{i}", "wb") as out:
            for _ in range(15):
                out.write(block)
                written += len(block)
    except OSError:
        break
raise RuntimeError(f"bytes written: {'at most 64 MiB' if written <= 64 * 1024 * 1024 else written}")
