"""Benchmark: `hermes skills search` latency across every hub source (GitHub Contents API with three
repos, a well-known index, ClawHub, LobeHub, skills.sh, a Claude marketplace, taps), all faked on
loopback, with one source (LobeHub) hung for 5 s. Each run starts from an empty index cache.

Reports, per per-source timeout: p50/p95 of the whole search and of the moment every fast source had
answered, in-process; and the wall time of the real CLI (process start-up included).
Run: .venv/bin/python bench/bench_skills_search.py [--runs 20]"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.fake_skill_hubs import HubFakes  # noqa: E402

from hermes_agent.skills.hub import HubConfig, SkillsHub  # noqa: E402

GUARD = ROOT / "tests" / "fixtures" / "skills_guard" / "benign"


def fakes_with_content() -> HubFakes:
    hub = HubFakes().start()
    names = sorted(p.name for p in GUARD.iterdir())
    for i, repo in enumerate(("anthropics/skills", "openai/skills", "randomdev/skills")):
        for name in names[i::3]:
            hub.add_dir(repo, f"skills/{name}", GUARD / name)
    hub.well_known["git-notes"] = {"SKILL.md": b"---\nname: git-notes\ndescription: git notes\n---\n"}
    hub.clawhub["git-helper"] = ("Helps with git", {"SKILL.md": b"---\nname: git-helper\n---\n"})
    hub.skills_sh.append({"id": "anthropics/skills/git-commits", "name": "git-commits", "installs": 10})
    hub.repos["acme/market"] = {".claude-plugin/marketplace.json":
                                b'{"plugins": [{"name": "git", "description": "git tools", "source": "./git"}]}'}
    return hub


def config(hub: HubFakes, timeout: float) -> HubConfig:
    return HubConfig(timeout=timeout, github_api=f"{hub.url}/gh",
                     repos=("anthropics/skills/skills", "openai/skills/skills", "randomdev/skills/skills"),
                     marketplaces=("acme/market",), well_known=(f"{hub.url}/wk",),
                     clawhub_url=f"{hub.url}/claw/api/v1", lobehub_url=f"{hub.url}/slow",
                     skills_sh_url=f"{hub.url}/sksh")


def in_process(hub: HubFakes, timeout: float, runs: int) -> tuple[list[float], list[float], int]:
    """(total seconds, seconds until every fast source answered, hits of the last run) per run."""
    totals, fast = [], []
    hits = 0
    for _ in range(runs):
        with tempfile.TemporaryDirectory() as tmp:
            sh = SkillsHub(Path(tmp) / "skills", config=config(hub, timeout))
            t0 = time.perf_counter()
            marks: list[float] = []
            results = sh.search("git", on_result=lambda r, m=marks, s=t0: m.append(time.perf_counter() - s)
                                if r.source != "lobehub" else None)
            totals.append(time.perf_counter() - t0)
            fast.append(max(marks))
            hits = sum(len(r.hits) for r in results)
    return totals, fast, hits


def through_cli(hub: HubFakes, timeout: float, runs: int) -> list[float]:
    exe = str(Path(sys.executable).with_name("hermes"))
    c = config(hub, timeout)
    yaml = (f"skills:\n  hub:\n    timeout: {timeout}\n    github_api: {c.github_api}\n    repos: {list(c.repos)}\n"
            f"    marketplaces: {list(c.marketplaces)}\n    well_known: {list(c.well_known)}\n"
            f"    clawhub_url: {c.clawhub_url}\n    lobehub_url: {c.lobehub_url}\n    skills_sh_url: {c.skills_sh_url}\n")
    out = []
    for _ in range(runs):
        with tempfile.TemporaryDirectory() as home:
            Path(home, "config.yaml").write_text(yaml)
            env = {**os.environ, "HERMES_HOME": home, "GITHUB_TOKEN": "", "PATH": "/usr/bin:/bin"}
            t0 = time.perf_counter()
            proc = subprocess.run([exe, "skills", "search", "git"], env=env, capture_output=True, text=True)
            out.append(time.perf_counter() - t0)
            assert "lobehub: timed out" in proc.stdout, proc.stdout + proc.stderr
    return out


def pct(xs: list[float], p: float) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, round(p / 100 * (len(xs) - 1)))]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=20)
    args = ap.parse_args()
    hub = fakes_with_content()
    try:
        for timeout in (0.8, 3.0):
            totals, fast, hits = in_process(hub, timeout, args.runs)
            cli = through_cli(hub, timeout, max(3, args.runs // 4))
            print(f"timeout {timeout:g}s, lobehub hung 5s, {hits} hits: search p50 {pct(totals, 50):.2f}s "
                  f"p95 {pct(totals, 95):.2f}s; fast sources all answered p50 {pct(fast, 50) * 1000:.0f}ms "
                  f"p95 {pct(fast, 95) * 1000:.0f}ms; CLI wall p50 {statistics.median(cli):.2f}s "
                  f"p95 {pct(cli, 95):.2f}s")
    finally:
        hub.stop()


if __name__ == "__main__":
    main()
