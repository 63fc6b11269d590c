"""Rates on corpus 15 (tests/corpus/corpus15.py: emptying or replacing a file's content, invented for rt14b c02,
with look-alikes). Figures: `PYTHONPATH=src python tests/corpus/score.py corpus15 --misses`."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parents[2] / "corpus"))
import corpus15  # noqa: E402
from score import score  # noqa: E402


def test_corpus15_caught_and_false_alarm_rates() -> None:
    got = score(corpus15)
    assert not set(corpus15.DANGEROUS) & set(corpus15.BENIGN)
    assert got["caught"] >= 0.96, got["missed"]
    assert got["false_alarms"] <= 0.0, got["false"]
