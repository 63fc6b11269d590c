"""Which URLs a tool may fetch or open (Hermes's url_safety rules): http(s) only; loopback, private,
link-local, CGNAT and other non-public addresses refused unless the user allows private URLs
(`security.allow_private_urls`, `browser.allow_private_urls` or HERMES_ALLOW_PRIVATE_URLS); cloud
metadata endpoints refused always. A host name is judged by every address it resolves to."""

from __future__ import annotations

import ipaddress
import socket
from collections.abc import Callable, Mapping
from urllib.parse import urlsplit

IP = ipaddress.IPv4Address | ipaddress.IPv6Address
Resolver = Callable[[str], list[str]]

METADATA_HOSTS = frozenset({"metadata.google.internal", "metadata.goog", "metadata"})
_METADATA_IPS = frozenset(ipaddress.ip_address(a) for a in (
    "169.254.169.254", "169.254.170.2", "169.254.169.253", "fd00:ec2::254", "100.100.100.200"))
_LINK_LOCAL = (ipaddress.ip_network("169.254.0.0/16"), ipaddress.ip_network("fe80::/10"))
_CGNAT = ipaddress.ip_network("100.64.0.0/10")
_TRUE = {"1", "true", "yes", "on"}


def allow_private(env: Mapping[str, str], *flags: object) -> bool:
    """HERMES_ALLOW_PRIVATE_URLS (true/false wins over config), else any of the config flags."""
    value = str(env.get("HERMES_ALLOW_PRIVATE_URLS", "")).strip().lower()
    if value:
        return value in _TRUE
    return any(f is True or str(f).strip().lower() in _TRUE for f in flags)


def resolve(host: str) -> list[str]:
    """Every address `host` resolves to (empty when it does not resolve)."""
    try:
        infos = socket.getaddrinfo(host, None, proto=socket.IPPROTO_TCP)
    except (OSError, UnicodeError):
        return []
    return sorted({str(info[4][0]) for info in infos})


def _unmapped(ip: IP) -> IP:
    mapped = getattr(ip, "ipv4_mapped", None)
    return mapped if mapped is not None else ip


def _is_metadata(ip: IP) -> bool:
    ip = _unmapped(ip)
    return ip in _METADATA_IPS or any(ip in net for net in _LINK_LOCAL if ip.version == net.version)


def _is_private(ip: IP) -> bool:
    ip = _unmapped(ip)
    if ip.version == 4 and ip in _CGNAT:
        return True
    return not ip.is_global or ip.is_multicast


def address_problem(ip: IP, allow_private_urls: bool) -> str | None:
    """What `ip` is when a tool must not connect to it ("a cloud metadata address", ...), or None. The one
    address policy of the web and browser tools."""
    ip = _unmapped(ip)
    if ip in _METADATA_IPS:
        return "a cloud metadata address"
    if _is_metadata(ip):
        return "a link-local address"  # refused even when private URLs are allowed: metadata services live there
    if ip.is_multicast or ip.is_unspecified:
        return "not a host address"
    if allow_private_urls or not _is_private(ip):
        return None
    for attr, label in (("is_loopback", "loopback"), ("is_private", "private")):
        if getattr(ip, attr):
            return f"a {label} address"
    return "a reserved, non-public address"


def url_problem(url: str, allow_private_urls: bool, resolver: Resolver = resolve) -> str | None:
    """Why `url` must not be opened (a sentence for the model), or None when it may."""
    try:
        parts = urlsplit(url.strip())
        host = (parts.hostname or "").rstrip(".").lower()
    except ValueError:
        return f"Blocked: {url!r} is not a valid URL"
    if parts.scheme not in ("http", "https"):
        return f"Blocked: only http and https URLs can be opened, not {parts.scheme or 'a bare path'!r}"
    if not host:
        return f"Blocked: {url!r} has no host"
    if host in METADATA_HOSTS:
        return "Blocked: URL targets a cloud metadata endpoint"
    try:
        addresses = [ipaddress.ip_address(host)]
    except ValueError:
        addresses = [ipaddress.ip_address(a.split("%")[0]) for a in resolver(host)]
    if any(_is_metadata(a) for a in addresses):
        return "Blocked: URL targets a cloud metadata endpoint"
    if not allow_private_urls and any(_is_private(a) for a in addresses):
        return ("Blocked: URL targets a private or internal address (set security.allow_private_urls: true "
                "in config.yaml to allow it)")
    problem = next((p for a in addresses if (p := address_problem(a, allow_private_urls))), None)
    return f"Blocked: URL targets {problem}" if problem else None  # 0.0.0.0, [::], multicast: never a host


def loopback_problem(url: str, granted: tuple[int, ...] | None, resolver: Resolver = resolve) -> str | None:
    """Why the confined browser may not open `url` on the host's loopback (None: it may). `granted` None: the
    browser shares the host's network (no namespace of its own); else only the ports `sandbox.loopback_ports`
    grants are reachable there, for what Chromium fetches (its own network namespace, netwrap.py) and for what
    Playwright fetches on its behalf (navigations, redirect hops, WebSockets: checked here)."""
    if granted is None:
        return None
    try:
        parts = urlsplit(url.strip())
        host = (parts.hostname or "").rstrip(".").lower()
        port = parts.port or (443 if parts.scheme in ("https", "wss") else 80)
    except ValueError:
        return None  # url_problem says why
    try:
        addresses = [ipaddress.ip_address(host)]
    except ValueError:
        addresses = [ipaddress.ip_address(a.split("%")[0]) for a in resolver(host)] if host else []
    if port in granted or not any(_unmapped(a).is_loopback for a in addresses):
        return None
    return (f"Blocked: port {port} of this machine's loopback is not granted to the browser (it runs in a network "
            f"namespace of its own); grant it with sandbox.loopback_ports: [{port}] in config.yaml")
