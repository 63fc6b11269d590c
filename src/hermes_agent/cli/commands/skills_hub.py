"""`hermes skills search|install|update|publish|snapshot`: the Skills Hub actions (user-driven only).

Search prints each source's hits as that source answers and names every source that failed or timed
out (with its reason) instead of waiting for it."""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable
from pathlib import Path

from hermes_agent.cli.commands.skills_io import IO, print_findings
from hermes_agent.skills.guard import ScanReport
from hermes_agent.skills.hub import HubError, SkillsHub
from hermes_agent.skills.hub.core import InstallResult
from hermes_agent.skills.hub.router import SourceResult, reaches_out


def add_hub_actions(sub: argparse._SubParsersAction) -> None:
    """search, install, update, publish, snapshot."""
    s = sub.add_parser("search", help="Search every skill source (GitHub repos, taps, registries) at once")
    s.add_argument("query", nargs="*")
    s.add_argument("--limit", type=int, default=20, help="Hits per source (default 20)")
    i = sub.add_parser("install", help="Install source:identifier, owner/repo/path, a URL, tap/name, a name, or a dir")
    i.add_argument("source")
    i.add_argument("--force", action="store_true", help="Install even when the guard refuses it")
    i.add_argument("--category", help="Category folder to install into")
    up = sub.add_parser("update", help="Re-fetch hub skills, re-scan them and show what changed")
    up.add_argument("name", nargs="?")
    up.add_argument("--force", action="store_true", help="Replace a locally edited skill")
    pub = sub.add_parser("publish", help="Publish a skill to a tap directory or to GitHub as a pull request")
    pub.add_argument("name")
    pub.add_argument("--to", default="github", help="Tap name or directory, or 'github' (default)")
    pub.add_argument("--repo", help="owner/name of the GitHub repository (with --to github)")
    pub.add_argument("--path", default="skills", help="Folder inside the repository (default: skills)")
    pub.add_argument("--force", action="store_true")
    snap = sub.add_parser("snapshot", help="export FILE | import FILE: the hub-installed skills with provenance")
    snap.add_argument("snapshot_action", nargs="?", choices=("export", "import"), default="export")
    snap.add_argument("file", nargs="?", help="JSON file (export: default stdout)")
    snap.add_argument("--force", action="store_true", help="import: install even what the guard refuses")


def _search(args: argparse.Namespace, hub: SkillsHub, io: IO) -> int:
    """Installed skills first, then every source as it answers; exit 1 when no remote source could be
    searched (each failed or timed out), so a script can tell "nothing found" from "nothing asked"."""
    from hermes_agent.skills.hub.model import matches

    query = " ".join(args.query)
    mine = [s.info for s in hub.installed() if matches(query, s.info.name, s.info.description)][:args.limit]
    if mine:
        io.out(f"installed ({len(mine)}):")
        for info in mine:
            io.out(f"  {info.name}  [installed]  {info.description[:90]}")
    names = [s for s in hub.sources if s not in ("url", "local")]
    io.out(f"Searching {', '.join(names)} for {query!r} ({hub.config.timeout:g}s each)…")
    failed: list[str] = []
    answered = 0
    total = 0

    def show(res: SourceResult) -> None:
        nonlocal total, answered
        if res.error:
            failed.append(res.source)
            io.out(f"! {res.source}: {res.error}")
            return
        answered += reaches_out(hub.sources[res.source])
        for note in res.warnings:
            io.out(f"! {res.source}: {note}")
        if not res.hits:
            return
        io.out(f"{res.source} ({len(res.hits)} hit(s), {res.seconds:.2f}s):")
        for h in res.hits:
            io.out(f"  {h.ref}  [{h.trust_level}]  {h.description[:90]}")
        total += len(res.hits)

    hub.search(query, limit=args.limit, on_result=show)
    if failed and not answered:
        io.err(f"{len(mine)} installed skill(s) matched; no skill source could be searched "
               f"(failed: {', '.join(failed)}).")
        return 1
    tail = f"; failed: {', '.join(failed)}" if failed else ""
    io.out(f"{total} skill(s) found{tail}. Install with `hermes skills install <source:identifier>`.")
    return 0


