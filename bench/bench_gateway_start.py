"""`hermes gateway run` from process start to its first getUpdates: wall time and the gateway's own CPU time
(read from /proc when the poll arrives), paired A/B runs of two source trees in turn (A B A B ...).

Usage: .venv/bin/python bench/bench_gateway_start.py [--runs 10] [--src DIR] [--vs-src DIR]
--src / --vs-src: a `src` directory put first on PYTHONPATH (default: this checkout's; --vs-src: none = A only).
A stub Bot API on loopback answers getMe/deleteWebhook and holds getUpdates; each gateway is stopped (SIGTERM)
once it polled. The home is kept between runs (steady state: config.yaml's JSON copy exists), bytecode is
written (PYTHONDONTWRITEBYTECODE is dropped). Prints the medians and the median of the pairwise ratios A/B."""

from __future__ import annotations

import argparse
import json
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
HERMES = str(Path(sys.executable).with_name("hermes"))


def cpu_s(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


class Stub:
    """getMe / deleteWebhook answered; the first getUpdates of a run records (time, CPU of `pid`)."""

    def __init__(self) -> None:
        self.pid = 0
        self.polled: tuple[float, float] | None = None
        self.event = threading.Event()
        stub = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_POST(self) -> None:  # noqa: N802
                self.rfile.read(int(self.headers.get("Content-Length") or 0))
                method = self.path.rsplit("/", 1)[-1]
                if method == "getUpdates":
                    if stub.polled is None and stub.pid:
                        stub.polled = (time.time(), cpu_s(stub.pid))
                        stub.event.set()
                    time.sleep(1.0)
                    result: object = []
                elif method == "getMe":
                    result = {"id": 1, "is_bot": True, "first_name": "b", "username": "b"}
                else:
                    result = True
                data = json.dumps({"ok": True, "result": result}).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args: object) -> None:
                pass

            def handle(self) -> None:
                try:
                    super().handle()
                except OSError:  # the gateway was stopped while its poll was held
                    pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/bot"


def one(stub: Stub, home: Path, src: str) -> tuple[float, float]:
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("OPENAI_", "HERMES_", "TELEGRAM_", "GATEWAY_")) and k != "PYTHONDONTWRITEBYTECODE"}
    env.update(HERMES_HOME=str(home), TELEGRAM_BOT_TOKEN="1:x", GATEWAY_ALLOW_ALL_USERS="true",
               MESSAGING_CWD=str(home), PYTHONPATH=src)
    stub.polled, stub.pid = None, 0
    stub.event.clear()
    t0 = time.time()
    proc = subprocess.Popen([HERMES, "gateway", "run"], env=env, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL)
    stub.pid = proc.pid
    try:
        if not stub.event.wait(60):
            raise SystemExit("the gateway never polled")
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
    assert stub.polled is not None
    return stub.polled[0] - t0, stub.polled[1]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=10)
    ap.add_argument("--src", default=str(ROOT / "src"))
    ap.add_argument("--vs-src", default="")
    args = ap.parse_args()
    stub = Stub()
    trees = [("A", args.src)] + ([("B", args.vs_src)] if args.vs_src else [])
    with tempfile.TemporaryDirectory() as tmp:
        homes = {}
        for name, _ in trees:
            home = homes[name] = Path(tmp) / name
            home.mkdir()
            (home / "config.yaml").write_text(
                "model:\n  provider: custom\n  default: m\n  base_url: http://127.0.0.1:9/v1\n  api_key: k\n"
                f"platforms:\n  telegram:\n    extra:\n      base_url: {stub.url}\n", encoding="utf-8")
        for name, src in trees:  # warm-up: bytecode, config.yaml's JSON copy
            one(stub, homes[name], src)
        loads = [os.getloadavg()[0]]
        got: dict[str, list[tuple[float, float]]] = {name: [] for name, _ in trees}
        for _ in range(args.runs):
            for name, src in trees:
                got[name].append(one(stub, homes[name], src))
        loads.append(os.getloadavg()[0])
    print(f"1-min load average {loads[0]:.1f} at start, {loads[1]:.1f} at end; {args.runs} runs each, medians")
    for name, src in trees:
        walls, cpus = [w for w, _ in got[name]], [c for _, c in got[name]]
        print(f"{name} ({src}): start to first poll {statistics.median(walls) * 1000:.0f} ms wall "
              f"(min {min(walls) * 1000:.0f}, max {max(walls) * 1000:.0f}), {statistics.median(cpus) * 1000:.0f} ms CPU")
    if len(trees) == 2:
        ratio = [a[0] / b[0] for a, b in zip(got["A"], got["B"], strict=True)]
        cratio = [a[1] / b[1] for a, b in zip(got["A"], got["B"], strict=True) if b[1]]
        print(f"A/B pairwise: wall {statistics.median(ratio):.2f}, CPU {statistics.median(cratio):.2f}")


if __name__ == "__main__":
    main()
