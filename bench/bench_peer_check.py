"""Benchmark: what the loopback peer check (terminal/sandbox/peer.py) adds to a keyless `hermes api` request.
Two real `hermes api` processes on loopback, one with API_SERVER_KEY (no peer check) and one without (every
connection's client identified: sock_diag + /proc walk; one verdict per connection). GET /v1/models, medians of
several runs: on one keep-alive connection (the verdict is cached) and with a new connection per request (the
full check each time). Also the check alone, in process, against a live client (`confined_peer`).
Run: .venv/bin/python bench/bench_peer_check.py [--requests N] [--runs R]"""

from __future__ import annotations

import argparse
import http.client
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

KEY = "bench-key-0123456789abcdef"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _start(home: Path, key: str) -> tuple[subprocess.Popen, int]:
    port = _free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "HERMES_", "API_"))}
    env.update(HERMES_HOME=str(home), API_SERVER_PORT=str(port), OPENAI_API_KEY="unused")
    if key:
        env["API_SERVER_KEY"] = key
    proc = subprocess.Popen([sys.executable, "-m", "hermes_agent", "api"], env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True)
    line = proc.stdout.readline()
    if "listening on" not in line:
        raise SystemExit(f"hermes api did not start: {line}")
    return proc, port


def _get(conn: http.client.HTTPConnection, key: str) -> None:
    conn.request("GET", "/v1/models", headers={"Authorization": f"Bearer {key}"} if key else {})
    resp = conn.getresponse()
    resp.read()
    if resp.status != 200:
        raise SystemExit(f"unexpected status {resp.status}")


def keep_alive(port: int, key: str, n: int) -> float:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    _get(conn, key)  # the connection's verdict
    t0 = time.perf_counter()
    for _ in range(n):
        _get(conn, key)
    conn.close()
    return (time.perf_counter() - t0) / n * 1000


def fresh(port: int, key: str, n: int) -> float:
    t0 = time.perf_counter()
    for _ in range(n):
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
        _get(conn, key)
        conn.close()
    return (time.perf_counter() - t0) / n * 1000


def check_alone(n: int) -> float:
    from hermes_agent.terminal.sandbox.peer import confined_peer

    srv = socket.create_server(("127.0.0.1", 0))
    client = subprocess.Popen([sys.executable, "-c", "import socket, sys, time; s = socket.create_connection("
                               f"('127.0.0.1', {srv.getsockname()[1]})); print(1, flush=True); time.sleep(60)"],
                              stdout=subprocess.PIPE, text=True)
    client.stdout.readline()
    conn, peer = srv.accept()
    t0 = time.perf_counter()
    for _ in range(n):
        assert confined_peer(peer, conn.getsockname()) is None
    elapsed = (time.perf_counter() - t0) / n * 1000
    client.kill()
    client.wait()
    return elapsed


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--requests", type=int, default=200)
    ap.add_argument("--runs", type=int, default=5)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        keyed_home, keyless_home = Path(tmp, "keyed"), Path(tmp, "keyless")
        for home in (keyed_home, keyless_home):
            home.mkdir()
            (home / "config.yaml").write_text("model:\n  provider: custom\n  default: m\n  base_url: http://127.0.0.1:9/v1\n")
        keyed, keyed_port = _start(keyed_home, KEY)
        keyless, keyless_port = _start(keyless_home, "")
        try:
            rows = {}
            for name, fn in (("keep-alive", keep_alive), ("new connection", fresh)):
                n = args.requests if fn is keep_alive else args.requests // 2
                with_key = statistics.median(fn(keyed_port, KEY, n) for _ in range(args.runs))
                without = statistics.median(fn(keyless_port, "", n) for _ in range(args.runs))
                rows[name] = (with_key, without)
            alone = statistics.median(check_alone(50) for _ in range(args.runs))
        finally:
            for proc in (keyed, keyless):
                proc.terminate()
                proc.wait(timeout=20)
    procs = sum(1 for n in os.listdir("/proc") if n.isdigit())
    print(f"GET /v1/models, ms per request (median of {args.runs} runs, {procs} processes on this host)")
    for name, (with_key, without) in rows.items():
        print(f"  {name:15s} with key (no check) {with_key:6.2f}   keyless (checked) {without:6.2f}   "
              f"added {without - with_key:+6.2f}")
    print(f"  the check alone (sock_diag + /proc walk, a fresh client): {alone:.2f} ms")


if __name__ == "__main__":
    main()
