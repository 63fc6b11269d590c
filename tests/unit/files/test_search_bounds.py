"""search_files never hangs a turn: /proc, /sys and /dev are refused as roots with a clear error (their
files are endless or block), and every search has a deadline after which it returns what it found."""

from __future__ import annotations

import json
import os
import threading
import time

import pytest

from hermes_agent.tools.builtin import _search, _searchrun
from hermes_agent.tools.registry import registry


def search(ctx, **args) -> dict:
    return json.loads(registry.dispatch("search_files", args, ctx=ctx))


@pytest.mark.parametrize("root", ["/proc", "/proc/self", "/sys/kernel", "/dev", "/dev/fd"])
@pytest.mark.parametrize("target", ["content", "files"])
def test_kernel_roots_are_refused_at_once(ctx, root, target):
    t0 = time.monotonic()
    out = search(ctx, pattern="x", path=root, target=target)
    assert time.monotonic() - t0 < 5
    assert "does not search" in out["error"] and "/proc, /sys and /dev" in out["error"]


def test_a_symlink_into_proc_is_refused_too(ctx, work):
    os.symlink("/proc/self", work / "me")
    assert "does not search" in search(ctx, pattern="x", path=str(work / "me"))["error"]


def test_a_search_past_its_deadline_returns_partial_results(ctx, work, monkeypatch):
    for i in range(50):
        (work / f"f{i}.txt").write_text("needle\n")
    monkeypatch.setattr(_searchrun, "SEARCH_DEADLINE", 0.0)
    out = search(ctx, pattern="needle", path=str(work))
    assert "deadline" in out["note"] and "error" not in out


def test_a_silent_search_process_is_killed_at_the_deadline():
    deadline = _search.Deadline(0.5)
    t0 = time.monotonic()
    lines = list(_search.stream_process(["sleep", "30"], "/", deadline.event))
    assert lines == [] and deadline.expired and time.monotonic() - t0 < 5
    deadline.close()


def test_the_turn_interrupt_still_stops_a_search():
    outer = threading.Event()
    deadline = _search.Deadline(60, outer)
    outer.set()
    assert deadline.event.wait(2) and not deadline.expired
