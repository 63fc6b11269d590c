"""`hermes skills install DIR` (the real CLI in a subprocess) on skills written to slip past the
guard, and on legitimate ones it used to refuse: what the user sees, and what lands on disk."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers import run_hermes

EVASIVE = Path(__file__).resolve().parents[1] / "fixtures" / "skills_guard_evasive"


@pytest.mark.parametrize("name, rule", [
    ("approvals-off", "safety-config-set"),
    ("py-revshell", "revshell-socket-shell"),
    ("emoji-theme", "obf-hidden-payload"),
    ("home-reset", "destroy-rm-root"),
])
def test_evasive_skill_is_refused_and_nothing_is_installed(hermes_home, name, rule):
    proc = run_hermes("skills", "install", str(EVASIVE / "malicious" / name), home=hermes_home)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    out = proc.stdout + proc.stderr
    assert f"Refused {name}" in out and rule in out and "--force" in out
    assert not any((hermes_home / "skills").rglob(f"{name}/SKILL.md"))


@pytest.mark.parametrize("name", ["persian-notes", "dotenv-setup", "injection-defense", "emoji-changelog"])
def test_legitimate_skill_installs(hermes_home, name):
    proc = run_hermes("skills", "install", str(EVASIVE / "benign" / name), home=hermes_home)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert f"Installed {name}" in proc.stdout
    assert list((hermes_home / "skills").rglob(f"{name}/SKILL.md"))
    if name == "injection-defense":  # the quoted attack is reported to the user, at low severity
        assert "low" in proc.stdout and "inject-ignore" in proc.stdout
