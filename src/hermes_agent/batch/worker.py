"""One prompt, one isolated agent: its own task id, a fresh working directory, the sampled toolsets, an
approver that denies, no memory, rules files, plugins or MCP; no state.db writes. Runs in a worker process
(local pool or Ray); returns a plain dict (the trajectory entry, or the error)."""

from __future__ import annotations

import os
import shutil
import tempfile
import time
from datetime import datetime
from typing import TYPE_CHECKING

from hermes_agent.messages import safe_loads

if TYPE_CHECKING:
    from hermes_agent.core.contract import AgentSession


def _tool_stats(history: list) -> dict[str, dict[str, int]]:
    """{tool: {count, success, failure}} from the conversation (a result with an "error" key failed)."""
    names: dict[str, str] = {}
    stats: dict[str, dict[str, int]] = {}
    for m in history:
        for call in m.tool_calls or ():
            names[call.id] = call.name
            stats.setdefault(call.name, {"count": 0, "success": 0, "failure": 0})["count"] += 1
        if m.role == "tool" and m.tool_call_id in names:
            try:
                failed = isinstance(safe_loads(m.content or "{}"), dict) and "error" in safe_loads(m.content or "{}")
            except ValueError:
                failed = False
            stats[names[m.tool_call_id]]["failure" if failed else "success"] += 1
    return stats


def run_prompt(task: dict) -> dict:
    """task: index, key, text, toolsets, max_iterations, batch_num, hermes_home (optional), overrides."""
    if task.get("hermes_home"):
        os.environ["HERMES_HOME"] = task["hermes_home"]
    from hermes_agent.approval.approvers import AutoDenyApprover
    from hermes_agent.bootstrap import build_agent
    from hermes_agent.bootstrap.options import RunOptions
    from hermes_agent.config.loader import load_settings
    from hermes_agent.core.trajectory import to_sharegpt

    started = time.monotonic()
    workdir = tempfile.mkdtemp(prefix=f"hermes-batch-{task['index']}-")
    agent: AgentSession | None = None
    try:
        settings = load_settings({**(task.get("overrides") or {}), "terminal.cwd": workdir})
        agent = build_agent(settings, platform="batch", toolsets=list(task["toolsets"]), approver=AutoDenyApprover(),
                            interactive=False, persist=False, max_iterations=task.get("max_iterations"),
                            options=RunOptions(ignore_rules=True, safe_mode=True))
        outcome = agent.run_turn(task["text"])
        stats = _tool_stats(agent.history)
        entry = {
            "prompt_index": task["index"], "prompt_key": task["key"],
            "conversations": to_sharegpt(agent.history, agent.tool_definitions()),
            "metadata": {"batch_num": task["batch_num"], "timestamp": datetime.now().isoformat(),
                         "model": settings.model.model},
            "completed": outcome.reason == "stop", "partial": outcome.reason != "stop",
            "api_calls": outcome.api_calls, "toolsets_used": list(task["toolsets"]), "tool_stats": stats,
            "tool_error_counts": {k: v["failure"] for k, v in stats.items()},
            "tokens": {"prompt": outcome.usage.prompt_tokens, "completion": outcome.usage.completion_tokens},
            "duration_s": round(time.monotonic() - started, 3),
        }
        if outcome.reason == "budget":  # which cap stopped this prompt (budget.batch.*), for whoever reads the run
            entry["metadata"]["stopped"] = outcome.final_text
        # the tool results it took in (pages, MCP) are in the entry: the runner marks the files it lands in
        return {"ok": True, "entry": entry, "untrusted": agent.services.ctx.untrusted}
    except Exception as exc:  # a worker boundary: any failure is this prompt's recorded error, never the run's
        from hermes_agent.errors import ConfigError, ToolError, UsageError

        # a bad config or toolset name fails the same way every time: not worth a retry
        return {"ok": False, "error": f"{type(exc).__name__}: {exc}", "duration_s": round(time.monotonic() - started, 3),
                "retry": not isinstance(exc, (ConfigError, ToolError, UsageError))}
    finally:
        if agent is not None:
            try:
                agent.close()
            except Exception:  # noqa: S110 - closing must not turn a result into a failure
                pass
        shutil.rmtree(workdir, ignore_errors=True)
