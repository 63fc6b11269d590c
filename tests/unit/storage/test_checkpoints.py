"""Checkpoints: a real shadow git repository under HERMES_HOME; the user's own .git is never touched."""

from __future__ import annotations

import argparse
import hashlib
import os
import subprocess
from pathlib import Path

import pytest

from hermes_agent.cli.commands import checkpoints as cli
from hermes_agent.config.settings import Settings
from hermes_agent.storage.checkpoints import CheckpointError, CheckpointStore, rollback


def _git(cwd: Path, *args: str) -> str:
    env = {**os.environ, "GIT_AUTHOR_NAME": "u", "GIT_AUTHOR_EMAIL": "u@x", "GIT_COMMITTER_NAME": "u",
           "GIT_COMMITTER_EMAIL": "u@x"}
    return subprocess.run(["git", *args], cwd=cwd, env=env, check=True, capture_output=True, text=True).stdout


def _tree_digest(root: Path) -> dict[str, str]:
    return {str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(root.rglob("*")) if p.is_file()}


@pytest.fixture
def project(tmp_path):
    wd = tmp_path / "project"
    wd.mkdir()
    (wd / "main.py").write_text("print('v1')\n")
    (wd / "lib").mkdir()
    (wd / "lib/util.py").write_text("X = 1\n")
    (wd / ".gitignore").write_text("*.log\n")
    (wd / "run.log").write_text("log v1\n")
    (wd / "node_modules").mkdir()
    (wd / "node_modules/dep.js").write_text("dep\n")
    _git(wd, "init", "-q")
    _git(wd, "add", "-A")
    _git(wd, "commit", "-qm", "user commit")
    return wd


def test_snapshot_restore_round_trip_and_user_git_untouched(project, hermes_home):
    store = CheckpointStore()
    user_git_before = _tree_digest(project / ".git")
    status_before = _git(project, "status", "--porcelain")
    cid = store.snapshot(project, "before edits")
    assert cid and store.repo_dir(project).parent == hermes_home / "checkpoints"
    (project / "main.py").write_text("print('v2')\n")
    (project / "lib/util.py").unlink()
    (project / "lib/new.py").write_text("NEW = 1\n")
    (project / "extra").mkdir()
    (project / "extra/added.txt").write_text("added\n")
    (project / "run.log").write_text("log v2\n")
    result = store.restore(project, cid[:8])
    assert result.restored == cid and result.safety_id
    assert sorted(result.removed) == ["extra/added.txt", "lib/new.py"]
    assert (project / "main.py").read_text() == "print('v1')\n"
    assert (project / "lib/util.py").read_text() == "X = 1\n"
    assert not (project / "lib/new.py").exists() and not (project / "extra").exists()
    assert (project / "run.log").read_text() == "log v2\n"  # ignored files are never captured or reverted
    assert _tree_digest(project / ".git") == user_git_before
    assert _git(project, "status", "--porcelain") == status_before
    assert _git(project, "log", "--format=%s") == "user commit\n"
    store.restore(project, result.safety_id)  # the restore itself can be undone
    assert (project / "main.py").read_text() == "print('v2')\n" and (project / "extra/added.txt").exists()


def test_ignored_vendor_and_large_files_are_not_captured(project, hermes_home):
    store = CheckpointStore(max_file_bytes=1000)
    (project / ".venv").mkdir()
    (project / ".venv/pyvenv.cfg").write_text("x\n")
    (project / "big.bin").write_bytes(b"b" * 5000)
    cid = store.snapshot(project, "s")
    names = subprocess.run(["git", f"--git-dir={store.repo_dir(project)}", "ls-tree", "-r", "--name-only", cid],
                           capture_output=True, text=True, check=True).stdout.split()
    assert sorted(names) == [".gitignore", "lib/util.py", "main.py"]
    (project / "main.py").write_bytes(b"m" * 5000)  # a captured file that grows past the limit drops out
    (project / "lib/util.py").write_text("X = 2\n")
    cid = store.snapshot(project, "grown")
    names = subprocess.run(["git", f"--git-dir={store.repo_dir(project)}", "ls-tree", "-r", "--name-only", cid],
                           capture_output=True, text=True, check=True).stdout.split()
    assert sorted(names) == [".gitignore", "lib/util.py"]


