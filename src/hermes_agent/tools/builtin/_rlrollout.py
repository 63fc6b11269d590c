"""Local rollout-only RL runs: environments (prompts + a scorer), the run directory, and the driver
process (`python -m hermes_agent.tools.builtin._rlrollout RUN_DIR`) that runs `hermes batch run` over
the environment's prompts and scores every trajectory. No trainer: nothing here updates weights.

An environment is a directory `$HERMES_HOME/rl/environments/NAME/` holding `environment.json`
({"description", "scorer": "contains" | "exact" | "regex", "prompts": "prompts.jsonl"}) and its
prompts, one JSON object a line: {"prompt": ..., "answer": ...}. `arithmetic` is built in."""

from __future__ import annotations

import ast
import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

from hermes_agent import paths

SCORERS = ("contains", "exact", "regex")
_BUILTIN = {
    "arithmetic": {
        "description": "Built-in smoke environment: small sums, scored by whether the final answer contains the result",
        "scorer": "contains",
        "rows": [{"prompt": f"What is {a} + {b}? Reply with the number only.", "answer": str(a + b)}
                 for a, b in ((2, 3), (17, 25), (123, 456), (9, 91))],
    },
}


def rl_home() -> Path:
    return paths.hermes_home() / "rl"


def list_environments(atropos_dir: str = "") -> list[dict]:
    """Local rollout environments (built-in, then $HERMES_HOME/rl/environments), plus the Atropos
    environments found in `atropos_dir` (BaseEnv subclasses) when atroposlib is installed."""
    out = [{"name": n, "kind": "local", "description": e["description"], "scorer": e["scorer"],
            "prompts": len(e["rows"]), "path": "(built in)"} for n, e in _BUILTIN.items()]
    root = rl_home() / "environments"
    for spec in sorted(root.glob("*/environment.json")) if root.is_dir() else []:
        try:
            env = load_environment(spec.parent.name)
        except ValueError as exc:
            out.append({"name": spec.parent.name, "kind": "local", "error": str(exc), "path": str(spec.parent)})
            continue
        out.append({"name": env["name"], "kind": "local", "description": env["description"], "scorer": env["scorer"],
                    "prompts": len(env["rows"]), "path": str(spec.parent)})
    return out + atropos_environments(atropos_dir)


def atropos_environments(directory: str) -> list[dict]:
    """BaseEnv subclasses in `directory` (read, not imported). Listed for reference: running them needs
    the Atropos API server and a trainer, which this installation does not provide."""
    if not directory or not os.path.isdir(os.path.expanduser(directory)):
        return []
    found = []
    for py in sorted(Path(os.path.expanduser(directory)).glob("*.py")):
        try:
            tree = ast.parse(py.read_text(encoding="utf-8"))
        except (OSError, SyntaxError, UnicodeDecodeError):
            continue
        for node in ast.walk(tree):
            bases = {getattr(b, "id", getattr(b, "attr", "")) for b in getattr(node, "bases", [])}
            if isinstance(node, ast.ClassDef) and "BaseEnv" in bases:
                doc = (ast.get_docstring(node) or "").strip().splitlines()
                found.append({"name": py.stem, "kind": "atropos", "class": node.name, "path": str(py),
                              "description": doc[0] if doc else f"Atropos environment in {py.name}"})
    return found


