"""Sources that index GitHub repositories: skills.sh (search API, content from GitHub), Claude Code
marketplaces (`.claude-plugin/marketplace.json`), and the user's taps (git URLs, local folders)."""

from __future__ import annotations

from pathlib import Path

from hermes_agent.messages import safe_loads
from hermes_agent.skills.catalog import SKILL_FILE
from hermes_agent.skills.fsutil import skill_files
from hermes_agent.skills.hub.github import GitHubSource, split_id
from hermes_agent.skills.hub.http import get_ok
from hermes_agent.skills.hub.model import SkillBundle, SkillMeta, SourceError, checked_files, matches
from hermes_agent.skills.hub.store import IndexCache
from hermes_agent.skills.taps import TapSkill, TapStore, git_head, read_tap_skill


class SkillsShSource:
    """skills.sh: GET <base>/api/search?q=&limit= -> {"skills": [{id, name, source, skillId, installs}]}."""

    source_id = "skills-sh"

    def __init__(self, base: str, github: GitHubSource, timeout: float) -> None:
        self.base, self.github, self.timeout = base.rstrip("/"), github, timeout

    def search(self, query: str, limit: int = 20) -> list[SkillMeta]:
        data = get_ok(f"{self.base}/api/search", params={"q": query, "limit": limit}, timeout=self.timeout).json()
        items = data.get("skills") if isinstance(data, dict) else None
        hits: list[SkillMeta] = []
        for item in items if isinstance(items, list) else []:
            if not isinstance(item, dict):
                continue
            canonical = item.get("id") or f"{item.get('source')}/{item.get('skillId')}"
            if not isinstance(canonical, str) or canonical.count("/") < 2:
                continue
            repo = "/".join(canonical.split("/")[:2])
            installs = item.get("installs")
            desc = f"Indexed by skills.sh from {repo}" + (f" · {installs:,} installs" if isinstance(installs, int) else "")
            hits.append(SkillMeta(str(item.get("name") or canonical.rsplit("/", 1)[-1]), desc, self.source_id,
                                  canonical, self.github.trust_for(repo)))
        return hits[:limit]

    def _candidates(self, identifier: str) -> list[str]:
        repo, path = split_id(identifier.removeprefix("skills-sh/").removeprefix("skills.sh/"))
        return list(dict.fromkeys(f"{repo}/{p}/{path}".replace("//", "/")
                                  for p in ("", "skills", ".agents/skills", ".claude/skills")))

    def inspect(self, identifier: str) -> SkillMeta | None:
        bundle = self.fetch(identifier)
        return SkillMeta(bundle.name, "", self.source_id, bundle.identifier, bundle.trust_level)

    def fetch(self, identifier: str) -> SkillBundle:
        errors = []
        for candidate in self._candidates(identifier):
            try:
                b = self.github.fetch(candidate)
            except SourceError as exc:
                errors.append(str(exc))
                continue
            return SkillBundle(b.name, b.files, self.source_id, identifier.removeprefix("skills-sh/"),
                               b.trust_level, b.revision, {**b.metadata, "github_id": candidate})
        raise SourceError(f"skills.sh skill {identifier!r} not found on GitHub ({errors[-1] if errors else ''})")


