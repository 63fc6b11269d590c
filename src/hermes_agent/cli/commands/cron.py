"""`hermes cron list|create|edit|pause|resume|run|remove|status|daemon`: manage scheduled jobs in
$HERMES_HOME/cron/ (Hermes's jobs.json) and run the standalone scheduler."""

from __future__ import annotations

import argparse
import os
import signal
import sys
import threading
from collections.abc import Callable

from hermes_agent import paths
from hermes_agent.config.settings import Settings
from hermes_agent.cron.jobs import JobNotFound, JobStore, new_job, utcnow
from hermes_agent.cron.schedule import ScheduleError


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    """Register `hermes cron ...`."""
    p = subparsers.add_parser("cron", help="Scheduled jobs: list, create, edit, pause, resume, run, remove, daemon")
    sub = p.add_subparsers(dest="cron_command", metavar="ACTION")
    ls = sub.add_parser("list", help="Jobs with their schedule, next run and last status")
    ls.add_argument("--all", action="store_true", help="include paused and completed jobs")
    cr = sub.add_parser("create", help="Schedule PROMPT: 'every 30m', '30m', 'in 20m', '0 9 * * *' or an ISO time")
    cr.add_argument("schedule")
    cr.add_argument("prompt", nargs="?", default="")
    cr.add_argument("--name")
    cr.add_argument("--deliver", help="local (default), origin, or platform:chat_id")
    cr.add_argument("--repeat", type=int, help="run this many times, then stop")
    cr.add_argument("--skill", dest="skills", action="append", help="load this skill into each run (repeatable)")
    cr.add_argument("--script", help="a script under $HERMES_HOME/scripts: its output goes before the prompt "
                                     "(with --no-agent it is the whole job)")
    cr.add_argument("--no-agent", dest="no_agent", action="store_true",
                    help="no model: run --script (sandboxed) and deliver its output; empty output = silent")
    cr.add_argument("--workdir", help="absolute directory the job works in")
    ed = sub.add_parser("edit", help="Change a job's schedule, prompt, name or delivery")
    ed.add_argument("job")
    for flag in ("--schedule", "--prompt", "--name", "--deliver"):
        ed.add_argument(flag)
    ed.add_argument("--workdir", help="absolute directory the job works in (and is confined to)")
    for name, text in (("pause", "Pause a job"), ("resume", "Resume a paused job"), ("remove", "Delete a job")):
        sub.add_parser(name, help=text).add_argument("job")
    rn = sub.add_parser("run", help="Run a job on the scheduler's next tick (--now: here, immediately)")
    rn.add_argument("job")
    rn.add_argument("--now", action="store_true")
    runs = sub.add_parser("runs", aliases=["history"], help="Recorded run attempts, newest first")
    runs.add_argument("job", nargs="?")
    runs.add_argument("--limit", type=int, default=20)
    sub.add_parser("status", help="Jobs, what is due next, and whether a scheduler daemon is running")
    dm = sub.add_parser("daemon", help="Run the scheduler in the foreground (safe beside other schedulers)")
    dm.add_argument("--interval", type=float, help="seconds between ticks (default: cron.tick_seconds or 30)")
    dm.add_argument("--once", action="store_true", help="run what is due now, then exit")


def run(args: argparse.Namespace, settings: Settings) -> int:
    """Run one `hermes cron` action; a bad schedule or unknown job is one line on stderr and exit 1."""
    action = getattr(args, "cron_command", None) or "list"
    store = JobStore(paths.cron_dir())
    try:
        return _ACTIONS[action](args, store, settings)
    except ScheduleError as exc:
        print(f"hermes cron: {exc}", file=sys.stderr)
    except JobNotFound as exc:
        print(f"hermes cron: no job {exc.args[0]!r} (see `hermes cron list`)", file=sys.stderr)
    return 1


def _list(args: argparse.Namespace, store: JobStore, settings: Settings) -> int:
    jobs = [j for j in store.load() if getattr(args, "all", False) or j.get("state") != "completed"]
    if not jobs:
        print("No scheduled jobs. Create one: hermes cron create 'every 1h' 'PROMPT'")
        return 0
    owner = _owner_label(settings)
    for job in jobs:
        state = job.get("state") or ("scheduled" if job.get("enabled", True) else "paused")
        print(f"{job['id']}  {job.get('name')}  [{state}]")
        print(f"    schedule: {job.get('schedule_display')}   next: {job.get('next_run_at') or '-'}   "
              f"deliver: {job.get('deliver', 'local')}   owner: {owner(job)}")
        if job.get("script") or job.get("skills"):
            mode = "no-agent (script output delivered)" if job.get("no_agent") else "agent"
            extra = f"   script: {job['script']}" if job.get("script") else ""
            extra += f"   skills: {', '.join(map(str, job['skills']))}" if job.get("skills") else ""
            print(f"    mode: {mode}{extra}")
        if job.get("last_run_at"):
            first = str(job.get("last_error") or "").strip().splitlines()
            error = f"  ({first[0]}{' ...' if len(first) > 1 else ''})" if first else ""
            print(f"    last run: {job['last_run_at']}  {job.get('last_status')}{error}")
    return 0


