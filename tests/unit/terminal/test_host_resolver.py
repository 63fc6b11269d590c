"""paths.trusted_which, the one resolver of programs hermes runs outside the sandbox, on real files and links:
a program is passed over when its target, or any link met on the way to it, lies where the sandbox writes;
and byhand.change, the line the user reads about a run-by-hand file."""

from __future__ import annotations

import pytest

from hermes_agent import paths
from hermes_agent.terminal.sandbox import byhand


@pytest.fixture
def layout(tmp_path, monkeypatch):
    trusted, work = tmp_path / "bin", tmp_path / "work"
    trusted.mkdir()
    (work / ".tools").mkdir(parents=True)
    monkeypatch.setattr(paths, "_UNTRUSTED", set())
    monkeypatch.setattr(paths, "_USER_PATH", [])
    monkeypatch.setattr(paths, "_RESOLVED", {})
    monkeypatch.setenv("PATH", f"{trusted}:/usr/bin:/bin")
    paths.distrust_writable(str(work))
    return trusted, work


def test_a_link_whose_target_or_hop_is_in_the_workspace_is_passed_over(layout):
    trusted, work = layout
    (trusted / "git").symlink_to(work / ".tools" / "git")  # the target in the workspace
    (work / ".tools" / "git").write_text("#!/bin/sh\n")
    (work / ".tools" / "git").chmod(0o755)
    assert paths.trusted_which("git") == "/usr/bin/git"
    (trusted / "env").symlink_to(work / ".tools" / "e")  # a hop in the workspace, the end trusted
    (work / ".tools" / "e").symlink_to("/usr/bin/env")
    assert paths.trusted_which("env") == "/usr/bin/env"
    (trusted / "true").symlink_to("/bin/true")  # a link that never touches the workspace is fine
    assert paths.trusted_which("true") == str(trusted / "true")
    assert paths.trusted_which(str(work / ".tools" / "git")) is None  # a path given in full, too
    with pytest.raises(FileNotFoundError, match="outside the places the sandbox can write"):
        paths.host_program("no-such-program-here")


def test_a_link_loop_is_refused(layout):
    trusted, _ = layout
    (trusted / "a").symlink_to(trusted / "b")
    (trusted / "b").symlink_to(trusted / "a")
    assert not paths.trusted_program(str(trusted / "a"))
    assert paths._links_on_the_way(str(trusted / "a"))[1] is None


def test_which_finds_what_shutil_which_finds(tmp_path, monkeypatch):
    """paths.which (shutil.which without importing shutil) on real files: an executable file is found, a file
    without x, a directory and a missing name are passed over for a later PATH entry; empty entries skipped."""
    import shutil

    first, second = tmp_path / "first", tmp_path / "second"
    for d in (first, second):
        d.mkdir()
    (first / "tool").write_text("#!/bin/sh\n")  # not executable: passed over
    (first / "adir").mkdir(mode=0o755)  # a directory with x: passed over
    for name in ("tool", "adir"):
        (second / name).write_text("#!/bin/sh\n")
        (second / name).chmod(0o755)
    monkeypatch.setenv("PATH", f"{first}::{second}:/usr/bin:/bin")
    for name in ("tool", "adir", "sh", "no-such-program-here"):
        assert paths.which(name) == shutil.which(name), name
    assert paths.which("tool") == str(second / "tool")
    assert paths.which("tool", path=str(first)) is None and paths.which("sh", path="") is None


def test_the_change_of_a_run_by_hand_file_is_one_line_of_its_runnable_part():
    old = b'{"scripts": {"test": "jest", "build": "tsc"}, "version": "1.0.0"}'
    new = b'{"scripts": {"test": "sh x.sh", "build": "tsc", "lint": "eslint ."}, "version": "1.0.1"}'
    assert byhand.change("package.json", old, new) == 'scripts.lint added: "eslint ."; scripts.test: "jest" -> "sh x.sh"'
    assert byhand.change("package.json", old, old.replace(b"1.0.0", b"2.0.0")) == ""  # not runnable
    assert byhand.change("Makefile", b"all:\n\tcc a.c\n", b"all:\n\tcc a.c\n\t./x\n") == '+"./x"'
    toml = b'[build-system]\nbuild-backend = "setuptools.build_meta"\n[project]\nname = "a"\n'
    assert "build-system.build-backend" in byhand.change("pyproject.toml", toml, toml.replace(b"setuptools.", b"x."))
    assert byhand.change("pyproject.toml", toml, toml.replace(b'"a"', b'"b"')) == ""
    assert byhand.risky("Makefile", None, b"all:\n") == ""  # a new file is told, not put back
    assert "untrusted" in byhand.risky("Makefile", b"all:\n", b"all:\n\t./x\n")
