"""What a cron job may touch when it runs: the confinement of the session that made it (red-team round 6 a03: a
job made by a session confined to ~/ws ran later in the scheduler's cwd and overwrote ~/projects/thesis/ch1.tex).

A job made here records `confinement` (our field; Hermes keeps fields it does not know):

    {"workspace": "/abs/dir", "person": "<platform>:<id>" or "", "role": "member" or "",
     "disabled_toolsets": [...], "backend": "local", "sandbox": {the `sandbox:` section then}}

and every run — `hermes cron run --now`, the gateway's scheduler, `hermes cron daemon`, wherever it was started —
works in that workspace (or the job's `workdir` inside it) under the narrower of the sandbox then and now:
the stricter mode, the writable/readable paths and sockets granted both then and now, the deny lists of both,
network and a shared /tmp only if both allowed them. A job from an older file (or from Hermes) without it runs
confined to its `workdir` when it has one and that is a project's directory; a workdir that is `/`, a top-level
directory, HOME or above it, or inside the Hermes home only ever meant "start here" to Hermes, so the job runs
there read-only (rt12 a21: Hermes's `cron create --workdir ~` let the job write every project in HOME); else a script-only (`no_agent`) job runs with `sandbox.mode: read-only`
(its script writes nowhere but its temp dir) and an agent job is refused with one line (`hermes cron edit ID
--workdir DIR` gives it one). Stdlib and config only."""

from __future__ import annotations

import logging
import os
from dataclasses import asdict

from hermes_agent.config.settings import Settings
from hermes_agent.paths import is_under as _within
from hermes_agent.paths import too_broad

log = logging.getLogger(__name__)

FIELD = "confinement"
_MODES = ("off", "workspace-write", "read-only")  # widest first
_BOTH = ("writable_paths", "readable_paths", "sockets")  # granted only if granted then and now
_EITHER = ("deny_read", "protected_paths")  # denied if denied then or now


class Unconfined(ValueError):
    """The job cannot run confined (one line for the run's error)."""


def record(settings: Settings, workspace: str, *, person: str = "", role: str = "",
           disabled_toolsets: list[str] | tuple[str, ...] = ()) -> dict:
    """The confinement of a session working in `workspace` with `settings` (the cronjob tool, `hermes cron create`)."""
    return {"workspace": os.path.realpath(os.path.expanduser(workspace)), "person": person, "role": role,
            "disabled_toolsets": sorted(set(disabled_toolsets)), "backend": str(settings.cfg.terminal.backend),
            "sandbox": _sandbox_dict(settings)}


def _dict(value: object) -> dict:
    return value if isinstance(value, dict) else {}


def _sandbox_dict(settings: Settings) -> dict:
    return dict(asdict(settings.cfg.sandbox))  # type: ignore[call-overload]  # a dataclass made by schema._record


def narrowest(then: dict, now: dict) -> dict:
    """The `sandbox:` section no wider than either `then` or `now`."""
    out = dict(now)
    modes = [str(s.get("mode") or "workspace-write") for s in (then, now)]
    out["mode"] = max(modes, key=lambda m: _MODES.index(m) if m in _MODES else len(_MODES))
    for key in _BOTH:
        before = [str(x) for x in then.get(key) or []]
        out[key] = [x for x in now.get(key) or [] if str(x) in before]
    for key in _EITHER:
        out[key] = list(dict.fromkeys([*(now.get(key) or []), *(then.get(key) or [])]))
    out["network"] = bool(then.get("network", True)) and bool(now.get("network", True))
    out["shared_tmp"] = bool(then.get("shared_tmp", False)) and bool(now.get("shared_tmp", False))
    out["hide_home"] = bool(then.get("hide_home", False)) or bool(now.get("hide_home", False))
    if str(now.get("mechanism") or "auto") == "auto" and then.get("mechanism"):
        out["mechanism"] = then["mechanism"]
    return out


def merged(old: object, new: dict) -> dict:
    """A job's confinement after a session confined by `new` changed it (the cronjob tool's update): no wider
    than either; raises Unconfined when neither workspace holds the other."""
    if not isinstance(old, dict):
        return new
    a, b = str(old.get("workspace") or ""), str(new.get("workspace") or "")
    if not (_within(b, a) or _within(a, b)):
        raise Unconfined(f"this job works in {a} and this session in {b}: make a new job from here instead")
    roles = ("owner", "admin", "member", "guest")
    role = max((str(c.get("role") or "") for c in (old, new)), key=lambda r: roles.index(r) if r in roles else -1)
    return {**old, "workspace": b if _within(b, a) else a, "role": role,
            "disabled_toolsets": sorted({*old.get("disabled_toolsets", []), *new.get("disabled_toolsets", [])}),
            "sandbox": narrowest(_dict(old.get("sandbox")), _dict(new.get("sandbox")))}


def confined(job: dict, settings: Settings) -> Settings:
    """`settings` for one run of `job`: its recorded workspace and sandbox (narrowed by today's config), or its
    `workdir` alone for a job without a record; raises Unconfined when it has neither."""
    name = f"'{job.get('name') or job.get('id')}' ({job.get('id')})"
    workdir = job.get("workdir") if isinstance(job.get("workdir"), str) and job["workdir"].strip() else None
    workdir = os.path.realpath(os.path.expanduser(workdir)) if workdir else None
    conf = job.get(FIELD)
    if not isinstance(conf, dict):
        if workdir and os.path.isabs(workdir):
            if not too_broad(workdir, str(settings.home)):
                return settings.with_overrides({"terminal.cwd": workdir})
            log.warning("cron job %s: its workdir %s is too broad to be its workspace (no workspace recorded), so it "
                        "runs read-only; to let it write, give it a project directory: hermes cron edit %s "
                        "--workdir DIR", name, workdir, job.get("id"))
            return settings.with_overrides({"terminal.cwd": workdir, "sandbox.mode": "read-only"})
        if job.get("no_agent"):  # Hermes's script-only job: its script may read, but writes nowhere
            return settings.with_overrides({"sandbox.mode": "read-only"})
        raise Unconfined(f"cron job {name} records neither the workspace of the session that made it nor a workdir, "
                         f"so it is not run; give it one: hermes cron edit {job.get('id')} --workdir DIR")
    ws = conf.get("workspace")
    if not isinstance(ws, str) or not os.path.isabs(ws) or not os.path.isdir(ws):
        raise Unconfined(f"cron job {name}: the workspace it was made in ({ws}) is gone, so it is not run")
    if workdir and not _within(workdir, os.path.realpath(ws)):
        raise Unconfined(f"cron job {name}: its workdir {workdir} is outside the workspace it was made in ({ws})")
    sandbox = narrowest(_dict(conf.get("sandbox")), _sandbox_dict(settings))
    overrides: dict[str, object] = {"terminal.cwd": workdir or ws, **{f"sandbox.{k}": v for k, v in sandbox.items()}}
    if isinstance(conf.get("backend"), str) and conf["backend"]:
        overrides["terminal.backend"] = conf["backend"]
    return settings.with_overrides(overrides)


def recorded_role(job: dict) -> str:
    conf = job.get(FIELD)
    return str(conf.get("role") or "") if isinstance(conf, dict) else ""


def recorded_disabled(job: dict) -> tuple[str, ...]:
    conf = job.get(FIELD)
    raw = conf.get("disabled_toolsets") if isinstance(conf, dict) else None
    return tuple(str(t) for t in raw) if isinstance(raw, list) else ()
