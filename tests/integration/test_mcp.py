"""MCP client against real servers: mcp-server-time (PyPI), server-everything (npm, stdio and
streamable HTTP) and a dynamic SDK server; crash/restart, list_changed, timeouts, the agent loop."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

pytest.importorskip("mcp", reason="the [mcp] extra is not installed")

from hermes_agent.tools.mcp.config import parse_server  # noqa: E402
from hermes_agent.tools.mcp.manager import McpManager  # noqa: E402
from hermes_agent.tools.registry import ToolRegistry  # noqa: E402

DYNAMIC = str(Path(__file__).parents[1] / "fixtures" / "mcp_dynamic_server.py")


def _everything_bin() -> str | None:
    raw = os.environ.get("HERMES_TEST_MCP_EVERYTHING", "")
    if not raw:
        return None
    path = Path(raw)
    for cand in (path, path / ".bin" / "mcp-server-everything", path / "node_modules" / ".bin" / "mcp-server-everything"):
        if cand.is_file() and os.access(cand, os.X_OK):
            return str(cand)
    return None


EVERYTHING = _everything_bin()
needs_everything = pytest.mark.skipif(
    EVERYTHING is None,
    reason="server-everything not found: set HERMES_TEST_MCP_EVERYTHING to node_modules/.bin/mcp-server-everything "
           "(.ci/install-mcp-servers.sh does it)")


def _time_cfg(**extra: object) -> dict:
    pytest.importorskip("mcp_server_time", reason="mcp-server-time is not installed (.ci/install-mcp-servers.sh)")
    return {"command": sys.executable, "args": ["-m", "mcp_server_time"], **extra}


def _start(servers: dict, reg: ToolRegistry, tmp_path: Path, ready: float = 20) -> McpManager:
    cfgs = [parse_server(name, raw) for name, raw in servers.items()]
    manager = McpManager(cfgs, registry=reg, log_dir=tmp_path / "mcp-logs", backoff_base=0.2).start()
    manager.wait_ready(ready)
    return manager


@pytest.fixture
def reg():
    return ToolRegistry()


@pytest.fixture
def managers():
    started: list[McpManager] = []
    yield started
    for m in started:
        m.shutdown()


def _children(match: str) -> list[int]:
    """PIDs of our child processes whose command line contains `match`."""
    me, out = os.getpid(), []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry}/stat").read_text()
            cmdline = Path(f"/proc/{entry}/cmdline").read_bytes().replace(b"\0", b" ").decode()
        except OSError:
            continue
        if int(stat.rsplit(")", 1)[1].split()[1]) == me and match in cmdline:
            out.append(int(entry))
    return out


def _wait(pred, timeout: float = 20.0) -> bool:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if pred():
            return True
        time.sleep(0.05)
    return False


def test_time_server_tool_is_registered_and_called(reg, managers, tmp_path):
    managers.append(m := _start({"time": _time_cfg()}, reg, tmp_path))
    assert m.status()["time"].connected
    assert reg.toolsets() == {"mcp-time": ["mcp__time__convert_time", "mcp__time__get_current_time"]}
    params = reg.get("mcp__time__get_current_time").definition()["function"]["parameters"]
    assert "timezone" in params["properties"] and "title" not in params
    out = json.loads(reg.dispatch("mcp__time__get_current_time", {"timezone": "Europe/Paris"}))
    assert json.loads(out["result"])["timezone"] == "Europe/Paris"
    bad = json.loads(reg.dispatch("mcp__time__get_current_time", {"timezone": "Mars/Olympus"}))
    assert "Mars/Olympus" in bad["error"]


@needs_everything
def test_everything_tools_resources_and_prompts(reg, managers, tmp_path):
    managers.append(_start({"ev": {"command": EVERYTHING}}, reg, tmp_path))
    assert json.loads(reg.dispatch("mcp__ev__echo", {"message": "hi"})) == {"result": "Echo: hi"}
    assert "3" in json.loads(reg.dispatch("mcp__ev__get-sum", {"a": 1, "b": 2}))["result"]
    assert "image image/png" in json.loads(reg.dispatch("mcp__ev__get-tiny-image", {}))["result"]
    resources = json.loads(reg.dispatch("mcp__ev__list_resources", {}))["resources"]
    text = json.loads(reg.dispatch("mcp__ev__read_resource", {"uri": resources[0]["uri"]}))["result"]
    assert len(text) > 20
    prompts = {p["name"] for p in json.loads(reg.dispatch("mcp__ev__list_prompts", {}))["prompts"]}
    assert "args-prompt" in prompts
    rendered = json.loads(reg.dispatch("mcp__ev__get_prompt", {"name": "args-prompt", "arguments": {"city": "Oslo"}}))
    assert "Oslo" in rendered["messages"][0]["text"]
    assert "missing" in json.loads(reg.dispatch("mcp__ev__read_resource", {}))["error"]


@pytest.mark.parametrize("which", ["time", "everything"])
def test_killed_server_is_restarted_and_tools_reregistered(which, reg, managers, tmp_path):
    if which == "everything" and EVERYTHING is None:
        pytest.skip("server-everything not installed (set HERMES_TEST_MCP_EVERYTHING)")
    cfg, marker, tool, args = ((_time_cfg(), "mcp_server_time", "mcp__srv__get_current_time", {"timezone": "UTC"})
                               if which == "time" else
                               ({"command": EVERYTHING}, "everything", "mcp__srv__echo", {"message": "back"}))
    managers.append(m := _start({"srv": cfg}, reg, tmp_path))
    [pid] = _children(marker)
    generation = reg.generation
    os.kill(pid, signal.SIGKILL)
    assert _wait(lambda: m.status()["srv"].connects >= 2), m.status()
    [new_pid] = _children(marker)
    assert new_pid != pid and reg.generation > generation
    assert reg.get(tool) is not None and "error" not in json.loads(reg.dispatch(tool, args))


def test_call_in_flight_when_server_dies_fails_fast_then_recovers(reg, managers, tmp_path):
    managers.append(m := _start({"dyn": {"command": sys.executable, "args": [DYNAMIC]}}, reg, tmp_path))
    pid = int(json.loads(reg.dispatch("mcp__dyn__pid", {}))["result"])
    box: dict = {}
    caller = threading.Thread(target=lambda: box.update(out=reg.dispatch("mcp__dyn__sleep", {"seconds": 30})))
    started = time.monotonic()
    caller.start()
    time.sleep(0.5)
    os.kill(pid, signal.SIGKILL)
    caller.join(15)
    assert time.monotonic() - started < 10
    assert "disconnected" in json.loads(box["out"])["error"]
    assert _wait(lambda: m.status()["dyn"].connects >= 2)
    assert int(json.loads(reg.dispatch("mcp__dyn__pid", {}))["result"]) != pid


def test_tools_list_changed_adds_and_removes_tools(reg, managers, tmp_path):
    managers.append(_start({"dyn": {"command": sys.executable, "args": [DYNAMIC]}}, reg, tmp_path))
    assert reg.get("mcp__dyn__reverse") is None
    reg.dispatch("mcp__dyn__add_reverse", {})
    assert _wait(lambda: reg.get("mcp__dyn__reverse") is not None, 10)
    assert json.loads(reg.dispatch("mcp__dyn__reverse", {"text": "abc"})) == {"result": "cba"}
    reg.dispatch("mcp__dyn__remove_reverse", {})
    assert _wait(lambda: reg.get("mcp__dyn__reverse") is None, 10)


def test_per_call_timeout_and_server_errors(reg, managers, tmp_path):
    # a 3 s timeout against a 60 s call: cut off long before the call would end, while a quick call still has room
    # on a loaded machine (with 1 s the closing sleep(0) itself timed out under load 11)
    managers.append(_start({"dyn": {"command": sys.executable, "args": [DYNAMIC], "timeout": 3}}, reg, tmp_path))
    t0 = time.monotonic()
    out = json.loads(reg.dispatch("mcp__dyn__sleep", {"seconds": 60}))
    assert "within 3s" in out["error"] and time.monotonic() - t0 < 20
    assert "error" in json.loads(reg.dispatch("mcp__dyn__fail", {"message": "boom"}))
    assert json.loads(reg.dispatch("mcp__dyn__sleep", {"seconds": 0})) == {"result": "slept"}


def test_start_returns_at_once_and_tools_arrive_in_background(reg, managers, tmp_path):
    slow = {"command": "sh", "args": ["-c", f"sleep 1.5; exec {sys.executable} -m mcp_server_time"]}
    _time_cfg()
    cfgs = [parse_server("slow", slow)]
    t0 = time.perf_counter()
    managers.append(m := McpManager(cfgs, registry=reg, log_dir=tmp_path).start())
    returned = time.perf_counter() - t0
    assert returned < 0.2 and reg.names() == []
    assert m.wait_ready(20) and reg.get("mcp__slow__get_current_time") is not None
    assert time.perf_counter() - t0 > 1.5


def test_broken_server_is_reported_and_others_still_work(reg, managers, tmp_path):
    servers = {"time": _time_cfg(), "ghost": {"command": str(tmp_path / "no-such-server")}}
    managers.append(m := _start(servers, reg, tmp_path))
    status = m.status()
    assert status["time"].connected and not status["ghost"].connected
    assert "no-such-server" in status["ghost"].last_error or "No such file" in status["ghost"].last_error
    assert reg.get("mcp__time__get_current_time") is not None and not any("ghost" in n for n in reg.names())


def test_shutdown_stops_processes_and_removes_tools(reg, tmp_path):
    m = _start({"time": _time_cfg()}, reg, tmp_path)
    assert _children("mcp_server_time")
    m.shutdown()
    assert reg.names() == [] and not m.running
    assert _wait(lambda: not _children("mcp_server_time"), 5)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _http_server(port: int) -> subprocess.Popen:
    proc = subprocess.Popen([EVERYTHING, "streamableHttp"], env={**os.environ, "PORT": str(port)},
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    def up() -> bool:
        try:
            socket.create_connection(("127.0.0.1", port), 0.2).close()
            return True
        except OSError:
            return False
    assert _wait(up, 15), "server-everything streamableHttp did not start"
    return proc


@needs_everything
def test_streamable_http_server_and_reconnect_after_restart(reg, managers, tmp_path):
    port = _free_port()
    proc = _http_server(port)
    try:
        url = f"http://127.0.0.1:{port}/mcp"
        managers.append(m := _start({"web": {"url": url, "headers": {"X-Client": "hermes-test"}}}, reg, tmp_path))
        assert json.loads(reg.dispatch("mcp__web__echo", {"message": "http"})) == {"result": "Echo: http"}
        proc.kill()
        proc.wait()
        proc = _http_server(port)
        assert _wait(lambda: "Echo" in reg.dispatch("mcp__web__echo", {"message": "again"}), 20)
        assert m.status()["web"].connects >= 2
    finally:
        proc.kill()
        proc.wait()


def test_agent_loop_calls_an_mcp_tool(scripted, managers, tmp_path):
    """The model calls an MCP tool through the real agent loop; its result reaches the model."""
    from hermes_agent import AIAgent
    from hermes_agent.tools.registry import registry

    cfgs = [parse_server("time", _time_cfg())]
    managers.append(m := McpManager(cfgs, registry=registry, log_dir=tmp_path).start())
    assert m.wait_ready(20)
    scripted.add({"tool_calls": [{"name": "mcp__time__get_current_time", "arguments": {"timezone": "Asia/Tokyo"}}]},
                 {"content": "It is late in Tokyo."})
    agent = AIAgent(model="scripted-model", api_key="k", base_url=scripted.url, enabled_toolsets=["mcp-time"],
                    quiet_mode=True)
    assert agent.chat("what time is it in Tokyo?") == "It is late in Tokyo."
    sent = [t["function"]["name"] for t in scripted.requests[0]["body"]["tools"]]
    assert sent == ["mcp__time__convert_time", "mcp__time__get_current_time"]
    tool_msg = scripted.requests[1]["body"]["messages"][-1]
    assert tool_msg["role"] == "tool" and "Asia/Tokyo" in tool_msg["content"]
