"""terminal/sandbox/readable.py and publicwalk.py on real directory trees: the complement of an allowlist,
the public-only rule of the trees packages do not own (at any depth, bounded, fail closed), PATH
directories, linked executables and interpreter prefixes."""

from __future__ import annotations

import os
from pathlib import Path

from hermes_agent.terminal.sandbox import publicwalk, readable


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
        hidden, cut = publicwalk.walk(str(tmp_path), [granted], [])
    finally:
        (tmp_path / "ssl/private").chmod(0o755)
    assert set(hidden) == {str(tmp_path / "ssl/private"), str(tmp_path / "shadow")} and not cut


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
    assert publicwalk.not_public(str(base), [], str(cache)) == [str(base / "shadow")]
    publicwalk._MEMO.clear()  # as in a new process
    walks = []
    real_walk = publicwalk.walk
    monkeypatch.setattr(publicwalk, "walk", lambda *a, **k: walks.append(a) or real_walk(*a, **k))
    assert publicwalk.not_public(str(base), [], str(cache)) == [str(base / "shadow")] and not walks
    _tree(base, {"app/deploy.key": 0o600})
    publicwalk._MEMO.clear()
    assert sorted(publicwalk.not_public(str(base), [], str(cache))) == [str(base / "app/deploy.key"),
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


def test_private_entries_are_hidden_at_any_depth(tmp_path):
    """rt5 a05/a13: a 0600 key ten levels down, and a 0700 directory deep in a public tree."""
    deep = "a/b/c/d/e/f/g/h/i/deploy_key"
    _tree(tmp_path, {deep: 0o600, "a/b/c/d/e/f/g/h/i/README": 0o644, "lib/app/credentials.json": 0o644})
    (tmp_path / "lib/app").chmod(0o700)
    try:
        hidden, cut = publicwalk.walk(str(tmp_path), [], [])
    finally:
        (tmp_path / "lib/app").chmod(0o755)
    assert set(hidden) == {str(tmp_path / deep), str(tmp_path / "lib/app")} and not cut


def test_a_tree_too_big_to_check_hides_what_was_not_checked(tmp_path):
    """Fail closed: past the budget the directories not yet walked are hidden whole, a grant below them not."""
    _tree(tmp_path, {f"d{i}/sub/f": 0o644 for i in range(6)})
    grant = str(tmp_path / "d0/sub")
    hidden, cut = publicwalk.walk(str(tmp_path), [grant], [], budget=8)
    assert cut
    walked_all, _ = publicwalk.walk(str(tmp_path), [], [])
    assert walked_all == []
    for i in range(6):
        leaf = str(tmp_path / f"d{i}/sub/f")
        if leaf.startswith(grant + "/"):
            assert not any(readable.under(leaf, h) for h in hidden)
    assert sum(any(readable.under(str(tmp_path / f"d{i}/sub/f"), h) for h in hidden) for i in range(6)) >= 4


def test_a_directory_full_of_private_files_is_hidden_whole(tmp_path, monkeypatch):
    monkeypatch.setattr(publicwalk, "DIR_HIDDEN_MAX", 3)
    _tree(tmp_path, {**{f"data/k{i}": 0o600 for i in range(5)}, "data/pub": 0o644, "two/a": 0o600, "two/b": 0o600})
    hidden, _ = publicwalk.walk(str(tmp_path), [], [])
    assert set(hidden) == {str(tmp_path / "data"), str(tmp_path / "two/a"), str(tmp_path / "two/b")}


def _outside_tmp(monkeypatch, tmp_path):
    """Plan as if tmp_path were a tree like /srv: /tmp is a system root here (the sandbox gives its own), and
    pytest's base directory is 0700 (nobody else may pass it)."""
    import functools

    monkeypatch.setattr(readable, "SYSTEM_READABLE", tuple(p for p in readable.SYSTEM_READABLE if p != "/tmp"))
    monkeypatch.setattr(publicwalk, "reachable", functools.partial(publicwalk.reachable, stop=str(tmp_path)))


def test_a_linked_executable_exposes_its_file_not_its_directory(tmp_path, monkeypatch):
    """rt5 a07: /srv/x/bin/backup -> /srv/secrets/backup.sh gave all of /srv/secrets (a key beside it)."""
    tools, secrets = tmp_path / "tools/bin", tmp_path / "secrets"
    _tree(secrets, {"backup.sh": 0o755, "id_ed25519": 0o600})
    tools.mkdir(parents=True)
    (tools / "backup").symlink_to(secrets / "backup.sh")
    got = readable.path_dirs(str(tools), [], ["/usr"])
    assert str(secrets / "backup.sh") in got and str(secrets) not in got
    _outside_tmp(monkeypatch, tmp_path)
    hidden = readable.hidden_outside("", [], (), str(tools))
    assert str(secrets / "id_ed25519") in hidden
    assert not any(readable.under(str(secrets / "backup.sh"), h) for h in hidden)


def test_a_private_path_directory_or_link_target_is_hidden(tmp_path, monkeypatch):
    """The public-only rule holds for PATH trees outside the system too: a 0700 target, a 0600 file in a
    PATH directory, a PATH directory nobody else may enter."""
    tools, closed, secrets = tmp_path / "tools/bin", tmp_path / "closed/bin", tmp_path / "secrets"
    _tree(secrets, {"admin.sh": 0o700})
    _tree(tools, {"run": 0o755, "token": 0o600})
    _tree(closed, {"tool": 0o755})
    (tools / "admin").symlink_to(secrets / "admin.sh")
    closed.chmod(0o700)
    _outside_tmp(monkeypatch, tmp_path)
    try:
        hidden = readable.hidden_outside("", [], (), f"{tools}:{closed}")
    finally:
        closed.chmod(0o755)
    covered = lambda p: any(readable.under(str(p), h) for h in hidden)  # noqa: E731
    assert covered(secrets / "admin.sh") and covered(tools / "token") and covered(closed)
    assert not covered(tools / "run")


def test_a_path_directory_behind_a_directory_others_may_only_pass(tmp_path):
    """/opt/app (0711) holding bin/ on PATH: everyone may run what bin/ holds by name, so bin/ stays (walked
    by the same rule) while app's other entries are hidden; without the PATH entry app is hidden whole."""
    _tree(tmp_path, {"app/bin/tool": 0o755, "app/bin/token": 0o600, "app/secret/key": 0o644})
    (tmp_path / "app").chmod(0o711)
    try:
        reach = [str(tmp_path / "app/bin")]
        with_path, _ = publicwalk.walk(str(tmp_path), [], [], reach=reach)
        without, _ = publicwalk.walk(str(tmp_path), [], [])
    finally:
        (tmp_path / "app").chmod(0o755)
    assert set(with_path) == {str(tmp_path / "app/secret"), str(tmp_path / "app/bin/token")}
    assert without == [str(tmp_path / "app")]
