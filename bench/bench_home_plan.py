"""Benchmark: planning the sandbox (spec_from_policy) for a default-deny HOME does not grow with HOME's size, and
what a closed HOME costs per command. A synthetic HOME outside /tmp-like scratch: a git workspace ~/proj, a few
tool directories, and `--files` files spread over plain folders (~/data/dNNN/, 100 per folder, a tenth of the
folders holding a `.git` or a `.env`) plus 60 top-level entries. Prints the median plan time in ms for a small
HOME (100 files) and the big one, how many paths each plan hides or binds back, and, with `--commands N`, the
median wall time of `true` run N times through the real local backend in the real sandbox (bwrap, or the
mechanism `auto` picks).
Run: .venv/bin/python bench/bench_home_plan.py [--files 50000] [--runs 10] [--commands 20] [--base /root]"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import tempfile
import time

from hermes_agent.approval.policy import PathPolicy
from hermes_agent.terminal.sandbox.spec import spec_from_policy


def make_home(base: str, files: int) -> str:
    home = os.path.join(base, "home")
    for rel in ("proj", ".local/bin", ".cargo/bin", ".config/git", ".ssh", ".hermes"):
        os.makedirs(os.path.join(home, rel), exist_ok=True)
    open(os.path.join(home, ".gitconfig"), "w").close()
    subprocess.run(["git", "init", "-q"], cwd=os.path.join(home, "proj"), check=True)
    for i in range(60):
        open(os.path.join(home, f"top{i:02d}.txt"), "w").close()
    for n in range(files):
        folder = os.path.join(home, "data", f"d{n // 100:04d}")
        if n % 100 == 0:
            os.makedirs(folder)
            if (n // 100) % 10 == 0:
                os.makedirs(os.path.join(folder, ".git"))
            elif (n // 100) % 10 == 5:
                open(os.path.join(folder, ".env"), "w").close()
        open(os.path.join(folder, f"f{n % 100:02d}"), "w").close()
    return home


def plan_ms(home: str, runs: int) -> tuple[float, object]:
    times, spec = [], None
    for _ in range(runs):
        t = time.perf_counter()
        policy = PathPolicy.build(workspace=[os.path.join(home, "proj")], hermes_home=os.path.join(home, ".hermes"),
                                  home=home, config={"shared_tmp": False})
        spec = spec_from_policy(policy)
        times.append((time.perf_counter() - t) * 1000)
    return statistics.median(times), spec


def listed_dirs(home: str) -> int:
    """Directories inside HOME one plan lists (os.scandir / os.listdir): the walk's size, free of the load."""
    seen: list[str] = []
    real_scandir, real_listdir = os.scandir, os.listdir

    def scandir(path=".", *a, **k):  # noqa: ANN001, ANN002, ANN003, ANN202
        seen.append(str(path))
        return real_scandir(path, *a, **k)

    def listdir(path=".", *a, **k):  # noqa: ANN001, ANN002, ANN003, ANN202
        seen.append(str(path))
        return real_listdir(path, *a, **k)
    os.scandir, os.listdir = scandir, listdir
    try:
        plan_ms(home, 1)
    finally:
        os.scandir, os.listdir = real_scandir, real_listdir
    return len([p for p in seen if p == home or p.startswith(home + "/")])


def command_ms(home: str, spec: object, n: int) -> tuple[float, float, str]:
    from hermes_agent.terminal.local import LocalBackend

    t = time.perf_counter()
    backend = LocalBackend(os.path.join(home, "proj"), sandbox=spec, source_rc=False)
    backend.execute("true")
    start = (time.perf_counter() - t) * 1000
    times = []
    for _ in range(n):
        t = time.perf_counter()
        backend.execute("true")
        times.append((time.perf_counter() - t) * 1000)
    state = str(getattr(backend, "sandbox_state", ""))
    backend.close()
    return start, statistics.median(times), state


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--files", type=int, default=50_000)
    ap.add_argument("--runs", type=int, default=10)
    ap.add_argument("--commands", type=int, default=0)
    ap.add_argument("--base", default=os.path.expanduser("~"))
    args = ap.parse_args()
    for label, files in (("small", 100), ("big", args.files)):
        base = tempfile.mkdtemp(prefix="bench-home-", dir=args.base)
        try:
            home = make_home(base, files)
            os.environ["HOME"] = home
            plan_ms(home, 1)  # warm: the outside-HOME walk (readable.py) is cached per process
            ms, spec = plan_ms(home, args.runs)
            inside = [s for s in spec.secrets if s.startswith(home + "/")]
            print(f"{label}: {files} files in HOME: plan {ms:.1f} ms (median of {args.runs}); hidden in HOME: "
                  f"{len(inside)} paths; bound back: {len(getattr(spec, 'home_readable', ()))}; "
                  f"closed HOME: {bool(getattr(spec, 'home_closed', ''))}; directories listed in HOME by one plan: "
                  f"{listed_dirs(home)}")
            if args.commands:
                start, per, state = command_ms(home, spec, args.commands)
                print(f"{label}: sandbox start + first command {start:.0f} ms; per command {per:.1f} ms "
                      f"(median of {args.commands}, {state})")
        finally:
            shutil.rmtree(base, ignore_errors=True)


if __name__ == "__main__":
    main()
