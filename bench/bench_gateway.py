"""Gateway benchmark: the real `hermes gateway run` against the local fake Telegram Bot API
(tests/fake_telegram.py) and the scripted model answering instantly.

Usage: .venv/bin/python bench/bench_gateway.py [--chats 20] [--per-chat 10] [--soak 2000] [--new-chats 100] [--outage 15] [--hermes-ref BIN]
Runs ours, then the released Hermes (--hermes-ref, its messaging extra) on a fresh fake and model.
Reports: start to polling (process start to the first getUpdates), DM reply latency (median of 10, sequential), N chats x M messages sent at once
(p50/p95 per message until the reply that covers it, msg/s, the gateway's CPU per message), --new-chats chats never
seen before with one message each (each builds an agent and a session), RSS idle / after the load / after --soak more
messages / after idle chats are evicted (gateway.idle_evict_seconds: 5), and the time from the end of an
--outage seconds long 502 outage to the reply of a message sent during it."""

from __future__ import annotations

import argparse
import os
import signal
import statistics
import subprocess
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


def cpu_s(pid: int) -> float:
    """User + system CPU seconds the process has used so far (its threads included)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


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


def load(fake: FakeTelegram, chats: int, per_chat: int, tag: str = "",
         first_chat: int = 10_000) -> tuple[list[float], float]:
    sent: dict[str, float] = {}
    t0 = time.time()
    for m in range(per_chat):
        for c in range(chats):
            token = f"{tag}c{c}m{m}x"  # unique per load: the soak's tokens must not match the first load's replies
            sent[token] = time.time()
            fake.user_says(token, chat_id=first_chat + c)
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


class HermesGateway:
    """The released Hermes's `hermes gateway run` (its `messaging` extra) on the same fake and model."""

    def __init__(self, bin_path: str, home: Path, fake: FakeTelegram, model_url: str) -> None:
        self.home, self.fake, self.bin = home / "hermes-home", fake, bin_path
        self.home.mkdir(parents=True)
        (self.home / "config.yaml").write_text(
            f"model:\n  provider: custom\n  default: scripted-model\n  base_url: {model_url}\n  api_key: test-key\n"
            "auxiliary:\n  title_generation:\n    enabled: false\n"
            f"platforms:\n  telegram:\n    enabled: true\n    extra:\n      base_url: {fake.base_url}\n"
            f"      base_file_url: {fake.file_url()}\n", encoding="utf-8")
        (home / "user").mkdir()
        self.env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "HERMES_", "TELEGRAM_"))}
        self.env.update({"HERMES_HOME": str(self.home), "HOME": str(home / "user"), "TELEGRAM_BOT_TOKEN": fake.token,
                         "GATEWAY_ALLOW_ALL_USERS": "true", "MESSAGING_CWD": str(home / "user")})
        self.proc: subprocess.Popen | None = None

    def start(self, timeout: float = 60) -> float:
        polls = len(self.fake.polls)
        t0 = time.time()
        self.proc = subprocess.Popen([self.bin, "gateway", "run"], env=self.env, stdout=subprocess.DEVNULL,
                                     stderr=subprocess.DEVNULL, cwd=str(self.home.parent / "user"))
        self.fake.wait_for(lambda: len(self.fake.polls) > polls, timeout=timeout)
        return self.fake.polls[polls] - t0

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(30)
            except subprocess.TimeoutExpired:
                self.proc.kill()


