"""Rates on the issue-19 held-out corpus (tests/fixtures/approval_heldout_19.yaml, written and committed before
the rules were tuned for its classes) and on the probes written after the first round
(tests/fixtures/approval_probe_19.yaml). Only overall rates are required (>= 95% caught, <= 3% false alarms);
single misses stay visible in `bench/bench_approval.py --misses`."""

from __future__ import annotations

from pathlib import Path

import pytest
from ruamel.yaml import YAML

from hermes_agent.approval.rules import detect_dangerous_command, detect_hardline_command

FIXTURES = Path(__file__).parents[2] / "fixtures"
CORPORA = {name: YAML(typ="safe", pure=True).load((FIXTURES / f"{name}.yaml").read_text("utf-8"))
           for name in ("approval_heldout_19", "approval_probe_19")}


@pytest.mark.parametrize("name", CORPORA)
def test_size(name: str) -> None:
    corpus = CORPORA[name]
    assert len(corpus["hardline"]) + len(corpus["dangerous"]) >= 100 and len(corpus["benign"]) >= 80


@pytest.mark.parametrize("name", CORPORA)
def test_detection_rate(name: str) -> None:
    corpus = CORPORA[name]
    dangerous = [e["cmd"] for e in corpus["hardline"] + corpus["dangerous"]]
    missed = [c for c in dangerous if not detect_dangerous_command(c)[0]]
    assert len(missed) <= 0.05 * len(dangerous), missed
    assert [e["cmd"] for e in corpus["hardline"] if not detect_hardline_command(e["cmd"])[0]] == []


@pytest.mark.parametrize("name", CORPORA)
def test_false_alarm_rate(name: str) -> None:
    corpus = CORPORA[name]
    flagged = [c for c in corpus["benign"] if detect_dangerous_command(c)[0]]
    assert len(flagged) <= 0.03 * len(corpus["benign"]), flagged
