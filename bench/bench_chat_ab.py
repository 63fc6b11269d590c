"""`hermes chat -q hi` from spawn to its whole first model request received on loopback, paired A/B runs of two
source trees in turn (A B A B ...), with bare `python -c pass` and the load average beside them.

Usage: .venv/bin/python bench/bench_chat_ab.py --src A/src --vs-src B/src [--runs 15] [--home DIR --vs-home DIR]
Each tree gets its own home (default: fresh temporary ones; give a copy of a user's home, e.g. with memories and
skills, to measure that case: each home's config.yaml is rewritten to point at the listener). Two warm-up runs per
tree first (bytecode, config.yaml's JSON copy, kept verdicts and indexes). Bytecode is written
(PYTHONDONTWRITEBYTECODE dropped); hermes runs in /tmp. Prints medians, minimums and the median pairwise ratio A/B."""

from __future__ import annotations

import argparse
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time

HERMES = os.path.join(os.path.dirname(sys.executable), "hermes")


def _request(srv: socket.socket) -> None:
    conn, _ = srv.accept()
    with conn:
        data = b""
        while b"\r\n\r\n" not in data:
            chunk = conn.recv(65536)
            if not chunk:
                raise SystemExit("hermes closed the connection before its request")
            data += chunk
        head, _, body = data.partition(b"\r\n\r\n")
        length = next(int(line.split(b":", 1)[1]) for line in head.split(b"\r\n")
                      if line.lower().startswith(b"content-length:"))
        while len(body) < length:
            body += conn.recv(65536)


def one(srv: socket.socket, src: str, home: str) -> float:
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("OPENAI_", "HERMES_")) and k != "PYTHONDONTWRITEBYTECODE"}
    env.update(PYTHONPATH=src, HERMES_HOME=home)
    t0 = time.perf_counter()
    proc = subprocess.Popen([HERMES, "chat", "-q", "hi", "-Q"], env=env, cwd="/tmp", stdin=subprocess.DEVNULL,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        _request(srv)
        return time.perf_counter() - t0
    finally:
        proc.kill()
        proc.wait()


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--src", required=True)
    ap.add_argument("--vs-src", required=True)
    ap.add_argument("--runs", type=int, default=15)
    ap.add_argument("--home", default="")
    ap.add_argument("--vs-home", default="")
    args = ap.parse_args()
    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen(8)
    srv.settimeout(60)
    port = srv.getsockname()[1]
    with tempfile.TemporaryDirectory() as tmp:
        trees = [(args.src, args.home or os.path.join(tmp, "a")), (args.vs_src, args.vs_home or os.path.join(tmp, "b"))]
        for _, home in trees:
            os.makedirs(home, exist_ok=True)
            with open(os.path.join(home, "config.yaml"), "w", encoding="utf-8") as fh:
                fh.write(f"model:\n  provider: custom\n  default: m\n  base_url: http://127.0.0.1:{port}/v1\n"
                         "  api_key: k\n")
        for src, home in trees:
            one(srv, src, home)
            one(srv, src, home)
        load = os.getloadavg()[0]
        got: list[list[float]] = [[], []]
        for _ in range(args.runs):
            for i, (src, home) in enumerate(trees):
                got[i].append(one(srv, src, home))
        bare = []
        for _ in range(args.runs):
            t0 = time.perf_counter()
            subprocess.run([sys.executable, "-c", "pass"], check=True)
            bare.append(time.perf_counter() - t0)
    print(f"1-min load average {load:.1f} at start, {os.getloadavg()[0]:.1f} at end; {args.runs} paired runs; "
          f"bare python -c pass {statistics.median(bare) * 1000:.0f} ms")
    for (src, home), times in zip(trees, got, strict=True):
        print(f"{src} (home {home}): first request received {statistics.median(times) * 1000:.0f} ms "
              f"(min {min(times) * 1000:.0f})")
    print(f"A/B pairwise: {statistics.median(a / b for a, b in zip(got[0], got[1], strict=True)):.2f}")


if __name__ == "__main__":
    main()
