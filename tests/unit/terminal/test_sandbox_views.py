"""Default-deny planning, git protections resolved at use, HOME as the workspace, re-planning, and the
file tools' symlink-refusing opens. Real files in tmp_path."""

from __future__ import annotations

import os
import subprocess

import pytest

from hermes_agent import nofollow
from hermes_agent.approval.policy import PathPolicy
from hermes_agent.terminal.sandbox import landlock
from hermes_agent.terminal.sandbox.bwrap import bwrap_argv
from hermes_agent.terminal.sandbox.spec import spec_from_policy
from hermes_agent.tools.builtin import _pathguard


def _home(tmp_path):
    home = tmp_path / "home"
    for rel in (".config/git", ".config/gh", ".cargo/bin", ".local/bin", ".local/share/keyrings", ".hermes/profiles/w",
                ".hermes/skills", "proj", "notes"):
        (home / rel).mkdir(parents=True, exist_ok=True)
    for rel in (".config/git/config", ".config/git/credentials", ".cargo/credentials.toml", ".foo-secret",
                ".gitconfig", ".bashrc", ".hermes/.env", ".hermes/profiles/w/.env", "notes/a"):
        (home / rel).write_text("x")
    return home


def _policy(home, workspace, hermes_home=None, **cfg):
    return PathPolicy.build(workspace=[str(workspace)], hermes_home=str(hermes_home or home / ".hermes/profiles/w"),
                            home=str(home), config={"shared_tmp": False, **cfg})


def test_default_deny_reads_in_home_and_every_profile(tmp_path):
    home = _home(tmp_path)
    policy = _policy(home, home / "proj")
    denied = [".config/git/credentials", ".cargo/credentials.toml", ".foo-secret", ".hermes/.env",
              ".hermes/profiles/w/.env", ".config/gh", ".local/share/keyrings/x", ".newthing", ".bashrc",
              ".local/share/fish/fish_history", ".cargo/config.toml", "notes/a", "Downloads/creds.csv", "new/x"]
    allowed = [".cargo/bin/x", ".local/bin/t", "proj/x"]
    for rel in denied:
        assert not policy.check_read(str(home / rel)).allowed, rel
    for rel in (".config/git/config", ".gitconfig"):  # commands see a credential-free copy; file tools nothing
        assert "git config --global --list" in policy.check_read(str(home / rel)).reason, rel
    for rel in allowed:
        assert policy.check_read(str(home / rel)).allowed, rel
    granted = _policy(home, home / "proj", readable_paths=["~/.foo-secret"])
    assert granted.check_read(str(home / ".foo-secret")).allowed


def test_closed_home_is_planned_from_the_allowlist_not_from_its_entries(tmp_path):
    home = _home(tmp_path)
    (home / ".hermes/profiles/w/skills").mkdir()
    spec = spec_from_policy(_policy(home, home / "proj"))
    assert spec.home_closed == str(home)
    for rel in (".config/gh", ".config/git/credentials", ".cargo/credentials.toml", ".foo-secret", ".hermes/.env",
                ".hermes/profiles/w/.env", ".local/share", ".bashrc", "notes/a", "later/new.txt"):
        assert spec.hides(str(home / rel)), rel
    originals = {orig for orig, _ in spec.git_globals}  # hidden, a credential-free copy bound over them
    assert not [s for s in spec.secrets if s.startswith(str(home) + "/") and s not in originals]
    for rel in (".local/bin", ".cargo/bin", ".hermes/profiles/w/skills", "proj/x"):
        assert not spec.hides(str(home / rel)), rel
    assert {str(home / r) for r in (".local/bin", ".cargo/bin", ".hermes/profiles/w/skills")} <= set(spec.home_readable)
    # the global git config is seen through a credential-free copy (bound over it / GIT_CONFIG_GLOBAL)
    assert {str(home / ".config/git/config"), str(home / ".gitconfig")} <= originals
    rules = dict(landlock.plan(spec.writable, spec.secrets, abi=7, sealed=spec.sealed, unseen=(str(home),),
                               reveal=spec.home_readable))
    assert str(home) not in rules and str(home / ".foo-secret") not in rules and str(home / "notes") not in rules
    assert str(home / ".local/bin") in rules and str(home / "proj") in rules
    argv = bwrap_argv(spec)
    tmpfs = argv.index("--tmpfs", argv.index(str(home)) - 1)
    assert argv[tmpfs + 1] == str(home) and argv[-argv[::-1].index("--remount-ro")] == str(home)
    assert argv.index("--bind", tmpfs) > tmpfs  # the workspace is bound on the tmpfs, not under it


def test_home_plan_does_not_grow_with_home(tmp_path):
    home = _home(tmp_path)
    for i in range(300):
        (home / f"dir{i}").mkdir()
        (home / f"dir{i}/.env").write_text("x")
    spec = spec_from_policy(_policy(home, home / "proj"))
    assert not [s for s in spec.secrets if "/dir" in s] and not [r for r in spec.home_readable if "/dir" in r]


