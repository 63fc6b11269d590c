"""API server benchmark: overhead per request of `hermes api` over the same agent turn run in-process,
the cost of opening a conversation, and throughput of concurrent conversations.

Usage: .venv/bin/python bench/bench_api.py [--turns 40] [--conversations 20] [--per-conv 5] [--delay 0.5]
Both sides talk to the same scripted model server on loopback, so the difference is the server's share.
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from hermes_agent.providers.scripted import ScriptedServer

HERMES = str(Path(sys.executable).with_name("hermes"))


def _config(home: Path, url: str) -> None:
    (home / "config.yaml").write_text(f"model:\n  provider: custom\n  default: scripted-model\n  base_url: {url}\n"
                                      "  api_key: k\nmemory:\n  memory_enabled: false\n", encoding="utf-8")


def _in_process(home: Path, turns: int) -> list[float]:
    """Per-turn wall time of one agent continuing one conversation (what the server wraps)."""
    os.environ["HERMES_HOME"] = str(home)
    from hermes_agent.approval.approvers import AutoDenyApprover
    from hermes_agent.bootstrap import build_agent
    from hermes_agent.config.loader import load_settings

    agent = build_agent(load_settings(), platform="api_server", approver=AutoDenyApprover())
    out = []
    for i in range(turns):
        t0 = time.perf_counter()
        agent.run_turn(f"turn {i}")
        out.append(time.perf_counter() - t0)
    agent.close()
    return out


class Api:
    """A `hermes api` process on a free port."""

    def __init__(self, home: Path) -> None:
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            self.port = s.getsockname()[1]
        env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "HERMES_", "API_"))}
        env.update(HERMES_HOME=str(home), API_SERVER_PORT=str(self.port))
        self.proc = subprocess.Popen([HERMES, "api"], env=env, stdout=subprocess.PIPE, text=True)
        assert "listening" in self.proc.stdout.readline()

    def post(self, conn: http.client.HTTPConnection, text: str, sid: str | None) -> tuple[str, float]:
        body = json.dumps({"model": "hermes-agent", "messages": [{"role": "user", "content": text}]})
        headers = {"Content-Type": "application/json", **({"X-Hermes-Session-Id": sid} if sid else {})}
        t0 = time.perf_counter()
        conn.request("POST", "/v1/chat/completions", body, headers)
        resp = conn.getresponse()
        resp.read()
        return resp.getheader("X-Hermes-Session-Id") or "", time.perf_counter() - t0

    def conversation(self, turns: int) -> tuple[float, list[float]]:
        """(first request, later requests) wall times of one conversation over one keep-alive connection."""
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=120)
        sid, first = self.post(conn, "turn 0", None)
        later = [self.post(conn, f"turn {i}", sid)[1] for i in range(1, turns + 1)]
        conn.close()
        return first, later

    def stop(self) -> None:
        self.proc.terminate()
        self.proc.wait(timeout=30)


def _ms(xs: list[float]) -> str:
    return f"median {statistics.median(xs) * 1000:.2f} ms, p95 {sorted(xs)[int(len(xs) * 0.95) - 1] * 1000:.2f} ms"


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--turns", type=int, default=40)
    ap.add_argument("--conversations", type=int, default=20)
    ap.add_argument("--per-conv", type=int, default=5)
    ap.add_argument("--delay", type=float, default=0.5, help="model latency for the throughput run (s)")
    a = ap.parse_args()
    with ScriptedServer(default={"content": "ok"}) as model, tempfile.TemporaryDirectory() as tmp:
        home = Path(tmp)
        _config(home, model.url)
        direct = _in_process(home, a.turns)
        api = Api(home)
        try:
            api.conversation(3)  # warm the server
            first, served = api.conversation(a.turns)
            overhead = statistics.median(served) - statistics.median(direct)
            print(f"agent turn in-process      : {_ms(direct)}")
            print(f"same turn through hermes api: {_ms(served)}")
            print(f"server overhead per request : {overhead * 1000:.2f} ms (target <= 5 ms)")
            print(f"opening a conversation      : {first * 1000:.1f} ms (first request: builds its agent)")
            for delay in (0.0, a.delay):
                model.default = {"content": "ok", "delay": delay}
                total = a.conversations * (a.per_conv + 1)
                t0 = time.perf_counter()
                with ThreadPoolExecutor(a.conversations) as ex:
                    list(ex.map(lambda _: api.conversation(a.per_conv), range(a.conversations)))
                wall = time.perf_counter() - t0
                print(f"{a.conversations} concurrent conversations x {a.per_conv + 1} requests, model latency "
                      f"{delay:g}s: {total / wall:.1f} req/s ({wall:.2f} s; serial model time would be "
                      f"{total * delay:.1f} s)")
        finally:
            api.stop()


if __name__ == "__main__":
    main()
