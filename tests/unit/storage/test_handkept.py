"""storage/handkept.py and storage/treewatch.py (issue 19, rt14b c20): which ignored files are hand-written, the
per-session budgets said once in one line, and the watch that lets a steady tree skip the dirty guard's look."""

from __future__ import annotations

import subprocess
from pathlib import Path

from hermes_agent.storage import handkept
from hermes_agent.storage.handkept import HandKept
from hermes_agent.storage.treewatch import TreeWatch


def _tree(root: Path) -> None:
    for rel, size in (("notes/plan.md", 10), ("notes/deep/idea.md", 10), (".env", 5), ("big.db", (1 << 20) + 1),
                      ("build/out.o", 5), ("x.pyc", 5), ("node_modules/a/i.js", 5)):
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_bytes(b"x" * size)


def test_hand_written_ignored_files_are_found_and_generated_ones_are_not(tmp_path):
    _tree(tmp_path)
    for i in range(handkept.DIR_MAX + 1):
        (tmp_path / "logs").mkdir(exist_ok=True)
        (tmp_path / "logs" / f"{i}.log").write_text("l")
    ignored = {"notes/", ".env", "big.db", "build/", "x.pyc", "node_modules/", "logs/"}
    names = [f[0] for f in HandKept().files(str(tmp_path), ignored)]
    assert names == [".env", "notes/deep/idea.md", "notes/plan.md"]


def test_a_spent_budget_stops_the_copying_with_one_line(tmp_path, monkeypatch):
    _tree(tmp_path)
    monkeypatch.setattr(handkept, "FILES", 2)
    said: list[str] = []
    hand = HandKept(said.append)
    assert len(hand.files(str(tmp_path), {"notes/", ".env"})) == 2  # 3 hand-written files, 2 copied
    assert len(said) == 1
    assert len(hand.files(str(tmp_path), {"notes/", ".env"})) == 2  # the same two are kept up to date
    (tmp_path / "notes" / "more.md").write_text("m")
    hand.files(str(tmp_path), {"notes/", ".env"})
    assert len(said) == 1 and "budget of 2 files" in said[0] and str(tmp_path) in said[0], said


def test_the_watch_is_quiet_only_while_nothing_changes(tmp_path):
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "f.txt").write_text("work\n")
    watch = TreeWatch()
    watch.begin()
    for d in (tmp_path, tmp_path / "sub"):
        watch.add(str(d))
    watch.end(True)
    assert watch.quiet() and watch.quiet()
    subprocess.run(["truncate", "-s0", str(tmp_path / "sub" / "f.txt")], check=True)  # another process empties it
    assert not watch.quiet()
    watch.begin()
    watch.add(str(tmp_path))
    watch.end(False)  # a look cut short: never quiet
    assert not watch.quiet()
    watch.close()
