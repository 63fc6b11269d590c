"""Hub state under skills/.hub/, in Hermes's formats: lock.json, audit.log, quarantine/, index-cache/.

lock.json: {"version": 1, "installed": {name: {source, identifier, trust_level, scan_verdict,
content_hash, install_path, files, metadata, installed_at, updated_at, ...}}}. audit.log: one line
per event, `<UTC time> <ACTION> <name> <source>:<trust> <verdict> [extra]`, append-only."""

from __future__ import annotations

import json
import time
from datetime import UTC, datetime
from pathlib import Path

from hermes_agent.skills.fsutil import atomic_write, skill_files
from hermes_agent.skills.hub.model import SkillBundle, safe_rel_path

HUB_DIR = ".hub"
LOCK_VERSION = 1
CACHE_TTL = 3600.0


def now_iso() -> str:
    return datetime.now(UTC).isoformat()


def dir_hash(skill_dir: Path) -> str:
    """Hermes's content hash of an installed skill: equal to SkillBundle.content_hash of the same files."""
    import hashlib

    h = hashlib.sha256()
    for rel in skill_files(skill_dir):
        h.update(rel.encode("utf-8") + b"\x00")
        h.update((skill_dir / rel).read_bytes())
    return f"sha256:{h.hexdigest()[:16]}"


class LockFile:
    """skills/.hub/lock.json (reads our older {"skills": ...} layout too)."""

    def __init__(self, skills_dir: Path) -> None:
        self.path = Path(skills_dir) / HUB_DIR / "lock.json"

    def load(self) -> dict[str, dict]:
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return {}
        if not isinstance(data, dict):
            return {}
        if isinstance(data.get("installed"), dict):
            return dict(data["installed"])
        return {n: _from_old(n, e) for n, e in (data.get("skills") or {}).items() if isinstance(e, dict)}

    def save(self, entries: dict[str, dict]) -> None:
        atomic_write(self.path, json.dumps({"version": LOCK_VERSION, "installed": entries}, indent=2,
                                           ensure_ascii=False) + "\n")

    def put(self, name: str, entry: dict) -> None:
        entries = self.load()
        entries[name] = entry
        self.save(entries)

    def drop(self, name: str) -> dict | None:
        entries = self.load()
        gone = entries.pop(name, None)
        if gone is not None:
            self.save(entries)
        return gone


def _from_old(name: str, e: dict) -> dict:
    cat = e.get("category")
    return {"source": "tap", "identifier": f"{e.get('tap')}/{name}" if e.get("tap") else str(e.get("source")),
            "trust_level": e.get("trust", "community"), "scan_verdict": "forced" if e.get("forced") else "safe",
            "content_hash": e.get("content_hash", ""), "install_path": f"{cat}/{name}" if cat else name,
            "files": [], "metadata": {"source_revision": e.get("commit") or "", "source_url": e.get("source", "")},
            "installed_at": e.get("installed_at", ""), "updated_at": e.get("installed_at", "")}


class AuditLog:
    """skills/.hub/audit.log, appended one line per install, refusal, update and removal."""

    def __init__(self, skills_dir: Path) -> None:
        self.path = Path(skills_dir) / HUB_DIR / "audit.log"

    def append(self, action: str, name: str, source: str, trust: str, verdict: str, extra: str = "") -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        stamp = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
        parts = [stamp, action.upper(), name, f"{source}:{trust}", verdict, *([extra] if extra else [])]
        with open(self.path, "a", encoding="utf-8") as fh:
            fh.write(" ".join(parts) + "\n")


def quarantine(skills_dir: Path, bundle: SkillBundle) -> Path:
    """Write a bundle into skills/.hub/quarantine/<name>-<time>/ for scanning (paths re-checked)."""
    root = Path(skills_dir) / HUB_DIR / "quarantine"
    dest = root / f"{safe_rel_path(bundle.name).replace('/', '_')}-{time.time_ns()}"
    dest.mkdir(parents=True)
    for rel, data in bundle.files.items():
        target = dest.joinpath(*safe_rel_path(rel).split("/"))
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)
    return dest


class IndexCache:
    """skills/.hub/index-cache/<key>.json with a one-hour lifetime (search listings only)."""

    def __init__(self, skills_dir: Path, ttl: float = CACHE_TTL) -> None:
        self.dir = Path(skills_dir) / HUB_DIR / "index-cache"
        self.ttl = ttl

    def _file(self, key: str) -> Path:
        import hashlib

        return self.dir / f"{hashlib.sha256(key.encode('utf-8')).hexdigest()[:24]}.json"

    def get(self, key: str) -> object:
        path = self._file(key)
        try:
            if time.time() - path.stat().st_mtime > self.ttl:
                return None
            return json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None

    def put(self, key: str, value: object) -> None:
        try:
            atomic_write(self._file(key), json.dumps(value))
            ignore = self.dir.parent / ".ignore"
            if not ignore.exists():
                ignore.write_text("# hub internals: unvetted community text\n*\n", encoding="utf-8")
        except OSError:
            pass
