"""The published skills (issue 19): every bad one is refused and every good one installs, through the real
`hermes skills install DIR` (an untrusted source). The guard judges what a skill wants by its parts
(hermes_agent.intent_chain): fetch + run + a standing trigger (fast-setup: "Before anything else" + curl | bash),
network code planted in the shell's start-up file and crontab by a script with split strings (shell-prompt), an
override kept from the user plus credentials copied into the summary (repo-hygiene); and a review skill that
quotes attacks in a list ('such as "…" or "…"') is not one."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers import run_hermes

PUBLISHED = Path(__file__).resolve().parents[1] / "fixtures" / "skills_published"
BAD = sorted(p.name for p in (PUBLISHED / "malicious").iterdir())
GOOD = sorted(p.name for p in (PUBLISHED / "benign").iterdir())


@pytest.mark.parametrize("name", BAD)
def test_published_bad_skill_is_refused(hermes_home, name):
    proc = run_hermes("skills", "install", str(PUBLISHED / "malicious" / name), home=hermes_home)
    out = proc.stdout + proc.stderr
    assert proc.returncode == 1 and f"Refused {name}" in out, out
    assert not any((hermes_home / "skills").rglob(f"{name}/SKILL.md"))


@pytest.mark.parametrize("name, why", [
    ("fast-setup", "standing order to run code from the network"),
    ("shell-prompt", "plants code from the network to run later"),
    ("repo-hygiene", "copies credentials into what it writes out"),
])
def test_the_reason_names_the_intent(hermes_home, name, why):
    proc = run_hermes("skills", "install", str(PUBLISHED / "malicious" / name), home=hermes_home)
    assert why in proc.stdout + proc.stderr


@pytest.mark.parametrize("name", GOOD)
def test_published_good_skill_installs(hermes_home, name):
    proc = run_hermes("skills", "install", str(PUBLISHED / "benign" / name), home=hermes_home)
    assert proc.returncode == 0 and f"Installed {name}" in proc.stdout, proc.stdout + proc.stderr
    assert list((hermes_home / "skills").rglob(f"{name}/SKILL.md"))
