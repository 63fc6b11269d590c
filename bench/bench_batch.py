"""Batch runner throughput: the real `hermes batch run` on N prompts against the scripted model (instant
answers), local workers 1/2/4 and a local 2-CPU Ray cluster; driver RSS sampled through each run.

Usage: .venv/bin/python bench/bench_batch.py [--prompts 200] [--no-ray]"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tests.helpers import HERMES, model_config  # noqa: E402

from hermes_agent.providers.scripted import ScriptedServer  # noqa: E402


def rss_mib(pid: int) -> float:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return 0.0


def run(home: Path, cwd: Path, data: Path, name: str, extra: list[str]) -> tuple[float, list[float]]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "HERMES_"))}
    env.update(HERMES_HOME=str(home), RAY_USAGE_STATS_ENABLED="0")
    t0 = time.perf_counter()
    proc = subprocess.Popen([HERMES, "batch", "run", "--dataset", str(data), "--run-name", name, "-t", "file", *extra],
                            cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    samples = []
    while proc.poll() is None:
        samples.append(rss_mib(proc.pid))
        time.sleep(0.25)
    out = json.loads(proc.stdout.read())  # type: ignore[union-attr]
    assert out["completed"] == out["prompts"], out
    return time.perf_counter() - t0, [s for s in samples if s]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--prompts", type=int, default=200)
    ap.add_argument("--no-ray", action="store_true")
    args = ap.parse_args()
    model = ScriptedServer(default=lambda body: {"content": "ok"}).start()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        home = root / "home"
        home.mkdir()
        model_config(home, model.url)
        data = root / "p.jsonl"
        data.write_text("".join(json.dumps({"prompt": f"prompt {i}"}) + "\n" for i in range(args.prompts)))
        for workers in (1, 2, 4):
            took, rss = run(home, root, data, f"local{workers}", ["--workers", str(workers)])
            print(f"local {workers} worker(s): {args.prompts / took:.1f} prompts/s ({took:.1f} s wall, incl. start); "
                  f"driver RSS {min(rss):.0f}-{max(rss):.0f} MiB")
        if not args.no_ray:
            ray = str(Path(HERMES).parent / "ray")
            ray_tmp = tempfile.mkdtemp(prefix="ray", dir="/tmp")
            env = {**os.environ, "RAY_USAGE_STATS_ENABLED": "0"}
            subprocess.run([ray, "start", "--head", "--port=6399", "--num-cpus=2", "--disable-usage-stats",
                            "--include-dashboard=false", f"--temp-dir={ray_tmp}"], env=env, capture_output=True, check=True)
            try:
                took, rss = run(home, root, data, "ray", ["--workers", "2", "--ray", "127.0.0.1:6399"])
                print(f"ray 2 CPUs: {args.prompts / took:.1f} prompts/s ({took:.1f} s wall); "
                      f"driver RSS {min(rss):.0f}-{max(rss):.0f} MiB")
            finally:
                subprocess.run([ray, "stop", "--force"], env=env, capture_output=True)
    model.stop()


if __name__ == "__main__":
    main()
