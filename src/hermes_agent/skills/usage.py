"""Hermes's skill-usage sidecar, `skills/.usage.json` ({name: record}, locked with `skills/.usage.json.lock`):
a use of a skill here is recorded as Hermes records its own (a view that is also a use), so Hermes's curator,
which marks a skill stale after 14 days without use and archives it after 30, does not retire a skill the user
works with in this program. Best effort: a sidecar that cannot be read or written is left as it is."""

from __future__ import annotations

import fcntl
import json
import logging
import os
from datetime import UTC, datetime
from pathlib import Path

from hermes_agent.atomicfile import atomic_write_text

log = logging.getLogger(__name__)
USAGE_FILE = ".usage.json"


def _count(value: object) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else 0


def record_use(skills_dir: Path, name: str) -> None:
    """One use of the user's skill `name` (in `skills_dir`), as Hermes's skill_view counts it."""
    path = skills_dir / USAGE_FILE
    try:
        lock_fd = os.open(path.with_suffix(".json.lock"), os.O_WRONLY | os.O_CREAT | os.O_APPEND | os.O_NOFOLLOW, 0o600)
        with os.fdopen(lock_fd, "a") as lock:  # Hermes's lock file, never a link planted in its place
            fcntl.flock(lock, fcntl.LOCK_EX)
            data = json.loads(path.read_text(encoding="utf-8-sig")) if path.exists() else {}
            if not isinstance(data, dict):
                return
            now = datetime.now(UTC).isoformat()
            rec = data.get(name) if isinstance(data.get(name), dict) else {
                "created_by": None, "use_count": 0, "view_count": 0, "last_used_at": None, "last_viewed_at": None,
                "patch_count": 0, "patch_generation": 0, "last_reused_patch_generation": 0,
                "last_patched_at": None, "created_at": now, "state": "active", "pinned": False,
                "archived_at": None, "first_seen_at": None}
            uses, generation = _count(rec.get("use_count")), _count(rec.get("patch_generation"))
            reused = min(_count(rec.get("last_reused_patch_generation")), generation)
            rec.update(view_count=_count(rec.get("view_count")) + 1, last_viewed_at=now, use_count=uses + 1,
                       last_used_at=now, patch_generation=generation,
                       last_reused_patch_generation=generation if uses and generation > reused else reused)
            data[name] = rec
            atomic_write_text(path, json.dumps(data, indent=2, sort_keys=True, ensure_ascii=False), mode=None)
    except (OSError, ValueError):
        log.info("could not record the use of skill %s in %s", name, path, exc_info=True)
