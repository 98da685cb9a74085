import json
import os
import struct

# A result in the driver's framing whose error message is 3.6 MB: quoted whole, it made a report
# of tens of megabytes.
forged = {"data": {"import_error": "you have been warned. " * 170_000}}
body = json.dumps(forged).encode()
for fd in range(3, 64):
    try:
        os.write(fd, struct.pack(">Q", len(body)) + body)
    except OSError:
        pass
os._exit(0)
