"""Media per scope (red-team a35/a45) in the one path table the file tools and the sandbox share: a session reads
its own scope's documents, images and speech, never another chat's or a cron job's, nor files left flat in
cache/documents; a skill's dot-files (skills/deploy/.env) and the hub's .hub/ are hidden, the skill itself is not."""

from __future__ import annotations

import pytest

from hermes_agent import paths
from hermes_agent.approval.policy import PathPolicy


@pytest.fixture
def home(tmp_path, monkeypatch):
    hh = tmp_path / "home" / ".hermes"
    monkeypatch.setenv("HERMES_HOME", str(hh))
    for rel in ("cache/documents/evt1_flat.txt", "skills/deploy/.env", "skills/deploy/SKILL.md",
                "skills/devops/deploy/scripts/.token", "skills/.hub/lock.json", "image_cache/local/old.png"):
        (hh / rel).parent.mkdir(parents=True, exist_ok=True)
        (hh / rel).write_text("x")
    return hh


def _policy(hh, scope: str) -> PathPolicy:
    return PathPolicy.build(workspace=[str(hh.parent / "work")], hermes_home=str(hh), home=str(hh.parent),
                            media_scope=scope)


def _write(kind: str, scope: str, name: str = "f.txt"):
    target = paths.media_cache(kind, scope) / name
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text("x")
    return str(target)


def test_a_chat_reads_its_own_media_only(home):
    alice, bob = paths.media_scope_of("agent:main:telegram:dm:111"), paths.media_scope_of("agent:main:telegram:dm:222")
    assert alice != bob and alice == paths.media_scope_of("agent:main:telegram:dm:111") and "111" not in alice
    mine, theirs = _write("documents", alice), _write("documents", bob)
    policy = _policy(home, alice)
    assert policy.check_read(mine).allowed
    assert not policy.check_read(theirs).allowed
    assert not policy.check_read(str(home / "cache/documents/evt1_flat.txt")).allowed  # older flat layout


def test_a_cron_job_sees_no_chat_and_the_cli_no_cron(home):
    job = paths.media_scope_of("job42", "cron")
    chat_doc, job_img = _write("documents", paths.media_scope_of("agent:main:slack:dm:U1")), _write("images", job)
    assert job.startswith("cron-")
    assert not _policy(home, job).check_read(chat_doc).allowed and _policy(home, job).check_read(job_img).allowed
    assert not _policy(home, "local").check_read(job_img).allowed
    assert _policy(home, "local").check_read(str(home / "image_cache/local/old.png")).allowed  # Hermes's older name
    assert not _policy(home, "").check_read(job_img).allowed  # no scope: no media at all


def test_skill_dot_entries_are_hidden_but_the_skill_is_not(home):
    policy = _policy(home, "local")
    assert policy.check_read(str(home / "skills/deploy/SKILL.md")).allowed
    for rel in ("skills/deploy/.env", "skills/devops/deploy/scripts/.token", "skills/.hub/lock.json"):
        assert not policy.check_read(str(home / rel)).allowed, rel


def test_a_scope_is_a_folder_name_never_a_path(home):
    outside = _write("documents", "local")
    policy = PathPolicy.build(workspace=[str(home.parent / "work")], hermes_home=str(home), home=str(home.parent),
                              media_scope="../../skills")
    assert not policy.check_read(outside).allowed and not policy.check_read(str(home / "config.yaml")).allowed