def _report_install(res: InstallResult, io: IO) -> int:
    if not res.installed:
        io.err(f"Refused {res.name} from {res.source} ({res.trust} source, verdict {res.verdict}): "
               f"{res.decision.reason}")
        print_findings(io, res.report)
        return 1
    io.out(f"Installed {res.name} -> {res.path} from {res.source} ({res.decision.reason})")
    serious = res.report.at_least("high")
    if serious:
        why = "--force was given" if res.decision.blocking else f"the {res.trust} trust level allows it"
        io.out(f"Warning: {res.name} has {len(serious)} high/critical finding(s) (verdict {res.verdict}); "
               f"installed because {why} — review it before use:")
        print_findings(io, ScanReport(tuple(serious)))
    elif res.report.findings:
        print_findings(io, res.report)
    return 0


def _install(args: argparse.Namespace, hub: SkillsHub, io: IO) -> int:
    return _report_install(hub.install(args.source, force=args.force, category=args.category), io)


def _update(args: argparse.Namespace, hub: SkillsHub, io: IO) -> int:
    from hermes_agent.skills.hub.lifecycle import update

    results = update(hub, args.name, force=args.force)
    if not results:
        io.out("No hub-installed skills to update.")
    bad = 0
    for r in results:
        io.out(f"{r.name}: {r.status} — {r.message}")
        for change in r.changes:
            io.out(f"    {change}")
        if r.status == "refused" and r.report is not None:
            print_findings(io, r.report)
        bad += r.status in ("refused", "unavailable", "modified")
    return 1 if bad else 0


def _publish(args: argparse.Namespace, hub: SkillsHub, io: IO) -> int:
    from hermes_agent.skills.hub.publish import publish_to_github, publish_to_tap

    if args.to == "github":
        if not args.repo:
            raise HubError("publish --to github needs --repo owner/name")
        res = publish_to_github(hub, args.name, args.repo, path=args.path, force=args.force)
        io.out(f"Published {args.name} to {res['repo']} on branch {res['branch']}: pull request {res['pull_request']}")
        return 0
    res = publish_to_tap(hub, args.name, args.to, force=args.force)
    tail = f", committed {res['commit'][:12]} (push it yourself)" if res["commit"] else ""
    io.out(f"Published {args.name} -> {res['path']}{tail}")
    return 0


def _snapshot(args: argparse.Namespace, hub: SkillsHub, io: IO) -> int:
    from hermes_agent.skills.hub.lifecycle import snapshot_export, snapshot_import

    if args.snapshot_action == "export":
        data = snapshot_export(hub, Path(args.file) if args.file and args.file != "-" else None)
        if args.file and args.file != "-":
            io.out(f"Wrote {len(data['skills'])} skill(s) and {len(data['taps'])} tap(s) to {args.file}")
        else:
            io.out(json.dumps(data, indent=2))
        return 0
    if not args.file:
        raise HubError("snapshot import needs a FILE")
    failed = 0
    for row, res in snapshot_import(hub, Path(args.file), force=args.force):
        if isinstance(res, str):
            failed += 1
            io.err(f"{row.get('name', '?')}: {res}")
            continue
        failed += _report_install(res, io)
        if res.installed and row.get("content_hash") and res.path is not None:
            now = hub.lock().get(res.name, {}).get("content_hash")
            if now != row["content_hash"]:
                io.out(f"  note: {res.name} differs from the snapshot ({row['content_hash']} -> {now})")
    return 1 if failed else 0


HANDLERS: dict[str, Callable[[argparse.Namespace, SkillsHub, IO], int]] = {
    "search": _search, "install": _install, "update": _update, "publish": _publish, "snapshot": _snapshot,
}