def test_dedupe_by_content_and_by_turn(project, hermes_home):
    store = CheckpointStore()
    first = store.snapshot(project, "a", turn=1)
    assert first and store.snapshot(project, "unchanged") is None
    (project / "main.py").write_text("changed\n")
    assert store.snapshot(project, "same turn", turn=1) is None
    assert store.snapshot(project, "next turn", turn=2)
    assert [c.reason for c in store.list(project)] == ["next turn", "a"]


def test_prune_keeps_the_newest_as_one_chain(project, hermes_home):
    store = CheckpointStore(max_snapshots=3)
    ids = []
    for i in range(5):  # a file that only grows: every older version is held by the next one
        (project / "main.py").write_text("".join(f"v{j}\n" for j in range(i + 1)))
        ids.append(store.snapshot(project, f"s{i}"))
    kept = store.list(project)
    assert [c.reason for c in kept] == ["s4", "s3", "s2"] and kept[0].id == ids[4]
    # one chain, as Hermes lists it: `git log refs/hermes/<hash>` walks exactly the kept ones
    log = subprocess.run(["git", f"--git-dir={hermes_home}/checkpoints/store", "log", "--format=%s",
                          store.ref(project)], capture_output=True, text=True, check=True).stdout.split()
    assert log == ["s4", "s3", "s2"]
    store.restore(project, kept[2].id)
    assert (project / "main.py").read_text() == "v0\nv1\nv2\n"
    with pytest.raises(CheckpointError, match="no checkpoint"):
        store.restore(project, ids[0])


def test_prune_keeps_an_older_checkpoint_holding_a_version_no_later_one_holds(project, hermes_home, monkeypatch):
    from hermes_agent.storage import cpprune

    store = CheckpointStore(max_snapshots=3)
    (project / "notes.md").write_text("the only copy of an edit\n")
    store.snapshot(project, "holds the edit")
    (project / "notes.md").write_text("")  # destroyed
    (project / "keep.md").write_text("the only copy of an edit\n")  # ...or moved: then held later
    store.snapshot(project, "moved")
    (project / "keep.md").unlink()
    for i in range(6):
        (project / "log.txt").write_text("".join(f"{j}\n" for j in range(i + 1)))
        store.snapshot(project, f"log {i}")
    reasons = [c.reason for c in store.list(project)]
    assert reasons == ["log 5", "log 4", "log 3", "moved"], reasons  # "moved" holds keep.md; the edit is in it
    store.restore(project, store.list(project)[-1].id, "keep.md")
    assert (project / "keep.md").read_text() == "the only copy of an edit\n"
    monkeypatch.setattr(cpprune, "KEEP_UNIQUE_DAYS", -1)  # past the time they are kept for: by count again
    (project / "log.txt").write_text("new\n")
    store.snapshot(project, "later")
    assert [c.reason for c in store.list(project)] == ["later", "log 5", "log 4"]


def test_diff_shows_changes_including_new_files(project, hermes_home):
    store = CheckpointStore()
    cid = store.snapshot(project, "s")
    (project / "main.py").write_text("print('v2')\n")
    (project / "fresh.py").write_text("fresh\n")
    diff = store.diff(project, cid)
    assert "-print('v1')\n+print('v2')" in diff and "+++ b/fresh.py" in diff
    assert "fresh.py" in store.diff(project, cid, stat=True)
    assert store.list(project)[0].id == cid  # diff records nothing


def test_restore_of_one_path_leaves_the_rest(project, hermes_home):
    store = CheckpointStore()
    cid = store.snapshot(project, "s")
    (project / "main.py").write_text("main v2\n")
    (project / "lib/util.py").write_text("util v2\n")
    store.restore(project, cid, path="lib")
    assert (project / "lib/util.py").read_text() == "X = 1\n" and (project / "main.py").read_text() == "main v2\n"
    with pytest.raises(CheckpointError, match="outside"):
        store.restore(project, cid, path="../elsewhere")


