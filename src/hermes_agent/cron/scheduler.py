"""The scheduler: claim due jobs under the store's lock, run each as a fresh agent turn (platform "cron",
an approver that denies unless approvals.cron_mode is approve), save the output, record the outcome,
and deliver through the messenger it is handed (gateway/send.py's Outbox; None: only `local` works).
What it needs from the layers above (an agent, a sandboxed script shell, the messenger) arrives in a
`CronHost` from whoever runs it (`hermes gateway run`, `hermes cron`): cron imports none of them.
Delivery targets: `local` (the output file only), `origin` (the chat that created the job), `telegram`
(the origin chat when the job came from Telegram, else its home channel), `telegram:<chat_id>`."""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Protocol

from hermes_agent.config.settings import Settings
from hermes_agent.cron.confinement import Unconfined, confined, recorded_disabled, recorded_role
from hermes_agent.cron.executions import ExecutionLog
from hermes_agent.cron.jobs import JobStore, utcnow
from hermes_agent.cron.prompt import CronPrompt, build_prompt, script_source
from hermes_agent.cron.script import ScriptBackend, run_script, wake_gate

if TYPE_CHECKING:
    from hermes_agent.approval.policy import PathPolicy
    from hermes_agent.bootstrap.options import RunOptions
    from hermes_agent.core.contract import AgentSession

log = logging.getLogger(__name__)
DEFAULT_TIMEOUT = 600.0
DEFAULT_TICK = 30.0
SILENT = "[SILENT]"


class Sender(Protocol):
    """Where deliveries go (the send_message tool's Messenger is one): returns where it went, raises on failure."""

    def send(self, target: str, text: str, scope: str = "", policy: PathPolicy | None = None) -> str: ...


@dataclass(frozen=True, slots=True)
class CronHost:
    """What a run needs from the layers above cron, injected by the program that runs the scheduler:
    `build_agent` (bootstrap.build_agent), `script_backend` (bootstrap.stores.script_backend), the
    messenger (gateway/send.py's Outbox; None: only `local` delivery works) and `as_person`."""

    build_agent: Callable[..., AgentSession]
    script_backend: ScriptBackend
    messenger: Sender | None = None
    # A job's run as the person who made it (`created_by`, team mode) with the toolsets its session lacked
    # (bootstrap.options.job_person(settings, who, role, disabled): their role's toolsets — no wider than the role
    # recorded at creation —, their folder, USER.md and budget); None options = as the owner.
    as_person: Callable[..., tuple[Settings, RunOptions | None]] | None = None


@dataclass(frozen=True, slots=True)
class RunResult:
    """One run of one job."""

    job_id: str
    ok: bool
    text: str
    error: str | None
    output_path: str
    delivery_error: str | None = None


def _approver(settings: Settings) -> object:
    from hermes_agent.approval.approvers import AutoApprover, AutoDenyApprover

    return AutoApprover() if settings.cfg.approvals.cron_mode == "approve" else AutoDenyApprover()


def job_settings(job: dict, settings: Settings) -> Settings:
    """Settings for one job's run: its own `model`, `provider`, `base_url` (Hermes's per-job pins) and
    `workdir` (where its tools work) over the configured ones."""
    overrides = {key: job[field] for field, key in (("model", "model.default"), ("provider", "model.provider"),
                                                      ("base_url", "model.base_url"), ("workdir", "terminal.cwd"))
                 if isinstance(job.get(field), str) and job[field].strip()}
    return settings.with_overrides(overrides) if overrides else settings


def _as_person(job: dict, settings: Settings, host: CronHost) -> tuple[Settings, RunOptions | None, object]:
    """(settings, options, approver) of a job's run: a job someone made in a chat runs as that person (their
    role now, not when they made it); only the owner's and admins' jobs may have dangerous commands approved
    by approvals.cron_mode. A guest's job does not run (guests cannot have jobs)."""
    settings = job_settings(job, settings)
    who = str(job.get("created_by") or "")
    if host.as_person is None:
        return settings, None, _approver(settings)
    settings, options = host.as_person(settings, who, recorded_role(job), recorded_disabled(job))
    role = options.role if options is not None else ""
    if role == "guest":
        raise PermissionError(f"{who} is a guest now and guests cannot have cron jobs (give them a role with "
                              "/role, or remove the job)")
    if role in ("", "owner", "admin"):
        return settings, options, _approver(settings)
    from hermes_agent.approval.approvers import AutoDenyApprover

    return settings, options, AutoDenyApprover()


