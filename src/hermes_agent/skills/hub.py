"""Skills hub: search taps, install (guard first), inspect, list, audit, uninstall, publish, snapshot.

skills/.hub/lock.json records, per hub-installed skill, its source, tap commit and content hash;
skills/.hub/audit.log is an append-only JSON-lines record of installs and removals."""

from __future__ import annotations

import json
import re
import shutil
import time
from dataclasses import dataclass
from pathlib import Path

from hermes_agent.skills.bundled import read_manifest
from hermes_agent.skills.catalog import SKILL_FILE, SkillCatalog, SkillInfo
from hermes_agent.skills.frontmatter import name_problem
from hermes_agent.skills.fsutil import atomic_write, content_hash, copy_skill, is_within, skill_files
from hermes_agent.skills.guard import Decision, ScanReport, decide, scan_skill
from hermes_agent.skills.taps import HUB_DIR, HubError, TapSkill, TapStore, git_head, read_tap_skill, run_git

LOCK_VERSION = 1


@dataclass(frozen=True, slots=True)
class InstallResult:
    """Outcome of an install: refused installs carry the decision and findings."""

    name: str
    installed: bool
    decision: Decision
    report: ScanReport
    path: Path | None = None
    source: str = ""
    commit: str | None = None


@dataclass(frozen=True, slots=True)
class InstalledSkill:
    """A skill in the skills dir and where it came from (hub:<tap>, bundled, local, external)."""

    info: SkillInfo
    source: str
    modified: bool | None = None


