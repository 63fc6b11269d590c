"""Availability checks (`check_fn`) of the default built-in tools, apart from the tools themselves: the tool
manifest (tools/manifest.py) names them, so the first request learns which tools are available without
importing a tool module. Each check's docstring (or its `explain()`) is what `hermes tools list` prints."""

from __future__ import annotations

import os
from collections.abc import Mapping

from hermes_agent import paths


def _importable(module: str) -> bool:
    import importlib.util

    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):  # ValueError: a module set to None in sys.modules (import blocked)
        return False


def web_extra_installed() -> bool:
    """the web extra (pip install 'hermes-agent[web]')"""
    return all(_importable(m) for m in ("readability", "markdownify", "ddgs", "pypdf"))


def image_backend_configured() -> bool:
    """FAL_KEY, or an OpenAI-compatible images endpoint (OPENAI_API_KEY or image_gen.base_url) is configured"""
    from hermes_agent.config.loader import settings_snapshot
    from hermes_agent.media.choice import image_backend

    s = settings_snapshot()
    return s is not None and image_backend(s.cfg.image_gen, s.env) is not None


def speech_engine_available() -> bool:
    """espeak-ng or edge-tts installed, or OPENAI_API_KEY / ELEVENLABS_API_KEY set"""
    from hermes_agent.config.loader import settings_snapshot
    from hermes_agent.media.choice import speech_problem

    s = settings_snapshot()
    return s is not None and speech_problem(s.cfg.tts, s.env) is None


def backend_ready() -> bool:
    """the configured terminal backend can start"""
    return not _backend_problem()


def _backend_problem() -> str:
    from hermes_agent.config.loader import settings_snapshot
    from hermes_agent.terminal.manager import backend_problem

    settings = settings_snapshot()
    return (backend_problem(settings) or "") if settings is not None else ""


backend_ready.explain = _backend_problem  # type: ignore[attr-defined]  # `hermes tools list` / doctor say what


def chromium_path(env: Mapping[str, str] | None = None) -> str | None:
    """$HERMES_CHROMIUM (from `env`, else the process environment), else the first of chromium,
    chromium-browser and google-chrome on PATH."""
    chosen = str((os.environ if env is None else env).get("HERMES_CHROMIUM", "")).strip()
    if chosen:
        return chosen if os.access(chosen, os.X_OK) else None
    return next((p for n in ("chromium", "chromium-browser", "google-chrome") if (p := paths.which(n))), None)


def browser_available() -> bool:
    """needs the browser extra (playwright) and a Chromium binary (or BROWSER_CDP_URL)"""
    return not _browser_missing()


def _browser_missing() -> str:
    if not _importable("playwright"):
        from hermes_agent.paths import install_hint

        return f"playwright is not installed: {install_hint('browser')}"
    if chromium_path() is None and not os.environ.get("BROWSER_CDP_URL", "").strip():
        return ("no Chromium found: install it (Debian/Ubuntu: apt-get install chromium), or set HERMES_CHROMIUM "
                "to its path, or BROWSER_CDP_URL to a running browser's CDP endpoint")
    return ""


browser_available.explain = _browser_missing  # type: ignore[attr-defined]  # `hermes tools list`/doctor say why


def a2a_sdk_installed() -> bool:
    """a2a-sdk is installed (the `a2a` extra)"""
    return _importable("a2a")


def preset(moa: Mapping) -> tuple[str, Mapping]:
    """The active mixture-of-agents preset's name and mapping (active_preset, else default_preset, else
    'default')."""
    presets = moa.get("presets") if isinstance(moa.get("presets"), Mapping) else {}
    name = str(moa.get("active_preset") or moa.get("default_preset") or "default")
    found = presets.get(name)
    return name, (found if isinstance(found, Mapping) else {})


def moa_configured() -> bool:
    """moa.presets.<active or default preset>.reference_models lists at least one model in config.yaml"""
    from hermes_agent.config.loader import settings_snapshot

    s = settings_snapshot()
    return s is not None and bool(preset(s.cfg.moa)[1].get("reference_models"))
