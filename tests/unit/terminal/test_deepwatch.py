"""deepwatch.DeepWatch on real directories: a `.git` made at any depth is reported, in a new chain, in an old
deep directory and in a tree moved after it was watched; a symlink is never walked; past NEW_BUDGET new
directories it looks in full (still finds the repository), past the watch budget the tree is `big` and the
full look names what it could not reach (never "clean")."""

from __future__ import annotations

import os

import pytest

from hermes_agent.terminal.sandbox import deepwatch
from hermes_agent.terminal.sandbox.deepwatch import DeepWatch


@pytest.fixture
def ws(tmp_path):
    (tmp_path / "old/1/2/3/4/5/6/7").mkdir(parents=True)
    (tmp_path / "tomove/a/b/c/d").mkdir(parents=True)
    return tmp_path


def test_new_repositories_at_any_depth_are_reported(ws):
    watch = DeepWatch([str(ws)])
    assert watch.start() == set()
    (ws / "n/b/c/d/e/f/g/.git").mkdir(parents=True)
    (ws / "old/1/2/3/4/5/6/7/.git").mkdir()
    os.rename(ws / "tomove", ws / "moved")
    (ws / "moved/a/b/c/d/.git").mkdir()
    (ws / "old/1/2/plain").mkdir()
    assert watch.drain() == {str(ws / "n/b/c/d/e/f/g"), str(ws / "old/1/2/3/4/5/6/7"), str(ws / "moved/a/b/c/d")}
    assert watch.drain() == set()  # each name once
    watch.close()


def test_a_symlink_is_not_walked(ws, tmp_path_factory):
    outside = tmp_path_factory.mktemp("outside")
    (outside / "r/.git").mkdir(parents=True)
    watch = DeepWatch([str(ws)])
    watch.start()
    os.symlink(outside, ws / "link")
    assert watch.drain() == set()
    watch.close()


def test_past_the_budgets_it_looks_in_full_and_names_what_it_missed(ws, monkeypatch):
    watch = DeepWatch([str(ws)])
    watch.start()
    monkeypatch.setattr(deepwatch, "NEW_BUDGET", 5)
    for i in range(20):
        (ws / f"filler{i}/x").mkdir(parents=True)
    (ws / "z/1/2/3/4/5/.git").mkdir(parents=True)
    assert str(ws / "z/1/2/3/4/5") in watch.drain()  # over NEW_BUDGET: a full look, which found it
    assert not watch.big and not watch.unchecked
    monkeypatch.setattr(deepwatch, "WATCH_BUDGET", 10)
    small = DeepWatch([str(ws)])
    small.start()
    assert small.big and not small.unchecked  # the baseline's overflow waits for the session end's look
    assert str(ws / "z/1/2/3/4/5") in small.full()
    small.full(budget=3)
    assert small.unchecked  # what no look reached is named
    assert "not checked" in small.report() and not small.unchecked
    watch.close()
    small.close()
