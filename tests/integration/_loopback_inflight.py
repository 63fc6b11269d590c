"""Helper of test_loopback_services: a client whose socket only a thread with a private fd table holds
(unshare(CLONE_FILES)): /proc/<pid>/fd does not list it, so the server cannot attribute the connection."""

import ctypes
import os
import socket
import sys
import threading
from urllib.parse import urlsplit

url = urlsplit(sys.argv[1])
fd = socket.create_connection((url.hostname, url.port)).detach()
ready, closed, reply = threading.Event(), threading.Event(), []


def hidden() -> None:
    if ctypes.CDLL(None, use_errno=True).unshare(0x400) != 0:  # CLONE_FILES: this thread's own fd table
        raise OSError(ctypes.get_errno(), "unshare")
    ready.set()
    closed.wait()
    sock = socket.socket(fileno=fd)
    sock.sendall(f"GET /v1/models HTTP/1.1\r\nHost: {url.netloc}\r\nConnection: close\r\n\r\n".encode())
    data = b""
    while chunk := sock.recv(65536):
        data += chunk
    reply.append(data.decode(errors="replace"))


thread = threading.Thread(target=hidden)
thread.start()
ready.wait()
os.close(fd)  # gone from the process's table, still open in the thread's
closed.set()
thread.join()
print(reply[0] if reply else "no reply")
