"""Benchmark: what looking for HOME's dot-links into the workspace (sandbox/dotlinks.py) adds to planning
the sandbox (spec_from_policy runs once per terminal start and again when the plan went stale).
A synthetic HOME: `--dots` entries at its top (a third dot-directories of 8 entries, a third files, the rest
symlinks to files outside), ~/.config with 40 application directories of 12 entries (3 levels), ~/.local/share
with 20, and a dotfiles workspace that 5 links lead into. Prints the median of the walk alone and of the whole
spec_from_policy, in ms, and how many entries were looked at.
Run: .venv/bin/python bench/bench_dotlinks.py [--dots 200] [--runs 30]"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time

from hermes_agent.approval.policy import PathPolicy
from hermes_agent.terminal.sandbox import dotlinks
from hermes_agent.terminal.sandbox.spec import spec_from_policy


def make_home(base: str, dots: int) -> tuple[str, str]:
    home = os.path.join(base, "home")
    ws = os.path.join(home, "dotfiles")
    outside = os.path.join(base, "elsewhere")
    for d in (ws, outside):
        os.makedirs(d)
    for i in range(dots):
        path = os.path.join(home, f".dot{i:03d}")
        if i % 3 == 0:
            os.makedirs(path)
            for j in range(8):
                open(os.path.join(path, f"f{j}"), "w").close()
        elif i % 3 == 1:
            open(path, "w").close()
        else:
            open(os.path.join(outside, f"t{i}"), "w").close()
            os.symlink(os.path.join(outside, f"t{i}"), path)
    for root, n in ((".config", 40), (".local/share", 20)):
        for a in range(n):
            app = os.path.join(home, root, f"app{a}", "sub", "deeper")
            os.makedirs(app)
            for j in range(4):
                for d in (os.path.dirname(os.path.dirname(app)), os.path.dirname(app), app):
                    open(os.path.join(d, f"f{j}"), "w").close()
    for name in ("vimrc", "gitconfig", "tmux.conf", "zshrc.local", "inputrc"):
        open(os.path.join(ws, name), "w").close()
        os.symlink(os.path.join(ws, name), os.path.join(home, "." + name))
    return home, ws


def median_ms(fn, runs: int) -> float:  # noqa: ANN001
    samples = []
    for _ in range(runs):
        start = time.perf_counter()
        fn()
        samples.append(time.perf_counter() - start)
    return statistics.median(samples) * 1000


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--dots", type=int, default=200)
    ap.add_argument("--runs", type=int, default=30)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(dir=os.path.expanduser("~")) as base:
        home, ws = make_home(base, args.dots)
        os.environ["HOME"] = home
        policy = PathPolicy.build(workspace=[ws], hermes_home=os.path.join(home, ".hermes"), home=home,
                                  config={"shared_tmp": False})

        def can(p: str) -> bool:
            return p == ws or p.startswith(ws + "/")

        left = [dotlinks.BUDGET]
        dotlinks._links(home, can, None, left)
        kept, complete = dotlinks.kept_paths(home, can)
        walk = median_ms(lambda: dotlinks.kept_paths(home, can), args.runs)
        spec = median_ms(lambda: spec_from_policy(policy), args.runs)
        real, dotlinks.kept_paths = dotlinks.kept_paths, lambda *a, **k: ([], True)
        without = median_ms(lambda: spec_from_policy(policy), args.runs)
        dotlinks.kept_paths = real
        print(f"dot entries {args.dots}: entries looked at {dotlinks.BUDGET - left[0]}, kept {len(kept)}, "
              f"complete {complete}; walk {walk:.2f} ms; spec_from_policy {spec:.2f} ms, without the walk "
              f"{without:.2f} ms (medians of {args.runs})")


if __name__ == "__main__":
    main()
