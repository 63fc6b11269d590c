"""Team mode (`team:` in config.yaml): who is owner, admin, member or guest, and what each role may do.

```yaml
team:
  enabled: true
  default_role: guest            # people admitted by pairing or GATEWAY_ALLOW_ALL_USERS
  people:                        # "<platform>:<user id>": role (the owner is named here or in `owner`)
    "telegram:111": owner
  roles:                         # optional: replaces a role's defaults below
    member: {disabled_toolsets: [messaging], budget: {daily_usd: 2}}
  workspace_root: ~/hermes-team  # members' terminals work in <root>/<platform>_<id>
  shared: ~/hermes-team/shared   # optional: a folder every member may read and write (the rest of HOME is
                                 # hidden from members' tools)
  api_keys: {alice: "<16+ chars>"}  # API server: `X-Hermes-User: alice` + `Authorization: Bearer <key>`
                                    # is the person "api:alice" (role from people, else default_role)
```

Roles given in a chat (`/role`) live in HERMES_HOME/team/people.json (0600) and win over config, except that
the owner is only ever named in config. A lookup is a dict access plus one `stat` of that file (re-read only
when it changed), so it costs microseconds per message (bench/bench_team.py)."""

from __future__ import annotations

import json
import os
import re
import threading
import time
from dataclasses import dataclass
from pathlib import Path

from hermes_agent.config.settings import Settings

ROLES = ("owner", "admin", "member", "guest")
APPROVERS = ("owner", "admin")
# Guests: no shell, files, code, messaging, nor a way around that (subagents, cron jobs, desktop control).
# Neither members nor guests search past sessions (state.db holds everyone's). A member's cron jobs are theirs:
# recorded with who made them (`created_by`), run with that person's role, toolsets, folder and budget, and
# listed and changed only by them (and the owner and admins).
DEFAULT_DISABLED: dict[str, tuple[str, ...]] = {
    "owner": (), "admin": (), "member": ("session_search",),
    "guest": ("terminal", "file", "code_execution", "messaging", "delegation", "cronjob", "computer_use",
              "session_search"),
}


@dataclass(frozen=True, slots=True)
class Person:
    """One person the gateway knows: `key` is "<platform>:<user id>"."""

    key: str
    role: str
    name: str = ""

    @property
    def can_approve(self) -> bool:
        return self.role in APPROVERS

    @property
    def slug(self) -> str:
        return re.sub(r"[^A-Za-z0-9_.-]", "_", self.key.replace(":", "_"))[:80]


def person_key(platform: str, user_id: str) -> str:
    return f"{platform}:{user_id}"


