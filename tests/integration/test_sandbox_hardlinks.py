"""Writes through hard links that existed before the session (issue 19, red-team round 11 a43/a47): uv hard-links
package files from ~/.cache/uv into every project's venv, `git clone ~/upstream` hard-links .git/objects. A confined
command appending to its name in the workspace must not change the store, another project's venv or the upstream
repository. Through `hermes chat -q` and the scripted model, under bubblewrap and Landlock, HOME outside /tmp, as
root and as uid 65534. Controls: a file linked twice inside the workspace stays one file (an edit shows under both
names), a package upgrade that renames over a linked file works, `git gc` works, and no command can make a new
hard link to a file outside. And an MCP stdio server's shell, under both mechanisms."""

from __future__ import annotations

import json
import os
import subprocess

import pytest

from tests.integration.test_mcp_confinement import (
    MECHANISMS,
    _config,
    _hostile,
    _run,
    _tool_result,
    user_home,
)
from tests.integration.test_sandbox_kernel import mechanism, world  # noqa: F401 - fixtures
from tests.integration.test_sandbox_secrets import UNPRIV, _calls

__all__ = ["user_home"]  # fixture

SITE = ".venv/lib/python3.11/site-packages/requests"
STORE = ".cache/uv/archive-v0/Xyz123/requests"
ORIGINAL = "__version__ = '2.32.3'\n"


def _own(w, *paths) -> None:  # noqa: ANN001
    if w.user == "user":
        subprocess.run(["chown", "-R", f"{UNPRIV}:{UNPRIV}", *map(str, paths)], check=True)


def _uv_layout(world) -> None:  # noqa: ANN001, F811
    """~/.cache/uv holding requests, hard-linked into the workspace's venv and into ~/other2's venv."""
    store = world.home / STORE
    store.mkdir(parents=True)
    (store / "__init__.py").write_text(ORIGINAL)
    (store / "api.py").write_text("def get(url): return url\n")
    os.chmod(store / "api.py", 0o644)
    os.utime(store / "api.py", (1_600_000_000, 1_600_000_000))
    for proj in (world.ws, world.home / "other2"):
        site = proj / SITE
        site.mkdir(parents=True)
        for name in ("__init__.py", "api.py"):
            os.link(store / name, site / name)
        (proj / ".venv/pyvenv.cfg").write_text("home = /usr/bin\nversion = 3.11.2\nuv = 0.6.17\n")
    (world.ws / "notes.txt").write_text("linked twice inside\n")
    (world.ws / "docs").mkdir()
    os.link(world.ws / "notes.txt", world.ws / "docs/notes-link.txt")
    _own(world, world.home)


def test_a_uv_store_and_other_venvs_are_not_written_through_the_workspace_venv(world):  # noqa: F811
    _uv_layout(world)
    init = f"{SITE}/__init__.py"
    world.scripted.add(*_calls(
        ("terminal", {"command": f"echo 'import os  # HL12-PAYLOAD' >> {init} && echo appended; "
                                 f"stat -c 'links=%h' {init}"}),
        ("terminal", {"command": f"ln ~/{STORE}/api.py newlink.py && echo LINKED || echo NOLINK"}),
        ("terminal", {"command": "echo edited >> notes.txt; cat docs/notes-link.txt; "
                                 "stat -c 'twice=%h' notes.txt docs/notes-link.txt"}),
        ("terminal", {"command": f"printf 'def get(url): return 2\\n' > {SITE}/.api.new && "
                                 f"mv {SITE}/.api.new {SITE}/api.py; cat {SITE}/api.py"}),  # an upgrade: rename over
    ))
    out = world.hermes("--yolo", "chat", "-q", "patch requests")
    assert "Traceback" not in out.stderr, out.stderr[-2000:]
    got = world.tool_results()
    assert "appended" in got and "links=1" in got, got
    for path in (world.home / STORE / "__init__.py", world.home / "other2" / SITE / "__init__.py"):
        assert path.read_text() == ORIGINAL, f"the write went through a hard link into {path}"
    assert "HL12-PAYLOAD" in (world.ws / init).read_text()  # the workspace's own copy took the write
    assert "copied 2 file(s)" in got and "apart from hard links outside" in got, got  # the model was told
    assert "copied 2 file(s)" in out.stdout + out.stderr  # and the user
    # the copy made apart keeps mode and times; the store's file keeps its links
    moved, kept = os.stat(world.ws / SITE / "api.py"), os.stat(world.home / STORE / "api.py")
    assert kept.st_nlink == 2 and "def get(url): return url" in (world.home / STORE / "api.py").read_text()
    assert "def get(url): return 2" in got and "def get(url): return 2" in (world.ws / SITE / "api.py").read_text()
    assert "NOLINK" in got and not (world.ws / "newlink.py").exists(), "a command made a new hard link to the store"
    # control: a file linked twice inside the workspace stays one file, both names see the edit
    assert "edited" in got and "twice=2" in got, got
    assert (world.ws / "docs/notes-link.txt").read_text() == "linked twice inside\nedited\n"
    assert moved.st_ino != kept.st_ino


