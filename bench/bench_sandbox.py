"""Benchmark: what the OS sandbox adds to a terminal round trip. Whole LocalBackend.execute calls
("true" and a small pipeline), medians of several runs: unsandboxed (the same launcher, no sandbox) vs bwrap
vs Landlock, and for reference a bare `subprocess.run([bash, -c, ...])` without any of hermes's wrapper.
Then the session start cost: the first call of a fresh backend (launcher start + first call).
With --repo the workspace is a project (a git repository, 60 directories, a nested repository,
node_modules, a .venv with pip, an .npmrc) and the run-later guard's own cost (enter + leave around one command) is printed too: the
guard runs around every confined command, so it is part of the bwrap/Landlock figures.
With --files N (and --repo) N more files in 2,000 directories; the guard's cost around a command that
wrote one file deep in the tree is printed too.
With --metadata a third command changes modes and times of 20 workspace files (60 chmod/utimensat calls,
each answered by the Landlock keeper, metaguard.py) and Landlock runs once more without the keeper's
metadata check ("landlock-nonotify"): the difference is that check's cost; commands that change no metadata
(the first two) pay nothing for it.
With --netns, bwrap also runs once with the host's network ("bwrap-hostnet": slirp4netns switched off for
its launcher), the session start of both is the median of 5 fresh backends, and the per-command cost of
reading the namespace's byte counters (LocalBackend.network_input, once per terminal call) is printed.
With --pidns Landlock runs once more without its pid namespace and /proc ("landlock-nopidns"; the session
start of both is printed too): the difference is what the session's own pid namespace costs. Then one program
started through `sandbox_launch` under Landlock (how an MCP stdio server or the browser starts), `true` run to its
exit, with and without its pid namespace, interleaved, median of 15 each.
The stray-process probe (SandboxRunner.strays: the launcher's process tree read from /proc, once per guarded
call) is timed on its own for each sandbox.
With --home the workspace is a user's HOME (issue 19: what stays read-only there is planned from the start-up
files, the environment and the toolchain directories, homecode.py): 60 folders, ~/go, ~/node_modules, a 40-line
.bashrc naming files in HOME; the plan's own cost (spec_from_policy, median of 20) is printed, and the session
start below includes planning.
Run: .venv/bin/python bench/bench_sandbox.py [--calls N] [--runs R] [--repo] [--metadata] [--netns] [--home]
[--pidns]"""

from __future__ import annotations

import argparse
import itertools
import os
import statistics
import tempfile
import time
from collections.abc import Callable

from hermes_agent.approval.policy import PathPolicy
from hermes_agent.terminal.local import LocalBackend
from hermes_agent.terminal.sandbox.bwrap import bwrap_problem
from hermes_agent.terminal.sandbox.launcher import landlock_problem
from hermes_agent.terminal.sandbox.spec import spec_from_policy

COMMANDS = ("true", "echo hi | wc -c")
METADATA = "touch f{01..20}; chmod 600 f*; chmod 644 f*"


def backend(mechanism: str | None, work: str) -> LocalBackend:
    if mechanism is None:
        return LocalBackend(work, source_rc=False)
    policy = PathPolicy.build(workspace=[work], hermes_home=os.path.expanduser("~/.hermes"))
    return LocalBackend(work, source_rc=False, sandbox=spec_from_policy(policy, mechanism=mechanism))


def make_home_ws(work: str) -> str:
    """A HOME that is the workspace (see --home); HOME is pointed at it for the rest of the run."""
    home = os.path.join(work, "home")
    lines = []
    for i in range(60):
        os.makedirs(os.path.join(home, f"folder{i:02d}", "sub"), exist_ok=True)
        open(os.path.join(home, f"folder{i:02d}", "sub", "f.txt"), "w").close()
    for i in range(20):
        open(os.path.join(home, f"folder{i:02d}", f"tool{i}"), "w").close()
        lines += [f"alias t{i}='~/folder{i:02d}/tool{i} --flag'", f"export V{i}=$HOME/folder{i + 20:02d}/sub"]
    for rel in ("go/pkg/mod/x", "node_modules/lodash", "perl5/lib/perl5", ".local/bin", ".hermes"):
        os.makedirs(os.path.join(home, rel), exist_ok=True)
    with open(os.path.join(home, ".bashrc"), "w") as f:
        f.write("\n".join(lines) + "\n")
    os.environ["HOME"] = home
    return home


