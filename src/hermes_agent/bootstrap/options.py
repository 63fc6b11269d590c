"""Per-run choices a frontend passes to build_agent (Hermes's chat flags -s, --ignore-rules, --safe-mode,
-c NAME), and the preloaded-skills text those flags put in the system prompt."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from hermes_agent.config.settings import Settings

if TYPE_CHECKING:
    from hermes_agent.config.team import Person, Team


@dataclass(frozen=True, slots=True)
class RunOptions:
    """What this run changes about the agent's setup (the defaults change nothing)."""

    prompt_extra: tuple[str, ...] = ()  # appended to the system prompt: preloaded skills (`-s`), worktree note
    ignore_rules: bool = False  # no AGENTS.md/SOUL.md/.cursorrules and no memory in the prompt
    safe_mode: bool = False  # no plugins and no MCP servers either
    resume_by_title: bool = False  # `-c NAME`: resume names a session title
    spender: str | None = None  # whose budget this run spends (bootstrap/budget.py): None = the platform's default
    # Team mode (config/team.py): who this agent works for. Their role's toolsets are taken away, their
    # USER.md lives in `user_dir` (MEMORY.md stays the owner's), and each tool call is attributed to them.
    person: str = ""  # "<platform>:<user id>"
    role: str = ""
    disabled_toolsets: tuple[str, ...] = ()
    user_dir: str | None = None
    # Whose media this agent sees (paths.media_cache): its chat's scope in the gateway, its job's in cron.
    media_scope: str = "local"


def person_options(settings: Settings, team: Team, person: Person) -> tuple[Settings, RunOptions]:
    """Team mode: the settings and RunOptions of one person's agents: their role's toolsets taken away, their
    own USER.md (the owner keeps memories/USER.md); a member's terminal is the local sandbox working in their
    own folder (created here), the other people's folders unreadable and no shared /tmp; the owner's HOME is
    hidden whole (`sandbox.hide_home`, one PathPolicy for the sandbox and the file tools) but that folder, the
    shared team folder (`team.shared`, when set) and the tool directories. The person spends their own
budget (`spender` = their key, whose role caps come from config.team.caps_for)."""
    if person.role == "member":
        work = team.workspace(person)
        work.mkdir(parents=True, exist_ok=True, mode=0o700)
        shared = team.shared_folder()
        others = [str(p) for p in work.parent.iterdir()  # the other people's folders
                  if p.is_dir() and p != work and p != shared]
        if shared is not None:
            shared.mkdir(parents=True, exist_ok=True, mode=0o700)
        settings = settings.with_overrides({
            "terminal.cwd": str(work), "terminal.backend": "local", "sandbox.hide_home": True,
            "sandbox.deny_read": [*settings.cfg.sandbox.deny_read, *others], "sandbox.shared_tmp": False,
            "sandbox.writable_paths": [*settings.cfg.sandbox.writable_paths, *([str(shared)] if shared else [])]})
    user_dir = None if person.role == "owner" else str(Path(settings.home) / "memories" / "people" / person.slug)
    return settings, RunOptions(spender=person.key, person=person.key, role=person.role, user_dir=user_dir,
                                disabled_toolsets=team.disabled_toolsets(person.role))


def job_person(settings: Settings, key: str, role: str = "",
               disabled: tuple[str, ...] = ()) -> tuple[Settings, RunOptions | None]:
    """A cron job made by `key` ("<platform>:<user id>", "" for the owner): the settings and RunOptions of that
    person's agents as their role is now, but no wider than `role`, the role recorded when the job was made
    (team mode), with the `disabled` toolsets (those the making session did not offer; cron/confinement.py) taken
    away too. None options: the job runs as any other."""
    from dataclasses import replace

    from hermes_agent.config.team import ROLES, Person, Team
    from hermes_agent.tools.toolsets import is_known

    team = Team(settings)
    platform, _, user_id = key.partition(":")
    options = None
    if team.enabled and user_id:
        person = team.person(platform, user_id)
        if role in ROLES and ROLES.index(role) > ROLES.index(person.role):  # promoted since: the job keeps the old role
            person = Person(person.key, role, person.name)
        settings, options = person_options(settings, team, person)
    known = [t for t in disabled if is_known(t)]  # a static toolset (an MCP server's is not known before discovery)
    if known:
        base = options or RunOptions()
        options = replace(base, disabled_toolsets=tuple(dict.fromkeys((*base.disabled_toolsets, *known))))
    return settings, options


@dataclass(frozen=True, slots=True)
class PreloadedSkills:
    """The prompt text for the skills found, and the names nobody has."""

    prompt: str
    loaded: tuple[str, ...]
    missing: tuple[str, ...]


def preload_skills(settings: Settings, names: list[str]) -> PreloadedSkills:
    """Each named skill's SKILL.md as a session-wide instruction block (disabled skills count as missing)."""
    from hermes_agent.skills.catalog import catalog_from_settings

    catalog = catalog_from_settings(settings)
    blocks, loaded, missing = [], [], []
    for name in names:
        info = catalog.get(name)
        if info is not None and info.name in catalog.disabled:
            info = None
        try:
            body = info.path.read_text(encoding="utf-8") if info is not None and info.error is None else None
        except OSError:
            body = None
        if body is None:
            missing.append(name)
            continue
        loaded.append(info.name)
        catalog.used(info)
        blocks.append(f'[The user started this session with the "{info.name}" skill preloaded: follow its '
                      "instructions for the whole session unless the user says otherwise.]\n\n"
                      f"{body.strip()}\n\n[Skill directory: {info.dir}] Relative paths in this skill are "
                      "relative to that directory; run its scripts with the terminal tool by absolute path.")
    return PreloadedSkills("\n\n".join(blocks), tuple(loaded), tuple(missing))
