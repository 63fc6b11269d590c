"""Benchmark: the skills guard's detection and false-positive rates on both fixture corpora, and
its cost (median ms per skill; one 512 KB file of mixed prose and code).

Run: .venv/bin/python bench/bench_skills_guard.py [--runs 5]"""

from __future__ import annotations

import argparse
import statistics
import time
from pathlib import Path

from hermes_agent.skills.guard import decide, scan_skill, scan_text

FIXTURES = Path(__file__).resolve().parents[1] / "tests" / "fixtures"
CORPORA = ("skills_guard", "skills_guard_evasive")


def rates(corpus: Path) -> tuple[str, list[str], list[str]]:
    """One summary line, the malicious skills let through and the benign skills refused (community trust)."""
    mal = sorted(p for p in (corpus / "malicious").iterdir() if p.is_dir())
    ben = sorted(p for p in (corpus / "benign").iterdir() if p.is_dir())
    missed = [d.name for d in mal if decide(scan_skill(d), "community").allowed]
    refused = [d.name for d in ben if not decide(scan_skill(d), "community").allowed]
    line = (f"{corpus.name}: malicious refused {len(mal) - len(missed)}/{len(mal)}, "
            f"benign refused {len(refused)}/{len(ben)}")
    return line, missed, refused


def cost(runs: int) -> tuple[float, float]:
    """Median ms to scan every fixture skill once (per skill), and to scan one 512 KB text file."""
    skills = [p for c in CORPORA for g in ("malicious", "benign") for p in (FIXTURES / c / g).iterdir()]
    per_skill = []
    for _ in range(runs):
        t0 = time.perf_counter()
        for s in skills:
            scan_skill(s)
        per_skill.append((time.perf_counter() - t0) * 1000 / len(skills))
    chunk = ("Run `pytest -q` from the repo root; see https://docs.example.com/guide.\n"
             "x = ''.join(['a', 'b']) + 'c'  # data = 'aGVsbG8gd29ybGQ='\n")
    big = chunk * (512 * 1024 // len(chunk))
    big_ms = []
    for _ in range(max(1, runs // 2)):
        t0 = time.perf_counter()
        scan_text(big, "references/big.md")
        big_ms.append((time.perf_counter() - t0) * 1000)
    return statistics.median(per_skill), statistics.median(big_ms)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=5)
    args = ap.parse_args()
    for name in CORPORA:
        line, missed, refused = rates(FIXTURES / name)
        print(line + (f"  missed={missed}" if missed else "") + (f"  refused={refused}" if refused else ""))
    per_skill, big = cost(args.runs)
    print(f"scan cost: {per_skill:.1f} ms median per fixture skill; {big:.0f} ms for one 512 KB file")


if __name__ == "__main__":
    main()
