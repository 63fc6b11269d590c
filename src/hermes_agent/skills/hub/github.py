"""GitHub as a skill source through the REST Contents API (base URL configurable for tests and GHES).

Token: GITHUB_TOKEN / GH_TOKEN from the environment, else `gh auth token` when gh is installed, else
anonymous (60 requests an hour). Listings follow `Link: rel="next"` pages; a 403/429 rate limit
becomes a RateLimited error naming the reset time. Repo listings are cached in .hub/index-cache."""

from __future__ import annotations

import base64
import queue
import subprocess
import threading
import time
from collections.abc import Callable, Mapping

from hermes_agent import lazyre, paths
from hermes_agent.skills.hub.http import Response, get_ok, request, status_error
from hermes_agent.skills.hub.model import (
    MAX_BUNDLE_FILES,
    RateLimited,
    SkillBundle,
    SkillMeta,
    SourceError,
    checked_files,
    frontmatter_meta,
    matches,
)
from hermes_agent.skills.hub.store import IndexCache

_NEXT = lazyre.compile(r'<([^>]+)>;\s*rel="next"')
_MAX_PAGES = 20


class GitHubAuth:
    """Resolves the token once: env var, then `gh auth token`, then none."""

    def __init__(self, env: Mapping[str, str]) -> None:
        self._env = env
        self._token: str | None = None
        self.method = ""

    def token(self) -> str | None:
        if not self.method:
            self._token, self.method = self._resolve()
        return self._token

    def _resolve(self) -> tuple[str | None, str]:
        for var in ("GITHUB_TOKEN", "GH_TOKEN"):
            if self._env.get(var):
                return self._env[var], "env"
        if gh := paths.trusted_which("gh"):
            try:
                proc = subprocess.run([gh, "auth", "token"], capture_output=True, text=True, timeout=5,
                                      stdin=subprocess.DEVNULL, check=False)
            except (OSError, subprocess.TimeoutExpired):
                return None, "anonymous"
            if proc.returncode == 0 and proc.stdout.strip():
                return proc.stdout.strip(), "gh"
        return None, "anonymous"


class GitHubApi:
    """The few REST calls the hub needs."""

    def __init__(self, base: str, auth: GitHubAuth, timeout: float = 10.0) -> None:
        self.base = base.rstrip("/")
        self.auth = auth
        self.timeout = timeout

    def headers(self) -> dict[str, str]:
        h = {"Accept": "application/vnd.github+json", "X-GitHub-Api-Version": "2022-11-28"}
        if token := self.auth.token():
            h["Authorization"] = f"Bearer {token}"
        return h

    def call(self, method: str, path: str, *, params: dict | None = None, body: object = None) -> Response:
        """One API call; rate limits explained (with a token hint when anonymous)."""
        url = path if path.startswith(("http://", "https://")) else f"{self.base}/{path.lstrip('/')}"
        resp = request(url, method=method, params=params, headers=self.headers(), body=body, timeout=self.timeout)
        if resp.status >= 400:
            err = status_error(resp)
            if isinstance(err, RateLimited) and not self.auth.token():
                raise RateLimited(f"{err}; set GITHUB_TOKEN or run `gh auth login` for 5000 requests/hour",
                                  err.reset)
            raise err
        return resp

    def get(self, path: str, params: dict | None = None) -> object:
        return self.call("GET", path, params=params).json()

    def get_paged(self, path: str) -> list:
        """Every item of a list endpoint, following Link rel=next pages."""
        items: list = []
        url, params = path, {"per_page": 100}
        for _ in range(_MAX_PAGES):
            resp = self.call("GET", url, params=params)
            page = resp.json()
            if not isinstance(page, list):
                raise SourceError(f"{resp.url} is not a directory listing")
            items += page
            nxt = _NEXT.search(resp.headers.get("link", ""))
            if nxt is None:
                break
            url, params = nxt.group(1), None
        return items

    def file_bytes(self, repo: str, path: str, ref: str | None = None) -> bytes:
        data = self.get(f"repos/{repo}/contents/{path}", {"ref": ref} if ref else None)
        if not isinstance(data, dict) or data.get("type") != "file":
            raise SourceError(f"{repo}/{path} is not a file")
        if data.get("encoding") == "base64" and isinstance(data.get("content"), str):
            return base64.b64decode(data["content"])
        if isinstance(data.get("download_url"), str):
            return get_ok(data["download_url"], headers=self.headers(), timeout=self.timeout).body
        raise SourceError(f"{repo}/{path}: no content in the API answer")

    def download_dir(self, repo: str, path: str) -> dict[str, bytes]:
        """Every regular file under `path` (relative path -> bytes); symlinks and submodules refused."""
        files: dict[str, bytes] = {}
        pending = [""]
        while pending:
            sub = pending.pop()
            full = f"{path.rstrip('/')}/{sub}".rstrip("/")
            for entry in self.get_paged(f"repos/{repo}/contents/{full}"):
                rel = f"{sub}/{entry.get('name')}".lstrip("/")
                kind = entry.get("type")
                if kind == "dir":
                    pending.append(rel)
                elif kind == "file":
                    if len(files) >= MAX_BUNDLE_FILES:
                        raise SourceError(f"{repo}/{path} has more than {MAX_BUNDLE_FILES} files")
                    files[rel] = self.file_bytes(repo, f"{path.rstrip('/')}/{rel}")
                else:
                    raise SourceError(f"{repo}/{path}/{rel} is a {kind}, not a regular file")
        return files

    def last_commit(self, repo: str, path: str) -> str:
        """SHA of the newest commit touching `path` ('' when the API does not say)."""
        data = self.get(f"repos/{repo}/commits", {"path": path, "per_page": 1})
        return str(data[0].get("sha", "")) if isinstance(data, list) and data and isinstance(data[0], dict) else ""


