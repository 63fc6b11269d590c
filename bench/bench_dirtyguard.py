"""Per-command cost of the dirty guard (storage/dirtyguard.py) on a repository of 2000 tracked files, 20 untracked
and 500 ignored ones, with one uncommitted edit: the first call (a snapshot) and the steady state (nothing new to
keep), then its two walks timed interleaved in one process (robust to a loaded machine).
Run: PYTHONPATH=src python bench/bench_dirtyguard.py LABEL"""
import shutil
import os, subprocess, sys, tempfile, time
from hermes_agent.storage.checkpoints import CheckpointStore
from hermes_agent.storage.dirtyguard import DirtyGuard
base = tempfile.mkdtemp(prefix="bench-dirtyguard-")
ws = os.path.join(base, "proj")
for i in range(2000):
    d = os.path.join(ws, f"pkg{i % 40}", f"sub{i % 7}")
    os.makedirs(d, exist_ok=True)
    open(os.path.join(d, f"m{i}.py"), "w").write(f"x = {i}\n")
open(os.path.join(ws, ".gitignore"), "w").write("build/\n*.log\n")
g = lambda *a: subprocess.run(["git", "-c", "user.email=a@b", "-c", "user.name=a", *a], cwd=ws, check=True, capture_output=True)
g("init", "-q"); g("add", "-A"); g("commit", "-qm", "i")
os.makedirs(os.path.join(ws, "build"))
for i in range(500):
    open(os.path.join(ws, "build", f"o{i}.o"), "w").write("o")
for i in range(20):
    open(os.path.join(ws, f"note{i}.md"), "w").write("n")
open(os.path.join(ws, "pkg1", "sub1", "m1.py"), "a").write("# edit\n")  # one uncommitted tracked edit
guard = DirtyGuard(CheckpointStore(os.path.join(base, "cp")), stop="/")
t = time.perf_counter(); first = guard.before(ws, "first"); t1 = time.perf_counter() - t
best = []
for _ in range(30):
    t = time.perf_counter()
    for _ in range(20):
        assert guard.before(ws, "steady") is None
    best.append((time.perf_counter() - t) / 20 * 1000)
best.sort(); per = best[0]; med = best[len(best)//2]
print(f"{sys.argv[1]}: first call (snapshot) {t1*1000:.0f} ms; steady per command min {per:.2f} ms, median {med:.2f} ms (2000 tracked, 20 untracked, 500 ignored)")
if hasattr(guard, "_untracked"):
    from hermes_agent.storage.gitindex import modified
    import os.path as op
    root = op.realpath(ws); gd = op.join(root, ".git")
    parsed = guard._index.entries(gd); tracked = guard._names(root, parsed[0])
    a, b = [], []
    for _ in range(300):
        t = time.perf_counter(); modified(root, *parsed); a.append(time.perf_counter() - t)
        t = time.perf_counter(); guard._untracked(root, tracked); b.append(time.perf_counter() - t)
    a.sort(); b.sort()
    print(f"  in-process, interleaved, min/median: tracked stat walk {a[0]*1000:.2f}/{a[150]*1000:.2f} ms; untracked walk (new) {b[0]*1000:.2f}/{b[150]*1000:.2f} ms")
shutil.rmtree(base, ignore_errors=True)
