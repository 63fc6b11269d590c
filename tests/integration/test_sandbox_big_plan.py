"""A Landlock plan bigger than one argument may be (the kernel refuses an argument over 128 KiB): a HOME
with thousands of private entries made `sandbox_launch` (confined MCP servers, the browser, the path guard's
helpers) fail with "Argument list too long". The plan now travels compressed; the program runs confined."""

from __future__ import annotations

import dataclasses
import os
import subprocess

import pytest

from hermes_agent.approval.policy import PathPolicy
from hermes_agent.terminal.sandbox.landlock import abi_version
from hermes_agent.terminal.sandbox.spec import spec_from_policy
from hermes_agent.terminal.sandbox.wrapped import sandbox_launch


@pytest.mark.skipif(abi_version() < 1, reason="no Landlock")
def test_a_plan_over_128k_still_starts_the_program_confined(outside_dir):
    home = outside_dir / "home"
    pub = home / "pub"  # a granted folder (HOME itself is closed: its plan is small whatever it holds)
    (home / "ws").mkdir(parents=True)
    pub.mkdir()
    (pub / ".private-entry-with-a-long-name-00007").write_text("SECRET-BIG\n")
    for i in range(3000):  # Landlock reads around a hidden entry: one rule per visible sibling
        (pub / f"visible-entry-with-a-long-name-{i:05d}").write_text("x\n")
    (pub / "public.txt").write_text("PUBLIC-OK\n")
    policy = PathPolicy.build(workspace=[str(home / "ws")], hermes_home=str(home / ".hermes"), home=str(home),
                              config={"readable_paths": [str(pub)], "deny_read": [str(pub / ".private-*")]})
    spec = dataclasses.replace(spec_from_policy(policy, mechanism="landlock"), mechanism="landlock")
    argv, plan = sandbox_launch(spec, ["sh", "-c", f"cat {pub}/public.txt {pub}/.private-entry-with-a-long-name-00007 "
                                                  f"2>&1; touch {home}/planted 2>&1; echo end"])
    assert all(v.startswith("z:") and len(v) < 131072 for v in plan.values())  # the big plan, packed
    assert not any("visible-entry" in a or a.startswith("z:") for a in argv)  # ... and on no command line
    out = subprocess.run(argv, capture_output=True, text=True, timeout=60, cwd=str(home / "ws"),
                         env={**os.environ, **plan})
    assert "PUBLIC-OK" in out.stdout and "end" in out.stdout, out.stderr
    assert "SECRET-BIG" not in out.stdout and not (home / "planted").exists()
