import os
import struct

# Text that is small as the child writes it (raw UTF-8, under the result limit) and grew past the
# grader's bound once the supervisor passed it on with every character escaped: the grader then
# called the part its own failure and left it pending.
body = b'{"data":"' + "\u00e9".encode() * 1_900_000 + b'"}'
for fd in range(3, 64):
    try:
        os.write(fd, struct.pack(">Q", len(body)) + body)
    except OSError:
        pass
os._exit(0)
