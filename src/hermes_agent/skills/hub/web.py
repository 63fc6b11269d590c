"""Web skill sources: well-known indexes (Hermes's /.well-known/skills/index.json), direct URLs to a
SKILL.md or an archive, ClawHub's API, and LobeHub's agent index (agents converted to SKILL.md)."""

from __future__ import annotations

import re
from urllib.parse import urljoin

from hermes_agent import lazyre
from hermes_agent.skills.hub.archive import is_archive, unpack
from hermes_agent.skills.hub.http import get_ok
from hermes_agent.skills.hub.model import (
    SkillBundle,
    SkillMeta,
    SourceError,
    checked_files,
    frontmatter_meta,
    matches,
    safe_rel_path,
)
from hermes_agent.skills.hub.store import IndexCache

WELL_KNOWN = "/.well-known/skills"
_SUPPORT_REF = lazyre.compile(r"(?<![\w/.])((?:references|templates|scripts|assets|examples)/[^\s)`\"'<>]+)")


def _name_of(files: dict[str, bytes], fallback: str) -> str:
    return str(frontmatter_meta(files["SKILL.md"].decode("utf-8", "replace")).get("name") or fallback)


class WellKnownSource:
    """Sites publishing `<site>/.well-known/skills/index.json`: {"skills": [{name, description, files}]}."""

    source_id = "well-known"

    def __init__(self, sites: list[str], timeout: float) -> None:
        self.sites, self.timeout = sites, timeout

    @staticmethod
    def index_url(site: str) -> str:
        site = site.strip()
        if site.endswith("/index.json"):
            return site
        if f"{WELL_KNOWN}/" in site:
            return site.split(f"{WELL_KNOWN}/", 1)[0] + f"{WELL_KNOWN}/index.json"
        return site.rstrip("/") + f"{WELL_KNOWN}/index.json"

    def _index(self, index_url: str) -> list[dict]:
        data = get_ok(index_url, timeout=self.timeout).json()
        skills = data.get("skills") if isinstance(data, dict) else None
        if not isinstance(skills, list):
            raise SourceError(f"{index_url} has no skills list")
        return [s for s in skills if isinstance(s, dict) and isinstance(s.get("name"), str)]

    def search(self, query: str, limit: int = 20) -> list[SkillMeta]:
        sites = list(self.sites)
        if query.startswith(("http://", "https://")):
            sites, query = [query], ""
        hits: list[SkillMeta] = []
        for site in sites:
            url = self.index_url(site)
            base = url.removesuffix("/index.json")
            hits += [SkillMeta(s["name"], str(s.get("description") or ""), self.source_id, f"{base}/{s['name']}",
                               "community") for s in self._index(url)
                     if matches(query, s["name"], str(s.get("description") or ""))]
        return hits[:limit]

    def _entry(self, identifier: str) -> tuple[str, dict]:
        ident = identifier.removeprefix("well-known:").removesuffix("/SKILL.md").rstrip("/")
        base, _, name = ident.rpartition("/")
        if not base.endswith(WELL_KNOWN):
            raise SourceError(f"well-known identifiers look like https://site{WELL_KNOWN}/<name>, got {identifier!r}")
        entry = next((s for s in self._index(f"{base}/index.json") if s["name"] == name), None)
        if entry is None:
            raise SourceError(f"{base}/index.json lists no skill {name!r}")
        return f"{base}/{name}", entry

    def inspect(self, identifier: str) -> SkillMeta | None:
        url, entry = self._entry(identifier)
        return SkillMeta(entry["name"], str(entry.get("description") or ""), self.source_id, url, "community")

    def fetch(self, identifier: str) -> SkillBundle:
        url, entry = self._entry(identifier)
        names = entry.get("files") if isinstance(entry.get("files"), list) else ["SKILL.md"]
        files = {safe_rel_path(str(n)): get_ok(f"{url}/{safe_rel_path(str(n))}", timeout=self.timeout).body
                 for n in names}
        files = checked_files(files)
        return SkillBundle(_name_of(files, entry["name"]), files, self.source_id, url, "community",
                           metadata={"source_url": url})


class UrlSource:
    """A direct https URL to a SKILL.md (plus the support files it links) or to a .tar.gz/.zip of a skill."""

    source_id = "url"

    def __init__(self, timeout: float) -> None:
        self.timeout = timeout

    def search(self, query: str, limit: int = 20) -> list[SkillMeta]:
        return []

    def inspect(self, identifier: str) -> SkillMeta | None:
        bundle = self.fetch(identifier)
        meta = frontmatter_meta(bundle.files["SKILL.md"].decode("utf-8", "replace"))
        return SkillMeta(bundle.name, str(meta.get("description") or ""), self.source_id, identifier, "community")

    def fetch(self, identifier: str) -> SkillBundle:
        url = identifier.removeprefix("url:")
        body = get_ok(url, timeout=self.timeout).body
        if is_archive(url):
            files = checked_files(unpack(body, url))
            fallback = re.sub(r"(\.tar\.gz|\.tgz|\.zip|\.tar)$", "", url.split("?")[0].rsplit("/", 1)[-1])
        else:
            files = {"SKILL.md": body}
            for ref in sorted(set(_SUPPORT_REF.findall(body.decode("utf-8", "replace")))):
                rel = safe_rel_path(ref)
                files[rel] = get_ok(urljoin(url, rel), timeout=self.timeout).body
            files = checked_files(files)
            fallback = url.split("?")[0].rstrip("/").rsplit("/", 2)[-2] if url.count("/") > 3 else "skill"
        return SkillBundle(_name_of(files, fallback), files, self.source_id, url, "community",
                           metadata={"source_url": url})