def median_ms(fn: Callable[[], object], times: int) -> float:
    """Median wall time of one `fn()` over `times` calls, in milliseconds."""
    samples = []
    for _ in range(times):
        start = time.perf_counter()
        fn()
        samples.append(time.perf_counter() - start)
    return statistics.median(samples) * 1000


def plan_ms(work: str, runs: int = 20) -> float:
    return median_ms(lambda: spec_from_policy(PathPolicy.build(workspace=[work],
                                                               hermes_home=os.path.expanduser("~/.hermes"))), runs)


def run_median(b: LocalBackend, command: str, calls: int) -> float:
    return median_ms(lambda: b.execute(command), calls)


def run_bare(command: str, calls: int, work: str) -> float:
    import shutil
    import subprocess

    bash = shutil.which("bash") or "/bin/sh"
    return median_ms(lambda: subprocess.run([bash, "--norc", "-c", command], cwd=work, stdout=subprocess.DEVNULL,
                                            check=False), calls)


def make_project(work: str) -> None:
    import subprocess

    subprocess.run(["git", "init", "-q", work], check=True)
    for i in range(4):
        for j in range(5):
            for k in range(2):
                os.makedirs(os.path.join(work, f"pkg{i}", f"mod{j}", f"sub{k}"), exist_ok=True)
    os.makedirs(os.path.join(work, "node_modules", "dep", "lib"), exist_ok=True)
    subprocess.run(["git", "init", "-q", os.path.join(work, "pkg0", "vendored")], check=True)
    # a project venv (pip and setuptools: .pth files, _distutils_hack) and tool configs the guard judges
    subprocess.run(["python3", "-m", "venv", os.path.join(work, ".venv")], check=True)
    with open(os.path.join(work, ".npmrc"), "w") as f:
        f.write("save-exact=true\n")


def add_files(work: str, files: int) -> None:
    """`files` files spread over 10 files a directory, 4 levels deep (`src/pN/mN/kN`)."""
    for i in range(files):
        d = os.path.join(work, "src", f"p{i % 10}", f"m{i // 10 % 10}", f"k{i // 100 % 20}")
        os.makedirs(d, exist_ok=True)
        with open(os.path.join(d, f"f{i}.py"), "w") as f:
            f.write("x = 1\n")


def guard_write_cost(work: str, calls: int) -> float:
    """Median ms of enter() + leave() around a command that wrote one new file deep in the tree."""
    from hermes_agent.terminal.sandbox.guard import Guard

    g = Guard([work], tempfile.mkdtemp(prefix="hermes-bench-q-"))
    g.enter()
    g.leave()
    deep = os.path.join(work, "pkg0", "mod0", "sub0")
    n = itertools.count()

    def write_one() -> None:
        g.enter()
        with open(os.path.join(deep, f"w{os.getpid()}-{next(n)}.txt"), "w"):
            pass
        g.leave()

    return median_ms(write_one, calls)


def guard_cost(work: str, calls: int) -> float:
    """Median ms of one enter() + leave() of the run-later guard on `work` (nothing changed)."""
    from hermes_agent.terminal.sandbox.guard import Guard

    g = Guard([work], tempfile.mkdtemp(prefix="hermes-bench-q-"))
    g.enter()
    g.leave()
    return median_ms(lambda: (g.enter(), g.leave()), calls)


def guard_full_looks(work: str, runs: int) -> tuple[float, float]:
    """Median ms of (a first baseline of a fresh guard, a check after an entry was made in the venv's
    site-packages: a full look)."""
    import glob

    from hermes_agent.terminal.sandbox.guard import Guard

    site = (glob.glob(os.path.join(work, ".venv/lib/python3*/site-packages")) or [work])[0]
    first, full = [], []
    for i in range(runs):
        g = Guard([work], tempfile.mkdtemp(prefix="hermes-bench-q-"))
        start = time.perf_counter()
        g.enter()
        first.append(time.perf_counter() - start)
        with open(os.path.join(site, f"bench-{os.getpid()}-{i}.txt"), "w"):
            pass
        start = time.perf_counter()
        g.leave()
        full.append(time.perf_counter() - start)
    return statistics.median(first) * 1000, statistics.median(full) * 1000


