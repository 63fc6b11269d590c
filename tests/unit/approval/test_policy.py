"""The path policy alone: real directories and symlinks in a temp home, no tools involved."""

from __future__ import annotations

import os

import pytest

from hermes_agent.approval.policy import PathPolicy


@pytest.fixture()
def home(tmp_path):
    h = tmp_path / "home"
    for d in ("ws/.git/hooks", ".ssh", ".aws", ".hermes/skills", "other", ".cache"):
        (h / d).mkdir(parents=True)
    (h / ".ssh/id_rsa").write_text("KEY")
    (h / ".hermes/.env").write_text("OPENAI_API_KEY=x")
    (h / ".bashrc").write_text("")
    return h


def policy(home, **cfg):
    return PathPolicy.build(workspace=[str(home / "ws")], hermes_home=str(home / ".hermes"), home=str(home),
                            config={"shared_tmp": False, **cfg})


def test_workspace_is_writable_and_readable(home):
    p = policy(home)
    assert p.check_write(str(home / "ws/src/app.py")).allowed
    assert p.check_write("notes.txt", cwd=str(home / "ws")).allowed
    assert p.check_read(str(home / "ws/README")).allowed
    assert PathPolicy.build(workspace=[str(home / "ws")], hermes_home=str(home / ".hermes")).check_write(
        "/tmp/scratch.txt").allowed
    assert not p.check_write(str(home / ".cache/pre-commit/repo/hook.sh")).allowed  # caches hold code run later


@pytest.mark.parametrize("rel", [".ssh/id_rsa", ".ssh", ".aws/credentials", ".hermes/.env", ".netrc"])
def test_secrets_are_not_readable(home, rel):
    v = policy(home).check_read(str(home / rel))
    assert v.access == "deny" and v.key == "secret_read" and "sandbox.readable_paths" in v.reason


def test_etc_shadow_and_globbed_host_keys_not_readable(home):
    p = policy(home)
    assert not p.check_read("/etc/shadow").allowed
    assert not p.check_read("/etc/ssh/ssh_host_ed25519_key").allowed
    assert p.check_read("/etc/ssh/ssh_host_ed25519_key.pub").allowed
    assert p.check_read("/etc/hostname").allowed


def test_symlink_into_secrets_is_resolved_first(home):
    link = home / "ws/sshlink"
    link.symlink_to(home / ".ssh")
    p = policy(home)
    assert not p.check_read(str(link / "id_rsa")).allowed
    v = p.check_write(str(link / "authorized_keys"))
    assert v.access == "ask" and str(home / ".ssh/authorized_keys") in v.path


def test_dotdot_and_tilde_are_resolved(home):
    p = policy(home)
    assert not p.check_read(str(home / "ws/../.ssh/id_rsa")).allowed
    assert p.check_write("~/.bashrc").access == "ask"


def test_symlinked_rc_file_in_workspace_asks(home):
    (home / "ws/rc").symlink_to(home / ".bashrc")
    v = policy(home).check_write(str(home / "ws/rc"))
    assert v.access == "ask" and v.key == "protected_write"


def test_outside_workspace_asks(home):
    v = policy(home).check_write(str(home / "other/file"))
    assert v.access == "ask" and v.key == "outside_workspace"


def test_hermes_home_and_system_paths_are_protected(home):
    p = policy(home)
    assert p.check_write(str(home / ".hermes/config.yaml")).key == "secret_write"  # may hold model.api_key
    assert p.check_write(str(home / ".hermes/skills/x/scripts/run.sh")).key == "protected_write"
    assert p.check_write("/etc/cron.d/job").key == "protected_write"


def test_git_hooks_inside_workspace_ask(home):
    p = policy(home)
    assert p.check_write(str(home / "ws/.git/hooks/pre-commit")).key == "git_hooks"
    assert p.check_write(str(home / "ws/.git/config")).key == "git_hooks"
    assert p.check_write(str(home / "ws/.git/objects/ab/cd")).allowed


def test_user_grants_extend_reads_and_writes(home):
    p = policy(home, writable_paths=[str(home / "other")], readable_paths=["~/.aws/config"])
    assert p.check_write(str(home / "other/file")).allowed
    assert p.check_read(str(home / ".aws/config")).allowed
    assert not p.check_read(str(home / ".aws/credentials")).allowed


def test_read_only_mode_asks_for_every_write(home):
    assert policy(home, mode="read-only").check_write(str(home / "ws/a")).key == "read_only"


def test_devices(home):
    p = policy(home)
    assert p.check_write("/dev/null").allowed
    assert p.check_write("/dev/sda").access == "ask"


def test_workspace_at_home_still_protects_rc_files(home):
    p = PathPolicy.build(workspace=[str(home)], hermes_home=str(home / ".hermes"), home=str(home))
    assert p.check_write(str(home / "notes.md")).allowed
    assert p.check_write(str(home / ".bashrc")).key == "protected_write"
    assert not p.check_read(os.path.join(str(home), ".ssh", "id_rsa")).allowed
