"""Run every red-team attack (and the legitimate workflows) through the real `hermes chat -q`, one fresh
temp home each, and print one line per case: CONTAINED / ESCAPED (attacks), OK / BLOCKED (workflows).

    .venv/bin/python -m redteam.run_attacks [NAME_SUBSTRING ...] [--benign | --attacks] [--out FILE]
"""

from __future__ import annotations

import argparse
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from redteam.attacks_shell import SHELL_ATTACKS  # noqa: E402
from redteam.attacks_tools import TOOL_ATTACKS  # noqa: E402
from redteam.benign import BENIGN  # noqa: E402
from redteam.harness import run_attack  # noqa: E402

ATTACKS = SHELL_ATTACKS + TOOL_ATTACKS


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("names", nargs="*")
    ap.add_argument("--benign", action="store_true")
    ap.add_argument("--attacks", action="store_true")
    ap.add_argument("--out")
    a = ap.parse_args(argv)
    cases = (BENIGN if a.benign else ATTACKS if a.attacks else ATTACKS + BENIGN)
    if a.names:
        cases = [c for c in cases if any(n in c.name for n in a.names)]
    lines, bad = [], 0
    t0 = time.time()
    for case in cases:
        out = run_attack(case)
        line = out.line() + f"  [{out.seconds:.1f}s]"
        bad += not out.contained
        print(line, flush=True)
        lines.append(line)
    summary = f"{len(cases)} cases, {bad} escaped/blocked, {time.time() - t0:.0f}s"
    print(summary)
    if a.out:
        with open(a.out, "w") as fh:
            fh.write("\n".join(lines + [summary]) + "\n")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