class MarketplaceSource:
    """Claude Code marketplaces: each repo's .claude-plugin/marketplace.json lists plugins and their skills."""

    source_id = "claude-marketplace"

    def __init__(self, repos: list[str], github: GitHubSource, cache: IndexCache) -> None:
        self.repos, self.github, self.cache = repos, github, cache

    def _plugins(self, repo: str) -> list[dict]:

        key = f"marketplace {self.github.api.base} {repo}"
        data = self.cache.get(key)
        if data is None:
            raw = self.github.api.file_bytes(repo, ".claude-plugin/marketplace.json")
            try:
                data = safe_loads(raw.decode("utf-8"))
            except (UnicodeDecodeError, ValueError) as exc:
                raise SourceError(f"{repo}: marketplace.json is not valid JSON") from exc
            self.cache.put(key, data)
        plugins = data.get("plugins") if isinstance(data, dict) else None
        return [p for p in plugins if isinstance(p, dict)] if isinstance(plugins, list) else []

    @staticmethod
    def _ids(repo: str, plugin: dict) -> list[str]:
        def join(p: str) -> str:
            p = p.strip()
            if p.startswith("./") or "/" not in p or p.count("/") < 2:
                return f"{repo}/{p.removeprefix('./')}".rstrip("/")
            return p

        base = plugin.get("source") if isinstance(plugin.get("source"), str) else ""
        skills = plugin.get("skills")
        if isinstance(skills, list) and skills:
            root = join(base) if base and base not in ("./", ".") else repo
            return [f"{root}/{str(s).removeprefix('./')}".rstrip("/") for s in skills if isinstance(s, str)]
        return [join(base)] if base else []

    def search(self, query: str, limit: int = 20) -> list[SkillMeta]:
        hits: list[SkillMeta] = []
        for repo in self.repos:
            for plugin in self._plugins(repo):
                desc = str(plugin.get("description") or "")
                for ident in self._ids(repo, plugin):
                    name = ident.rsplit("/", 1)[-1]
                    if matches(query, name, str(plugin.get("name") or ""), desc):
                        hits.append(SkillMeta(name, desc, self.source_id, ident,
                                              self.github.trust_for(split_id(ident)[0])))
        return hits[:limit]

    def inspect(self, identifier: str) -> SkillMeta | None:
        meta = self.github.inspect(identifier)
        return meta and SkillMeta(meta.name, meta.description, self.source_id, identifier, meta.trust_level)

    def fetch(self, identifier: str) -> SkillBundle:
        b = self.github.fetch(identifier)
        return SkillBundle(b.name, b.files, self.source_id, identifier, b.trust_level, b.revision, b.metadata)


def read_dir_bundle(skill: TapSkill, source: str, identifier: str, trust: str) -> SkillBundle:
    """A skill directory on disk as a bundle (regular files only)."""
    files = checked_files({rel: (skill.path / rel).read_bytes() for rel in skill_files(skill.path)})
    meta = {"source_url": str(skill.path), **({"category": skill.category} if skill.category else {})}
    return SkillBundle(skill.name, files, source, identifier, trust, git_head_above(skill.path) or "", meta)


def git_head_above(path: Path) -> str | None:
    """The commit of the nearest enclosing git work tree (None outside one)."""
    for parent in (path, *path.parents):
        if (parent / ".git").exists():
            return git_head(parent)
    return None


class TapSource:
    """The user's taps (`hermes skills tap add`): identifiers are `<tap>/<skill>`; trust per tap."""

    source_id = "tap"

    def __init__(self, store: TapStore) -> None:
        self.store = store

    def _all(self) -> list[TapSkill]:
        return [s for tap in self.store.list() for s in self.store.skills(tap)]

    def search(self, query: str, limit: int = 20) -> list[SkillMeta]:
        return [SkillMeta(s.name, s.description, self.source_id, s.ref, s.tap.trust if s.tap else "community",
                          s.tags) for s in self._all() if matches(query, s.name, s.description, *s.tags)][:limit]

    def find(self, identifier: str) -> list[TapSkill]:
        tap_name, _, name = identifier.rpartition("/")
        return [s for s in self._all() if s.name == name and (not tap_name or tap_name in (s.tap.name, s.tap.url))]

    def _one(self, identifier: str) -> TapSkill:
        found = self.find(identifier)
        if len(found) != 1:
            raise SourceError(f"no skill {identifier!r} in any tap" if not found else
                              f"{identifier!r} is in several taps: {', '.join(s.ref for s in found)}; say which")
        return found[0]

    def inspect(self, identifier: str) -> SkillMeta | None:
        s = self._one(identifier)
        return SkillMeta(s.name, s.description, self.source_id, s.ref, s.tap.trust if s.tap else "community", s.tags)

    def fetch(self, identifier: str) -> SkillBundle:
        s = self._one(identifier)
        return read_dir_bundle(s, self.source_id, s.ref, s.tap.trust if s.tap else "community")


class LocalSource:
    """A skill directory given by path (`hermes skills install ./my-skill`): community trust."""

    source_id = "local"

    def search(self, query: str, limit: int = 20) -> list[SkillMeta]:
        return []

    def inspect(self, identifier: str) -> SkillMeta | None:
        s = read_tap_skill(Path(identifier).expanduser().resolve())
        return SkillMeta(s.name, s.description, self.source_id, str(s.path), "community", s.tags)

    def fetch(self, identifier: str) -> SkillBundle:
        path = Path(identifier).expanduser().resolve()
        if not (path / SKILL_FILE).is_file():
            raise SourceError(f"{path} has no {SKILL_FILE}")
        return read_dir_bundle(read_tap_skill(path, path.parent), self.source_id, str(path), "community")
