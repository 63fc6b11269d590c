"""start of one sandbox_command program (/bin/true): own network namespace (netwrap) vs none."""
import os, statistics, subprocess, time, sys
from hermes_agent.approval.policy import PathPolicy
from hermes_agent.terminal.sandbox.spec import spec_from_policy
from hermes_agent.terminal.sandbox.launcher import sandbox_command
policy = PathPolicy.build(workspace=["/tmp"], hermes_home=os.path.expanduser("~/.hermes"))
for mech in ("bwrap", "landlock"):
    for net in (False, True):
        spec = spec_from_policy(policy, mechanism=mech, network=net)
        ts = []
        for _ in range(int(sys.argv[1]) if len(sys.argv) > 1 else 15):
            argv = sandbox_command(spec, ["/bin/true"])
            t = time.perf_counter(); r = subprocess.run(argv); ts.append((time.perf_counter() - t) * 1000)
            assert r.returncode == 0
        print(f"{mech:8} own-netns={net!s:5} median {statistics.median(ts):6.1f} ms  min {min(ts):6.1f} ms")