def _turn(job: dict, settings: Settings, timeout: float | None, prompt: CronPrompt,
          host: CronHost) -> tuple[bool, str, str | None, str]:
    """Run `prompt` (the job's, with its script output and skills) as one fresh agent turn, untrusted when what it
    carries is; (ok, text, error, the untrusted content the turn took in: "" when none)."""
    toolsets = job.get("enabled_toolsets")
    try:
        settings, options, approver = _as_person(job, settings, host)
    except PermissionError as exc:
        return False, "", str(exc), prompt.untrusted
    from dataclasses import replace

    from hermes_agent.bootstrap.options import RunOptions

    options = replace(options or RunOptions(), media_scope=_scope(job))  # never a chat's files, only its own
    agent = host.build_agent(settings, platform="cron", approver=approver, interactive=False, options=options,
                             toolsets=[str(t) for t in toolsets] if isinstance(toolsets, list) and toolsets else None)
    box: dict[str, object] = {}

    def work() -> None:
        try:
            box["outcome"] = agent.run_turn(prompt.text, untrusted=prompt.untrusted)
        except Exception as exc:  # a frontend boundary: any failure of the turn is the run's failure
            log.warning("cron job %s failed: %s", job.get("id"), exc)
            box["error"] = f"{type(exc).__name__}: {exc}"

    worker = threading.Thread(target=work, name=f"cron-{job.get('id')}", daemon=True)
    try:
        worker.start()
        worker.join(timeout)
        if worker.is_alive():
            agent.interrupt()
            worker.join(10)
            return False, "", f"timed out after {timeout:g}s", agent.services.ctx.untrusted or prompt.untrusted
    finally:
        taint = agent.services.ctx.untrusted or prompt.untrusted
        agent.close()
    if "error" in box:
        return False, "", str(box["error"]), taint
    outcome = box["outcome"]
    from hermes_agent.terminal.base import run_later_lines

    text = "\n\n".join([str(getattr(outcome, "final_text", "") or ""), *run_later_lines()]).strip()
    reason = getattr(outcome, "reason", "stop")
    return (True, text, None, taint) if reason == "stop" else (False, text, f"turn ended: {reason}", taint)


def render_output(job: dict, when: datetime, ok: bool, text: str, error: str | None) -> str:
    """The markdown saved per run (and delivered): header, prompt, then response or failure."""
    body = f"## Response\n\n{text}\n" if ok else f"## FAILED\n\n{error}\n" + (f"\n## Partial response\n\n{text}\n" if text else "")
    return (f"# Cron Job: {job.get('name')}\n\n**Job ID:** {job.get('id')}\n**Run Time:** {when.isoformat()}\n"
            f"**Schedule:** {job.get('schedule_display')}\n**Status:** {'ok' if ok else 'error'}\n\n"
            f"## Prompt\n\n{job.get('prompt')}\n\n{body}")


def delivery_targets(job: dict) -> list[str]:
    """The job's `deliver` list with `origin` (and a bare platform that is the origin's) made concrete;
    `local` left out (the saved file is the local delivery). An origin-less job keeps `origin`: the sender
    then uses the first home channel (as Hermes falls back)."""
    origin = job.get("origin") if isinstance(job.get("origin"), dict) else None
    out = []
    for target in (t.strip() for t in str(job.get("deliver") or "local").split(",")):
        if not target or target == "local":
            continue
        if origin and origin.get("platform") and origin.get("chat_id") and \
                target in ("origin", origin["platform"]):
            target = f"{origin['platform']}:{origin['chat_id']}"
        out.append(target)
    return out


def delivery_text(job: dict, settings: Settings, ok: bool, text: str, error: str | None) -> str:
    """What a chat receives: the response (wrapped as Hermes does unless cron.wrap_response is false), or
    a failure stated as one."""
    name = job.get("name") or job.get("id")
    if not ok:
        return (f"⚠️ Cron '{name}' failed: {(error or 'unknown error')[:500]}\n"
                f"(job_id: {job.get('id')}; full details saved in the cron output)")
    if settings.cfg.cron.get("wrap_response", True) is False:
        return text
    return (f"Cronjob Response: {name}\n(job_id: {job.get('id')})\n-------------\n\n{text}\n\n"
            f"To stop or manage this job, send me a new message (e.g. \"stop reminder {name}\").")


