"""Issue 19 class 2, the gaps left open for unconfined MCP servers (`sandbox: false`): what the server is told
to load by its ARGUMENTS (`--plugins ./p`, `--config x.json` whose config names a plugin folder) and by its
`env:` values (`SRV_CONFIG: ~/proj/conf.json`), and a Hermes home under /tmp (containers, CI). Through the real
`hermes chat -q`, HOME outside /tmp, a confined command (bwrap, Landlock) plants code in the workspace: it never
runs with the user's rights. A path into the workspace is refused with one line giving the pin; pinned, the
server gets hermes's copy of exactly the bytes checked, and what is planted next to the original is never
loaded. The server itself lies outside the workspace (nothing of it to pin)."""

from __future__ import annotations

import importlib.util
import json
import re
import shutil
import sys
import uuid
from pathlib import Path

import pytest

from tests.helpers import home_outside_tmp, model_config, run_hermes

pytestmark = pytest.mark.skipif(importlib.util.find_spec("mcp") is None, reason="the mcp SDK is not installed")

SERVER = '''import argparse, importlib.util, json, os, pathlib
from mcp.server.mcpserver import MCPServer

parser = argparse.ArgumentParser()
parser.add_argument("--plugins")
parser.add_argument("--config")
opts, _ = parser.parse_known_args()
server = MCPServer("srv")


def _folder():
    config = opts.config or os.environ.get("SRV_CONFIG")
    return json.loads(pathlib.Path(config).read_text())["plugins"] if config else opts.plugins


@server.tool()
def load_plugins() -> str:
    """Load the plugins."""
    names = []
    for f in sorted(pathlib.Path(_folder()).glob("*.py")):
        spec = importlib.util.spec_from_file_location(f.stem, f)
        spec.loader.exec_module(importlib.util.module_from_spec(spec))
        names.append(f.stem)
    return f"dir={_folder()} loaded={names} config={opts.config or os.environ.get('SRV_CONFIG')}"


if __name__ == "__main__":
    server.run()
'''


@pytest.fixture
def home():
    home = home_outside_tmp("pinargs")
    (home / ".hermes").mkdir(parents=True)
    (home / "project" / "p").mkdir(parents=True)
    (home / "project" / "p" / "hello.py").write_text("WORD = 'hello'\n")
    (home / "srv").mkdir()
    (home / "srv" / "server.py").write_text(SERVER)
    yield home
    shutil.rmtree(home, ignore_errors=True)


def _chat(scripted, home: Path, mechanism: str, server: str, *calls, hermes_home: Path | None = None):  # noqa: ANN001
    hh = hermes_home or home / ".hermes"
    model_config(hh, scripted.url, f"sandbox:\n  mechanism: {mechanism}\nmcp_discovery_timeout: 30\n"
                 f"mcp_single_query_discovery_timeout: 60\nmcp_servers:\n  srv:\n    command: {sys.executable}\n"
                 f"    sandbox: false\n{server}")
    steps = [(("terminal", {"command": c}) if isinstance(c, str) else c) for c in calls]
    scripted.add(*({"tool_calls": [{"name": n, "arguments": a}]} for n, a in steps), {"content": "ok"})
    out = run_hermes("chat", "-q", "go", "--yolo", home=hh, env={"HOME": str(home)}, cwd=str(home / "project"),
                     timeout=180)
    assert "Traceback" not in out.stderr, out.stderr
    results = [m["content"] for m in scripted.requests[-1]["body"]["messages"] if m["role"] == "tool"]
    return out, results


def _refusal(out) -> str:  # noqa: ANN001
    return next((ln for ln in out.stderr.splitlines() if "mcp_servers.srv " in ln and "not started" in ln), "")


def _pin_of(line: str) -> dict:
    return json.loads(re.search(r"pin: (\{.*\})$", line).group(1))


def _evil(marker: Path) -> str:
    return f"printf 'import pathlib\\npathlib.Path(\"{marker}\").touch()\\n' > p/evil.py && echo planted"


LOAD = ("mcp__srv__load_plugins", {})


