"""Benchmark: cost of the skills index with 100 installed skills (and of steady-state bundled seeding).

Run: .venv/bin/python bench/bench_skills.py [--skills 100] [--runs 30]"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

_CHILD = """
import sys, time
import json, logging, pathlib, dataclasses, re  # the agent has these loaded before it builds a prompt
import hermes_agent.config.settings
t0 = time.perf_counter()
from hermes_agent.skills.catalog import SkillCatalog
t1 = time.perf_counter()
text = SkillCatalog([sys.argv[1]]).index_text()
print((t1 - t0) * 1000, (time.perf_counter() - t1) * 1000, len(text))
"""


def make_skills(root: Path, count: int) -> None:
    """`count` realistic skills in 10 categories, each with a supporting file."""
    for i in range(count):
        d = root / f"category-{i % 10}" / f"skill-{i:03d}"
        (d / "references").mkdir(parents=True)
        (d / "SKILL.md").write_text(
            f"---\nname: skill-{i:03d}\ndescription: Procedure number {i} for a recurring task, with the "
            f"commands and pitfalls that worked\nversion: 1.0.{i}\ntags: [bench, t{i % 7}]\nmetadata:\n"
            f"  hermes:\n    category: category-{i % 10}\n    related_skills: [skill-{(i + 1) % count:03d}]\n---\n"
            + "# Steps\n" + "".join(f"{n}. Do step {n} carefully.\n" for n in range(1, 40)))
        (d / "references" / "notes.md").write_text("notes\n" * 50)


def _median_ms(fn, runs: int) -> float:
    samples = []
    for _ in range(runs):
        t0 = time.perf_counter()
        fn()
        samples.append((time.perf_counter() - t0) * 1000)
    return statistics.median(samples)


def in_process(root: Path, runs: int) -> dict[str, float]:
    """Median ms: cold parse (no caches), disk cache only (new process state), in-memory cache."""
    from hermes_agent.skills import catalog as mod

    cache_file = root / mod.CACHE_REL

    def cold() -> None:
        mod._MEM.clear()
        cache_file.unlink(missing_ok=True)
        mod.SkillCatalog([root]).index_text()

    def disk() -> None:
        mod._MEM.clear()
        mod.SkillCatalog([root]).index_text()

    def warm() -> None:
        mod.SkillCatalog([root]).index_text()

    cold()  # import ruamel once so "cold" measures parsing, not the import
    return {"cold_parse_ms": _median_ms(cold, runs), "disk_cache_ms": _median_ms(disk, runs),
            "memory_cache_ms": _median_ms(warm, runs)}


def fresh_process(root: Path, runs: int) -> dict[str, float]:
    """Median ms inside a new interpreter (disk cache present): importing the catalog, building the index."""
    imports, builds, size = [], [], 0
    for _ in range(runs):
        out = subprocess.run([sys.executable, "-c", _CHILD, str(root)], capture_output=True, text=True,
                             env=dict(os.environ), check=True).stdout.split()
        imports.append(float(out[0]))
        builds.append(float(out[1]))
        size = int(out[2])
    return {"fresh_import_catalog_ms": statistics.median(imports),
            "fresh_build_index_ms": statistics.median(builds), "index_chars": size}


def seeding(runs: int) -> float:
    """Median ms of seed_bundled when everything is already seeded (the every-start cost)."""
    from hermes_agent.skills.bundled import seed_bundled

    d = Path(tempfile.mkdtemp(prefix="hermes-bench-seed-"))
    try:
        seed_bundled(d)
        return _median_ms(lambda: seed_bundled(d), runs)
    finally:
        shutil.rmtree(d)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--skills", type=int, default=100)
    ap.add_argument("--runs", type=int, default=30)
    opts = ap.parse_args()
    root = Path(tempfile.mkdtemp(prefix="hermes-bench-skills-"))
    try:
        make_skills(root, opts.skills)
        res = in_process(root, opts.runs)
        res.update(fresh_process(root, max(5, opts.runs // 3)))
        res["seed_bundled_steady_ms"] = seeding(opts.runs)
    finally:
        shutil.rmtree(root)
    print(f"skills index, {opts.skills} skills (median of {opts.runs} runs)")
    for key, value in res.items():
        print(f"  {key:<24} {value:9.2f}" if isinstance(value, float) else f"  {key:<24} {value:9d}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
