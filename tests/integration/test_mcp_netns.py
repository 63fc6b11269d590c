"""MCP stdio servers get a network namespace of their own (issue 19 leftovers, netwrap.py), like the terminal's:
a hostile server's `run_shell`, driven through `hermes chat -q`, cannot reach the user's unauthenticated loopback
services (here an HTTP server on the host's 127.0.0.1 holding a secret, standing for a keyless `hermes api`,
Redis or node --inspect) nor the cloud metadata address, unless the port is granted (`sandbox.loopback_ports`,
or per server `mcp_servers.NAME.sandbox.loopback_ports`); the outside stays reachable. HOME outside /tmp and
under it, bwrap and Landlock."""

from __future__ import annotations

import importlib.util
import json
import os

import pytest

from hermes_agent.terminal.sandbox.netns import forwarder
from tests.integration.test_mcp_confinement import MECHANISMS, _config, _hostile, _run, user_home  # noqa: F401
from tests.integration.test_sandbox_netns import SECRET, _host_ip, _Web

pytestmark = [pytest.mark.skipif(importlib.util.find_spec("mcp") is None, reason="the mcp SDK is not installed"),
              pytest.mark.skipif(forwarder() is None, reason="slirp4netns is not installed")]

PROBE = ("python3 -c \"import socket\nfor a in ('169.254.169.254', '100.100.100.200'):\n"
         "    try: socket.create_connection((a, 80), timeout=10); print(a, 'CONNECTED')\n"
         "    except OSError as e: print(a, e.strerror)\"")


def _fetch(url: str) -> str:
    return f"curl -s -m 5 {url} || echo UNREACHABLE"


def _results(scripted) -> list[str]:
    return [m["content"] for m in scripted.requests[-1]["body"]["messages"] if m["role"] == "tool"]


@pytest.mark.parametrize("mechanism", MECHANISMS)
def test_mcp_server_cannot_reach_host_loopback_or_metadata_unless_granted(scripted, user_home, mechanism):  # noqa: F811 (the imported fixture)
    if mechanism == "landlock":
        from hermes_agent.terminal.sandbox.spec import SandboxSpec
        from hermes_agent.terminal.sandbox.wrapped import own_network
        if not own_network(SandboxSpec(network=True), "landlock"):
            pytest.skip("Landlock cannot make a network namespace here")
    secret = _Web("127.0.0.1", SECRET)
    outside = _Web(_host_ip(), "hello from outside")
    loop = f"http://127.0.0.1:{secret.port}/"
    servers = _hostile() + _hostile().replace("  evil:", "  granted:") + \
        f"    sandbox:\n      loopback_ports: [{secret.port}]\n"
    _config(user_home, scripted.url, servers, mechanism)
    calls = [("mcp__evil__run_shell", _fetch(loop)), ("mcp__evil__run_shell", PROBE),
             ("mcp__evil__run_shell", _fetch(f"http://{_host_ip()}:{outside.port}/")),
             ("mcp__granted__run_shell", _fetch(loop))]
    scripted.add(*[{"tool_calls": [{"name": n, "arguments": {"command": c}}]} for n, c in calls],
                 {"content": "done"})
    try:
        out = _run(user_home, "chat", "-q", "look around")
    finally:
        secret.close()
        outside.close()
    assert out.returncode == 0, out.stderr
    shut, metadata, internet, granted = _results(scripted)
    assert "exit=0" in shut and "UNREACHABLE" in shut and SECRET not in shut, shut
    assert metadata.count("No route to host") == 2 and "CONNECTED" not in metadata, metadata
    assert "hello from outside" in internet, internet
    assert SECRET in granted, granted


def test_doctor_and_mcp_test_say_what_a_server_reaches(scripted, user_home):  # noqa: F811 (the imported fixture)
    _config(user_home, scripted.url, _hostile() + _hostile().replace("  evil:", "  granted:") +
            "    sandbox:\n      loopback_ports: [6379]\n", "bwrap")
    doctor = _run(user_home, "doctor", "--offline")
    lines = doctor.stdout.splitlines()
    evil = next(line for line in lines if "MCP server evil" in line)
    granted = next(line for line in lines if "MCP server granted" in line)
    assert "network on (own namespace: your loopback services are not reachable)" in evil, evil
    assert "granted host loopback ports: 6379" in granted, granted


def test_a_bad_loopback_ports_value_is_one_clear_line(scripted, user_home):  # noqa: F811 (the imported fixture)
    _config(user_home, scripted.url, _hostile("    sandbox:\n      loopback_ports: [redis]\n"), "bwrap")
    out = _run(user_home, "mcp", "test", "evil")
    text = out.stdout + out.stderr
    assert "Traceback" not in text and "`sandbox.loopback_ports` must be a list of TCP port numbers" in text, text
    json.dumps(text)


SYSTEM_PYTHON = "/usr/bin/python3"  # readable by every account (a pyenv python under /root is not)


@pytest.mark.skipif(os.geteuid() != 0 or not os.access(SYSTEM_PYTHON, os.X_OK),
                    reason="needs root and a system python to run as another user")
@pytest.mark.parametrize("mechanism", MECHANISMS)
def test_a_wrapped_program_gets_its_namespace_without_privileges(mechanism, tmp_path):
    """As a normal user (nobody), what hermes runs for an MCP server or the browser (`sandbox_command`): the
    same namespace, routes and relay, with slirp4netns's own sandbox off (bwrap's namespace maps no uid 0)."""
    import shutil
    import subprocess
    import tempfile
    from pathlib import Path

    secret = _Web("127.0.0.1", SECRET)
    base = "/home" if os.access("/home", os.W_OK) else None  # HOME outside /tmp where we can
    home = Path(tempfile.mkdtemp(prefix="hermes-nb-", dir=base))
    for sub in ("work", ".hermes"):
        (home / sub).mkdir()
    for path in (home, home / "work", home / ".hermes"):
        os.chmod(path, 0o777)
    script = Path(__file__).with_name("_netwrap_unprivileged.py")
    try:
        res = subprocess.run(["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "--", "env",
                              f"HOME={home}", "PATH=/usr/bin:/bin", SYSTEM_PYTHON, str(script), mechanism, str(home),
                              str(secret.port)], capture_output=True, text=True, timeout=240, cwd="/")
    finally:
        secret.close()
        shutil.rmtree(home, ignore_errors=True)
    lines = res.stdout.splitlines()
    assert res.returncode == 0 and len(lines) == 4, res.stdout + res.stderr[-2000:]
    assert lines[0] == "SHUT 127.0.0.1 Connection refused", lines
    assert lines[1] == "SHUT 169.254.169.254 No route to host", lines
    assert lines[2] == "GRANTED 127.0.0.1 200", lines
    assert lines[3] == "GRANTED 169.254.169.254 No route to host", lines
