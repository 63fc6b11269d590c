"""What an agent cron run sends: the job's prompt with, before it, the output of its `script` (a pre-step;
empty output = nothing to do, no model call), the latest output of the jobs named in `context_from`, and
the full text of each skill in `skills` (Hermes's legacy single `skill` too). A skill that cannot be
found is named in the prompt so the model tells the user.
Provenance (red-team rt14 b10): a script's output is data from outside (feeds, pages, mail), and an earlier job's
output marked in the taint ledger (its run took in untrusted content: scheduler.run_job) still carries it; either
makes the run's turn untrusted (`CronPrompt.untrusted`), so nothing it saves for later sessions goes unasked."""

from __future__ import annotations

import logging
import re
from typing import NamedTuple

from hermes_agent.config.settings import Settings

log = logging.getLogger(__name__)
_MAX_CONTEXT = 8000
_JOB_ID = re.compile(r"^[0-9a-f]{1,32}$")


class CronPrompt(NamedTuple):
    """One agent run's message and the first source of untrusted content in it ("" when none)."""

    text: str
    untrusted: str = ""


def script_source(job: dict) -> str:
    """A job script's output is untrusted content: what it prints is what it fetched."""
    return f"the output of cron job {job.get('id')}'s script {job.get('script')}"


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


def _context_blocks(job: dict, settings: Settings) -> tuple[str, str]:
    """The `context_from` blocks and the first untrusted source among them ("" when none)."""
    from hermes_agent.memory import taintledger

    refs = job.get("context_from") or []
    refs = [refs] if isinstance(refs, str) else refs if isinstance(refs, list) else []
    out, untrusted = [], ""
    for ref in refs:
        if not isinstance(ref, str) or not _JOB_ID.match(ref):
            continue
        files = sorted((settings.home / "cron" / "output" / ref).glob("*.md"), key=lambda p: p.stat().st_mtime)
        text = files[-1].read_text(encoding="utf-8", errors="replace").strip() if files else ""
        if text:
            mark = taintledger.file_source(settings.home, str(files[-1]), files[-1].stat())
            untrusted = untrusted or (f"the output of cron job {ref} (which had taken in {mark})" if mark else "")
            text = text[:_MAX_CONTEXT] + ("\n\n[... output truncated ...]" if len(text) > _MAX_CONTEXT else "")
            out.append(f"## Output from job '{ref}'\nThe latest output of an earlier cron job, as context.\n\n"
                       f"```\n{text}\n```\n\n")
    return "".join(out), untrusted


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
        catalog.used(info)
        blocks.append(f"[The job runs the skill \"{info.name}\": follow its instructions. Its full text:]\n\n"
                      f"<skill name=\"{info.name}\" dir=\"{info.dir}\">\n{body}\n</skill>")
    return blocks, missing


def build_prompt(job: dict, settings: Settings, script: tuple[bool, str] | None = None) -> CronPrompt | None:
    """The message of one agent run; None when the script ran fine and printed nothing (skip the model)."""
    prompt, untrusted = str(job.get("prompt") or ""), ""
    if script is not None:
        ok, output = script
        if ok and not output.strip():
            return None
        prompt, untrusted = _script_block(ok, output) + prompt, script_source(job)
    context, earlier = _context_blocks(job, settings)
    prompt, untrusted = context + prompt, untrusted or earlier
    names = job_skills(job)
    if not names:
        return CronPrompt(prompt, untrusted)
    blocks, missing = _skill_blocks(names, settings)
    parts = []
    if missing:
        log.warning("cron job %s: skill(s) not found: %s", job.get("id"), ", ".join(missing))
        parts.append(f"[The job lists skill(s) that could not be found and were skipped: {', '.join(missing)}. "
                     "Start your answer by telling the user so.]")
    parts += blocks
    if prompt.strip():
        parts.append(f"The job's instruction: {prompt}")
    return CronPrompt("\n\n".join(parts), untrusted)