def _git(cwd, *args):
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True)


def test_git_protection_follows_a_moved_git_dir_and_hooks_path(tmp_path):
    home = _home(tmp_path)
    ws = home / "proj"
    _git(ws, "init", "-q")
    spec = spec_from_policy(_policy(home, ws))
    assert str(ws / ".git") in spec.pinned and spec.denies_write(str(ws / ".git/hooks/pre-commit"))
    assert not spec.denies_write(str(ws / ".git/objects/x")) and not spec.denies_write(str(ws / "a.py"))
    os.rename(ws / ".git", ws / ".gs")
    (ws / ".git").write_text("gitdir: .gs\n")
    _git(ws, "config", "core.hooksPath", "myhooks")
    (ws / "myhooks").mkdir()
    assert spec.refreshed() is not None  # the .git entry changed: re-planned
    moved = spec_from_policy(_policy(home, ws))
    for rel in (".git", ".gs/hooks", ".gs/config", "myhooks"):
        assert moved.denies_write(str(ws / rel / "x") if rel != ".git" else str(ws / rel)), rel
    assert moved.refreshed() is None  # nothing changed since: no re-plan
    argv = " ".join(bwrap_argv(moved))
    assert f"--ro-bind {ws}/.git {ws}/.git" in argv and f"--ro-bind {ws}/myhooks {ws}/myhooks" in argv


def test_git_created_later_is_planned_on_the_next_command(tmp_path):
    home = _home(tmp_path)
    ws = home / "proj"
    spec = spec_from_policy(_policy(home, ws)).with_writable(str(tmp_path / "home/notes"))
    assert not spec.pinned
    _git(ws, "init", "-q")
    fresh = spec.refreshed()
    assert fresh is not None and str(ws / ".git") in fresh.pinned
    assert fresh.denies_write(str(ws / ".git/hooks/x")) and str(home / "notes") in fresh.writable


def test_workspace_home_keeps_its_top_and_dot_entries(tmp_path):
    home = _home(tmp_path)
    policy = _policy(home, home)
    spec = spec_from_policy(policy)
    assert spec.home_workspace and str(home) in spec.sealed
    assert not spec.denies_write(str(home / "notes/a")) and not spec.denies_write(str(home / "proj/new.py"))
    for rel in (".bashrc", ".profile", "new-top-file", ".local/lib/python3.11/site-packages/x.pth",
                ".config/systemd/user/x.service"):
        assert spec.denies_write(str(home / rel)), rel
        assert rel.startswith("new") or not policy.check_write(str(home / rel)).allowed, rel
    assert policy.check_write(str(home / "notes/b")).allowed
    rules = dict(landlock.plan(spec.writable, spec.secrets, abi=7, sealed=spec.sealed))
    assert str(home) not in rules or rules[str(home)] == landlock.READ_DIR
    assert rules[str(home / "notes")] == landlock.all_fs(7)


def test_home_under_a_writable_root_stays_read_only(tmp_path):
    home = _home(tmp_path)
    policy = PathPolicy.build(workspace=[str(home / "proj")], hermes_home=str(home / ".hermes"), home=str(home),
                              config={"writable_paths": [str(tmp_path)]})
    spec = spec_from_policy(policy)
    assert spec.denies_write(str(home / "notes/a")) and spec.denies_write(str(home / ".bashrc"))
    assert not spec.denies_write(str(home / "proj/a")) and not spec.denies_write(str(tmp_path / "other"))
    assert not policy.check_write(str(home / "notes/a")).allowed


@pytest.mark.parametrize("openat2", [True, False])
def test_guarded_opens_never_follow_a_symlink(tmp_path, monkeypatch, openat2):
    if not openat2:
        monkeypatch.setattr(nofollow, "_openat2_ok", [False])
    home = _home(tmp_path)
    ws = home / "proj"
    (ws / "f").write_text("fine")
    os.symlink(home / ".foo-secret", ws / "link")
    os.symlink(home / ".config", ws / "dirlink")
    fd = nofollow.open_nofollow(str(ws / "f"), os.O_RDONLY)
    assert os.read(fd, 10) == b"fine"
    os.close(fd)
    for path in (ws / "link", ws / "dirlink/git/config"):
        with pytest.raises(PermissionError):
            nofollow.open_nofollow(str(path), os.O_RDONLY)


def test_guarded_backend_exposes_only_its_operations(tmp_path):
    from hermes_agent.terminal.local import LocalBackend

    home = _home(tmp_path)
    guarded = _pathguard.GuardedBackend(LocalBackend(str(home / "proj")), _policy(home, home / "proj"))
    assert not hasattr(_pathguard.GuardedBackend, "__getattr__")
    for name in ("spawn", "execute_pty", "scratch_dir", "_abs"):
        assert not hasattr(guarded, name), name
    (home / "proj/a").write_text("x")
    assert guarded.read_bytes(str(home / "proj/a")) == b"x"
    for rel in (".foo-secret", "notes/a"):
        with pytest.raises(Exception, match="private"):
            guarded.read_bytes(str(home / rel))


