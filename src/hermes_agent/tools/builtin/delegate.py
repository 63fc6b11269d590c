"""The `delegate_task` tool: hands tasks to subagents through `ctx.delegate` (bootstrap/delegation.py
builds them). Subagents never get it (no recursion), and it runs alone, never beside other calls."""

from __future__ import annotations

from hermes_agent.errors import HermesError
from hermes_agent.messages import safe_loads
from hermes_agent.tools.registry import registry
from hermes_agent.tools.results import tool_error

_TOOLSETS = {"type": "array", "items": {"type": "string"},
             "description": "e.g. [\"terminal\",\"file\",\"web\"] (default: yours)"}

DELEGATE_SCHEMA = {
    "name": "delegate_task",
    "description": (
        "Hand independent subtasks to subagents with their own context; only a summary comes back. For "
        "research or exploration that would flood your context, and parallel work. They have NO "
        "conversation history and cannot ask the user: goal and context must be self-contained (paths, facts "
        "so far, constraints, what to report). One task: goal (+context, toolsets); several: tasks[] (run in "
        "parallel). They cannot delegate, clarify or write memory. Check what they claim."
    ),
    "parameters": {
        "type": "object",
        "properties": {
            "goal": {"type": "string", "description": "What to achieve and report"},
            "context": {"type": "string"},
            "toolsets": _TOOLSETS,
            "tasks": {
                "type": "array",
                "items": {
                    "type": "object",
                    "properties": {"goal": {"type": "string"}, "context": {"type": "string"},
                                   "toolsets": {"type": "array", "items": {"type": "string"}}},
                    "required": ["goal"],
                },
            },
        },
    },
}


def normalise_args(args: dict) -> dict:
    """Hermes's delegate_task shapes as ours: `tasks` sent as a JSON string is parsed; non-empty `tasks`
    win over `goal` (as in Hermes); `role`, `background` and `max_iterations` (top level and per task)
    are accepted and dropped — subagents here are leaves and the call returns when they finish."""
    out = {k: v for k, v in args.items() if k not in _HERMES_ONLY}
    tasks = out.get("tasks")
    if isinstance(tasks, str):
        try:
            tasks = safe_loads(tasks) if tasks.strip() else None
        except ValueError:
            pass  # left a string: parse_tasks reports it
    if isinstance(tasks, list) and tasks:
        out["tasks"] = [{k: v for k, v in t.items() if k not in _HERMES_ONLY} if isinstance(t, dict) else t
                        for t in tasks]
        out.pop("goal", None)
    elif tasks in (None, []) or (tasks == "" and out.get("goal")):
        out.pop("tasks", None)
    return out


_HERMES_ONLY = frozenset({"role", "background", "max_iterations"})


def _handle(args: dict, **kw: object) -> str:
    try:
        return kw["ctx"].delegate(args)  # type: ignore[attr-defined]  # `needs` guarantees it
    except (ValueError, HermesError) as exc:  # bad goal/tasks/toolsets: the model can fix its call
        return tool_error(f"delegate_task: {exc}")


# Each child's summary is already capped (delegation.max_summary_chars); never cut the JSON of all rows.
registry.register("delegate_task", "delegation", DELEGATE_SCHEMA, _handle, emoji="🔀", parallel_safe=False,
                  subagent_ok=False, needs={"delegate"}, max_result_size_chars=10_000_000,
                  untrusted_output=True)  # a subagent's summary may carry what it read (pages, MCP results)
