"""`hermes auth list|add|remove|reset|status`: Hermes's pooled provider credentials in auth.json (API keys;
OAuth logins are not supported here). A key is read from a hidden prompt or stdin, never echoed."""

from __future__ import annotations

import argparse
import sys

from hermes_agent.config.settings import Settings
from hermes_agent.errors import HermesError, UsageError

_ALIASES = {"or": "openrouter", "open-router": "openrouter"}


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser("auth", help="manage pooled provider credentials (auth.json, shared with Hermes)")
    sub = p.add_subparsers(dest="auth_action", metavar="ACTION")
    add = sub.add_parser("add", help="add an API key to a provider's pool (read from a hidden prompt or stdin)")
    add.add_argument("provider", help="provider id (openrouter, openai, anthropic, ...)")
    add.add_argument("--type", dest="auth_type", choices=["oauth", "api-key", "api_key"], help="credential type")
    add.add_argument("--label", help="display label (default: api-key-N)")
    add.add_argument("--api-key", help="the key (visible to other local users in the process list: prefer stdin)")
    ls = sub.add_parser("list", help="list pooled credentials")
    ls.add_argument("provider", nargs="?", help="only this provider")
    rm = sub.add_parser("remove", help="remove a pooled credential by index, id or label")
    rm.add_argument("provider")
    rm.add_argument("target", help="credential index, entry id or exact label")
    reset = sub.add_parser("reset", help="clear the exhausted status of a provider's credentials")
    reset.add_argument("provider")
    status = sub.add_parser("status", help="whether a provider has a usable credential")
    status.add_argument("provider")


def run(args: argparse.Namespace, settings: Settings) -> int:
    action = getattr(args, "auth_action", None) or "list"
    if action == "list" and not hasattr(args, "provider"):
        args.provider = None
    try:
        return {"add": _add, "list": _list, "remove": _remove, "reset": _reset, "status": _status}[action](
            args, settings)
    except UsageError as exc:
        print(f"hermes auth {action}: {exc}", file=sys.stderr)
        return 2
    except HermesError as exc:
        print(f"hermes auth {action}: {exc}", file=sys.stderr)
        return 1


def _provider(raw: str | None) -> str:
    name = (raw or "").strip().lower()
    return _ALIASES.get(name, name)


def _known(provider: str) -> str:
    """The provider's default base URL; an unknown provider is a UsageError."""
    from hermes_agent.providers.profiles import PROFILES

    prof = PROFILES.get(provider)
    if prof is None:
        raise UsageError(f"unknown provider: {provider} (known: {', '.join(sorted(PROFILES))})")
    return prof.base_url


def _read_key(args: argparse.Namespace) -> str:
    if args.api_key:
        print("hermes auth add: note: a key given with --api-key is visible in the process list; "
              "pipe it on stdin instead", file=sys.stderr)
        return args.api_key.strip()
    if sys.stdin.isatty():
        import getpass

        return getpass.getpass("Paste your API key: ").strip()
    return sys.stdin.readline().strip()


def _add(args: argparse.Namespace, settings: Settings) -> int:
    from hermes_agent.providers import auth_store

    provider = _provider(args.provider)
    base_url = _known(provider)
    if args.auth_type == "oauth":
        raise UsageError(f"OAuth login is not supported by this hermes: add an API key for {provider}")
    key = _read_key(args)
    if not key:
        raise UsageError("no API key provided")
    index, entry = auth_store.add_api_key(settings.home, provider, key, (args.label or "").strip() or None, base_url)
    print(f'Added {provider} credential #{index}: "{entry["label"]}"')
    return 0


def _status_text(entry: dict) -> str:
    status = entry.get("last_status")
    if status not in ("exhausted", "dead"):
        return ""
    reason = f" {entry['last_error_reason']}" if entry.get("last_error_reason") else ""
    code = f" ({entry['last_error_code']})" if entry.get("last_error_code") else ""
    return f" {status}{reason}{code}"


def _list(args: argparse.Namespace, settings: Settings) -> int:
    from hermes_agent.providers import auth_store
    from hermes_agent.providers.profiles import PROFILES

    store = auth_store.visible(settings.home)
    wanted = [_provider(args.provider)] if args.provider else sorted(set(auth_store.providers(store)) |
                                                                      set(PROFILES))
    for provider in wanted:
        rows = auth_store.entries(store, provider)
        env_var = PROFILES[provider].key_env if provider in PROFILES else ""
        from_env = env_var if env_var and str(settings.env.get(env_var, "")).strip() else ""
        if not rows and not from_env:
            continue
        current = next((e for e in rows if auth_store.usable(e)), None)
        print(f"{provider} ({len(rows)} credential{'s' if len(rows) != 1 else ''}):")
        for i, e in enumerate(rows, start=1):
            source = str(e.get("source", "manual")).removeprefix("manual:")
            mark = "← " if e is current and not from_env else "  "
            print(f"  #{i}  {str(e.get('label', '')):<20} {str(e.get('auth_type', 'api_key')):<7} "
                  f"{source}{_status_text(e)} {mark}".rstrip())
        if from_env:
            print(f"  env {from_env:<20} api_key (from the environment or .env; used before the pool) ←")
        print()
    return 0


def _remove(args: argparse.Namespace, settings: Settings) -> int:
    from hermes_agent.providers import auth_store

    provider = _provider(args.provider)
    index, entry = auth_store.remove(settings.home, provider, args.target)
    print(f"Removed {provider} credential #{index} ({entry.get('label', '')})")
    return 0


def _reset(args: argparse.Namespace, settings: Settings) -> int:
    from hermes_agent.providers import auth_store

    provider = _provider(args.provider)
    with auth_store.locked(settings.home):
        store = auth_store.load(settings.home)
        rows = auth_store.entries(store, provider)
        for e in rows:
            e.update(last_status=None, last_status_at=None, last_error_code=None, last_error_reason=None,
                     last_error_message=None, last_error_reset_at=None)
        if rows:
            auth_store.save(settings.home, store)
    print(f"Reset status on {len(rows)} {provider} credentials")
    return 0


def _status(args: argparse.Namespace, settings: Settings) -> int:
    from hermes_agent.providers import auth_store
    from hermes_agent.providers.profiles import PROFILES

    provider = _provider(args.provider)
    env_var = PROFILES[provider].key_env if provider in PROFILES else ""
    if env_var and str(settings.env.get(env_var, "")).strip():
        print(f"{provider}: logged in\n  auth_type: api_key\n  source: env:{env_var}")
        return 0
    rows = auth_store.entries(auth_store.visible(settings.home), provider)
    entry = next((e for e in rows if auth_store.usable(e)), None)
    if entry is None:
        why = f" ({len(rows)} credential{'s' if len(rows) != 1 else ''}, none usable)" if rows else ""
        print(f"{provider}: logged out{why}")
        return 0
    print(f"{provider}: logged in\n  auth_type: {entry.get('auth_type', 'api_key')}\n"
          f"  source: pool ({entry.get('label', '')})")
    return 0