def test_rollback_steps_back_through_change_sets(project, hermes_home):
    store = CheckpointStore()
    for version in ("v2", "v3"):  # as the agent does: snapshot, then change
        store.snapshot(project, f"before {version}")
        (project / "main.py").write_text(f"{version}\n")
    rollback(project, store=store)
    assert (project / "main.py").read_text() == "v2\n"
    rollback(project, store=store)
    assert (project / "main.py").read_text() == "print('v1')\n"
    with pytest.raises(CheckpointError, match="nothing to roll back"):
        store.rollback(project)


def test_refuses_root_home_and_missing_dirs(tmp_path, hermes_home):
    store = CheckpointStore()
    assert store.snapshot("/", "r") is None
    assert store.snapshot(Path.home(), "h") is None
    assert store.snapshot(tmp_path / "missing", "m") is None
    assert store.list(tmp_path) == []


def _cli(argv: list[str], settings: Settings) -> int:
    parser = argparse.ArgumentParser(prog="hermes")
    cli.add_parser(parser.add_subparsers(dest="command"))
    return cli.run(parser.parse_args(argv), settings)


def test_cli_list_diff_restore(project, hermes_home, capsys):
    settings = Settings(data={"checkpoints": {"max_snapshots": 10}})
    store = cli.store_from_settings(settings)
    cid = store.snapshot(project, "write_file main.py")
    (project / "main.py").write_text("edited\n")
    assert _cli(["checkpoints", "list", str(project)], settings) == 0
    assert f"{cid[:10]}" in capsys.readouterr().out
    assert _cli(["checkpoints", "diff", cid[:10], str(project)], settings) == 0
    assert "+edited" in capsys.readouterr().out
    assert _cli(["checkpoints", "restore", cid[:10], str(project), "--path", "main.py"], settings) == 0
    out = capsys.readouterr().out
    assert f"restored checkpoint {cid[:10]} (main.py)" in out and "undo with" in out
    assert (project / "main.py").read_text() == "print('v1')\n"
    assert _cli(["checkpoints", "list", "--all"], settings) == 0
    assert str(project) in capsys.readouterr().out
    assert _cli(["checkpoints", "restore", "ffffff", str(project)], settings) == 1
    assert "no checkpoint" in capsys.readouterr().err


def _old_layout_repo(repo: Path, wd: Path, versions: list[str], refs: str = "refs/hermes/{:08d}") -> None:
    """A shadow repository as earlier versions of ours wrote them: one per directory, parentless commits."""
    env = {**os.environ, "GIT_DIR": str(repo), "GIT_WORK_TREE": str(wd), "GIT_INDEX_FILE": str(repo / "idx"),
           "GIT_AUTHOR_NAME": "Hermes", "GIT_AUTHOR_EMAIL": "h@l", "GIT_COMMITTER_NAME": "Hermes",
           "GIT_COMMITTER_EMAIL": "h@l"}
    subprocess.run(["git", "init", "-q", "--bare", str(repo)], check=True, env={**os.environ})
    (repo / "HERMES_WORKDIR").write_text(str(wd) + "\n")
    for seq, text in enumerate(versions, 1):
        (wd / "main.py").write_text(text)
        subprocess.run(["git", "add", "-A", "main.py"], cwd=wd, env=env, check=True)
        tree = subprocess.run(["git", "write-tree"], cwd=wd, env=env, check=True, capture_output=True, text=True).stdout.strip()
        stamp = {"GIT_AUTHOR_DATE": f"{1_700_000_000 + seq * 60} +0000", "GIT_COMMITTER_DATE": f"{1_700_000_000 + seq * 60} +0000"}
        cid = subprocess.run(["git", "commit-tree", tree, "-m", f"old {seq}"], cwd=wd, env={**env, **stamp},
                             check=True, capture_output=True, text=True).stdout.strip()
        subprocess.run(["git", "update-ref", refs.format(seq), cid], cwd=wd, env=env, check=True)


