"""What the two "a vouched-for file pulls in others" fixes cost per session (issue 19, rt12 a04/a13).

  pin/trusted   pins.plan of a server whose script lies OUTSIDE the writable roots (~/servers/x.py, uvx, npx):
                the rule of paths.trusted_program only, nothing hashed (what every such server pays)
  pin/N files   pins.plan of a pinned `python3 tools/server.py` in the workspace, its directory holding N
                loadable files of 4 KB: the walk + hash of the tree every start, `first` also makes the copy
                in $HERMES_HOME/mcp-pinned (later starts reuse it)
  guard/plain   guardscan.discover of a workspace with a Makefile, package.json, justfile (no includes)
  guard/incl    the same with 3 make includes (one nested), a just import, 2 script files package.json names
                (byhandinc.follow: what the guard adds per scan, i.e. per confined command)
Medians of R runs, wall and this process's CPU (2 shared cores: the wall carries the run-queue wait).
Run: .venv/bin/python bench/bench_pins_includes.py [--runs 30] [--files 20,200,1000]"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))


def timed(fn, runs: int) -> tuple[float, float]:  # noqa: ANN001
    walls, cpus = [], []
    for _ in range(runs):
        w, c = time.perf_counter(), time.process_time()
        fn()
        walls.append((time.perf_counter() - w) * 1000)
        cpus.append((time.process_time() - c) * 1000)
    return statistics.median(walls), statistics.median(cpus)


def bench_pins(base: Path, files: list[int], runs: int) -> None:
    from hermes_agent import paths
    from hermes_agent.tools.mcp import pins, pintree
    from hermes_agent.tools.mcp.config import ServerConfig

    os.environ["HERMES_HOME"] = str(base / "hermes")
    ws = base / "ws"
    paths.distrust_writable(str(ws))
    outside = base / "servers"
    outside.mkdir()
    (outside / "server.py").write_text("print(1)\n")
    cfg = ServerConfig(name="x", command="python3", args=(str(outside / "server.py"),))
    w, c = timed(lambda: pins.plan(cfg, str(base), "python3"), runs)
    print(f"pin/trusted        wall {w:7.2f} ms  cpu {c:7.2f} ms")
    for n in files:
        tools = ws / f"tools{n}"
        tools.mkdir(parents=True)
        for i in range(n):
            (tools / f"m{i}.py").write_text(f"X = {i}\n" + "#" * 4096)
        (tools / "server.py").write_text("import m0\n")
        tree = pintree.read_tree(str(tools))
        cfg = ServerConfig(name="x", command="python3", args=(f"tools{n}/server.py",),
                           pin={str(tools): pintree.digest(tree)})
        w0 = time.perf_counter()
        first = pins.plan(cfg, str(ws), "python3")
        first_ms = (time.perf_counter() - w0) * 1000
        assert not first.error and first.args, first
        w, c = timed(lambda cfg=cfg: pins.plan(cfg, str(ws), "python3"), runs)
        print(f"pin/{n:<5} files    wall {w:7.2f} ms  cpu {c:7.2f} ms  (first, with the copy: {first_ms:.1f} ms)")


def bench_guard(base: Path, runs: int) -> None:
    from hermes_agent.terminal.sandbox import guardscan

    for label, incl in (("plain", False), ("incl", True)):
        ws = base / f"g-{label}"
        (ws / "mk").mkdir(parents=True)
        (ws / "scripts").mkdir()
        (ws / "just").mkdir()
        make = "include mk/a.mk mk/b.mk\n-include local.mk\nall:\n\techo\n" if incl else "all:\n\techo\n"
        (ws / "Makefile").write_text(make)
        (ws / "mk/a.mk").write_text("include mk/c.mk\n")
        (ws / "mk/b.mk").write_text("b:\n\techo\n")
        (ws / "mk/c.mk").write_text("c:\n\techo\n")
        (ws / "justfile").write_text("import 'just/x.just'\n" if incl else "t:\n\techo\n")
        (ws / "just/x.just").write_text("t:\n\techo\n")
        scripts = '{"build": "node scripts/b.js", "test": "sh scripts/t.sh"}' if incl else '{"build": "tsc"}'
        (ws / "package.json").write_text(f'{{"name": "a", "scripts": {scripts}}}')
        (ws / "scripts/b.js").write_text("1\n")
        (ws / "scripts/t.sh").write_text("true\n")
        roots = (str(ws),)

        def scan(ws: Path = ws, roots: tuple[str, ...] = roots) -> None:
            fds = guardscan.Fds()
            try:
                guardscan.discover([str(ws)], fds, None, None, roots)
            finally:
                fds.close()
        w, c = timed(scan, runs)
        print(f"guard/{label:<12} wall {w:7.2f} ms  cpu {c:7.2f} ms")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=30)
    ap.add_argument("--files", default="20,200,1000")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(dir=os.path.expanduser("~")) as tmp:
        bench_pins(Path(tmp), [int(x) for x in args.files.split(",")], args.runs)
        bench_guard(Path(tmp), args.runs)


if __name__ == "__main__":
    main()
