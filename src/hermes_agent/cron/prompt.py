"""What an agent cron run sends: the job's prompt with, before it, the output of its `script` (a pre-step;
empty output = nothing to do, no model call), the latest output of the jobs named in `context_from`, and
the full text of each skill in `skills` (Hermes's legacy single `skill` too). A skill that cannot be
found is named in the prompt so the model tells the user."""

from __future__ import annotations

import logging
import re

from hermes_agent.config.settings import Settings

log = logging.getLogger(__name__)
_MAX_CONTEXT = 8000
_JOB_ID = re.compile(r"^[0-9a-f]{1,32}$")


def job_skills(job: dict) -> list[str]:
    """The job's skill names (`skills` list or string; else the legacy `skill`)."""
    raw = job.get("skills")
    if raw is None:
        raw = [job["skill"]] if job.get("skill") else []
    elif isinstance(raw, str):
        raw = [raw]
    return [str(s).strip() for s in raw if str(s).strip()] if isinstance(raw, list) else []


def _script_block(ok: bool, output: str) -> str:
    if ok:
        return ("## Script Output\nThe job's script collected this data before the run; use it as context.\n\n"
                f"```\n{output}\n```\n\n")
    return f"## Script Error\nThe job's script failed; report this to the user.\n\n```\n{output}\n```\n\n"


def _context_blocks(job: dict, settings: Settings) -> str:
    refs = job.get("context_from") or []
    refs = [refs] if isinstance(refs, str) else refs if isinstance(refs, list) else []
    out = []
    for ref in refs:
        if not isinstance(ref, str) or not _JOB_ID.match(ref):
            continue
        files = sorted((settings.home / "cron" / "output" / ref).glob("*.md"), key=lambda p: p.stat().st_mtime)
        text = files[-1].read_text(encoding="utf-8", errors="replace").strip() if files else ""
        if text:
            text = text[:_MAX_CONTEXT] + ("\n\n[... output truncated ...]" if len(text) > _MAX_CONTEXT else "")
            out.append(f"## Output from job '{ref}'\nThe latest output of an earlier cron job, as context.\n\n"
                       f"```\n{text}\n```\n\n")
    return "".join(out)


def _skill_blocks(names: list[str], settings: Settings) -> tuple[list[str], list[str]]:
    from hermes_agent.skills.catalog import catalog_from_settings

    catalog = catalog_from_settings(settings)
    visible = {s.name: s for s in catalog.visible()}
    blocks, missing = [], []
    for name in names:
        info = visible.get(name) or visible.get(name.lstrip("/"))
        try:
            body = info.path.read_text(encoding="utf-8").strip() if info is not None else ""
        except OSError:
            body = ""
        if info is None or not body:
            missing.append(name)
            continue
        blocks.append(f"[The job runs the skill \"{info.name}\": follow its instructions. Its full text:]\n\n"
                      f"<skill name=\"{info.name}\" dir=\"{info.dir}\">\n{body}\n</skill>")
    return blocks, missing


def build_prompt(job: dict, settings: Settings, script: tuple[bool, str] | None = None) -> str | None:
    """The message of one agent run; None when the script ran fine and printed nothing (skip the model)."""
    prompt = str(job.get("prompt") or "")
    if script is not None:
        ok, output = script
        if ok and not output.strip():
            return None
        prompt = _script_block(ok, output) + prompt
    prompt = _context_blocks(job, settings) + prompt
    names = job_skills(job)
    if not names:
        return prompt
    blocks, missing = _skill_blocks(names, settings)
    parts = []
    if missing:
        log.warning("cron job %s: skill(s) not found: %s", job.get("id"), ", ".join(missing))
        parts.append(f"[The job lists skill(s) that could not be found and were skipped: {', '.join(missing)}. "
                     "Start your answer by telling the user so.]")
    parts += blocks
    if prompt.strip():
        parts.append(f"The job's instruction: {prompt}")
    return "\n\n".join(parts)
