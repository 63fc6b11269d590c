"""Schedules as Hermes stores them (pure): parse "every 30m" / "30m" / "in 20m" / cron / ISO time
into a schedule dict, and compute the next run. No I/O, no clock reads: `now` is always passed in."""

from __future__ import annotations

import re
from datetime import datetime, timedelta

from hermes_agent import lazyre

_UNITS = {"s": 1 / 60, "sec": 1 / 60, "second": 1 / 60, "m": 1, "min": 1, "minute": 1,
          "h": 60, "hr": 60, "hour": 60, "d": 1440, "day": 1440}
_DURATION = lazyre.compile(r"^\s*(\d+(?:\.\d+)?)\s*([a-z]+?)s?\s*$")
_CRON_FIELD = lazyre.compile(r"^[\d*\-,/]+$")


class ScheduleError(ValueError):
    """A schedule text that is none of the accepted forms (the message lists them)."""


FORMS = ("'every 30m' / 'every 2h' (recurring)", "'30m' or 'in 20m' (once)", "'0 9 * * *' (cron expression)",
         "'2026-02-03T14:00' (once at an ISO time)")


def parse_duration(text: str) -> float:
    """Minutes in '30m', '2h', '1d', '45s', '10 minutes' (fractional for seconds)."""
    match = _DURATION.match(text.lower())
    unit = match and (match.group(2) if match.group(2) in _UNITS else match.group(2).rstrip("s"))
    if not match or unit not in _UNITS or float(match.group(1)) <= 0:
        raise ScheduleError(f"invalid duration {text!r}: use a number with s, m, h or d (e.g. 30m)")
    return float(match.group(1)) * _UNITS[unit]


def _display_minutes(minutes: float) -> str:
    if minutes < 1 or minutes != int(minutes):
        return f"{round(minutes * 60)}s"
    return f"{int(minutes)}m"


def _minutes_value(minutes: float) -> float | int:
    return int(minutes) if minutes == int(minutes) else minutes


def parse_schedule(text: str, now: datetime) -> dict:
    """The stored schedule dict (kind interval/cron/once, Hermes's fields) for a schedule text."""
    raw = text.strip()
    low = raw.lower()
    if low.startswith("every "):
        minutes = parse_duration(raw[6:])
        return {"kind": "interval", "minutes": _minutes_value(minutes), "display": f"every {_display_minutes(minutes)}"}
    parts = raw.split()
    if len(parts) >= 5 and all(_CRON_FIELD.match(p) for p in parts[:5]):
        from croniter import croniter

        if not croniter.is_valid(raw):
            raise ScheduleError(f"invalid cron expression {raw!r}")
        return {"kind": "cron", "expr": raw, "display": raw}
    if re.match(r"^\d{4}-\d{2}-\d{2}", raw):
        return _once_at(raw, now)
    rest = raw[3:] if low.startswith("in ") else raw
    try:
        minutes = parse_duration(rest)
    except ScheduleError:
        raise ScheduleError(f"invalid schedule {text!r}; use one of: " + "; ".join(FORMS)) from None
    at = now + timedelta(minutes=minutes)
    return {"kind": "once", "run_at": at.isoformat(), "display": f"once in {_display_minutes(minutes)}"}


def _once_at(raw: str, now: datetime) -> dict:
    try:
        at = datetime.fromisoformat(raw.replace("Z", "+00:00"))
    except ValueError:
        raise ScheduleError(f"invalid time {raw!r}: use an ISO time such as 2026-02-03T14:00") from None
    if at.tzinfo is None:
        at = at.replace(tzinfo=now.tzinfo)
    return {"kind": "once", "run_at": at.isoformat(), "display": f"once at {at.strftime('%Y-%m-%d %H:%M')}"}


def next_run(schedule: dict, now: datetime, *, first: bool = False) -> datetime | None:
    """When a job with this schedule runs next after `now` (None: a one-shot that has already run)."""
    kind = schedule.get("kind")
    if kind == "interval":
        return now + timedelta(minutes=float(schedule.get("minutes") or 1))
    if kind == "cron":
        from croniter import croniter

        return croniter(str(schedule["expr"]), now).get_next(datetime)
    if kind == "once":
        return datetime.fromisoformat(str(schedule["run_at"])) if first else None
    raise ScheduleError(f"unknown schedule kind {kind!r}")


def parse_time(value: object) -> datetime | None:
    """A stored ISO time (None or unparsable: None)."""
    if not value:
        return None
    try:
        return datetime.fromisoformat(str(value).replace("Z", "+00:00"))
    except ValueError:
        return None
