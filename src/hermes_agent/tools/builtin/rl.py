"""The `rl` toolset, in its honest local form. Hermes trains through Tinker + Atropos (GPU trainer,
Atropos API server, TINKER_API_KEY, WANDB_API_KEY); none of that runs here. What does run: listing
environments, and rollout-only runs (`rl_start_training(mode="rollout")`, or config `rl.backend:
local-rollout`) that run `hermes batch run` over an environment's prompts and score each trajectory
with the environment's scorer (scored.jsonl + result.json under $HERMES_HOME/rl/runs/RUN_ID/).
`mode: "train"` answers with what a real trainer would need."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
import uuid

from hermes_agent import paths
from hermes_agent.tools.builtin import _rlrollout as ro
from hermes_agent.tools.registry import registry
from hermes_agent.tools.results import tool_error, tool_result

_TRAIN_MISSING = ("not available here: training needs the Tinker training service (TINKER_API_KEY), the Atropos "
                  "API server (atroposlib's run-api) and a GPU trainer, none of which this installation provides. "
                  "Use mode \"rollout\" to generate and score trajectories locally.")

_OBJ = {"type": "object", "properties": {}, "required": []}
_RUN_ID = {"type": "object", "properties": {"run_id": {"type": "string", "description": "The run ID from rl_start_training()"}},
           "required": ["run_id"]}
SCHEMAS = {
    "rl_list_environments": {"description": "List the RL environments: local rollout environments (prompts + scorer) and, "
                             "when atroposlib is installed, Atropos environments found in rl.atropos_environments_dir.",
                             "parameters": _OBJ},
    "rl_start_training": {
        "description": "Start a run over an environment. mode \"rollout\" (the only mode available here) runs the agent "
                       "on every prompt with `hermes batch run` and scores each trajectory; \"train\" needs Tinker/Atropos.",
        "parameters": {"type": "object", "properties": {
            "environment": {"type": "string", "description": "Environment name (from rl_list_environments)"},
            "mode": {"type": "string", "enum": ["rollout", "train"], "description": "default: config rl.backend"},
            "limit": {"type": "integer", "description": "Use only the first N prompts"},
            "toolsets": {"type": "array", "items": {"type": "string"}, "description": "Toolsets of the rollout agents"},
            "max_iterations": {"type": "integer", "description": "Tool-calling turns per rollout"},
        }, "required": ["environment"]}},
    "rl_check_status": {"description": "Status and progress of a run: prompts done, and the mean score once scored.",
                        "parameters": _RUN_ID},
    "rl_stop_training": {"description": "Stop a running run.", "parameters": _RUN_ID},
    "rl_get_results": {"description": "Final results of a completed run: rollouts, mean score, path of the scored "
                       "trajectories (no trained weights: rollout-only).", "parameters": _RUN_ID},
    "rl_list_runs": {"description": "List runs with their status.", "parameters": _OBJ},
}


def _rl_config(kw: dict) -> dict:
    ctx = kw.get("ctx")
    settings = getattr(ctx, "settings", None)
    return dict(settings.cfg.rl) if settings is not None else {}


def list_environments(args: dict, **kw: object) -> str:
    cfg = _rl_config(kw)
    envs = ro.list_environments(str(cfg.get("atropos_environments_dir") or ""))
    try:
        import importlib.util

        atropos = importlib.util.find_spec("atroposlib") is not None
    except ValueError:
        atropos = False
    note = ("atroposlib is installed: Atropos environments are listed for reference; training them needs a "
            "trainer (not available here)" if atropos else
            "atroposlib is not installed: only local rollout environments are listed (pip install atroposlib "
            "and set rl.atropos_environments_dir to list Atropos ones)")
    return tool_result({"environments": envs, "count": len(envs), "note": note,
                        "environments_dir": str(ro.rl_home() / "environments")})


def start_training(args: dict, **kw: object) -> str:
    cfg = _rl_config(kw)
    mode = str(args.get("mode") or ("rollout" if cfg.get("backend", "local-rollout") == "local-rollout" else "train"))
    if mode != "rollout":
        return tool_error(_TRAIN_MISSING)
    try:
        env = ro.load_environment(str(args.get("environment") or ""))
    except (ValueError, OSError) as exc:
        return tool_error(str(exc))
    rows = env["rows"][: int(args["limit"])] if args.get("limit") else env["rows"]
    rows = list({r["prompt"].strip(): r for r in rows}.values())  # the batch runner keeps a prompt once
    if not rows:
        return tool_error(f"environment {env['name']} has no prompts")
    run_id = f"{time.strftime('%Y%m%d-%H%M%S')}-{uuid.uuid4().hex[:6]}"
    base = ro.run_dir(run_id)
    base.mkdir(parents=True)
    with open(base / "dataset.jsonl", "w", encoding="utf-8") as fh:
        fh.writelines(json.dumps(r, ensure_ascii=False) + "\n" for r in rows)
    run = {"run_id": run_id, "environment": env["name"], "mode": "rollout", "scorer": env["scorer"],
           "prompts": len(rows), "toolsets": list(args.get("toolsets") or cfg.get("toolsets") or ["terminal", "file"]),
           "workers": int(cfg.get("workers") or 2), "max_iterations": args.get("max_iterations"),
           "status": "running", "started": time.time()}
    ro.write_run(run_id, run)
    with open(base / "driver.log", "ab") as log:
        proc = subprocess.Popen(paths.python_module("hermes_agent.tools.builtin._rlrollout", run_id),
                                stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                start_new_session=True, env=dict(os.environ))
    ro.write_run(run_id, {**run, "pid": proc.pid})
    return tool_result({"run_id": run_id, "status": "running", "mode": "rollout", "environment": env["name"],
                        "prompts": len(rows), "run_dir": str(base),
                        "note": "rollout-only: trajectories are generated and scored, no weights are trained; "
                                "follow it with rl_check_status"})


def check_status(args: dict, **kw: object) -> str:
    try:
        info = ro.progress(str(args.get("run_id") or ""))
    except ValueError as exc:
        return tool_error(str(exc))
    info.pop("pid", None)
    return tool_result(info)


def stop_training(args: dict, **kw: object) -> str:
    run_id = str(args.get("run_id") or "")
    try:
        run = ro.read_run(run_id)
    except ValueError as exc:
        return tool_error(str(exc))
    if run.get("status") != "running":
        return tool_result({"run_id": run_id, "status": run.get("status"), "note": "not running"})
    try:
        os.killpg(int(run["pid"]), signal.SIGTERM)  # the driver's session: batch runner and its workers
    except (ProcessLookupError, KeyError, PermissionError):
        pass
    ro.write_run(run_id, {**run, "status": "stopped", "finished": time.time()})
    return tool_result({"run_id": run_id, "status": "stopped"})


def get_results(args: dict, **kw: object) -> str:
    try:
        info = ro.progress(str(args.get("run_id") or ""))
    except ValueError as exc:
        return tool_error(str(exc))
    if "result" not in info:
        return tool_error(f"run {info['run_id']} has no results yet (status: {info['status']})")
    return tool_result({"run_id": info["run_id"], "status": info["status"], **info["result"], "weights": None,
                        "note": "rollout-only run: no trained weights"})


def list_runs(args: dict, **kw: object) -> str:
    root = ro.rl_home() / "runs"
    runs = []
    for path in sorted(root.glob("*/run.json")) if root.is_dir() else []:
        info = ro.progress(path.parent.name)
        runs.append({k: info.get(k) for k in ("run_id", "environment", "mode", "status", "prompts", "prompts_done",
                                               "mean_score")})
    return tool_result({"runs": runs, "count": len(runs)})


def _schema(name: str) -> dict:
    return {"name": name, **SCHEMAS[name]}


# Written out one per line: discovery imports modules with a top-level `registry.register(...)` call.
registry.register("rl_list_environments", "rl", _schema("rl_list_environments"), list_environments, emoji="🧪")
registry.register("rl_start_training", "rl", _schema("rl_start_training"), start_training, emoji="🧪",
                  parallel_safe=False)
registry.register("rl_check_status", "rl", _schema("rl_check_status"), check_status, emoji="🧪")
registry.register("rl_stop_training", "rl", _schema("rl_stop_training"), stop_training, emoji="🧪")
registry.register("rl_get_results", "rl", _schema("rl_get_results"), get_results, emoji="🧪")
registry.register("rl_list_runs", "rl", _schema("rl_list_runs"), list_runs, emoji="🧪")
