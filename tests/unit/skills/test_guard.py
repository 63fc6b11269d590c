"""The skills guard on the malicious/benign fixture sets, plus the trust policy."""

from __future__ import annotations

from pathlib import Path

from hermes_agent.skills.guard import decide, scan_skill, scan_text, trust_for_source

from .conftest import FIXTURES

GUARD = FIXTURES / "skills_guard"


def _dirs(group: str) -> list[Path]:
    return sorted(p for p in (GUARD / group).iterdir() if p.is_dir())


def test_detection_and_false_positive_rates_on_fixture_sets(capsys):
    malicious, benign = _dirs("malicious"), _dirs("benign")
    assert len(malicious) >= 10 and len(benign) >= 10
    caught = [d.name for d in malicious if not decide(scan_skill(d), "community").allowed]
    refused = [d.name for d in benign if not decide(scan_skill(d), "community").allowed]
    flagged = [d.name for d in benign if scan_skill(d).findings]
    with capsys.disabled():
        print(f"\nskills guard: detection {len(caught)}/{len(malicious)}, benign refused "
              f"{len(refused)}/{len(benign)} {refused}, benign with any finding {len(flagged)}/{len(benign)}")
    assert len(caught) == len(malicious), sorted(set(d.name for d in malicious) - set(caught))
    # A skill that quotes an injection phrase in order to warn about it is reported, not refused.
    assert refused == []
    quoted = scan_skill(GUARD / "benign" / "injection-awareness").findings
    assert [(f.rule_id, f.severity) for f in quoted] == [("inject-ignore", "low")]
    assert "quoted as an example" in quoted[0].message


def test_each_threat_category_is_named_in_findings():
    expected = {"settings-sync": "exfil-secret-post", "ssh-key-backup": "exfil-file-send",
                "remote-debug": "revshell-devtcp", "netcat-support": "revshell-nc-exec",
                "socat-tunnel": "revshell-socat", "disk-cleanup": "destroy-rm-root", "aws-helper": "cred-read",
                "helpful-assistant": "inject-ignore", "fast-installer": "obf-base64-shell",
                "python-setup": "obf-eval-decode", "hidden-instructions": "unicode-tag-chars",
                "access-check": "unicode-bidi"}
    for name, rule in expected.items():
        report = scan_skill(GUARD / "malicious" / name)
        match = [f for f in report.findings if f.rule_id == rule]
        assert match, (name, [f.rule_id for f in report.findings])
        assert match[0].line > 0 and match[0].file and match[0].excerpt


def test_invisible_unicode_is_shown_in_excerpt_and_emoji_joiners_pass():
    findings = scan_text("hello\u200bworld\n", "SKILL.md")
    assert findings[0].rule_id == "unicode-zero-width" and "<U+200B>" in findings[0].excerpt
    assert scan_text("Team: 👩\u200d💻 and café\n") == []
    assert scan_text("\ufeffStarts with a BOM\n") == []


def test_policy_by_trust_level_and_force():
    report = scan_skill(GUARD / "malicious" / "gpu-optimizer")  # one high finding
    assert report.max_severity == "high"
    assert decide(report, "builtin").allowed
    assert decide(report, "trusted").allowed
    refused = decide(report, "community")
    assert not refused.allowed and "--force" in refused.reason and refused.blocking
    assert decide(report, "community", force=True).allowed
    critical = scan_skill(GUARD / "malicious" / "remote-debug")
    assert not decide(critical, "trusted").allowed
    assert trust_for_source("https://github.com/anthropics/skills.git") == "trusted"
    assert trust_for_source("https://github.com/someone/skills") == "community"
