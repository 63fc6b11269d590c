"""The `cronjob` tool (Hermes 0.19's shape: action create|list|update|pause|resume|run|remove) and the
seeds' older names `schedule_cronjob`, `list_cronjobs`, `remove_cronjob`, all over the cron job store."""

from __future__ import annotations

import json

from hermes_agent import paths
from hermes_agent.cron.confinement import FIELD, Unconfined, merged, record
from hermes_agent.cron.jobs import JobNotFound, JobStore, new_job, utcnow
from hermes_agent.cron.schedule import ScheduleError
from hermes_agent.tools.provenance import cron_persists
from hermes_agent.tools.registry import registry
from hermes_agent.tools.results import tool_error

_ACTIONS = ("create", "list", "update", "pause", "resume", "run", "remove")
_S = {"type": "string"}

CRONJOB_SCHEMA = {
    "name": "cronjob",
    "description": (
        "Schedule prompts to run later: create (schedule, prompt), list, and update/pause/resume/remove/run "
        "a job_id from list (never guess one). A job runs in a fresh session with no history and nobody to "
        "ask: a self-contained prompt. Its final answer goes to `deliver`. Cron runs must not schedule jobs."),
    "parameters": {"type": "object", "properties": {
        "action": {"type": "string", "enum": list(_ACTIONS)},
        "job_id": {"type": "string"},
        "prompt": {"type": "string"},
        "schedule": {"type": "string", "description": "'30m' (once), 'every 2h', '0 9 * * *', ISO time"},
        "name": {"type": "string"},
        "repeat": {"type": "integer", "description": "runs (default: once for one-shot, else forever)"},
        "deliver": {"type": "string", "description": "default: this chat; 'local', 'telegram' (home channel), "
                                                     "'telegram:chat_id'; comma-separated"},
        "include_disabled": {"type": "boolean"},
    }, "required": ["action"]},
}


def _store() -> JobStore:
    return JobStore(paths.cron_dir())


def format_job(job: dict) -> dict:
    """A job as the tool (and `hermes cron list`) shows it: Hermes's field names."""
    prompt = str(job.get("prompt") or "")
    rep = job.get("repeat") or {}
    times = rep.get("times")
    return {"job_id": job.get("id"), "name": job.get("name") or prompt[:50], "prompt_preview": prompt[:100],
            "schedule": job.get("schedule_display") or (job.get("schedule") or {}).get("display", "?"),
            "repeat": "forever" if times is None else f"{rep.get('completed', 0)}/{times}",
            "deliver": job.get("deliver", "local"), "next_run_at": job.get("next_run_at"),
            "last_run_at": job.get("last_run_at"), "last_status": job.get("last_status"),
            "last_error": job.get("last_error"), "enabled": job.get("enabled", True),
            "state": job.get("state", "scheduled" if job.get("enabled", True) else "paused"),
            **({"created_by": job["created_by"]} if job.get("created_by") else {})}


def _own_only(ctx: object) -> str | None:
    """Team mode: a member (or guest) sees and changes only the jobs they made; None = every job."""
    role = str(getattr(ctx, "role", "") or "")
    return str(getattr(ctx, "person", "") or "") if role in ("member", "guest") else None


def _mine(job: dict, only: str | None) -> bool:
    return only is None or job.get("created_by") == only


def _order_refused(prompt: object) -> str:
    """Why a job prompt is refused ("" when it is not): it is a standing order by nature, so it is judged by the
    intent scan that memory, skills and context files get, less what a scheduled task may say (rt14b: one scanner
    for every text a future run obeys)."""
    if not isinstance(prompt, str) or not prompt.strip():
        return ""
    from hermes_agent.intent import orders

    hits = orders(prompt, ("sends user data out",))
    return (f"Refused: this job prompt reads as an instruction a scheduled run must not carry out ({hits[0].kind}: "
            f"{hits[0].quote[:100]!r}). Cron prompts run later without the user watching.") if hits else ""


def _create(args: dict, origin: dict | None, ctx: object) -> str:
    """A new job; from a gateway chat it records that chat as `origin` (and delivers there by default) and the
    person who asked as `created_by` (the job then runs with their role, toolsets and budget)."""
    if not args.get("schedule") or not args.get("prompt"):
        return tool_error("action=create needs both 'schedule' and 'prompt'")
    if why := _order_refused(args.get("prompt")):
        return tool_error(why)
    repeat = args.get("repeat")
    deliver = args.get("deliver") or ("origin" if origin else None)
    job = new_job(str(args["prompt"]), str(args["schedule"]), utcnow(), name=args.get("name"),
                  deliver=deliver, repeat=int(repeat) if repeat not in (None, "") else None, origin=origin)
    person = str(getattr(ctx, "person", "") or "")
    if person:
        job["created_by"] = person
    job[FIELD] = _confinement(ctx, person)
    _store().add(job)
    return json.dumps({"success": True, "job_id": job["id"], "name": job["name"], "schedule": job["schedule_display"],
                       "deliver": job["deliver"], "next_run_at": job["next_run_at"], "job": format_job(job),
                       "message": f"Cron job '{job['name']}' created."}, indent=2)


