"""Compare a user's config.yaml with DEFAULT_CONFIG: missing options, unknown keys, version, env vars to ask.
Pure functions over mappings; editing the file (keeping comments) is the CLI's job.

`hermes_keys.json` (scripts/hermes_config_keys.py) lists every key the released Hermes 0.19.0 and today's
upstream (config version 50) know, with their defaults: a key a Hermes user set that we do not read is
reported as Hermes's, not as a typo, and a missing option whose Hermes default differs from ours is never
written into the file (Hermes would then behave differently)."""

from __future__ import annotations

import copy
import difflib
import functools
import json
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from hermes_agent.config.defaults import DEFAULT_CONFIG, NOT_MIGRATED, OPTIONAL_ENV_VARS, OPTIONAL_KEYS

if TYPE_CHECKING:
    from hermes_agent.config.settings import Settings

CURRENT_VERSION: int = int(DEFAULT_CONFIG["_config_version"])
_VERSION_KEY = "_config_version"
_ABSENT = object()


@dataclass(frozen=True, slots=True)
class UnknownKey:
    """A key DEFAULT_CONFIG does not know; `suggestion` is the closest known key when one is near."""

    key: str
    suggestion: str | None


def leaf_defaults(defaults: Mapping = DEFAULT_CONFIG, prefix: str = "") -> Iterator[tuple[str, object]]:
    """(dotted key, default) for every option; empty mappings and non-mappings are leaves."""
    for key, value in defaults.items():
        if key == _VERSION_KEY and not prefix:
            continue
        dotted = f"{prefix}{key}"
        if isinstance(value, Mapping) and value:
            yield from leaf_defaults(value, dotted + ".")
        else:
            yield dotted, copy.deepcopy(value)


def _lookup(user: Mapping, dotted: str) -> tuple[bool, bool]:
    """(present, blocked): blocked means a parent exists but is not a mapping (e.g. `model: gpt-4`)."""
    node: object = user
    for part in dotted.split("."):
        if not isinstance(node, Mapping):
            return False, True
        if part not in node:
            return False, False
        node = node[part]
    return True, False


@functools.cache
def _hermes_data() -> dict:
    return json.loads(Path(__file__).with_name("hermes_keys.json").read_text(encoding="utf-8"))


def _hermes_tables() -> tuple[dict, dict]:
    data = _hermes_data()
    return data["v0_19"], data["upstream"]


def hermes_config_version() -> int:
    """The `_config_version` today's Hermes writes into a config it creates (50): what `hermes setup` stamps on a
    new file, so Hermes reads it as its own current config (an explicit low number is a legacy install to it)."""
    return int(_hermes_data().get("versions", {}).get("upstream") or CURRENT_VERSION)


# Keys a Hermes user may still have that today's Hermes renamed or dropped (its config migrations 14-50):
# old dotted key (a trailing "*" matches a family) -> (its new name or None when dropped, what changed).
HERMES_RENAMED: dict[str, tuple[str | None, str]] = {
    "model_catalog.ttl_hours": ("model_catalog.ttl_minutes", "minutes now (default 20); Hermes still honours an "
                                "explicit ttl_hours other than the old default 1"),
    "display.tool_progress_overrides": ("display.platforms.<platform>.tool_progress",
                                        "per platform; both are read here"),
    "stt.model": ("stt.<provider>.model", "per provider; read here for the provider in use"),
    "security.tirith_*": (None, "the tirith scanner is no longer bundled with Hermes"),
    "cron.model_drift_guard": (None, "unpinned jobs run on their creation snapshot"),
    "checkpoints.delete_orphans": (None, "dropped by Hermes"),
    "sessions.write_json_snapshots": (None, "dropped by Hermes"),
}


def renamed_keys(user: Mapping) -> list[tuple[str, str | None, str]]:
    """(key the user set, its new name or None, note) for each HERMES_RENAMED key in the file."""
    leaves = list(_user_leaves(user))
    out: list[tuple[str, str | None, str]] = []
    for old, (new, note) in HERMES_RENAMED.items():
        if old.endswith("*"):
            out += [(k, new, note) for k in leaves if k.startswith(old[:-1])]
        elif any(k == old or k.startswith(old + ".") for k in leaves):
            out.append((old, new, note))
    return out


def hermes_default_differs(dotted: str, ours: object) -> bool:
    """True when 0.19.0 or upstream reads this key with another default than ours: writing ours into the
    file would change what Hermes does."""
    return any(dotted in table and table[dotted] != ours for table in _hermes_tables())


def known_to_hermes(dotted: str) -> bool:
    """A key (or a key under a free-form mapping, or a section) that 0.19.0 or upstream reads."""
    for table in _hermes_tables():
        if dotted in table or any(k.startswith(dotted + ".") for k in table):
            return True
        parts = dotted.split(".")
        if any(table.get(".".join(parts[:i])) in ({}, []) for i in range(1, len(parts))):
            return True
    return False


