"""Benchmark: cost of dangerous-command detection per command, and detection / false-positive rates
on the labelled corpus and on the held-out corpora (each written before the rules were reworked for it).
Run: .venv/bin/python bench/bench_approval.py [--rounds N] [--misses]"""

from __future__ import annotations

import argparse
import statistics
import time
from pathlib import Path

from ruamel.yaml import YAML

from hermes_agent.approval.rules import analyse_command, scan_command

FIXTURES = Path(__file__).resolve().parents[1] / "tests" / "fixtures"
CORPORA = {"corpus": FIXTURES / "approval_corpus.yaml", "held-out": FIXTURES / "approval_heldout.yaml",
           "held-out-19": FIXTURES / "approval_heldout_19.yaml", "probe-19": FIXTURES / "approval_probe_19.yaml",
           "held-out-19c": FIXTURES / "approval_heldout_19c.yaml", "unseen-19c": FIXTURES / "approval_unseen_19c.yaml",
           "held-out-19d": FIXTURES / "approval_heldout_19d.yaml"}


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


def rates(name: str, corpus: dict, show_misses: bool) -> list[str]:
    """Print detection and false-positive rates for one corpus; returns its commands."""
    flagged_set = [e["cmd"] for e in corpus["hardline"] + corpus["dangerous"]]
    benign = list(corpus["benign"])
    missed = [c for c in flagged_set if not analyse_command(c).dangerous]
    hard_hits = sum(1 for e in corpus["hardline"] if analyse_command(e["cmd"]).hardline)
    false_pos = [c for c in benign if analyse_command(c).findings]
    detected = len(flagged_set) - len(missed)
    print(f"{name}: {len(flagged_set) + len(benign)} commands ({len(corpus['hardline'])} hardline, "
          f"{len(corpus['dangerous'])} dangerous, {len(benign)} benign)")
    print(f"  detection: {detected}/{len(flagged_set)} = {detected / len(flagged_set):.1%} flagged; "
          f"hardline {hard_hits}/{len(corpus['hardline'])}")
    print(f"  false positives: {len(false_pos)}/{len(benign)} = {len(false_pos) / len(benign):.1%}")
    if show_misses:
        for cmd in missed:
            print(f"    missed: {cmd!r}")
        for cmd in false_pos:
            print(f"    false positive: {cmd!r} {analyse_command(cmd).keys}")
    return flagged_set + benign


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rounds", type=int, default=50)
    parser.add_argument("--misses", action="store_true", help="list every missed and falsely flagged command")
    args = parser.parse_args()
    yaml = YAML(typ="safe", pure=True)
    commands: list[str] = []
    for name, path in CORPORA.items():
        commands += rates(name, yaml.load(path.read_text(encoding="utf-8")), args.misses)
    for cmd in commands:  # warm regex caches
        analyse_command(cmd)
    costs = sorted(per_command_cost(commands, args.rounds))
    p95 = costs[min(len(costs) - 1, int(len(costs) * 0.95))]
    warm = list(dict.fromkeys(commands))[:1000]  # within scan_command's cache (1024 entries)
    for cmd in warm:
        scan_command(cmd)
    start = time.perf_counter()
    for cmd in warm:
        scan_command(cmd)
    cached_us = (time.perf_counter() - start) / len(warm) * 1e6
    print(f"cost per command over all corpora (uncached): median {statistics.median(costs):.1f} us, "
          f"p95 {p95:.1f} us, max {costs[-1]:.1f} us, mean {statistics.fmean(costs):.1f} us")
    print(f"cost per command (cached lookup): {cached_us:.2f} us")


if __name__ == "__main__":
    main()
