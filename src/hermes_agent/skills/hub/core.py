"""SkillsHub: search every source, install through quarantine + guard scan + trust table, list,
inspect, audit and uninstall. Update, snapshots and publishing live in lifecycle.py and publish.py.

Install pipeline: fetch -> skills/.hub/quarantine/ -> scan_skill -> decide(report, trust) -> move into
skills/<category>/<name> -> lock.json entry + audit.log line. A refused bundle never leaves quarantine."""

from __future__ import annotations

import os
import re
import shutil
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from hermes_agent.skills.bundled import bundled_dir, hidden_bundled, read_manifest
from hermes_agent.skills.catalog import SkillCatalog, SkillInfo, skill_roots
from hermes_agent.skills.frontmatter import name_problem
from hermes_agent.skills.fsutil import is_within, skill_files
from hermes_agent.skills.guard import Decision, ScanReport, decide, scan_skill
from hermes_agent.skills.hub.model import HubError, SkillBundle, SkillMeta, SkillSource, frontmatter_meta
from hermes_agent.skills.hub.router import HubConfig, SourceResult, build_sources, need, route, search_all
from hermes_agent.skills.hub.store import AuditLog, LockFile, dir_hash, now_iso, quarantine
from hermes_agent.skills.taps import TapStore


def verdict(report: ScanReport) -> str:
    """Hermes's scan verdict: dangerous (critical), caution (high), else safe."""
    worst = report.max_severity
    return "dangerous" if worst == "critical" else "caution" if worst == "high" else "safe"


@dataclass(frozen=True, slots=True)
class InstallResult:
    """Outcome of an install: refused installs carry the decision and findings."""

    name: str
    installed: bool
    decision: Decision
    report: ScanReport
    path: Path | None = None
    source: str = ""
    trust: str = "community"
    commit: str | None = None

    @property
    def verdict(self) -> str:
        return verdict(self.report)


@dataclass(frozen=True, slots=True)
class InstalledSkill:
    """A skill in the skills dir and where it came from (hub:<source>, bundled, local, external)."""

    info: SkillInfo
    source: str
    modified: bool | None = None


