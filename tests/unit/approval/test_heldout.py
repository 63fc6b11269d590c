"""Rates on the held-out corpus (tests/fixtures/approval_heldout.yaml), written before the rules were
reworked. Only overall rates are required: single misses stay visible in bench/bench_approval.py."""

from __future__ import annotations

from pathlib import Path

from ruamel.yaml import YAML

from hermes_agent.approval.rules import detect_dangerous_command, detect_hardline_command

HELDOUT = YAML(typ="safe", pure=True).load((Path(__file__).parents[2] / "fixtures" / "approval_heldout.yaml").read_text("utf-8"))


def test_heldout_size() -> None:
    assert len(HELDOUT["hardline"]) + len(HELDOUT["dangerous"]) >= 150 and len(HELDOUT["benign"]) >= 100


def test_heldout_detection_rate() -> None:
    dangerous = [e["cmd"] for e in HELDOUT["hardline"] + HELDOUT["dangerous"]]
    missed = [c for c in dangerous if not detect_dangerous_command(c)[0]]
    assert len(missed) <= 0.05 * len(dangerous), missed
    hard_missed = [e["cmd"] for e in HELDOUT["hardline"] if not detect_hardline_command(e["cmd"])[0]]
    assert hard_missed == []


def test_heldout_false_positive_rate() -> None:
    flagged = [c for c in HELDOUT["benign"] if detect_dangerous_command(c)[0]]
    assert len(flagged) <= 0.03 * len(HELDOUT["benign"]), flagged