class ClawHubSource:
    """clawhub.ai's API: GET /skills?search=, /skills/<slug>, /download?slug=&version= (a zip). Community."""

    source_id = "clawhub"

    def __init__(self, base: str, timeout: float) -> None:
        self.base, self.timeout = base.rstrip("/"), timeout

    @staticmethod
    def _meta(item: dict) -> SkillMeta:
        tags = item.get("tags")
        return SkillMeta(str(item.get("displayName") or item.get("name") or item["slug"]),
                         str(item.get("summary") or item.get("description") or ""), "clawhub", str(item["slug"]),
                         "community", tuple(str(t) for t in tags) if isinstance(tags, list) else ())

    def search(self, query: str, limit: int = 20) -> list[SkillMeta]:
        data = get_ok(f"{self.base}/skills", params={"search": query, "limit": limit}, timeout=self.timeout).json()
        items = data.get("items", []) if isinstance(data, dict) else data
        return [self._meta(i) for i in items if isinstance(i, dict) and i.get("slug")][:limit] \
            if isinstance(items, list) else []

    def _skill(self, identifier: str) -> dict:
        slug = identifier.rsplit("/", 1)[-1]
        data = get_ok(f"{self.base}/skills/{slug}", timeout=self.timeout).json()
        if isinstance(data, dict) and isinstance(data.get("skill"), dict):  # {"skill": {...}, "latestVersion": ...}
            data = {"latestVersion": data.get("latestVersion"), **data["skill"]}
        if not isinstance(data, dict):
            raise SourceError(f"ClawHub has no skill {slug!r}")
        return {"slug": slug, **data}

    def inspect(self, identifier: str) -> SkillMeta | None:
        return self._meta(self._skill(identifier))

    def fetch(self, identifier: str) -> SkillBundle:
        skill = self._skill(identifier)
        latest = skill.get("latestVersion")
        version = latest.get("version") if isinstance(latest, dict) else latest
        if not isinstance(version, str) or not version:
            raise SourceError(f"ClawHub does not say which version of {skill['slug']!r} is the latest")
        body = get_ok(f"{self.base}/download", params={"slug": skill["slug"], "version": version},
                      timeout=self.timeout).body
        files = checked_files(unpack(body, "skill.zip"))
        return SkillBundle(skill["slug"], files, self.source_id, skill["slug"], "community", version,
                           {"source_url": f"{self.base}/skills/{skill['slug']}"})


class LobeHubSource:
    """LobeHub's agent index (<base>/index.json, <base>/<id>.json); agents become SKILL.md. Community."""

    source_id = "lobehub"

    def __init__(self, base: str, timeout: float, cache: IndexCache) -> None:
        self.base, self.timeout, self.cache = base.rstrip("/"), timeout, cache

    def _agents(self) -> list[dict]:
        key = f"lobehub {self.base}"
        data = self.cache.get(key)
        if data is None:
            data = get_ok(f"{self.base}/index.json", timeout=self.timeout).json()
            self.cache.put(key, data)
        agents = data.get("agents", data) if isinstance(data, dict) else data
        return [a for a in agents if isinstance(a, dict) and a.get("identifier")] if isinstance(agents, list) else []

    @staticmethod
    def _meta(agent: dict) -> SkillMeta:
        meta = agent.get("meta") if isinstance(agent.get("meta"), dict) else agent
        tags = meta.get("tags") if isinstance(meta.get("tags"), list) else []
        return SkillMeta(str(agent["identifier"]), str(meta.get("description") or "")[:200], "lobehub",
                         f"lobehub/{agent['identifier']}", "community", tuple(str(t) for t in tags))

    def search(self, query: str, limit: int = 20) -> list[SkillMeta]:
        hits = [self._meta(a) for a in self._agents()]
        return [h for h in hits if matches(query, h.name, h.description, *h.tags)][:limit]

    def inspect(self, identifier: str) -> SkillMeta | None:
        agent_id = identifier.removeprefix("lobehub/")
        return next((self._meta(a) for a in self._agents() if a["identifier"] == agent_id), None)

    def fetch(self, identifier: str) -> SkillBundle:
        agent_id = safe_rel_path(identifier.removeprefix("lobehub/"))
        data = get_ok(f"{self.base}/{agent_id}.json", timeout=self.timeout).json()
        if not isinstance(data, dict):
            raise SourceError(f"LobeHub agent {agent_id!r} is not a JSON object")
        files = {"SKILL.md": agent_to_skill_md(agent_id, data).encode("utf-8")}
        return SkillBundle(agent_id, files, self.source_id, f"lobehub/{agent_id}", "community",
                           metadata={"source_url": f"{self.base}/{agent_id}.json"})


def agent_to_skill_md(agent_id: str, agent: dict) -> str:
    """A LobeHub agent (meta + config.systemRole) as a SKILL.md document."""
    import json

    meta = agent.get("meta") if isinstance(agent.get("meta"), dict) else {}
    config = agent.get("config") if isinstance(agent.get("config"), dict) else {}
    tags = [str(t) for t in meta.get("tags", []) if isinstance(t, str | int)] if isinstance(meta.get("tags"), list) else []
    desc = str(meta.get("description") or meta.get("title") or agent_id)[:500]
    front = (f"---\nname: {agent_id}\ndescription: {json.dumps(desc)}\nmetadata:\n  hermes:\n"
             f"    tags: {json.dumps(tags)}\n  lobehub:\n    source: lobehub\n---\n")
    body = f"# {meta.get('title') or agent_id}\n\n{desc}\n\n## Instructions\n\n{config.get('systemRole') or '(none)'}\n"
    return front + "\n" + body
