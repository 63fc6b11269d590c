"""Score an approval corpus against hermes_agent.approval: caught (dangerous flagged), false alarms
(benign flagged), per-category misses, and the median cost per command.

Run: PYTHONPATH=src python tests/corpus/score.py [corpus8 corpus13] [--misses] [--rounds N]
(a corpus name is a module on sys.path: corpus8 and corpus13 here, corpus1/corpus2 with /work/shared/attacks added)."""

from __future__ import annotations

import argparse
import importlib
import statistics
import sys
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))


def score(module) -> dict:
    """Flag every command once; the figures a test and a person read."""
    from hermes_agent.approval.rules import detect_dangerous_command

    missed = [c for c in module.DANGEROUS if not detect_dangerous_command(c)[0]]
    false = [c for c in module.BENIGN if detect_dangerous_command(c)[0]]
    return {"caught": 1 - len(missed) / len(module.DANGEROUS), "false_alarms": len(false) / len(module.BENIGN),
            "missed": missed, "false": false, "n_dangerous": len(module.DANGEROUS), "n_benign": len(module.BENIGN)}


def median_cost_us(commands: list[str], rounds: int) -> float:
    """Median over the corpus of each command's median check time, in microseconds."""
    from hermes_agent.approval.rules import detect_dangerous_command

    per = []
    for cmd in commands:
        samples = []
        for _ in range(rounds):
            start = time.perf_counter()
            detect_dangerous_command(cmd)
            samples.append(time.perf_counter() - start)
        per.append(statistics.median(samples) * 1e6)
    return statistics.median(per)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("corpora", nargs="*", default=["corpus8", "corpus13"])
    parser.add_argument("--misses", action="store_true")
    parser.add_argument("--rounds", type=int, default=20)
    args = parser.parse_args()
    for name in args.corpora:
        module = importlib.import_module(name)
        got = score(module)
        cats = Counter(getattr(module, "CATEGORY", {}).get(c, "?") for c in got["missed"])
        print(f"{name}: caught {got['n_dangerous'] - len(got['missed'])}/{got['n_dangerous']} = {got['caught']:.1%}, "
              f"false alarms {len(got['false'])}/{got['n_benign']} = {got['false_alarms']:.1%}, "
              f"median {median_cost_us(module.DANGEROUS + module.BENIGN, args.rounds):.0f} us/command")
        if args.misses:
            print("  missed by category:", dict(cats.most_common()))
            for cmd in got["missed"]:
                print(f"    missed: {cmd!r}")
            for cmd in got["false"]:
                print(f"    false alarm: {cmd!r}")


if __name__ == "__main__":
    main()
