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
