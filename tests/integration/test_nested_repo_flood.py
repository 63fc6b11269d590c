"""Issue 19, rt15 d06: the size of the sandbox's plan is not set by what confined work makes. One command made 3,000
nested `.git` directories; every nested repository cost ~3 mounts (views.git_paths), bwrap never started again
("bwrap ended before it reported its namespace") and hermes made hooks/ and info/ in each. Through the real
`hermes chat -q`, HOME outside /tmp, bwrap and Landlock: after the flood the next command and the next session
run, a hook planted in a flooded repository does not run on the user's commit, and the user is told which
directory stays read-only. Control: a monorepo with 200 vendored checkouts keeps them writable (one by one)."""

from __future__ import annotations

import json
import shutil
import subprocess
import time

import pytest

from tests.helpers import home_outside_tmp, model_config, run_hermes

HOOK = "printf '#!/bin/sh\\ntouch {mark}\\n' > {repo}/.git/hooks/pre-commit; chmod +x {repo}/.git/hooks/pre-commit; "


def _git(cwd, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(["git", "-c", "user.name=u", "-c", "user.email=u@x", *args], cwd=cwd,
                          capture_output=True, text=True, timeout=60)


def _repo(path) -> None:
    path.mkdir(parents=True)
    (path / "lib.txt").write_text("v1\n")
    _git(path, "init", "-q")
    _git(path, "add", "lib.txt")
    _git(path, "commit", "-qm", "init")


@pytest.fixture
def home():
    outer = home_outside_tmp("flood")
    (outer / "home" / "proj").mkdir(parents=True)
    (outer / "home" / ".hermes").mkdir()
    yield outer / "home"
    shutil.rmtree(outer, ignore_errors=True)


def _session(scripted, home, mech: str, *commands: str) -> tuple[list[str], str, float]:
    model_config(home / ".hermes", scripted.url, f"sandbox:\n  mechanism: {mech}\n")
    scripted.add(*({"tool_calls": [{"name": "terminal", "arguments": {"command": c}}]} for c in commands),
                 {"content": "done"})
    t0 = time.monotonic()
    out = run_hermes("chat", "-q", "work", "-t", "terminal", "--yolo", home=home / ".hermes",
                     env={"HOME": str(home)}, cwd=str(home / "proj"), timeout=400)
    took = time.monotonic() - t0
    assert out.returncode == 0, out.stderr[-2000:]
    texts = []
    for m in scripted.requests[-1]["body"]["messages"]:
        if m["role"] == "tool":
            r = json.loads(m["content"])
            texts.append(r.get("output", "") + r.get("error", "") + r.get("note", ""))
    return texts, out.stdout + out.stderr, took


def test_a_flood_of_nested_repositories_does_not_stop_the_sandbox(scripted, mechanism, home):
    proj = home / "proj"
    _repo(proj / "vendor" / "r7")
    flood = "cd vendor && for i in $(seq 3000); do mkdir -p f$i/.git; done; echo FLOODED"
    plant = HOOK.format(mark=home / "PWNED", repo="vendor/r7") + "echo SECOND-OK"
    texts, said, _ = _session(scripted, home, mechanism, flood, plant)
    assert "FLOODED" in texts[0], texts
    assert "SECOND-OK" in texts[1], texts  # the next command's plan started
    texts, said, took = _session(scripted, home, mechanism, "echo NEXT-SESSION-OK")
    assert "NEXT-SESSION-OK" in texts[0], (texts, said[-1500:])
    assert "git repositories are nested" in texts[0] + said and "vendor" in texts[0] + said, (texts, said[-1500:])
    assert took < 120, took
    (proj / "vendor" / "r7" / "lib.txt").write_text("v2\n")
    assert _git(proj / "vendor" / "r7", "commit", "-qam", "mine").returncode == 0
    assert not (home / "PWNED").exists()  # the planted hook did not run on the user's commit
    assert not list((proj / "vendor").glob("f*/.git/hooks"))  # hermes made no directories in the flood


def test_a_monorepo_with_200_vendored_checkouts_stays_writable_and_protected(scripted, mechanism, home):
    proj = home / "proj"
    _git(proj, "init", "-q")
    for i in range(200):
        _repo(proj / "vendor" / f"dep{i:03d}")
    plant = HOOK.format(mark=home / "PWNED", repo="vendor/dep150")
    edit = "echo v2 > vendor/dep042/lib.txt && cat vendor/dep042/lib.txt && echo EDITED"
    texts, said, took = _session(scripted, home, mechanism, plant + "true", edit)
    assert "EDITED" in texts[1] and "v2" in texts[1], texts  # vendored code stays editable
    assert "git repositories are nested" not in said + "".join(texts)
    assert took < 90, took
    (proj / "vendor" / "dep150" / "lib.txt").write_text("v2\n")
    _git(proj / "vendor" / "dep150", "commit", "-qam", "mine")
    assert not (home / "PWNED").exists()