def _scope(job: dict) -> str:
    from hermes_agent.paths import media_scope_of

    return media_scope_of(str(job.get("id") or job.get("name") or ""), "cron")


def _deliver(job: dict, text: str, messenger: Sender | None, settings: Settings, ok: bool = True,
             job_settings: Settings | None = None) -> str | None:
    """Send to every target but `local` (a failure goes to upstream's `failure_deliver` when the job has
    one); returns the errors (one line each, joined) or None. MEDIA files: only what the job's own commands
    could read (the path policy of its confined settings; without them, no workspace: its media only)."""
    from hermes_agent.approval.policy import PathPolicy, policy_for_settings

    policy = policy_for_settings(job_settings, media_scope=_scope(job)) if job_settings is not None else \
        PathPolicy.build(workspace=[], hermes_home=str(settings.home), media_scope=_scope(job))
    errors = []
    if not ok and job.get("failure_deliver"):
        job = {**job, "deliver": job["failure_deliver"]}
    for target in delivery_targets(job):
        if messenger is None:
            errors.append(f"{target}: delivery to platforms needs the gateway (not running here)")
            continue
        try:
            messenger.send(target, text, scope=_scope(job), policy=policy)  # the job's own images and speech
        except Exception as exc:  # a frontend boundary: a failed send is recorded on the job
            log.warning("cron job %s: delivery to %s failed: %s", job.get("id"), target, exc)
            errors.append(f"{target}: {exc}")
    return "; ".join(errors) or None


def tick_seconds(settings: Settings) -> float:
    """Seconds between scheduler ticks: cron.tick_seconds (default 30)."""
    raw = settings.cfg.cron.get("tick_seconds")
    try:
        value = float(str(raw)) if raw not in (None, "") else DEFAULT_TICK
    except (TypeError, ValueError):
        log.warning("ignoring cron.tick_seconds %r: not a number", raw)
        value = DEFAULT_TICK
    return max(value, 0.05)


def job_timeout(job: dict, settings: Settings) -> float | None:
    """Seconds a run may take: the job's timeout_seconds, else HERMES_CRON_TIMEOUT (Hermes's knob), else
    cron.timeout, else 600; 0 means no limit."""
    for raw in (job.get("timeout_seconds"), settings.env.get("HERMES_CRON_TIMEOUT"), settings.cfg.cron.get("timeout")):
        if raw not in (None, ""):
            try:
                value = float(str(raw))
            except ValueError:
                log.warning("ignoring cron timeout %r: not a number", raw)
                continue
            return value if value > 0 else None
    return DEFAULT_TIMEOUT


Run = tuple[bool, str, str, str | None, str]  # ok, saved document, text to deliver, error, untrusted source ("")


def _script_job(job: dict, settings: Settings, when: datetime, host: CronHost) -> Run:
    """A `no_agent` job: the script is the job, no model is asked. (ok, saved document, text to deliver,
    error, untrusted: the script's output is); empty output or a `{"wakeAgent": false}` last line is a silent run
    (nothing delivered)."""
    name = job.get("name") or job.get("id")
    head = (f"# Cron Job: {name}\n\n**Job ID:** {job.get('id')}\n**Run Time:** {when.strftime('%Y-%m-%d %H:%M:%S')}\n"
            "**Mode:** no_agent (script)\n")
    if not job.get("script"):
        error = "no_agent=True but no script is set for this job"
        return False, head + f"**Status:** failed\n\n{error}\n", "", error, ""
    ok, output = run_script(job, settings, host.script_backend)
    source = script_source(job)
    if not ok:
        return False, head + f"**Status:** script failed\n\n{output}\n", "", output, source
    if not wake_gate(output):
        return True, head + "**Status:** silent (wakeAgent=false)\n", SILENT, None, ""
    if not output.strip():
        return True, head + "**Status:** silent (empty output)\n", SILENT, None, ""
    return True, head + f"\n---\n\n{output}\n", output, None, source


