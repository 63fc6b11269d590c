"""`hermes skills list|search|install|inspect|audit|update|uninstall|publish|snapshot|tap|review`.

Search/install/update/publish/snapshot handlers live in skills_hub.py. `slash(settings, line)` runs the
same actions for `/skills ...` in the chat REPL. Only the user drives the hub: no model tool does."""

from __future__ import annotations

import argparse
import shlex
import sys
from collections.abc import Callable
from pathlib import Path

from hermes_agent.cli.commands.skills_io import IO, print_findings
from hermes_agent.config.settings import Settings
from hermes_agent.skills.guard import ScanReport
from hermes_agent.skills.hub import HubConfig, HubError, SkillsHub
from hermes_agent.skills.review import ProposalStore, ReviewError

_ACTIONS_HELP = "list, search, install, inspect, audit, update, uninstall, publish, snapshot, tap, review"


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    """Register `hermes skills ...`."""
    p = subparsers.add_parser("skills", help="Manage skills: hub taps, install, audit, review proposals")
    _fill(p)


def _fill(p: argparse.ArgumentParser) -> None:
    from hermes_agent.cli.commands import skills_hub

    sub = p.add_subparsers(dest="skills_command", metavar="ACTION")
    sub.add_parser("list", help="Installed skills with their source")
    skills_hub.add_hub_actions(sub)
    n = sub.add_parser("inspect", help="Show a skill's metadata, files, guard findings and provenance")
    n.add_argument("name")
    sub.add_parser("audit", help="Re-scan installed skills with the guard")
    u = sub.add_parser("uninstall", help="Remove an installed skill")
    u.add_argument("name")
    tap = sub.add_parser("tap", help="Manage taps: add URL, list, remove NAME, update [NAME]")
    tap.add_argument("tap_action", choices=("add", "list", "remove", "update"))
    tap.add_argument("target", nargs="?", help="git URL or directory (add); tap name or URL (remove, update)")
    tap.add_argument("--name", help="Short name for the tap (add)")
    tap.add_argument("--trusted", action="store_true", help="Trust this tap (only critical findings block)")
    rv = sub.add_parser("review", help="Show pending agent-written skill changes; apply or reject them")
    rv.add_argument("--apply", metavar="ID")
    rv.add_argument("--reject", metavar="ID")
    rv.add_argument("--all", action="store_true", help="Apply every pending proposal")
    rv.add_argument("--force", action="store_true", help="Apply even if the live skill changed since")


def hub_config(settings: Settings) -> HubConfig:
    """The `skills.hub` settings and the environment (for GITHUB_TOKEN) as the hub's config."""
    h = settings.cfg.skills.hub
    return HubConfig(timeout=h.timeout, github_api=h.github_api, repos=tuple(h.repos),
                     marketplaces=tuple(h.marketplaces), well_known=tuple(h.well_known),
                     trusted_repos=tuple(h.trusted_repos), clawhub_url=h.clawhub_url, lobehub_url=h.lobehub_url,
                     skills_sh_url=h.skills_sh_url, disabled_sources=tuple(h.disabled_sources), env=settings.env)


def run(args: argparse.Namespace, settings: Settings, io: IO | None = None) -> int:
    """Run one action; problems become one line on stderr and exit code 1."""
    io = io or IO(ask=_tty_ask if sys.stdin.isatty() and sys.stdout.isatty() else None)
    action = getattr(args, "skills_command", None) or "list"
    skills_dir = Path(settings.home) / "skills"
    external = tuple(Path(str(d)).expanduser() for d in settings.cfg.skills.external_dirs)
    hub = SkillsHub(skills_dir, external_dirs=external, config=hub_config(settings))
    from hermes_agent.cli.commands import skills_hub

    handlers = {**_HANDLERS, **skills_hub.HANDLERS}
    try:
        return handlers[action](args, hub, io)
    except (HubError, ReviewError, OSError) as exc:
        io.err(f"hermes skills {action}: {exc}")
        return 1


def slash(settings: Settings, line: str, out: Callable[[str], None] = print,
          ask: Callable[[str], str] | None = None) -> int:
    """`/skills <line>` from the chat REPL (same actions as the CLI)."""
    parser = argparse.ArgumentParser(prog="/skills", add_help=False, exit_on_error=False)
    _fill(parser)
    try:
        args = parser.parse_args(shlex.split(line))
    except (argparse.ArgumentError, SystemExit, ValueError):
        out(f"usage: /skills [{_ACTIONS_HELP}] ...")
        return 2
    return run(args, settings, IO(out=out, err=out, ask=ask))


def _tty_ask(prompt: str) -> str:
    try:
        return input(prompt)
    except EOFError:
        return "q"


