"""Host header matching of the local HTTP frontends (config/listen.py): exact names and literal addresses."""

from __future__ import annotations

import pytest

from hermes_agent.config.listen import host_allowed, host_of


def test_host_of_strips_port_and_brackets():
    assert host_of("127.0.0.1:8642") == "127.0.0.1"
    assert host_of("[::1]:9119") == "::1"
    assert host_of("LocalHost") == "localhost"
    assert host_of("[::1") == ""
    assert host_of("[::1].evil:80") == "" and host_of("127.0.0.1:x") == ""


@pytest.mark.parametrize("header,bound,ok", [
    ("127.0.0.1:1", "127.0.0.1", True), ("localhost", "127.0.0.1", True), ("[::1]:5", "127.0.0.1", True),
    ("127.9.9.9", "127.0.0.1", True), ("127.attacker.example", "127.0.0.1", False),
    ("127.0.0.1.attacker.example:80", "127.0.0.1", False), ("localhost.evil", "127.0.0.1", False),
    ("evil.example", "127.0.0.1", False), ("", "127.0.0.1", False), ("192.168.1.5", "127.0.0.1", False),
    ("192.168.1.5:80", "0.0.0.0", True), ("myhost.lan", "myhost.lan", True), ("myhost.lan.evil", "myhost.lan", False),
    ("evil.example", "0.0.0.0", False), (None, "127.0.0.1", True)])
def test_exact_match_only(header, bound, ok):
    assert host_allowed(header, bound) is ok


def test_extra_names():
    assert host_allowed("box.example:80", "0.0.0.0", ("Box.Example",))
    assert not host_allowed("box.example.evil", "0.0.0.0", ("box.example",))
