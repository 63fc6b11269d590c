"""Where an unconfined MCP server starts and which launcher shapes are refused (tools/mcp/launch.py; the
end-to-end cases through `hermes chat -q` are tests/integration/test_mcp_unconfined_cwd.py). A real directory
is distrusted as the sandbox's writable root; a real one outside it is the trusted place."""

from __future__ import annotations

import pytest

from hermes_agent import paths
from hermes_agent.tools.mcp import launch
from hermes_agent.tools.mcp.config import ServerConfig


@pytest.fixture(autouse=True)
def _own_trust(monkeypatch):
    """Only this test's distrusted roots count (other tests in the process distrust /tmp trees too)."""
    monkeypatch.setattr(paths, "_UNTRUSTED", set())


@pytest.fixture
def ws(tmp_path_factory):
    ws = tmp_path_factory.mktemp("ws")
    paths.distrust_writable(str(ws))
    return ws


@pytest.mark.parametrize("command,args", [
    ("npx", ("-y", "./pkg")), ("npx", ("-y", "file:{ws}/pkg")), ("npx", ("--package={ws}/pkg", "x")),
    ("npx", ("-p", "{ws}/pkg", "x")), ("uvx", ("--from", "{ws}/pkg", "tool")), ("uv", ("tool", "run", "{ws}/pkg")),
    ("npm", ("exec", "--", "x")), ("pnpm", ("dlx", "git+file://{ws}/repo")), ("uv", ("run", "--with", "mcp")),
    ("make", ("-C", "{ws}", "mcp")), ("npm", ("--prefix", "{ws}/srv", "run", "mcp")), ("uv", ("run", "--directory", "{ws}", "x")),
    ("cargo", ("run",)), ("docker", ("compose", "up")), ("just", ("mcp",)), ("go", ("run", ".")),
    ("go", ("run", "-C", "/opt", "{ws}/cmd/server")),
])
def test_a_launcher_reading_the_workspace_is_refused(ws, command, args):
    cfg = ServerConfig(name="s", command=command, args=tuple(a.format(ws=ws) for a in args))
    start, problem = launch.start_dir(cfg, str(ws))
    if args == ("exec", "--", "x"):  # npm exec of a registry name: starts in /, reads nothing of the workspace
        assert (start, problem) == ("/", "")
        return
    assert start == "" and problem.startswith("not started: mcp_servers.s runs unconfined") and str(ws) in problem
    assert "run confined" in problem


def test_a_launcher_told_where_its_project_lies_outside_starts_in_root(ws, tmp_path_factory):
    outside = tmp_path_factory.mktemp("srv")
    for command, args in (("make", ("-C", str(outside), "mcp")), ("npm", ("--prefix", str(outside), "run", "mcp")),
                          ("uv", ("run", "--with", "mcp", "/opt/srv/server.py")), ("cargo", ("run", f"--manifest-path={outside}/Cargo.toml"))):
        assert launch.start_dir(ServerConfig(name="s", command=command, args=args), str(ws)) == ("/", ""), args


def test_registry_runners_start_in_root_and_their_server_arguments_are_its_own(ws):
    cfg = ServerConfig(name="s", command="npx", args=("-y", "@scope/server", str(ws), "--root", "./data"))
    assert launch.start_dir(cfg, str(ws)) == ("/", "")
    cfg = ServerConfig(name="s", command="uvx", args=("mcp-server-git", "--repository", str(ws)))
    assert launch.start_dir(cfg, str(ws)) == ("/", "")


def test_env_values_are_judged_whatever_the_variable(ws, tmp_path_factory):
    outside = tmp_path_factory.mktemp("outside")
    for env in ({"CFG_HOME": str(ws / "x")}, {"ENV": "./rc"}, {"JAVA_TOOL_OPTIONS": f"-javaagent:{ws}/a.jar"},
                {"X_PATH": f"/usr/lib:{ws}/lib"}, {"URL": f"file://{ws}/c.json"}):
        cfg = ServerConfig(name="s", command="bash", env=env)
        line = launch.env_problem(cfg, env, str(ws), "/")
        assert f"its env {next(iter(env))} names" in line and str(ws) in line, (env, line)
    for env in ({"CFG_HOME": str(outside)}, {"LEVEL": "debug"}, {"URL": "https://example.com/a/b"}):
        assert launch.env_problem(ServerConfig(name="s", command="bash", env=env), env, str(ws), "/") == "", env
