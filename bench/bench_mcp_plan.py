"""Cost of judging an unconfined MCP server's paths at each start (tools/mcp/pins.plan: command, arguments,
env values) for servers outside the writable roots, the common case: `python bench/bench_mcp_plan.py`."""
import os, sys, time, tempfile
from hermes_agent import paths
from hermes_agent.tools.mcp import pins
from hermes_agent.tools.mcp.config import ServerConfig
ws = tempfile.mkdtemp(prefix="mcp13ws-", dir=os.path.expanduser("~")); paths.distrust_writable(ws)
srv = tempfile.mkdtemp(prefix="mcp13srv-", dir=os.path.expanduser("~")); open(os.path.join(srv, "server.py"), "w").write("x=1\n")
cases = {"python srv.py": ServerConfig(name="s", command="python3", args=(os.path.join(srv, "server.py"), "--port", "3", "--log-level", "info")),
         "npx -y pkg": ServerConfig(name="s", command="npx", args=("-y", "@modelcontextprotocol/server-everything"), env={"LEVEL": "debug", "API_URL": "https://example.com/a"})}
for name, cfg in cases.items():
    env = {"PATH": "/usr/bin:/bin", **cfg.env}
    kw = {"env": env}
    try:
        pins.plan(cfg, ws, cfg.command, create=False, env=env, start="/"); kw["start"] = "/"
    except TypeError:
        pass
    n = 2000
    t = time.perf_counter()
    for _ in range(n):
        p = pins.plan(cfg, ws, cfg.command, create=False, **kw)
    dt = (time.perf_counter() - t) / n * 1e3
    print(f"{name}: {dt:.3f} ms per plan; error={p.error[:60]!r}")
import shutil; shutil.rmtree(ws); shutil.rmtree(srv)
