"""Skill taps: any git URL (cloned with the git CLI into skills/.hub/cache/) or a local directory.

State lives in skills/.hub/taps.json. A local path or file:// tap is read in place (offline); a
bare repository path is cloned like a remote. Nothing here touches the network until a remote tap
is added or updated by the user."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from dataclasses import asdict, dataclass
from pathlib import Path
from urllib.parse import unquote, urlparse

from hermes_agent.skills.catalog import SKILL_FILE, parse_record
from hermes_agent.skills.fsutil import atomic_write
from hermes_agent.skills.guard import trust_for_source

HUB_DIR = ".hub"
_GIT_TIMEOUT = 120
_MAX_DEPTH = 4
_SKIP_DIRS = frozenset({".git", "node_modules", "__pycache__", ".hub", ".proposals", ".cache"})


class HubError(RuntimeError):
    """A hub operation failed; the message is one line for the user."""


@dataclass(frozen=True, slots=True)
class Tap:
    """A source of skills."""

    name: str
    url: str
    trust: str = "community"

    @property
    def local_path(self) -> Path | None:
        """The directory for a plain path or file:// URL, else None."""
        if self.url.startswith("file://"):
            return Path(unquote(urlparse(self.url).path))
        if "://" in self.url or re.match(r"^[\w.-]+@[\w.-]+:", self.url):
            return None
        return Path(self.url).expanduser()


@dataclass(frozen=True, slots=True)
class TapSkill:
    """A skill found inside a tap."""

    tap: Tap | None
    name: str
    description: str
    category: str | None
    path: Path
    tags: tuple[str, ...] = ()

    @property
    def ref(self) -> str:
        return f"{self.tap.name}/{self.name}" if self.tap else str(self.path)


def run_git(args: list[str], cwd: Path | None = None) -> str:
    """Run git non-interactively; HubError with git's last stderr line on failure."""
    from hermes_agent.gitsafe import run_git as safe_git

    try:  # the user's own git settings (proxy, credentials) apply; nothing of the cloned repository runs
        proc = safe_git(args, cwd=cwd, user_config=True, timeout=_GIT_TIMEOUT)
    except FileNotFoundError as exc:
        raise HubError("git is not installed; install git to use git taps") from exc
    except subprocess.TimeoutExpired as exc:
        raise HubError(f"git {args[0]} timed out after {_GIT_TIMEOUT}s") from exc
    if proc.returncode != 0:
        lines = [ln for ln in proc.stderr.strip().splitlines() if ln.strip()]
        raise HubError(f"git {args[0]} failed: {lines[-1] if lines else 'exit ' + str(proc.returncode)}")
    return proc.stdout.strip()


def git_head(path: Path) -> str | None:
    """Commit checked out at `path` when it is inside a git work tree, else None."""
    if not (path / ".git").exists():
        return None
    try:
        return run_git(["rev-parse", "HEAD"], cwd=path)
    except HubError:
        return None


def _is_bare_repo(path: Path) -> bool:
    return (path / "HEAD").is_file() and (path / "objects").is_dir() and not (path / ".git").exists()


def tap_name_for(url: str) -> str:
    """A short name: owner/repo for hosted git URLs, the directory name for local paths."""
    text = url.rstrip("/").removesuffix(".git")
    text = re.sub(r"^[\w.-]+@([\w.-]+):", r"ssh://\1/", text)
    parsed = urlparse(text)
    parts = [p for p in (parsed.path if parsed.scheme else text).split("/") if p]
    if parsed.scheme in ("http", "https", "ssh", "git") and len(parts) >= 2:
        return f"{parts[-2]}/{parts[-1]}"
    return parts[-1] if parts else "tap"