def test_a_plugin_folder_argument_is_pinned_and_the_server_loads_the_copy(scripted, home, mechanism):
    marker, args = home / "pwned", "    args: [{srv}, --plugins, ./p]\n".format(srv=home / "srv" / "server.py")
    out, results = _chat(scripted, home, mechanism, args, LOAD)
    line = _refusal(out)
    assert f"its argument `--plugins ./p` names {home / 'project' / 'p'}, which lies where sandboxed commands can " \
           "write" in line and "mcp_servers.srv.pin" in line, out.stderr
    assert "Unknown tool" in results[0], results
    pinned = f"{args}    pin: {json.dumps(_pin_of(line))}\n"
    out, results = _chat(scripted, home, mechanism, pinned, _evil(marker), LOAD)
    assert "planted" in results[0], results  # the confined command wrote the workspace ...
    assert "loaded=['hello']" in results[1] and "mcp-pinned" in results[1], results  # ... the server reads the copy
    assert not marker.exists()
    out, results = _chat(scripted, home, mechanism, pinned, LOAD)  # next start: the folder changed
    assert "changed since it was pinned" in _refusal(out) and "Unknown tool" in results[0], (out.stderr, results)
    assert not marker.exists()


def test_a_pinned_config_naming_a_plugin_folder_in_the_workspace_is_refused(scripted, home, mechanism):
    marker, config = home / "pwned", home / "project" / "srv.json"
    config.write_text(json.dumps({"plugins": str(home / "project" / "p")}))
    args = f"    args: [{home / 'srv' / 'server.py'}, --config, srv.json]\n"
    out, _ = _chat(scripted, home, mechanism, args, LOAD)
    pin = _pin_of(_refusal(out))
    assert list(pin) == [str(config)], out.stderr
    out, results = _chat(scripted, home, mechanism, f"{args}    pin: {json.dumps(pin)}\n", _evil(marker), LOAD)
    line = _refusal(out)
    assert f"and it names {home / 'project' / 'p'}, where sandboxed commands can write too" in line, out.stderr
    assert "Unknown tool" in results[1] and not marker.exists(), results


def test_an_env_path_is_offered_the_pin_and_runs_from_the_copy(scripted, home, mechanism):
    """`env: {SRV_CONFIG: ~/project/conf.json}` (HOME-relative): one line naming the key and the pin; pinned, the
    server is told the copy's path; a config outside the workspace is used as it is."""
    (home / "project" / "conf.json").write_text(json.dumps({"plugins": str(home / "plugins")}))
    (home / "plugins").mkdir()
    (home / "plugins" / "ok.py").write_text("X = 1\n")
    server = f"    args: [{home / 'srv' / 'server.py'}]\n    env:\n      SRV_CONFIG: ~/project/conf.json\n"
    out, _ = _chat(scripted, home, mechanism, server, LOAD)
    line = _refusal(out)
    assert f"its env SRV_CONFIG names {home / 'project' / 'conf.json'}, which lies where" in line, out.stderr
    out, results = _chat(scripted, home, mechanism, f"{server}    pin: {json.dumps(_pin_of(line))}\n", LOAD)
    assert "loaded=['ok']" in results[0] and "config=" in results[0] and "mcp-pinned" in results[0], results
    assert _refusal(out) == "", out.stderr


def test_a_hermes_home_under_tmp_keeps_pinned_servers_working(scripted, home, mechanism):
    """Containers and CI keep $HERMES_HOME in /tmp. With the session's private /tmp (the default), no confined
    command writes there, so the copy store in it is safe: the pinned server starts from it."""
    hh = Path(f"/tmp/hermes-test-pinstore-{uuid.uuid4().hex[:8]}")
    hh.mkdir()
    try:
        marker, args = home / "pwned", f"    args: [{home / 'srv' / 'server.py'}, --plugins, ./p]\n"
        out, _ = _chat(scripted, home, mechanism, args, LOAD, hermes_home=hh)
        # trusted: this is about the sandbox's reach, not about the server's words tainting the turn (which
        # would stop the command before the sandbox is tried)
        pinned = f"{args}    trusted: true\n    pin: {json.dumps(_pin_of(_refusal(out)))}\n"
        plant = f"{_evil(marker)} && (mkdir -p {hh}/mcp-pinned/x 2>&1 || true) && echo tried"
        out, results = _chat(scripted, home, mechanism, pinned, plant, LOAD, hermes_home=hh)
        assert "tried" in results[0] and not (hh / "mcp-pinned" / "x").exists(), results  # the store: not writable
        assert "loaded=['hello']" in results[1] and str(hh / "mcp-pinned") in results[1], (out.stderr, results)
        assert not marker.exists()
    finally:
        shutil.rmtree(hh, ignore_errors=True)