def measure(make, args: argparse.Namespace) -> dict:  # type: ignore[no-untyped-def]
    """One program through the whole sequence, on a fresh fake and model."""
    fake = FakeTelegram().start()
    model = ScriptedServer(default=lambda body: {"content": "re: " + str(body["messages"][-1]["content"])}).start()
    r: dict = {"load": [os.getloadavg()[0]]}
    with tempfile.TemporaryDirectory() as tmp:
        gw = make(Path(tmp), fake, model.url)
        try:
            t0 = time.time()
            gw.start()
            fake.wait_for(lambda: fake.polls, timeout=60)
            r["start"] = fake.polls[0] - t0
            time.sleep(1.0)
            pid = gw.proc.pid
            r["idle"] = rss_mib(pid)
            r["dm"] = dm_latency(fake)
            cpu0 = cpu_s(pid)
            r["lat"], r["rate"] = load(fake, args.chats, args.per_chat)
            r["cpu"] = cpu_s(pid) - cpu0
            r["after"] = rss_mib(pid)
            r["calls"] = len(model.requests) - len(r["dm"])
            cpu0 = cpu_s(pid)
            r["soak_lat"], r["soak_rate"] = load(fake, args.chats, max(1, args.soak // args.chats), "s") \
                if args.soak else ([], 0.0)
            r["soak_cpu"] = cpu_s(pid) - cpu0
            r["soaked"] = rss_mib(pid)
            time.sleep(8)
            r["evicted"] = rss_mib(pid)
            if args.new_chats:
                cpu0 = cpu_s(pid)
                r["new_lat"], r["new_rate"] = load(fake, args.new_chats, 1, "n", first_chat=20_000)
                r["new_cpu"] = cpu_s(pid) - cpu0
            r["recovery"] = outage(fake, args.outage) if args.outage else None
            r["load"].append(os.getloadavg()[0])
        finally:
            gw.stop()
            fake.stop()
            model.stop()
    return r


def report(name: str, r: dict, args: argparse.Namespace) -> None:
    total = args.chats * args.per_chat
    print(f"== {name} (1-min load average {r['load'][0]:.1f} at start, {r['load'][-1]:.1f} at end)")
    print(f"start to polling:   {r['start'] * 1000:.0f} ms (process start to the first getUpdates)")
    print(f"DM reply latency:   median {statistics.median(r['dm']) * 1000:.0f} ms, max {max(r['dm']) * 1000:.0f} ms")
    print(f"{args.chats} chats x {args.per_chat} msgs: p50 {pct(r['lat'], .5):.2f} s, p95 {pct(r['lat'], .95):.2f} s, "
          f"{r['rate']:.1f} msg/s, {r['calls']} model calls for {total} messages, "
          f"gateway CPU {r['cpu'] * 1000 / total:.1f} ms/msg")
    print(f"RSS: idle {r['idle']:.0f} MiB, after {total + len(r['dm'])} messages {r['after']:.0f} MiB")
    if r.get("new_lat"):
        n = len(r["new_lat"])
        print(f"{n} new chats x 1 msg: p50 {pct(r['new_lat'], .5):.2f} s, p95 {pct(r['new_lat'], .95):.2f} s, "
              f"{r['new_rate']:.1f} msg/s, gateway CPU {r['new_cpu'] * 1000 / n:.1f} ms/chat")
    if r["soak_lat"]:
        print(f"soak {len(r['soak_lat'])} more messages: p50 {pct(r['soak_lat'], .5):.2f} s, "
              f"p95 {pct(r['soak_lat'], .95):.2f} s, {r['soak_rate']:.1f} msg/s, gateway CPU "
              f"{r['soak_cpu'] * 1000 / len(r['soak_lat']):.2f} ms/msg; RSS after {r['soaked']:.0f} MiB, "
              f"after idle eviction {r['evicted']:.0f} MiB")
    if r["recovery"] is not None:
        print(f"{args.outage:g} s 502 outage: reply {r['recovery']:.2f} s after the API came back")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--chats", type=int, default=20)
    ap.add_argument("--per-chat", type=int, default=10)
    ap.add_argument("--soak", type=int, default=2000)
    ap.add_argument("--outage", type=float, default=15.0)
    ap.add_argument("--new-chats", type=int, default=100, help="then N chats never seen before, one message each")
    ap.add_argument("--hermes-ref", default=os.environ.get("HERMES_REF_BIN") or "/work/hermes-ref/bin/hermes",
                    help="the released Hermes's hermes (with its messaging extra); '' to skip it")
    args = ap.parse_args()

    def ours(home: Path, fake: FakeTelegram, url: str) -> Gateway:
        return Gateway(home, fake, url, env={"GATEWAY_ALLOW_ALL_USERS": "true"},
                       extra="gateway:\n  idle_evict_seconds: 5\n")

    report("hermes-agent (ours)", measure(ours, args), args)
    if args.hermes_ref and Path(args.hermes_ref).exists():
        report("released Hermes 0.19.0", measure(lambda h, f, u: HermesGateway(args.hermes_ref, h, f, u), args), args)


if __name__ == "__main__":
    main()
