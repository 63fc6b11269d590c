"""Session store benchmark: write throughput (one commit per message), database size, search latency.

Usage: .venv/bin/python bench/bench_sessions.py [--messages 100000] [--keep DIR]
Builds a synthetic store (English plus ~10% Chinese/Japanese, user/assistant/tool mix), then times queries.
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import tempfile
import time
from pathlib import Path

from hermes_agent.messages import Message, ToolCall
from hermes_agent.storage import SessionStore

TECH = ("docker compose nginx postgres redis kubernetes terraform ansible python rust golang pytest certbot "
        "systemd journalctl grafana prometheus kafka rabbitmq webpack typescript react django flask fastapi "
        "sqlite migration backup restore deploy rollback latency timeout segfault oom kernel cron ssh rsync "
        "git rebase merge conflict branch commit bisect quota disk inode firewall iptables dns tls").split()
CJK = ["数据库迁移", "服务器部署", "日志分析", "配置文件", "性能优化", "内存泄漏", "定时任务", "备份恢复",
       "設定ファイル", "再起動", "東京", "ラーメン", "データベース", "ネットワーク", "北京", "上海"]
SESSION_LEN = 50


def _vocab(rng: random.Random, n: int = 6000) -> list[str]:
    letters = "abcdefghijklmnopqrstuvwxyz"
    return [("".join(rng.choice(letters) for _ in range(rng.randint(3, 10)))) for _ in range(n)] + TECH


def _text(rng: random.Random, vocab: list[str], words: int, cjk: bool) -> str:
    picks = [vocab[min(int(rng.paretovariate(1.1)) - 1, len(vocab) - 1)] if rng.random() < 0.8
             else rng.choice(TECH) for _ in range(words)]
    if cjk:
        return "，".join(rng.choice(CJK) + rng.choice(["的问题", "を確認", "已经完成", "について"])
                        for _ in range(max(2, words // 6))) + " " + " ".join(picks[:5])
    return " ".join(picks)


def _message(rng: random.Random, vocab: list[str], i: int) -> Message:
    cjk = rng.random() < 0.1
    kind = i % 4
    if kind == 0:
        return Message("user", _text(rng, vocab, 20, cjk))
    if kind == 1:
        args = json.dumps({"command": _text(rng, vocab, 6, False)})
        return Message("assistant", _text(rng, vocab, 30, cjk), (ToolCall(f"c{i}", "terminal", args),))
    if kind == 2:
        return Message("tool", _text(rng, vocab, 150, cjk), tool_call_id=f"c{i - 1}", name="terminal")
    return Message("assistant", _text(rng, vocab, 60, cjk))


def _db_bytes(store: SessionStore) -> int:
    store.checkpoint()
    return sum(p.stat().st_size for p in (store.path, Path(f"{store.path}-wal")) if p.exists())


def build(store: SessionStore, total: int, rng: random.Random) -> dict[str, float]:
    """Fill the store; the first 10,000 messages one commit each (timed), the rest one commit per session."""
    vocab = _vocab(rng)
    sources = ["cli"] * 6 + ["telegram", "discord", "cron", "subagent"]
    figures: dict[str, float] = {}
    written, sid, t0 = 0, None, time.perf_counter()
    while written < min(total, 10_000):
        if written % SESSION_LEN == 0:
            sid = store.create_session(rng.choice(sources), "gpt-4o").id
        store.append_message(sid, _message(rng, vocab, written))
        written += 1
    figures["per_message_commit_msgs_per_s"] = written / (time.perf_counter() - t0)
    figures["bytes_per_10k_first"] = _db_bytes(store) * 10_000 / written
    t0 = time.perf_counter()
    while written < total:
        sid = store.create_session(rng.choice(sources), "gpt-4o").id
        batch = [_message(rng, vocab, written + k) for k in range(min(SESSION_LEN, total - written))]
        store.append_messages(sid, batch, timestamp=time.time() - rng.uniform(0, 365 * 86400))
        written += len(batch)
    figures["batched_msgs_per_s"] = (written - 10_000) / max(time.perf_counter() - t0, 1e-9)
    figures["bytes_per_10k_total"] = _db_bytes(store) * 10_000 / written
    figures["db_mb"] = _db_bytes(store) / 1e6
    return figures


QUERIES = {
    "common word": ["docker", "postgres", "nginx", "python", "deploy", "backup"],
    "two words (AND)": ["docker compose", "postgres backup", "nginx tls", "kernel oom", "git rebase"],
    "phrase / prefix": ['"git rebase"', "kube*", "migrat*", '"disk quota"'],
    "rare / no match": ["zzqxv", "unicorn rainbow", "flibbertigibbet"],
    "CJK >= 3 chars": ["数据库迁移", "設定ファイル", "データベース", "服务器部署"],
    "CJK 2 chars (LIKE)": ["北京", "東京", "上海"],
    "with --source": ["docker@telegram", "nginx@cron"],
}


def time_queries(store: SessionStore, rounds: int) -> dict[str, list[float]]:
    """Latency in ms per category (each query run `rounds` times)."""
    out: dict[str, list[float]] = {}
    for cat, queries in QUERIES.items():
        times = []
        for _ in range(rounds):
            for q in queries:
                text, _, source = q.partition("@")
                t0 = time.perf_counter()
                store.search(text, source=source or None, limit=3)
                times.append((time.perf_counter() - t0) * 1000)
        out[cat] = times
    return out


def _pct(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(p / 100 * (len(ordered) - 1))))]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--messages", type=int, default=100_000)
    ap.add_argument("--rounds", type=int, default=20)
    ap.add_argument("--keep", help="Directory for state.db (default: a temp dir, removed)")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(args.keep or tmp) / "state.db"
        rng = random.Random(42)
        with SessionStore(path) as store:
            t0 = time.perf_counter()
            figures = build(store, args.messages, rng)
            print(f"built {args.messages:,} messages in {time.perf_counter() - t0:.1f} s")
            for key, value in figures.items():
                print(f"  {key:<32} {value:,.1f}")
            results = time_queries(store, args.rounds)
        everything = [v for vs in results.values() for v in vs]
        print(f"\nsearch over {args.messages:,} messages, limit 3 sessions (ms):")
        print(f"  {'category':<22} {'p50':>8} {'p95':>8} {'max':>8}")
        for cat, vs in results.items():
            print(f"  {cat:<22} {statistics.median(vs):8.2f} {_pct(vs, 95):8.2f} {max(vs):8.2f}")
        print(f"  {'ALL':<22} {statistics.median(everything):8.2f} {_pct(everything, 95):8.2f} "
              f"{max(everything):8.2f}")


if __name__ == "__main__":
    main()
