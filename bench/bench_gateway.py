"""Gateway benchmark: the real `hermes gateway run` against the local fake Telegram Bot API
(tests/fake_telegram.py) and the scripted model answering instantly.

Usage: .venv/bin/python bench/bench_gateway.py [--chats 20] [--per-chat 10] [--soak 2000] [--outage 15]
Reports: start to polling, DM reply latency (median of 10, sequential), N chats x M messages sent at once
(p50/p95 per message until the reply that covers it, msg/s), RSS idle / after the load / after --soak more
messages / after idle chats are evicted (gateway.idle_evict_seconds: 5), and the time from the end of an
--outage seconds long 502 outage to the reply of a message sent during it."""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tests.fake_telegram import FakeTelegram  # noqa: E402
from tests.integration.gateway_helpers import Gateway  # noqa: E402

from hermes_agent.providers.scripted import ScriptedServer  # noqa: E402


def rss_mib(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


def answered_at(fake: FakeTelegram, token: str) -> float | None:
    return next((m["time"] for m in list(fake.sent) if token in m["text"]), None)


def dm_latency(fake: FakeTelegram, n: int = 10) -> list[float]:
    out = []
    for i in range(n):
        token = f"dm{i}x"
        t0 = time.time()
        fake.user_says(token, chat_id=9000)
        fake.wait_for(lambda t=token: answered_at(fake, t) is not None, timeout=30)
        out.append(answered_at(fake, token) - t0)  # type: ignore[operator]
    return out


def load(fake: FakeTelegram, chats: int, per_chat: int) -> tuple[list[float], float]:
    sent: dict[str, float] = {}
    t0 = time.time()
    for m in range(per_chat):
        for c in range(chats):
            token = f"c{c}m{m}x"
            sent[token] = time.time()
            fake.user_says(token, chat_id=10_000 + c)
    fake.wait_for(lambda: all(answered_at(fake, t) for t in sent), timeout=300)
    lat = [(answered_at(fake, t) or float("inf")) - s for t, s in sent.items()]
    return lat, len(sent) / (max(answered_at(fake, t) or 0 for t in sent) - t0)


def outage(fake: FakeTelegram, seconds: float) -> float:
    fake.outage(seconds)
    time.sleep(0.5)
    fake.user_says("during the outage zz", chat_id=9001)
    fake.wait_for(lambda: answered_at(fake, "during the outage zz") is not None, timeout=seconds + 60)
    return (answered_at(fake, "during the outage zz") or float("inf")) - fake.down_until


def pct(values: list[float], q: float) -> float:
    values = sorted(values)
    return values[min(len(values) - 1, int(round(q * (len(values) - 1))))]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--chats", type=int, default=20)
    ap.add_argument("--per-chat", type=int, default=10)
    ap.add_argument("--soak", type=int, default=2000)
    ap.add_argument("--outage", type=float, default=15.0)
    args = ap.parse_args()
    fake = FakeTelegram().start()
    model = ScriptedServer(default=lambda body: {"content": "re: " + str(body["messages"][-1]["content"])}).start()
    with tempfile.TemporaryDirectory() as tmp:
        home = Path(tmp)
        gw = Gateway(home, fake, model.url, env={"GATEWAY_ALLOW_ALL_USERS": "true"},
                     extra="gateway:\n  idle_evict_seconds: 5\n")
        try:
            start = gw.start()
            time.sleep(1.0)
            idle = rss_mib(gw.proc.pid)  # type: ignore[union-attr]
            dm = dm_latency(fake)
            lat, rate = load(fake, args.chats, args.per_chat)
            after = rss_mib(gw.proc.pid)  # type: ignore[union-attr]
            calls = len(model.requests)
            soak_lat, soak_rate = load(fake, args.chats, max(1, args.soak // args.chats))
            soaked = rss_mib(gw.proc.pid)  # type: ignore[union-attr]
            time.sleep(8)
            evicted = rss_mib(gw.proc.pid)  # type: ignore[union-attr]
            recovery = outage(fake, args.outage) if args.outage else None
        finally:
            gw.stop()
            fake.stop()
            model.stop()
    total = args.chats * args.per_chat
    print(f"start to polling:   {start * 1000:.0f} ms (process start, imports, getMe, deleteWebhook)")
    print(f"DM reply latency:   median {statistics.median(dm) * 1000:.0f} ms, max {max(dm) * 1000:.0f} ms (no debounce)")
    print(f"{args.chats} chats x {args.per_chat} msgs: p50 {pct(lat, .5):.2f} s, p95 {pct(lat, .95):.2f} s, "
          f"{rate:.1f} msg/s, {calls - len(dm)} model calls for {total} messages (busy chats merged)")
    print(f"RSS: idle {idle:.0f} MiB, after {total + len(dm)} messages {after:.0f} MiB")
    print(f"soak {len(soak_lat)} more messages: p50 {pct(soak_lat, .5):.2f} s, p95 {pct(soak_lat, .95):.2f} s, "
          f"{soak_rate:.1f} msg/s; RSS after {soaked:.0f} MiB, after idle eviction {evicted:.0f} MiB")
    if recovery is not None:
        print(f"{args.outage:g} s 502 outage: reply {recovery:.2f} s after the API came back")


if __name__ == "__main__":
    main()
