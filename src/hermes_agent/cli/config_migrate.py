"""`config check` and `config migrate`: report and fill what the user's config.yaml lacks, keeping comments."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from hermes_agent import paths
from hermes_agent.config.edit import ConfigDocument, set_env_values
from hermes_agent.config.migrate import (
    CURRENT_VERSION,
    config_version,
    env_vars_to_ask,
    hermes_only_keys,
    missing_options,
    renamed_keys,
    unknown_keys,
)


def _short(value: object) -> str:
    import json

    return json.dumps(value, ensure_ascii=False)


def check_report(path: Path) -> tuple[list[str], bool]:
    """Lines describing the file against DEFAULT_CONFIG, and whether it needs attention (typos, old version).
    Raises ConfigError when the file cannot be parsed."""
    doc = ConfigDocument.load(path)
    user: Mapping = doc.data
    version = config_version(user)
    lines = [f"config: {path}{'' if path.exists() else ' (not created yet: defaults apply)'}",
             f"config version: {version} (current {CURRENT_VERSION})"]
    missing = missing_options(user)
    if missing:
        lines.append(f"missing options ({len(missing)}; their defaults apply):")
        lines.extend(f"  {key} = {_short(default)}" for key, default in missing)
    else:
        lines.append("missing options: none")
    renamed = renamed_keys(user)
    if renamed:
        lines.append(f"renamed or dropped by today's Hermes ({len(renamed)}; kept as they are, Hermes converts them "
                     "when it migrates):")
        lines.extend(f"  {key} -> {new or '(dropped)'}: {note}" for key, new, note in renamed)
    theirs = [k for k in hermes_only_keys(user) if not any(k == r or k.startswith(r + ".") for r, *_ in renamed)]
    if theirs:
        lines.append(f"known to Hermes, not supported here ({len(theirs)}; kept in the file as they are):")
        lines.extend(f"  {key}" for key in theirs)
    unknown = unknown_keys(user)
    if unknown:
        lines.append("keys this hermes does not use (left as they are; the released Hermes may use them):")
        for item in unknown:
            hint = f"  (did you mean '{item.suggestion}'?)" if item.suggestion else ""
            lines.append(f"  {item.key}{hint}")
    outdated = "_config_version" in user and version < CURRENT_VERSION
    if outdated or missing:
        lines.append("run `hermes config migrate` to add the missing options"
                     + (" and update the config version" if outdated else ""))
    return lines, any(item.suggestion for item in unknown) or outdated  # a likely typo needs attention


def _ask_env_vars(from_version: int, env: Mapping[str, str], env_file: Path) -> list[str]:
    """Ask for each optional env var new since `from_version`; Enter skips. Returns names saved."""
    from hermes_agent.cli.ask import ask

    todo = env_vars_to_ask(from_version, env)
    if not todo:
        return []
    print("Optional settings (press Enter to skip):")
    saved: dict[str, str] = {}
    for name, meta in todo:
        tools = ", ".join(meta.get("tools") or [])
        print(f"  {name}: {meta.get('description', '')}"
              + (f" (enables: {tools})" if tools else "") + (f" — get it at {meta['url']}" if meta.get("url") else ""))
        value = ask(f"  {meta.get('prompt') or name}", secret=bool(meta.get("password")))
        if value:
            saved[name] = value
    if saved:
        set_env_values(env_file, saved)
    return list(saved)


def migrate(path: Path, env: Mapping[str, str], *, interactive: bool) -> list[str]:
    """Add missing options with their defaults, ask for new optional env vars (interactive only), bump
    `_config_version`; the user's comments and order are kept. Returns the lines to print."""
    doc = ConfigDocument.load(path)
    before = config_version(doc.data)
    missing = missing_options(doc.data)
    if not missing and (before >= CURRENT_VERSION or "_config_version" not in doc.data):
        return [f"{path} is up to date (config version {before})"]
    for key, default in missing:
        doc.set(key, default)
    saved: list[str] = []
    if interactive:
        saved = _ask_env_vars(before, env, paths.env_path())
    # A file without a version is left without one: Hermes reads an explicit low number (ours is 1) as
    # an install below its migration floor and stops migrating it; it stamps its own version itself.
    if "_config_version" in doc.data:
        doc.data["_config_version"] = max(before, CURRENT_VERSION)
    doc.save()
    after = max(before, CURRENT_VERSION) if "_config_version" in doc.data else before
    out = [f"added {len(missing)} missing option(s) to {path} with their defaults" if missing
           else f"no options missing in {path}",
           f"config version {before} -> {after}"]
    if saved:
        out.append(f"saved {', '.join(saved)} to {paths.env_path()}")
    elif not interactive and env_vars_to_ask(before, env):
        out.append("optional environment variables were not asked for (not a terminal); "
                   "run `hermes config migrate` in a terminal or `hermes setup` to set them")
    return out
