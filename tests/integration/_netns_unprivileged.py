"""Helper of test_sandbox_netns: run as an unprivileged user (setpriv) with the system python, on hermes's own
LocalBackend (stdlib-only modules): a dev server started by a command stays reachable after `git init` re-plans
the sandbox (the new launcher joins its predecessor's network namespace through a helper: no setns from a
threaded process), and the cloud metadata address has no route. argv: mechanism, workspace, port."""

import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "src"))

from hermes_agent.approval.policy import PathPolicy  # noqa: E402
from hermes_agent.terminal.local import LocalBackend  # noqa: E402
from hermes_agent.terminal.sandbox.spec import spec_from_policy  # noqa: E402

mechanism, work, port = sys.argv[1], sys.argv[2], int(sys.argv[3])
os.chdir(work)
policy = PathPolicy.build(workspace=[work], hermes_home=os.path.join(os.environ["HOME"], ".hermes"))
backend = LocalBackend(work, source_rc=False, sandbox=spec_from_policy(policy, mechanism=mechanism))
try:
    backend.execute(f"nohup python3 -m http.server {port} --bind 127.0.0.1 >/dev/null 2>&1 &")
    up = backend.execute(f"for i in $(seq 100); do curl -s -o /dev/null 127.0.0.1:{port} && echo up && break; "
                         "sleep 0.1; done")
    print("BEFORE", up.output.strip())
    print("INIT", backend.execute("git init -q . && echo inited", cwd=work).output.strip())
    after = backend.execute(f"curl -s -m 5 127.0.0.1:{port} | grep -q 'Directory listing' && echo served || echo lost")
    print("AFTER", after.output.strip())
    probe = backend.execute("python3 -c \"import socket\ntry: socket.create_connection(('169.254.169.254', 80), "
                            "timeout=10)\nexcept OSError as e: print(e.strerror)\"")
    print("METADATA", probe.output.strip())
    print("RESOLV", backend.execute("head -1 /etc/resolv.conf").output.strip())
finally:
    backend.close()
