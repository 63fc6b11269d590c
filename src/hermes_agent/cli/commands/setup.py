"""`hermes setup`: the first-run wizard (re-runnable), or flags for scripts with --non-interactive."""

from __future__ import annotations

import argparse
import sys
from dataclasses import replace

from hermes_agent.config.settings import Settings
from hermes_agent.errors import HermesError

_FLAGS = ("provider", "base_url", "model", "api_key", "backend", "docker_image", "ssh_host", "ssh_user",
          "ssh_port", "ssh_key")


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    """Register `hermes setup`."""
    p = subparsers.add_parser("setup", help="set up the model, API key and terminal backend (re-runnable)")
    # dest names start with setup_ so they never become per-run overrides of the settings being edited
    p.add_argument("--provider", dest="setup_provider", help="custom or a provider profile (openrouter, ...)")
    p.add_argument("--base-url", dest="setup_base_url", help="endpoint base URL (provider custom)")
    p.add_argument("--model", dest="setup_model", help="model name")
    p.add_argument("--api-key", dest="setup_api_key", help="API key, saved to .env (mode 0600)")
    p.add_argument("--backend", dest="setup_backend", choices=("local", "docker", "ssh"), help="terminal backend")
    p.add_argument("--docker-image", dest="setup_docker_image")
    p.add_argument("--ssh-host", dest="setup_ssh_host")
    p.add_argument("--ssh-user", dest="setup_ssh_user")
    p.add_argument("--ssh-port", dest="setup_ssh_port", type=int)
    p.add_argument("--ssh-key", dest="setup_ssh_key", help="private key file")
    p.add_argument("--non-interactive", action="store_true", help="apply the flags without asking anything")


def _from_flags(args: argparse.Namespace, start: object) -> object:
    given = {k: getattr(args, f"setup_{k}", None) for k in _FLAGS}
    terminal = dict(start.terminal)  # type: ignore[attr-defined]
    terminal.update({k: v for k, v in given.items() if k.startswith(("docker_", "ssh_")) and v is not None})
    cur = replace(start, terminal=terminal)  # type: ignore[type-var]
    if given["provider"] and given["provider"] != cur.provider:
        cur = replace(cur, provider=given["provider"], base_url="")
    for key in ("base_url", "model", "backend"):
        if given[key] is not None:
            cur = replace(cur, **{key: given[key].rstrip("/") if key == "base_url" else given[key]})
    if given["api_key"] is not None:
        cur = replace(cur, api_key=given["api_key"])
    return cur


def run(args: argparse.Namespace, settings: Settings) -> int:
    """Run the wizard in a terminal, or apply flags; prints what was saved."""
    from hermes_agent.cli import setup_wizard as wiz
    from hermes_agent.cli.ask import interactive

    try:
        start = _from_flags(args, wiz.current_choices(settings))
        asking = interactive() and not args.non_interactive
        if asking:
            choices = wiz.interview(settings, start)
        else:
            if not any(getattr(args, f"setup_{k}", None) is not None for k in _FLAGS):
                print("hermes setup: not a terminal and no flags given; pass --provider/--model/--base-url/"
                      "--api-key/--backend (see `hermes setup --help`)", file=sys.stderr)
                return 2
            choices = start
            wiz.validate(choices)
            if not choices.model:
                print("hermes setup: no model given (--model NAME)", file=sys.stderr)
                return 2
        for line in wiz.write(choices, settings):
            print(line)
        if asking:
            wiz.offer_migration(settings)
    except HermesError as exc:
        print(f"hermes setup: {exc}", file=sys.stderr)
        return 1
    print(f"model {choices.model} via {choices.provider} ({wiz.effective_base_url(choices)}), "
          f"terminal backend {choices.backend}")
    print('Ready. Try: hermes chat -q "hello"   (or just `hermes`; `hermes doctor` checks everything)')
    return 0
