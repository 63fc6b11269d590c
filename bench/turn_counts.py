"""Deterministic cost of one no-op tool round trip in the real `hermes chat -q` (no clock involved): state.db
transactions and SQL statements (SQLite's trace callback on every connection hermes opens), files opened (the
`open` audit event), regular expressions compiled and characters JSON-encoded (json.dumps: a request's
history encoded again each turn would show as its whole size), per model round trip of a loop of read-only `todo` calls.

Usage: python bench/turn_counts.py [--turns 10] [--show] [--tool terminal]   (prints one JSON object: the figures per round trip,
(a (2 + N)-turn run - a 2-turn run) / N in one warm home, so what the first tool call of a run loads once is
not counted; `--show` also lists the statements (values elided) and files of the extra round trips).
tests/unit/test_turn_budget.py holds them to bench/turn_budget.json."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from collections import Counter
from pathlib import Path

HERE = Path(__file__).resolve().parent
BASE = 2  # turns in the baseline run: the first tool call's one-time imports and set-up fall in both runs
sys.path.insert(0, str(HERE))


def _child() -> int:
    """Run as the hermes process: count, then hand over to hermes's own main()."""
    import json as json_module
    import re._compiler as compiler
    import sqlite3

    out = os.environ["TURN_COUNTS_OUT"]
    sql: list[str] = []
    opened: list[str] = []
    regexes, encoded = [0], [0]
    real_compile, real_connect, real_dumps = compiler.compile, sqlite3.connect, json_module.dumps

    def dumps_counting(*args: object, **kw: object) -> str:
        text = real_dumps(*args, **kw)  # type: ignore[arg-type]
        encoded[0] += len(text)
        return text

    def compile_counting(p: object, flags: int = 0) -> object:
        regexes[0] += 1
        return real_compile(p, flags)

    def connect_traced(*args: object, **kw: object) -> sqlite3.Connection:
        conn = real_connect(*args, **kw)  # type: ignore[arg-type]
        conn.set_trace_callback(lambda s: sql.append(" ".join(s.split())) if not s.startswith("--") else None)
        return conn

    def on_event(event: str, args: tuple) -> None:
        if event == "open" and isinstance(args[0], str):
            opened.append(args[0])

    def report() -> None:
        with open(out, "w", encoding="utf-8") as fh:
            fh.write(real_dumps({"sql": sql, "opened": opened, "regexes": regexes[0], "json_chars": encoded[0]}))

    compiler.compile = compile_counting
    sqlite3.connect = connect_traced
    json_module.dumps = dumps_counting
    import atexit

    atexit.register(report)
    sys.addaudithook(on_event)
    from hermes_agent.cli.main import main

    return main(["chat", "-q", "check the todo list", *(["--yolo"] if os.environ.get("TURN_COUNTS_YOLO") == "terminal" else [])])


def _run(turns: int, home: str, port: int, tool: str = "todo") -> tuple[dict, int]:
    import bench_startup as bs

    from hermes_agent.providers.scripted import ScriptedServer

    with ScriptedServer(bs.loop_script(turns, tool), default={"content": "done"}, port=port) as srv:
        port = bs.port_of(srv.url)
        bs.make_home(srv.url, home)
        fd, out = tempfile.mkstemp(prefix="turn-counts-", suffix=".json")
        os.close(fd)
        env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "OPENROUTER_", "HERMES_"))}
        env.update(HERMES_HOME=home, TURN_COUNTS_OUT=out, NO_COLOR="1", TERM="dumb", TURN_COUNTS_YOLO=tool)
        proc = subprocess.run([sys.executable, __file__, "--child"], env=env, cwd=tempfile.mkdtemp(),
                              stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=120)
        if proc.returncode != 0 or len(srv.requests) != turns + 1:
            raise SystemExit(f"turn_counts: the {turns}-turn run failed ({proc.returncode}, "
                             f"{len(srv.requests)} model requests): {proc.stderr[-2000:]}")
        data = json.loads(Path(out).read_text(encoding="utf-8"))
        os.unlink(out)
    return data, port


def _template(statement: str) -> str:
    """A statement with its values elided (the trace shows them bound)."""
    import re

    return re.sub(r"'(?:[^']|'')*'|\b\d+(?:\.\d+)?\b", "?", statement)


def _figures(data: dict) -> dict:
    sql = data["sql"]
    return {"transactions": sum(1 for s in sql if s.upper().startswith("BEGIN")),
            "statements": len(sql),
            "writes": sum(1 for s in sql if s.split(" ", 1)[0].upper() in ("INSERT", "UPDATE", "DELETE", "REPLACE")),
            "opens": len(data["opened"]), "regexes": data["regexes"], "json_chars": data["json_chars"]}


def main() -> int:
    if sys.argv[1:2] == ["--child"]:
        return _child()
    import argparse

    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--turns", type=int, default=10)
    ap.add_argument("--show", action="store_true", help="also list what one round trip ran and opened")
    ap.add_argument("--tool", choices=("todo", "terminal"), default="todo",
                    help="terminal: `echo N` in the sandbox instead (--yolo: no approval prompt; information)")
    args = ap.parse_args()
    home = tempfile.mkdtemp(prefix="hermes-turn-counts-")
    _, port = _run(args.turns, home, 0, args.tool)  # warm-up: seeds the home (bundled skills, config's JSON copy)
    zero, port = _run(BASE, home, port, args.tool)
    many, port = _run(BASE + args.turns, home, port, args.tool)
    a, b = _figures(zero), _figures(many)
    out: dict = {k: round((b[k] - a[k]) / args.turns, 2) for k in a}
    out["turns"] = args.turns
    if args.show:
        extra_sql = Counter(map(_template, many["sql"])) - Counter(map(_template, zero["sql"]))
        extra_open = Counter(many["opened"]) - Counter(zero["opened"])
        out["statements_per_turn"] = sorted((round(n / args.turns, 2), s[:150]) for s, n in extra_sql.items())
        out["opened_per_turn"] = sorted((round(n / args.turns, 2), p) for p, n in extra_open.items())
    print(json.dumps(out, indent=2 if args.show else None))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
