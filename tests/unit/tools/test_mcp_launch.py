"""Where an unconfined MCP server starts and which launcher shapes are refused (tools/mcp/launch.py; the
end-to-end cases through `hermes chat -q` are tests/integration/test_mcp_unconfined_cwd.py). A real directory
is distrusted as the sandbox's writable root; a real one outside it is the trusted place."""

from __future__ import annotations

import json

import pytest

from hermes_agent import paths
from hermes_agent.tools.mcp import launch, pins
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
                {"X_PATH": f"/usr/lib:{ws}/lib"}, {"URL": f"file://{ws}/c.json"}, {"CONFIG": "~/proj/mcp.json"}):
        cfg = ServerConfig(name="s", command="bash", env=env)
        home = {"HOME": str(ws.parent)} if "~" in next(iter(env.values())) else {}
        if home:
            (ws.parent / "proj").mkdir(exist_ok=True)
            paths.distrust_writable(str(ws.parent / "proj"))
        with pytest.MonkeyPatch.context() as mp:
            for k, v in home.items():
                mp.setenv(k, v)
            line = pins.plan(cfg, str(ws), "bash", env=env, start="/", create=False).error
        assert f"its env {next(iter(env))} names" in line and "sandboxed commands can write" in line, (env, line)
        assert "does not exist yet" in line or "mcp_servers.s.pin" in line, line
    for env in ({"CFG_HOME": str(outside)}, {"LEVEL": "debug"}, {"URL": "https://example.com/a/b"}):
        cfg = ServerConfig(name="s", command="bash", env=env)
        assert pins.plan(cfg, str(ws), "bash", env=env, start="/", create=False).error == "", env


def test_arguments_naming_a_writable_place_are_pinned_or_refused_whatever_the_flag(ws, tmp_path_factory):
    """`--plugins ./p`, `-I./lib`, `--config=x.yaml`, `-r ./preload.js`: no flag table, the path decides."""
    (ws / "p").mkdir()
    (ws / "p" / "plugin.py").write_text("X = 1\n")
    (ws / "preload.js").write_text("1\n")
    (ws / "x.yaml").write_text("level: debug\n")
    for args, said, named in ((("srv", "--plugins", "./p"), "--plugins ./p", "p"), (("srv", "-I./p"), "-I./p", "p"),
                              (("srv", "--config=x.yaml"), "--config=x.yaml", "x.yaml"),
                              (("-r", "./preload.js", "/opt/srv.js"), "-r ./preload.js", "preload.js"),
                              (("srv", "--log", "./new.log"), "--log ./new.log", "new.log")):
        cfg = ServerConfig(name="s", command="node", args=args)
        line = pins.plan(cfg, str(ws), "node", start="/", create=False).error
        assert f"its argument `{said}` names {ws / named}, which lies where" in line, (args, line)
        assert line.endswith("run confined") if named == "new.log" else '.pin: {"' in line, line
    (ws / "rc.sh").write_text("echo hi\n")
    with pytest.MonkeyPatch.context() as mp:  # a shell expands it at run time: judged as it will be
        mp.setenv("MCP13_WS", str(ws))
        for script in ("source $MCP13_WS/rc.sh; exec srv", "source ${MCP13_WS}/rc.sh; exec srv"):
            cfg = ServerConfig(name="s", command="bash", args=("-c", script))
            line = pins.plan(cfg, "/", "bash", start="/", create=False).error
            assert f"names {ws / 'rc.sh'}, which lies where" in line, (script, line)
    outside = tmp_path_factory.mktemp("srv")
    cfg = ServerConfig(name="s", command="node", args=("--plugins", str(outside), "--level", "3.5"))
    assert pins.plan(cfg, str(ws), "node", start="/", create=False) == pins.Plan()


def test_a_pinned_argument_is_replaced_by_the_copy_and_a_config_naming_the_workspace_is_refused(ws):
    (ws / "p").mkdir()
    (ws / "p" / "plugin.py").write_text("X = 1\n")
    (ws / "c.json").write_text(json.dumps({"plugins": f"{ws}/p"}))
    cfg = ServerConfig(name="s", command="srv", args=("--plugins=./p",))
    line = pins.plan(cfg, str(ws), "srv", start="/", create=False).error
    pin = line.rsplit("pin: ", 1)[1]
    cfg = ServerConfig(name="s", command="srv", args=("--plugins=./p",), pin=json.loads(pin))
    planned = pins.plan(cfg, str(ws), "srv", start="/", create=False)
    assert planned.error == "" and planned.args[0].startswith("--plugins=") and "mcp-pinned" in planned.args[0]
    cfg = ServerConfig(name="s", command="srv", args=("--config", "c.json"))
    pin = json.loads(pins.plan(cfg, str(ws), "srv", start="/", create=False).error.rsplit("pin: ", 1)[1])
    line = pins.plan(ServerConfig(name="s", command="srv", args=("--config", "c.json"), pin=pin), str(ws), "srv",
                     start="/", create=False).error
    assert f"and it names {ws / 'p'}" in line, line
