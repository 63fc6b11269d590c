"""Update (re-fetch, re-scan, diff summary, refuse on a failed scan) and snapshot export/import of
hub-installed skills. The snapshot keeps Hermes's shape ({hermes_version, exported_at, skills, taps})
with our provenance fields added to each skill row."""

from __future__ import annotations

import difflib
import json
from dataclasses import dataclass
from pathlib import Path

from hermes_agent.skills.fsutil import atomic_write, skill_files
from hermes_agent.skills.guard import ScanReport, decide, scan_skill
from hermes_agent.skills.hub.core import InstallResult, SkillsHub, verdict
from hermes_agent.skills.hub.model import HubError, SkillBundle, SourceError
from hermes_agent.skills.hub.router import need
from hermes_agent.skills.hub.store import dir_hash, now_iso, quarantine

SNAPSHOT_VERSION = "hermes-agent-1"


@dataclass(frozen=True, slots=True)
class UpdateResult:
    """One skill's update: status is up_to_date, updated, refused, modified or unavailable."""

    name: str
    status: str
    message: str
    changes: tuple[str, ...] = ()
    report: ScanReport | None = None


def diff_summary(old_dir: Path, new_files: dict[str, bytes]) -> list[str]:
    """'added x', 'removed y', 'changed z (+3 -1)' lines between an installed skill and a new bundle."""
    old = {rel: (old_dir / rel).read_bytes() for rel in skill_files(old_dir)}
    out = [f"added {p}" for p in sorted(set(new_files) - set(old))]
    out += [f"removed {p}" for p in sorted(set(old) - set(new_files))]
    for p in sorted(set(old) & set(new_files)):
        if old[p] == new_files[p]:
            continue
        a = old[p].decode("utf-8", "replace").splitlines()
        b = new_files[p].decode("utf-8", "replace").splitlines()
        diff = list(difflib.unified_diff(a, b, lineterm="", n=0))
        plus = sum(1 for d in diff if d.startswith("+") and not d.startswith("+++"))
        minus = sum(1 for d in diff if d.startswith("-") and not d.startswith("---"))
        out.append(f"changed {p} (+{plus} -{minus})")
    return out


def update(hub: SkillsHub, name: str | None = None, *, force: bool = False) -> list[UpdateResult]:
    """Re-fetch hub skills from their sources; install a new version only when its scan passes."""
    lock = hub.lock()
    if name is not None and name not in lock:
        raise HubError(f"{name!r} was not installed from the hub (nothing to update)")
    return [_update_one(hub, n, lock[n], force) for n in ([name] if name else sorted(lock))]


def _update_one(hub: SkillsHub, name: str, entry: dict, force: bool) -> UpdateResult:
    installed = hub.skills_dir / entry.get("install_path", name)
    try:
        bundle = need(hub.sources, entry["source"]).fetch(entry["identifier"])
    except (SourceError, KeyError) as exc:
        return UpdateResult(name, "unavailable", f"cannot re-fetch: {exc}")
    if bundle.content_hash() == entry.get("content_hash") and installed.is_dir():
        return UpdateResult(name, "up_to_date", "already the newest version")
    if installed.is_dir() and dir_hash(installed) != entry.get("content_hash") and not force:
        return UpdateResult(name, "modified", "edited locally since install; --force replaces your edits")
    changes = tuple(diff_summary(installed, bundle.files)) if installed.is_dir() else ("reinstalled",)
    report = _scan(hub, bundle)
    decision = decide(report, bundle.trust_level)
    if not decision.allowed:
        hub.audit_log.append("UPDATE_BLOCKED", name, bundle.source, bundle.trust_level, verdict(report),
                             bundle.content_hash())
        return UpdateResult(name, "refused", f"new version refused, kept the installed one: {decision.reason}",
                            changes, report)
    category = Path(entry.get("install_path", name)).parent.as_posix()
    result = hub.install_bundle(bundle, category=None if category in ("", ".") else category, replace=True)
    hub.audit_log.append("UPDATE", name, bundle.source, bundle.trust_level, result.verdict, bundle.content_hash())
    return UpdateResult(name, "updated", f"updated ({decision.reason})", changes, result.report)


def _scan(hub: SkillsHub, bundle: SkillBundle) -> ScanReport:
    import shutil

    qdir = quarantine(hub.skills_dir, bundle)
    try:
        return scan_skill(qdir)
    finally:
        shutil.rmtree(qdir, ignore_errors=True)


def snapshot_export(hub: SkillsHub, out: Path | None = None) -> dict:
    """The hub-installed skills with provenance, and the taps; written as JSON to `out` if given."""
    rows = []
    for name, e in sorted(hub.lock().items()):
        parent = Path(e.get("install_path", name)).parent.as_posix()
        rows.append({"name": name, "source": e.get("source", ""), "identifier": e.get("identifier", ""),
                     "category": "" if parent in ("", ".") else parent, "trust_level": e.get("trust_level"),
                     "content_hash": e.get("content_hash"), "scan_verdict": e.get("scan_verdict"),
                     "revision": (e.get("metadata") or {}).get("source_revision", ""),
                     "installed_at": e.get("installed_at")})
    taps = [{"name": t.name, "url": t.url, "trust": t.trust} for t in hub.taps.list()]
    data = {"hermes_version": SNAPSHOT_VERSION, "exported_at": now_iso(), "skills": rows, "taps": taps}
    if out is not None:
        atomic_write(Path(out), json.dumps(data, indent=2, ensure_ascii=False) + "\n")
    return data


def snapshot_import(hub: SkillsHub, path: Path, *, force: bool = False) -> list[tuple[dict, InstallResult | str]]:
    """Restore taps, then re-install every skill row from its source (each through the full pipeline)."""
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except ValueError as exc:
        raise HubError(f"{path} is not a JSON snapshot: {exc}") from exc
    known = {t.name for t in hub.taps.list()}
    for tap in data.get("taps") or []:
        if isinstance(tap, dict) and tap.get("url") and tap.get("name") not in known:
            hub.taps.add(tap["url"], name=tap.get("name"), trusted=tap.get("trust") == "trusted")
    results: list[tuple[dict, InstallResult | str]] = []
    for row in data.get("skills") or []:
        if not isinstance(row, dict) or not row.get("identifier") or not row.get("source"):
            results.append((row, "skipped: no source/identifier"))
            continue
        try:
            res = hub.install(f"{row['source']}:{row['identifier']}", force=force, category=row.get("category") or None)
        except HubError as exc:
            results.append((row, f"failed: {exc}"))
            continue
        results.append((row, res))
    return results
