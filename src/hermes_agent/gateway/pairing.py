"""DM pairing (Hermes's rules and file layout): an unknown user gets a one-time code the owner approves with
`hermes pairing approve <platform> <code>`. Codes: 8 characters from an unambiguous alphabet, 1 h expiry,
1 request per user per 10 min, at most 3 pending per platform, 5 failed approvals lock the platform out for
1 h. Files under HERMES_HOME/platforms/pairing/ (or the legacy
HERMES_HOME/pairing/ when that holds anything, as Hermes decides; approvals in either count), mode 0600; codes are stored only as salted hashes."""

from __future__ import annotations

import json
import os
import threading
import time
from dataclasses import dataclass
from pathlib import Path

from hermes_agent import paths
from hermes_agent.atomicfile import write_json

ALPHABET = "ABCDEFGHJKLMNPQRSTUVWXYZ23456789"
CODE_LENGTH = 8
CODE_TTL = 3600.0
RATE_LIMIT = 600.0
LOCKOUT = 3600.0
MAX_PENDING = 3
MAX_FAILED = 5


@dataclass(frozen=True, slots=True)
class PairResult:
    """What a pairing request produced: a code, or why none was issued."""

    code: str | None
    reason: str = ""  # "", "rate_limited", "too_many_pending", "locked_out"


def pairing_dir() -> Path:
    """Where pairing state is written, by Hermes's rule: the legacy HERMES_HOME/pairing/ when it holds
    anything (older installs), else HERMES_HOME/platforms/pairing/."""
    home = paths.hermes_home()
    legacy = home / "pairing"
    try:
        if legacy.is_dir() and any(legacy.iterdir()):
            return legacy
    except OSError:
        return legacy
    return home / "platforms" / "pairing"


def _other_dir(active: Path) -> Path | None:
    """The layout not written to: its approvals still count (Hermes merges the two)."""
    home = paths.hermes_home()
    for candidate in (home / "pairing", home / "platforms" / "pairing"):
        if candidate != active and candidate.is_dir():
            return candidate
    return None


def _hash(code: str, salt: bytes) -> str:
    import hashlib  # hashlib and secrets where used: not on every gateway start

    return hashlib.sha256(salt + code.strip().upper().encode()).hexdigest()


class PairingStore:
    """pending/approved per platform plus rate limits and failure counts, each a 0600 JSON file."""

    def __init__(self, directory: Path | None = None, *, clock=time.time) -> None:
        self.dir = directory or pairing_dir()
        self.other = None if directory else _other_dir(self.dir)
        self.clock = clock
        self._lock = threading.RLock()

    def _load(self, name: str, directory: Path | None = None) -> dict:
        try:
            data = json.loads(((directory or self.dir) / name).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return {}
        return data if isinstance(data, dict) else {}

    def _approved(self, platform: str) -> dict:
        """Approved users of both layouts (the one written to wins on a conflict)."""
        name = f"{platform}-approved.json"
        other = self._load(name, self.other) if self.other is not None else {}
        return {**other, **self._load(name)}

    def _save(self, name: str, data: dict) -> None:
        self.dir.mkdir(parents=True, exist_ok=True)
        os.chmod(self.dir, 0o700)
        write_json(self.dir / name, data, indent=2)

    def _pending(self, platform: str) -> dict:
        now = self.clock()
        return {k: v for k, v in self._load(f"{platform}-pending.json").items()
                if isinstance(v, dict) and now - float(v.get("created_at", 0)) < CODE_TTL}

    def is_approved(self, platform: str, user_id: str) -> bool:
        return str(user_id) in self._approved(platform)

    def list_pending(self, platform: str) -> list[dict]:
        return [{"platform": platform, **{k: v for k, v in e.items() if k not in ("hash", "salt")}}
                for e in self._pending(platform).values()]

    def list_approved(self, platform: str) -> list[dict]:
        return [{"platform": platform, "user_id": uid, **info}
                for uid, info in self._approved(platform).items() if isinstance(info, dict)]

    def platforms(self) -> list[str]:
        dirs = [d for d in (self.dir, self.other) if d is not None and d.is_dir()]
        return sorted({p.name.rsplit("-", 1)[0] for d in dirs for p in d.glob("*-*.json")})

    def locked_out(self, platform: str) -> bool:
        until = float(self._load("_rate_limits.json").get(f"_lockout:{platform}", 0))
        return self.clock() < until

    def request(self, platform: str, user_id: str, user_name: str = "") -> PairResult:
        """A new code for `user_id`, or the reason there is none."""
        with self._lock:
            if self.locked_out(platform):
                return PairResult(None, "locked_out")
            limits = self._load("_rate_limits.json")
            key = f"{platform}:{user_id}"
            now = self.clock()
            if now - float(limits.get(key, 0)) < RATE_LIMIT:
                return PairResult(None, "rate_limited")
            pending = self._pending(platform)
            if len(pending) >= MAX_PENDING:
                return PairResult(None, "too_many_pending")
            import secrets

            code = "".join(secrets.choice(ALPHABET) for _ in range(CODE_LENGTH))
            salt = secrets.token_bytes(16)
            pending = {k: v for k, v in pending.items() if v.get("user_id") != str(user_id)}
            pending[secrets.token_hex(6)] = {"hash": _hash(code, salt), "salt": salt.hex(), "user_id": str(user_id),
                                             "user_name": user_name, "created_at": now}
            self._save(f"{platform}-pending.json", pending)
            limits[key] = now
            self._save("_rate_limits.json", limits)
            return PairResult(code)

    def approve(self, platform: str, code: str) -> dict | None:
        """Approve the user holding `code`; None (and one failure counted) when no pending code matches."""
        with self._lock:
            if self.locked_out(platform):
                return None
            pending = self._pending(platform)
            import hmac

            for entry_id, entry in pending.items():
                if hmac.compare_digest(_hash(code, bytes.fromhex(entry["salt"])), entry["hash"]):
                    del pending[entry_id]
                    self._save(f"{platform}-pending.json", pending)
                    approved = self._load(f"{platform}-approved.json")
                    approved[entry["user_id"]] = {"user_name": entry.get("user_name", ""), "approved_at": self.clock()}
                    self._save(f"{platform}-approved.json", approved)
                    self._reset_failures(platform)
                    return {"user_id": entry["user_id"], "user_name": entry.get("user_name", "")}
            self._fail(platform)
            return None

    def _fail(self, platform: str) -> None:
        limits = self._load("_rate_limits.json")
        failures = int(limits.get(f"_failures:{platform}", 0)) + 1
        limits[f"_failures:{platform}"] = failures
        if failures >= MAX_FAILED:
            limits[f"_lockout:{platform}"] = self.clock() + LOCKOUT
            limits[f"_failures:{platform}"] = 0
        self._save("_rate_limits.json", limits)

    def _reset_failures(self, platform: str) -> None:
        limits = self._load("_rate_limits.json")
        if limits.pop(f"_failures:{platform}", None) is not None:
            self._save("_rate_limits.json", limits)

    def revoke(self, platform: str, user_id: str) -> bool:
        with self._lock:
            found = False
            for directory in (d for d in (self.dir, self.other) if d is not None):
                approved = self._load(f"{platform}-approved.json", directory)
                if approved.pop(str(user_id), None) is not None:
                    found = True
                    directory.mkdir(parents=True, exist_ok=True)
                    write_json(directory / f"{platform}-approved.json", approved, indent=2)
            return found
