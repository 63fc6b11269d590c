"""Skills hub against real git repositories in tmp_path: taps, guarded install, lock file, publish, CLI."""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
from pathlib import Path

import pytest

from hermes_agent.cli.commands import skills as cli
from hermes_agent.config.loader import load_settings
from hermes_agent.skills.hub import HubConfig, HubError, SkillsHub
from hermes_agent.skills.hub.store import dir_hash

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
GIT_ID = ["-c", "user.name=Test", "-c", "user.email=test@example.com"]
NETWORK_SOURCES = ("github", "well-known", "skills-sh", "clawhub", "claude-marketplace", "lobehub")
TAPS_ONLY = HubConfig(disabled_sources=NETWORK_SOURCES)


def git(*args: str, cwd: Path) -> str:
    return subprocess.run(["git", *GIT_ID, *args], cwd=cwd, check=True, capture_output=True,
                          text=True).stdout.strip()


@pytest.fixture
def tap_repo(tmp_path: Path) -> Path:
    """A git work tree laid out like a public skills repo, with one good and one malicious skill."""
    repo = tmp_path / "team-skills"
    shutil.copytree(FIXTURES / "skills_guard" / "benign" / "git-commits", repo / "skills" / "vcs" / "git-commits")
    shutil.copytree(FIXTURES / "skills_public" / "pdf-processing", repo / "skills" / "docs" / "pdf-processing")
    shutil.copytree(FIXTURES / "skills_guard" / "malicious" / "env-report", repo / "skills" / "ops" / "env-report")
    git("init", "-q", "-b", "main", cwd=repo)
    git("add", ".", cwd=repo)
    git("commit", "-q", "-m", "skills", cwd=repo)
    return repo


def _cli(*argv: str) -> tuple[int, str]:
    parser = argparse.ArgumentParser()
    cli.add_parser(parser.add_subparsers(dest="cmd"))
    lines: list[str] = []
    code = cli.run(parser.parse_args(["skills", *argv]), load_settings(),
                   cli.IO(out=lines.append, err=lines.append))
    return code, "\n".join(lines)


def test_install_from_cloned_git_tap_records_lock(tmp_path, hermes_home, tap_repo):
    bare = tmp_path / "team-skills.git"
    git("clone", "-q", "--bare", str(tap_repo), str(bare), cwd=tmp_path)
    hub = SkillsHub(hermes_home / "skills", config=TAPS_ONLY)
    hub.taps.add(str(bare))
    assert (hermes_home / "skills" / ".hub" / "cache" / "team-skills" / ".git").is_dir()
    assert [h.name for r in hub.search("pdf forms") for h in r.hits] == ["pdf-processing"]

    result = hub.install("team-skills/git-commits")
    assert result.installed and result.path == hermes_home / "skills" / "vcs" / "git-commits"
    lock = json.loads((hermes_home / "skills" / ".hub" / "lock.json").read_text())["installed"]["git-commits"]
    assert lock["source"] == "tap" and lock["identifier"] == "team-skills/git-commits"
    assert lock["metadata"]["source_revision"] == git("rev-parse", "HEAD", cwd=tap_repo)
    assert lock["content_hash"] == dir_hash(result.path) and lock["install_path"] == "vcs/git-commits"

    refused = hub.install("env-report")
    assert not refused.installed and refused.report.max_severity == "critical"
    assert not (hermes_home / "skills" / "ops").exists() and "env-report" not in hub.lock()
    forced = hub.install("env-report", force=True)  # a critical finding: --force does not override it (as Hermes)
    assert not forced.installed and "does not override critical" in forced.decision.reason
    assert "env-report" not in hub.lock()

    sources = {s.info.name: s.source for s in hub.installed() if s.source != "bundled"}  # ours ship too
    assert sources == {"git-commits": "hub:team-skills"}
    (result.path / "SKILL.md").write_text((result.path / "SKILL.md").read_text() + "local note\n")
    assert {s.info.name: s.modified for s in hub.installed()}["git-commits"] is True
    with pytest.raises(HubError, match="already installed"):
        hub.install("git-commits")

    assert not (hermes_home / "skills" / "ops").exists()
    events = [x.split(" ")[1] for x in (hermes_home / "skills/.hub/audit.log").read_text().splitlines()]
    assert events == ["INSTALL", "BLOCKED", "BLOCKED"]


def test_cli_local_tap_search_install_audit_snapshot_publish(tmp_path, hermes_home, tap_repo):
    (hermes_home / "config.yaml").write_text(f"skills:\n  hub:\n    disabled_sources: {list(NETWORK_SOURCES)}\n")
    code, out = _cli("tap", "add", str(tap_repo), "--name", "team")
    assert code == 0 and "3 skill(s)" in out
    code, out = _cli("search", "git")
    assert code == 0 and "tap:team/git-commits  [community]" in out
    code, out = _cli("install", "env-report")
    assert code == 1 and "Refused env-report" in out and "exfil-env-dump" in out
    code, out = _cli("install", "pdf-processing")
    assert code == 0 and "Installed pdf-processing" in out
    assert (hermes_home / "skills/docs/pdf-processing/scripts/extract.py").is_file()
    code, out = _cli("list")
    assert "pdf-processing" in out and "hub:team" in out
    code, out = _cli("inspect", "env-report")
    assert "tap:team/env-report" in out and "critical" in out
    code, out = _cli("audit")
    assert code == 0 and "pdf-processing: clean" in out

    snap = tmp_path / "snap.json"
    assert _cli("snapshot", "export", str(snap))[0] == 0
    rows = json.loads(snap.read_text())["skills"]
    assert rows[0]["name"] == "pdf-processing" and rows[0]["revision"] == git("rev-parse", "HEAD", cwd=tap_repo)
    assert rows[0]["source"] == "tap" and rows[0]["identifier"] == "team/pdf-processing"

    mine = hermes_home / "skills" / "notes" / "my-notes"
    mine.mkdir(parents=True)
    (mine / "SKILL.md").write_text("---\nname: my-notes\ndescription: Team note-taking conventions\n---\nBe brief.\n")
    code, out = _cli("publish", "my-notes", "--to", "team")
    assert code == 0 and "committed" in out
    assert (tap_repo / "skills" / "notes" / "my-notes" / "SKILL.md").is_file()
    assert git("log", "-1", "--format=%s", cwd=tap_repo) == "Publish skill my-notes"
    assert git("status", "--porcelain", cwd=tap_repo) == ""

    code, out = _cli("uninstall", "pdf-processing")
    assert code == 0 and not (hermes_home / "skills/docs").exists()
    code, out = _cli("tap", "remove", "team")
    assert code == 0 and _cli("tap", "list")[1] == "No taps configured."
    code, out = _cli("install", "nothing-here")
    assert code == 1 and "no skill named 'nothing-here'" in out


def test_file_url_tap_works_offline(tmp_path, hermes_home, tap_repo):
    hub = SkillsHub(hermes_home / "skills", config=TAPS_ONLY)
    tap = hub.taps.add(tap_repo.as_uri())
    assert hub.taps.root(tap) == tap_repo
    assert hub.install("pdf-processing").installed
    assert hub.lock()["pdf-processing"]["metadata"]["source_revision"] == git("rev-parse", "HEAD", cwd=tap_repo)
