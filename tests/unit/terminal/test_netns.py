"""netns.py helpers on real files and the real kernel: the resolv.conf a namespace needs, the host's
loopback listeners `hermes doctor` lists, the granted-port setting, and the byte counters' "since the last
look"."""

from __future__ import annotations

import os
import socket

from hermes_agent.terminal.sandbox import netns
from hermes_agent.terminal.sandbox.spec import _ports


def test_resolv_conf_kept_unless_the_resolver_is_on_loopback(tmp_path):
    plain = tmp_path / "plain"
    plain.write_text("nameserver 10.1.2.3\nsearch corp\n")
    assert netns.resolv_conf_override(str(plain)) is None
    stub = tmp_path / "stub"
    stub.write_text("# systemd-resolved\nnameserver 127.0.0.53\noptions edns0 trust-ad\nsearch corp\n")
    assert netns.resolv_conf_override(str(stub)) == b"nameserver 10.0.2.3\noptions edns0 trust-ad\nsearch corp\n"
    assert netns.resolv_conf_override(str(tmp_path / "missing")) is None


def test_host_loopback_ports_lists_a_listener():
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen(1)
        port = server.getsockname()[1]
        assert port in netns.host_loopback_ports()
    with socket.socket() as bound_only:  # bound, not listening: nothing to reach
        bound_only.bind(("127.0.0.1", 0))
        assert bound_only.getsockname()[1] not in netns.host_loopback_ports()


def test_loopback_ports_setting_keeps_valid_ports_once():
    assert _ports([5432, "8080", " 5432 ", 0, 80, 70000, "x", None]) == (5432, 8080)
    assert _ports(()) == ()


def test_counters_report_bytes_since_the_last_look():
    """Against this process's own namespaces (the host's: eth0 counters move by themselves, so only the
    bookkeeping is checked: a look right after the previous one sees what arrived in between)."""
    ns = netns.NetNS.of_pid(os.getpid())
    try:
        first = ns.rx_bytes()
        assert first >= 0
        ns._seen = first - 1  # as if one byte arrived since the last look
        assert ns.took_in() is True
        ns._seen = ns.rx_bytes() + 10**12  # nothing new since (counters never go backwards)
        assert ns.took_in() is False
    finally:
        ns.close()
    assert ns.rx_bytes() == 0  # closed: nothing held any more
