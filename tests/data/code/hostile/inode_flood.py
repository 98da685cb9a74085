import os

# Empty files without end: each costs an inode and a dentry of kernel memory, which no size limit
# of the working folder counts.
made = 0
for i in range(2_000_000):
    try:
        os.close(os.open(f"f{i}", os.O_CREAT | os.O_WRONLY, 0o600))
    except OSError:
        break
    made += 1
raise RuntimeError(f"empty files made: {'at most 4096' if made <= 4096 else made}")