def _agent_job(job: dict, settings: Settings, when: datetime, host: CronHost) -> Run:
    """An agent run: the script pre-step (if any), then one turn with the job's prompt and skills."""
    script = run_script(job, settings, host.script_backend) if job.get("script") else None
    if script is not None and script[0] and not wake_gate(script[1]):
        return True, render_output(job, when, True, SILENT, None), SILENT, None, ""
    prompt = build_prompt(job, settings, script)
    if prompt is None:  # the script printed nothing: nothing to report, no model call
        return True, render_output(job, when, True, SILENT, None), SILENT, None, ""
    ok, text, error, taint = _turn(job, settings, job_timeout(job, settings), prompt, host)
    return ok, render_output(job, when, ok, text, error), text, error, taint


def _mark_output(settings: Settings, path: object, taint: str) -> None:
    from hermes_agent.memory import taintledger

    try:
        taintledger.mark_files(settings.home, [str(path)], taint)
    except OSError:
        log.warning("could not mark the output of a cron run that took in untrusted content", exc_info=True)


def is_silent(text: str) -> bool:
    """Hermes's silence markers: `[SILENT]` (or SILENT / NO_REPLY) as the whole answer, its first or last line."""
    lines = [line.strip().strip("*_`").upper() for line in (text or "").strip().splitlines() if line.strip()]
    tokens = {"[SILENT]", "SILENT", "NO_REPLY", "NO REPLY", "[NO_REPLY]"}
    return bool(lines) and (lines[0] in tokens or lines[-1] in tokens)


def run_job(job: dict, store: JobStore, settings: Settings, host: CronHost, source: str = "builtin") -> RunResult:
    """Run one claimed job now (script or agent turn), save its output, record the outcome (jobs.json and
    Hermes's executions.db), deliver."""
    when = utcnow()
    ledger = ExecutionLog(store.dir)
    exec_id = ledger.start(str(job["id"]), source)
    runner = _script_job if job.get("no_agent") else _agent_job
    job_settings, taint = None, ""
    try:  # the confinement of the session that made the job, whoever runs it (cron/confinement.py)
        job_settings = confined(job, settings)
        ok, output, text, error, taint = runner(job, job_settings, when, host)
    except Unconfined as exc:
        ok, text, error = False, "", str(exc)
        output = render_output(job, when, ok, text, error)
    except Exception as exc:  # a frontend boundary: whatever broke is this run's failure, recorded
        log.warning("cron job %s failed: %s", job.get("id"), exc)
        ok, text, error = False, "", f"{type(exc).__name__}: {exc}"
        output = render_output(job, when, ok, text, error)
    path = store.save_output(str(job["id"]), output, when)
    if taint:  # provenance that travels with the output: a job reading it (context_from) is untrusted in turn
        _mark_output(settings, path, taint)
    delivery_error = None
    if not (ok and is_silent(text)):
        delivery_error = _deliver(job, delivery_text(job, settings, ok, text, error), host.messenger, settings, ok,
                                  job_settings)
    if ok and not text.strip():
        ok, error = False, "Agent completed but produced an empty response"
    store.record(str(job["id"]), ok, error, delivery_error, when)
    ledger.finish(exec_id, ok, error)
    return RunResult(str(job["id"]), ok, text, error, str(path), delivery_error)


def tick(store: JobStore, settings: Settings, host: CronHost, now: datetime | None = None) -> list[RunResult]:
    """Claim every due job (exactly once across processes) and run them one after another; none while Hermes's
    emergency stop (`hermes pause`) is on: they stay due and run at the first tick after `hermes resume`."""
    from hermes_agent.estop import engaged

    if engaged(settings.home) is not None:
        return []
    return [run_job(job, store, settings, host) for job in store.claim_due(now or utcnow())]


def run_forever(store: JobStore, settings: Settings, host: CronHost, *, interval: float = DEFAULT_TICK,
                stop: threading.Event | None = None, on_result: Callable[[RunResult], None] | None = None) -> None:
    """Tick until `stop` is set: at start (missed runs run once), then every `interval` seconds. Used by
    `hermes cron daemon` and, on a thread of its own, by `hermes gateway run`."""
    stop = stop or threading.Event()
    while not stop.is_set():
        for result in tick(store, settings, host):
            if on_result is not None:
                on_result(result)
        stop.wait(interval)