class Team:
    """Roles from config plus the chat-assigned ones on disk. Thread-safe; cheap to ask per message."""

    def __init__(self, settings: Settings, path: Path | None = None) -> None:
        raw = settings.get("team") or {}
        raw = raw if isinstance(raw, dict) else {}
        self.raw = raw
        self.enabled = raw.get("enabled", bool(raw.get("people") or raw.get("owner"))) not in (False, "false", "no")
        default = str(raw.get("default_role") or "guest").lower()
        self.default_role = default if default in ROLES and default != "owner" else "guest"
        self.configured: dict[str, str] = {}
        for key, role in (raw.get("people") or {}).items():
            if str(role).lower() in ROLES:
                self.configured[str(key)] = str(role).lower()
        if raw.get("owner"):
            self.configured[str(raw["owner"])] = "owner"
        keys = raw.get("api_keys")  # X-Hermes-User name -> that person's API server key (16+ characters)
        self.api_keys: dict[str, str] = {str(k): str(v) for k, v in keys.items()} if isinstance(keys, dict) else {}
        self.roles_conf = raw.get("roles") if isinstance(raw.get("roles"), dict) else {}
        root = raw.get("workspace_root") or os.path.join(settings.env.get("MESSAGING_CWD") or "~", "hermes-team")
        self.workspace_root = Path(os.path.expanduser(str(root)))
        self.path = path or Path(settings.home) / "team" / "people.json"
        self._lock = threading.Lock()
        self._stamp: tuple[int, int] | None = None
        self._chat: dict[str, dict] = {}

    # --- lookups ---------------------------------------------------------------------------------
    def _assigned(self) -> dict[str, dict]:
        """people.json, re-read only when its mtime or size changed."""
        try:
            st = os.stat(self.path)
            stamp = (st.st_mtime_ns, st.st_size)
        except OSError:
            stamp = None
        if stamp != self._stamp:
            with self._lock:
                try:
                    data = json.loads(self.path.read_text(encoding="utf-8")) if stamp else {}
                except (OSError, ValueError):
                    data = {}
                self._chat = {k: v for k, v in data.items() if isinstance(v, dict)} if isinstance(data, dict) else {}
                self._stamp = stamp
        return self._chat

    def person(self, platform: str, user_id: str, name: str = "", *, trusted: bool = False) -> Person:
        """The role of who spoke: config owner > people.json > config > `admin` for allowlisted users
        (`trusted`) > default_role."""
        key = person_key(platform, user_id)
        conf = self.configured.get(key)
        row = self._assigned().get(key) or {}
        if conf == "owner":
            role = "owner"
        elif row.get("role") in ROLES and row.get("role") != "owner":
            role = str(row["role"])
        elif conf:
            role = conf
        else:
            role = "admin" if trusted else self.default_role
        return Person(key, role, name or str(row.get("name") or ""))

    def knows(self, platform: str, user_id: str) -> bool:
        """Named in config or given a role by /role (such people may talk to the gateway)."""
        key = person_key(platform, user_id)
        return key in self.configured or key in self._assigned()

    def people(self) -> list[Person]:
        """Everyone named in config or people.json (owner first, then by role)."""
        keys = dict.fromkeys([*self.configured, *self._assigned()])
        out = []
        for key in keys:
            platform, _, uid = key.partition(":")
            out.append(self.person(platform, uid, trusted=False))
        return sorted(out, key=lambda p: (ROLES.index(p.role), p.key))

    def approvers(self, platform: str) -> list[Person]:
        return [p for p in self.people() if p.can_approve and p.key.startswith(platform + ":")]

    def disabled_toolsets(self, role: str) -> tuple[str, ...]:
        conf = self.roles_conf.get(role)
        if isinstance(conf, dict) and isinstance(conf.get("disabled_toolsets"), list):
            return tuple(str(t) for t in conf["disabled_toolsets"])
        return DEFAULT_DISABLED.get(role, DEFAULT_DISABLED["guest"])

    def workspace(self, person: Person) -> Path:
        return self.workspace_root / person.slug

    def shared_folder(self) -> Path | None:
        """`team.shared`: a folder every member may read and write (None when not set)."""
        raw = self.raw.get("shared")
        return Path(os.path.expanduser(str(raw))) if isinstance(raw, str) and raw.strip() else None

    def caps_for(self, person: Person) -> dict:
        """Per-role spending caps (`team.roles.<role>.budget`, the keys of the `budget:` section) for the
        spending-cap code to apply to this person; {} when the role has none."""
        conf = self.roles_conf.get(person.role)
        budget = conf.get("budget") if isinstance(conf, dict) else None
        return dict(budget) if isinstance(budget, dict) else {}

    # --- changes (from /role and pairing) --------------------------------------------------------
    def assign(self, key: str, role: str, by: str, name: str = "") -> None:
        """Record a chat-given role (never `owner`)."""
        if role not in ROLES or role == "owner":
            raise ValueError(f"role must be one of admin, member, guest (got {role!r})")
        with self._lock:
            data = dict(self._read_raw())
            row = dict(data.get(key) or {})
            row.update({"role": role, "by": by, "at": round(time.time())})
            if name:
                row["name"] = name
            data[key] = row
            self.path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
            tmp = self.path.with_suffix(".tmp")
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
            with os.fdopen(fd, "w", encoding="utf-8") as fh:
                json.dump(data, fh, indent=1, sort_keys=True)
            os.replace(tmp, self.path)
            self._stamp = None

    def _read_raw(self) -> dict:
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return {}
        return data if isinstance(data, dict) else {}


def caps_for(settings: Settings, who: str, role: str | None = None) -> dict:
    """The spending caps of a gateway/API person's role, `who` = "<platform>:<user id>" (as the budget meter
    names spenders): `team.roles.<role>.budget` (keys session_usd, day_usd, month_usd, session_tokens, day_tokens,
    month_tokens); {} outside team mode, for cron/batch, or when the role has none. `role`: the role the frontend
    already resolved (an allowlisted user is an admin), else looked up. Sits between `budget.*` and
    `budget.users.<who>` (a person's own caps win over their role's): bootstrap/budget.py applies it."""
    team = Team(settings)
    platform, _, user_id = who.partition(":")
    if not team.enabled or not user_id or platform in ("cron", "batch"):
        return {}
    return team.caps_for(Person(who, role) if role in ROLES else team.person(platform, user_id))


def any_role_caps(settings: Settings) -> bool:
    """Whether some role has a `budget` (so a run may need a meter even with no `budget.*` cap)."""
    raw = settings.get("team") or {}
    roles = raw.get("roles") if isinstance(raw, dict) else None
    return isinstance(roles, dict) and any(isinstance(c, dict) and c.get("budget") for c in roles.values())