def _confinement(ctx: object, person: str) -> dict:
    """What the session making the job was confined to (its workspace, person, role, sandbox settings and the
    toolsets it did not offer): every run of the job gets exactly that or narrower (cron/confinement.py)."""
    import os

    from hermes_agent.config.loader import load_settings

    settings = getattr(ctx, "settings", None) or load_settings()
    policy = getattr(ctx, "path_policy", None)
    workspace = policy.workspace[0] if policy is not None and policy.workspace else \
        os.path.abspath(os.path.expanduser(settings.cfg.terminal.cwd))
    return record(settings, workspace, person=person, role=str(getattr(ctx, "role", "") or ""),
                  disabled_toolsets=_not_offered(getattr(ctx, "offered", frozenset())))


def _not_offered(offered: frozenset[str]) -> list[str]:
    """The basic toolsets (no includes, no presets) none of whose tools the session offered."""
    if not offered:
        return []
    from hermes_agent.tools.toolsets import TOOLSETS, resolve_or_skip

    out = []
    for name, spec in TOOLSETS.items():
        tools = [] if spec.get("includes") or name.startswith("hermes-") else resolve_or_skip(name)
        if tools and not any(t in offered for t in tools):
            out.append(name)
    out += [name for name, tools in registry.toolsets().items() if tools and not any(t in offered for t in tools)]
    return out


def _on_job(action: str, args: dict, only: str | None, ctx: object = None) -> str:
    job_id = str(args.get("job_id") or "")
    if not job_id:
        return tool_error(f"action={action} needs 'job_id' (use action='list' to find it)")
    store = _store()
    found = store.get(job_id)
    if not _mine(found, only):  # another person's job: as if there were none
        raise JobNotFound(job_id)
    job_id = str(found["id"])
    if action == "remove":
        job = store.remove(job_id)
        return json.dumps({"success": True, "message": f"Cron job '{job['name']}' removed.",
                           "removed_job": {"id": job["id"], "name": job["name"]}}, indent=2)
    if action in ("pause", "resume"):
        job = store.set_enabled(job_id, action == "resume", args.get("reason"))
    elif action == "run":
        job = store.trigger(job_id)
    else:  # what the job then does is this session's too: its confinement no wider than this session's
        fields = {k: args.get(k) for k in ("prompt", "name", "deliver", "schedule")}
        if why := _order_refused(fields["prompt"]):
            return tool_error(why)
        try:
            fields[FIELD] = merged(found.get(FIELD), _confinement(ctx, str(getattr(ctx, "person", "") or "")))
        except Unconfined as exc:
            return tool_error(f"job {job_id} not updated: {exc}")
        job = store.update(job_id, **fields)
    return json.dumps({"success": True, "job": format_job(job)}, indent=2)


def cronjob(args: dict, ctx: object = None) -> str:
    """Run one cronjob action; errors come back as JSON the model can act on."""
    action = str(args.get("action") or "").strip().lower()
    origin = getattr(ctx, "origin", None)
    only = _own_only(ctx)
    try:
        if action == "create":
            return _create(args, dict(origin) if origin else None, ctx)
        if action == "list":
            jobs = [format_job(j) for j in _store().load()
                    if _mine(j, only) and (args.get("include_disabled", True) or j.get("enabled", True))]
            return json.dumps({"success": True, "count": len(jobs), "jobs": jobs}, indent=2)
        if action in _ACTIONS:
            return _on_job(action, args, only, ctx)
    except ScheduleError as exc:
        return tool_error(str(exc))
    except JobNotFound:
        return tool_error(f"no job {args.get('job_id')!r} (use action='list' to see the job ids)")
    return tool_error(f"unknown action {action!r}: use one of {', '.join(_ACTIONS)}")


_LEGACY = {
    "schedule_cronjob": ("create", "Schedule a prompt to run later or repeatedly (legacy name of cronjob create).",
                         {"prompt": _S, "schedule": _S, "name": _S, "repeat": {"type": "integer"}, "deliver": _S},
                         ["prompt", "schedule"]),
    "list_cronjobs": ("list", "List scheduled jobs (legacy name of cronjob list).",
                      {"include_disabled": {"type": "boolean"}}, []),
    "remove_cronjob": ("remove", "Remove a scheduled job (legacy name of cronjob remove).", {"job_id": _S}, ["job_id"]),
}


def _legacy(action: str):  # type: ignore[no-untyped-def]
    return lambda args, **kw: cronjob({**args, "action": action}, kw.get("ctx"))


registry.register("cronjob", "cronjob", CRONJOB_SCHEMA, lambda args, **kw: cronjob(args, kw.get("ctx")), emoji="⏰",
                  subagent_ok=False, parallel_safe=False, persists=cron_persists)
for _name, (_action, _desc, _props, _req) in _LEGACY.items():
    registry.register(_name, "cronjob_legacy", {"name": _name, "description": _desc, "parameters": {
        "type": "object", "properties": _props, "required": _req}}, _legacy(_action), emoji="⏰",
        subagent_ok=False, parallel_safe=False, persists=lambda args, _a=_action: cron_persists({**args, "action": _a}))
