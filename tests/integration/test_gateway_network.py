"""No traffic anywhere but the configured API and model: every connection and name lookup the real
`hermes gateway run` makes through a chat with a tool call is recorded by a Python audit hook (loaded with
sitecustomize from PYTHONPATH, observing, patching nothing) and must be loopback."""

from __future__ import annotations

import ipaddress
import textwrap

import pytest

pytest.importorskip("telegram")

from tests.integration.gateway_helpers import Gateway  # noqa: E402

HOOK = textwrap.dedent("""
    import os, sys
    _log = os.environ.get("HERMES_TEST_NETLOG")
    def _hook(event, args):
        if event == "socket.connect":
            addr = args[1]
            line = "connect " + (addr if isinstance(addr, str) else str(addr[0]))
        elif event == "socket.getaddrinfo":
            host = args[0]
            line = "lookup " + (host.decode("ascii", "replace") if isinstance(host, bytes) else str(host))
        else:
            return
        with open(_log, "a") as f:
            f.write(line + "\\n")
    if _log:
        sys.addaudithook(_hook)
""")


def _loopback(host: str) -> bool:
    if host in ("localhost", "") or host.startswith("/") or host.startswith("\0"):
        return True  # unix sockets and the loopback name
    try:
        return ipaddress.ip_address(host.split("%")[0]).is_loopback
    except ValueError:
        return False


def test_the_gateway_talks_only_to_loopback(fake, scripted, hermes_home, tmp_path):
    site = tmp_path / "site"
    site.mkdir()
    (site / "sitecustomize.py").write_text(HOOK)
    netlog = tmp_path / "net.log"
    scripted.add({"tool_calls": [{"name": "terminal", "arguments": {"command": "echo from-the-tool"}}]})
    scripted.add({"content": "done"})
    gw = Gateway(hermes_home, fake, scripted.url,
                 env={"GATEWAY_ALLOW_ALL_USERS": "true", "PYTHONPATH": str(site), "HERMES_TEST_NETLOG": str(netlog)})
    try:
        gw.start()
        fake.user_says("run it")
        assert fake.wait_for(lambda: any("done" in m["text"] for m in fake.sent), timeout=60), gw.output()
    finally:
        gw.stop()
    lines = netlog.read_text().splitlines()
    connects = [line.split(" ", 1)[1] for line in lines if line.startswith("connect ")]
    lookups = [line.split(" ", 1)[1] for line in lines if line.startswith("lookup ")]
    assert any(c == "127.0.0.1" for c in connects), lines  # the hook saw the Bot API and model traffic
    assert [c for c in connects if not _loopback(c)] == []
    assert [h for h in lookups if not _loopback(h)] == []
