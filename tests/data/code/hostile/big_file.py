chunk = b"x" * (1 << 20)
with open("big.bin", "wb") as handle:
    for _ in range(1024):
        handle.write(chunk)
