"""The web tools' address guard: which addresses are refused, that every address a name resolves to is
checked, and that the connection goes to the address that was checked (DNS rebinding cannot switch it)."""

from __future__ import annotations

import ipaddress
import socket

import pytest

from hermes_agent.tools.builtin._webnet import (
    BlockedAddress,
    FetchError,
    Limits,
    blocked_reason,
    check_url,
    fetch,
)
from tests.fixtures.web_site import Site


@pytest.mark.parametrize(("address", "reason"), [
    ("127.0.0.1", "a loopback address"), ("::1", "a loopback address"), ("10.1.2.3", "a private address"),
    ("192.168.0.10", "a private address"), ("172.16.5.5", "a private address"),
    ("fd00::1", "a private address"), ("fe80::1", "a link-local address"), ("169.254.10.10", "a link-local address"),
    ("::ffff:127.0.0.1", "a loopback address"), ("100.64.0.1", "a reserved, non-public address"),
    ("0.0.0.0", "not a host address"), ("169.254.169.254", "a cloud metadata address"),
    ("fd00:ec2::254", "a cloud metadata address"), ("::ffff:169.254.169.254", "a cloud metadata address"),
    ("8.8.8.8", None), ("2606:4700::1111", None),
])
def test_blocked_reason(address, reason):
    assert blocked_reason(ipaddress.ip_address(address), allow_private=False) == reason


def test_allowing_private_addresses_never_allows_metadata():
    assert blocked_reason(ipaddress.ip_address("10.0.0.1"), allow_private=True) is None
    assert blocked_reason(ipaddress.ip_address("169.254.169.254"), allow_private=True) == "a cloud metadata address"
    with pytest.raises(BlockedAddress, match="metadata host"):
        fetch("http://metadata.google.internal/computeMetadata/v1/", Limits(allow_private=True))


@pytest.mark.parametrize("url", ["file:///etc/passwd", "ftp://example.com/x", "http:///nohost",
                                 "http://user:pw@example.com/"])
def test_only_plain_http_urls_are_fetched(url):
    with pytest.raises(FetchError):
        check_url(url)


def _fake_dns(monkeypatch: pytest.MonkeyPatch, answers: list[list[str]]) -> list[str]:
    """socket.getaddrinfo answering 'rebind.test' from `answers` in turn; returns the names asked."""
    real = socket.getaddrinfo
    asked: list[str] = []

    def getaddrinfo(host, port, *args, **kw):  # noqa: ANN001, ANN202
        if host != "rebind.test":
            return real(host, port, *args, **kw)
        asked.append(host)
        ips = answers[min(len(asked), len(answers)) - 1]
        return [(socket.AF_INET6 if ":" in ip else socket.AF_INET, socket.SOCK_STREAM, 6, "", (ip, port))
                for ip in ips]

    monkeypatch.setattr(socket, "getaddrinfo", getaddrinfo)
    return asked


def test_connection_goes_to_the_checked_address_not_a_second_dns_answer(monkeypatch):
    with Site() as site:
        port = site.url.rsplit(":", 1)[1]
        asked = _fake_dns(monkeypatch, [["93.184.216.34"], ["127.0.0.1"]])  # public first, then rebinds
        with pytest.raises(FetchError) as err:
            fetch(f"http://rebind.test:{port}/article.html", Limits(timeout=3))
        # the test network guard refused the connect to the checked public address: no second lookup was made
        assert "93.184.216.34" in str(err.value) and "test network guard" in str(err.value)
        assert asked == ["rebind.test"] and site.requests == []


def test_a_name_with_any_private_address_is_refused(monkeypatch):
    _fake_dns(monkeypatch, [["93.184.216.34", "10.0.0.7"]])
    with pytest.raises(BlockedAddress, match=r"rebind.test resolves to 10.0.0.7, a private address"):
        fetch("http://rebind.test/", Limits(timeout=3))


def test_each_redirect_hop_is_checked_again(monkeypatch):
    with Site() as site:
        _fake_dns(monkeypatch, [["127.0.0.1"]])
        port = site.url.rsplit(":", 1)[1]
        allowed = Limits(timeout=3, allow_private=True)
        assert fetch(f"http://rebind.test:{port}/r1", allowed).url == f"http://rebind.test:{port}/article.html"
        with pytest.raises(BlockedAddress, match="169.254.169.254 is a cloud metadata address"):
            fetch(f"http://rebind.test:{port}/to-metadata", allowed)
        hops = [r["path"] for r in site.requests]
        assert hops == ["/r1", "/r2", "/r3", "/article.html", "/to-metadata"]
        assert site.requests[0]["headers"]["host"] == f"rebind.test:{port}"  # the name, not the pinned IP


def test_gzip_bodies_non_ascii_paths_and_the_byte_cap():
    with Site() as site:
        allowed = Limits(timeout=3, allow_private=True)
        assert b"Tidal locking happens" in fetch(f"{site.url}/gz.html", allowed).body
        assert fetch(f"{site.url}/café.html", allowed).status == 200
        capped = fetch(f"{site.url}/gz.html", Limits(timeout=3, allow_private=True, max_bytes=100))
        assert capped.truncated and len(capped.body) == 100 and capped.body.startswith(b"<!doctype html>")


@pytest.mark.parametrize(("url", "found"), [
    ("https://evil.example/?q=sk-proj-abcdefghijklmnopqrstuvwxyz123456", "looks like an API key"),
    ("https://evil.example/c?d=ghp_%41bcdefghijklmnopqrstuvwxyz0123456789", "looks like an API key"),
    ("https://evil.example/x?api_key=abc", "credential-like query parameter (api_key)"),
    ("https://evil.example/x?Token=abc", "credential-like query parameter (Token)"),
    ("https://docs.example/tokens?page=2", None), ("https://example.com/search?q=secret+santa", None),
])
def test_urls_carrying_credentials_are_refused_before_any_fetch(url, found):
    from hermes_agent.tools.builtin._webnet import secret_in_url

    reason = secret_in_url(url)
    assert (reason is None) if found is None else (found in reason)
