"""Where the A2A server keeps its tasks and push-notification configs: a2a-sdk's TaskStore and
PushNotificationConfigStore over storage/a2a_tasks.py ($HERMES_HOME/api_server/a2a_tasks.db), so tasks outlive
a restart; a task a dead process was running is marked failed with the reason when the server starts (`recover`);
finished tasks are pruned by age and by size, overall and per caller, in the background (`start_retention`, the
`sessions:` keys).
Tasks are the caller's: the owner is the A2A call context's user ("" without team mode). a2a-sdk is imported
here only where used."""

from __future__ import annotations

import logging
import os
import sqlite3
import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from hermes_agent.errors import ConfigError, StorageError
from hermes_agent.paths import pid_alive
from hermes_agent.storage.a2a_tasks import A2aTaskFile, Filter

if TYPE_CHECKING:
    from hermes_agent.config.settings import Settings

log = logging.getLogger(__name__)

RESTARTED = ("Hermes stopped while this task was running, so it did not finish; nothing more will come of it. "
             "Send the message again to start over.")


def tasks_path(home: Path) -> Path:
    return home / "api_server" / "a2a_tasks.db"


def _owner(context: Any) -> str:
    return str(context.user.user_name) if context is not None else ""


def _runner_alive(runner: str) -> bool:
    return runner.isdigit() and int(runner) != os.getpid() and pid_alive(int(runner))


def task_store(rows: A2aTaskFile) -> Any:
    from a2a.server.tasks import TaskStore
    from a2a.types import ListTasksResponse, Task
    from a2a.utils.constants import DEFAULT_LIST_TASKS_PAGE_SIZE
    from a2a.utils.errors import InvalidParamsError
    from a2a.utils.task import ListTasksCursor, decode_list_tasks_cursor, encode_list_tasks_cursor

    class SqliteTaskStore(TaskStore):
        """Tasks as serialized protobuf rows; listed newest status first, paged by a cursor token."""

        async def save(self, task: Any, context: Any) -> None:
            stamped = task.HasField("status") and task.status.HasField("timestamp")
            rows.save(_owner(context), task.id, task.context_id, int(task.status.state),
                      task.status.timestamp.ToNanoseconds() if stamped else None, str(os.getpid()),
                      task.SerializeToString())

        async def get(self, task_id: str, context: Any) -> Any:
            body = rows.get(_owner(context), task_id)
            return Task.FromString(body) if body is not None else None

        async def delete(self, task_id: str, context: Any) -> None:
            rows.delete(_owner(context), task_id)

        async def list(self, params: Any, context: Any) -> Any:
            after = None
            if params.page_token:
                cursor = decode_list_tasks_cursor(params.page_token)
                if cursor is None:
                    raise InvalidParamsError(message="pageToken is not a token this server gave out")
                after = cursor.sort_key()
            where = Filter(params.context_id, int(params.status),
                           params.status_timestamp_after.ToNanoseconds()
                           if params.HasField("status_timestamp_after") else None)
            size = params.page_size or DEFAULT_LIST_TASKS_PAGE_SIZE
            page = rows.page(_owner(context), where, after, size)
            token = (encode_list_tasks_cursor(ListTasksCursor(page.last_key[1] if page.last_key[0] else None,
                                                              page.last_key[2])) if page.last_key else "")
            return ListTasksResponse(tasks=[Task.FromString(b) for b in page.bodies], next_page_token=token,
                                     total_size=page.total, page_size=size)

    return SqliteTaskStore()


def push_store(rows: A2aTaskFile) -> Any:
    from a2a.server.tasks import PushNotificationConfigStore
    from a2a.server.tasks.push_notification_config_store import normalize_push_notification_config
    from a2a.types import TaskPushNotificationConfig

    class SqlitePushStore(PushNotificationConfigStore):
        """Configs per task and owner; each remembers the protocol dialect it was set in (its POSTs use it)."""

        async def set_info(self, task_id: str, notification_config: Any, context: Any) -> Any:
            config = normalize_push_notification_config(task_id, notification_config)
            dialect = "0.3" if context.state.get("dialect") == "0.3" else "1.0"
            rows.push_set(_owner(context), task_id, config.id, dialect, config.SerializeToString())
            return config

        async def get_info(self, task_id: str, context: Any) -> list[Any]:
            return [TaskPushNotificationConfig.FromString(b) for _, _, b in rows.push_of(task_id, _owner(context))]

        async def get_info_for_dispatch(self, task_id: str) -> list[Any]:
            return [TaskPushNotificationConfig.FromString(b) for _, _, b in rows.push_of(task_id, None)]

        async def delete_info(self, task_id: str, context: Any, config_id: str | None = None) -> None:
            owner = _owner(context)
            for _, _, body in rows.push_of(task_id, owner):
                found = TaskPushNotificationConfig.FromString(body)
                if config_id is None or found.id == config_id:
                    rows.push_delete(owner, task_id, found.id)

    return SqlitePushStore()


