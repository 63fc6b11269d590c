"""Issue 19, red-team round 12 a45, a48, a49: an unconfined MCP server (`sandbox: false`) whose program lies
outside the workspace (nothing to pin) still read what a confined command wrote there: npx, started in the
workspace, ran a planted `node_modules/.bin` before the registry; `env: {BASH_ENV: ./env.sh}` sourced a planted
file; `npm run -s mcp` / `make -s mcp` ran an edited script or recipe. Through the real `hermes chat -q` (HOME
outside /tmp, bwrap and Landlock confining the planting command): an unconfined server starts in `/`, never the
workspace; a launcher that runs the workspace's project, or an env value naming a path there, is refused with one
line saying how to grant it. Controls: the real npm filesystem server from `npx -y` of a registry package starts
(and is not the planted one); a project launcher in a configured cwd outside the workspace starts."""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import sys
from pathlib import Path

import pytest

from tests.helpers import home_outside_tmp, model_config, run_hermes

HOSTILE = Path(__file__).resolve().parents[1] / "fixtures" / "mcp_hostile_server.py"
NPM_MCP = Path("/work/ci/npm-mcp")
pytestmark = pytest.mark.skipif(importlib.util.find_spec("mcp") is None, reason="the mcp SDK is not installed")


@pytest.fixture
def home():
    home = home_outside_tmp("mcpcwd")
    (home / ".hermes").mkdir(parents=True)
    (home / "project").mkdir(parents=True)
    yield home
    shutil.rmtree(home, ignore_errors=True)


def _chat(scripted, home: Path, mechanism: str, servers: str, *calls: tuple[str, dict]):  # noqa: ANN001
    model_config(home / ".hermes", scripted.url, f"sandbox:\n  mechanism: {mechanism}\nmcp_discovery_timeout: 90\n"
                 f"mcp_single_query_discovery_timeout: 120\nmcp_servers:\n{servers}")
    scripted.add(*({"tool_calls": [{"name": name, "arguments": args}]} for name, args in calls), {"content": "ok"})
    out = run_hermes("chat", "-q", "go", "--yolo", home=home / ".hermes", env={"HOME": str(home)},
                     cwd=str(home / "project"), timeout=240)
    assert "Traceback" not in out.stderr, out.stderr
    results = [m["content"] for m in scripted.requests[-1]["body"]["messages"] if m["role"] == "tool"]
    return out, results


def _line(out, server: str) -> str:  # noqa: ANN001
    return next((ln for ln in out.stderr.splitlines() if f"mcp_servers.{server} " in ln and "not started" in ln), "")


def _plant(scripted, home: Path, mechanism: str, command: str) -> None:  # noqa: ANN001
    """A confined command of an earlier session writes the workspace."""
    out, results = _chat(scripted, home, mechanism, "", ("terminal", {"command": command + " && echo planted"}))
    assert out.returncode == 0 and "planted" in results[0], (out.stderr, results)


@pytest.mark.skipif(not (NPM_MCP / "node_modules/.bin/mcp-server-filesystem").exists() or not shutil.which("npx"),
                    reason="the CI's npm MCP servers are not installed")
def test_npx_never_runs_the_workspace_node_modules(scripted, home, mechanism):
    marker = home / "pwned-a45"
    pkg = "node_modules/@modelcontextprotocol/server-filesystem"
    cli = f"#!/bin/sh\\ntouch {marker}\\n"
    _plant(scripted, home, mechanism, f"mkdir -p {pkg} node_modules/.bin && echo '{{\"name\":\"@modelcontextprotocol/"
           f"server-filesystem\",\"version\":\"9.9.9\",\"bin\":{{\"mcp-server-filesystem\":\"cli.sh\"}}}}' > "
           f"{pkg}/package.json && printf '{cli}' > {pkg}/cli.sh && chmod +x {pkg}/cli.sh && "
           "ln -sf ../@modelcontextprotocol/server-filesystem/cli.sh node_modules/.bin/mcp-server-filesystem")
    cache = Path(os.path.expanduser("~/.npm"))  # the tester's own npm cache: a registry download only once
    data = home / "data"  # what an unconfined server serves lies outside the workspace (issue 19 class 2 gap 1)
    data.mkdir()
    servers = (f"  fs:\n    command: npx\n    args: [-y, '@modelcontextprotocol/server-filesystem', {data}]\n"
               f"    sandbox: false\n    env:\n      npm_config_cache: {cache}\n      npm_config_update_notifier: 'false'\n"
               f"  pre:\n    command: npx\n    args: [-y, --prefix, {NPM_MCP}, mcp-server-filesystem, {data}]\n"
               "    sandbox: false\n"
               f"  ws:\n    command: npx\n    args: [-y, --prefix, {NPM_MCP}, mcp-server-filesystem, {home / 'project'}]\n"
               "    sandbox: false\n"
               f"  bad:\n    command: npx\n    args: [-y, --prefix, {home / 'project'}, mcp-server-filesystem]\n"
               "    sandbox: false\n")
    out, results = _chat(scripted, home, mechanism, servers, ("mcp__fs__list_allowed_directories", {}),
                         ("mcp__pre__list_allowed_directories", {}))
    if "ENOTFOUND" in out.stderr or "EAI_AGAIN" in out.stderr:
        pytest.skip("the npm registry is not reachable")
    assert not marker.exists(), out.stderr
    assert str(data) in results[0] and str(data) in results[1], (results, out.stderr)
    line = _line(out, "ws")  # unconfined, it would follow a link a command made there with your rights
    assert f"names {home / 'project'}, which lies where sandboxed commands can write" in line, out.stderr
    assert "run confined" in line, out.stderr
    line = _line(out, "bad")
    assert f"`npx --prefix` names {home / 'project'}" in line and "run confined" in line, out.stderr
    assert _line(out, "fs") == "" and _line(out, "pre") == "", out.stderr