def test_a_symlinked_dot_entry_hides_its_target(tmp_path):
    home = _home(tmp_path)
    (home / "dotfiles/aws").mkdir(parents=True)
    (home / "dotfiles/aws/credentials").write_text("k")
    (home / "dotfiles/gitconfig").write_text("# cfg")
    os.symlink(home / "dotfiles/aws", home / ".aws2")
    (home / ".gitconfig").unlink()
    os.symlink(home / "dotfiles/gitconfig", home / ".gitconfig")
    policy = _policy(home, home / "proj")
    assert not policy.check_read(str(home / ".aws2/credentials")).allowed
    assert not policy.check_read(str(home / "dotfiles/aws/credentials")).allowed
    assert "git config --global" in policy.check_read(str(home / ".gitconfig")).reason  # the copy is for commands
    spec = spec_from_policy(policy)
    assert spec.hides(str(home / "dotfiles/aws/credentials")) and str(home / "dotfiles/gitconfig") in spec.home_readable
    assert (str(home / ".gitconfig"), str(home / "dotfiles/gitconfig")) in spec.home_links
    argv = bwrap_argv(spec)
    at = argv.index(str(home / ".gitconfig"))
    assert argv[at - 2:at] == ["--symlink", str(home / "dotfiles/gitconfig")]


def test_home_workspace_keeps_what_start_up_files_source_or_put_on_path(tmp_path):
    """a21: sourced files, PATH directories (bash, zsh, fish), a `for f in DIR/*` loop, a symlinked
    .bashrc's target: read-only, with the directories on the way; their siblings stay writable."""
    home = _home(tmp_path)
    for rel in ("dotfiles", "scripts", "zbin", "fishbin", "parts", "stow"):
        (home / rel).mkdir(exist_ok=True)
    for rel in ("dotfiles/other", "parts/a.sh", "stow/other"):
        (home / rel).write_text("x")
    (home / "stow/bashrc").write_text('. ~/dotfiles/aliases.sh\nPATH="$HOME/scripts:$PATH"\n'
                                      'for f in ~/parts/*.sh; do . "$f"; done\n')
    (home / "dotfiles/aliases.sh").write_text('D=$HOME/later\n[ -f "${D}/env.sh" ] && source "${D}/env.sh"\n')
    (home / ".bashrc").unlink(missing_ok=True)
    os.symlink(home / "stow/bashrc", home / ".bashrc")
    (home / ".zshrc").write_text("path=(~/zbin $path)\n")
    (home / ".config/fish").mkdir(parents=True, exist_ok=True)
    (home / ".config/fish/config.fish").write_text("fish_add_path -g ~/fishbin  # tools\n")
    spec = spec_from_policy(_policy(home, home))
    for rel in ("dotfiles/aliases.sh", "dotfiles", "scripts/x", "zbin/x", "fishbin/x", "parts/a.sh",
                "parts/b.sh", "stow/bashrc", "later/env.sh"):
        assert spec.denies_write(str(home / rel)), rel
    for rel in ("dotfiles/other", "stow/other", "notes/a"):
        assert not spec.denies_write(str(home / rel)), rel


def test_doctor_says_what_a_closed_home_lets_commands_read(tmp_path):
    from hermes_agent.terminal.sandbox.views import describe_home

    home = _home(tmp_path)
    line = describe_home(_policy(home, home / "proj"))
    assert f"in HOME ({home})" in line and "~/proj" in line and "~/.local/bin" in line and "~/notes" not in line
    assert "sandbox.readable_paths" in line and "made there later" in line
    assert "is (in) the workspace" in describe_home(_policy(home, home))


def test_a_new_dot_entry_off_the_allowlist_does_not_replan_a_closed_home(tmp_path):
    """A tool's or a test's new `~/.something` is unseen in a closed HOME whatever the plan: the launcher is not
    restarted for it (each restart also started a new pid namespace, so `ps`/`pkill` lost the session's servers).
    A toolchain location of the allowlist appearing (`~/.rustup`) is planned again; with HOME as the workspace
    every dot-entry counts."""
    home = _home(tmp_path)
    spec = spec_from_policy(_policy(home, home / "proj"))
    (home / ".hermes-test-outside-1").mkdir()
    (home / ".viminfo").write_text("x")
    assert spec.watch() == spec.stamp
    (home / ".rustup").mkdir()
    assert spec.watch() != spec.stamp
    at_home = spec_from_policy(_policy(home, home))
    (home / ".another").mkdir()
    assert at_home.watch() != at_home.stamp