def recover(rows: A2aTaskFile) -> list[tuple[str, Any]]:
    """Mark failed, with the reason, every task left submitted or working by a process that is gone (a
    restart, a crash); returns (owner, task) of each, for their push notifications."""
    from a2a.helpers import new_text_message
    from a2a.types import Role, Task, TaskState

    live = (TaskState.TASK_STATE_SUBMITTED, TaskState.TASK_STATE_WORKING)
    failed = []
    for owner, body in rows.unfinished(tuple(int(s) for s in live), _runner_alive):
        task = Task.FromString(body)
        task.status.state = TaskState.TASK_STATE_FAILED
        task.status.message.CopyFrom(new_text_message(RESTARTED, role=Role.ROLE_AGENT, context_id=task.context_id,
                                                      task_id=task.id))
        task.status.timestamp.FromNanoseconds(time.time_ns())
        rows.save(owner, task.id, task.context_id, int(task.status.state), task.status.timestamp.ToNanoseconds(),
                  "", task.SerializeToString())
        failed.append((owner, task))
    return failed


def _number(value: object, where: str) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or value < 0:
        raise ConfigError(f"{where}: expected a number >= 0 (0: no limit), got {value!r}")
    return float(value)


def caller_rules(settings: Settings) -> dict[str, tuple[float | None, float | None]]:
    """sessions.a2a_tasks_by_caller: caller -> (retention days, max MB), None where the caller keeps the general
    value. A caller is the owner of its tasks: team mode's person "api:NAME" (NAME alone means that); without team
    mode every caller is the same one and the general keys apply. A wrong entry is a ConfigError naming it."""
    raw = settings.cfg.sessions.a2a_tasks_by_caller or {}
    if not isinstance(raw, dict):
        raise ConfigError(f"sessions.a2a_tasks_by_caller: expected a mapping of caller: {{retention_days, max_mb}}, "
                          f"got {raw!r}")
    rules: dict[str, tuple[float | None, float | None]] = {}
    for name, entry in raw.items():
        where = f"sessions.a2a_tasks_by_caller.{name}"
        if not isinstance(entry, dict) or not str(name).strip() or set(entry) - {"retention_days", "max_mb"}:
            raise ConfigError(f"{where}: expected {{retention_days: DAYS, max_mb: MB}}, got {entry!r}")
        key = str(name).strip()
        days, mb = entry.get("retention_days"), entry.get("max_mb")
        rules[key if ":" in key else f"api:{key}"] = (None if days is None else _number(days, f"{where}.retention_days"),
                                                      None if mb is None else _number(mb, f"{where}.max_mb"))
    return rules


def _keep(rules: dict[str, tuple[float | None, float | None]], days: float, mb: float, now_ns: int) -> dict:
    """Each listed caller's own age cutoff and cap (0: none), its unset half from the general keys."""
    from hermes_agent.storage.a2a_tasks import Keep

    out = {}
    for owner, (own_days, own_mb) in rules.items():
        d, m = days if own_days is None else own_days, mb if own_mb is None else own_mb
        out[owner] = Keep(now_ns - int(d * 86400e9) if d else None, int(m * 1024 * 1024) if m else None)
    return out


def start_retention(path: Path, settings: Settings, stop: threading.Event,
                    rules: dict[str, tuple[float | None, float | None]] | None = None) -> threading.Thread | None:
    """With sessions.auto_prune: after sessions.auto_prune_delay, then every sessions.min_interval_hours (at least
    a minute), delete finished tasks (completed, failed, canceled, rejected) older than
    sessions.a2a_task_retention_days, each caller's oldest finished ones while they hold more than
    sessions.a2a_tasks_max_mb_per_caller, and the oldest of all while they hold more than sessions.a2a_tasks_max_mb
    (0: no limit); sessions.a2a_tasks_by_caller gives a caller its own age and cap (`caller_rules`). On a thread
    with its own connection, in short transactions, so no request waits for it."""
    from a2a.types import TaskState

    from hermes_agent.storage import a2a_tasks

    c = settings.cfg.sessions
    rules = caller_rules(settings) if rules is None else rules
    if not c.auto_prune or not (c.a2a_task_retention_days or c.a2a_tasks_max_mb or c.a2a_tasks_max_mb_per_caller
                                or any(d or m for d, m in rules.values())):
        return None
    finished = tuple(int(s) for s in (TaskState.TASK_STATE_COMPLETED, TaskState.TASK_STATE_FAILED,
                                      TaskState.TASK_STATE_CANCELED, TaskState.TASK_STATE_REJECTED))

    def run() -> None:
        wait = c.auto_prune_delay
        while not stop.wait(wait):
            now = time.time_ns()
            older = now - int(c.a2a_task_retention_days * 86400e9) if c.a2a_task_retention_days else None
            cap = int(c.a2a_tasks_max_mb * 1024 * 1024) if c.a2a_tasks_max_mb else None
            each = int(c.a2a_tasks_max_mb_per_caller * 1024 * 1024) if c.a2a_tasks_max_mb_per_caller else None
            owners = _keep(rules, c.a2a_task_retention_days, c.a2a_tasks_max_mb_per_caller, now)
            try:
                done = a2a_tasks.prune(path, finished, older, cap, stop, owner_max_bytes=each, owners=owners)
                if done.tasks:
                    log.info("A2A tasks pruned: %d (%d bytes) in %.2fs", done.tasks, done.bytes, done.seconds)
            except (OSError, sqlite3.Error, StorageError) as exc:
                log.warning("pruning A2A tasks in %s failed: %s", path, exc)
            wait = max(60.0, c.min_interval_hours * 3600)

    worker = threading.Thread(target=run, name="a2a-tasks-prune", daemon=True)
    worker.start()
    return worker