class SkillsHub:
    """Hub operations on one skills dir."""

    def __init__(self, skills_dir: Path, *, external_dirs: tuple[Path, ...] = ()) -> None:
        self.skills_dir = Path(skills_dir)
        self.external_dirs = external_dirs
        self.taps = TapStore(self.skills_dir)
        self.lock_file = self.skills_dir / HUB_DIR / "lock.json"

    def lock(self) -> dict[str, dict]:
        """name -> lock entry."""
        try:
            data = json.loads(self.lock_file.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return {}
        return dict(data.get("skills", {}))

    def _save_lock(self, entries: dict[str, dict]) -> None:
        atomic_write(self.lock_file, json.dumps({"version": LOCK_VERSION, "skills": entries}, indent=2,
                                                sort_keys=True))

    def _log(self, event: str, **fields: object) -> None:
        log_file = self.skills_dir / HUB_DIR / "audit.log"
        log_file.parent.mkdir(parents=True, exist_ok=True)
        with open(log_file, "a", encoding="utf-8") as fh:
            fh.write(json.dumps({"ts": time.strftime("%Y-%m-%dT%H:%M:%S"), "event": event, **fields}) + "\n")

    def search(self, query: str = "") -> list[TapSkill]:
        """Skills in every tap whose name, description or tags contain `query` (all when empty)."""
        q = query.lower().strip()
        hits: list[TapSkill] = []
        for tap in self.taps.list():
            for s in self.taps.skills(tap):
                hay = " ".join((s.name, s.description, *s.tags)).lower()
                if not q or all(word in hay for word in q.split()):
                    hits.append(s)
        return hits

    def resolve(self, src: str) -> TapSkill:
        """A skill from `tap/name`, a bare name found in exactly one tap, or a local skill directory."""
        path = Path(src).expanduser()
        if (path / SKILL_FILE).is_file():
            return read_tap_skill(path.resolve(), path.resolve().parent)
        tap_name, _, name = src.rpartition("/")
        candidates = []
        for tap in self.taps.list():
            if tap_name and tap_name not in (tap.name, tap.url):
                continue
            candidates += [s for s in self.taps.skills(tap) if s.name == name]
        if not candidates:
            raise HubError(f"no skill {src!r} in any tap (try `hermes skills search {name}`)")
        if len(candidates) > 1:
            raise HubError(f"{name!r} is in several taps: {', '.join(c.ref for c in candidates)}; say which")
        return candidates[0]

    def install(self, src: str, *, force: bool = False, category: str | None = None) -> InstallResult:
        """Guard-scan then copy a skill into skills/<category>/<name>; refused installs change nothing."""
        entry = self.resolve(src)
        if (p := name_problem(entry.name)) is not None:
            raise HubError(f"cannot install {src!r}: {p}")
        trust = entry.tap.trust if entry.tap else "community"
        report = scan_skill(entry.path)
        decision = decide(report, trust, force=force)
        if not decision.allowed:
            self._log("refused", name=entry.name, source=entry.ref, findings=report.summary())
            return InstallResult(entry.name, False, decision, report, source=entry.ref)
        dest = self._install_dest(entry, category)
        copy_skill(entry.path, dest)
        commit = git_head(self.taps.root(entry.tap)) if entry.tap else git_head(entry.path)
        lock = self.lock()
        lock[entry.name] = {
            "source": entry.tap.url if entry.tap else str(entry.path), "tap": entry.tap.name if entry.tap else None,
            "path": _rel_in_tap(entry, self.taps), "category": dest.parent.name if dest.parent != self.skills_dir
            else None, "commit": commit, "content_hash": content_hash(dest), "trust": trust,
            "installed_at": time.strftime("%Y-%m-%dT%H:%M:%S"), "forced": bool(decision.blocking)}
        self._save_lock(lock)
        self._log("install", name=entry.name, source=entry.ref, commit=commit, findings=report.summary(),
                  forced=bool(decision.blocking))
        return InstallResult(entry.name, True, decision, report, dest, entry.ref, commit)

    def _install_dest(self, entry: TapSkill, category: str | None) -> Path:
        cat = category or re.sub(r"[^a-z0-9._-]+", "-", (entry.category or "general").lower()).strip("-.")
        if (p := name_problem(cat)) is not None:
            raise HubError(f"invalid category {cat!r}: {p}")
        existing = SkillCatalog([self.skills_dir, *self.external_dirs]).get(entry.name)
        if existing is None:
            return self.skills_dir / cat / entry.name
        locked = self.lock().get(entry.name)
        same_source = locked and entry.tap and locked.get("tap") == entry.tap.name
        if same_source and is_within(existing.dir, self.skills_dir) \
                and content_hash(existing.dir) == locked.get("content_hash"):
            return existing.dir
        raise HubError(f"skill {entry.name!r} is already installed at {existing.dir}; uninstall it first")

    def installed(self) -> list[InstalledSkill]:
        """Every skill the agent sees, with its source and (for hub skills) whether it was edited."""
        lock, bundled = self.lock(), read_manifest(self.skills_dir)
        out: list[InstalledSkill] = []
        for info in SkillCatalog([self.skills_dir, *self.external_dirs]).all():
            if not is_within(info.path, self.skills_dir):
                out.append(InstalledSkill(info, "external"))
            elif info.name in lock:
                entry = lock[info.name]
                modified = content_hash(info.dir) != entry.get("content_hash")
                out.append(InstalledSkill(info, f"hub:{entry.get('tap') or entry.get('source')}", modified))
            else:
                out.append(InstalledSkill(info, "bundled" if info.name in bundled else "local"))
        return out

    def inspect(self, name: str) -> dict:
        """Frontmatter, files, guard findings and provenance of an installed or tap skill."""
        installed = next((s for s in self.installed() if s.info.name == name), None)
        if installed is not None:
            skill_dir, source, meta = installed.info.dir, installed.source, dict(installed.info.meta)
            trust = "builtin" if source == "bundled" else self.lock().get(name, {}).get("trust", "community")
        else:
            entry = self.resolve(name)
            skill_dir, source = entry.path, f"tap:{entry.ref}"
            meta = {"name": entry.name, "description": entry.description, "category": entry.category}
            trust = entry.tap.trust if entry.tap else "community"
        report = scan_skill(skill_dir)
        return {"name": name, "source": source, "path": str(skill_dir), "trust": trust, "meta": meta,
                "files": skill_files(skill_dir), "scan": report.summary(),
                "findings": [f.as_dict() for f in report.findings],
                "decision": decide(report, trust).reason, "lock": self.lock().get(name)}

    def audit(self) -> list[tuple[InstalledSkill, ScanReport]]:
        """Re-scan every installed skill (external dirs included)."""
        return [(s, scan_skill(s.info.dir)) for s in self.installed()]

    def uninstall(self, name: str) -> Path:
        """Delete a skill from the skills dir and drop its lock entry."""
        info = SkillCatalog([self.skills_dir]).get(name)
        if info is None:
            raise HubError(f"skill {name!r} is not installed in {self.skills_dir}")
        shutil.rmtree(info.dir)
        parent = info.dir.parent
        if parent != self.skills_dir and parent.is_dir() and not any(parent.iterdir()):
            parent.rmdir()
        lock = self.lock()
        if lock.pop(name, None) is not None:
            self._save_lock(lock)
        self._log("uninstall", name=name)
        return info.dir

    def publish(self, name: str, to: str, *, force: bool = False) -> dict:
        """Copy a local skill into a tap directory (a tap name or a path) and commit when it is a git repo."""
        info = SkillCatalog([self.skills_dir, *self.external_dirs]).get(name)
        if info is None:
            raise HubError(f"skill {name!r} not found")
        decision = decide(scan_skill(info.dir), "trusted", force=force)
        if not decision.allowed:
            raise HubError(f"refusing to publish {name!r}: {decision.reason}")
        root = _publish_root(self.taps, to)
        base = root / "skills" if (root / "skills").is_dir() else root
        dest = base / (info.category or "general") / name
        copy_skill(info.dir, dest)
        commit = None
        if (root / ".git").exists():
            rel = dest.relative_to(root).as_posix()
            run_git(["add", "--", rel], cwd=root)
            ident = [] if _has_git_identity(root) else ["-c", "user.name=hermes", "-c", "user.email=hermes@localhost"]
            run_git([*ident, "commit", "--quiet", "-m", f"Publish skill {name}", "--", rel], cwd=root)
            commit = git_head(root)
        self._log("publish", name=name, to=str(root), commit=commit)
        return {"name": name, "path": str(dest), "commit": commit}

    def snapshot(self, out: Path | None = None) -> dict:
        """The installed skills (name, category, source, version, hashes); written as JSON to `out` if given."""
        lock = self.lock()
        rows = [{"name": s.info.name, "category": s.info.category, "source": s.source, "version": s.info.version,
                 "content_hash": content_hash(s.info.dir), "commit": lock.get(s.info.name, {}).get("commit")}
                for s in self.installed()]
        data = {"created": time.strftime("%Y-%m-%dT%H:%M:%S"), "skills": rows}
        if out is not None:
            atomic_write(Path(out), json.dumps(data, indent=2))
        return data


def _rel_in_tap(entry: TapSkill, taps: TapStore) -> str | None:
    if entry.tap is None:
        return None
    try:
        return entry.path.relative_to(taps.root(entry.tap)).as_posix()
    except ValueError:
        return None


def _publish_root(taps: TapStore, to: str) -> Path:
    try:
        return taps.root(taps.get(to))
    except HubError:
        path = Path(to).expanduser()
        if path.is_dir():
            return path
        raise HubError(f"{to!r} is neither a configured tap nor an existing directory") from None


def _has_git_identity(root: Path) -> bool:
    try:
        return bool(run_git(["config", "user.email"], cwd=root))
    except HubError:
        return False


__all__ = ["HubError", "InstallResult", "InstalledSkill", "SkillsHub"]