def test_checkpoints_of_earlier_versions_move_into_hermes_store(project, hermes_home):
    from hermes_agent.storage.checkpoints import project_key

    base = hermes_home / "checkpoints"
    old = base / project_key(project)
    _old_layout_repo(old, project, ["print('a')\n", "print('b')\n"])
    other = project.parent / "other"
    other.mkdir()
    archived = base / "legacy-20260101-000000" / project_key(other)  # where Hermes moved one of ours
    archived.parent.mkdir()
    _old_layout_repo(archived, other, ["x = 1\n"])
    hermes_v1 = base / "legacy-20260101-000000" / "0123456789abcdef"  # Hermes's own pre-store repository
    _old_layout_repo(hermes_v1, other, ["y = 2\n"], refs="refs/heads/master")
    (project / "main.py").write_text("print('now')\n")

    store = CheckpointStore()
    assert [c.reason for c in store.list(project)] == ["old 2", "old 1"]
    assert not old.exists() and not archived.exists() and hermes_v1.exists()
    assert [c.reason for c in store.list(other)] == ["old 1"]
    assert sorted(store.workdirs()) == sorted([str(project), str(other)])
    store.restore(project, store.list(project)[1].id)
    assert (project / "main.py").read_text() == "print('a')\n"
    # Hermes created the store first and archived another of ours: it is taken back as well
    third = project.parent / "third"
    third.mkdir()
    late = base / "legacy-20260102-000000" / project_key(third)
    late.parent.mkdir()
    _old_layout_repo(late, third, ["z = 3\n"])
    assert [c.reason for c in store.list(third)] == ["old 1"] and not late.parent.exists()


def test_links_modes_and_odd_names_come_back_and_match_git(project, hermes_home):
    """The tree hermes stages itself (storage/cpstage.py) is the one `git add` makes, and a restore (written
    through no-follow dirfds, storage/cprestore.py) brings back a symlink, an executable bit, a name with a
    newline and a file replaced by a directory."""
    (project / "run.sh").write_text("#!/bin/sh\n")
    (project / "run.sh").chmod(0o755)
    (project / "link").symlink_to("lib/util.py")
    (project / "odd\nname.txt").write_text("odd\n")
    store = CheckpointStore()
    cid = store.snapshot(project, "before")
    listing = subprocess.run(["git", f"--git-dir={store.store}", "ls-tree", "-r", "-z", str(cid)],
                             capture_output=True, text=True, check=True).stdout.split("\0")
    modes = {line.partition("\t")[2]: line.split(" ")[0] for line in listing if line}
    assert modes == {".gitignore": "100644", "lib/util.py": "100644", "main.py": "100644", "run.sh": "100755",
                     "link": "120000", "odd\nname.txt": "100644"}  # run.log and node_modules/ are excluded
    (project / "run.sh").chmod(0o644)
    (project / "link").unlink()
    (project / "link").write_text("no longer a link\n")
    (project / "odd\nname.txt").unlink()
    (project / "main.py").unlink()
    (project / "main.py").mkdir()
    (project / "main.py" / "inner.txt").write_text("new\n")
    result = store.restore(project, cid)
    assert "main.py/inner.txt" in result.removed
    assert os.readlink(project / "link") == "lib/util.py"
    assert os.stat(project / "run.sh").st_mode & 0o100
    assert (project / "odd\nname.txt").read_text() == "odd\n"
    assert (project / "main.py").read_text() == "print('v1')\n"


def test_restore_keeps_an_overwritten_file_no_snapshot_holds(project, hermes_home):
    store = CheckpointStore(max_file_bytes=64)
    (project / "data.csv").write_text("small\n")
    first = store.snapshot(project, "small")
    (project / "data.csv").write_text("x" * 100 + " hours of results\n")  # past the cap: in no snapshot
    result = store.restore(project, first)
    assert (project / "data.csv").read_text() == "small\n"
    assert len(result.kept) == 1 and result.kept[0].startswith(str(hermes_home / "quarantine"))
    assert open(result.kept[0]).read().endswith(" hours of results\n")