class TapStore:
    """The configured taps of one skills dir, and their working copies."""

    def __init__(self, skills_dir: Path) -> None:
        self.hub = Path(skills_dir) / HUB_DIR
        self.file = self.hub / "taps.json"

    def list(self) -> list[Tap]:
        """Configured taps in the order they were added."""
        try:
            data = json.loads(self.file.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return []
        return [Tap(t["name"], t["url"], t.get("trust", "community")) for t in data.get("taps", [])]

    def get(self, name_or_url: str) -> Tap:
        """The tap with this name or URL."""
        for tap in self.list():
            if name_or_url in (tap.name, tap.url):
                return tap
        raise HubError(f"no tap {name_or_url!r}; `hermes skills tap list` shows the configured taps")

    def add(self, url: str, *, name: str | None = None, trusted: bool = False) -> Tap:
        """Register a tap (cloning a remote one now) and return it."""
        local = Tap("probe", url).local_path
        if local is not None:
            if not local.is_dir():
                raise HubError(f"tap directory {local} does not exist")
            url = str(local.resolve()) if not url.startswith("file://") else url
        tap = Tap(name or tap_name_for(url), url, "trusted" if trusted else trust_for_source(url))
        if any(t.name == tap.name or t.url == tap.url for t in self.list()):
            raise HubError(f"tap {tap.name!r} is already configured")
        self.root(tap)
        self._save([*self.list(), tap])
        return tap

    def remove(self, name_or_url: str) -> Tap:
        """Forget a tap and delete its cached clone."""
        tap = self.get(name_or_url)
        self._save([t for t in self.list() if t.name != tap.name])
        shutil.rmtree(self._cache_dir(tap), ignore_errors=True)
        return tap

    def update(self, tap: Tap) -> str | None:
        """Refresh a cloned tap to the remote's newest commit; returns the commit."""
        cache = self._cache_dir(tap)
        if not (cache / ".git").exists():
            return git_head(self.root(tap))
        run_git(["fetch", "--depth", "1", "origin"], cwd=cache)
        run_git(["reset", "--hard", "FETCH_HEAD"], cwd=cache)
        return git_head(cache)

    def root(self, tap: Tap) -> Path:
        """Directory holding the tap's files (cloning a remote or bare tap on first use)."""
        local = tap.local_path
        if local is not None and not _is_bare_repo(local):
            return local
        cache = self._cache_dir(tap)
        if not (cache / ".git").exists():
            shutil.rmtree(cache, ignore_errors=True)
            cache.parent.mkdir(parents=True, exist_ok=True)
            source = str(local) if local is not None else tap.url
            run_git(["-c", "protocol.ext.allow=never", "clone", "--depth", "1", "--quiet", "--", source, str(cache)])
        return cache

    def skills(self, tap: Tap) -> list[TapSkill]:
        """Every skill inside a tap."""
        return find_skills(self.root(tap), tap)

    def _cache_dir(self, tap: Tap) -> Path:
        return self.hub / "cache" / re.sub(r"[^\w.-]+", "_", tap.name)

    def _save(self, taps: list[Tap]) -> None:
        atomic_write(self.file, json.dumps({"taps": [asdict(t) for t in taps]}, indent=2))


def find_skills(root: Path, tap: Tap | None = None) -> list[TapSkill]:
    """Skills (directories with SKILL.md) under `root`, at most a few levels deep."""
    out: list[TapSkill] = []
    _walk(root, root, 0, tap, out)
    return sorted(out, key=lambda s: (s.category or "", s.name))


def _walk(root: Path, directory: Path, depth: int, tap: Tap | None, out: list[TapSkill]) -> None:
    if (directory / SKILL_FILE).is_file():
        out.append(read_tap_skill(directory, root, tap))
        return
    if depth >= _MAX_DEPTH:
        return
    try:
        children = sorted(p for p in directory.iterdir() if p.is_dir() and not p.is_symlink())
    except OSError:
        return
    for child in children:
        if child.name not in _SKIP_DIRS and not child.name.startswith("."):
            _walk(root, child, depth + 1, tap, out)


def read_tap_skill(skill_dir: Path, root: Path | None = None, tap: Tap | None = None) -> TapSkill:
    """Describe one skill directory from its frontmatter (name falls back to the directory name)."""
    meta = parse_record(skill_dir / SKILL_FILE).get("meta") or {}
    hermes = (meta.get("metadata") or {}).get("hermes") if isinstance(meta.get("metadata"), dict) else None
    hermes = hermes if isinstance(hermes, dict) else {}
    category = hermes.get("category") if isinstance(hermes.get("category"), str) else None
    parent = skill_dir.parent
    if category is None and root is not None and parent != root and parent.name not in ("skills", "optional-skills"):
        category = parent.name
    name = meta.get("name") if isinstance(meta.get("name"), str) else skill_dir.name
    tags = [t for v in (meta.get("tags"), hermes.get("tags")) if isinstance(v, list) for t in v if isinstance(t, str)]
    desc = meta.get("description") if isinstance(meta.get("description"), str) else ""
    return TapSkill(tap, name, desc, category, skill_dir, tuple(tags))
