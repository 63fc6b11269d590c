"""Which sources exist (from settings.skills.hub), concurrent search with a per-source deadline, and
routing an install reference (`source:id`, a URL, a path, owner/repo/path, tap/name) to one source.

Each source searches in its own daemon thread: a slow or hung source is reported as timed out at the
deadline and never delays the others or the process exit."""

from __future__ import annotations

import queue
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from hermes_agent.skills.catalog import SKILL_FILE
from hermes_agent.skills.guard import TRUSTED_REPOS
from hermes_agent.skills.hub.github import GitHubApi, GitHubAuth, GitHubSource
from hermes_agent.skills.hub.model import HubError, SkillMeta, SkillSource, SourceError
from hermes_agent.skills.hub.repo_sources import LocalSource, MarketplaceSource, SkillsShSource, TapSource
from hermes_agent.skills.hub.store import IndexCache
from hermes_agent.skills.hub.web import ClawHubSource, LobeHubSource, UrlSource, WellKnownSource
from hermes_agent.skills.taps import TapStore

_ALIASES = {"skills.sh": "skills-sh", "marketplace": "claude-marketplace", "official": "github"}


@dataclass(frozen=True, slots=True)
class HubConfig:
    """The `skills.hub` settings (see config/defaults.py for the defaults)."""

    timeout: float = 3.0
    github_api: str = "https://api.github.com"
    repos: tuple[str, ...] = ()
    marketplaces: tuple[str, ...] = ()
    well_known: tuple[str, ...] = ()
    trusted_repos: tuple[str, ...] = ()
    clawhub_url: str = "https://clawhub.ai/api/v1"
    lobehub_url: str = "https://chat-agents.lobehub.com"
    skills_sh_url: str = "https://skills.sh"
    disabled_sources: tuple[str, ...] = ()
    env: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class SourceResult:
    """What one source answered: hits, or the error/timeout, plus partial-failure warnings."""

    source: str
    hits: tuple[SkillMeta, ...] = ()
    error: str = ""
    warnings: tuple[str, ...] = ()
    seconds: float = 0.0


def build_sources(skills_dir: Path, cfg: HubConfig) -> dict[str, SkillSource]:
    """Every enabled source by id, in search order."""
    cache = IndexCache(skills_dir)
    trusted = frozenset(r.lower() for r in (*TRUSTED_REPOS, *cfg.trusted_repos))
    github = GitHubSource(GitHubApi(cfg.github_api, GitHubAuth(cfg.env), cfg.timeout), list(cfg.repos), trusted,
                          cache)
    market_github = GitHubSource(github.api, [], trusted, cache)
    skills_sh_github = GitHubSource(github.api, [], trusted, cache)
    all_sources: list[SkillSource] = [
        TapSource(TapStore(skills_dir)), github, WellKnownSource(list(cfg.well_known), cfg.timeout),
        SkillsShSource(cfg.skills_sh_url, skills_sh_github, cfg.timeout),
        ClawHubSource(cfg.clawhub_url, cfg.timeout),
        MarketplaceSource(list(cfg.marketplaces), market_github, cache),
        LobeHubSource(cfg.lobehub_url, cfg.timeout, cache), UrlSource(cfg.timeout), LocalSource(),
    ]
    off = {_ALIASES.get(s, s) for s in cfg.disabled_sources}
    return {s.source_id: s for s in all_sources if s.source_id not in off}


def search_all(sources: Mapping[str, SkillSource], query: str, *, timeout: float, limit: int = 20,
               on_result: Callable[[SourceResult], None] | None = None) -> list[SourceResult]:
    """Search every source concurrently; each gets `timeout` seconds. Results arrive as they finish."""
    done: queue.Queue[SourceResult] = queue.Queue()
    for src in sources.values():
        if src.source_id in ("url", "local"):
            continue
        threading.Thread(target=_search_one, args=(src, query, limit, done), daemon=True,
                         name=f"skills-search-{src.source_id}").start()
    pending = {s for s in sources if s not in ("url", "local")}
    results: list[SourceResult] = []
    deadline = time.monotonic() + timeout
    while pending:
        try:
            res = done.get(timeout=max(0.0, deadline - time.monotonic()))
        except queue.Empty:
            break
        pending.discard(res.source)
        results.append(res)
        if on_result:
            on_result(res)
    for sid in sorted(pending):
        res = SourceResult(sid, error=f"timed out after {timeout:g}s", seconds=timeout)
        results.append(res)
        if on_result:
            on_result(res)
    return results


def reaches_out(src: SkillSource) -> bool:
    """Does searching this source ask anything remote? Not taps (local folders), nor a source whose list of
    repos or sites is empty: their empty answer does not mean the network was searched."""
    for attr in ("repos", "sites"):
        if hasattr(src, attr):
            return bool(getattr(src, attr))
    return src.source_id not in ("tap", "url", "local")


def _search_one(src: SkillSource, query: str, limit: int, out: queue.Queue) -> None:
    start = time.monotonic()
    try:
        hits = src.search(query, limit)
        res = SourceResult(src.source_id, tuple(hits), warnings=tuple(getattr(src, "warnings", ())))
    except HubError as exc:
        res = SourceResult(src.source_id, error=str(exc))
    except (OSError, ValueError, LookupError, TypeError, AttributeError) as exc:  # a broken answer
        res = SourceResult(src.source_id, error=f"{type(exc).__name__}: {exc}")
    out.put(SourceResult(res.source, res.hits, res.error, res.warnings, time.monotonic() - start))


def route(ref: str, sources: Mapping[str, SkillSource]) -> tuple[str, str]:
    """(source id, identifier) for an install reference; bare names are left to the caller (taps, search)."""
    path = Path(ref).expanduser()
    if (path / SKILL_FILE).is_file():
        return "local", str(path.resolve())
    head, sep, rest = ref.partition(":")
    if sep and _ALIASES.get(head, head) in sources and not rest.startswith("//"):
        return _ALIASES.get(head, head), rest
    if ref.startswith(("http://", "https://")):
        return ("well-known" if "/.well-known/skills/" in ref else "url"), ref
    first = ref.split("/", 1)[0]
    if first in ("lobehub", "skills-sh", "skills.sh", "clawhub") and "/" in ref:
        sid = {"skills.sh": "skills-sh"}.get(first, first)
        return sid, ref if sid == "lobehub" else ref.split("/", 1)[1]
    if ref.count("/") >= 2:
        return "github", ref
    return "tap", ref


def need(sources: Mapping[str, SkillSource], sid: str) -> SkillSource:
    """The source with this id, or a HubError naming the enabled ones."""
    if sid not in sources:
        raise SourceError(f"skill source {sid!r} is not enabled (enabled: {', '.join(sources)})")
    return sources[sid]
