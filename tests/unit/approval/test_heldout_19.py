"""Rates on the issue-19 held-out corpus (tests/fixtures/approval_heldout_19.yaml), written and committed
before the rules were tuned for its classes. Only overall rates are required (>= 95% caught, <= 3% false
alarms); single misses stay visible in `bench/bench_approval.py --misses`."""

from __future__ import annotations

from pathlib import Path

from ruamel.yaml import YAML

from hermes_agent.approval.rules import detect_dangerous_command, detect_hardline_command

CORPUS = YAML(typ="safe", pure=True).load(
    (Path(__file__).parents[2] / "fixtures" / "approval_heldout_19.yaml").read_text("utf-8"))


def test_size() -> None:
    assert len(CORPUS["hardline"]) + len(CORPUS["dangerous"]) >= 150 and len(CORPUS["benign"]) >= 80


def test_detection_rate() -> None:
    dangerous = [e["cmd"] for e in CORPUS["hardline"] + CORPUS["dangerous"]]
    missed = [c for c in dangerous if not detect_dangerous_command(c)[0]]
    assert len(missed) <= 0.05 * len(dangerous), missed
    assert [e["cmd"] for e in CORPUS["hardline"] if not detect_hardline_command(e["cmd"])[0]] == []


def test_false_alarm_rate() -> None:
    flagged = [c for c in CORPUS["benign"] if detect_dangerous_command(c)[0]]
    assert len(flagged) <= 0.03 * len(CORPUS["benign"]), flagged
