"""`hermes batch run|distributions`: many prompts as ShareGPT trajectories in data/<run_name>/ (Hermes's
batch_runner flags --dataset_file --batch_size --num_workers --run_name are accepted too)."""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

from hermes_agent.config.settings import Settings


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    """Register `hermes batch ...`."""
    p = subparsers.add_parser("batch", help="Run a dataset of prompts as trajectories (local workers or Ray)")
    sub = p.add_subparsers(dest="batch_command", metavar="ACTION")
    r = sub.add_parser("run", help="Run or resume a batch")
    r.add_argument("--dataset", "--dataset_file", dest="dataset", required=True, help="JSONL with a \"prompt\" per line")
    r.add_argument("--run-name", "--run_name", dest="run_name", required=True, help="output goes to data/RUN_NAME/")
    r.add_argument("--workers", "--num_workers", dest="workers", type=int, default=4,
                   help="prompts run at once (default 4)")
    r.add_argument("--batch-size", "--batch_size", dest="batch_size", type=int, default=10,
                   help="prompts per batch_N.jsonl file (default 10)")
    r.add_argument("--distribution", help="toolset distribution name (hermes batch distributions)")
    r.add_argument("-t", "--toolsets", help="comma-separated toolsets for every prompt (without --distribution)")
    r.add_argument("--max-iterations", "--max_turns", dest="max_iterations", type=int,
                   help="tool-calling turns per prompt (default agent.max_turns)")
    r.add_argument("--ray", metavar="ADDRESS", help="run on a Ray cluster: auto, host:port or ray://host:port")
    r.add_argument("--seed", type=int, default=0, help="seed of the toolset sampling (reproducible runs)")
    r.add_argument("--max-retries", dest="max_retries", type=int, default=2,
                   help="extra attempts for a failed prompt (default 2)")
    r.add_argument("--output-dir", dest="output_dir", default="data", help="parent of RUN_NAME (default: ./data)")
    r.add_argument("--resume", action="store_true", help="accepted for Hermes compatibility: runs always resume")
    sub.add_parser("distributions", help="List the toolset distributions")


def run(args: argparse.Namespace, settings: Settings) -> int:
    from hermes_agent.batch import distributions

    if getattr(args, "batch_command", None) == "distributions":
        for name, (desc, table) in distributions.DISTRIBUTIONS.items():
            print(f"{name:16} {desc}\n{'':16} " + ", ".join(f"{k} {v}%" for k, v in table.items()))
        return 0
    if getattr(args, "batch_command", None) != "run":
        print("usage: hermes batch run --dataset FILE --run-name NAME [...] | hermes batch distributions",
              file=sys.stderr)
        return 2
    return _run(args, settings)


def _overrides(args: argparse.Namespace) -> dict:
    """This run's -m/--base-url/-C flags, for the workers (which load settings themselves)."""
    from hermes_agent.cli.main import overrides_from

    return {k: v for k, v in overrides_from(args).items() if v is not None}


def _run(args: argparse.Namespace, settings: Settings) -> int:
    from hermes_agent.batch.runner import BatchOptions, run_batch

    if args.ray:
        import importlib.util

        if importlib.util.find_spec("ray") is None:
            from hermes_agent.paths import install_hint

            print(f"hermes batch --ray needs Ray: {install_hint('batch')}", file=sys.stderr)
            return 1
    opts = BatchOptions(dataset=Path(args.dataset), run_name=args.run_name, workers=max(1, args.workers),
                        batch_size=args.batch_size, distribution=args.distribution,
                        toolsets=tuple(t.strip() for t in (args.toolsets or "").split(",") if t.strip()),
                        max_iterations=args.max_iterations, ray=args.ray, seed=args.seed,
                        max_retries=max(0, args.max_retries), out_root=Path(args.output_dir),
                        overrides=_overrides(args), hermes_home=str(settings.home))
    try:
        stats = run_batch(opts)
    except (OSError, ValueError) as exc:
        print(f"hermes batch: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt as exc:  # runner.Interrupted says how far the run got
        done = f"{exc.finished}/{exc.total} prompts finished, " if hasattr(exc, "finished") else "finished prompts are "
        print(f"\nhermes batch: interrupted; {done}kept in {os.path.join(args.output_dir, args.run_name)}"
              " (the same command resumes)", file=sys.stderr)
        return 130
    print(json.dumps({k: stats[k] for k in ("completed", "prompts", "ran_now", "failed_now", "seconds",
                                            "prompts_per_second", "trajectories")}))
    out = os.path.join(args.output_dir, args.run_name)
    if stats["failed_now"]:
        print(f"{stats['failed_now']} prompt(s) failed; last error: {_last_failure(Path(out))}\n"
              f"every failure: {os.path.join(out, 'failures.jsonl')}", file=sys.stderr)
    print(f"Trajectories: {os.path.join(out, 'trajectories.jsonl')}", file=sys.stderr)
    return 0 if stats["completed"] == stats["prompts"] else 1


def _last_failure(run_dir: Path) -> str:
    try:
        with open(run_dir / "failures.jsonl", encoding="utf-8") as fh:
            return str(json.loads(fh.readlines()[-1]).get("error") or "unknown")[:400]
    except (OSError, ValueError, AttributeError, IndexError):
        return "unknown"