def landlock_changed(work: str, change: Callable[[dict], dict]) -> LocalBackend:
    """A Landlock backend started (its first call made) with `change` applied to its launcher's configuration."""
    from hermes_agent.terminal.sandbox import launcher

    original = launcher.landlock_config
    launcher.landlock_config = lambda spec, own_net=False: change(original(spec, own_net))
    try:
        return started("landlock", work)
    finally:
        launcher.landlock_config = original


def without_metadata_check(work: str) -> LocalBackend:
    """A Landlock backend whose launcher starts without the keeper's metadata check (notify off)."""
    return landlock_changed(work, lambda cfg: {**cfg, "seccomp": {**cfg["seccomp"], "notify": False}})


def without_pidns(work: str) -> LocalBackend:
    """A Landlock backend whose launcher makes no pid namespace (as before issue 19 a40 for a normal user: the
    host's /proc, the carve-outs bound in a user namespace all the same)."""
    return landlock_changed(work, lambda cfg: {**cfg, "pidns": False})


def wrapped_starts(work: str, runs: int = 15) -> None:
    """`true` started by `sandbox_launch` under Landlock (an MCP stdio server's or the browser's start) with and
    without its own pid namespace and /proc, interleaved so that machine load hits both alike."""
    import subprocess

    from hermes_agent.terminal.sandbox import wrapped

    spec = spec_from_policy(PathPolicy.build(workspace=[work], hermes_home=os.path.expanduser("~/.hermes")),
                            mechanism="landlock")
    original = wrapped.landlock_config
    samples: dict[str, list[float]] = {"pidns": [], "no pidns": []}
    for _ in range(runs):
        for name in samples:
            wrapped.landlock_config = original if name == "pidns" else (  # type: ignore[assignment]
                lambda s, n=False: {**original(s, n), "pidns": False})
            try:
                argv, plan = wrapped.sandbox_launch(spec, ["true"])
            finally:
                wrapped.landlock_config = original  # type: ignore[assignment]
            start = time.perf_counter()
            subprocess.run(argv, env={**os.environ, **plan}, check=True, cwd=work)
            samples[name].append((time.perf_counter() - start) * 1000)
    for name, values in samples.items():
        print(f"wrapped program start to exit, Landlock ({name}), median of {runs}: {statistics.median(values):.1f} ms")


def host_net(make):  # noqa: ANN001, ANN201
    """`make()` (a backend started by its first call) with slirp4netns switched off: the host's network."""
    from hermes_agent.terminal.sandbox import netns

    original = netns.forwarder
    netns.forwarder = lambda: None  # type: ignore[assignment]
    try:
        return make()
    finally:
        netns.forwarder = original  # type: ignore[assignment]


def started(mech: str | None, work: str) -> LocalBackend:
    b = backend(mech, work)
    b.execute("true")
    return b


