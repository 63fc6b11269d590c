"""The session's path policy is built off the start-up path (issue 24) but never used unbuilt (issue 19):
PendingPolicy.get() returns the one policy, waiting for a build under way, and a failed background build
raises where the policy is needed."""

from __future__ import annotations

import threading

import pytest

from hermes_agent.approval.policy import PathPolicy, PendingPolicy


def _policy(tmp_path) -> PathPolicy:
    return PathPolicy.build(workspace=[str(tmp_path / "ws")], hermes_home=str(tmp_path / "hh"), home=str(tmp_path))


def test_get_waits_for_the_background_build_and_the_policy_is_built_once(tmp_path):
    release, built = threading.Event(), []

    def build() -> PathPolicy:
        release.wait(10)
        built.append(_policy(tmp_path))
        return built[-1]

    pending = PendingPolicy(build)
    pending.start(messages=[], tools=(), model="m")  # as the pre_llm_call hook calls it
    got: list[PathPolicy] = []
    reader = threading.Thread(target=lambda: got.append(pending.get()))
    reader.start()
    reader.join(0.2)
    assert reader.is_alive() and got == []  # a check that needs the policy waits for it
    release.set()
    reader.join(10)
    assert got == built and len(built) == 1 and pending.get() is built[0]
    pending.start()  # once only
    assert len(built) == 1


def test_a_failed_background_build_raises_where_the_policy_is_needed(tmp_path):
    calls = []

    def build() -> PathPolicy:
        calls.append(1)
        raise OSError("home unreadable")

    pending = PendingPolicy(build)
    pending.start()
    for _ in range(100):
        if calls:
            break
        threading.Event().wait(0.01)
    with pytest.raises(OSError, match="home unreadable"):
        pending.get()
    assert len(calls) == 2  # built again by the caller, not answered with nothing


def test_the_tool_context_reads_its_policy_through_the_pending_build(tmp_path, hermes_home):
    from hermes_agent.config.loader import load_settings
    from hermes_agent.tools.context import ToolContext

    ctx = ToolContext(settings=load_settings(ignore_user_config=True))
    assert ctx.path_policy is None
    built = []
    ctx.pending_policy = PendingPolicy(lambda: built.append(_policy(tmp_path)) or built[-1])
    assert built == []  # nothing built until asked
    assert ctx.path_policy is built[0] and ctx.path_policy is built[0] and len(built) == 1
    ctx.path_policy = _policy(tmp_path)  # set outright (tests, a caller's own policy)
    assert ctx.path_policy is not built[0] and ctx.path_policy.workspace == built[0].workspace
