import socket

# Socket families no check needs: AF_VSOCK shares the host's vsock port space (a job could bind a
# port the host's agents use), AF_NETLINK talks to the kernel, AF_PACKET sees raw frames.
opened = []
for name, family, kind in (("vsock", 40, socket.SOCK_STREAM), ("netlink", 16, socket.SOCK_RAW),
                           ("packet", 17, socket.SOCK_RAW)):
    try:
        made = socket.socket(family, kind)
    except OSError:
        continue
    try:
        if name == "vsock":
            made.bind((0xFFFFFFFF, 5000))  # VMADDR_CID_ANY
        opened.append(name)
    except OSError:
        opened.append(name + " (made, not bound)")
    made.close()
raise RuntimeError(f"socket families opened: {', '.join(opened) or 'none'}")
