"""The job store in Hermes's layout: <cron>/jobs.json ({"jobs": [...], "updated_at"}), per-run output in
<cron>/output/<job_id>/<time>.md, and the cross-process lock <cron>/.jobs.lock (fcntl.flock).
Every read-modify-write happens under the lock; writes are atomic (temp file + rename)."""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

from hermes_agent.atomicfile import atomic_write_text, write_json
from hermes_agent.cron.schedule import next_run, parse_schedule, parse_time


class JobNotFound(KeyError):
    """No job with that id (or name)."""


def utcnow() -> datetime:
    return datetime.now(UTC)


def new_job(prompt: str, schedule_text: str, now: datetime, *, name: str | None = None,
            deliver: str | None = None, repeat: int | None = None, origin: dict | None = None) -> dict:
    """A job record with every field Hermes 0.19 writes (so either program can read the other's file)."""
    schedule = parse_schedule(schedule_text, now)
    if repeat is None and schedule["kind"] == "once":
        repeat = 1
    first = next_run(schedule, now, first=True)
    return {"id": os.urandom(6).hex(), "name": name or prompt[:50] or "cron job", "prompt": prompt,
            "skills": [], "skill": None, "model": None, "provider": None, "provider_snapshot": None,
            "model_snapshot": None, "base_url": None, "script": None, "no_agent": False, "context_from": None,
            "schedule": schedule, "schedule_display": schedule["display"],
            "repeat": {"times": repeat, "completed": 0}, "enabled": True, "state": "scheduled",
            "paused_at": None, "paused_reason": None, "created_at": now.isoformat(),
            "next_run_at": first.isoformat() if first else None, "last_run_at": None, "last_status": None,
            "last_error": None, "last_delivery_error": None, "deliver": deliver or "local", "origin": origin,
            "enabled_toolsets": None, "workdir": None}


