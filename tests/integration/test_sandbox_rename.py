"""A rename or hard link across directories works inside the sandbox (pip's wheel build, `os.replace` into a
parent): every Landlock domain hermes stacks — the fence under bubblewrap, the commands' own thread domain
(red-team round 6 a15) — grants Landlock's REFER right on "/". The thread's domain is made after the launcher's
seccomp filter, which refuses openat2 (ENOSYS): hermes's no-follow open must fall back to its O_NOFOLLOW walk
then, or the "/" rule silently went missing and every cross-directory rename failed with EXDEV."""

from __future__ import annotations

import pytest

from hermes_agent.approval.policy import PathPolicy
from hermes_agent.terminal.local import LocalBackend
from hermes_agent.terminal.sandbox.spec import spec_from_policy
from tests.integration.test_sandbox_secrets import _mechanisms


@pytest.mark.parametrize("mechanism", _mechanisms())
def test_cross_directory_rename_and_link(outside_dir, mechanism):
    ws = outside_dir / "ws"
    ws.mkdir()
    policy = PathPolicy.build(workspace=[str(ws)], hermes_home=str(outside_dir / "hh"), home=str(outside_dir),
                              config={"mechanism": mechanism})
    backend = LocalBackend(str(ws), sandbox=spec_from_policy(policy, mechanism=mechanism), source_rc=False)
    if not backend.contained:
        pytest.skip(f"sandbox not available here: {backend.sandbox_state}")
    try:
        out = backend.execute("mkdir -p a/b t && echo x > a/b/f && python3 -c \"import os; os.rename('a/b/f', 'a/f'); "
                              "os.link('a/f', 't/g'); print('RENAME-OK')\" 2>&1; d=$(mktemp -d) && mkdir $d/y && "
                              "touch $d/y/f && mv $d/y/f $d/ && echo TMP-OK").output
    finally:
        backend.close()
    assert "RENAME-OK" in out and "TMP-OK" in out, out
    assert (ws / "a/f").read_text() == "x\n" and (ws / "t/g").exists()
