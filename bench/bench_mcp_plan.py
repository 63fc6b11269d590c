"""Cost of judging an unconfined MCP server's paths at each start (tools/mcp/pins.plan: its command, arguments and
env values) for servers outside the writable roots, the common case: `PYTHONPATH=src python bench/bench_mcp_plan.py`
(run it with another tree's src to compare)."""

from __future__ import annotations

import os
import shutil
import tempfile
import time

from hermes_agent import paths
from hermes_agent.tools.mcp import pins
from hermes_agent.tools.mcp.config import ServerConfig


def main(n: int = 2000) -> None:
    ws = tempfile.mkdtemp(prefix="bench-mcp-ws-", dir=os.path.expanduser("~"))
    srv = tempfile.mkdtemp(prefix="bench-mcp-srv-", dir=os.path.expanduser("~"))
    paths.distrust_writable(ws)
    with open(os.path.join(srv, "server.py"), "w") as f:
        f.write("x = 1\n")
    cases = {
        "python3 ~/srv/server.py --port 3": ServerConfig(
            name="s", command="python3", args=(os.path.join(srv, "server.py"), "--port", "3", "--log-level", "info")),
        "npx -y PKG, 2 env values": ServerConfig(
            name="s", command="npx", args=("-y", "@modelcontextprotocol/server-everything"),
            env={"LEVEL": "debug", "API_URL": "https://example.com/a"}),
    }
    try:
        for name, cfg in cases.items():
            env = {"PATH": "/usr/bin:/bin", **cfg.env}
            start = time.perf_counter()
            for _ in range(n):
                planned = pins.plan(cfg, ws, cfg.command, create=False, env=env, start="/")
            took = (time.perf_counter() - start) / n * 1e3
            print(f"{name}: {took:.3f} ms per start ({'refused' if planned.error else 'started'})")
    finally:
        shutil.rmtree(ws)
        shutil.rmtree(srv)


if __name__ == "__main__":
    main()
