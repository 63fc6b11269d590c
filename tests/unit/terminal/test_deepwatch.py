"""deepwatch.DeepWatch on real directories: a `.git` made at any depth is reported, in a new chain, in an old
deep directory and in a tree moved after it was watched; a symlink is never walked; past NEW_BUDGET new
directories it looks in full (still finds the repository), past the watch budget the tree is `big` and the
full look names what it could not reach (never "clean")."""

from __future__ import annotations

import os
import subprocess

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


def test_a_guard_on_a_tree_too_big_to_watch_puts_back_at_session_end(tmp_path, monkeypatch):
    """Past the watch budget, a repository made in an unwatched directory is found by the full look when the
    session ends (Guard.settle), and gets the fresh-repository rule: its hook goes to the quarantine."""
    from hermes_agent.terminal.sandbox.guard import Guard

    ws = tmp_path / "ws"
    for i in range(30):
        (ws / f"d{i:02}/x/y").mkdir(parents=True)
    monkeypatch.setattr(deepwatch, "WATCH_BUDGET", 8)
    guard = Guard([str(ws)], str(tmp_path / "quarantine"))
    guard.enter()
    assert guard._deep.big
    watched = set(guard._deep.wds.values())
    deep = next(p for p in sorted(ws.rglob("y")) if str(p) not in watched)
    repo = deep / "a/b/c/d/e"
    repo.mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    (repo / ".git/hooks/pre-commit").write_text("#!/bin/sh\ntouch /tmp/pwned\n")
    guard.leave()
    assert (repo / ".git/hooks/pre-commit").exists()  # beyond the watch: not seen per command...
    notes = guard.settle()
    assert not (repo / ".git/hooks/pre-commit").exists(), notes  # ...but at the session's end
    assert any("pre-commit" in n for n in notes), notes
    assert list((tmp_path / "quarantine").rglob("pre-commit"))
