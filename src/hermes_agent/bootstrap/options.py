"""Per-run choices a frontend passes to build_agent (Hermes's chat flags -s, --ignore-rules, --safe-mode,
-c NAME), and the preloaded-skills text those flags put in the system prompt."""

from __future__ import annotations

from dataclasses import dataclass

from hermes_agent.config.settings import Settings


@dataclass(frozen=True, slots=True)
class RunOptions:
    """What this run changes about the agent's setup (the defaults change nothing)."""

    prompt_extra: tuple[str, ...] = ()  # appended to the system prompt: preloaded skills (`-s`), worktree note
    ignore_rules: bool = False  # no AGENTS.md/SOUL.md/.cursorrules and no memory in the prompt
    safe_mode: bool = False  # no plugins and no MCP servers either
    resume_by_title: bool = False  # `-c NAME`: resume names a session title
    # Team mode (config/team.py): who this agent works for. Their role's toolsets are taken away, their
    # USER.md lives in `user_dir` (MEMORY.md stays the owner's), and each tool call is attributed to them.
    person: str = ""  # "<platform>:<user id>"
    role: str = ""
    disabled_toolsets: tuple[str, ...] = ()
    user_dir: str | None = None


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
        blocks.append(f'[The user started this session with the "{info.name}" skill preloaded: follow its '
                      "instructions for the whole session unless the user says otherwise.]\n\n"
                      f"{body.strip()}\n\n[Skill directory: {info.dir}] Relative paths in this skill are "
                      "relative to that directory; run its scripts with the terminal tool by absolute path.")
    return PreloadedSkills("\n\n".join(blocks), tuple(loaded), tuple(missing))
