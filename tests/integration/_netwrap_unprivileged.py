"""Helper of test_mcp_netns: run as an unprivileged user (setpriv) with the system python: a program wrapped by
hermes's `sandbox_launch` (as an MCP stdio server or the browser is) probes the host's loopback port and the
cloud metadata address, without and with the port granted. argv: mechanism, home, port."""

import os
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "src"))

from hermes_agent.approval.policy import PathPolicy  # noqa: E402
from hermes_agent.terminal.sandbox.spec import spec_from_policy  # noqa: E402
from hermes_agent.terminal.sandbox.wrapped import sandbox_launch  # noqa: E402

PROBE = ("import socket, sys\nfor a, p in (('127.0.0.1', int(sys.argv[1])), ('169.254.169.254', 80)):\n"
         "    try:\n        s = socket.create_connection((a, p), timeout=5); s.sendall(b'GET / HTTP/1.0\\r\\n\\r\\n')\n"
         "        print(a, s.recv(100).decode(errors='replace').split()[1])\n"
         "    except OSError as e:\n        print(a, e.strerror)\n")

mechanism, home, port = sys.argv[1], sys.argv[2], sys.argv[3]
policy = PathPolicy.build(workspace=[os.path.join(home, "work")], hermes_home=os.path.join(home, ".hermes"),
                          home=home)
for grant in ((), (int(port),)):
    spec = spec_from_policy(policy, mechanism=mechanism, loopback_ports=grant)
    argv, plan = sandbox_launch(spec, [sys.executable, "-c", PROBE, port])
    res = subprocess.run(argv, capture_output=True, env={**os.environ, **plan}, text=True, timeout=120, check=False)
    tag = "GRANTED" if grant else "SHUT"
    for line in res.stdout.splitlines():
        print(tag, line)
    if res.returncode:
        print(tag, "EXIT", res.returncode, res.stderr[-300:].replace("\n", " "))
