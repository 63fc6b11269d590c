"""No traffic anywhere but the configured API and model: every connection and name lookup the real
`hermes gateway run` makes through a chat with a tool call is recorded by a Python audit hook (loaded with
sitecustomize from PYTHONPATH, observing, patching nothing) and must be loopback."""

from __future__ import annotations

import ipaddress
import os
import signal
import socket
import subprocess
import textwrap

import pytest

pytest.importorskip("telegram")

from tests.helpers import HERMES, model_config  # noqa: E402
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


def test_sigterm_stops_a_gateway_whose_api_never_answered(scripted, hermes_home):
    # the start retries getMe until the API answers (network or DNS down at boot): SIGTERM (`hermes gateway stop`,
    # a service manager, Ctrl+C) waited for it forever; it now ends the start
    with socket.socket() as silent:  # accepts connections (the kernel's backlog) and never answers
        silent.bind(("127.0.0.1", 0))
        silent.listen(8)
        silent.settimeout(30)
        model_config(hermes_home, scripted.url, "platforms:\n  telegram:\n    extra:\n"
                                                f"      base_url: http://127.0.0.1:{silent.getsockname()[1]}/bot\n")
        env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "HERMES_", "TELEGRAM_"))}
        env.update(HERMES_HOME=str(hermes_home), TELEGRAM_BOT_TOKEN="1:silent", GATEWAY_ALLOW_ALL_USERS="true",
                   MESSAGING_CWD=str(hermes_home))
        proc = subprocess.Popen([HERMES, "gateway", "run"], env=env, stdout=subprocess.PIPE,
                                stderr=subprocess.STDOUT, text=True)
        try:
            conn, _ = silent.accept()  # the gateway's getMe is waiting for its answer
            proc.send_signal(signal.SIGTERM)
            out, _ = proc.communicate(timeout=10)
            conn.close()
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
    assert proc.returncode == 0, out
    assert "polling" not in out