class JobStore:
    """jobs.json under one cron directory; `locked()` is the one critical section for all processes."""

    def __init__(self, cron_dir: Path) -> None:
        self.dir = Path(cron_dir)
        self.file = self.dir / "jobs.json"
        self.output_dir = self.dir / "output"

    @contextlib.contextmanager
    def locked(self) -> Iterator[list[dict]]:
        """Hold the cross-process lock; yields the job list, saved on exit if it changed."""
        self.dir.mkdir(parents=True, exist_ok=True)
        with open(self.dir / ".jobs.lock", "a+", encoding="utf-8") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            try:
                jobs = self.load()
                before = json.dumps(jobs, sort_keys=True)
                yield jobs
                if json.dumps(jobs, sort_keys=True) != before:
                    self._save(jobs)
            finally:
                fcntl.flock(lock, fcntl.LOCK_UN)

    def load(self) -> list[dict]:
        """The jobs (a missing or empty file is no jobs; Hermes's bare-list form is read too)."""
        try:
            data = json.loads(self.file.read_text(encoding="utf-8") or "{}")
        except FileNotFoundError:
            return []
        jobs = data.get("jobs", []) if isinstance(data, dict) else data
        return [j for j in jobs if isinstance(j, dict) and j.get("id")]

    def _save(self, jobs: list[dict]) -> None:
        """Write the jobs back; other top-level keys a newer Hermes keeps in the file stay as they were
        (as do fields of each job we do not know: jobs are the dicts read, changed only where we act)."""
        try:
            data = json.loads(self.file.read_text(encoding="utf-8") or "{}")
        except (OSError, ValueError):
            data = {}
        kept = {k: v for k, v in data.items() if k not in ("jobs", "updated_at")} if isinstance(data, dict) else {}
        write_json(self.file, {"jobs": jobs, **kept, "updated_at": utcnow().isoformat()}, indent=2)

    def add(self, job: dict) -> dict:
        with self.locked() as jobs:
            jobs.append(job)
        return job

    def get(self, ref: str) -> dict:
        return find(self.load(), ref)

    def update(self, ref: str, **changes: object) -> dict:
        """Change fields of one job; a new `schedule` text is parsed and the next run recomputed."""
        with self.locked() as jobs:
            job = find(jobs, ref)
            if changes.get("schedule") is not None:
                now = utcnow()
                sched = parse_schedule(str(changes.pop("schedule")), now)
                first = next_run(sched, now, first=True)
                job.update(schedule=sched, schedule_display=sched["display"],
                           next_run_at=first.isoformat() if first else None)
            job.update({k: v for k, v in changes.items() if v is not None})
            return dict(job)

    def set_enabled(self, ref: str, enabled: bool, reason: str | None = None) -> dict:
        """Pause or resume a job (resuming recomputes the next run from now)."""
        with self.locked() as jobs:
            job = find(jobs, ref)
            now = utcnow()
            job.update(enabled=enabled, state="scheduled" if enabled else "paused",
                       paused_at=None if enabled else now.isoformat(), paused_reason=None if enabled else reason)
            if enabled:
                nxt = next_run(job["schedule"], now, first=True)
                job["next_run_at"] = nxt.isoformat() if nxt else job.get("next_run_at")
            return dict(job)

    def remove(self, ref: str) -> dict:
        with self.locked() as jobs:
            job = find(jobs, ref)
            jobs.remove(job)
            return job

    def trigger(self, ref: str) -> dict:
        """Make a job due now (the scheduler runs it on its next tick)."""
        with self.locked() as jobs:
            job = find(jobs, ref)
            job.update(next_run_at=utcnow().isoformat(), enabled=True, state="scheduled")
            return dict(job)

    def claim_due(self, now: datetime) -> list[dict]:
        """Under the lock: every enabled job whose next run is due, its next run moved past `now` first, so
        no other scheduler (or a restart) runs the same due time again; runs missed while down run once."""
        claimed = []
        with self.locked() as jobs:
            for job in jobs:
                due = parse_time(job.get("next_run_at"))
                paused = job.get("state") == "paused" or bool(job.get("paused_at"))  # upstream's marker too
                if not job.get("enabled", True) or paused or due is None or due > now:
                    continue
                nxt = next_run(job["schedule"], now)
                job.update(next_run_at=nxt.isoformat() if nxt else None, last_run_at=now.isoformat(),
                           state="running" if nxt is None else job.get("state", "scheduled"))
                claimed.append(dict(job))
        return claimed

    def record(self, job_id: str, ok: bool, error: str | None, delivery_error: str | None = None,
               ran_at: datetime | None = None) -> None:
        """Store a run's outcome; a job that reached its repeat count is marked completed."""
        with self.locked() as jobs:
            try:
                job = find(jobs, job_id)
            except JobNotFound:
                return  # removed while it ran
            rep = job.setdefault("repeat", {"times": None, "completed": 0})
            rep["completed"] = int(rep.get("completed") or 0) + 1
            job.update(last_status="ok" if ok else "error", last_error=error, last_delivery_error=delivery_error)
            if ran_at is not None:
                job["last_run_at"] = ran_at.isoformat()
            done = rep.get("times") is not None and rep["completed"] >= int(rep["times"])
            if done or job.get("next_run_at") is None:
                job.update(enabled=False, state="completed", next_run_at=None)
            elif job.get("state") == "running":
                job["state"] = "scheduled"

    def save_output(self, job_id: str, text: str, when: datetime) -> Path:
        """Write one run's output as output/<job_id>/<YYYY-mm-dd_HH-MM-SS>.md (atomic)."""
        directory = self.output_dir / job_id
        directory.mkdir(parents=True, exist_ok=True)
        path = directory / f"{when.strftime('%Y-%m-%d_%H-%M-%S')}.md"
        atomic_write_text(path, text)
        return path

    def outputs(self, job_id: str) -> list[Path]:
        """This job's saved run outputs, oldest first."""
        return sorted((self.output_dir / job_id).glob("*.md"))


def find(jobs: list[dict], ref: str) -> dict:
    """The job with this id, else the one with this name."""
    for job in jobs:
        if job.get("id") == ref:
            return job
    for job in jobs:
        if job.get("name") == ref:
            return job
    raise JobNotFound(ref)
