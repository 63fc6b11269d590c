"""The `clarify` tool: ask the user one question through the frontend's `ctx.clarify` callback.
Without a callback (one-shot, cron, gateway without a user) it answers at once with an error."""

from __future__ import annotations

from hermes_agent.tools.registry import registry
from hermes_agent.tools.results import tool_error, tool_result

MAX_CHOICES = 4

CLARIFY_SCHEMA = {
    "name": "clarify",
    "description": (
        "Ask the user and wait, only when a decision or missing fact blocks the task and no sensible default "
        "exists (never for routine steps). Up to 4 short choices (free answers still work), or none."
    ),
    "parameters": {
        "type": "object",
        "properties": {
            "question": {"type": "string"},
            "choices": {"type": "array", "items": {"type": "string"}, "maxItems": MAX_CHOICES},
        },
        "required": ["question"],
    },
}


def _choices(raw: object) -> list[str] | str:
    """The cleaned choice list, or an error message."""
    if raw is None:
        return []
    if not isinstance(raw, list) or not all(isinstance(c, str | int | float) for c in raw):
        return "choices must be a list of strings"
    cleaned = [str(c).strip() for c in raw if str(c).strip()]
    if len(cleaned) > MAX_CHOICES:
        return f"at most {MAX_CHOICES} choices (got {len(cleaned)}); the user can always type another answer"
    return cleaned


def _handle(args: dict, **kw: object) -> str:
    question = str(args.get("question") or "").strip()
    if not question:
        return tool_error("question is required")
    choices = _choices(args.get("choices"))
    if isinstance(choices, str):
        return tool_error(choices)
    ask = getattr(kw.get("ctx"), "clarify", None)
    if ask is None:
        return tool_error("No user is available to answer questions in this run. Proceed with your best "
                          "judgement and state the assumption you made.")
    answer = ask(question, choices)
    if not answer:
        return tool_result(question=question, answer=None,
                           note="The user gave no answer. Proceed with your best judgement or stop and explain.")
    return tool_result(question=question, answer=answer)


registry.register("clarify", "clarify", CLARIFY_SCHEMA, _handle, emoji="❓", parallel_safe=False, subagent_ok=False)
