"""People page (team mode): everyone with a role (config `team:` and `/role`), and each person's sessions and
tool calls as attributed in state.db (`hermes_agent_tool_people`)."""

from __future__ import annotations

from pathlib import Path

from aiohttp import web

from hermes_agent.config.team import ROLES, Team
from hermes_agent.dashboard.html import Safe, link, num, page, table
from hermes_agent.dashboard.state import Home, respond
from hermes_agent.storage.people import by_person


def _rows(home: Home) -> list[list[object]]:
    team = Team(home.settings)
    usage = by_person(Path(home.settings.home) / "state.db")
    people = {p.key: (p.role, p.name) for p in team.people()}
    for key, row in usage.items():
        people.setdefault(key, (row["role"], ""))
    rows = []
    for key, (role, name) in sorted(people.items(), key=lambda kv: (ROLES.index(kv[1][0]), kv[0])):
        seen = usage.get(key) or {"sessions": [], "tool_calls": 0}
        sessions = Safe(" ".join(str(link(f"/sessions/{sid}", sid[:18])) for sid in seen["sessions"][:5])
                        + (f" (+{len(seen['sessions']) - 5})" if len(seen["sessions"]) > 5 else ""))
        rows.append([key, name, role, len(seen["sessions"]), sessions, num(seen["tool_calls"])])
    return rows


async def people(request: web.Request) -> web.Response:
    """GET /people."""
    home: Home = request.app["home"]
    rows = await home.run(_rows, home)
    if not rows:
        body = Safe("<p>No team yet: name people under <code>team.people</code> in config.yaml "
                    "(owner, admin, member, guest).</p>")
        return respond(page("People", body, "/people"))
    body = table(("Person", "Name", "Role", "Sessions", "Recent sessions", "Tool calls"), rows, (3, 5))
    return respond(page("People", Safe(f"<p class=meta>Roles from config and /role; sessions and tool calls "
                                       f"as attributed in state.db.</p>{body}"), "/people"))
