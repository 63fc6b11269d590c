"""Seeding bundled skills: first run copies all, later runs update only what the user left untouched."""

from __future__ import annotations

import shutil

from hermes_agent.skills.bundled import MANIFEST, bundled_dir, bundled_skills, read_manifest, seed_bundled
from hermes_agent.skills.catalog import SkillCatalog
from hermes_agent.skills.frontmatter import check_document
from hermes_agent.skills.guard import scan_skill


def test_packaged_skills_are_valid_and_clean():
    skills = bundled_skills()
    assert 4 <= len(skills) <= 8
    for category, name, path in skills:
        meta, problems = check_document((path / "SKILL.md").read_text(), expected_name=name)
        assert problems == [] and meta["metadata"]["hermes"]["category"] == category
        assert all(f.severity in ("low", "medium") for f in scan_skill(path).findings), name


def test_first_run_seeds_everything_with_manifest(hermes_home):
    skills_dir = hermes_home / "skills"
    report = seed_bundled(skills_dir)
    names = sorted(n for _, n, _ in bundled_skills())
    assert sorted(report.added) == names
    assert sorted(read_manifest(skills_dir)) == names
    assert "git-workflow" in SkillCatalog([skills_dir]).index_text()
    again = seed_bundled(skills_dir)
    assert sorted(again.unchanged) == names and not again.changed


def test_update_respects_user_edits_and_deletions(tmp_path):
    source = tmp_path / "bundled"
    shutil.copytree(bundled_dir(), source)
    skills_dir = tmp_path / "skills"
    seed_bundled(skills_dir, source)
    edited = skills_dir / "software-development" / "git-workflow" / "SKILL.md"
    edited.write_text(edited.read_text() + "\nMy team always squashes.\n")
    shutil.rmtree(skills_dir / "research" / "systematic-research")
    for rel in ("software-development/git-workflow", "research/systematic-research",
                "software-development/code-review"):
        p = source / rel / "SKILL.md"
        p.write_text(p.read_text() + "\nNew upstream tip.\n")
    new = source / "software-development" / "new-skill"
    new.mkdir()
    (new / "SKILL.md").write_text("---\nname: new-skill\ndescription: Added in an update\n---\n")
    for where in (source, skills_dir):  # the user already has a skill called "mine"
        (where / "software-development" / "mine").mkdir()
        (where / "software-development" / "mine" / "SKILL.md").write_text(
            f"---\nname: mine\ndescription: from {where.name}\n---\n")
    report = seed_bundled(skills_dir, source)
    assert report.skipped_user_modified == ["git-workflow"]
    assert report.skipped_user_deleted == ["systematic-research"]
    assert report.updated == ["code-review"] and report.added == ["new-skill"]
    assert report.skipped_conflict == ["mine"]
    assert "from skills" in (skills_dir / "software-development/mine/SKILL.md").read_text()
    assert "My team always squashes." in edited.read_text() and "New upstream tip." not in edited.read_text()
    assert "New upstream tip." in (skills_dir / "software-development/code-review/SKILL.md").read_text()
    assert not (skills_dir / "research" / "systematic-research").exists()
    assert (skills_dir / MANIFEST).read_text().count("\n") == len(read_manifest(skills_dir))


def test_hermes_manifest_is_read_never_written_and_our_skills_keep_their_own(tmp_path):
    from hermes_agent.skills.bundled import HERMES_MANIFEST

    skills_dir = tmp_path / "skills"
    skills_dir.mkdir()
    ours = bundled_skills()
    first_cat, first_name, first_src = ours[0]
    # a home where Hermes seeded its own skill, and an older hermes-agent recorded ours in Hermes's manifest
    from hermes_agent.skills.fsutil import content_hash, copy_skill

    copy_skill(first_src, skills_dir / first_cat / first_name)
    hermes_text = f"hermes-only-skill:0123456789abcdef0123456789abcdef\n{first_name}:{content_hash(first_src, 'md5')}\n"
    (skills_dir / HERMES_MANIFEST).write_text(hermes_text)
    report = seed_bundled(skills_dir)
    assert first_name in report.unchanged and first_name not in report.skipped_conflict  # adopted, not mislabelled
    assert (skills_dir / HERMES_MANIFEST).read_text() == hermes_text
    mine = read_manifest(skills_dir)
    assert "hermes-only-skill" not in mine and set(mine) == {name for _, name, _ in ours}
    # Hermes cleaning names it does not ship from its manifest changes nothing for us
    (skills_dir / HERMES_MANIFEST).write_text("hermes-only-skill:0123456789abcdef0123456789abcdef\n")
    again = seed_bundled(skills_dir)
    assert sorted(again.unchanged) == sorted(name for _, name, _ in ours) and not again.skipped_conflict


def test_concurrent_seeding_of_a_fresh_home_is_safe(tmp_path):
    import threading

    from hermes_agent.skills.bundled import seed_bundled

    errors: list[BaseException] = []

    def seed() -> None:
        try:
            seed_bundled(tmp_path / "skills")
        except BaseException as exc:  # noqa: BLE001 - collected and asserted below
            errors.append(exc)

    threads = [threading.Thread(target=seed) for _ in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    assert any((tmp_path / "skills").rglob("SKILL.md"))
