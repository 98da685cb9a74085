import ctypes
import mmap

# System V shared memory and a message queue under a fixed key, never removed: without an IPC
# namespace of its own they outlived the job and the grader.
KEY = 0x61676E72
IPC_CREAT = 0o1000
libc = ctypes.CDLL(None, use_errno=True)
libc.shmat.restype = ctypes.c_void_p
segment = libc.shmget(KEY, 64 * 1024 * 1024, IPC_CREAT | 0o666)
if segment >= 0:
    address = libc.shmat(segment, None, 0)
    if address not in (None, ctypes.c_void_p(-1).value):
        ctypes.memset(address, 1, 64 * 1024 * 1024)
        libc.shmdt(ctypes.c_void_p(address))
queue = libc.msgget(KEY, IPC_CREAT | 0o666)
if queue >= 0:
    message = ctypes.create_string_buffer(b"\x01\x00\x00\x00\x00\x00\x00\x00left behind", 64)
    libc.msgsnd(queue, message, 32, 0)
raise RuntimeError(f"left shared memory {segment} and message queue {queue} behind")