def netns_costs(work: str, calls: int) -> None:
    """Session start with and without bwrap's own network namespace, and the counters' read per command."""
    for name, make in (("bwrap", lambda: backend("bwrap", work)), ("bwrap-hostnet", lambda: backend("bwrap", work))):
        samples = []
        for _ in range(5):
            b = make()
            start = time.perf_counter()
            if name == "bwrap-hostnet":
                host_net(lambda b=b: b.execute("true"))
            else:
                b.execute("true")
            samples.append((time.perf_counter() - start) * 1000)
            b.close()
        print(f"session start, median of 5 ({name}): {statistics.median(samples):.1f} ms")
    b = started("bwrap", work)
    print(f"network_input() per command (bwrap, own namespace): {median_ms(b.network_input, calls) * 1e3:.0f} us")
    b.close()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--calls", type=int, default=40)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--repo", action="store_true", help="the workspace is a git project (see module doc)")
    parser.add_argument("--files", type=int, default=0, help="with --repo: this many more files (src/...)")
    parser.add_argument("--metadata", action="store_true", help="also a command changing modes and times")
    parser.add_argument("--netns", action="store_true", help="also bwrap on the host's network (see module doc)")
    parser.add_argument("--home", action="store_true", help="the workspace is HOME (see module doc)")
    parser.add_argument("--pidns", action="store_true", help="also Landlock without its pid namespace (module doc)")
    args = parser.parse_args()
    work = tempfile.mkdtemp(prefix="hermes-bench-sbx-")
    if args.home:
        work = make_home_ws(work)
        print(f"plan for a workspace that is HOME (spec_from_policy): {plan_ms(work):.2f} ms")
    if args.repo:
        make_project(work)
        add_files(work, args.files)
        print(f"run-later guard, enter + leave per command: {guard_cost(work, args.calls * args.runs):.3f} ms")
        print(f"run-later guard, the same around a command writing a file 3 levels deep: "
              f"{guard_write_cost(work, args.calls * args.runs):.3f} ms")
        first, full = guard_full_looks(work, 15)
        print(f"run-later guard, first baseline: {first:.2f} ms; check after a change in site-packages: {full:.2f} ms")
    kinds: list[tuple[str, str | None]] = [("unsandboxed", None)]
    kinds += [(m, m) for m, p in (("bwrap", bwrap_problem()), ("landlock", landlock_problem())) if p is None]
    backends = {name: backend(mech, work) for name, mech in kinds}
    if args.repo:  # the same sandbox without the run-later guard: the difference is the guard's cost
        for name, mech in kinds[1:]:
            backends[f"{name}-noguard"] = b = backend(mech, work)
            b.guard = lambda: None  # type: ignore[method-assign]
    for b in backends.values():
        b.execute("true")  # launcher start and first-call state are not what this measures
    for name in ("bwrap", "landlock"):  # the guard asks it after every confined call (guard.py `watch`)
        if name in backends and backends[name]._runner is not None:
            probe_ms = median_ms(backends[name]._runner.strays, args.calls * args.runs)
            print(f"stray-process probe per command ({name}): {probe_ms * 1e3:.0f} us")
    if args.netns and "bwrap" in backends:
        backends["bwrap-hostnet"] = host_net(lambda: started("bwrap", work))
    if args.metadata and landlock_problem() is None:
        backends["landlock-nonotify"] = without_metadata_check(work)
    if args.pidns and landlock_problem() is None:
        backends["landlock-nopidns"] = without_pidns(work)
        for name, make in (("landlock", lambda: started("landlock", work)), ("landlock-nopidns",
                                                                              lambda: without_pidns(work))):
            took = median_ms(lambda make=make: make().close(), 5)
            print(f"session start + first call + close, median of 5 ({name}): {took:.1f} ms")
        wrapped_starts(work)
    for command in (*COMMANDS, METADATA) if args.metadata else COMMANDS:
        results: dict[str, list[float]] = {name: [] for name in backends}
        results["bare bash -c"] = []
        for _ in range(args.runs):  # interleaved so that machine load hits every kind alike
            for name, b in backends.items():
                results[name].append(run_median(b, command, args.calls))
            results["bare bash -c"].append(run_bare(command, args.calls, work))
        base = statistics.median(results["unsandboxed"])
        print(f"{command!r}: median of {args.runs} runs x {args.calls} calls")
        for name, meds in results.items():
            med = statistics.median(meds)
            extra = "" if name == "unsandboxed" else f"  ({med - base:+.2f} ms)"
            print(f"  {name:16s} {med:7.2f} ms{extra}")
    for name, mech in kinds:
        start = time.perf_counter()
        b = backend(mech, work)  # a fresh one: its plan and launcher start are what this measures
        b.execute("true")
        print(f"session start: plan, launcher start and first call ({name}): {(time.perf_counter() - start) * 1000:.1f} ms")
        b.close()
    if args.netns and bwrap_problem() is None:
        netns_costs(work, args.calls * args.runs)
    for b in backends.values():
        b.close()


if __name__ == "__main__":
    main()
