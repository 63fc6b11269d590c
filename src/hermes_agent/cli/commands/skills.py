"""`hermes skills list|search|install|inspect|audit|uninstall|publish|snapshot|tap|review`.

`slash(settings, line)` runs the same actions for `/skills ...` in the chat REPL."""

from __future__ import annotations

import argparse
import json
import shlex
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from hermes_agent.config.settings import Settings
from hermes_agent.skills.guard import ScanReport
from hermes_agent.skills.hub import SkillsHub
from hermes_agent.skills.review import ProposalStore, ReviewError
from hermes_agent.skills.taps import HubError

_ACTIONS_HELP = "list, search, install, inspect, audit, uninstall, publish, snapshot, tap, review"


@dataclass(slots=True)
class _IO:
    """Where output goes and how to ask a yes/no question (None: not interactive)."""

    out: Callable[[str], None] = print
    err: Callable[[str], None] = field(default=lambda s: print(s, file=sys.stderr))
    ask: Callable[[str], str] | None = None


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    """Register `hermes skills ...`."""
    p = subparsers.add_parser("skills", help="Manage skills: hub taps, install, audit, review proposals")
    _fill(p)


def _fill(p: argparse.ArgumentParser) -> None:
    sub = p.add_subparsers(dest="skills_command", metavar="ACTION")
    sub.add_parser("list", help="Installed skills with their source")
    s = sub.add_parser("search", help="Search the configured taps")
    s.add_argument("query", nargs="*")
    i = sub.add_parser("install", help="Install from a tap (name or tap/name) or a local skill directory")
    i.add_argument("source")
    i.add_argument("--force", action="store_true", help="Install even when the guard refuses it")
    i.add_argument("--category", help="Category folder to install into")
    n = sub.add_parser("inspect", help="Show a skill's metadata, files, guard findings and provenance")
    n.add_argument("name")
    sub.add_parser("audit", help="Re-scan installed skills with the guard")
    u = sub.add_parser("uninstall", help="Remove an installed skill")
    u.add_argument("name")
    pub = sub.add_parser("publish", help="Copy a skill into a tap directory and commit it")
    pub.add_argument("name")
    pub.add_argument("--to", required=True, help="Tap name or directory")
    pub.add_argument("--force", action="store_true")
    snap = sub.add_parser("snapshot", help="Export installed skills with hashes as JSON")
    snap.add_argument("-o", "--output", help="File to write (default: stdout)")
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


def run(args: argparse.Namespace, settings: Settings, io: _IO | None = None) -> int:
    """Run one action; problems become one line on stderr and exit code 1."""
    io = io or _IO(ask=_tty_ask if sys.stdin.isatty() and sys.stdout.isatty() else None)
    action = getattr(args, "skills_command", None) or "list"
    skills_dir = Path(settings.home) / "skills"
    external = tuple(Path(str(d)).expanduser() for d in settings.cfg.skills.external_dirs)
    hub = SkillsHub(skills_dir, external_dirs=external)
    try:
        return _HANDLERS[action](args, hub, io)
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
    return run(args, settings, _IO(out=out, err=out, ask=ask))


def _tty_ask(prompt: str) -> str:
    try:
        return input(prompt)
    except EOFError:
        return "q"


def _list(args: argparse.Namespace, hub: SkillsHub, io: _IO) -> int:
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


def _search(args: argparse.Namespace, hub: SkillsHub, io: _IO) -> int:
    if not hub.taps.list():
        io.out("No taps configured: `hermes skills tap add <git-url-or-directory>`.")
        return 0
    hits = hub.search(" ".join(args.query))
    for s in hits:
        io.out(f"{s.ref}  [{s.category or 'general'}]  {s.description[:90]}")
    io.out(f"{len(hits)} skill(s) found.")
    return 0


def _print_findings(io: _IO, report: ScanReport, limit: int = 20) -> None:
    for f in report.findings[:limit]:
        io.out(f"  [{f.severity}] {f.rule_id} {f.file}:{f.line}  {f.message}\n      {f.excerpt}")
    if len(report.findings) > limit:
        io.out(f"  … {len(report.findings) - limit} more")


def _install(args: argparse.Namespace, hub: SkillsHub, io: _IO) -> int:
    result = hub.install(args.source, force=args.force, category=args.category)
    if not result.installed:
        io.err(f"Refused {result.name}: {result.decision.reason}")
        _print_findings(io, result.report)
        return 1
    io.out(f"Installed {result.name} -> {result.path} ({result.decision.reason})")
    if result.report.findings:
        _print_findings(io, result.report)
    return 0


def _inspect(args: argparse.Namespace, hub: SkillsHub, io: _IO) -> int:
    data = hub.inspect(args.name)
    io.out(f"{data['name']}  source: {data['source']}  trust: {data['trust']}\n  path: {data['path']}")
    meta = data["meta"]
    io.out(f"  description: {meta.get('description', '')}")
    for key in ("version", "license", "tags", "platforms"):
        if meta.get(key):
            io.out(f"  {key}: {meta[key]}")
    io.out(f"  files: {', '.join(data['files'])}")
    io.out(f"  guard: {data['scan']} — {data['decision']}")
    for f in data["findings"]:
        io.out(f"    [{f['severity']}] {f['rule']} {f['file']}:{f['line']}  {f['message']}")
    if data["lock"]:
        lock = data["lock"]
        io.out(f"  installed from {lock.get('source')} @ {lock.get('commit') or '-'} on {lock.get('installed_at')}")
    return 0


def _audit(args: argparse.Namespace, hub: SkillsHub, io: _IO) -> int:
    bad = 0
    for skill, report in hub.audit():
        flag = " (modified since install)" if skill.modified else ""
        io.out(f"{skill.info.name}: {report.summary()}  [{skill.source}]{flag}")
        serious = [f for f in report.findings if f.severity in ("high", "critical")]
        if serious:
            bad += 1
            _print_findings(io, ScanReport(tuple(serious)))
    io.out(f"{bad} skill(s) with high or critical findings.")
    return 1 if bad else 0


def _uninstall(args: argparse.Namespace, hub: SkillsHub, io: _IO) -> int:
    path = hub.uninstall(args.name)
    io.out(f"Removed {args.name} ({path})")
    return 0


def _publish(args: argparse.Namespace, hub: SkillsHub, io: _IO) -> int:
    res = hub.publish(args.name, args.to, force=args.force)
    tail = f", committed {res['commit'][:12]} (push it yourself)" if res["commit"] else ""
    io.out(f"Published {args.name} -> {res['path']}{tail}")
    return 0


def _snapshot(args: argparse.Namespace, hub: SkillsHub, io: _IO) -> int:
    data = hub.snapshot(Path(args.output) if args.output else None)
    if args.output:
        io.out(f"Wrote {len(data['skills'])} skill(s) to {args.output}")
    else:
        io.out(json.dumps(data, indent=2))
    return 0


def _tap(args: argparse.Namespace, hub: SkillsHub, io: _IO) -> int:
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


def _review(args: argparse.Namespace, hub: SkillsHub, io: _IO) -> int:
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


def _review_each(store: ProposalStore, pending: list, io: _IO) -> int:
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


_HANDLERS: dict[str, Callable[[argparse.Namespace, SkillsHub, _IO], int]] = {
    "list": _list, "search": _search, "install": _install, "inspect": _inspect, "audit": _audit,
    "uninstall": _uninstall, "publish": _publish, "snapshot": _snapshot, "tap": _tap, "review": _review,
}
