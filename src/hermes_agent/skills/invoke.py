"""`/skill-name task` from any frontend (REPL, chats): the user message that runs an installed skill."""

from __future__ import annotations

from hermes_agent.config.settings import Settings
from hermes_agent.skills.catalog import catalog_from_settings


def skill_message(settings: Settings, text: str) -> str | None:
    """The message that runs the skill named by `text`'s first word (None when no skill has that name)."""
    head, _, arg = text.strip().partition(" ")
    wanted = _command_name(head[1:].split("@")[0])
    catalog = catalog_from_settings(settings)
    try:  # only skills offered to the model (not disabled, valid, for this OS); Telegram's /tidy_logs is tidy-logs
        info = next((s for s in catalog.visible() if _command_name(s.name) == wanted), None)
        body = info.path.read_text(encoding="utf-8") if info is not None and info.error is None else None
    except OSError:
        body = None
    if body is None or info is None:
        return None
    catalog.used(info)
    task = arg.strip() or "the task at hand (ask me if it is unclear)"
    return (f"Follow the skill `{info.name}` below for: {task}\n\n"
            f"<skill name=\"{info.name}\" dir=\"{info.dir}\">\n{body.strip()}\n</skill>")


def _command_name(name: str) -> str:
    """A skill name as chats spell it: case-free, '-' and '_' alike (Telegram commands allow no hyphen)."""
    return name.lower().replace("-", "_")


def skill_list(settings: Settings, limit: int = 60) -> str:
    """Installed skills, one line each: what `/skills` shows in a chat."""
    found = catalog_from_settings(settings).visible()
    if not found:
        return "No skills installed (they live in $HERMES_HOME/skills)."
    rows = [f"/{info.name} - {info.one_line(80)}" for info in found[:limit]]
    more = f"\n... and {len(found) - limit} more" if len(found) > limit else ""
    return "Skills (send /name followed by the task):\n" + "\n".join(rows) + more
