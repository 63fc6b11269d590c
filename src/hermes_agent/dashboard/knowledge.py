"""Skills and memory pages: the SKILL.md catalog (list, one skill's SKILL.md as text) and the two memory
files MEMORY.md / USER.md, entry by entry with their budgets. Read-only."""

from __future__ import annotations

from aiohttp import web

from hermes_agent.dashboard.html import Safe, esc, join, link, page, pre, table
from hermes_agent.dashboard.state import Home, respond
from hermes_agent.memory.store import MemoryStore, joined_length
from hermes_agent.skills.catalog import SkillCatalog, SkillInfo, catalog_from_settings


def _skill_row(s: SkillInfo, disabled: frozenset[str]) -> list[object]:
    state = "disabled" if s.name in disabled else "invalid: " + s.error if s.error else \
        "available" if s.available_here() else "not for this OS"
    return [link(f"/skills/{s.name}", s.name), s.category or "general", s.version or "—", state, s.one_line()]


async def skills(request: web.Request) -> web.Response:
    """GET /skills: every discovered skill."""
    home: Home = request.app["home"]
    catalog: SkillCatalog = catalog_from_settings(home.settings)
    found = await home.run(catalog.all)
    disabled = frozenset(home.settings.cfg.skills.disabled)
    listing = table(("Skill", "Category", "Version", "State", "Description"),
                    [_skill_row(s, disabled) for s in found]) if found else \
        Safe("<p>No skills installed. Browse the hub with <code>hermes skills search</code>.</p>")
    return respond(page("Skills", Safe(f"<p class=meta>{esc(catalog.skills_dir)}</p>{listing}"), "/skills"))


async def skill(request: web.Request) -> web.Response:
    """GET /skills/{name}: that skill's SKILL.md as text."""
    home: Home = request.app["home"]
    found = await home.run(catalog_from_settings(home.settings).get, request.match_info["name"])
    if found is None:
        return respond(page("Skill not found", Safe("<p>No skill by that name.</p>"), "/skills"), 404)
    text = await home.run(found.path.read_text, encoding="utf-8", errors="replace")
    return respond(page(found.name, Safe(f"<p class=meta>{esc(found.path)}</p>{pre(text)}"), "/skills"))


def _memory_section(store: MemoryStore, target: str, title: str) -> Safe:
    entries = store.entries(target)
    limit = store.limits[target]
    off = "" if target in store.targets else " (disabled in config)"
    head = f"<h2>{esc(title)}</h2><p class=meta>{esc(store.path(target))} · {len(entries)} entries · " \
           f"{joined_length(entries):,}/{limit:,} chars{esc(off)}</p>"
    return Safe(head + (join(pre(e) for e in entries) if entries else "<p>Empty.</p>"))


async def memory(request: web.Request) -> web.Response:
    """GET /memory: MEMORY.md and USER.md."""
    home: Home = request.app["home"]
    store = MemoryStore.from_settings(home.settings)
    body = await home.run(lambda: Safe(_memory_section(store, "memory", "MEMORY.md — the agent's notes")
                                       + _memory_section(store, "user", "USER.md — the user profile")))
    return respond(page("Memory", body, "/memory"))
