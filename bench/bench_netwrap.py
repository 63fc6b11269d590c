"""Benchmark: what a network namespace of its own adds to the start of a program hermes wraps with
`sandbox_command` (MCP stdio servers, the browser): `/bin/true` run through the sandbox with network on
(netwrap.py: the wrapper, the namespace, the unreachable routes, slirp4netns) vs network off (no namespace
work; bwrap still unshares the network). Medians of N fresh starts per row; per-command cost of the terminal
is bench_sandbox.py's.
Run: .venv/bin/python bench/bench_netwrap.py [--runs N]"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import tempfile
import time

from hermes_agent.approval.policy import PathPolicy
from hermes_agent.terminal.sandbox.bwrap import bwrap_problem
from hermes_agent.terminal.sandbox.launcher import landlock_problem, own_network, sandbox_command
from hermes_agent.terminal.sandbox.spec import spec_from_policy


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=15)
    args = ap.parse_args()
    home = tempfile.mkdtemp(prefix="bench-netwrap-")  # a quiet HOME: the plan lists HOME's entries
    work = os.path.join(home, "work")
    os.makedirs(os.path.join(home, ".hermes"))
    os.mkdir(work)
    policy = PathPolicy.build(workspace=[work], hermes_home=os.path.join(home, ".hermes"), home=home)
    for mechanism, problem in (("bwrap", bwrap_problem()), ("landlock", landlock_problem())):
        if problem:
            print(f"{mechanism}: skipped ({problem})")
            continue
        for network in (False, True):
            spec = spec_from_policy(policy, mechanism=mechanism, network=network)
            times = []
            for _ in range(args.runs):
                argv = sandbox_command(spec, ["/bin/true"])
                start = time.perf_counter()
                code = subprocess.run(argv, check=False).returncode
                times.append((time.perf_counter() - start) * 1000)
                assert code == 0, f"{mechanism} exited {code}"
            label = "own namespace" if own_network(spec, mechanism) else "no namespace work"
            print(f"{mechanism:8} network={'on ' if network else 'off'} ({label:17}) median "
                  f"{statistics.median(times):6.1f} ms  min {min(times):6.1f} ms")
    import shutil

    shutil.rmtree(home, ignore_errors=True)


if __name__ == "__main__":
    main()
