"""Config page: the effective configuration with secrets masked (and .env names), and a form that sets one
known key in config.yaml through the same checked writer as `hermes config set` (typed schema, comments
kept, atomic); a value the schema refuses is shown with its reason and nothing is written."""

from __future__ import annotations

import difflib
import json
from pathlib import Path
from urllib.parse import urlencode

from aiohttp import web

from hermes_agent import lazyre, paths
from hermes_agent.config.edit import mask_secret, masked, set_checked
from hermes_agent.config.loader import load_settings, parse_scalar, read_env_file
from hermes_agent.config.migrate import is_secret_key, known_option, leaf_defaults
from hermes_agent.config.settings import Settings
from hermes_agent.dashboard.auth import see_other
from hermes_agent.dashboard.html import Safe, esc, link, notice, page, table
from hermes_agent.dashboard.state import Home, respond
from hermes_agent.errors import ConfigError

_ENV_KEY = lazyre.compile(r"^[A-Z][A-Z0-9_]*$")


def _shown(value: object) -> str:
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False)


def _form(csrf: str, key: str = "", value: str = "", as_text: bool = False) -> Safe:
    checked = " checked" if as_text else ""
    return Safe(f'<form method="post" action="/config"><input type="hidden" name="csrf" value="{esc(csrf)}">'
                f'<input type="text" name="key" aria-label="key" placeholder="dotted key, e.g. agent.max_turns" '
                f'value="{esc(key)}"> = <input type="text" name="value" aria-label="value" placeholder="value" '
                f'value="{esc(value)}"> <label><input type="checkbox" name="as_text"{checked}> as text</label> '
                '<button type="submit">Save</button></form><p class="meta">Values are read as YAML scalars '
                '(true, 3, 0.5, [a, b]); the file keeps its comments.</p>')


def _env_rows() -> list[list[object]]:
    file_env = read_env_file(paths.env_path())
    return [[name, mask_secret(value) if is_secret_key(name) else value] for name, value in sorted(file_env.items())]


def _body(home: Home, csrf: str, message: Safe, form: Safe) -> Safe:
    try:
        settings = load_settings()
    except ConfigError as exc:
        return Safe(f"{message}{form}{notice(str(exc), ok=False)}")
    home.settings = settings
    in_file = Path(str(settings.config_file))
    rows = [[link("/config", k, key=k), _shown(v)] for k, v in leaf_defaults(masked(dict(settings.data)))]
    env = _env_rows()
    env_table = table(("Variable", "Value"), env) if env else "<p>No .env file.</p>"
    return Safe(f"{message}{form}<p class=meta>{esc(in_file)}</p>{table(('Key', 'Effective value'), rows)}"
                f"<h2>.env</h2><p class=meta>{esc(paths.env_path())} (edit with <code>hermes config set NAME "
                f"VALUE</code>)</p>{env_table}")


async def show(request: web.Request) -> web.Response:
    """GET /config[?saved=KEY]."""
    home: Home = request.app["home"]
    saved, key = request.query.get("saved"), request.query.get("key", "")
    message = notice(f"Saved {saved}." if saved else None)
    csrf = request.app["config"].csrf
    current = home.settings.get(key, "") if key and not is_secret_key(key.rsplit(".", 1)[-1]) else ""
    form = _form(csrf, key, "" if isinstance(current, dict) else _shown(current))
    body = await home.run(_body, home, csrf, message, form)
    return respond(page("Config", body, "/config"))


def _refusal(settings: Settings, key: str) -> str | None:
    if not key:
        return "Give a dotted key, e.g. agent.max_turns."
    if _ENV_KEY.match(key):
        return f"{key} is an environment variable: set it with `hermes config set {key} VALUE` (kept in .env)."
    if not known_option(settings, key):
        close = difflib.get_close_matches(key, [k for k, _ in leaf_defaults(settings.data)], n=1, cutoff=0.7)
        hint = f" (did you mean {close[0]}?)" if close else ""
        return f"{key} is not a known option{hint}; unknown keys can be added with `hermes config set`."
    return None


def _save(home: Home, key: str, raw: str, as_text: bool) -> str | None:
    """Write `key`; the reason it was refused, or None."""
    refusal = _refusal(home.settings, key)
    if refusal:
        return refusal
    try:
        set_checked(Path(str(home.settings.config_file or paths.config_path())), key,
                    raw if as_text else parse_scalar(raw))
    except ConfigError as exc:
        return f"Not saved: {exc}"
    home.settings = load_settings()
    return None


async def update(request: web.Request) -> web.Response:
    """POST /config: key, value, as_text."""
    home: Home = request.app["home"]
    form = await request.post()
    key, raw, as_text = str(form.get("key", "")).strip(), str(form.get("value", "")), bool(form.get("as_text"))
    refusal = await home.run(_save, home, key, raw, as_text)
    if refusal is None:
        return see_other("/config?" + urlencode({"saved": key}))
    csrf = request.app["config"].csrf
    body = await home.run(_body, home, csrf, notice(refusal, ok=False), _form(csrf, key, raw, as_text))
    return respond(page("Config", body, "/config"), 400)
