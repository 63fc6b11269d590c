"""terminal/sandbox/readable.py on real directory trees: the complement of an allowlist, the public-only
rule of /etc and /opt, PATH directories and interpreter prefixes."""

from __future__ import annotations

import os
from pathlib import Path

from hermes_agent.terminal.sandbox import readable


def _tree(root: Path, files: dict[str, int]) -> None:
    for rel, mode in files.items():
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(rel)
        p.chmod(mode)


def test_complement_hides_siblings_and_keeps_the_way_down(tmp_path):
    _tree(tmp_path, {"srv/app/deploy_key": 0o600, "srv/app/code/main.py": 0o644, "mnt/disk/x": 0o644})
    (tmp_path / "link").symlink_to(tmp_path / "srv")
    allowed = [str(tmp_path / "srv/app/code")]
    hidden = readable._complement(str(tmp_path), allowed)
    assert str(tmp_path / "srv/app/deploy_key") in hidden and str(tmp_path / "mnt") in hidden
    assert not any(readable.under(str(tmp_path / "srv/app/code/main.py"), h) for h in hidden)
    assert str(tmp_path / "link") not in hidden, "a symlink is left to its target's rule"


def test_not_public_hides_what_not_everyone_may_read(tmp_path):
    _tree(tmp_path, {"ssl/private/site.key": 0o600, "ssl/certs/ca.pem": 0o644, "shadow": 0o640,
                     "app/conf/token": 0o600, "app/conf/settings.ini": 0o644})
    (tmp_path / "ssl/private").chmod(0o710)
    granted = str(tmp_path / "app/conf/token")
    try:
        hidden = readable._walk_not_public(str(tmp_path), [granted], 12, [])
    finally:
        (tmp_path / "ssl/private").chmod(0o755)
    assert set(hidden) == {str(tmp_path / "ssl/private"), str(tmp_path / "shadow")}


def test_path_dirs_give_interpreter_prefixes_but_not_a_home_prefix(tmp_path):
    base = tmp_path / "pyenv/versions/3.x"
    _tree(base, {"bin/python3": 0o755, "lib/python3/os.py": 0o644})
    (base / "include").mkdir()
    venv = tmp_path / "proj/.venv"
    (venv / "bin").mkdir(parents=True)
    (venv / "bin/python").symlink_to(base / "bin/python3")
    (venv / "pyvenv.cfg").write_text("home = x\n")
    (venv / "lib/python3/site-packages").mkdir(parents=True)
    home = tmp_path / "home"
    (home / ".local/bin").mkdir(parents=True)
    (home / ".local/share/keyrings").mkdir(parents=True)
    got = readable.path_dirs(f"{venv}/bin:{home}/.local/bin:relative/bin", [str(home)], ["/usr"])
    assert str(venv / "lib") in got and str(venv / "pyvenv.cfg") in got
    assert str(base / "lib") in got and str(base / "include") in got, "the venv's interpreter prefix"
    assert str(home / ".local/bin") in got and str(home / ".local/share") not in got


def test_a_key_outside_every_allowed_root_is_hidden(tmp_path):
    """On the real /: the rt4 a01 key (a root-only file in a directory nobody listed) is planned hidden,
    while HOME, the workspace, the system and PATH stay readable."""
    home, ws = tmp_path / "home", tmp_path / "ws"
    home.mkdir()
    ws.mkdir()
    hidden = readable.hidden_outside(str(home), [str(ws)], (), os.environ.get("PATH", ""))
    for path in ("/work/ci/sshd/client_key", "/srv", "/mnt", "/etc/shadow"):
        if os.path.lexists(path):
            assert any(readable.under(path, h) for h in hidden), path
    for path in ("/usr/bin/env", "/etc/passwd", str(ws), str(home)):
        assert not any(readable.under(path, h) for h in hidden), path


def test_the_walk_is_kept_until_a_walked_directory_changes(tmp_path, monkeypatch):
    """The stored walk serves the next process; a new private file in a walked directory is seen at once."""
    base, cache = tmp_path / "etc", tmp_path / "cache"
    _tree(base, {"app/public.conf": 0o644, "shadow": 0o640})
    monkeypatch.setitem(readable.PUBLIC_ONLY, str(base), 12)
    assert readable._not_public(str(base), [], str(cache)) == [str(base / "shadow")]
    readable._PUBLIC_CACHE.clear()  # as in a new process
    walks = []
    real_walk = readable._walk_not_public
    monkeypatch.setattr(readable, "_walk_not_public", lambda *a: walks.append(a) or real_walk(*a))
    assert readable._not_public(str(base), [], str(cache)) == [str(base / "shadow")] and not walks
    _tree(base, {"app/deploy.key": 0o600})
    readable._PUBLIC_CACHE.clear()
    assert sorted(readable._not_public(str(base), [], str(cache))) == [str(base / "app/deploy.key"),
                                                                        str(base / "shadow")]
    assert len(walks) == 1


def test_a_path_entry_the_sandbox_can_redirect_is_not_trusted(tmp_path):
    """A PATH directory (or an executable's symlink) inside a writable root is not followed: the sandbox
    could point it at /srv before the next plan."""
    ws, secret = tmp_path / "ws", tmp_path / "srv/keys"
    (ws / "node_modules").mkdir(parents=True)
    _tree(secret, {"id_rsa": 0o600})
    (ws / "node_modules/.bin").symlink_to(secret)
    bindir = tmp_path / "tools/bin"
    bindir.mkdir(parents=True)
    (ws / "fake").symlink_to(secret / "id_rsa")
    (bindir / "tool").symlink_to(ws / "fake")
    got = readable.path_dirs(f"{ws}/node_modules/.bin:{bindir}", [], ["/usr"], [str(ws)])
    assert not any(readable.under(str(secret), g) or readable.under(g, str(secret)) for g in got), got
    assert str(bindir) in got
