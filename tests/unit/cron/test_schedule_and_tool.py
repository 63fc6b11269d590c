"""Schedule parsing (Hermes's stored shapes) and the cronjob tool with its legacy names, through dispatch."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

import pytest

from hermes_agent.cron.schedule import ScheduleError, next_run, parse_schedule
from hermes_agent.tools import dispatch
from hermes_agent.tools.discovery import discover_builtin_tools

NOW = datetime(2026, 11, 23, 7, 30, tzinfo=UTC)


def test_schedule_forms():
    assert parse_schedule("every 30m", NOW) == {"kind": "interval", "minutes": 30, "display": "every 30m"}
    assert parse_schedule("every 2h", NOW)["minutes"] == 120
    assert parse_schedule("every 5s", NOW)["display"] == "every 5s"
    once = parse_schedule("in 20m", NOW)
    assert once["kind"] == "once" and datetime.fromisoformat(once["run_at"]) == NOW + timedelta(minutes=20)
    assert parse_schedule("20m", NOW)["kind"] == "once"
    assert parse_schedule("2026-12-01T09:00", NOW)["run_at"] == "2026-12-01T09:00:00+00:00"
    cron = parse_schedule("0 8 * * *", NOW)
    assert next_run(cron, NOW) == datetime(2026, 11, 23, 8, 0, tzinfo=UTC)
    assert next_run(once, NOW) is None
    with pytest.raises(ScheduleError, match="every 30m"):
        parse_schedule("sometime soon", NOW)
    with pytest.raises(ScheduleError):
        parse_schedule("99 99 * * *", NOW)


def _call(name: str, args: dict) -> dict:
    return json.loads(dispatch.handle_function_call(name, json.dumps(args), task_id="t"))


def test_cronjob_tool_and_legacy_names(hermes_home):
    discover_builtin_tools()
    made = _call("cronjob", {"action": "create", "schedule": "every 2h", "prompt": "check the backups", "name": "bk"})
    assert made["success"] and made["schedule"] == "every 120m"
    job_id = made["job_id"]
    assert _call("cronjob", {"action": "pause", "job_id": job_id})["job"]["state"] == "paused"
    assert _call("cronjob", {"action": "update", "job_id": job_id, "prompt": "check backups twice"})["success"]
    old = _call("schedule_cronjob", {"prompt": "water the plants", "schedule": "0 9 * * *"})
    listed = _call("list_cronjobs", {})
    assert listed["count"] == 2 and {j["name"] for j in listed["jobs"]} == {"bk", "water the plants"}
    assert _call("remove_cronjob", {"job_id": old["job_id"]})["success"]
    assert "error" in _call("cronjob", {"action": "run", "job_id": "nope"})
    assert "error" in _call("cronjob", {"action": "create", "prompt": "no schedule"})
    saved = json.loads((hermes_home / "cron" / "jobs.json").read_text())["jobs"]
    assert [j["prompt"] for j in saved] == ["check backups twice"]
