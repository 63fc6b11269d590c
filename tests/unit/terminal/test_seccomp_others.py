"""seccomp's `others` rule (terminal/sandbox/seccomp.py), installed for real in a child process: where no pid
namespace holds the session, kill(-1, sig) — every process the caller may signal: below Landlock ABI 6 hermes
and every program of the user — is refused, while signals to one process (its own children, itself) and
priority changes of the caller itself still work. Signal 0 only: nothing is ever sent."""

from __future__ import annotations

import os
import platform

import pytest

from hermes_agent.terminal.sandbox import seccomp

pytestmark = pytest.mark.skipif(seccomp.program() is None, reason=f"no seccomp program for {platform.machine()}")


def _in_child(policy: seccomp.Policy) -> str:
    """What kill(-1, 0), kill(child, 0), kill(self, 0) and setpriority(self) do under `policy`, as text."""
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(r)
        out = []
        try:
            seccomp.install(policy)
            sleeper = os.fork()
            if sleeper == 0:
                os.pause()
                os._exit(0)
            for name, act in (("all", lambda: os.kill(-1, 0)), ("child", lambda: os.kill(sleeper, 0)),
                              ("self", lambda: os.kill(os.getpid(), 0)),
                              ("nice", lambda: os.setpriority(os.PRIO_PROCESS, 0, os.getpriority(os.PRIO_PROCESS, 0)))):
                try:
                    act()
                    out.append(f"{name}=ok")
                except OSError as exc:
                    out.append(f"{name}={exc.errno}")
            os.kill(sleeper, 9)
            os.waitpid(sleeper, 0)
        finally:
            os.write(w, " ".join(out).encode())
            os._exit(0)
    os.close(w)
    with os.fdopen(r) as fh:
        text = fh.read()
    os.waitpid(pid, 0)
    return text


def test_others_refuses_kill_of_every_process_but_not_one():
    import errno

    assert _in_child(seccomp.Policy(others=True)) == f"all={errno.EPERM} child=ok self=ok nice=ok"


def test_without_others_kill_minus_one_is_the_kernels_to_decide():
    assert _in_child(seccomp.Policy()).startswith("all=ok ")  # signal 0: permission checked, nothing sent
