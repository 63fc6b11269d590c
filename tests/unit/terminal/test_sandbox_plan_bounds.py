"""rt15 d06/d03: the plan's size is bounded whatever the workspace holds, hermes makes no directory outside a
writable root on the say of a `.git` file, and a failed start with a large plan names where it lies. Real files."""

from __future__ import annotations

import os

from hermes_agent.terminal.sandbox import views


def test_many_nested_repositories_are_a_few_read_only_directories(tmp_path):
    ws = tmp_path / "ws"
    for i in range(600):
        (ws / "vendor" / f"r{i}" / ".git").mkdir(parents=True)
    (ws / "docs" / "a" / ".git").mkdir(parents=True)
    views._NESTED.clear()
    ro, pinned = views.git_paths(str(ws), str(tmp_path / "nohome"), None, [str(ws)])
    assert str(ws / "vendor") in ro and len(ro) + len(pinned) < 10, (ro, pinned)
    assert not (ws / "vendor" / "r1" / ".git" / "hooks").exists()  # nothing made in the flood


def test_a_gitdir_file_pointing_outside_makes_nothing_there(tmp_path):
    ws, outside = tmp_path / "ws", tmp_path / "outside" / "gd"
    outside.mkdir(parents=True)
    (ws / "lib").mkdir(parents=True)
    (ws / "lib" / ".git").write_text(f"gitdir: {outside}\n")
    views._NESTED.clear()
    views.git_paths(str(ws), str(tmp_path / "nohome"), None, [str(ws)])
    assert os.listdir(outside) == []


def test_a_large_plan_that_fails_names_its_directory():
    bound = [f"/w/vendor/r{i}/.git/{n}" for i in range(300) for n in ("hooks", "info", "config")]
    line = views.plan_size_note([*bound, "/w/.git/hooks"])
    assert "901 paths" in line and "900 of them in /w/vendor" in line, line
    assert views.plan_size_note(bound[:10]) == ""
