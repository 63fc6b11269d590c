"""Per-command cost of the dirty guard (storage/dirtyguard.py) where issue 19's rt14b c20 found no copy: (a) a
folder that is no git repository, 10,000 files in 100 directories (plus a build/ of 2,000 files, not kept);
(b) a repository of 3,000 tracked files with many ignored ones: node_modules/ 20,000, build/ 3,000, .venv/ 2,000,
logs/ 1,000 (an ignored directory of many files: output), notes/ 20 hand-written (kept). The first call (the
snapshot) and the steady state (nothing new to keep: what every later command costs), median of 200.
Run: PYTHONPATH=src python bench/bench_dirtyguard_anywhere.py LABEL"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import time

from hermes_agent.storage.checkpoints import CheckpointStore
from hermes_agent.storage.dirtyguard import DirtyGuard


def _files(top: str, count: int, per_dir: int = 100, ext: str = "md") -> None:
    for i in range(count):
        d = os.path.join(top, f"d{i // per_dir}")
        os.makedirs(d, exist_ok=True)
        with open(os.path.join(d, f"f{i}.{ext}"), "w") as fh:
            fh.write(f"text {i}\n")


def _plain(ws: str) -> None:
    _files(ws, 10_000)
    _files(os.path.join(ws, "build"), 2_000, ext="o")


def _repo(ws: str) -> None:
    _files(os.path.join(ws, "src"), 3_000, ext="py")
    with open(os.path.join(ws, ".gitignore"), "w") as fh:
        fh.write("node_modules/\nbuild/\n.venv/\nlogs/\nnotes/\n")
    for args in (["init", "-q"], ["add", "-A"], ["commit", "-qm", "i"]):
        subprocess.run(["git", "-c", "user.email=a@b", "-c", "user.name=a", *args], cwd=ws, check=True,
                       capture_output=True)
    for sub, count in (("node_modules", 20_000), ("build", 3_000), (".venv", 2_000), ("logs", 1_000), ("notes", 20)):
        _files(os.path.join(ws, sub), count, ext="txt")


def _timed(fn, runs: int) -> list[float]:  # noqa: ANN001
    out = []
    for _ in range(runs):
        t = time.perf_counter()
        fn()
        out.append((time.perf_counter() - t) * 1000)
    return sorted(out)


def main(label: str) -> None:
    base = tempfile.mkdtemp(prefix="bench-dg-anywhere-", dir="/var/tmp")
    try:
        for name, make in (("non-git folder, 10k files", _plain), ("repo, 3k tracked + 26k ignored", _repo)):
            ws = os.path.join(base, name.split(",")[0].replace(" ", "-"))
            os.makedirs(ws)
            make(ws)
            guard = DirtyGuard(CheckpointStore(os.path.join(base, "cp")), stop="/nonexistent")
            first = _timed(lambda: guard.before(ws, "first"), 1)[0]  # noqa: B023
            steady = _timed(lambda: guard.before(ws, "steady"), 200)  # noqa: B023
            edit = os.path.join(ws, "d7" if "folder" in name else "src/d7", "f750.md" if "folder" in name else "f750.py")
            n = iter(range(1000))
            changed = _timed(lambda: (open(edit, "a").write(f"{next(n)}\n"), guard.before(ws, "edit")), 20)  # noqa: B023
            quiet = _timed(lambda: (os.stat(edit), guard.before(ws, "unchanged")), 20)  # noqa: B023
            print(f"{label} {name}: first call (snapshot) {first:.0f} ms; steady per command min {steady[0]:.2f} ms, "
                  f"median {steady[100]:.2f} ms; after a one-file edit (a new snapshot) median {changed[10]:.0f} ms; "
                  f"the command after it {quiet[10]:.2f} ms")
    finally:
        shutil.rmtree(base, ignore_errors=True)


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "")
