"""Where a local HTTP frontend (`hermes api`, `hermes dashboard`) may listen: loopback freely, any other
address only behind a secret long enough that nobody on the network can guess it."""

from __future__ import annotations

import ipaddress

MIN_SECRET_CHARS = 16


def is_loopback(host: str) -> bool:
    """True for localhost and every loopback address (127.0.0.0/8, ::1)."""
    if host.strip().lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip().strip("[]")).is_loopback
    except ValueError:
        return False


def bind_refusal(host: str, secret: str, secret_name: str, what: str) -> str | None:
    """Why listening on `host` with this secret is refused (None when it is allowed)."""
    if is_loopback(host) or len(secret) >= MIN_SECRET_CHARS:
        return None
    return (f"refusing to listen on {host} without {secret_name} of at least {MIN_SECRET_CHARS} "
            f"characters (anyone on the network could {what})")


_WILDCARDS = ("", "0.0.0.0", "::")


def host_of(header: str) -> str:
    """The host part of a Host header, lowercased, without port or IPv6 brackets ("[::1]:80" -> "::1")."""
    value = header.strip().lower()
    if value.startswith("["):
        inner, bracket, rest = value[1:].partition("]")
        port_ok = rest == "" or (rest[:1] == ":" and rest[1:].isdigit())
        return inner if bracket and port_ok else ""
    name, colon, port = value.rpartition(":")
    if colon and value.count(":") == 1:
        return name if port.isdigit() else ""
    return value


def host_allowed(header: str | None, bound: str, names: tuple[str, ...] = ()) -> bool:
    """Is a request's Host header one this server answers to? By exact match only: `localhost`, a literal
    loopback address, the configured host, `names`, and (on a wildcard bind) any literal address. A name
    that merely starts like an address (`127.attacker.example`, DNS rebinding) is refused. No header
    at all is not a browser (every browser sends one) and passes."""
    if header is None:
        return True
    host = host_of(header)
    bound = bound.strip().strip("[]").lower()
    if not host:
        return False
    if host == "localhost" or host == bound or host in (n.strip().lower() for n in names):
        return True
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        return False
    return address.is_loopback or bound in _WILDCARDS
