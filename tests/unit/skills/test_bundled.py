"""Bundled skills are read where they are packaged, never copied into the skills folder shared with Hermes;
copies an earlier version seeded are taken back out unless the user edited them (then they are the user's)."""

from __future__ import annotations

import threading

from hermes_agent.skills.bundled import (
    HERMES_MANIFEST,
    MANIFEST,
    bundled_skills,
    hidden_bundled,
    read_manifest,
    retire_seeded,
)
from hermes_agent.skills.catalog import SkillCatalog, skill_roots
from hermes_agent.skills.frontmatter import check_document
from hermes_agent.skills.fsutil import content_hash, copy_skill
from hermes_agent.skills.guard import scan_skill


def test_packaged_skills_are_valid_and_clean():
    skills = bundled_skills()
    assert 4 <= len(skills) <= 8
    for category, name, path in skills:
        meta, problems = check_document((path / "SKILL.md").read_text(), expected_name=name)
        assert problems == [] and meta["metadata"]["hermes"]["category"] == category
        assert all(f.severity in ("low", "medium") for f in scan_skill(path).findings), name


def _catalog(skills_dir):
    return SkillCatalog(skill_roots(skills_dir), hidden=hidden_bundled(skills_dir), use_disk_cache=False)


def _seed_like_before(skills_dir, manifest_name=MANIFEST):
    """A home as an earlier hermes-agent left it: every bundled skill copied in, with its manifest."""
    lines = []
    for category, name, src in bundled_skills():
        copy_skill(src, skills_dir / category / name)
        lines.append(f"{name}:{content_hash(src, 'md5')}\n")
    (skills_dir / manifest_name).write_text("".join(lines))


def test_a_fresh_home_gets_no_copies_but_sees_every_bundled_skill(tmp_path):
    skills_dir = tmp_path / "skills"
    skills_dir.mkdir()
    report = retire_seeded(skills_dir)
    assert report.removed == [] and list(skills_dir.rglob("SKILL.md")) == []
    names = {n for _, n, _ in bundled_skills()}
    assert names <= {s.name for s in _catalog(skills_dir).visible()}
    assert "git-workflow" in _catalog(skills_dir).index_text()


def test_seeded_copies_are_retired_edits_kept_deletions_stay_hidden(tmp_path):
    skills_dir = tmp_path / "skills"
    skills_dir.mkdir()
    _seed_like_before(skills_dir)
    edited = skills_dir / "software-development" / "git-workflow" / "SKILL.md"
    edited.write_text(edited.read_text() + "\nMy team always squashes.\n")
    import shutil

    shutil.rmtree(skills_dir / "research" / "systematic-research")
    (skills_dir / "mine" / "own").mkdir(parents=True)
    (skills_dir / "mine" / "own" / "SKILL.md").write_text("---\nname: own\ndescription: mine\n---\n")

    report = retire_seeded(skills_dir)
    assert report.kept_user_modified == ["git-workflow"]
    assert report.hidden_user_deleted == ["systematic-research"]
    assert "code-review" in report.removed and not (skills_dir / "software-development" / "code-review").exists()
    assert {p.parent.name for p in skills_dir.rglob("SKILL.md")} == {"git-workflow", "own"}
    assert not (skills_dir / "hermes").exists()  # category folders we emptied go too
    visible = {s.name: s for s in _catalog(skills_dir).visible()}
    assert "systematic-research" not in visible  # the user deleted it: it stays gone
    assert "My team always squashes." in visible["git-workflow"].path.read_text()  # the user's copy wins
    assert "code-review" in visible and "own" in visible
    assert read_manifest(skills_dir) == {"systematic-research": read_manifest(skills_dir)["systematic-research"]}
    assert retire_seeded(skills_dir).removed == []  # idempotent


def test_copies_recorded_in_hermes_manifest_by_older_versions_are_retired_and_it_is_never_written(tmp_path):
    skills_dir = tmp_path / "skills"
    skills_dir.mkdir()
    _seed_like_before(skills_dir, HERMES_MANIFEST)
    hermes_text = (skills_dir / HERMES_MANIFEST).read_text() + "hermes-only:0123456789abcdef0123456789abcdef\n"
    (skills_dir / HERMES_MANIFEST).write_text(hermes_text)
    report = retire_seeded(skills_dir)
    assert sorted(report.removed) == sorted(n for _, n, _ in bundled_skills())
    assert (skills_dir / HERMES_MANIFEST).read_text() == hermes_text
    assert not (skills_dir / MANIFEST).exists()


def test_a_users_skill_with_a_bundled_name_is_never_touched(tmp_path):
    skills_dir = tmp_path / "skills"
    (skills_dir / "x" / "code-review").mkdir(parents=True)
    (skills_dir / "x" / "code-review" / "SKILL.md").write_text("---\nname: code-review\ndescription: mine\n---\n")
    assert retire_seeded(skills_dir).removed == []
    assert _catalog(skills_dir).get("code-review").description == "mine"


def test_concurrent_retiring_is_safe(tmp_path):
    skills_dir = tmp_path / "skills"
    skills_dir.mkdir()
    _seed_like_before(skills_dir)
    errors: list[BaseException] = []

    def retire() -> None:
        try:
            retire_seeded(skills_dir)
        except BaseException as exc:  # noqa: BLE001 - collected and asserted below
            errors.append(exc)

    threads = [threading.Thread(target=retire) for _ in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == [] and list(skills_dir.rglob("SKILL.md")) == []
