"""An "internet" for sandbox network tests: a network namespace of its own joined to this host by a veth pair
(198.18.0.0/15, the benchmarking range), made once per test process as root with iproute2. A server there is
reached through slirp4netns like any outside host, and is not one of this host's own addresses (which the
sandbox's namespace refuses, red-team round 7 a04). Servers bind their socket in it from a short-lived thread
(a network namespace is per thread; the socket keeps it)."""

from __future__ import annotations

import atexit
import ctypes
import ipaddress
import os
import shutil
import socket
import subprocess
import threading

_MADE: list[str] = []  # [namespace name, its address]


def outside_ip() -> str | None:
    """The outside host's address, or None where it cannot be made (not root, no `ip`)."""
    if _MADE:
        return _MADE[1]
    if os.geteuid() != 0 or shutil.which("ip") is None:
        return None
    pid = os.getpid()
    name, host_if, peer_if = f"hermes-out-{pid}", f"hov{pid % 10**8}", f"hon{pid % 10**8}"
    base = int(ipaddress.IPv4Address("198.18.0.0")) + (pid % 32768) * 4
    mine, theirs = str(ipaddress.IPv4Address(base + 1)), str(ipaddress.IPv4Address(base + 2))
    steps = [["ip", "netns", "add", name], ["ip", "link", "add", host_if, "type", "veth", "peer", "name", peer_if],
             ["ip", "link", "set", peer_if, "netns", name], ["ip", "addr", "add", f"{mine}/30", "dev", host_if],
             ["ip", "link", "set", host_if, "up"], ["ip", "-n", name, "addr", "add", f"{theirs}/30", "dev", peer_if],
             ["ip", "-n", name, "link", "set", peer_if, "up"], ["ip", "-n", name, "link", "set", "lo", "up"]]
    for step in steps:
        if subprocess.run(step, capture_output=True, check=False).returncode != 0:
            subprocess.run(["ip", "netns", "del", name], capture_output=True, check=False)
            return None
    atexit.register(subprocess.run, ["ip", "netns", "del", name], capture_output=True, check=False)
    _MADE[:] = [name, theirs]
    return theirs


def listening_socket(host: str, udp: bool = False) -> socket.socket:
    """A TCP socket listening on (host, any port), or a UDP one bound there: in the outside namespace when
    `host` is its address."""
    def make() -> socket.socket:
        if not udp:
            return socket.create_server((host, 0))
        sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        sock.bind((host, 0))
        return sock

    if not _MADE or host != _MADE[1]:
        return make()
    made: list = []

    def inside() -> None:
        libc = ctypes.CDLL(None, use_errno=True)
        fd = os.open(f"/run/netns/{_MADE[0]}", os.O_RDONLY)
        try:
            if libc.setns(fd, 0x40000000) != 0:  # CLONE_NEWNET, this thread only
                raise OSError(ctypes.get_errno(), "setns")
            made.append(make())
        except OSError as exc:
            made.append(exc)
        finally:
            os.close(fd)

    thread = threading.Thread(target=inside)
    thread.start()
    thread.join()
    if isinstance(made[0], OSError):
        raise made[0]
    return made[0]
