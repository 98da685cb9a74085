hoard = bytearray(10 * 1024**3)
