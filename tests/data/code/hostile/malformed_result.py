import json
import os
import struct

# A result in the driver's framing whose contents no driver writes: a draw naming a document
# by text, where the grader reads an index.
forged = {"data": {"cases": [{"name": "long-24", "itos": ["a"], "draws": [{"doc": "zz", "x": {}, "y": {}}]}]}}
body = json.dumps(forged).encode()
for fd in range(3, 64):
    try:
        os.write(fd, struct.pack(">Q", len(body)) + body)
    except OSError:
        pass
os._exit(0)
