"""Benchmark: what the hard-link walk (terminal/sandbox/hardlinks.py) costs before the first confined command.
A workspace of --files plain files in 1,000 directories (a HOME-sized project: nothing linked), plus a uv-style
venv of --linked files hard-linked from a store outside (--size bytes each). Printed, medians of --runs fresh trees:
  walk     the walk alone over the plain tree (every session start pays it; nothing to copy);
  first    walk + copy apart of the linked venv (the first session after `uv sync`);
  again    the next session over the same tree (everything already apart: the walk only).
For reference `find -type f -links +1` over the same tree (the same stat per file, in C).
With --session (needs bwrap) the first command of a fresh sandboxed LocalBackend over the plain tree: plan,
launcher, guard baseline, hard-link walk, `true`; and the same with the walk switched off (`hardlinks.once`
replaced), alternating, medians of --runs: the first-command cost when no model request hides the warm-up.
Run: .venv/bin/python bench/bench_hardlinks.py [--files 100000] [--linked 2000] [--size 4096] [--runs 3]
[--session]"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import tempfile
import time

from hermes_agent.terminal.sandbox.hardlinks import separate


def build(base: str, files: int, linked: int, size: int) -> str:
    ws, store = os.path.join(base, "ws"), os.path.join(base, "store")
    per = max(1, files // 1000)
    for i in range(files):
        d = os.path.join(ws, f"src/d{i // per:04d}")
        if i % per == 0:
            os.makedirs(d, exist_ok=True)
        with open(os.path.join(d, f"f{i}.py"), "w") as f:
            f.write("x = 1\n")
    site = os.path.join(ws, ".venv/lib/python3.11/site-packages/pkg")
    os.makedirs(site)
    os.makedirs(store)
    blob = b"#" * size
    for i in range(linked):
        src = os.path.join(store, f"m{i}.py")
        with open(src, "wb") as f:
            f.write(blob)
        os.link(src, os.path.join(site, f"m{i}.py"))
    return ws


def session(files: int, runs: int) -> None:
    from hermes_agent.approval.policy import PathPolicy
    from hermes_agent.terminal.local import LocalBackend
    from hermes_agent.terminal.sandbox import hardlinks
    from hermes_agent.terminal.sandbox.spec import spec_from_policy

    base = tempfile.mkdtemp(prefix="bench-hl-", dir=os.path.expanduser("~"))
    real_once = hardlinks.once
    took: dict[bool, list[float]] = {True: [], False: []}
    try:
        ws = build(base, files, 0, 0)
        for _ in range(runs):
            for walk in (True, False):
                hardlinks._DONE.clear()
                hardlinks.once = real_once if walk else (lambda roots, keep_out=(): [])
                policy = PathPolicy.build(workspace=[ws], hermes_home=os.path.expanduser("~/.hermes"),
                                          config={"shared_tmp": False})  # the default
                start = time.perf_counter()
                b = LocalBackend(ws, source_rc=False, sandbox=spec_from_policy(policy, mechanism="bwrap"))
                b.execute("true")
                took[walk].append(time.perf_counter() - start)
                b.close()
    finally:
        hardlinks.once = real_once
        shutil.rmtree(base, ignore_errors=True)
    on, off = (statistics.median(took[k]) * 1000 for k in (True, False))
    print(f"first command, bwrap, {files:,} files: with the walk {on:.0f} ms, without {off:.0f} ms "
          f"(+{on - off:.0f} ms), load {os.getloadavg()[0]:.1f}")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--files", type=int, default=100_000)
    parser.add_argument("--linked", type=int, default=2_000)
    parser.add_argument("--size", type=int, default=4096)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--session", action="store_true", help="also the first command of a fresh backend")
    args = parser.parse_args()
    if args.session:
        session(args.files, args.runs)
    walk, first, again, find = [], [], [], []
    for _ in range(args.runs):
        base = tempfile.mkdtemp(prefix="bench-hl-", dir=os.path.expanduser("~"))
        try:
            ws = build(base, args.files, args.linked, args.size)
            src = os.path.join(ws, "src")
            t = time.perf_counter()
            subprocess.run(["find", src, "-type", "f", "-links", "+1"], check=True, stdout=subprocess.DEVNULL)
            find.append(time.perf_counter() - t)
            walk.append(separate([src]).seconds)
            res = separate([ws])
            assert len(res.copied) == args.linked, res.lines()
            first.append(res.seconds)
            res = separate([ws])
            assert not res.copied
            again.append(res.seconds)
            entries = res.entries
        finally:
            shutil.rmtree(base, ignore_errors=True)
    ms = lambda xs: f"{statistics.median(xs) * 1000:.0f} ms"  # noqa: E731
    print(f"load {os.getloadavg()[0]:.1f}; {args.files:,} plain files + {args.linked:,} linked x {args.size} bytes "
          f"({entries:,} entries walked), medians of {args.runs}")
    print(f"walk (plain tree)      {ms(walk)}   ({statistics.median(walk) / args.files * 1e6:.1f} us/file)")
    print(f"first (walk + copy)    {ms(first)}")
    print(f"again (walk, nothing)  {ms(again)}")
    print(f"find -links +1 (ref.)  {ms(find)}")


if __name__ == "__main__":
    main()
