"""Provenance seams left open (issue 19 items 2 and 9, prov8), through the real `hermes chat -q` with the
scripted model (nobody can be asked: a persisting call in a tainted turn is refused):

- an MCP server's results taint the turn unless the user vouches for the server (`mcp_servers.NAME.trusted`);
- a file a tainted session wrote (after a download) taints the session whose confined command reads it, however
  the command reaches it (`find -exec cat`, `cat $(ls)`, a script building the name): the launcher side watches the
  tainted files' inodes while confined code runs (tools/readwatch.py)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

from hermes_agent.terminal.sandbox.bwrap import bwrap_problem
from hermes_agent.terminal.sandbox.launcher import landlock_problem
from tests.fixtures.web_site import Site
from tests.helpers import model_config, run_hermes

HOSTILE = str(Path(__file__).resolve().parents[1] / "fixtures" / "mcp_hostile_server.py")


def _tool_results(scripted) -> list[str]:
    return [m["content"] for m in scripted.requests[-1]["body"]["messages"] if m["role"] == "tool"]


def _memory_file(home: Path) -> str:
    path = home / "memories" / "MEMORY.md"
    return path.read_text() if path.exists() else ""


def _memory_add(content: str) -> dict:
    return {"tool_calls": [{"name": "memory", "arguments": {"action": "add", "target": "memory", "content": content}}]}


def _mcp_config(trusted: str) -> str:
    return ("mcp_discovery_timeout: 30\nmcp_single_query_discovery_timeout: 60\nmcp_servers:\n  ext:\n"
            f"    command: {sys.executable}\n    args: [{HOSTILE}]\n{trusted}")


@pytest.mark.parametrize("trusted", ["", "    trusted: false\n", "    trusted: true\n"])
def test_mcp_results_taint_the_turn_unless_the_server_is_trusted(scripted, hermes_home, tmp_path, trusted):
    if importlib.util.find_spec("mcp") is None:
        pytest.skip("the mcp SDK is not installed")
    work = tmp_path / "work"
    work.mkdir()
    model_config(hermes_home, scripted.url, extra=_mcp_config(trusted))
    scripted.add({"tool_calls": [{"name": "mcp__ext__run_shell", "arguments": {"command": "echo SERVER-SAID"}}]},
                 _memory_add("The user keeps notes in work/"), {"content": "done"})
    out = run_hermes("chat", "-q", "use the server", "-t", "mcp-ext,memory", home=hermes_home, cwd=str(work),
                     timeout=120)
    assert out.returncode == 0, out.stderr
    results = _tool_results(scripted)
    assert "SERVER-SAID" in results[0], results[0]
    if trusted.endswith("true\n"):
        assert "Entry added" in results[-1], results[-1]
        assert "notes in work/" in _memory_file(hermes_home)
    else:
        # tainted from the first request that carried its tool descriptions; the one line names server and key
        assert "BLOCKED" in results[-1] and "MCP server 'ext'" in results[-1], results[-1]
        assert "mcp_servers.ext.trusted: true" in results[-1], results[-1]
        assert "notes in work/" not in _memory_file(hermes_home)


def test_a_bad_trusted_value_is_one_clear_line(scripted, hermes_home, tmp_path):
    model_config(hermes_home, scripted.url, extra=_mcp_config("    trusted: maybe\n"))
    out = run_hermes("mcp", "test", "ext", home=hermes_home, cwd=str(tmp_path), timeout=60)
    assert out.returncode != 0
    assert "`trusted` must be true or false" in out.stdout + out.stderr
    assert "Traceback" not in out.stderr


def test_mcp_test_says_how_the_results_count(scripted, hermes_home, tmp_path):
    if importlib.util.find_spec("mcp") is None:
        pytest.skip("the mcp SDK is not installed")
    model_config(hermes_home, scripted.url, extra=_mcp_config(""))
    out = run_hermes("mcp", "test", "ext", home=hermes_home, cwd=str(tmp_path), timeout=120)
    assert "results and tool descriptions count as untrusted content" in out.stdout, out.stdout
    model_config(hermes_home, scripted.url, extra=_mcp_config("    trusted: true\n"))
    out = run_hermes("mcp", "test", "ext", home=hermes_home, cwd=str(tmp_path), timeout=120)
    assert "results trusted (mcp_servers.ext.trusted: true)" in out.stdout, out.stdout


# -- reads nobody names: the inotify watch over what tainted sessions wrote ----------------------------------

def _session(scripted, home: Path, work: Path, *steps: dict) -> list[str]:
    scripted.add(*steps, {"content": "ok"})
    out = run_hermes("chat", "-q", "do it", "-t", "terminal,file,memory,code_execution", home=home, cwd=str(work),
                     timeout=180)
    assert out.returncode == 0, out.stderr
    return _tool_results(scripted)


def _terminal(command: str, **more: object) -> dict:
    return {"tool_calls": [{"name": "terminal", "arguments": {"command": command, **more}}]}


@pytest.fixture
def site():
    with Site() as s:
        yield s


@pytest.fixture(params=["bwrap", "landlock"])
def tainted_tree(request, scripted, hermes_home, tmp_path, site):
    """Session 1 downloads a page (tainted: its memory write is refused) and writes deep/er/notes.txt after it;
    other/ok.txt was there before."""
    work = tmp_path / "work"
    (work / "deep" / "er").mkdir(parents=True)
    (work / "other").mkdir()
    (work / "other" / "ok.txt").write_text("plain\n")
    problem = bwrap_problem() if request.param == "bwrap" else landlock_problem()
    if problem:
        pytest.skip(problem)
    model_config(hermes_home, scripted.url, extra=f"sandbox:\n  mechanism: {request.param}\n")
    first = _session(scripted, hermes_home, work,
                     _terminal(f"curl -s -m 3 {site.url}/inject.html > /dev/null; echo ZEPHYR-INJECT > deep/er/notes.txt;"
                               " echo WROTE"),
                     _memory_add("from the page (s1)"))
    assert "WROTE" in first[0] and "BLOCKED" in first[-1], first
    return work


@pytest.mark.parametrize("command", [
    "find . -name 'n*' -exec cat {} + | wc -c",
    "cat $(ls -d $PWD/deep/*/*) | wc -c",
    "python3 -c \"import glob; print(len(open(glob.glob('de*/*/no*')[0]).read()))\"",
    "(sleep 1; tail -c 3 \"$(find . -name '*.txt' -path '*/er/*')\" > /dev/null) & echo started",
])
def test_a_command_reading_a_tainted_file_it_does_not_name_taints(scripted, hermes_home, tainted_tree, command):
    steps = [_terminal(command)]
    if "&" in command:
        steps.append(_terminal("sleep 3; echo waited"))
    results = _session(scripted, hermes_home, tainted_tree, *steps, _memory_add("The user likes short answers"))
    assert "BLOCKED" in results[-1], results
    assert "deep/er/notes.txt, read by a process of this conversation" in results[-1], results[-1]
    assert "short answers" not in _memory_file(hermes_home)


def test_commands_that_read_only_clean_files_do_not_taint(scripted, hermes_home, tainted_tree):
    results = _session(scripted, hermes_home, tainted_tree,
                       _terminal("ls -R . | wc -l; cat other/ok.txt; find . -name '*.txt' | sort"),
                       _memory_add("The user likes short answers"))
    assert "deep/er/notes.txt" in results[0] and "plain" in results[0], results[0]
    assert "Entry added" in results[-1], results[-1]