def _owner_label(settings: Settings) -> Callable[[dict], str]:
    """job -> who it belongs to: the person who made it in a chat (with their role now, in team mode), else "you"
    (made here, or by the agent at the CLI)."""
    team = None
    if settings.cfg.team:
        from hermes_agent.config.team import Team

        team = Team(settings)
        team = team if team.enabled else None

    def label(job: dict) -> str:
        who = str(job.get("created_by") or "")
        if not who:
            return "you"
        platform, _, user_id = who.partition(":")
        return f"{who} ({team.person(platform, user_id).role})" if team is not None and user_id else who

    return label


def _create(args: argparse.Namespace, store: JobStore, settings: Settings) -> int:
    if args.no_agent and not args.script:
        print("hermes cron: --no-agent needs --script (the script is the job)", file=sys.stderr)
        return 1
    if not (args.prompt or "").strip() and not args.script and not args.skills:
        print("hermes cron: give a prompt, --skill or --script", file=sys.stderr)
        return 1
    if args.script:
        from hermes_agent.cron.script import resolve_script

        path, problem = resolve_script(settings.home, args.script)
        if path is None:
            print(f"hermes cron: {problem}", file=sys.stderr)
            return 1
    if args.workdir and not os.path.isabs(os.path.expanduser(args.workdir)):
        print("hermes cron: --workdir must be an absolute path", file=sys.stderr)
        return 1
    job = new_job(args.prompt or "", args.schedule, utcnow(), name=args.name or (args.script if args.no_agent else None),
                  deliver=args.deliver, repeat=args.repeat)
    job.update(skills=list(args.skills or []), skill=(args.skills or [None])[0], script=args.script,
               no_agent=bool(args.no_agent), workdir=os.path.expanduser(args.workdir) if args.workdir else None)
    from hermes_agent.cron.confinement import FIELD, record

    job[FIELD] = record(settings, job["workdir"] or os.getcwd())  # runs confined to here (cron/confinement.py)
    store.add(job)
    extra = "".join([f"\n  Skills: {', '.join(job['skills'])}" if job["skills"] else "",
                     f"\n  Script: {job['script']}" if job["script"] else "",
                     "\n  Mode: no-agent (script output delivered directly)" if job["no_agent"] else ""])
    print(f"Created job {job['id']} ({job['name']})\n  Schedule: {job['schedule_display']}\n"
          f"  Next run: {job['next_run_at']}\n  Deliver: {job['deliver']}{extra}")
    return 0


def _runs(args: argparse.Namespace, store: JobStore, settings: Settings) -> int:
    from hermes_agent.cron.executions import ExecutionLog

    records = ExecutionLog(store.dir).list(args.job, args.limit)
    if not records:
        print("No cron execution attempts recorded.")
    for rec in records:
        print(f"{rec['id']}  {rec['status']:<9}  job={rec['job_id']}  source={rec['source']}  {rec['claimed_at']}")
        if rec.get("error"):
            print(f"    {rec['error']}")
    return 0


def _edit(args: argparse.Namespace, store: JobStore, settings: Settings) -> int:
    workdir = os.path.realpath(os.path.expanduser(args.workdir)) if args.workdir else None
    if workdir is not None and not os.path.isdir(workdir):
        print(f"hermes cron: --workdir {args.workdir} is not a directory", file=sys.stderr)
        return 1
    confinement = None
    if workdir is not None:  # the user at their shell re-confines the job (wider or narrower)
        from hermes_agent.cron.confinement import FIELD

        old = store.get(args.job).get(FIELD)
        confinement = {**old, "workspace": workdir} if isinstance(old, dict) else None
    job = store.update(args.job, schedule=args.schedule, prompt=args.prompt, name=args.name, deliver=args.deliver,
                       workdir=workdir, **({"confinement": confinement} if confinement else {}))
    print(f"Updated job {job['id']}: {job['schedule_display']}, next run {job['next_run_at']}")
    return 0


