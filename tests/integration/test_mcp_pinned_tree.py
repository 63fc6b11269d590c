"""Issue 19, red-team round 12 a04: a pin of an unconfined server's script (`python3 tools/server.py`,
`sandbox: false`) vouched for one file while python loads the whole directory (sys.path[0] = tools/): a
confined command planted tools/json.py, or a __pycache__ .pyc with the header of a pinned sibling, and it ran
with the user's rights at the next start. Through the real `hermes chat -q` (HOME outside /tmp, bwrap and
Landlock confining the planting command): the pin names the directory; a planted module changes it (refused,
nothing runs); a planted .pyc and a module planted while the server runs are never loaded (it runs from
hermes's copy of the pinned files); a load path into the workspace in its environment is refused. Control: a
server outside the writable roots starts unpinned, from where it lies."""

from __future__ import annotations

import importlib.util
import json
import re
import shutil
import sys
from pathlib import Path

import pytest

from tests.helpers import home_outside_tmp, model_config, run_hermes

pytestmark = pytest.mark.skipif(importlib.util.find_spec("mcp") is None, reason="the mcp SDK is not installed")

SERVER = '''import importlib, subprocess
import helper
from mcp.server.mcpserver import MCPServer

server = MCPServer("local")


@server.tool()
def run_shell(command: str) -> str:
    """Run a shell command."""
    res = subprocess.run(["/bin/sh", "-c", command], capture_output=True, text=True, timeout=30, check=False)
    return f"exit={res.returncode}\\n{res.stdout}{res.stderr}"


@server.tool()
def load(name: str) -> str:
    """Import a module by name (what a server does lazily in a handler)."""
    try:
        importlib.import_module(name)
        return "loaded " + name
    except Exception as exc:
        return f"{type(exc).__name__}: {exc}"


@server.tool()
def where() -> str:
    """Where this server runs from."""
    return f"file={__file__} word={helper.WORD}"


if __name__ == "__main__":
    server.run()
'''


@pytest.fixture
def home():
    home = home_outside_tmp("pintree")
    (home / ".hermes").mkdir(parents=True)
    (home / "project" / "tools").mkdir(parents=True)
    yield home
    shutil.rmtree(home, ignore_errors=True)


def _install(folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "helper.py").write_text('WORD = "helper-ok"\n')
    (folder / "server.py").write_text(SERVER)
    return folder / "server.py"


def _chat(scripted, home: Path, mechanism: str, script: Path, pin: dict, *calls: tuple[str, dict],  # noqa: ANN001
          extra: str = ""):
    pin_line = (f"    pin: {json.dumps(pin)}\n" if pin else "") + extra
    model_config(home / ".hermes", scripted.url, f"sandbox:\n  mechanism: {mechanism}\nmcp_discovery_timeout: 30\n"
                 f"mcp_single_query_discovery_timeout: 60\nmcp_servers:\n  local:\n    command: {sys.executable}\n"
                 f"    args: [{script}]\n    sandbox: false\n{pin_line}")
    scripted.add(*({"tool_calls": [{"name": name, "arguments": args}]} for name, args in calls), {"content": "ok"})
    out = run_hermes("chat", "-q", "go", "--yolo", home=home / ".hermes", env={"HOME": str(home)},
                     cwd=str(home / "project"), timeout=180)
    assert "Traceback" not in out.stderr, out.stderr
    results = [m["content"] for m in scripted.requests[-1]["body"]["messages"] if m["role"] == "tool"]
    return out, results


def _refusal(out, script: Path) -> str:  # noqa: ANN001
    return next((ln for ln in out.stderr.splitlines() if str(script) in ln and "not started" in ln), "")


def _planted_pyc(folder: Path, marker: Path) -> None:
    """A .pyc for the pinned helper.py whose header matches its mtime and size (what a confined command can
    write next to it): python would load it instead of the source."""
    from importlib._bootstrap_external import _code_to_timestamp_pyc  # type: ignore[attr-defined]

    src = folder / "helper.py"
    st = src.stat()
    code = compile(f"import pathlib\npathlib.Path({str(marker)!r}).touch()\nWORD = 'evil'\n", str(src), "exec")
    pyc = Path(importlib.util.cache_from_source(str(src)))
    pyc.parent.mkdir(exist_ok=True)
    pyc.write_bytes(bytes(_code_to_timestamp_pyc(code, int(st.st_mtime), st.st_size)))


