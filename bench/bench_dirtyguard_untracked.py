"""Per-command cost of the dirty guard (storage/dirtyguard.py) on a repository of 2000 tracked files, 20 untracked
and 500 ignored ones, with one uncommitted edit: the first call (a snapshot) and the steady state (nothing new to
keep), then its two walks timed interleaved in one process (robust to a loaded machine).
Run: PYTHONPATH=src python bench/bench_dirtyguard_untracked.py LABEL (bench_dirtyguard.py: tracked files only)"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import time

from hermes_agent.storage.checkpoints import CheckpointStore
from hermes_agent.storage.dirtyguard import DirtyGuard


def _repo(ws: str) -> None:
    for i in range(2000):
        d = os.path.join(ws, f"pkg{i % 40}", f"sub{i % 7}")
        os.makedirs(d, exist_ok=True)
        with open(os.path.join(d, f"m{i}.py"), "w") as fh:
            fh.write(f"x = {i}\n")
    with open(os.path.join(ws, ".gitignore"), "w") as fh:
        fh.write("build/\n*.log\n")
    for args in (["init", "-q"], ["add", "-A"], ["commit", "-qm", "i"]):
        subprocess.run(["git", "-c", "user.email=a@b", "-c", "user.name=a", *args], cwd=ws, check=True,
                       capture_output=True)
    os.makedirs(os.path.join(ws, "build"))
    for i in range(500):
        with open(os.path.join(ws, "build", f"o{i}.o"), "w") as fh:
            fh.write("o")
    for i in range(20):
        with open(os.path.join(ws, f"note{i}.md"), "w") as fh:
            fh.write("n")
    with open(os.path.join(ws, "pkg1", "sub1", "m1.py"), "a") as fh:  # one uncommitted tracked edit
        fh.write("# edit\n")


def _timed(fn, runs: int) -> list[float]:  # noqa: ANN001
    out = []
    for _ in range(runs):
        t = time.perf_counter()
        fn()
        out.append((time.perf_counter() - t) * 1000)
    return sorted(out)


def main(label: str) -> None:
    base = tempfile.mkdtemp(prefix="bench-dirtyguard-")
    ws = os.path.join(base, "proj")
    _repo(ws)
    guard = DirtyGuard(CheckpointStore(os.path.join(base, "cp")), stop="/")
    first = _timed(lambda: guard.before(ws, "first"), 1)[0]
    steady = _timed(lambda: guard.before(ws, "steady"), 300)
    print(f"{label}: first call (snapshot) {first:.0f} ms; steady per command min {steady[0]:.2f} ms, "
          f"median {steady[150]:.2f} ms (2000 tracked, 20 untracked, 500 ignored)")
    if hasattr(guard, "_untracked"):
        from hermes_agent.storage.gitindex import modified

        root = os.path.realpath(ws)
        parsed = guard._index.entries(os.path.join(root, ".git"))
        assert parsed is not None
        tracked = guard._names(root, parsed[0])
        a = _timed(lambda: modified(root, *parsed), 300)
        b = _timed(lambda: guard._untracked(root, tracked), 300)
        print(f"  min/median: tracked stat walk {a[0]:.2f}/{a[150]:.2f} ms; "
              f"untracked walk {b[0]:.2f}/{b[150]:.2f} ms")
    shutil.rmtree(base, ignore_errors=True)


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "")
