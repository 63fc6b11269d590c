"""Load Settings: defaults < config.yaml < .env < environment < CLI overrides. Errors -> ConfigError."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

from hermes_agent import paths
from hermes_agent.config.defaults import DEFAULT_CONFIG, ENV_TO_CONFIG
from hermes_agent.config.settings import Settings, apply_dotted, deep_merge, get_dotted  # noqa: F401 - get_dotted re-exported
from hermes_agent.errors import ConfigError


def parse_scalar(text: str) -> object:
    """Interpret a CLI/env string as YAML scalar (true, 3, 0.5, [a, b]) or keep it as text."""
    from ruamel.yaml import YAML

    try:
        value = YAML(typ="safe", pure=True).load(text)
    except Exception:
        return text
    return text if value is None and text.strip() not in ("null", "~") else value


def yaml_problem(exc: Exception, line_offset: int = 1) -> str:
    """'(line L, column C): problem' text for a YAML parse error (line numbers shifted by `line_offset`)."""
    mark = getattr(exc, "problem_mark", None)
    where = f" (line {mark.line + line_offset}, column {mark.column + 1})" if mark else ""
    problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
    return f"{where}: {problem}"


def read_yaml_file(path: Path, text: str | None = None) -> dict:
    """Parse a YAML mapping (the file, or `text` as its would-be content); any problem becomes a
    one-line ConfigError naming the file."""
    if text is None and not path.exists():
        return {}
    from ruamel.yaml import YAML
    from ruamel.yaml.error import YAMLError

    try:
        text = path.read_text(encoding="utf-8") if text is None else text
        data = YAML(typ="safe", pure=True).load(text)
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{path}: cannot read: {exc}") from exc
    except YAMLError as exc:
        raise ConfigError(f"{path}: invalid YAML{yaml_problem(exc)}") from exc
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise ConfigError(f"{path}: expected a mapping of settings at the top level, got {type(data).__name__}")
    return data


def _copy_plain(value: object) -> object:
    """A deep copy of JSON-like data (dicts, lists and sets copied, every other value immutable): DEFAULT_CONFIG's
    copy per load, ~3x cheaper than copy.deepcopy (no memo)."""
    if type(value) is dict:
        return {k: _copy_plain(v) for k, v in value.items()}
    if type(value) is list:
        return [_copy_plain(v) for v in value]
    if type(value) is set:
        return set(value)
    return value


def _read_config(path: Path) -> dict:
    """config.yaml as read_yaml_file reads it, from a JSON copy while the file is unchanged (same size, mtime and
    inode): a run then never loads the YAML parser. The copy sits next to the file, 0600, and is a secret to the
    path policy like config.yaml (approval/policy.py HERMES_SECRETS); a value JSON cannot hold as it is (dates,
    non-string keys) means no copy."""
    import json

    try:
        st = path.stat()
    except OSError:
        return {}
    stamp = [st.st_size, st.st_mtime_ns, st.st_ino]
    cache = path.parent / ".parsed-config.json"
    try:
        saved = json.loads(cache.read_text(encoding="utf-8"))
        if isinstance(saved, dict) and saved.get("stamp") == stamp and isinstance(saved.get("data"), dict):
            return saved["data"]
    except (OSError, ValueError):
        pass
    data = read_yaml_file(path)
    try:
        text = json.dumps({"stamp": stamp, "data": data})
        if json.loads(text)["data"] == data:
            from hermes_agent.atomicfile import atomic_write_text

            atomic_write_text(cache, text, mode=0o600)
    except (TypeError, ValueError, OSError):
        pass
    return data


def _normalise(data: dict, source: Path | None) -> None:
    model = data.get("model")
    if isinstance(model, str):
        data["model"] = {**DEFAULT_CONFIG["model"], "default": model}
    elif model is not None and not isinstance(model, dict):
        raise ConfigError(f"{source or 'config'}: 'model' must be a mapping or a model name")
    ctx = data["model"].get("context_length")
    if ctx is not None and (not isinstance(ctx, int) or isinstance(ctx, bool) or ctx < 1):
        raise ConfigError(f"{source or 'config'}: model.context_length must be a positive integer, got {ctx!r}")
    deleg = data.get("delegation")
    if isinstance(deleg, dict) and "max_concurrent" in deleg:  # our early name for Hermes's key
        deleg["max_concurrent_children"] = deleg.pop("max_concurrent")
    for key in ("toolsets", "command_allowlist", "fallback_providers"):
        if key in data and data[key] is not None and not isinstance(data[key], list):
            raise ConfigError(f"{source or 'config'}: '{key}' must be a list")


def read_env_file(path: Path) -> dict[str, str]:
    """Values of a dotenv file (empty when missing)."""
    if not path.exists():
        return {}
    from dotenv import dotenv_values

    return {k: v for k, v in dotenv_values(path).items() if v is not None}


def env_file_problems(path: Path) -> list[tuple[int, str]]:
    """(line number, text) of each line of a dotenv file that is not KEY=value, a comment or blank: python-dotenv
    skips them without a word."""
    if not path.exists():
        return []
    from dotenv.parser import parse_stream

    try:
        with open(path, encoding="utf-8", errors="replace") as fh:
            return [(b.original.line, b.original.string.strip()) for b in parse_stream(fh) if b.error]
    except OSError:
        return []


def _apply_openai_env(data: dict, env: Mapping[str, str], overrides: Mapping[str, object]) -> None:
    """OPENAI_BASE_URL / OPENAI_API_KEY configure the generic (auto/custom) endpoint."""
    provider = overrides.get("model.provider") or data["model"].get("provider") or "auto"
    if provider not in ("auto", "custom"):
        return
    if env.get("OPENAI_BASE_URL", "").strip():
        data["model"]["base_url"] = env["OPENAI_BASE_URL"].strip()
    if env.get("OPENAI_API_KEY", "").strip() and (data["model"].get("base_url") or provider == "custom"):
        data["model"]["api_key"] = env["OPENAI_API_KEY"].strip()


def load_settings(overrides: Mapping[str, object] | None = None, *, yolo: bool = False,
                  environ: Mapping[str, str] | None = None, ignore_user_config: bool = False,
                  config_text: str | None = None) -> Settings:
    """Build Settings from every layer; raises ConfigError with a one-line message. `config_text`
    stands in for config.yaml's content (to check an edit before it is written)."""
    plain = environ is None and config_text is None and not ignore_user_config and not any(
        v is not None for v in (overrides or {}).values())
    snap_key = _snapshot_key() if plain else None
    environ = dict(os.environ if environ is None else environ)
    home = paths.hermes_home()
    cfg_path = paths.config_path()
    data = _copy_plain(DEFAULT_CONFIG)
    if not ignore_user_config:
        user_cfg = read_yaml_file(cfg_path, config_text) if config_text is not None else _read_config(cfg_path)
        if isinstance(user_cfg.get("model"), str):
            user_cfg["model"] = {"default": user_cfg["model"]}
        deep_merge(data, user_cfg)
    _normalise(data, cfg_path)
    env = read_env_file(paths.env_path())
    env.update(environ)
    for var, key in ENV_TO_CONFIG.items():
        if env.get(var, "").strip():
            apply_dotted(data, key, parse_scalar(env[var].strip()))
    _apply_openai_env(data, env, overrides or {})
    for key, value in (overrides or {}).items():
        if value is not None:
            apply_dotted(data, key, value)
    _normalise(data, cfg_path)
    if str(env.get("HERMES_YOLO_MODE", "")).lower() in ("1", "true", "yes"):
        yolo = True
    from hermes_agent.config.schema import build_config

    try:
        typed = build_config(data)
    except ConfigError as exc:
        raise ConfigError(f"{cfg_path}: {exc}") from None
    settings = Settings(data=data, env=env, home=home, config_file=cfg_path, yolo=yolo, typed=typed,
                        chosen=frozenset(k for k, v in (overrides or {}).items() if v is not None))
    if snap_key is not None:  # the run's own settings serve settings_snapshot() too: config is read once
        _SNAPSHOT.clear()
        _SNAPSHOT[snap_key] = settings
    return settings


_SNAPSHOT: dict[tuple, Settings] = {}


def settings_snapshot() -> Settings | None:
    """load_settings() reused until HERMES_HOME, config.yaml, .env or the environment change: for checks that
    run without a Settings at hand (a tool's check_fn). None when the config cannot be read."""
    key = _snapshot_key()
    found = _SNAPSHOT.get(key)
    if found is None:
        try:
            found = load_settings()
        except ConfigError:
            return None
        _SNAPSHOT.clear()
        _SNAPSHOT[key] = found
    return found


def _snapshot_key() -> tuple:
    def stamp(p: Path) -> float:
        try:
            return p.stat().st_mtime
        except OSError:
            return 0.0

    return (str(paths.hermes_home()), stamp(paths.config_path()), stamp(paths.env_path()),
            hash(frozenset(os.environ.items())))
