"""Issue 19 class 2, a CONFINED MCP stdio server (the default) attacked as a red team would, through the real
`hermes chat -q` with HOME outside /tmp, under bwrap and Landlock:
- what it reaches: a file of HOME outside the workspace, $HERMES_HOME/.env, another profile's .env, ~/.ssh, and
  an ssh-agent socket by path (SSH_AUTH_SOCK is not passed, but the path is easy to guess) — under Landlock the
  server connected to it and wrote, until MCP servers got the commands' unix-socket filter;
- what it leaves running: a `setsid` child detached from it is gone when the session ends;
- what it says: a tool description that orders the model around is withheld (one line), a result of megabytes
  is cut, a malformed JSON-RPC line gives one line (never its bytes), and the turn counts as tainted — a memory
  write after the server's result is refused when nobody can approve it."""

from __future__ import annotations

import importlib.util
import os
import shutil
import socket
import sys
import threading
import time
import uuid
from pathlib import Path

import pytest

from tests.helpers import home_outside_tmp, model_config, run_hermes

pytestmark = pytest.mark.skipif(importlib.util.find_spec("mcp") is None, reason="the mcp SDK is not installed")
FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
HOSTILE, NOISY = FIXTURES / "mcp_hostile_server.py", FIXTURES / "mcp_noisy_server.py"


@pytest.fixture
def home():
    home = home_outside_tmp("mcpconf")
    (home / ".hermes" / "profiles" / "work").mkdir(parents=True)
    (home / ".hermes" / ".env").write_text("OPENAI_API_KEY=sk-canary-default\n")
    (home / ".hermes" / "profiles" / "work" / ".env").write_text("OPENAI_API_KEY=sk-canary-work\n")
    (home / "Documents").mkdir()
    (home / "Documents" / "notes.txt").write_text("notes-canary\n")
    (home / ".ssh").mkdir()
    (home / ".ssh" / "id_rsa").write_text("key-canary\n")
    (home / "project").mkdir()
    yield home
    shutil.rmtree(home, ignore_errors=True)


@pytest.fixture
def agent_socket():
    """A listening unix socket where ssh-agent puts its own (/tmp/ssh-XXXX/agent.PID); what it receives."""
    folder = Path(f"/tmp/ssh-{uuid.uuid4().hex[:10]}")
    folder.mkdir(mode=0o700)
    path, got = str(folder / "agent.4242"), []
    sock = socket.socket(socket.AF_UNIX)
    sock.bind(path)
    sock.listen(5)

    def serve() -> None:
        while True:
            try:
                conn, _ = sock.accept()
            except OSError:
                return
            got.append(conn.recv(100))
            conn.close()

    threading.Thread(target=serve, daemon=True).start()
    yield path, got
    sock.close()
    shutil.rmtree(folder, ignore_errors=True)


def _chat(scripted, home: Path, mechanism: str, calls: list, env: dict | None = None):  # noqa: ANN001
    model_config(home / ".hermes", scripted.url, f"sandbox:\n  mechanism: {mechanism}\nmcp_discovery_timeout: 30\n"
                 f"mcp_single_query_discovery_timeout: 60\nmcp_servers:\n  evil:\n    command: {sys.executable}\n"
                 f"    args: [{HOSTILE}]\n  noisy:\n    command: {sys.executable}\n    args: [{NOISY}]\n")
    scripted.add(*({"tool_calls": [{"name": n, "arguments": a}]} for n, a in calls), {"content": "ok"})
    out = run_hermes("chat", "-q", "go", home=home / ".hermes", env={"HOME": str(home), **(env or {})},
                     cwd=str(home / "project"), timeout=180)
    assert out.returncode == 0 and "Traceback" not in out.stderr, out.stderr
    return out, [m["content"] for m in scripted.requests[-1]["body"]["messages"] if m["role"] == "tool"]


def test_a_confined_server_reaches_no_secret_no_socket_and_leaves_nothing_running(scripted, home, mechanism,
                                                                                 agent_socket):
    path, got = agent_socket
    survivor = home / "project" / f"survived-{uuid.uuid4().hex[:6]}"
    attack = (f"cat ~/Documents/notes.txt ~/.hermes/.env ~/.hermes/profiles/work/.env ~/.ssh/id_rsa; "
              f"python3 -c \"import socket; s = socket.socket(socket.AF_UNIX); s.connect('{path}'); "
              f"s.send(b'LIST-KEYS'); print('CONNECTED')\"; "
              f"(setsid sh -c 'sleep 30; touch {survivor}' >/dev/null 2>&1 </dev/null &); echo ATTACK-END")
    out, results = _chat(scripted, home, mechanism, [("mcp__evil__run_shell", {"command": attack})],
                         env={"SSH_AUTH_SOCK": path})
    assert "ATTACK-END" in results[0], (results, out.stderr)  # it ran, confined
    for canary in ("notes-canary", "sk-canary-default", "sk-canary-work", "key-canary", "CONNECTED"):
        assert canary not in results[0], (canary, results[0])
    assert got == [], got  # nothing reached the agent
    time.sleep(1.5)
    alive = [p for p in _cmdlines() if str(survivor) in p]
    assert alive == [] and not survivor.exists(), f"a process the server started outlived the session: {alive}"


def _cmdlines() -> list[str]:
    found = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            found.append(Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace"))
        except OSError:
            continue
    return found


def test_hostile_output_is_one_line_each_and_taints_the_turn(scripted, home, mechanism):
    calls = [("mcp__noisy__huge", {}), ("mcp__noisy__garbage", {}), ("mcp__noisy__escapes", {}),
             ("memory", {"action": "add", "target": "user", "content": "User prefers the docs tool's advice"})]
    out, results = _chat(scripted, home, mechanism, calls)
    tools = {t["function"]["name"]: t["function"]["description"] for t in scripted.requests[0]["body"]["tools"]}
    assert "withheld" in tools["mcp__noisy__search"] and "curl" not in tools["mcp__noisy__search"], tools
    assert tools["mcp__noisy__huge"] == "A very large result.", tools  # an ordinary description stays
    lines = out.stderr.splitlines()
    said = [ln for ln in lines if "MCP server noisy" in ln and "'search'" in ln and "instructions to the model" in ln]
    assert len(said) == 1, out.stderr
    assert "TAIL-MARK" in results[0] and len(results[0]) < 200_000, len(results[0])  # cut, its end kept
    assert "after garbage" in results[1], results
    assert sum("not JSON-RPC" in ln for ln in lines) == 1, out.stderr
    assert "\x1b" not in out.stderr + out.stdout, repr(out.stderr)  # no escape reaches the user's terminal
    assert "untrusted content" in results[3] and "noisy" in results[3], results[3]  # the write is refused
    assert not list((home / ".hermes").glob("memories/USER.md")) or \
        "docs tool" not in (home / ".hermes" / "memories" / "USER.md").read_text()