def split_id(identifier: str) -> tuple[str, str]:
    """('owner/repo', 'path/to/skill') of a GitHub identifier."""
    parts = identifier.strip("/").split("/", 2)
    if len(parts) < 3 or not all(parts):
        raise SourceError(f"GitHub skill identifiers look like owner/repo/path/to/skill, got {identifier!r}")
    return f"{parts[0]}/{parts[1]}", parts[2]


class GitHubSource:
    """Skills in directories of GitHub repositories (`repos` rows: 'owner/repo[/path]')."""

    source_id = "github"

    def __init__(self, api: GitHubApi, repos: list[str], trusted: frozenset[str], cache: IndexCache) -> None:
        self.api, self.repos, self.trusted, self.cache = api, repos, trusted, cache
        self.warnings: list[str] = []

    def trust_for(self, repo: str) -> str:
        return "trusted" if repo.lower() in self.trusted else "community"

    def search(self, query: str, limit: int = 20) -> list[SkillMeta]:
        """Every configured repo listed concurrently, each within the hub timeout (a little less, so the
        answer beats the router's deadline): a failing or slow repo is a warning unless every repo fails."""
        self.warnings = []
        if not self.repos:
            return []
        budget = max(0.2, self.api.timeout * 0.85)
        deadline = time.monotonic() + budget
        answers = daemon_map(lambda row: self._search_row(row, query, limit, deadline), self.repos, deadline)
        hits = [h for found, _ in (a or ([], "") for a in answers) for h in found]
        self.warnings = [f"{row}: {a[1] if a else f'timed out after {budget:.1f}s'}"
                         for row, a in zip(self.repos, answers, strict=True) if a is None or a[1]]
        if len(self.warnings) == len(self.repos):
            raise SourceError("; ".join(self.warnings))
        return hits[:limit]

    def _search_row(self, row: str, query: str, limit: int, deadline: float) -> tuple[list[SkillMeta], str]:
        try:
            repo, path = _repo_path(row)
            return self._search_repo(repo, path, query, limit, deadline), ""
        except SourceError as exc:
            return [], str(exc)
        except (OSError, ValueError, LookupError, TypeError, AttributeError) as exc:  # a broken answer
            return [], f"{type(exc).__name__}: {exc}"

    def _search_repo(self, repo: str, path: str, query: str, limit: int, deadline: float) -> list[SkillMeta]:
        key = f"github {self.api.base} {repo} {path}"
        listing: dict[str, str | None] | None = self.cache.get(key)
        if listing is None:
            entries = self.api.get_paged(f"repos/{repo}/contents/{path}".rstrip("/"))
            listing = {e["name"]: None for e in entries if e.get("type") == "dir"
                       and not str(e.get("name", "")).startswith((".", "_"))}
        picked = [n for n, d in listing.items() if matches(query, n, d or "")][:limit]
        missing = [n for n in picked if listing[n] is None]
        if missing:  # descriptions not read by the deadline stay unknown (and are asked again next time)
            for name, desc in zip(missing, daemon_map(lambda n: self._describe(repo, path, n), missing, deadline),
                                  strict=True):
                listing[name] = desc
        self.cache.put(key, listing)
        prefix = f"{repo}/{path}".rstrip("/")
        return [SkillMeta(n, listing[n] or "", self.source_id, f"{prefix}/{n}", self.trust_for(repo))
                for n in picked]

    def _describe(self, repo: str, path: str, name: str) -> str:
        try:
            text = self.api.file_bytes(repo, f"{path}/{name}/SKILL.md".lstrip("/")).decode("utf-8", "replace")
        except SourceError:
            return ""
        desc = frontmatter_meta(text).get("description")
        return str(desc) if desc else ""

    def inspect(self, identifier: str) -> SkillMeta | None:
        repo, path = split_id(identifier)
        meta = frontmatter_meta(self.api.file_bytes(repo, f"{path}/SKILL.md").decode("utf-8", "replace"))
        return SkillMeta(str(meta.get("name") or path.rsplit("/", 1)[-1]), str(meta.get("description") or ""),
                         self.source_id, identifier, self.trust_for(repo))

    def fetch(self, identifier: str) -> SkillBundle:
        repo, path = split_id(identifier)
        files = checked_files(self.api.download_dir(repo, path))
        name = str(frontmatter_meta(files["SKILL.md"].decode("utf-8", "replace")).get("name")
                   or path.rsplit("/", 1)[-1])
        revision = self.api.last_commit(repo, path)
        return SkillBundle(name, files, self.source_id, identifier, self.trust_for(repo), revision,
                           {"source_url": f"https://github.com/{repo}/tree/{revision or 'HEAD'}/{path}"})


