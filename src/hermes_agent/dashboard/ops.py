"""Cron and gateway pages: jobs from jobs.json (pause, resume, run now, the last output) and the state the
running gateway writes to gateway_state.json. Job changes go through JobStore (locked, atomic)."""

from __future__ import annotations

import asyncio
import json
import time
from urllib.parse import urlencode

from aiohttp import web

from hermes_agent import paths
from hermes_agent.cron.jobs import JobNotFound
from hermes_agent.dashboard.auth import see_other
from hermes_agent.dashboard.html import Safe, esc, facts, notice, page, post_button, pre, table, when
from hermes_agent.dashboard.state import Home, respond

_DONE = {"paused": "paused", "resumed": "resumed", "started": "started: its output appears below when it finishes"}


def _last_output(home: Home, job_id: str) -> str | None:
    outputs = home.jobs.outputs(job_id)
    return outputs[-1].read_text(encoding="utf-8", errors="replace") if outputs else None


def _actions(job: dict, csrf: str) -> Safe:
    jid = str(job["id"])
    toggle = (post_button(f"/cron/{jid}/pause", "Pause", csrf) if job.get("enabled", True)
              else post_button(f"/cron/{jid}/resume", "Resume", csrf))
    return Safe(f"{toggle} {post_button(f'/cron/{jid}/run', 'Run now', csrf)}")


def _status(job: dict) -> Safe:
    status = esc(job.get("last_status") or "never ran")
    error = job.get("last_error") or job.get("last_delivery_error")
    return Safe(status + (f'<div class="meta">{esc(error)}</div>' if error else ""))


def _outputs(jobs: list[dict], outputs: dict[str, str | None]) -> str:
    parts = []
    for job in jobs:
        text = outputs.get(str(job["id"]))
        if text:
            parts.append(f"<details><summary>Last output of {esc(job.get('name'))}</summary>{pre(text)}</details>")
    return "".join(parts)


async def cron(request: web.Request) -> web.Response:
    """GET /cron[?done=&job=]: every job with its schedule, state and controls."""
    home: Home = request.app["home"]
    jobs = await home.run(home.jobs.load)
    outputs = {str(j["id"]): await home.run(_last_output, home, str(j["id"])) for j in jobs}
    csrf = request.app["config"].csrf
    rows = [[job.get("name") or job["id"], Safe(f"<code>{esc(job['id'])}</code>"), job.get("schedule_display"),
             job.get("state") or ("scheduled" if job.get("enabled", True) else "paused"),
             when(job.get("next_run_at")), when(job.get("last_run_at")), _status(job), _actions(job, csrf)]
            for job in jobs]
    done = _DONE.get(request.query.get("done", ""))
    msg = notice(f"Job {request.query.get('job', '')} {done}" if done else None)
    listing = (table(("Name", "Id", "Schedule", "State", "Next run", "Last run", "Last status", ""), rows)
               if jobs else "<p>No cron jobs. Add one with <code>hermes cron add</code>.</p>")
    return respond(page("Cron jobs", Safe(f"{msg}{listing}{_outputs(jobs, outputs)}"), "/cron"))


async def _start_run(home: Home, job_id: str) -> None:
    """`hermes cron run JOB --now` as a child process: a real cron turn; its output lands in the job's folder."""
    proc = await asyncio.create_subprocess_exec(
        *paths.python_module("hermes_agent", "cron", "run", job_id, "--now"),
        stdin=asyncio.subprocess.DEVNULL, stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.DEVNULL)
    home.children.add(proc)
    asyncio.get_running_loop().create_task(proc.wait()).add_done_callback(lambda _: home.children.discard(proc))


async def cron_action(request: web.Request) -> web.Response:
    """POST /cron/{id}/{pause|resume|run}."""
    home: Home = request.app["home"]
    job_id, action = request.match_info["id"], request.match_info["action"]
    try:
        if action == "run":
            await home.run(home.jobs.get, job_id)
            await _start_run(home, job_id)
        else:
            await home.run(home.jobs.set_enabled, job_id, action == "resume",
                           "paused from the dashboard" if action == "pause" else None)
    except JobNotFound:
        return respond(page("Cron jobs", notice(f"No job {job_id}", ok=False), "/cron"), 404)
    done = {"pause": "paused", "resume": "resumed", "run": "started"}[action]
    return see_other("/cron?" + urlencode({"done": done, "job": job_id}))



def _read_state() -> dict | None:
    try:
        state = json.loads(paths.gateway_state_path().read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return state if isinstance(state, dict) else None


def _platform_rows(state: dict, running: bool) -> list[list[object]]:
    rows = []
    for name, info in (state.get("platforms") or {}).items():
        info = info if isinstance(info, dict) else {}
        connected = "connected" if info.get("connected") and running else "not connected"
        rows.append([name, connected, f"@{info['bot']}" if info.get("bot") else "—", info.get("unanswered", 0),
                     info.get("last_error") or "—"])
    return rows


async def gateway(request: web.Request) -> web.Response:
    """GET /gateway: platforms, connection, sessions and last errors of the running gateway."""
    state = await asyncio.to_thread(_read_state)
    if state is None:
        body = Safe("<p>Gateway: not running (it never ran here). Start it with <code>hermes gateway</code>.</p>")
        return respond(page("Gateway", body, "/gateway"))
    running = bool(state.get("running")) and paths.pid_alive(int(state.get("pid") or 0))
    age = time.time() - float(state.get("updated_at") or 0)
    summary = facts([("Status", "running" if running else "stopped"), ("Pid", state.get("pid")),
                             ("Started", when(state.get("started_at"))), ("State written", f"{age:.0f} s ago"),
                             ("Sessions", f"{state.get('sessions', 0)} ({state.get('busy', 0)} working)")])
    rows = _platform_rows(state, running)
    platforms = table(("Platform", "Connection", "Bot", "Unanswered", "Last error"), rows, (3,)) if rows else ""
    return respond(page("Gateway", Safe(f"{summary}<h2>Platforms</h2>{platforms or '<p>None.</p>'}"), "/gateway"))
