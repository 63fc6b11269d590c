"""Hermes's credential pools in `$HERMES_HOME/auth.json` (version 1: `providers`, `credential_pool`
{provider: [entry, ...]}), locked with `auth.lock` as Hermes locks it and written atomically with mode 0600.
Entries stay plain dicts, so whatever else Hermes stores (OAuth entries, keys we do not model) survives."""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import time
import uuid
from collections.abc import Iterator, Mapping
from datetime import UTC, datetime
from pathlib import Path

from hermes_agent import paths
from hermes_agent.errors import ConfigError

STORE_VERSION = 1
LOCK_TIMEOUT = 15.0
_UNUSABLE = ("exhausted", "dead")


def auth_path(home: Path) -> Path:
    return Path(home) / "auth.json"


@contextlib.contextmanager
def locked(home: Path, timeout: float = LOCK_TIMEOUT) -> Iterator[None]:
    """Hermes's cross-process lock for one auth.json read-modify-write: flock on `auth.lock`."""
    lock = auth_path(home).with_suffix(".lock")
    lock.parent.mkdir(parents=True, exist_ok=True)
    with lock.open("a+", encoding="utf-8") as fh:
        deadline = time.monotonic() + timeout
        while True:
            try:
                fcntl.flock(fh.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except (BlockingIOError, OSError):
                if time.monotonic() >= deadline:
                    raise ConfigError(f"timed out waiting for the auth store lock {lock}") from None
                time.sleep(0.05)
        try:
            yield
        finally:
            fcntl.flock(fh.fileno(), fcntl.LOCK_UN)


def load(home: Path) -> dict:
    """The whole store ({"version": 1, "providers": {}} when there is none); a broken file raises ConfigError."""
    path = auth_path(home)
    if not path.exists():
        return {"version": STORE_VERSION, "providers": {}}
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise ConfigError(f"{path} is not readable JSON ({exc}); fix or move it") from None
    if not isinstance(raw, dict):
        raise ConfigError(f"{path} does not hold a JSON object; fix or move it")
    raw.setdefault("providers", {})
    return raw


def visible(home: Path) -> dict:
    """The pools a run in `home` uses (read only, never saved): in a profile (<root>/profiles/<name>), a
    provider the profile's own auth.json has no entry for comes from the root's auth.json, as in today's Hermes
    (keys added at the root serve every profile; `auth add` in the profile shadows them)."""
    store = load(home)
    root = paths.profile_root(Path(home))
    if root is None or not auth_path(root).is_file():
        return store
    try:
        shared = load(root).get("credential_pool")
    except ConfigError:  # a broken root store never breaks the profile
        return store
    mine = store.get("credential_pool") if isinstance(store.get("credential_pool"), dict) else {}
    merged = dict(mine)
    for provider, rows in (shared.items() if isinstance(shared, dict) else ()):
        if isinstance(rows, list) and rows and not (isinstance(mine.get(provider), list) and mine[provider]):
            merged[provider] = rows
    return {**store, "credential_pool": merged}


def save(home: Path, store: dict) -> Path:
    """Write atomically: a 0600 temporary file (created so, never widened), fsync, rename."""
    path = auth_path(home)
    store["version"] = STORE_VERSION
    store["updated_at"] = datetime.now(UTC).isoformat()
    tmp = path.with_name(f"{path.name}.tmp.{os.getpid()}.{uuid.uuid4().hex}")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(json.dumps(store, indent=2) + "\n")
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)
    path.chmod(0o600)
    return path


def entries(store: Mapping, provider: str) -> list[dict]:
    """One provider's pool, in priority order."""
    pool = store.get("credential_pool")
    found = pool.get(provider) if isinstance(pool, dict) else None
    rows = [e for e in found if isinstance(e, dict)] if isinstance(found, list) else []
    return sorted(rows, key=lambda e: e.get("priority") if isinstance(e.get("priority"), int) else 0)


def providers(store: Mapping) -> list[str]:
    pool = store.get("credential_pool")
    return sorted(p for p, rows in pool.items() if rows) if isinstance(pool, dict) else []


def usable(entry: Mapping, now: float | None = None) -> bool:
    """An API-key entry with a key that is not exhausted (or whose cool-down is over)."""
    if not str(entry.get("access_token") or "").strip():
        return False
    if entry.get("last_status") not in _UNUSABLE:
        return True
    reset = entry.get("last_error_reset_at")
    return entry.get("last_status") == "exhausted" and isinstance(reset, int | float) and reset <= (now or time.time())


def add_api_key(home: Path, provider: str, key: str, label: str | None, base_url: str) -> tuple[int, dict]:
    """Append a manual API-key entry (Hermes's shape); returns its 1-based index and the entry."""
    with locked(home):
        store = load(home)
        rows = entries(store, provider)
        entry = {
            "id": uuid.uuid4().hex[:6], "label": label or f"api-key-{len(rows) + 1}", "auth_type": "api_key",
            "priority": max((e.get("priority", 0) for e in rows if isinstance(e.get("priority"), int)),
                            default=-1) + 1,
            "source": "manual", "access_token": key, "last_status": None, "last_status_at": None,
            "last_error_code": None, "last_error_reason": None, "last_error_message": None,
            "last_error_reset_at": None, "base_url": base_url, "request_count": 0,
        }
        pool = store.setdefault("credential_pool", {})
        pool[provider] = [*rows, entry]
        save(home, store)
    return len(rows) + 1, entry


def resolve_target(rows: list[dict], target: str) -> tuple[int, dict]:
    """Hermes's rule: an entry id, else a unique label (any case), else a 1-based index."""
    raw = target.strip()
    for i, e in enumerate(rows, start=1):
        if e.get("id") == raw:
            return i, e
    labelled = [(i, e) for i, e in enumerate(rows, start=1) if str(e.get("label", "")).strip().lower() == raw.lower()]
    if len(labelled) == 1:
        return labelled[0]
    if labelled:
        raise ConfigError(f'ambiguous credential label "{raw}": use the index or the entry id')
    if raw.isdigit() and 1 <= int(raw) <= len(rows):
        return int(raw), rows[int(raw) - 1]
    raise ConfigError(f"no credential #{raw}" if raw.isdigit() else f'no credential matching "{raw}"')


def remove(home: Path, provider: str, target: str) -> tuple[int, dict]:
    with locked(home):
        store = load(home)
        rows = entries(store, provider)
        index, entry = resolve_target(rows, target)
        store.setdefault("credential_pool", {})[provider] = [e for e in rows if e is not entry]
        save(home, store)
    return index, entry


def env_with_pool_keys(home: Path, env: Mapping[str, str], key_vars: Mapping[str, str]) -> Mapping[str, str]:
    """`env`, plus for each provider (-> its key variable) that has no key there, the first usable key of its
    auth.json pool: a provider's environment key comes first, then its pool, as in Hermes."""
    if not paths.auth_files(Path(home)):
        return env
    try:
        store = visible(home)
    except ConfigError:
        return env
    out = dict(env)
    for provider, var in key_vars.items():
        if str(env.get(var, "")).strip():
            continue
        key = next((str(e["access_token"]).strip() for e in entries(store, provider)
                    if e.get("auth_type", "api_key") == "api_key" and usable(e)), "")
        if key:
            out[var] = key
    return out