def daemon_map(fn: Callable, items: list, deadline: float, workers: int = 8) -> list:
    """fn over items on daemon threads (at most `workers` at once); what has not answered by `deadline` (a
    monotonic time) is None. Abandoned calls never hold up the caller or the process's exit, as a
    ThreadPoolExecutor's workers would."""
    results: list = [None] * len(items)
    todo: queue.Queue = queue.Queue()
    done: queue.Queue = queue.Queue()
    for pair in enumerate(items):
        todo.put(pair)

    def worker() -> None:
        while True:
            try:
                i, item = todo.get_nowait()
            except queue.Empty:
                return
            try:
                done.put((i, fn(item)))
            except Exception:  # noqa: BLE001 - a broken answer is reported as no answer
                done.put((i, None))

    for _ in range(min(workers, len(items))):
        threading.Thread(target=worker, daemon=True, name="skills-hub-github").start()
    for _ in items:
        try:
            i, value = done.get(timeout=max(0.0, deadline - time.monotonic()))
        except queue.Empty:
            break
        results[i] = value
    return results


def _repo_path(row: str) -> tuple[str, str]:
    parts = row.strip().strip("/").split("/", 2)
    if len(parts) < 2:
        raise SourceError(f"skills.hub.repos rows look like owner/repo[/path], got {row!r}")
    return f"{parts[0]}/{parts[1]}", parts[2] if len(parts) > 2 else ""
