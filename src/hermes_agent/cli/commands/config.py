"""`hermes config show|edit|get|set|unset|check|migrate|path|env-path`: config.yaml and .env without
hand-editing YAML. Edits keep the user's comments; UPPER_CASE keys go to .env (mode 0600)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from hermes_agent import lazyre, paths
from hermes_agent.config.settings import Settings
from hermes_agent.errors import ConfigError, HermesError

# A broken config.yaml must not stop `config edit/check/path` (main.py honours this flag).
TOLERATES_BROKEN_CONFIG = True
_ENV_KEY = lazyre.compile(r"^[A-Z][A-Z0-9_]*$")
_MISSING = object()


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    """Register `hermes config ...`."""
    p = subparsers.add_parser("config", help="show, edit, check and migrate config.yaml and .env")
    sub = p.add_subparsers(dest="config_command", metavar="ACTION")
    sub.add_parser("show", help="the effective configuration (secrets masked)")
    sub.add_parser("edit", help="open config.yaml in $EDITOR, then validate it")
    get = sub.add_parser("get", help="print one value (dotted key, or an UPPER_CASE .env variable)")
    get.add_argument("key")
    st = sub.add_parser("set", help="set a dotted key in config.yaml (UPPER_CASE keys go to .env)")
    st.add_argument("key")
    st.add_argument("value", help="YAML scalar: true, 3, 0.5, [a, b] or text")
    st.add_argument("--string", action="store_true", help="store the value as text, never as a number/bool/list")
    un = sub.add_parser("unset", help="remove a key (its default applies again)")
    un.add_argument("key")
    sub.add_parser("check", help="list missing options, unknown keys and the config version")
    mig = sub.add_parser("migrate", help="add missing options, ask for new optional keys, bump _config_version")
    mig.add_argument("--non-interactive", action="store_true", help="never ask questions")
    sub.add_parser("path", help="print the path of config.yaml")
    sub.add_parser("env-path", help="print the path of .env")


def run(args: argparse.Namespace, settings: Settings) -> int:
    """Run one `hermes config` action; problems become one line on stderr."""
    action = getattr(args, "config_command", None) or "show"
    try:
        if action in ("show", "get"):  # never print defaults as if they were the user's broken file
            from hermes_agent.config.loader import read_yaml_file

            read_yaml_file(_config_file(settings))
        return _ACTIONS[action](args, settings)
    except ConfigError as exc:
        print(f"hermes config {action}: {exc}", file=sys.stderr)
        return 2
    except HermesError as exc:
        print(f"hermes config {action}: {exc}", file=sys.stderr)
        return 1


def _config_file(settings: Settings) -> Path:
    return Path(settings.config_file) if settings.config_file else paths.config_path()


def _yaml_text(data: object) -> str:
    from io import StringIO

    from ruamel.yaml import YAML

    yaml = YAML(typ="safe", pure=True)
    yaml.default_flow_style = False
    yaml.sort_base_mapping_type_on_output = False  # keep DEFAULT_CONFIG's order
    buf = StringIO()
    yaml.dump(data, buf)
    return buf.getvalue()


def _show(args: argparse.Namespace, settings: Settings) -> int:
    from hermes_agent.config.defaults import OPTIONAL_ENV_VARS
    from hermes_agent.config.edit import mask_secret, masked
    from hermes_agent.config.loader import read_env_file
    from hermes_agent.config.migrate import is_secret_key

    cfg, env_file = _config_file(settings), paths.env_path()
    print("# effective configuration: defaults < config.yaml < .env < environment < flags")
    print(f"# config.yaml: {cfg}{'' if cfg.exists() else ' (missing: defaults only)'}")
    print(_yaml_text(masked(dict(settings.data))), end="")
    file_env = read_env_file(env_file)
    names = sorted(set(file_env) | {n for n in OPTIONAL_ENV_VARS if settings.env.get(n)})
    print(f"# .env: {env_file}{'' if env_file.exists() else ' (missing)'}")
    for name in names:
        value = settings.env.get(name, file_env.get(name, ""))
        shown = mask_secret(value) if is_secret_key(name) else value
        where = "" if name in file_env else "   (from the environment)"
        print(f"#   {name}={shown}{where}")
    return 0


def _format(value: object) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return "null"
    if isinstance(value, dict | list):
        from hermes_agent.config.edit import masked

        return _yaml_text(masked(value)).rstrip("\n")
    return str(value)


def _unknown_key_hint(key: str) -> str:
    import difflib

    from hermes_agent.config.migrate import leaf_defaults

    known = [k for k, _ in leaf_defaults()]
    close = difflib.get_close_matches(key, known, n=1, cutoff=0.7)
    return f" (did you mean '{close[0]}'?)" if close else ""


def _get(args: argparse.Namespace, settings: Settings) -> int:
    if _ENV_KEY.match(args.key):
        value = settings.env.get(args.key)
        if value is None:
            print(f"hermes config get: {args.key} is not set", file=sys.stderr)
            return 1
        print(value)
        return 0
    value = settings.get(args.key, _MISSING)
    if value is _MISSING:
        print(f"hermes config get: no option {args.key!r}{_unknown_key_hint(args.key)}", file=sys.stderr)
        return 1
    print(_format(value))
    return 0


def _set(args: argparse.Namespace, settings: Settings) -> int:
    from hermes_agent.config.edit import ConfigDocument, save_checked, set_env_values
    from hermes_agent.config.loader import parse_scalar
    from hermes_agent.config.migrate import known_option

    if _ENV_KEY.match(args.key):
        set_env_values(paths.env_path(), {args.key: args.value})
        print(f"{args.key} saved to {paths.env_path()} (mode 0600)")
        return 0
    cfg = _config_file(settings)
    doc = ConfigDocument.load(cfg)
    value = args.value if args.string else parse_scalar(args.value)
    known = known_option(settings, args.key)
    doc.set(args.key, value)
    save_checked(doc)
    print(f"{args.key} = {_format(value)}  ({cfg})")
    for note in _set_notes(args.key, known, doc.data):
        print(f"note: {note}", file=sys.stderr)
    return 0


def _nested(dotted: str) -> dict:
    out: dict = {}
    node = out
    *parents, last = dotted.split(".")
    for part in parents:
        node = node.setdefault(part, {})
    node[last] = True
    return out


def _set_notes(key: str, known: bool, data: object) -> list[str]:
    """What `config set` tells besides the new value: an unknown key (a Hermes option we do not read, or a
    near miss), a secret better kept in .env, a model.pricing still missing its other half."""
    from hermes_agent.config.migrate import is_secret_key, known_to_hermes, renamed_keys

    notes = [f"{old!r} is {'renamed to ' + repr(new) if new else 'dropped'} by today's Hermes ({note})"
             for old, new, note in renamed_keys(_nested(key))]
    if not known and not notes:
        notes.append(f"{key!r} is read by Hermes, not by this hermes (kept in the file for Hermes)"
                     if known_to_hermes(key) else f"{key!r} is not a known option{_unknown_key_hint(key)}")
    if is_secret_key(key.rsplit(".", 1)[-1]):
        notes.append("secrets are safer in .env: `hermes config set OPENAI_API_KEY ...` (or the provider's "
                     "key variable)")
    model = data.get("model") if isinstance(data, dict) else None
    pricing = model.get("pricing") if isinstance(model, dict) else None
    if key.startswith("model.pricing") and isinstance(pricing, dict):
        lacking = [k for k in ("input", "output") if pricing.get(k) is None]
        if lacking:
            notes.append(f"model.pricing needs {' and '.join(lacking)} too, or runs stop with a config error: "
                         f"`hermes config set model.pricing.{lacking[0]} USD_PER_1M_TOKENS`")
    return notes


def _unset(args: argparse.Namespace, settings: Settings) -> int:
    from hermes_agent.config.edit import ConfigDocument, save_checked, set_env_values

    if _ENV_KEY.match(args.key):
        from hermes_agent.config.loader import read_env_file

        if args.key not in read_env_file(paths.env_path()):
            print(f"hermes config unset: {args.key} is not in {paths.env_path()}", file=sys.stderr)
            return 1
        set_env_values(paths.env_path(), {args.key: None})
        print(f"{args.key} removed from {paths.env_path()}")
        return 0
    cfg = _config_file(settings)
    doc = ConfigDocument.load(cfg)
    if not doc.unset(args.key):
        print(f"hermes config unset: {args.key} is not set in {cfg}", file=sys.stderr)
        return 1
    save_checked(doc)
    print(f"{args.key} removed from {cfg} (the default applies)")
    return 0


def _edit(args: argparse.Namespace, settings: Settings) -> int:
    import shlex
    import subprocess

    from hermes_agent.config.edit import atomic_write_text
    from hermes_agent.config.loader import load_settings
    from hermes_agent.config.migrate import hermes_config_version

    cfg = _config_file(settings)
    if not cfg.exists():  # stamped as Hermes stamps a config it creates
        atomic_write_text(cfg, "# Hermes Agent configuration. `hermes config check` lists every option.\n"
                               f"_config_version: {hermes_config_version()}\n")
    chosen = settings.env.get("VISUAL") or settings.env.get("EDITOR")
    if not chosen and not sys.stdin.isatty():  # nano/vi would wait forever for keys that never come
        raise HermesError(f"no terminal to run an editor in: set $EDITOR, or edit {cfg} by hand")
    editor = chosen or next((e for e in ("nano", "vim", "vi") if paths.trusted_which(e)), "")
    if not editor:
        raise HermesError(f"no editor found: set $EDITOR, or edit {cfg} by hand")
    words = shlex.split(editor)
    program = paths.trusted_which(words[0]) if words else None
    if program is None:
        raise HermesError(f"editor {editor!r} not found outside the places the sandbox can write: set $EDITOR to "
                          f"an installed editor, or edit {cfg} by hand")
    code = subprocess.call([program, *words[1:], str(cfg)])
    if code != 0:
        raise HermesError(f"editor {editor!r} exited with status {code}")
    load_settings()  # a broken file is reported right away, naming the line
    print(f"{cfg}: OK")
    return 0


def _check(args: argparse.Namespace, settings: Settings) -> int:
    from hermes_agent.cli.config_migrate import check_report
    from hermes_agent.config.loader import env_file_problems, load_settings

    load_settings()  # a wrong type or value fails here: one line naming key, value and what is expected
    lines, needs_attention = check_report(_config_file(settings))
    bad_env = env_file_problems(paths.env_path())
    lines += [f"{paths.env_path()} line {n}: not KEY=value, ignored: {text[:80]}" for n, text in bad_env]
    print("\n".join(lines))
    return 1 if needs_attention or bad_env else 0


def _migrate(args: argparse.Namespace, settings: Settings) -> int:
    from hermes_agent.cli.ask import interactive
    from hermes_agent.cli.config_migrate import migrate

    asking = interactive() and not getattr(args, "non_interactive", False)
    print("\n".join(migrate(_config_file(settings), settings.env, interactive=asking)))
    return 0


def _path(args: argparse.Namespace, settings: Settings) -> int:
    print(_config_file(settings))
    return 0


def _env_path(args: argparse.Namespace, settings: Settings) -> int:
    print(paths.env_path())
    return 0


_ACTIONS = {"show": _show, "edit": _edit, "get": _get, "set": _set, "unset": _unset, "check": _check,
            "migrate": _migrate, "path": _path, "env-path": _env_path}
