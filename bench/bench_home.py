"""90 days of one busy user, written through our store API with the default `sessions:` settings: 200 sessions a
day (a few tool calls each, outputs up to 1 MB), 20 gateway chats that stay open, the daily auto-prune. Reports
state.db size per day, session search latency (p50/p95) on the final file, and `hermes chat -q` start-up with
that file against an empty home (scripted model on loopback).

Usage: .venv/bin/python bench/bench_home.py [--days 90] [--per-day 200] [--chats 20] [--out bench_home.json]
       [--home DIR]   (keeps the simulated home: ~8 min for 90 days on 2 cores)
       .venv/bin/python bench/bench_home.py --search-only DIR/state.db --runs 5 [--gap-ms 50] [--filter source=cli]
                  (search latency on a kept file; --gap-ms: idle before each; --filter: source=NAME, since-days=N,
                   until-days=N, days before the newest message)
       .venv/bin/python bench/bench_home.py --migrate-from OLD_STATE_DB   (the online migration of a big file)
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from hermes_agent.config.settings import Settings
from hermes_agent.messages import Message, ToolCall
from hermes_agent.providers.scripted import ScriptedServer
from hermes_agent.storage.retention import file_bytes
from hermes_agent.storage.store import SessionStore

HERMES = str(Path(sys.executable).with_name("hermes"))
_DAY = 86400.0
WORDS = ("parser config deploy whale kernel socket retry budget invoice cluster schema lambda vector token "
         "gateway cron sandbox browser memory skill import export rollback commit branch merge docker yaml "
         "python rust sqlite index latency cache proxy header cookie session prompt model agent tool").split()


def _corpus(rng: random.Random, size: int = 2_200_000) -> str:
    """One big text of random words; outputs are slices of it (cheap to make, realistic to index)."""
    parts, n = [], 0
    while n < size:
        line = " ".join(rng.choice(WORDS) + str(rng.randrange(1000)) for _ in range(12)) + "\n"
        parts.append(line)
        n += len(line)
    return "".join(parts)


def _output_size(rng: random.Random) -> int:
    """Mostly small, a long tail up to 1 MB (log-uniform 100 B .. 1 MB)."""
    return int(10 ** rng.uniform(2, 6))


def _session(store: SessionStore, rng: random.Random, corpus: str, t: float) -> None:
    sid = store.create_session("cli", "scripted-model", cwd="/home/u/proj").id
    task = " ".join(rng.choice(WORDS) for _ in range(rng.randrange(5, 30)))
    batch = [Message(role="user", content=f"please {task}")]
    for k in range(rng.randrange(1, 8)):
        size = _output_size(rng)
        start = rng.randrange(0, len(corpus) - size)
        call = ToolCall(f"c{k}", "terminal", json.dumps({"command": f"grep -r {rng.choice(WORDS)} src"}))
        batch += [Message(role="assistant", content="", tool_calls=(call,)),
                  Message(role="tool", content=corpus[start:start + size], tool_call_id=f"c{k}", name="terminal")]
    batch.append(Message(role="assistant", content=f"Done: {task}. " + "detail " * rng.randrange(10, 200)))
    store.append_messages(sid, batch, timestamp=t)
    store.end_session(sid)


def simulate(db: Path, days: int, per_day: int, chats: int, seed: int = 7) -> list[dict]:
    rng = random.Random(seed)
    corpus = _corpus(rng)
    store = SessionStore(db)
    from hermes_agent.bootstrap.session import retention_policy

    settings = Settings(data={}, home=db.parent)
    policy = retention_policy(settings)
    store.retention = policy
    t0 = time.time() - days * _DAY
    chat_ids = [store.create_session("telegram", "scripted-model", session_key=f"agent:main:telegram:dm:{i}").id
                for i in range(chats)]
    per_day_rows = []
    for d in range(days):
        start = time.monotonic()
        day_t = t0 + d * _DAY
        for i in range(per_day):
            _session(store, rng, corpus, day_t + i * (_DAY / per_day))
        for cid in chat_ids:  # each chat: a few exchanges a day
            msgs = [Message(role=r, content=" ".join(rng.choice(WORDS) for _ in range(40)))
                    for _ in range(5) for r in ("user", "assistant")]
            store.append_messages(cid, msgs, timestamp=day_t + _DAY - 60)
        report = store.prune_by_policy(policy, now=day_t + _DAY)  # the daily auto-prune
        per_day_rows.append({"day": d + 1, "mb": round(file_bytes(db) / 1e6, 1), "pruned": report.sessions,
                             "shrunk": report.shrunk, "prune_s": round(report.seconds, 2), "write_s": round(time.monotonic() - start, 1)})
        print(json.dumps(per_day_rows[-1]), flush=True)
    store.close()
    return per_day_rows


def _runqueue_ns() -> int:
    """Time this thread has spent runnable but waiting for a CPU (Linux schedstat; 0 elsewhere)."""
    try:
        with open("/proc/thread-self/schedstat", encoding="ascii") as f:
            return int(f.read().split()[1])
    except (OSError, IndexError, ValueError):
        return 0


def _filters(db: Path, spec: str) -> dict:
    """--filter: source=NAME, since-days=N or until-days=N (days before the newest message)."""
    if not spec:
        return {}
    key, _, value = spec.partition("=")
    if key == "source":
        return {"source": value}
    import sqlite3

    with sqlite3.connect(f"{db.as_uri()}?mode=ro", uri=True) as conn:
        newest = float(conn.execute("SELECT max(timestamp) FROM messages").fetchone()[0])
    return {key.removesuffix("-days"): newest - float(value) * _DAY}


def search_latency(db: Path, n: int = 300, gap_ms: float = 0.0, spec: str = "") -> dict:
    """Wall-clock and CPU (thread) time per search, and the time it waited for a CPU while runnable: on a
    machine shared with other work the CPU time is what the search itself costs, the wait what the load adds.
    gap_ms: idle time before each search, as between a user's (or a model's) searches; back to back (0) the
    loop is a CPU hog to the scheduler, and at load it gets only its share of a CPU whatever a search costs."""
    rng = random.Random(3)
    wall, cpu, wait = [], [], []
    with SessionStore(db) as store:
        filters = _filters(db, spec)
        for _ in range(n):
            if gap_ms:
                time.sleep(gap_ms / 1000)
            q = f"{rng.choice(WORDS)}{rng.randrange(1000)}" if rng.random() < 0.7 else rng.choice(WORDS)
            start, start_cpu, start_wait = time.perf_counter(), time.thread_time(), _runqueue_ns()
            store.search(q, limit=10, **filters)
            cpu.append((time.thread_time() - start_cpu) * 1000)
            wait.append((_runqueue_ns() - start_wait) / 1e6)
            wall.append((time.perf_counter() - start) * 1000)
    wall.sort()
    cpu.sort()
    wait.sort()
    return {"n": n, "gap_ms": gap_ms, **({"filter": spec} if spec else {}), "load": round(os.getloadavg()[0], 1), "p50_ms": round(statistics.median(wall), 2),
            "p95_ms": round(wall[int(n * 0.95)], 2), "p99_ms": round(wall[int(n * 0.99)], 2),
            "max_ms": round(wall[-1], 2), "cpu_p50_ms": round(statistics.median(cpu), 2),
            "cpu_p95_ms": round(cpu[int(n * 0.95)], 2), "cpu_p99_ms": round(cpu[int(n * 0.99)], 2),
            "runqueue_wait_p50_ms": round(statistics.median(wait), 2), "runqueue_wait_p95_ms": round(wait[int(n * 0.95)], 2)}


def _chat_seconds(home: Path, url: str, runs: int) -> float:
    (home / "config.yaml").write_text(f"model:\n  provider: custom\n  default: scripted-model\n  base_url: {url}\n"
                                      "  api_key: k\nmemory:\n  memory_enabled: false\n"
                                      "sessions:\n  auto_prune: false\n", encoding="utf-8")
    env = _env(home)
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run([HERMES, "chat", "-q", "hi"], env=env, capture_output=True, check=True, timeout=60)
        times.append(time.perf_counter() - start)
    return round(statistics.median(times), 3)


def startup(db: Path, runs: int = 5) -> dict:
    with ScriptedServer(default={"content": "hi"}) as server, tempfile.TemporaryDirectory() as empty:
        return {"empty_home_s": _chat_seconds(Path(empty), server.url, runs),
                "busy_home_s": _chat_seconds(db.parent, server.url, runs)}


def _env(home: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "HERMES_"))}
    env["HERMES_HOME"] = str(home)
    return env


def migration(old_db: Path, runs: int = 5) -> dict:
    """A state.db in the old search-index layout (inline copies) migrated online: the first `chat -q` that
    opens it, then `chat -q` while a background rebuild (`sessions optimize-storage`, standing in for a
    gateway carrying it) works; the rebuild is killed once and resumed."""
    with ScriptedServer(default={"content": "hi"}) as server, tempfile.TemporaryDirectory() as tmp, \
            tempfile.TemporaryDirectory() as empty:
        home = Path(tmp)
        db = home / "state.db"
        subprocess.run(["cp", str(old_db), str(db)], check=True)
        baseline = _chat_seconds(Path(empty), server.url, runs)
        before_mb = round(file_bytes(db) / 1e6, 1)
        first = _chat_seconds(home, server.url, 1)
        rebuild = subprocess.Popen([HERMES, "sessions", "optimize-storage"], env=_env(home), text=True,
                                   stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        start = time.monotonic()
        time.sleep(3)
        rebuild.kill()  # killed mid-chunk: the next process resumes from the last committed chunk
        rebuild.wait()
        with SessionStore(db) as store:
            after_kill = store.search_index_pending()
        rebuild = subprocess.Popen([HERMES, "sessions", "optimize-storage"], env=_env(home), text=True,
                                   stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        during = _chat_seconds(home, server.url, runs)
        baseline_after = _chat_seconds(Path(empty), server.url, runs)  # same moment, an empty home
        out = rebuild.communicate(timeout=3600)[0]
        return {"file_mb": before_mb, "empty_home_chat_q_s": [baseline, baseline_after], "first_chat_q_s": first,
                "chat_q_during_rebuild_s": during,
                "indexed_after_kill": after_kill, "rebuild_s": round(time.monotonic() - start, 1),
                "rebuild_exit": rebuild.returncode, "rebuild_tail": out.strip().splitlines()[-1:],
                "after_mb": round(file_bytes(db) / 1e6, 1)}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--days", type=int, default=90)
    ap.add_argument("--per-day", type=int, default=200)
    ap.add_argument("--chats", type=int, default=20)
    ap.add_argument("--home", help="keep the simulated home here (default: a temporary directory)")
    ap.add_argument("--out", default="bench_home.json")
    ap.add_argument("--migrate-from", metavar="STATE_DB",
                    help="only measure the online migration of this state.db (old search-index layout)")
    ap.add_argument("--search-only", metavar="STATE_DB",
                    help="only measure session search on this state.db (e.g. a home kept with --home), --runs times")
    ap.add_argument("--runs", type=int, default=1, help="with --search-only: passes of 300 searches")
    ap.add_argument("--gap-ms", type=float, default=0.0,
                    help="idle time before each search (default 0: back to back)")
    ap.add_argument("--filter", default="", help="with --search-only: source=NAME, since-days=N or until-days=N")
    args = ap.parse_args()
    if args.search_only:
        for _ in range(args.runs):
            print(json.dumps(search_latency(Path(args.search_only), gap_ms=args.gap_ms, spec=args.filter)), flush=True)
        return 0
    if args.migrate_from:
        result = migration(Path(args.migrate_from))
        print(json.dumps(result, indent=1))
        Path(args.out).write_text(json.dumps(result, indent=1), encoding="utf-8")
        return 0
    with tempfile.TemporaryDirectory() as tmp:
        home = Path(args.home or tmp)
        home.mkdir(parents=True, exist_ok=True)
        db = home / "state.db"
        days = simulate(db, args.days, args.per_day, args.chats)
        with SessionStore(db) as store:
            kinds = {k: round(v / 1e6, 1) for k, v in store.size_by_kind().items()}
            sessions = store.count_sessions()
        result = {"days": days, "final_mb": days[-1]["mb"], "max_mb": max(d["mb"] for d in days),
                  "sessions_kept": sessions, "mb_by_kind": kinds, "search": search_latency(db),
                  "startup": startup(db)}
        print(json.dumps({k: v for k, v in result.items() if k != "days"}, indent=1))
        Path(args.out).write_text(json.dumps(result, indent=1), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
