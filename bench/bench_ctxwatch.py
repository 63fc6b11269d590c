"""Benchmark: what the context-file watch (tools/ctxwatch.py) adds around every confined call (terminal,
process, execute_code, MCP tools): `before_call` + `after_call` with nothing changed (the common case: one
lstat per walked directory and known context file), with an ordinary file made in a deep directory (the
changed directory is probed for the watched names), and the session's first baseline (the full walk). Also
the loader's ledger check (memory/ctxledger.held) for one file. Workspaces: a project of N directories
(default 60 and 400) with an AGENTS.md at the top, a node_modules tree (skipped by the walk), medians of R runs.
Run: .venv/bin/python bench/bench_ctxwatch.py [--calls N] [--dirs 60,400]"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time
from types import SimpleNamespace


def make_project(root: str, dirs: int) -> None:
    os.makedirs(f"{root}/.git")
    open(f"{root}/AGENTS.md", "w").write("Use pytest.\n")
    for i in range(dirs):
        path = f"{root}/pkg{i % 12}/mod{i // 12 % 8}/sub{i}"
        os.makedirs(path, exist_ok=True)
        open(f"{path}/x.py", "w").write("x = 1\n")
    for i in range(200):
        os.makedirs(f"{root}/node_modules/dep{i}/lib", exist_ok=True)


def ctx_for(root: str, home: str) -> SimpleNamespace:
    """The ToolContext fields the watch reads (no terminal, no gate: nobody to ask)."""
    from hermes_agent.approval.policy import PathPolicy

    policy = PathPolicy.build(workspace=[root], hermes_home=home)
    cfg = SimpleNamespace(terminal=SimpleNamespace(cwd=""), sandbox=SimpleNamespace(mode="workspace-write"))
    return SimpleNamespace(settings=SimpleNamespace(cfg=cfg, home=home), path_policy=policy, ctx_watch=None, offered=(), approve_context=None, notice=None,
                           session_id=None)


def median_ms(fn, calls: int) -> float:  # noqa: ANN001
    samples = []
    for _ in range(calls):
        start = time.perf_counter()
        fn()
        samples.append(time.perf_counter() - start)
    return statistics.median(samples) * 1000


def one(n: int, calls: int) -> None:
    """Bench one project of `n` directories."""
    from hermes_agent.memory import ctxledger
    from hermes_agent.tools import ctxwatch

    with tempfile.TemporaryDirectory(dir=os.path.expanduser("~")) as tmp:
        root, home = os.path.join(tmp, "ws"), os.path.join(tmp, "hh")
        os.makedirs(home)
        make_project(root, n)
        os.chdir(root)
        ctx = ctx_for(root, home)
        start = time.perf_counter()
        ctxwatch.before_call(ctx, None)
        ctxwatch.after_call(ctx, "terminal", None)
        first = (time.perf_counter() - start) * 1000
        deep = f"{root}/pkg0/mod0/sub0"
        counter = [0]

        def quiet() -> None:
            ctxwatch.before_call(ctx, None)
            ctxwatch.after_call(ctx, "terminal", None)

        def touched() -> None:
            ctxwatch.before_call(ctx, None)
            counter[0] += 1
            open(f"{deep}/f{counter[0]}.txt", "w").close()  # an ordinary file: its directory is probed
            ctxwatch.after_call(ctx, "terminal", None)

        q = median_ms(quiet, calls)
        t = median_ms(touched, calls)
        data = open(f"{root}/AGENTS.md", "rb").read()
        ctime = os.stat(f"{root}/AGENTS.md").st_ctime_ns
        h = median_ms(lambda: ctxledger.held(home, f"{root}/AGENTS.md", ctime, data), calls)
        print(f"{n} dirs ({len(ctx.ctx_watch.tree.dirs)} walked): first baseline {first:.2f} ms; per call, nothing "
              f"changed {q:.3f} ms; a file made in a deep dir {t:.3f} ms; loader ledger check {h:.3f} ms")
        ctxwatch.finish(ctx)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--calls", type=int, default=200)
    ap.add_argument("--dirs", default="60,400")
    args = ap.parse_args()
    import hermes_agent.memory.context_files  # noqa: F401 - loaded by every session before its first call
    import hermes_agent.terminal.processes  # noqa: F401
    import hermes_agent.terminal.sandbox.guardscan  # noqa: F401
    import hermes_agent.tools.registry  # noqa: F401

    for n in (int(x) for x in args.dirs.split(",")):
        one(n, args.calls)


if __name__ == "__main__":
    main()
