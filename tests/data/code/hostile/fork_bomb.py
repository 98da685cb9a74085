import os
import time

for _ in range(200):
    try:
        if os.fork() == 0:
            os.setsid()
            time.sleep(600)
            os._exit(0)
    except OSError:
        pass
time.sleep(600)