def known_option(settings: Settings, dotted: str) -> bool:
    """A key this hermes reads (for `config set` and the dashboard): one the settings have (set or defaulted),
    one read with no default (OPTIONAL_KEYS: model.pricing.*), or any key under a free-form section."""
    from hermes_agent.config.schema import free_form_sections

    if dotted in OPTIONAL_KEYS or settings.get(dotted, _ABSENT) is not _ABSENT:
        return True
    return any(dotted.startswith(f"{name}.") for name in free_form_sections())


def missing_options(user: Mapping) -> list[tuple[str, object]]:
    """Options in DEFAULT_CONFIG the user's file does not set, with their defaults, in DEFAULT order.
    Secret slots (model.api_key) are never listed: keys belong in .env; nor are NOT_MIGRATED options or
    ones Hermes reads with another default, whose value here differs from what Hermes assumes."""
    out = []
    for dotted, default in leaf_defaults():
        if is_secret_key(dotted.rsplit(".", 1)[-1]) or dotted in NOT_MIGRATED \
                or hermes_default_differs(dotted, default):
            continue
        present, blocked = _lookup(user, dotted)
        if not present and not blocked:
            out.append((dotted, default))
    return out


def _suggest(key: str, known: list[str]) -> str | None:
    close = difflib.get_close_matches(key, known, n=1, cutoff=0.75)
    return close[0] if close else None


def _user_leaves(node: Mapping, prefix: str = "") -> Iterator[str]:
    for key, value in node.items():
        dotted = f"{prefix}{key}"
        if isinstance(value, Mapping) and value:
            yield from _user_leaves(value, dotted + ".")
        else:
            yield dotted


def hermes_only_keys(user: Mapping) -> list[str]:
    """Keys the user set that 0.19.0 or upstream reads but this hermes does not (kept in the file as they are)."""
    from hermes_agent.config.schema import free_form_sections, modelled_keys

    ours = set(modelled_keys()) | {k for k, _ in leaf_defaults()}
    free = tuple(f + "." for f in free_form_sections())
    out = []
    for dotted in _user_leaves(user):
        if dotted == _VERSION_KEY or dotted in ours or dotted.startswith(free) \
                or any(dotted.startswith(k + ".") for k in ours):
            continue
        if known_to_hermes(dotted):
            out.append(dotted)
    return out


def unknown_keys(user: Mapping) -> list[UnknownKey]:
    """Top-level keys neither DEFAULT_CONFIG nor Hermes knows, plus keys inside known sections that look like
    typos (a key Hermes reads is never called a typo)."""
    known_top = list(DEFAULT_CONFIG)
    out = [UnknownKey(k, _suggest(str(k), known_top)) for k in user
           if k not in DEFAULT_CONFIG and not known_to_hermes(str(k))]
    for section, defaults in DEFAULT_CONFIG.items():
        value = user.get(section)
        if not (isinstance(defaults, Mapping) and defaults and isinstance(value, Mapping)):
            continue
        names = list(defaults)
        for key in value:
            if key in defaults or known_to_hermes(f"{section}.{key}"):
                continue
            # Sections accept extra keys (model.*, agent.* tuning); only a near miss is worth reporting.
            hint = _suggest(str(key), names)
            if hint:
                out.append(UnknownKey(f"{section}.{key}", f"{section}.{hint}"))
    return out


def config_version(user: Mapping) -> int:
    """The file's `_config_version` (0 when absent or not a number: never migrated)."""
    try:
        return int(user.get(_VERSION_KEY, 0) or 0)
    except (TypeError, ValueError):
        return 0


def env_vars_to_ask(from_version: int, env: Mapping[str, str]) -> list[tuple[str, dict]]:
    """Optional env vars introduced after `from_version` (metadata `since`, default 1) that are still unset."""
    out = []
    for name, meta in OPTIONAL_ENV_VARS.items():
        since = int(meta.get("since", 1))
        if since > from_version and not str(env.get(name, "")).strip():
            out.append((name, meta))
    return out


def is_secret_key(name: str) -> bool:
    """True for names that hold credentials (api_key, *_TOKEN, passwords, OPTIONAL_ENV_VARS marked password)."""
    meta = OPTIONAL_ENV_VARS.get(name)
    if meta is not None:
        return bool(meta.get("password"))
    low = name.lower().replace("tokens", "")  # max_tokens, budget.session_tokens: counts, not credentials
    if any(word in low for word in ("api_key", "apikey", "token", "secret", "password", "passwd")):
        return True
    return name.isupper() and name.endswith("_KEY")  # FAL_KEY yes; terminal.ssh_key (a path) no
