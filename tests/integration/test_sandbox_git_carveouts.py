"""Git carve-outs that do not exist yet, or live below the workspace: a missing .git/hooks or .git/info is
created (empty) and bound read-only, a .git/commondir written from inside is removed after the command
(with a note in its result), nested repositories get the same protection, and with HOME as the workspace
~/bin stays read-only. Real git, real bash, the real sandbox."""

from __future__ import annotations

import os
import shutil
import stat
import subprocess

import pytest

from hermes_agent.approval.policy import PathPolicy
from hermes_agent.terminal.local import LocalBackend
from hermes_agent.terminal.sandbox.spec import spec_from_policy

pytestmark = pytest.mark.skipif(shutil.which("bwrap") is None, reason="bubblewrap not installed")


def _git(cwd, *args):
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True)


@pytest.fixture
def home(tmp_path):
    home = tmp_path / "home"
    (home / "proj").mkdir(parents=True)
    _git(home / "proj", "init", "-q")
    return home


def _backend(home, workspace):
    policy = PathPolicy.build(workspace=[str(workspace)], hermes_home=str(home / ".hermes"), home=str(home),
                              config={"shared_tmp": False, "mechanism": "bwrap"})
    backend = LocalBackend(str(workspace), sandbox=spec_from_policy(policy), source_rc=False)
    if not backend.contained:
        pytest.skip(f"sandbox not available here: {backend.sandbox_state}")
    return backend


def test_missing_hooks_and_info_are_created_read_only(home):
    ws = home / "proj"
    shutil.rmtree(ws / ".git/hooks")
    shutil.rmtree(ws / ".git/info")
    backend = _backend(home, ws)
    res = backend.execute("mkdir -p .git/hooks .git/info; printf '#!/bin/sh\\necho PWNED\\n' > .git/hooks/pre-commit;"
                          " echo '* filter=x' > .git/info/attributes; ls .git/hooks .git/info")
    assert "Read-only file system" in res.output
    assert not (ws / ".git/hooks/pre-commit").exists() and not (ws / ".git/info/attributes").exists()
    for name in ("hooks", "info"):
        assert stat.S_IMODE(os.stat(ws / ".git" / name).st_mode) == 0o755
    backend.close()


def test_commondir_written_inside_is_removed_with_a_note(home):
    ws = home / "proj"
    (ws / ".gx/hooks").mkdir(parents=True)
    backend = _backend(home, ws)
    res = backend.execute("echo ../.gx > .git/commondir && git rev-parse --git-common-dir")
    assert not os.path.lexists(ws / ".git/commondir")
    assert "the sandbox removed" in res.output and ".git/commondir" in res.output
    _git(ws, "rev-parse", "--git-dir")  # the repository still works for the user
    res = backend.execute("ln -s /etc/passwd .git/config.worktree; echo done")
    assert not os.path.lexists(ws / ".git/config.worktree") and "config.worktree" in res.output
    assert os.path.exists("/etc/passwd")  # the link was removed, never its target
    backend.close()


def test_an_existing_worktree_commondir_is_left_alone(home, tmp_path):
    ws = home / "proj"
    (ws / "a").write_text("x")
    _git(ws, "add", "a")
    _git(ws, "-c", "user.name=u", "-c", "user.email=u@x", "commit", "-qm", "x")
    _git(ws, "worktree", "add", "-q", str(home / "wt"))
    backend = _backend(home, home / "wt")
    res = backend.execute("git status --short; echo ok")
    assert "removed" not in res.output and (ws / ".git/worktrees/wt/commondir").exists()
    backend.close()


def test_nested_repository_hooks_are_read_only(home):
    ws = home / "proj"
    (ws / "lib").mkdir()
    _git(ws / "lib", "init", "-q")
    (ws / "node_modules/dep").mkdir(parents=True)  # skipped by the bounded scan: stays writable
    backend = _backend(home, ws)
    res = backend.execute("echo 'echo PWNED' > lib/.git/hooks/pre-commit; echo '[alias] st=!id' >> lib/.git/config;"
                          " echo '../.gx' > lib/.git/commondir; touch node_modules/dep/ok; echo end")
    assert not (ws / "lib/.git/hooks/pre-commit").exists() and "alias" not in (ws / "lib/.git/config").read_text()
    assert not os.path.lexists(ws / "lib/.git/commondir") and "lib/.git/commondir" in res.output
    assert (ws / "node_modules/dep/ok").exists()
    backend.close()


def test_home_workspace_keeps_bin_read_only(home):
    (home / "bin").mkdir()
    (home / "notes").mkdir()
    backend = _backend(home, home)
    res = backend.execute(f"echo 'echo PWNED' > {home}/bin/git; echo hi > {home}/notes/n; echo end")
    assert not (home / "bin/git").exists() and "Read-only file system" in res.output
    assert (home / "notes/n").read_text() == "hi\n"
    backend.close()


def test_a_hooks_path_in_the_work_tree_does_not_make_it_a_git_dir(home):
    ws = home / "proj"
    (ws / "hooks").mkdir()
    _git(ws, "config", "core.hooksPath", "hooks")
    backend = _backend(home, ws)
    res = backend.execute("echo data > commondir; echo data > config.worktree; echo end")
    assert (ws / "commondir").read_text() == "data\n" and (ws / "config.worktree").exists()
    assert "removed" not in res.output
    backend.close()
