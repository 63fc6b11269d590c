"""Issue 19 class 1 (red team rt13 a17: ~/.ssh/id_rsa gone after a session with --checkpoints): the unconfined
hermes process never removes or writes by a path string in a tree the sandbox can change. A process of the
confined side keeps exchanging workspace dir `sub` with a symlink to ~/.ssh (renameat2 RENAME_EXCHANGE) while
hermes deletes and writes sub/id_rsa, sub/authorized_keys: a checkpoint restore (the files added since are
removed, changed ones written back), write_file and patch (with their checkpoints), the run-later guard's
removal of a planted sub/.envrc, under bwrap and Landlock.
HOME lies outside /tmp (bwrap's private /tmp would hide it). ~/.ssh must come out byte for byte as it was."""

from __future__ import annotations

import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

from hermes_agent.terminal.sandbox.launcher import bwrap_problem, landlock_problem
from tests.helpers import model_config, run_hermes

MECHANISMS = [pytest.param("bwrap", marks=pytest.mark.skipif(bwrap_problem() is not None, reason="no bwrap")),
              pytest.param("landlock", marks=pytest.mark.skipif(landlock_problem() is not None, reason="no Landlock"))]
KEYS = {"id_rsa": "-----BEGIN OPENSSH PRIVATE KEY-----\nmykey\n", "authorized_keys": "ssh-ed25519 AAAA me\n",
        "config": "Host *\n"}


def flipper(ssh: Path, seconds: float) -> str:
    """A script exchanging ./sub with ./subL (a symlink to ~/.ssh) as fast as it can for `seconds`."""
    return ("import ctypes, os, time\nlibc = ctypes.CDLL(None, use_errno=True)\n"
            f"os.path.lexists('subL') or os.symlink({str(ssh)!r}, 'subL')\nend = time.time() + {seconds}\n"
            "while time.time() < end:\n    libc.renameat2(-100, b'sub', -100, b'subL', 2)\n")


@pytest.fixture
def user():
    """HOME (outside /tmp) with ~/.ssh, a workspace ~/proj with a `sub` directory, HERMES_HOME ~/.hermes."""
    home = Path(tempfile.mkdtemp(prefix="hermes-swap-", dir="/var/tmp"))
    (home / ".ssh").mkdir(mode=0o700)
    for name, text in KEYS.items():
        (home / ".ssh" / name).write_text(text)
    (home / "proj" / "sub").mkdir(parents=True)
    (home / "proj" / "sub" / "keep").write_text("keep\n")
    (home / ".hermes").mkdir()
    yield home
    shutil.rmtree(home, ignore_errors=True)


def _ssh_intact(home: Path, own: dict[str, str] | None = None) -> None:
    """~/.ssh as it was, and no checkpoint took a copy of it (a snapshot reading through the swapped link
    put ~/.ssh/id_rsa into the store; a restore then wrote it where the sandbox reads)."""
    ssh = home / ".ssh"
    want = {**KEYS, **(own or {})}
    assert sorted(p.name for p in ssh.iterdir()) == sorted(want), list(ssh.iterdir())
    assert {n: (ssh / n).read_text() for n in want} == want
    store = home / ".hermes" / "checkpoints" / "store"
    if store.is_dir():
        objects = subprocess.run(["git", f"--git-dir={store}", "cat-file", "--batch-all-objects", "--batch"],
                                 capture_output=True, check=True).stdout
        assert b"mykey" not in objects and b"ssh-ed25519 AAAA me" not in objects


def _settle(proj: Path) -> None:
    """Put `sub` back as the real directory (the flipper may have stopped with the link there)."""
    if (proj / "sub").is_symlink():
        (proj / "sub").rename(proj / "subT")
        (proj / "subL").rename(proj / "sub")
        (proj / "subT").rename(proj / "subL")


def test_a_restore_never_follows_a_swapped_in_link(user, scripted):
    """`hermes checkpoints rollback` removes sub/id_rsa, sub/authorized_keys, sub/config (added since the
    checkpoint) and writes sub/keep back, 12 times, each while `sub` and a link to ~/.ssh keep trading places."""
    proj = user / "proj"
    model_config(user / ".hermes", scripted.url)
    env = {"HOME": str(user)}
    from hermes_agent.storage.checkpoints import CheckpointStore

    store = CheckpointStore(user / ".hermes" / "checkpoints")
    first = ""
    for _ in range(12):
        _settle(proj)
        (proj / "sub" / "keep").write_text("keep\n")
        first = first or str(store.snapshot(proj, "before"))
        for name in KEYS:
            (proj / "sub" / name).write_text("the agent's\n")
        (proj / "sub" / "keep").write_text("changed\n")
        store.snapshot(proj, "after")
        race = subprocess.Popen([sys.executable, "-c", flipper(user / ".ssh", 30)], cwd=proj)
        try:
            time.sleep(0.2)
            out = run_hermes("checkpoints", "rollback", "1", str(proj), home=user / ".hermes", env=env, timeout=60)
        finally:
            race.kill()
            race.wait()
        _ssh_intact(user)
        assert "git is not installed" not in out.stderr, out.stderr
        assert out.returncode == 0 or (out.stderr.startswith("hermes checkpoints: ")  # done, or refused in a line
                                       and "internal error" not in out.stderr), out.stderr
    _settle(proj)
    out = run_hermes("checkpoints", "restore", first[:12], str(proj), home=user / ".hermes", env=env, timeout=60)
    assert out.returncode == 0, out.stderr  # without the race the restore does its work
    assert sorted(p.name for p in proj.iterdir()) == ["sub"]
    assert sorted(p.name for p in (proj / "sub").iterdir()) == ["keep"]
    assert (proj / "sub" / "keep").read_text() == "keep\n"
    _ssh_intact(user)


