"""Benchmark: cost of dangerous-command detection per command over the approval corpus, plus the
detection and false-positive rates. Run: .venv/bin/python bench/bench_approval.py [--rounds N]"""

from __future__ import annotations

import argparse
import statistics
import time
from pathlib import Path

from ruamel.yaml import YAML

from hermes_agent.approval.rules import analyse_command, scan_command

CORPUS = Path(__file__).resolve().parents[1] / "tests" / "fixtures" / "approval_corpus.yaml"


def per_command_cost(commands: list[str], rounds: int) -> list[float]:
    """Median over `rounds` uncached scans of each command, in microseconds."""
    costs = []
    for cmd in commands:
        samples = []
        for _ in range(rounds):
            start = time.perf_counter()
            analyse_command(cmd)
            samples.append(time.perf_counter() - start)
        costs.append(statistics.median(samples) * 1e6)
    return costs


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rounds", type=int, default=50)
    args = parser.parse_args()
    corpus = YAML(typ="safe", pure=True).load(CORPUS.read_text(encoding="utf-8"))
    flagged_set = [e["cmd"] for e in corpus["hardline"] + corpus["dangerous"]]
    benign = list(corpus["benign"])
    commands = flagged_set + benign
    for cmd in commands:  # warm regex caches
        analyse_command(cmd)
    costs = sorted(per_command_cost(commands, args.rounds))
    p95 = costs[min(len(costs) - 1, int(len(costs) * 0.95))]
    detected = sum(1 for c in flagged_set if analyse_command(c).dangerous)
    hard_hits = sum(1 for e in corpus["hardline"] if analyse_command(e["cmd"]).hardline)
    false_pos = [c for c in benign if analyse_command(c).findings]
    for cmd in commands:
        scan_command(cmd)
    start = time.perf_counter()
    for cmd in commands:
        scan_command(cmd)
    cached_us = (time.perf_counter() - start) / len(commands) * 1e6
    print(f"corpus: {len(commands)} commands ({len(corpus['hardline'])} hardline, {len(corpus['dangerous'])} dangerous, "
          f"{len(benign)} benign)")
    print(f"detection: {detected}/{len(flagged_set)} = {detected / len(flagged_set):.1%} flagged; "
          f"hardline {hard_hits}/{len(corpus['hardline'])}")
    print(f"false positives: {len(false_pos)}/{len(benign)} = {len(false_pos) / len(benign):.1%}")
    for cmd in false_pos:
        print(f"  false positive: {cmd!r}")
    print(f"cost per command (uncached): median {statistics.median(costs):.1f} us, p95 {p95:.1f} us, "
          f"max {costs[-1]:.1f} us, mean {statistics.fmean(costs):.1f} us")
    print(f"cost per command (cached lookup): {cached_us:.2f} us")


if __name__ == "__main__":
    main()
