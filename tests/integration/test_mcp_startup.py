"""MCP and start-up (issues 22 item 3 and 24 item 5): a missing server costs nothing and is one line; a one-shot
run waits for a slow server (up to mcp_single_query_discovery_timeout) so its tools are offered; an interactive
agent adds tools that arrive late before its next turn and says so."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from hermes_agent.events import Notice
from tests.helpers import model_config, run_hermes

ROOT = Path(__file__).resolve().parents[2]


def _slow_time_server(delay: float) -> str:
    """mcp_servers YAML for mcp-server-time that starts `delay` seconds late (above the old 1.5 s wait)."""
    pytest.importorskip("mcp", reason="the [mcp] extra is not installed")
    pytest.importorskip("mcp_server_time", reason="mcp-server-time is not installed (.ci/install-mcp-servers.sh)")
    script = f"import time, runpy; time.sleep({delay}); runpy.run_module('mcp_server_time', run_name='__main__')"
    return f"mcp_servers:\n  slow:\n    command: {sys.executable}\n    args: ['-c', {json.dumps(script)}]\n"


def test_a_missing_server_is_one_line_and_costs_nothing(scripted, hermes_home):
    model_config(hermes_home, scripted.url, "mcp_servers:\n  ghost:\n    command: /nonexistent/mcp-ghost\n")
    scripted.add({"content": "hi there"})
    out = run_hermes("chat", "-q", "hi", home=hermes_home)
    assert out.returncode == 0 and out.stdout.strip() == "hi there", out.stderr
    lines = [ln for ln in out.stderr.splitlines() if "ghost" in ln]
    assert len(lines) == 1 and "command not found: /nonexistent/mcp-ghost" in lines[0], out.stderr
    assert "Traceback" not in out.stderr
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "HERMES_"))}
    counts = subprocess.run([sys.executable, str(ROOT / "bench" / "startup_counts.py"), "chat"], env={
        **env, "HERMES_HOME": str(hermes_home)}, capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL)
    seen = json.loads(counts.stdout.splitlines()[-1])
    assert seen["mcp_imported"] is False  # the SDK was never loaded
    # nor the manager, its event loop or the context watch: the server was sorted out from the config alone
    assert "asyncio" not in seen["heavy_imported"], seen["heavy_imported"]
    loaded = set(seen["hermes_module_names"])
    assert not loaded & {"hermes_agent.tools.mcp.manager", "hermes_agent.tools.ctxwatch",
                         "hermes_agent.tools.mcp.confine"}, sorted(loaded)


def test_a_disabled_or_broken_server_next_to_a_missing_one_each_get_one_line(scripted, hermes_home):
    model_config(hermes_home, scripted.url, "mcp_servers:\n  ghost:\n    command: nonexistent-mcp-ghost\n"
                 "  off:\n    command: /nonexistent/off\n    enabled: false\n  broken:\n    args: [x]\n")
    scripted.add({"content": "hi there"})
    out = run_hermes("chat", "-q", "hi", home=hermes_home)
    assert out.returncode == 0 and out.stdout.strip() == "hi there", out.stderr
    named = {n: [ln for ln in out.stderr.splitlines() if f"MCP server {n} " in ln] for n in ("ghost", "off", "broken")}
    assert len(named["ghost"]) == 1 and "command not found: nonexistent-mcp-ghost" in named["ghost"][0], out.stderr
    assert named["off"] == [], out.stderr  # disabled on purpose: nothing to say
    assert len(named["broken"]) == 1 and "exactly one of `command`" in named["broken"][0], out.stderr


def test_one_shot_waits_for_a_slow_server_and_offers_its_tools(scripted, hermes_home):
    model_config(hermes_home, scripted.url, _slow_time_server(3))
    scripted.add({"content": "ok"})
    out = run_hermes("chat", "-q", "what time is it?", home=hermes_home, timeout=90)
    assert out.returncode == 0, out.stderr
    offered = {t["function"]["name"] for t in scripted.requests[0]["body"]["tools"]}
    assert "mcp__slow__get_current_time" in offered


def test_interactive_agent_adds_late_tools_before_the_next_turn_and_says_so(scripted, hermes_home):
    from hermes_agent.bootstrap import build_agent
    from hermes_agent.config.loader import load_settings
    from hermes_agent.tools.registry import registry

    model_config(hermes_home, scripted.url, _slow_time_server(2))
    scripted.add({"content": "first"}, {"content": "second"})
    events: list = []
    agent = build_agent(load_settings(), event_callback=events.append,  # hermes-cli: presets take MCP tools
                        interactive=True, persist=False)
    try:
        agent.run_turn("hi")  # the server is still starting: the turn does not wait for it
        assert not any(t["function"]["name"].startswith("mcp__") for t in scripted.requests[0]["body"]["tools"])
        deadline = time.monotonic() + 60
        while registry.get("mcp__slow__get_current_time") is None and time.monotonic() < deadline:
            time.sleep(0.1)
        agent.run_turn("again")
    finally:
        agent.close()
    notices = [e.text for e in events if isinstance(e, Notice) and "MCP tools now available" in e.text]
    assert len(notices) == 1 and "mcp__slow__get_current_time" in notices[0]
    assert "mcp__slow__get_current_time" in {t["function"]["name"] for t in scripted.requests[1]["body"]["tools"]}


def test_a_server_that_dies_at_start_is_one_line_and_the_run_goes_on(scripted, hermes_home):
    script = "import sys; sys.stderr.write('boom: no API key\\n'); sys.exit(3)"
    model_config(hermes_home, scripted.url,
                 f"mcp_servers:\n  dying:\n    command: {sys.executable}\n    args: ['-c', {json.dumps(script)}]\n")
    scripted.add({"content": "hi there"})
    out = run_hermes("chat", "-q", "hi", home=hermes_home, timeout=90)
    assert out.returncode == 0 and out.stdout.strip() == "hi there", out.stderr
    lines = [ln for ln in out.stderr.splitlines() if "dying" in ln]
    assert len(lines) == 1, out.stderr  # noticed when the process ended, before the SDK was even needed
    assert "exited with code 3 before it answered" in lines[0] and "boom: no API key" in lines[0], lines[0]
    assert "Traceback" not in out.stderr
    assert not any(t["function"]["name"].startswith("mcp__") for t in scripted.requests[0]["body"]["tools"])


def test_server_stderr_is_stored_terminal_safe_where_the_warning_and_hermes_logs_agree(scripted, hermes_home):
    """rt12 a50: the log the warning names holds no escape sequence the server wrote; `hermes logs mcp` shows it."""
    script = ("import sys; sys.stderr.write('copied\\x1b]52;c;ZXZpbA==\\x07 \\x1b]0;RT-TITLE\\x07\\x1b[2J\\r\\n'"
              " + 'x' * 70000 + '\\nfatal: no key\\n'); sys.exit(3)")
    model_config(hermes_home, scripted.url,
                 f"mcp_servers:\n  noisy:\n    command: {sys.executable}\n    args: ['-c', {json.dumps(script)}]\n")
    scripted.add({"content": "hi there"})
    out = run_hermes("chat", "-q", "hi", home=hermes_home, timeout=90)
    assert out.returncode == 0, out.stderr
    warning = next(line for line in out.stderr.splitlines() if "noisy" in line)
    assert "server said: fatal: no key" in warning and "logs/mcp/noisy.log" in warning, warning
    stored = (hermes_home / "logs" / "mcp" / "noisy.log").read_bytes()
    assert b"\x1b" not in stored and b"\x07" not in stored, stored[:200]
    assert b"copied^[]52;c;ZXZpbA==^G ^[]0;RT-TITLE^G^[[2J\n" in stored and b"fatal: no key" in stored
    shown = run_hermes("logs", "mcp", "-n", "5", home=hermes_home, timeout=60)
    assert shown.returncode == 0 and "\x1b" not in shown.stdout, shown
    assert "[noisy] fatal: no key" in shown.stdout and "[noisy] copied^[]52;c;" in shown.stdout, shown.stdout


def test_a_server_that_never_answers_holds_the_first_request_only_for_the_configured_wait(scripted, hermes_home,
                                                                                          tmp_path):
    """The server blocks until the model has been asked (the scripted model releases it): a run that waited for
    the server beyond mcp_single_query_discovery_timeout would never reach the model."""
    pytest.importorskip("mcp_server_time", reason="mcp-server-time is not installed (.ci/install-mcp-servers.sh)")
    work = tmp_path / "work"
    work.mkdir()
    script = ("import os, time, runpy; open('server-started', 'w').close()\n"
              "while not os.path.exists('model-asked'): time.sleep(0.05)\n"
              "runpy.run_module('mcp_server_time', run_name='__main__')")
    model_config(hermes_home, scripted.url, "mcp_single_query_discovery_timeout: 1\n"
                 f"mcp_servers:\n  stuck:\n    command: {sys.executable}\n    args: ['-c', {json.dumps(script)}]\n")

    def answer(body: dict) -> dict:
        (work / "model-asked").touch()
        return {"content": "answered without it"}

    scripted.default = answer
    out = run_hermes("chat", "-q", "hi", home=hermes_home, timeout=120, cwd=str(work))
    assert out.returncode == 0 and out.stdout.strip() == "answered without it", out.stderr
    assert not [ln for ln in out.stderr.splitlines() if "stuck" in ln], out.stderr  # not failed: the wait ran out
    assert not any(t["function"]["name"].startswith("mcp__") for t in scripted.requests[0]["body"]["tools"])
    assert "Traceback" not in out.stderr
