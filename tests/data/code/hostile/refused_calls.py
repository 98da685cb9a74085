import ctypes
import os
import subprocess
import sys

# What no namespace or Landlock rule stops, each tried once: a memory-backed file (mapped untouched,
# closed or sent away it hid memory from the job's count, and its contents could be executed),
# pages pinned in a pipe (vmsplice), and starting a program.
said = []
try:
    os.memfd_create("hidden")
    said.append("memfd_create: allowed")
except OSError as err:
    said.append(f"memfd_create: {err.strerror}")
libc = ctypes.CDLL(None, use_errno=True)
read_end, write_end = os.pipe()
buffer = ctypes.create_string_buffer(4096)
iov = (ctypes.c_void_p * 2)(ctypes.cast(buffer, ctypes.c_void_p), 4096)
number = {"x86_64": 278, "aarch64": 75}.get(os.uname().machine, 278)
if libc.syscall(number, write_end, iov, 1, 0) < 0:
    said.append(f"vmsplice: {os.strerror(ctypes.get_errno())}")
else:
    said.append("vmsplice: allowed")
try:
    subprocess.run([sys.executable, "-c", "pass"], check=False)
    said.append("execve: allowed")
except OSError as err:
    said.append(f"execve: {err.strerror}")
raise RuntimeError("; ".join(said))
