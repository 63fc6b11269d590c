"""Benchmark: the cost of noting every name git resolves (tools/ctxcommits.tips: refs, pseudo-refs, reflogs,
stash parents), paid at a session's first confined call and again at its end, against reading the ref tips
alone (`git show-ref --head`, what it did before). On a fresh repository (20 commits, 10 branches, a stash)
and on any repositories given. Then the session end's cost for a repository new this session (rt12 a26: empty
baseline): judged by content, every tree of its object store read once (tools/ctxobjects.new_repository, what
the session end does), against walking every name's commit (`committed(root, {}, tips(root))`: a listing per
commit, which stops early once MAX_FILES contents are found).
Run: PYTHONPATH=src .venv/bin/python bench/bench_ctxcommits.py [--rounds N] [REPO...]"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import tempfile
import time


def _fresh(root: str) -> str:
    def git(*args: str) -> None:
        subprocess.run(["git", "-c", "user.name=b", "-c", "user.email=b@x", *args], cwd=root, check=True,
                       capture_output=True)

    git("init", "-q")
    for i in range(20):
        with open(os.path.join(root, "f.txt"), "w") as f:
            f.write(f"{i}\n")
        git("add", "f.txt")
        git("commit", "-qm", f"c{i}")
        if i % 2:
            git("branch", f"b{i}")
    with open(os.path.join(root, "f.txt"), "w") as f:
        f.write("wip\n")
    git("stash", "-q")
    return root


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("repos", nargs="*")
    parser.add_argument("--rounds", type=int, default=15)
    args = parser.parse_args()
    from hermes_agent.gitsafe import run_git
    from hermes_agent.tools.ctxcommits import _NAMES, committed, tips
    from hermes_agent.tools.ctxobjects import new_repository

    with tempfile.TemporaryDirectory() as tmp:
        for repo in [_fresh(tmp), *args.repos]:
            old, new = [], []
            for _ in range(args.rounds):
                start = time.perf_counter()
                run_git(["show-ref", "--head"], cwd=repo, timeout=10)
                old.append(time.perf_counter() - start)
                start = time.perf_counter()
                names = tips(repo) or {}
                new.append(time.perf_counter() - start)
            print(f"{repo}: ref tips only {statistics.median(old) * 1e3:.1f} ms, every name "
                  f"{statistics.median(new) * 1e3:.1f} ms ({len(names)} names), load {os.getloadavg()[0]:.1f}")
            walk, objects = [], []
            for _ in range(max(1, args.rounds // 3)):
                start = time.perf_counter()
                committed(repo, {}, tips(repo) or {})
                walk.append(time.perf_counter() - start)
                start = time.perf_counter()
                found, _ = new_repository(repo, _NAMES)
                objects.append(time.perf_counter() - start)
            print(f"  as a new repository: by content (every tree) {statistics.median(objects) * 1e3:.1f} ms "
                  f"({len(found)} contents), every name's commit listed {statistics.median(walk) * 1e3:.1f} ms")


if __name__ == "__main__":
    main()