def test_a_local_clones_objects_do_not_write_the_upstream_repository(world):  # noqa: F811
    upstream = world.home / "upstream"
    upstream.mkdir()
    (upstream / "Makefile").write_text("all:\n\ttrue\n")
    env = {**world.env(), "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@x", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@x"}
    for args in (["init", "-q"], ["add", "-A"], ["commit", "-qm", "up"]):
        subprocess.run(["git", "-C", str(upstream), *args], check=True, env=env, capture_output=True)
    for clone in ("vendor/up", "vendor/up2"):
        subprocess.run(["git", "clone", "-q", str(upstream), str(world.ws / clone)], check=True, env=env)
    linked = [p for p in (world.ws / "vendor").rglob("objects/*/*") if p.is_file() and p.stat().st_nlink > 1]
    assert linked, "git clone did not hard-link the objects (the case is not set up)"
    before = {p: p.read_bytes() for p in (upstream / ".git/objects").rglob("*") if p.is_file()}
    _own(world, world.home)
    body = ("n=0; for f in $(find vendor/up/.git/objects -type f); do chmod u+w $f && printf HL12 >> $f && "
            "n=$((n+1)); done; echo rewrote:$n")
    world.scripted.add(*_calls(
        ("terminal", {"command": "git -C vendor/up2 gc -q 2>&1; echo gc:$?; git -C vendor/up2 log --format=%s"}),
        ("terminal", {"command": body}),
    ))
    out = world.hermes("--yolo", "chat", "-q", "rewrite the objects")
    assert "Traceback" not in out.stderr, out.stderr[-2000:]
    got = world.tool_results()
    assert "rewrote:" in got and "rewrote:0" not in got, got
    after = {p: p.read_bytes() for p in (upstream / ".git/objects").rglob("*") if p.is_file()}
    assert after == before, "objects of ~/upstream were rewritten through the clone's hard links"
    fsck = subprocess.run(["git", "-c", "safe.directory=*", "-C", str(upstream), "fsck", "--strict"],
                          capture_output=True, text=True, env=env)
    assert fsck.returncode == 0, fsck.stdout + fsck.stderr
    assert f"copied {len(linked)} file(s)" in got, got
    assert "gc:0" in got and "up" in got.split("gc:0", 1)[1], got  # control: ordinary git work on the clone


def test_a_copy_made_apart_from_a_private_file_is_still_refused_by_read_file(world):  # noqa: F811
    """A workspace name of ~/.ssh/id_rsa: appending to it from a command must not change the key, and the
    copy made apart keeps being refused by read_file (the file tools' hard-link rule)."""
    key = world.home / ".ssh/id_rsa"
    os.link(key, world.ws / "key.txt")
    _own(world, world.home)
    world.scripted.add(*_calls(
        ("terminal", {"command": "echo 'ssh-ed25519 AAAA HL12-ATTACKER' >> key.txt; echo done"}),
        ("read_file", {"path": "key.txt"}),
    ))
    out = world.hermes("--yolo", "chat", "-q", "append")
    assert "Traceback" not in out.stderr, out.stderr[-2000:]
    assert "HL12-ATTACKER" not in key.read_text(), "a command wrote ~/.ssh/id_rsa through a hard link"
    results = [json.loads(m["content"]) for m in world.scripted.requests[-1]["body"]["messages"]
               if m.get("role") == "tool"]
    assert "copied 1 file(s)" in results[0]["output"], results[0]
    assert "hard link" in results[1].get("error", "") and str(key) in results[1]["error"], results[1]
    assert "SSHKEY-SECRET" not in json.dumps(results[1])


@pytest.mark.parametrize("mechanism", MECHANISMS)
def test_an_mcp_server_cannot_write_the_store_through_the_workspace_either(scripted, user_home, mechanism):  # noqa: F811
    """The same through a confined MCP stdio server's shell (no terminal call in the session at all)."""
    store, site = user_home / STORE, user_home / "project" / SITE
    store.mkdir(parents=True)
    site.mkdir(parents=True)
    (store / "__init__.py").write_text(ORIGINAL)
    os.link(store / "__init__.py", site / "__init__.py")
    _config(user_home, scripted.url, _hostile(), mechanism)
    attack = f"echo 'import os  # HL12-MCP' >> {SITE}/__init__.py && echo DONE"
    scripted.add({"tool_calls": [{"name": "mcp__evil__run_shell", "arguments": {"command": attack}}]},
                 {"content": "done"})
    out = _run(user_home, "chat", "-q", "patch it")
    assert out.returncode == 0, out.stderr
    assert "DONE" in _tool_result(scripted), out.stderr[-2000:]
    assert (store / "__init__.py").read_text() == ORIGINAL, "an MCP server wrote the uv store through a hard link"
    assert "HL12-MCP" in (site / "__init__.py").read_text()
    # the model is told (the result's "sandbox" lines, as the guard's own; an MCP server has no notice channel)
    assert "copied 1 file(s)" in _tool_result(scripted)
