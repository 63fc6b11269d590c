"""Benchmark: what keeping uncommitted work (storage/dirtyguard.py) adds before every local terminal command.
Repositories of N tracked files (default 1,000 and 10,000, spread over directories), medians of R runs:
  clean      DirtyGuard.before on a clean tree: the index (cached by its stat) plus one lstat per tracked file
  git status the alternative signal: `git status --porcelain -uno` through gitsafe.run_git (two processes)
  dirty/kept a dirty tree whose changes a snapshot already holds (same cost as clean: no snapshot)
  snapshot   the first snapshot of a dirty tree (hashes every file into the shadow store) and a later one
             after one more file changed (only that file hashed again)
CPU time of this process is printed beside the wall time (2 cores shared by many processes: the wall time
carries the run-queue wait). Run: .venv/bin/python bench/bench_dirtyguard.py [--files 1000,10000 --runs 15]"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import tempfile
import time


def make_repo(root: str, files: int) -> None:
    for i in range(files):
        d = f"{root}/pkg{i % 20}/mod{i // 20 % 25}"
        os.makedirs(d, exist_ok=True)
        with open(f"{d}/f{i}.py", "w") as fh:
            fh.write(f"x = {i}\n" * 20)
    git = ["git", "-c", "user.email=a@b", "-c", "user.name=a"]
    subprocess.run([*git, "init", "-q"], cwd=root, check=True)
    subprocess.run([*git, "add", "-A"], cwd=root, check=True)
    subprocess.run([*git, "commit", "-qm", "init"], cwd=root, check=True)
    old = time.time() - 120
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = [d for d in dirnames if d != ".git"]
        for f in filenames:
            os.utime(os.path.join(dirpath, f), (old, old))
    subprocess.run(["git", "update-index", "-q", "--refresh"], cwd=root, check=True)


def timed(fn, runs: int) -> tuple[float, float]:
    walls, cpus = [], []
    for _ in range(runs):
        w, c = time.perf_counter(), time.process_time()
        fn()
        cpus.append(time.process_time() - c)
        walls.append(time.perf_counter() - w)
    return statistics.median(walls) * 1e3, statistics.median(cpus) * 1e3


def bench(files: int, runs: int) -> None:
    from hermes_agent.gitsafe import run_git
    from hermes_agent.storage.checkpoints import CheckpointStore
    from hermes_agent.storage.dirtyguard import DirtyGuard

    with tempfile.TemporaryDirectory() as tmp:
        root = f"{tmp}/proj"
        os.makedirs(root)
        make_repo(root, files)
        guard = DirtyGuard(CheckpointStore(f"{tmp}/checkpoints"), stop=tmp)
        guard.before(root)  # the index parsed once (cached by its stat afterwards)
        rows = [("clean", *timed(lambda: guard.before(root), runs)),
                ("git status", *timed(lambda: run_git(["status", "--porcelain", "-uno"], cwd=root), runs))]
        victim = f"{root}/pkg3/mod0/f3.py"
        with open(victim, "a") as fh:
            fh.write("work\n")
        first = timed(lambda: guard.before(root), 1)
        rows.append(("snapshot (first)", *first))
        rows.append(("dirty/kept", *timed(lambda: guard.before(root), runs)))
        with open(f"{root}/pkg4/mod0/f4.py", "a") as fh:
            fh.write("more work\n")
        rows.append(("snapshot (next)", *timed(lambda: guard.before(root), 1)))
        for name, wall, cpu in rows:
            print(f"  {files:>6} files  {name:17} {wall:8.2f} ms wall  {cpu:8.2f} ms cpu (this process)")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--files", default="1000,10000")
    ap.add_argument("--runs", type=int, default=15)
    args = ap.parse_args()
    print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    for n in (int(x) for x in args.files.split(",")):
        bench(n, args.runs)


if __name__ == "__main__":
    main()
