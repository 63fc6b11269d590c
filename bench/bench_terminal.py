"""Terminal tool round trip: median wall time of `terminal(command="echo hi")` through
registry.dispatch (argument handling, backend call, output shaping, JSON) on each backend available.

Usage: .venv/bin/python bench/bench_terminal.py [--runs 200]
docker runs when DOCKER_HOST and HERMES_TEST_DOCKER_IMAGE are set; ssh when HERMES_TEST_SSH_* are set
(source the env files written by .ci/start-dockerd.sh / .ci/start-sshd.sh).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import tempfile
import time
from pathlib import Path

import hermes_agent.tools.builtin.terminal  # noqa: F401  (registers the tools)
from hermes_agent.config.defaults import DEFAULT_CONFIG
from hermes_agent.config.settings import Settings
from hermes_agent.terminal.manager import BackendPool
from hermes_agent.tools.context import ToolContext
from hermes_agent.tools.registry import registry


def _terminal_config(kind: str, work: str) -> dict | None:
    t = dict(DEFAULT_CONFIG["terminal"], backend=kind, cwd=work)
    if kind == "docker":
        if not (os.environ.get("DOCKER_HOST") and os.environ.get("HERMES_TEST_DOCKER_IMAGE")):
            return None
        t.update(docker_image=os.environ["HERMES_TEST_DOCKER_IMAGE"], cwd=".")
    if kind == "ssh":
        keys = ("HOST", "PORT", "USER", "KEY")
        if not all(os.environ.get(f"HERMES_TEST_SSH_{k}") for k in keys):
            return None
        t.update(ssh_host=os.environ["HERMES_TEST_SSH_HOST"], ssh_port=int(os.environ["HERMES_TEST_SSH_PORT"]),
                 ssh_user=os.environ["HERMES_TEST_SSH_USER"], ssh_key=os.environ["HERMES_TEST_SSH_KEY"], cwd=".")
    return t


def bench(kind: str, runs: int, home: Path) -> dict | None:
    """Median/p90 milliseconds of one `echo hi` call, after a warm-up call (connection, container, rc)."""
    t = _terminal_config(kind, str(home))
    if t is None:
        return None
    settings = Settings(data={**DEFAULT_CONFIG, "terminal": t}, env=dict(os.environ), home=home)
    pool = BackendPool(settings)
    ctx = ToolContext(settings=settings, task_id="bench", backend_factory=pool.get)
    try:
        start = time.perf_counter()
        first = json.loads(registry.dispatch("terminal", {"command": "echo hi"}, ctx=ctx, task_id="bench"))
        cold = (time.perf_counter() - start) * 1000
        assert first.get("output") == "hi\n", first
        times = []
        for _ in range(runs):
            start = time.perf_counter()
            out = registry.dispatch("terminal", {"command": "echo hi"}, ctx=ctx, task_id="bench")
            times.append((time.perf_counter() - start) * 1000)
            assert '"hi\\n"' in out, out
    finally:
        pool.close_all()
    times.sort()
    return {"backend": kind, "runs": runs, "cold_ms": round(cold, 1), "median_ms": round(statistics.median(times), 2),
            "p90_ms": round(times[int(len(times) * 0.9) - 1], 2)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=200, help="calls per backend (remote backends: a quarter)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        for kind in ("local", "docker", "ssh"):
            runs = args.runs if kind == "local" else max(args.runs // 4, 10)
            result = bench(kind, runs, Path(tmp))
            if result is None:
                print(f"{kind:7s} skipped (see the usage note: env not set)")
                continue
            print(f"{kind:7s} echo hi via registry.dispatch: median {result['median_ms']} ms, "
                  f"p90 {result['p90_ms']} ms over {result['runs']} runs (first call {result['cold_ms']} ms)")


if __name__ == "__main__":
    main()