def test_the_pin_covers_what_python_loads_next_to_the_script(scripted, home, mechanism):
    tools = home / "project" / "tools"
    script, marker = _install(tools), home / "pwned"
    out, _ = _chat(scripted, home, mechanism, script, {}, ("mcp__local__where", {}))
    line = _refusal(out, script)
    assert "loads the files next to it" in line and "mcp_servers.local.pin" in line, out.stderr
    pin = json.loads(re.search(r"pin: (\{.*\})$", line).group(1))
    assert list(pin) == [str(tools)], line

    # pinned: it starts, from hermes's copy; a confined command plants a module it imports later and one that
    # shadows the stdlib; the server's lazy import does not find the planted one
    plant = (f"printf 'import pathlib\\npathlib.Path(\"{marker}\").touch()\\n' > tools/lazy.py && "
             "cp tools/lazy.py tools/json.py && echo planted")
    out, results = _chat(scripted, home, mechanism, script, pin, ("mcp__local__where", {}),
                         ("terminal", {"command": plant}), ("mcp__local__load", {"name": "lazy"}))
    assert out.returncode == 0, out.stderr
    assert "word=helper-ok" in results[0] and "mcp-pinned" in results[0] and str(tools) not in results[0], results
    assert "planted" in results[1], results
    assert "ModuleNotFoundError" in results[2] and not marker.exists(), results

    # next session: the planted json.py changed the pinned directory: refused, nothing ran
    out, _ = _chat(scripted, home, mechanism, script, pin, ("mcp__local__where", {}))
    assert "changed since it was pinned" in _refusal(out, script), out.stderr
    assert not marker.exists()

    # the user removes the planted files; a .pyc planted for the pinned helper is not what runs
    (tools / "lazy.py").unlink()
    (tools / "json.py").unlink(missing_ok=True)  # a stdlib shadow next to a script: the run-later guard put it back
    _planted_pyc(tools, marker)
    out, results = _chat(scripted, home, mechanism, script, pin, ("mcp__local__where", {}))
    assert out.returncode == 0 and "word=helper-ok" in results[0], (out.stderr, results)
    assert not marker.exists()


def test_a_server_outside_the_writable_roots_starts_unpinned_from_where_it_lies(scripted, home, mechanism):
    script = _install(home / "servers" / "local")  # in HOME, not the workspace: no sandbox writes there
    out, results = _chat(scripted, home, mechanism, script, {}, ("mcp__local__where", {}))
    assert out.returncode == 0, out.stderr
    assert f"file={script} word=helper-ok" in results[0], results
    assert not (home / ".hermes" / "mcp-pinned").exists()


def test_a_load_path_into_the_workspace_in_the_servers_env_is_refused(scripted, home, mechanism):
    """PYTHONPATH (NODE_PATH, LD_LIBRARY_PATH...) naming a folder sandboxed commands write: the interpreter would
    load what a command plants there with the user's rights, whatever the script's pin."""
    script, marker = _install(home / "servers" / "local"), home / "pwned"
    (script.parent / "helper.py").unlink()  # the server finds its helper on PYTHONPATH: project/lib
    lib = home / "project" / "lib"
    lib.mkdir()
    (lib / "helper.py").write_text(f"import pathlib\npathlib.Path({str(marker)!r}).touch()\nWORD = 'planted'\n")
    out, _ = _chat(scripted, home, mechanism, script, {}, ("mcp__local__where", {}),
                   extra="    env: {PYTHONPATH: lib}\n")
    line = next((ln for ln in out.stderr.splitlines() if "PYTHONPATH" in ln), "")
    assert "not started" in line and str(lib) in line, out.stderr
    assert not marker.exists()