class SkillsHub:
    """Hub operations on one skills dir."""

    def __init__(self, skills_dir: Path, *, external_dirs: tuple[Path, ...] = (),
                 config: HubConfig | None = None) -> None:
        self.skills_dir = Path(skills_dir)
        self.external_dirs = external_dirs
        self.config = config or HubConfig()
        self.taps = TapStore(self.skills_dir)
        self.lockfile = LockFile(self.skills_dir)
        self.audit_log = AuditLog(self.skills_dir)
        self._sources: dict[str, SkillSource] | None = None

    @property
    def sources(self) -> dict[str, SkillSource]:
        if self._sources is None:
            self._sources = build_sources(self.skills_dir, self.config)
        return self._sources

    def lock(self) -> dict[str, dict]:
        """name -> lock entry (Hermes's lock.json `installed` map)."""
        return self.lockfile.load()

    def search(self, query: str = "", *, limit: int = 20,
               on_result: Callable[[SourceResult], None] | None = None) -> list[SourceResult]:
        """Search all sources concurrently, each bounded by skills.hub.timeout."""
        return search_all(self.sources, query, timeout=self.config.timeout, limit=limit, on_result=on_result)

    def resolve(self, ref: str) -> tuple[SkillSource, str]:
        """(source, identifier) for an install reference; a bare name is looked up in taps, then searched."""
        sid, ident = route(ref, self.sources)
        if sid != "tap":
            return need(self.sources, sid), ident
        taps = self.sources.get("tap")
        if taps is not None and taps.find(ident):  # type: ignore[attr-defined]
            return taps, ident
        if "/" in ident:
            raise HubError(f"no skill {ref!r} in any tap (try `hermes skills search {ident.rsplit('/', 1)[-1]}`)")
        exact = self._exact(ident)
        if not exact:
            raise HubError(f"no skill named {ident!r} in any tap or source (`hermes skills search {ident}`)")
        if len(exact) > 1:
            raise HubError(f"{ident!r} is offered by several sources: {', '.join(m.ref for m in exact)}; "
                           "install one as source:identifier")
        return need(self.sources, exact[0].source), exact[0].identifier

    def _exact(self, name: str) -> list[SkillMeta]:
        hits = [h for r in self.search(name) for h in r.hits if h.name == name]
        return list({h.ref: h for h in hits}.values())

    def install(self, ref: str, *, force: bool = False, category: str | None = None) -> InstallResult:
        """Fetch, quarantine, scan and (when the trust table allows) install one skill."""
        source, ident = self.resolve(ref)
        return self.install_bundle(source.fetch(ident), force=force, category=category)

    def install_bundle(self, bundle: SkillBundle, *, force: bool = False, category: str | None = None,
                       replace: bool = False) -> InstallResult:
        """The quarantine -> scan -> move -> lock pipeline for an already fetched bundle."""
        if (p := name_problem(bundle.name)) is not None:
            raise HubError(f"cannot install {bundle.identifier!r}: {p}")
        dest = self._install_dest(bundle, category, replace)
        qdir = quarantine(self.skills_dir, bundle)
        try:
            report = scan_skill(qdir)
            decision = decide(report, bundle.trust_level, force=force)
            if not decision.allowed:
                self.audit_log.append("BLOCKED", bundle.name, bundle.source, bundle.trust_level, verdict(report),
                                      report.summary().replace(" ", "_"))
                return InstallResult(bundle.name, False, decision, report, source=bundle.ref_str,
                                     trust=bundle.trust_level)
            self._move_in(qdir, dest)
        finally:
            shutil.rmtree(qdir, ignore_errors=True)
        self._record(bundle, dest, report, decision)
        return InstallResult(bundle.name, True, decision, report, dest, bundle.ref_str, bundle.trust_level,
                             bundle.revision or None)

    def _move_in(self, qdir: Path, dest: Path) -> None:
        dest.parent.mkdir(parents=True, exist_ok=True)
        if dest.exists():
            shutil.rmtree(dest)
        try:
            os.replace(qdir, dest)
        except OSError:
            shutil.copytree(qdir, dest)

    def _record(self, bundle: SkillBundle, dest: Path, report: ScanReport, decision: Decision) -> None:
        old = self.lock().get(bundle.name) or {}
        stamp = now_iso()
        entry = {
            "source": bundle.source, "identifier": bundle.identifier, "trust_level": bundle.trust_level,
            "scan_verdict": verdict(report), "content_hash": dir_hash(dest),
            "install_path": dest.relative_to(self.skills_dir).as_posix(), "files": skill_files(dest),
            "metadata": {**bundle.metadata, "source_revision": bundle.revision},
            "scan_provenance": {"scanner": "hermes-agent-guard", "findings": report.summary(),
                                "forced": bool(decision.blocking)},
            "installed_at": old.get("installed_at", stamp) if old.get("identifier") == bundle.identifier else stamp,
            "updated_at": stamp}
        self.lockfile.put(bundle.name, entry)
        self.audit_log.append("INSTALL", bundle.name, bundle.source, bundle.trust_level, verdict(report),
                              entry["content_hash"])

    def _install_dest(self, bundle: SkillBundle, category: str | None, replace: bool) -> Path:
        hermes = (frontmatter_meta(bundle.files["SKILL.md"].decode("utf-8", "replace")).get("metadata") or {})
        hermes = hermes.get("hermes") if isinstance(hermes, dict) else None
        guess = (hermes or {}).get("category") if isinstance(hermes, dict) else None
        cat = category or bundle.metadata.get("category") or (guess if isinstance(guess, str) else None) or "general"
        cat = re.sub(r"[^a-z0-9._-]+", "-", cat.lower()).strip("-.")
        if (p := name_problem(cat)) is not None:
            raise HubError(f"invalid category {cat!r}: {p}")
        existing = self.catalog().get(bundle.name)
        if existing is None:
            return self.skills_dir / cat / bundle.name
        locked = self.lock().get(bundle.name) or {}
        same = locked.get("source") == bundle.source and locked.get("identifier") == bundle.identifier
        if is_within(existing.dir, self.skills_dir) and same and (
                replace or dir_hash(existing.dir) == locked.get("content_hash")):
            return existing.dir
        raise HubError(f"skill {bundle.name!r} is already installed at {existing.dir}; uninstall it first")

    def catalog(self) -> SkillCatalog:
        """Every skill the agent sees: the skills dir, external dirs, then ours that ship with hermes-agent."""
        return SkillCatalog(skill_roots(self.skills_dir, self.external_dirs), hidden=hidden_bundled(self.skills_dir))

    def installed(self) -> list[InstalledSkill]:
        """Every skill the agent sees, with its source and (for hub skills) whether it was edited."""
        lock, bundled = self.lock(), read_manifest(self.skills_dir)
        out: list[InstalledSkill] = []
        for info in self.catalog().all():
            if is_within(info.path, bundled_dir()):
                out.append(InstalledSkill(info, "bundled"))
            elif not is_within(info.path, self.skills_dir):
                out.append(InstalledSkill(info, "external"))
            elif info.name in lock:
                entry = lock[info.name]
                modified = dir_hash(info.dir) != entry.get("content_hash")
                out.append(InstalledSkill(info, f"hub:{_source_label(entry)}", modified))
            else:
                out.append(InstalledSkill(info, "bundled" if info.name in bundled else "local"))
        return out

    def inspect(self, name: str) -> dict:
        """Frontmatter, files, guard findings and provenance of an installed skill or a source's skill."""
        installed = next((s for s in self.installed() if s.info.name == name), None)
        if installed is not None:
            skill_dir, source, meta = installed.info.dir, installed.source, dict(installed.info.meta)
            trust = "builtin" if source == "bundled" else self.lock().get(name, {}).get("trust_level", "community")
            return self._inspect_dir(name, skill_dir, source, meta, trust)
        src, ident = self.resolve(name)
        bundle = src.fetch(ident)
        qdir = quarantine(self.skills_dir, bundle)
        try:
            meta = frontmatter_meta(bundle.files["SKILL.md"].decode("utf-8", "replace"))
            return self._inspect_dir(name, qdir, f"{bundle.source}:{bundle.identifier}", meta, bundle.trust_level)
        finally:
            shutil.rmtree(qdir, ignore_errors=True)

    def _inspect_dir(self, name: str, skill_dir: Path, source: str, meta: dict, trust: str) -> dict:
        report = scan_skill(skill_dir)
        return {"name": name, "source": source, "path": str(skill_dir), "trust": trust, "meta": meta,
                "files": skill_files(skill_dir), "scan": report.summary(), "verdict": verdict(report),
                "findings": [f.as_dict() for f in report.findings],
                "decision": decide(report, trust).reason, "lock": self.lock().get(name)}

    def audit(self) -> list[tuple[InstalledSkill, ScanReport]]:
        """Re-scan every installed skill (external dirs included)."""
        return [(s, scan_skill(s.info.dir)) for s in self.installed()]

    def uninstall(self, name: str) -> Path:
        """Delete a skill from the skills dir, drop its lock entry and log it."""
        info = SkillCatalog([self.skills_dir]).get(name)
        if info is None:
            raise HubError(f"skill {name!r} is not installed in {self.skills_dir}")
        shutil.rmtree(info.dir)
        parent = info.dir.parent
        if parent != self.skills_dir and parent.is_dir() and not any(parent.iterdir()):
            parent.rmdir()
        entry = self.lockfile.drop(name) or {}
        self.audit_log.append("UNINSTALL", name, entry.get("source", "local"), entry.get("trust_level", "-"), "n/a",
                              "user_request")
        return info.dir


def _source_label(entry: dict) -> str:
    if entry.get("source") == "tap":
        return str(entry.get("identifier", "")).rpartition("/")[0] or "tap"
    return str(entry.get("source"))
