"""`hermes model [NAME]`: list the endpoint's models and pick one (numbered, in a terminal), or set NAME
as model.default in config.yaml (comments kept)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from hermes_agent import paths
from hermes_agent.config.settings import Settings
from hermes_agent.errors import HermesError


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    """Register `hermes model`."""
    p = subparsers.add_parser("model", help="show or choose the default model (from the endpoint's list)")
    p.add_argument("name", nargs="?", help="model to make the default (omit to list and pick)")
    p.add_argument("--timeout", type=float, default=10.0, help="seconds to wait for the model list")


def _set_default(settings: Settings, name: str) -> Path:
    from hermes_agent.config.edit import ConfigDocument

    cfg = Path(settings.config_file) if settings.config_file else paths.config_path()
    doc = ConfigDocument.load(cfg)
    doc.set("model.default", name)
    doc.save()
    return cfg


def _endpoint(settings: Settings) -> tuple[str, str]:
    """(base_url, api_key) of the configured endpoint, ignoring a missing model name."""
    from hermes_agent.errors import ConfigError
    from hermes_agent.providers.profiles import resolve_endpoint

    cfg = str(settings.config_file or paths.config_path())
    model = settings.model
    if not model.model:  # listing models is how a user finds one to set
        from dataclasses import replace

        model = replace(model, model="?")
    try:
        ep = resolve_endpoint(model, settings.env, cfg)
    except ConfigError as exc:
        raise HermesError(f"{exc}") from None
    return ep.base_url, ep.api_key


def run(args: argparse.Namespace, settings: Settings) -> int:
    """Set NAME, or list the endpoint's models and let the user pick."""
    from hermes_agent.cli.ask import choose, interactive
    from hermes_agent.cli.endpoint_probe import list_models

    try:
        if args.name:
            cfg = _set_default(settings, args.name)
            print(f"default model is now {args.name} ({cfg})")
            return 0
        base_url, key = _endpoint(settings)
        models = list_models(base_url, key, timeout=args.timeout).models
        current = settings.model.model
        if not models:
            print(f"{base_url} lists no models; set one with `hermes model NAME`")
            return 1
        if not interactive():
            for m in models:
                print(f"{'*' if m == current else ' '} {m}")
            return 0
        options = [(m, "(current)" if m == current else "") for m in models]
        picked = choose(f"Models at {base_url}:", options, current if current in models else None)
        if picked == current:
            print(f"default model stays {current}")
            return 0
        cfg = _set_default(settings, picked)
        print(f"default model is now {picked} ({cfg})")
        return 0
    except HermesError as exc:
        print(f"hermes model: {exc}", file=sys.stderr)
        return 1