def test_a_snapshot_never_reads_through_a_swapped_in_link(user):
    """60 checkpoints of ~/proj (what --checkpoints takes before each write) while `sub` and a link to ~/.ssh
    trade places: none holds a byte of ~/.ssh, and each holds the workspace's own files."""
    from hermes_agent.storage.checkpoints import CheckpointStore

    proj = user / "proj"
    store = CheckpointStore(user / ".hermes" / "checkpoints")
    race = subprocess.Popen([sys.executable, "-c", flipper(user / ".ssh", 120)], cwd=proj)
    try:
        time.sleep(0.2)
        for i in range(60):
            (proj / f"w{i}.txt").write_text(f"{i}\n")
            assert store.snapshot(proj, f"step {i}")
    finally:
        race.kill()
        race.wait()
    _ssh_intact(user)
    newest = store.list(proj)[0].id
    names = subprocess.run(["git", f"--git-dir={store.store}", "ls-tree", "-r", "--name-only", newest],
                           capture_output=True, text=True, check=True).stdout.split()
    assert {f"w{i}.txt" for i in range(60)} <= set(names), names


@pytest.mark.parametrize("mechanism", MECHANISMS)
def test_write_file_and_patch_never_follow_a_swapped_in_link(user, scripted, mechanism):
    """In one `chat -q --checkpoints`, a background command of the sandbox swaps `sub` and a link to ~/.ssh
    while the model writes and patches sub/id_rsa, sub/authorized_keys, sub/config 45 times."""
    model_config(user / ".hermes", scripted.url, f"sandbox:\n  mechanism: {mechanism}\n")
    start = {"name": "terminal", "arguments": {"command": f"python3 -c {_quoted(flipper(user / '.ssh', 90))}",
                                               "background": True}}
    steps = [{"tool_calls": [start]}, {"tool_calls": [{"name": "terminal", "arguments": {"command": "sleep 1"}}]}]
    for i in range(15):
        for name in KEYS:
            tool = ("patch", {"path": f"sub/{name}", "old_string": "x", "new_string": "y"}) if i % 3 == 2 else \
                ("write_file", {"path": f"sub/{name}", "content": f"x {i}\n"})
            steps.append({"tool_calls": [{"name": tool[0], "arguments": tool[1]}]})
    scripted.add(*steps, {"content": "done"})
    out = run_hermes("chat", "-q", "go", "--yolo", "--checkpoints", home=user / ".hermes", cwd=str(user / "proj"),
                     env={"HOME": str(user)}, timeout=300)
    assert out.returncode == 0, out.stderr
    results = [m["content"] for m in scripted.requests[-1]["body"]["messages"] if m["role"] == "tool"]
    assert len(results) == 2 + 45, results
    _ssh_intact(user)
    if not any(".ssh" in r or "symlink" in r for r in results[2:]):  # the swap was not live during the writes
        pytest.skip("the swapping process never met a write (a loaded machine): nothing was raced")


@pytest.mark.parametrize("mechanism", MECHANISMS)
def test_the_guard_never_removes_through_a_swapped_in_link(user, scripted, mechanism):
    """20 commands each plant sub/.envrc (the run-later guard removes it after the command) while a background
    command swaps `sub` and a link to ~/.ssh, which holds the user's own .envrc: that one stays."""
    own = {".envrc": "the user's own\n"}
    (user / ".ssh" / ".envrc").write_text(own[".envrc"])
    model_config(user / ".hermes", scripted.url, f"sandbox:\n  mechanism: {mechanism}\n")
    start = {"name": "terminal", "arguments": {"command": f"python3 -c {_quoted(flipper(user / '.ssh', 90))}",
                                               "background": True}}
    plant = "for d in sub subL; do echo 'touch $HOME/pwned' > $d/.envrc 2>/dev/null; done; echo PLANTED {}"
    steps = [{"tool_calls": [start]},
             *({"tool_calls": [{"name": "terminal", "arguments": {"command": plant.format(i)}}]} for i in range(20))]
    scripted.add(*steps, {"content": "done"})
    out = run_hermes("chat", "-q", "go", "--yolo", home=user / ".hermes", cwd=str(user / "proj"),
                     env={"HOME": str(user)}, timeout=300)
    assert out.returncode == 0, out.stderr
    results = [m["content"] for m in scripted.requests[-1]["body"]["messages"] if m["role"] == "tool"]
    assert sum("PLANTED" in r for r in results) == 20, results
    assert any(".envrc" in r and "removed" in r for r in results), results  # the guard was at work
    _ssh_intact(user, own)


def _quoted(text: str) -> str:
    import shlex

    return shlex.quote(text)
