"""Review mode `propose`: agent changes wait as proposals, then the user applies or rejects them."""

from __future__ import annotations

import argparse

from hermes_agent.cli.commands import skills as cli
from hermes_agent.config.loader import load_settings
from hermes_agent.skills.bundled import bundled_skills

from .conftest import skill_md


def _propose(home):
    (home / "config.yaml").write_text("skills:\n  review: propose\n")


def _cli(*argv: str, ask=None) -> tuple[int, str]:
    parser = argparse.ArgumentParser()
    cli.add_parser(parser.add_subparsers(dest="cmd"))
    args = parser.parse_args(["skills", *argv])
    lines: list[str] = []
    code = cli.run(args, load_settings(), cli.IO(out=lines.append, err=lines.append, ask=ask))
    return code, "\n".join(lines)


def test_propose_end_to_end_create_then_apply(call, hermes_home):
    _propose(hermes_home)
    out = call("skill_manage", action="create", name="lint-fix", category="dev",
               content=skill_md("lint-fix", "Fix lint errors", "# Lint\nruff check --fix\n"))
    assert out["proposed"] is True and "NOT live" in out["message"]
    live = hermes_home / "skills" / "dev" / "lint-fix" / "SKILL.md"
    assert not live.exists()
    assert call("skills_list")["count"] == len(bundled_skills())  # only the ones that ship with hermes-agent
    assert "proposed, not live" in call("skill_view", name="lint-fix")["status"]
    # A follow-up patch builds on the pending proposal and merges into it.
    out2 = call("skill_manage", action="patch", name="lint-fix", old_string="ruff check --fix",
                new_string="ruff check --fix && ruff format")
    assert out2["proposal_id"] == out["proposal_id"]
    pdir = hermes_home / "skills" / ".proposals" / out["proposal_id"]
    assert (pdir / "files" / "SKILL.md").read_text().endswith("ruff format\n")
    assert "+ruff check --fix && ruff format" in (pdir / "diff.patch").read_text()

    code, text = _cli("review")
    assert code == 0 and out["proposal_id"] in text and "+++ b/dev/lint-fix/SKILL.md" in text
    code, text = _cli("review", "--apply", out["proposal_id"])
    assert code == 0 and live.read_text().endswith("ruff format\n")
    assert not pdir.exists()
    assert "lint-fix" in [s["name"] for s in call("skills_list")["skills"]]


def test_propose_patch_of_live_skill_reject_and_interactive(call, hermes_home):
    assert call("skill_manage", action="create", name="tidy", content=skill_md("tidy", body="old step\n"))["success"]
    live = hermes_home / "skills" / "tidy" / "SKILL.md"
    original = live.read_text()
    _propose(hermes_home)
    p1 = call("skill_manage", action="patch", name="tidy", old_string="old step", new_string="new step")
    assert live.read_text() == original
    assert call("skill_view", name="tidy")["pending_proposal"] == p1["proposal_id"]
    code, text = _cli("review", "--reject", p1["proposal_id"])
    assert code == 0 and live.read_text() == original

    p2 = call("skill_manage", action="delete", name="tidy")
    assert p2["proposed"] is True and live.exists()
    answers = iter(["y"])
    code, text = _cli("review", ask=lambda prompt: next(answers))
    assert "-old step" in text and "Applied" in text and not live.exists()


def test_apply_refuses_when_live_skill_changed_since(call, hermes_home):
    call("skill_manage", action="create", name="drift", content=skill_md("drift", body="a\n"))
    _propose(hermes_home)
    prop = call("skill_manage", action="edit", name="drift", content=skill_md("drift", body="b\n"))
    live = hermes_home / "skills" / "drift" / "SKILL.md"
    live.write_text(skill_md("drift", body="user edit\n"))
    code, text = _cli("review", "--apply", prop["proposal_id"])
    assert code == 1 and "changed since" in text and "user edit" in live.read_text()
    code, _ = _cli("review", "--apply", prop["proposal_id"], "--force")
    assert code == 0 and live.read_text().endswith("b\n")


def test_slash_command_runs_review(call, hermes_home):
    _propose(hermes_home)
    prop = call("skill_manage", action="create", name="via-slash", content=skill_md("via-slash"))
    lines: list[str] = []
    assert cli.slash(load_settings(), "review", out=lines.append) == 0
    assert any(prop["proposal_id"] in ln for ln in lines)
    assert cli.slash(load_settings(), f"review --apply {prop['proposal_id']}", out=lines.append) == 0
    assert (hermes_home / "skills" / "via-slash" / "SKILL.md").is_file()
    assert cli.slash(load_settings(), "bogus", out=lines.append) == 2 and lines[-1].startswith("usage: /skills")
