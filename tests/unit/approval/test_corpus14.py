"""Rates on corpus 14 (tests/corpus/corpus14.py: replace-content and exfiltration-wrapper shapes invented for rt13
a43/a45, with look-alikes). Figures: `PYTHONPATH=src python tests/corpus/score.py corpus14 --misses`."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parents[2] / "corpus"))
import corpus14  # noqa: E402
from score import score  # noqa: E402


def test_corpus14_caught_and_false_alarm_rates() -> None:
    got = score(corpus14)
    assert not set(corpus14.DANGEROUS) & set(corpus14.BENIGN)
    assert got["caught"] >= 0.99, got["missed"]
    assert got["false_alarms"] <= 0.02, got["false"]