def load_environment(name: str) -> dict:
    """{"name", "description", "scorer", "rows"} of a local environment; ValueError when unusable."""
    if name in _BUILTIN:
        return {"name": name, **_BUILTIN[name]}
    if not re.fullmatch(r"[A-Za-z0-9_.-]+", name or ""):
        raise ValueError(f"invalid environment name {name!r}")
    base = rl_home() / "environments" / name
    try:
        meta = json.loads((base / "environment.json").read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ValueError(f"no environment {name!r} (rl_list_environments lists them)") from None
    except (OSError, ValueError) as exc:
        raise ValueError(f"{base / 'environment.json'}: {exc}") from None
    scorer = meta.get("scorer", "contains")
    if scorer not in SCORERS:
        raise ValueError(f"{name}: scorer must be one of {', '.join(SCORERS)}")
    rows = []
    for line in (base / str(meta.get("prompts") or "prompts.jsonl")).read_text(encoding="utf-8").splitlines():
        if line.strip():
            row = json.loads(line)
            if not isinstance(row, dict) or not isinstance(row.get("prompt"), str) or "answer" not in row:
                raise ValueError(f"{name}: every prompt row needs \"prompt\" and \"answer\"")
            rows.append(row)
    return {"name": name, "description": str(meta.get("description") or ""), "scorer": scorer, "rows": rows}


def score(scorer: str, answer: object, final: str) -> float:
    """1.0 when the model's final reply matches the row's answer under `scorer`, else 0.0."""
    want, got = str(answer).strip(), final.strip()
    if scorer == "exact":
        return float(got == want)
    if scorer == "regex":
        return float(re.search(want, got) is not None)
    return float(want.lower() in got.lower())


def final_reply(entry: dict) -> str:
    """The last assistant turn of a trajectory entry (ShareGPT `gpt` value)."""
    turns = [t.get("value") or "" for t in entry.get("conversations") or [] if t.get("from") == "gpt"]
    return turns[-1] if turns else ""


# -- runs ----------------------------------------------------------------------------------------

def run_dir(run_id: str) -> Path:
    if not re.fullmatch(r"[A-Za-z0-9_-]+", run_id or ""):
        raise ValueError(f"invalid run id {run_id!r}")
    return rl_home() / "runs" / run_id


def read_run(run_id: str) -> dict:
    path = run_dir(run_id) / "run.json"
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ValueError(f"no run {run_id!r} (rl_list_runs lists them)") from None


def write_run(run_id: str, data: dict) -> None:
    path = run_dir(run_id) / "run.json"
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(data, indent=2), encoding="utf-8")
    os.replace(tmp, path)


def progress(run_id: str) -> dict:
    """Prompts finished so far (the batch runner's per-batch files), and the result once scored."""
    run = read_run(run_id)
    data = run_dir(run_id) / "data" / run_id
    done = sum(sum(1 for ln in f.open(encoding="utf-8") if ln.strip()) for f in data.glob("batch_*.jsonl"))
    out = {**run, "prompts_done": done}
    result = run_dir(run_id) / "result.json"
    if result.exists():
        out["result"] = json.loads(result.read_text(encoding="utf-8"))
    pid = run.get("pid")
    if run.get("status") == "running" and pid and not paths.pid_alive(pid):
        out["status"] = "failed"
        out["error"] = f"the rollout driver (pid {pid}) is gone; see {run_dir(run_id) / 'driver.log'}"
    return out



def drive(run_id: str) -> int:
    """The driver process: `hermes batch run` over the prompts, then scored.jsonl + result.json."""
    base = run_dir(run_id)
    run = read_run(run_id)
    cmd = [*paths.python_module("hermes_agent.cli.main"), "batch", "run", "--dataset", str(base / "dataset.jsonl"),
           "--run-name", run_id, "--output-dir", str(base / "data"), "--workers", str(run.get("workers", 2)),
           "-t", ",".join(run.get("toolsets") or ["terminal", "file"])]
    if run.get("max_iterations"):
        cmd += ["--max-iterations", str(run["max_iterations"])]
    with open(base / "batch.log", "ab") as log:
        code = subprocess.run(cmd, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, cwd=base).returncode
    run = read_run(run_id)
    if code != 0:
        write_run(run_id, {**run, "status": "failed", "error": f"hermes batch run exited {code}; see batch.log",
                           "finished": time.time()})
        return code
    result = score_run(run_id, run)
    write_run(run_id, {**run, "status": "completed", "finished": time.time(), "mean_score": result["mean_score"]})
    return 0


def score_run(run_id: str, run: dict) -> dict:
    """Score every trajectory with the environment's scorer: scored.jsonl (entry + score) and result.json."""
    base = run_dir(run_id)
    rows = [json.loads(ln) for ln in (base / "dataset.jsonl").read_text(encoding="utf-8").splitlines() if ln.strip()]
    scores = []
    with open(base / "scored.jsonl", "w", encoding="utf-8") as out:
        for line in (base / "data" / run_id / "trajectories.jsonl").open(encoding="utf-8"):
            if not line.strip():
                continue
            entry = json.loads(line)
            row = rows[entry["prompt_index"]]
            value = score(run["scorer"], row["answer"], final_reply(entry))
            scores.append(value)
            out.write(json.dumps({**entry, "environment": run["environment"], "answer": row["answer"],
                                  "score": value}, ensure_ascii=False) + "\n")
    result = {"environment": run["environment"], "mode": "rollout", "rollouts": len(scores),
              "mean_score": round(sum(scores) / len(scores), 4) if scores else 0.0,
              "correct": sum(1 for s in scores if s > 0), "scored_file": str(base / "scored.jsonl")}
    (base / "result.json").write_text(json.dumps(result, indent=2), encoding="utf-8")
    return result


if __name__ == "__main__":
    sys.exit(drive(sys.argv[1]))
