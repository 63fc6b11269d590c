"""Secrets by default-deny, narrowed: inside HOME only tool locations and git's settings are readable
(rc files, ~/.local/share, ~/.cargo/config.toml are not), and other users' homes (and /root) are hidden
but for their tool directories — also when HOME itself lies inside one. Real bash in the real sandbox."""

from __future__ import annotations

import pwd
import shutil
from types import SimpleNamespace

import pytest

from hermes_agent.approval import policy as policy_mod
from hermes_agent.approval.policy import PathPolicy
from hermes_agent.terminal.local import LocalBackend
from hermes_agent.terminal.sandbox.spec import spec_from_policy


@pytest.fixture
def homes(tmp_path, monkeypatch):
    other = tmp_path / "users/victim"
    home = tmp_path / "users/root/sessions/home"  # HOME inside another home, as root with HOME moved
    for d in (other / ".ssh", other / ".pyenv/bin", home / "proj", home / ".local/share/fish",
              home / ".local/bin", home / ".cargo", tmp_path / "users/root/.ssh"):
        d.mkdir(parents=True)
    (other / ".ssh/id_rsa").write_text("VICTIM-KEY\n")
    (other / ".pyenv/bin/tool").write_text("TOOL-OK\n")
    (tmp_path / "users/root/.ssh/id_rsa").write_text("ROOT-KEY\n")
    (home / ".bashrc").write_text("export GITHUB_PAT=RC-TOKEN\n")
    (home / ".local/share/fish/fish_history").write_text("- cmd: HIST-TOKEN\n")
    (home / ".cargo/config.toml").write_text("token='CARGO-TOKEN'\n")
    (home / ".local/bin/t").write_text("LOCALBIN-OK\n")
    (home / ".gitconfig").write_text("[user]\n\tname = GITCFG-OK\n")
    (home / "proj/a").write_text("WS-OK\n")
    users = [SimpleNamespace(pw_uid=1001, pw_dir=str(other)), SimpleNamespace(pw_uid=0, pw_dir=str(tmp_path / "users/root")),
             SimpleNamespace(pw_uid=2, pw_dir="/usr/sbin"), SimpleNamespace(pw_uid=65534, pw_dir="/nonexistent")]
    monkeypatch.setattr(pwd, "getpwall", lambda: users)
    monkeypatch.setenv("HOME", str(home))  # the user's HOME is the policy's (the private /tmp re-binds it)
    return home, other, tmp_path / "users/root"


def test_policy_hides_rc_shares_configs_and_other_homes(homes):
    home, other, root = homes
    policy = PathPolicy.build(workspace=[str(home / "proj")], hermes_home=str(home / ".hermes"), home=str(home))
    assert set(policy.foreign_homes) >= {str(other), str(root)} and "/usr/sbin" not in policy.foreign_homes
    for path in (home / ".bashrc", home / ".local/share/fish/fish_history", home / ".cargo/config.toml",
                 other / ".ssh/id_rsa", root / ".ssh/id_rsa"):
        verdict = policy.check_read(str(path))
        assert not verdict.allowed, path
    assert "another user's home" in policy.check_read(str(other / ".ssh/id_rsa")).reason
    for path in (home / ".local/bin/t", home / "proj/a", other / ".pyenv/bin/tool"):
        assert policy.check_read(str(path)).allowed, path
    # the global git config: commands see a credential-free copy (gitglobal.py), the file tools not the original
    assert "git config --global --list" in policy.check_read(str(home / ".gitconfig")).reason
    assert not policy.check_read(str(other / ".pyenv/versions/3.11.9/pip.conf")).allowed  # a tool folder's settings
    assert str(other) not in policy_mod.foreign_homes(str(other))  # one's own home is not foreign
    assert {str(root), "/root"} <= set(policy_mod.foreign_homes(str(other)))  # /root always, HOME is not /root


@pytest.mark.skipif(shutil.which("bwrap") is None, reason="bubblewrap not installed")
def test_confined_commands_cannot_read_them(homes):
    home, other, root = homes
    policy = PathPolicy.build(workspace=[str(home / "proj")], hermes_home=str(home / ".hermes"), home=str(home),
                              config={"shared_tmp": True, "mechanism": "bwrap"})  # these fake homes live in /tmp
    backend = LocalBackend(str(home / "proj"), sandbox=spec_from_policy(policy), source_rc=False)
    if not backend.contained:
        pytest.skip(f"sandbox not available here: {backend.sandbox_state}")
    files = [home / ".bashrc", home / ".local/share/fish/fish_history", home / ".cargo/config.toml",
             other / ".ssh/id_rsa", root / ".ssh/id_rsa", home / ".local/bin/t", home / ".gitconfig",
             home / "proj/a", other / ".pyenv/bin/tool"]
    out = backend.execute("cat " + " ".join(str(f) for f in files) + " 2>/dev/null; echo end").output
    backend.close()
    for secret in ("RC-TOKEN", "HIST-TOKEN", "CARGO-TOKEN", "VICTIM-KEY", "ROOT-KEY"):
        assert secret not in out
    for ok in ("LOCALBIN-OK", "GITCFG-OK", "WS-OK", "TOOL-OK"):
        assert ok in out