def _list(args: argparse.Namespace, hub: SkillsHub, io: IO) -> int:
    rows = hub.installed()
    if not rows:
        io.out("No skills installed. Add a tap (`hermes skills tap add DIR_OR_URL`) and install one.")
        return 0
    width = max(len(r.info.name) for r in rows)
    for r in rows:
        mark = " (modified)" if r.modified else ""
        mark += f" (broken: {r.info.error})" if r.info.error else ""
        io.out(f"{r.info.name:<{width}}  {r.info.category or 'general':<22} {r.source}{mark}  {r.info.one_line(70)}")
    return 0


def _inspect(args: argparse.Namespace, hub: SkillsHub, io: IO) -> int:
    data = hub.inspect(args.name)
    io.out(f"{data['name']}  source: {data['source']}  trust: {data['trust']}\n  path: {data['path']}")
    meta = data["meta"]
    io.out(f"  description: {meta.get('description', '')}")
    for key in ("version", "license", "tags", "platforms"):
        if meta.get(key):
            io.out(f"  {key}: {meta[key]}")
    io.out(f"  files: {', '.join(data['files'])}")
    io.out(f"  guard: {data['scan']} (verdict {data['verdict']}) — {data['decision']}")
    for f in data["findings"]:
        io.out(f"    [{f['severity']}] {f['rule']} {f['file']}:{f['line']}  {f['message']}")
    if data["lock"]:
        lock = data["lock"]
        rev = (lock.get("metadata") or {}).get("source_revision") or "-"
        io.out(f"  installed from {lock.get('source')}:{lock.get('identifier')} @ {rev} on {lock.get('installed_at')}"
               f" ({lock.get('trust_level')}, verdict {lock.get('scan_verdict')})")
    return 0


def _audit(args: argparse.Namespace, hub: SkillsHub, io: IO) -> int:
    bad = 0
    for skill, report in hub.audit():
        flag = " (modified since install)" if skill.modified else ""
        io.out(f"{skill.info.name}: {report.summary()}  [{skill.source}]{flag}")
        serious = [f for f in report.findings if f.severity in ("high", "critical")]
        if serious:
            bad += 1
            print_findings(io, ScanReport(tuple(serious)))
    io.out(f"{bad} skill(s) with high or critical findings.")
    return 1 if bad else 0


def _uninstall(args: argparse.Namespace, hub: SkillsHub, io: IO) -> int:
    path = hub.uninstall(args.name)
    io.out(f"Removed {args.name} ({path})")
    return 0


def _tap(args: argparse.Namespace, hub: SkillsHub, io: IO) -> int:
    if args.tap_action == "list":
        taps = hub.taps.list()
        for t in taps:
            io.out(f"{t.name}  {t.url}  ({t.trust})")
        if not taps:
            io.out("No taps configured.")
        return 0
    if args.tap_action == "update":
        for t in [hub.taps.get(args.target)] if args.target else hub.taps.list():
            io.out(f"{t.name}: {hub.taps.update(t) or 'not a git repository'}")
        return 0
    if not args.target:
        raise HubError(f"tap {args.tap_action} needs a URL, directory or tap name")
    if args.tap_action == "add":
        t = hub.taps.add(args.target, name=args.name, trusted=args.trusted)
        io.out(f"Added tap {t.name} ({t.trust}): {len(hub.taps.skills(t))} skill(s)")
    else:
        t = hub.taps.remove(args.target)
        io.out(f"Removed tap {t.name}")
    return 0


def _review(args: argparse.Namespace, hub: SkillsHub, io: IO) -> int:
    store = ProposalStore(hub.skills_dir)
    if args.apply:
        io.out(f"Applied {store.apply(args.apply, force=args.force).id}")
        return 0
    if args.reject:
        io.out(f"Rejected {store.reject(args.reject).id}")
        return 0
    pending = store.list()
    if not pending:
        io.out("No pending skill proposals.")
        return 0
    if args.all:
        for p in pending:
            store.apply(p.id, force=args.force)
            io.out(f"Applied {p.id}")
        return 0
    return _review_each(store, pending, io)


def _review_each(store: ProposalStore, pending: list, io: IO) -> int:
    for p in pending:
        io.out(f"=== {p.id}  skill {p.name}  ({', '.join(p.actions)})")
        io.out(p.diff(store.skills_dir).rstrip() or "(no changes against the live skill)")
        if conflicts := store.conflicts(p):
            io.out(f"!! live files changed since this proposal: {', '.join(conflicts)}")
        if io.ask is None:
            continue
        answer = io.ask("Apply? [y]es / [n]o (reject) / [s]kip / [q]uit: ").strip().lower()[:1]
        if answer == "q":
            break
        if answer == "y":
            store.apply(p.id, force=True)
            io.out(f"Applied {p.id}")
        elif answer == "n":
            store.reject(p.id)
            io.out(f"Rejected {p.id}")
    if io.ask is None:
        io.out("Apply with `hermes skills review --apply ID` (or --all); reject with --reject ID.")
    return 0


_HANDLERS: dict[str, Callable[[argparse.Namespace, SkillsHub, IO], int]] = {
    "list": _list, "inspect": _inspect, "audit": _audit, "uninstall": _uninstall, "tap": _tap, "review": _review,
}