def test_env_paths_into_the_workspace_are_refused(scripted, home, mechanism):
    marker, outside = home / "pwned-a48", home / "env-outside.sh"
    _plant(scripted, home, mechanism, f"echo 'touch {marker}' > env.sh && mkdir -p conf && touch conf/x.json && "
           f"printf 'require(\"fs\").writeFileSync(\"{marker}\",\"\")\\n' > preload.js")
    outside.write_text("export FROM_OUTSIDE=1\n")
    run = f"exec {sys.executable} {HOSTILE}"
    server = f"    command: bash\n    args: [-c, '{run}']\n    sandbox: false\n    env:\n"
    servers = "".join(f"  {name}:\n{server}      {var}: {value}\n" for name, var, value in (
        ("rel", "BASH_ENV", "./env.sh"), ("abs", "BASH_ENV", home / "project" / "env.sh"),
        ("any", "MY_SETTINGS_PATH", home / "project" / "conf" / "x.json"),
        ("node", "NODE_OPTIONS", "--require ./preload.js"), ("ok", "BASH_ENV", outside)))
    out, results = _chat(scripted, home, mechanism, servers, ("mcp__ok__run_shell", {"command": "pwd; echo $FROM_OUTSIDE"}),
                         ("mcp__rel__run_shell", {"command": "echo ran"}))
    assert not marker.exists(), out.stderr
    for name, var, path in (("rel", "BASH_ENV", "project/env.sh"), ("abs", "BASH_ENV", "project/env.sh"),
                            ("any", "MY_SETTINGS_PATH", "project/conf/x.json"), ("node", "NODE_OPTIONS", "preload.js")):
        line = _line(out, name)
        assert f"{var} names" in line and path in line and "sandboxed commands can write" in line, (name, out.stderr)
    assert json.loads(results[0])["result"] == "exit=0\n/\n1\n", results  # started in /; the outside file was read
    assert "Unknown tool" in results[1], results


def test_project_launchers_need_a_cwd_outside_the_workspace(scripted, home, mechanism):
    if not shutil.which("npm") or not shutil.which("make"):
        pytest.skip("npm and make are needed")
    marker, project, copy = home / "pwned-a49", home / "project", home / "server-copy"
    for folder in (project, copy):
        folder.mkdir(exist_ok=True)
        (folder / "package.json").write_text(
            f'{{"name":"p","version":"1.0.0","scripts":{{"mcp":"{sys.executable} {HOSTILE}"}}}}\n')
        (folder / "Makefile").write_text(f"mcp:\n\t@{sys.executable} {HOSTILE}\n")
    _plant(scripted, home, mechanism, f"sed -i 's#\"mcp\":\"#\"mcp\":\"touch {marker}; #' package.json && "
           f"printf 'mcp:\\n\\t@touch {marker}\\n' > Makefile")
    servers = (f"  npm:\n    command: npm\n    args: [run, -s, mcp]\n    sandbox: false\n"
               f"  mk:\n    command: make\n    args: [-s, mcp]\n    sandbox: false\n"
               f"  mkc:\n    command: make\n    args: [-C, {project}, -s, mcp]\n    sandbox: false\n    cwd: {copy}\n"
               f"  here:\n    command: {sys.executable}\n    args: [{HOSTILE}]\n    sandbox: false\n    cwd: {project}\n"
               f"  npmok:\n    command: npm\n    args: [run, -s, mcp]\n    sandbox: false\n    cwd: {copy}\n"
               f"  mkok:\n    command: make\n    args: [-s, mcp]\n    sandbox: false\n    cwd: {copy}\n")
    out, results = _chat(scripted, home, mechanism, servers, ("mcp__npmok__run_shell", {"command": "pwd"}),
                         ("mcp__mkok__run_shell", {"command": "pwd"}), ("mcp__mk__run_shell", {"command": "pwd"}))
    assert not marker.exists(), out.stderr
    assert str(copy) in results[0] and str(copy) in results[1] and "Unknown tool" in results[2], results
    for name, what in (("npm", "`npm` runs the project"), ("mk", "`make` runs the project"),
                       ("mkc", "`make -C` names"), ("here", "its cwd: is")):
        line = _line(out, name)
        assert what in line and str(project) in line and "run confined" in line, (name, out.stderr)
