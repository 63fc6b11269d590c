"""Per-turn budget (issue 24): what one no-op tool round trip of the real `hermes chat -q` costs in state.db
transactions and SQL statements, files opened, regexes compiled and characters JSON-encoded, against bench/turn_budget.json. Counts, not
clocks (bench/turn_counts.py: SQLite's trace callback on hermes's own connections, the `open` audit event): the
same code gives the same figures on any machine. A change that needs more raises the budget on purpose."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
BUDGET = json.loads((ROOT / "bench" / "turn_budget.json").read_text(encoding="utf-8"))
KEYS = ("transactions", "statements", "opens", "regexes", "json_chars")


def test_a_no_op_tool_round_trip_stays_within_its_budget() -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "OPENROUTER_", "HERMES_"))}
    proc = subprocess.run([sys.executable, str(ROOT / "bench" / "turn_counts.py"), "--turns", "8", "--show"],
                          capture_output=True, text=True, env=env, timeout=300, stdin=subprocess.DEVNULL)
    assert proc.returncode == 0, proc.stderr[-2000:]
    got = json.loads(proc.stdout)
    print(", ".join(f"{k} {got[k]} (budget {BUDGET[k]})" for k in KEYS))
    assert got["transactions"] >= 1, "no message was stored per round trip: the count is not seeing hermes's writes"
    over = [f"{k}: {got[k]} > {BUDGET[k]}" for k in KEYS if got[k] > BUDGET[k]]
    assert not over, (f"a tool round trip grew ({'; '.join(over)}): statements {got['statements_per_turn']}, "
                      f"files {got['opened_per_turn']}. Batch the writes, read files only when they changed, "
                      "compile regexes once, encode each message once, or raise bench/turn_budget.json on purpose.")
