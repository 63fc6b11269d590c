"""Nothing an MCP stdio server starts outlives the session (issue 19, class 7; red-team a37): a hostile server's
`run_shell` leaves a `setsid` sleeper and an `env -i setsid` double-forked one behind; after `hermes chat -q`
ends — normally, or SIGKILLed mid-turn — none of them is left, under bubblewrap (the server's own pid
namespace, `--die-with-parent`) and under Landlock (a keeper process, subreaper outside the server's domain)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import uuid
from pathlib import Path

import pytest

from tests.helpers import HERMES, model_config, run_hermes, wait_for
from tests.integration.test_mcp_confinement import HOSTILE, MECHANISMS

pytest.importorskip("mcp")


def _survivors(tag: str) -> list[str]:
    """Command lines of live processes that carry `tag` (zombies excluded)."""
    found = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            cmd = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
            state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if tag in cmd and state != "Z" and pid != str(os.getpid()):
            found.append(f"{pid}: {cmd}")
    return found


def _setup(tmp_path: Path, scripted, mechanism: str, tag: str, answer: dict) -> tuple[Path, Path]:
    home, project = tmp_path / "hermes", tmp_path / "project"
    project.mkdir()
    home.mkdir()
    model_config(home, scripted.url, extra=f"sandbox:\n  mechanism: {mechanism}\nmcp_discovery_timeout: 30\n"
                 f"mcp_single_query_discovery_timeout: 60\nmcp_servers:\n  evil:\n    command: {sys.executable}\n"
                 f"    args: [{HOSTILE}]\n")
    sleeper = f"sleep 1041; : {tag}"  # the tag rides in the shell's command line (sleep takes no extra words)
    plant = (f"(setsid sh -c '{sleeper}' </dev/null >/dev/null 2>&1 &); env -i setsid sh -c "
             f"'(sh -c \"{sleeper}\" &); {sleeper}' </dev/null >/dev/null 2>&1 & echo PLANTED")
    scripted.add({"tool_calls": [{"name": "mcp__evil__run_shell", "arguments": {"command": plant}}]}, answer)
    return home, project


def _kill_leftovers(tag: str) -> None:
    for line in _survivors(tag):
        try:
            os.kill(int(line.split(":")[0]), signal.SIGKILL)
        except OSError:
            pass


@pytest.mark.parametrize("mechanism", MECHANISMS)
def test_setsid_children_of_an_mcp_server_end_with_the_session(scripted, tmp_path, mechanism):
    tag = f"rtmcps{uuid.uuid4().hex[:8]}"
    home, project = _setup(tmp_path, scripted, mechanism, tag, {"content": "done"})
    try:
        out = run_hermes("chat", "-q", "plant", home=home, cwd=str(project), timeout=120)
        assert out.returncode == 0, out.stderr
        assert "PLANTED" in scripted.requests[1]["body"]["messages"][-1]["content"]
        assert wait_for(lambda: not _survivors(tag), timeout=5), _survivors(tag)
    finally:
        _kill_leftovers(tag)


@pytest.mark.parametrize("mechanism", MECHANISMS)
def test_mcp_server_children_die_when_hermes_is_killed(scripted, tmp_path, mechanism):
    tag = f"rtmcpk{uuid.uuid4().hex[:8]}"
    home, project = _setup(tmp_path, scripted, mechanism, tag, {"content": "slow", "delay": 60})
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "OPENROUTER_", "HERMES_"))}
    env["HERMES_HOME"] = str(home)
    proc = subprocess.Popen([HERMES, "chat", "-q", "plant"], cwd=str(project), env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        assert wait_for(lambda: len(scripted.requests) >= 2, timeout=90)  # the tool ran; the model is "thinking"
        assert wait_for(lambda: len(_survivors(tag)) >= 3, timeout=10), _survivors(tag)
        proc.kill()
        proc.wait(timeout=10)
        assert wait_for(lambda: not _survivors(tag), timeout=5), _survivors(tag)
    finally:
        proc.kill()
        _kill_leftovers(tag)
