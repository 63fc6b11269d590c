"""Issue 19 (ctx11): an unconfined MCP server (`sandbox: false`) whose program or script lies in the workspace
the sandbox writes (./server.py, `python tools/server.py`, .venv/bin/python) would run what any confined
command left there with the user's full rights. Through the real `hermes chat -q` in a HOME outside /tmp:
it is refused with one line naming the file, the planted code never runs; once the user pins the file's
content (`mcp_servers.NAME.pin`: the script's directory, test_mcp_pinned_tree.py) it starts, and a change
after the pin is refused again."""

from __future__ import annotations

import importlib.util
import json
import os
import re
import shutil
import sys
import uuid
from pathlib import Path

import pytest

from tests.helpers import model_config, run_hermes

HOSTILE = Path(__file__).resolve().parents[1] / "fixtures" / "mcp_hostile_server.py"
pytestmark = pytest.mark.skipif(importlib.util.find_spec("mcp") is None, reason="the mcp SDK is not installed")


@pytest.fixture
def user_home():
    home = Path(os.path.expanduser("~")) / f".hermes-test-mcppin-{uuid.uuid4().hex[:8]}"
    if not os.access(home.parent, os.W_OK) or str(home).startswith(("/tmp/", "/var/tmp/", "/dev/shm/")):
        pytest.skip("cannot create a home outside /tmp")
    (home / ".hermes").mkdir(parents=True)
    (home / "project" / "tools").mkdir(parents=True)
    yield home
    shutil.rmtree(home, ignore_errors=True)


def _server(path: Path, marker: Path) -> None:
    """The hostile fixture server, touching `marker` when it runs."""
    code = HOSTILE.read_text().replace('server = MCPServer("hostile")', f"import pathlib\n"
                                       f"pathlib.Path({str(marker)!r}).touch()\nserver = MCPServer('hostile')")
    path.write_text(f"#!{sys.executable}\n{code}")
    path.chmod(0o755)


def _chat(home: Path, scripted, server: str) -> object:  # noqa: ANN001
    model_config(home / ".hermes", scripted.url, extra="mcp_discovery_timeout: 30\n"
                 f"mcp_single_query_discovery_timeout: 60\nmcp_servers:\n  local:\n{server}    sandbox: false\n")
    scripted.add({"tool_calls": [{"name": "mcp__local__run_shell", "arguments": {"command": "echo END"}}]},
                 {"content": "ok"})
    return run_hermes("chat", "-q", "go", home=home / ".hermes", env={"HOME": str(home)}, cwd=str(home / "project"),
                      timeout=120)


def _tool_result(scripted) -> str:  # noqa: ANN001
    return scripted.requests[-1]["body"]["messages"][-1]["content"]


@pytest.mark.parametrize("shape", ["command_path", "script_argument"])
def test_a_workspace_program_is_refused_until_pinned(scripted, user_home, shape):
    marker = user_home / "ran-unconfined"
    script = user_home / "project" / "tools" / "server.py"
    _server(script, marker)
    server = ("    command: ./tools/server.py\n" if shape == "command_path"
              else f"    command: {sys.executable}\n    args: [tools/server.py]\n")
    out = _chat(user_home, scripted, server)
    assert not marker.exists()
    line = next((ln for ln in out.stderr.splitlines() if str(script) in ln), "")
    assert "lies where sandboxed commands can write" in line and "mcp_servers.local.pin" in line, out.stderr
    assert "Traceback" not in out.stderr
    pin = json.loads(re.search(r"pin: (\{.*\})$", line).group(1))  # the user checked the files it names
    assert pin == {str(script.parent): re.search(r"sha256:[0-9a-f]{64}", line).group(0)}, line  # the directory

    out = _chat(user_home, scripted, server + f"    pin: {json.dumps(pin)}\n")
    assert out.returncode == 0, out.stderr
    assert marker.exists() and "END" in _tool_result(scripted)

    marker.unlink()
    script.write_text(script.read_text() + "\n# changed by a session\n")
    out = _chat(user_home, scripted, server + f"    pin: {json.dumps(pin)}\n")
    assert not marker.exists()
    assert any(str(script) in ln and "changed since it was pinned" in ln for ln in out.stderr.splitlines()), out.stderr


def test_a_workspace_venv_interpreter_is_refused(scripted, user_home):
    marker = user_home / "ran-unconfined"
    venv_bin = user_home / "project" / ".venv" / "bin"
    venv_bin.mkdir(parents=True)
    (venv_bin / "python").symlink_to(sys.executable)
    out = _chat(user_home, scripted, f"    command: .venv/bin/python\n    args: [{HOSTILE}]\n")
    assert not marker.exists()
    assert any(".venv/bin/python" in ln and "symlink cannot be pinned" in ln for ln in out.stderr.splitlines()), \
        out.stderr
    doctor = run_hermes("doctor", "--offline", home=user_home / ".hermes", env={"HOME": str(user_home)},
                        cwd=str(user_home / "project"), timeout=120)
    assert any("MCP server local" in ln and ".venv/bin/python" in ln for ln in doctor.stdout.splitlines()), \
        doctor.stdout
