import mmap

# Shared mappings are not private memory: RLIMIT_DATA alone let 6 GiB of them through.
held = []
for _ in range(6):
    block = mmap.mmap(-1, 1024**3, flags=mmap.MAP_SHARED)
    for offset in range(0, 1024**3, 4096):
        block[offset] = 1
    held.append(block)