def _toggle(args: argparse.Namespace, store: JobStore, settings: Settings) -> int:
    job = store.set_enabled(args.job, args.cron_command == "resume")
    print(f"Job {job['id']} {'resumed' if job['enabled'] else 'paused'}")
    return 0


def _remove(args: argparse.Namespace, store: JobStore, settings: Settings) -> int:
    job = store.remove(args.job)
    print(f"Removed job {job['id']} ({job.get('name')})")
    return 0


def _run_job(args: argparse.Namespace, store: JobStore, settings: Settings) -> int:
    if not args.now:
        job = store.trigger(args.job)
        if _daemon_pids(store) or _gateway_pid():
            print(f"Job {job['id']} will run on the scheduler's next tick")
        else:
            print(f"Job {job['id']} is due now, but no scheduler is running: it runs when `hermes cron daemon` or "
                  f"`hermes gateway run` starts (or run it here: hermes cron run {job['id']} --now)")
        return 0
    from hermes_agent.cron.scheduler import run_job
    from hermes_agent.gateway.background import cron_host
    from hermes_agent.gateway.send import Outbox

    result = run_job(store.get(args.job), store, settings, cron_host(Outbox(settings)), source="direct")
    print(result.text if result.ok else f"FAILED: {result.error}")
    print(f"(output saved to {result.output_path})", file=sys.stderr)
    return 0 if result.ok else 1


def _daemon_pids(store: JobStore) -> list[int]:
    alive = []
    for pid_file in store.dir.glob("daemon.*.pid"):
        pid = int(pid_file.suffixes[0][1:]) if pid_file.suffixes[0][1:].isdigit() else 0
        try:
            os.kill(pid, 0)
            alive.append(pid)
        except (OSError, ValueError):
            pid_file.unlink(missing_ok=True)
    return alive


def _status(args: argparse.Namespace, store: JobStore, settings: Settings) -> int:
    jobs = store.load()
    active = [j for j in jobs if j.get("enabled", True) and j.get("next_run_at")]
    print(f"{len(jobs)} job(s), {len(active)} active")
    if active:
        nxt = min(active, key=lambda j: str(j["next_run_at"]))
        print(f"Next: {nxt['id']} ({nxt.get('name')}) at {nxt['next_run_at']}")
    pids = _daemon_pids(store)
    gateway = _gateway_pid()
    if gateway:
        print(f"Scheduler: running in the gateway (pid {gateway})")
    if pids or not gateway:
        print(f"Scheduler: running (pid {', '.join(map(str, pids))})" if pids
              else "Scheduler: not running (start it with: hermes cron daemon, or run hermes gateway)")
    return 0


def _gateway_pid() -> int | None:
    """The pid of a running `hermes gateway run` on this home that ticks the scheduler, else None."""
    import json

    from hermes_agent.gateway.runner import state_path

    try:
        state = json.loads(state_path().read_text(encoding="utf-8"))
        pid = int(state.get("pid") or 0)
        os.kill(pid, 0)
    except (OSError, ValueError, TypeError):
        return None
    return pid if state.get("running") and (state.get("cron") or {}).get("running") else None


def _daemon(args: argparse.Namespace, store: JobStore, settings: Settings) -> int:
    from hermes_agent.cron.scheduler import RunResult, run_forever, tick, tick_seconds
    from hermes_agent.gateway.background import cron_host
    from hermes_agent.gateway.send import Outbox

    def report(result: RunResult) -> None:
        status = "ok" if result.ok else f"FAILED: {result.error}"
        print(f"[{utcnow().isoformat(timespec='seconds')}] job {result.job_id}: {status} -> {result.output_path}",
              flush=True)

    host = cron_host(Outbox(settings))  # no gateway here: deliveries are one-shot sends through each platform's API
    if args.once:
        for result in tick(store, settings, host):
            report(result)
        return 0
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    store.dir.mkdir(parents=True, exist_ok=True)
    pid_file = store.dir / f"daemon.{os.getpid()}.pid"
    pid_file.write_text(str(os.getpid()), encoding="utf-8")
    interval = args.interval if args.interval is not None else tick_seconds(settings)
    print(f"hermes cron daemon: ticking every {interval:g}s over {store.file}", flush=True)
    try:
        run_forever(store, settings, host, interval=interval, stop=stop, on_result=report)
    finally:
        pid_file.unlink(missing_ok=True)
    return 0


_ACTIONS = {"list": _list, "create": _create, "edit": _edit, "pause": _toggle, "resume": _toggle,
            "remove": _remove, "run": _run_job, "runs": _runs, "history": _runs, "status": _status, "daemon": _daemon}
