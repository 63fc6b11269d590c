"""Model markdown -> Slack mrkdwn, the pieces a long reply is sent in, Block Kit approval buttons."""

from __future__ import annotations

import re

from hermes_agent import lazyre
from hermes_agent.gateway.base import split_fenced, split_text

MAX_LENGTH = 39000  # chat.postMessage truncates `text` past 40,000 characters; escaping needs the margin
SECTION_LIMIT = 3000  # a Block Kit section's text

_CODE = lazyre.compile(r"(```.*?```|`[^`\n]+`)", re.S)
_LINK = lazyre.compile(r"\[([^\]\n]+)\]\((https?://[^)\s]+)\)")
_HEADING = lazyre.compile(r"^#{1,6}[ \t]+(.+?)[ \t]*#*[ \t]*$", re.M)
_BOLD = lazyre.compile(r"\*\*(?=\S)(.+?)(?<=\S)\*\*|__(?=\S)(.+?)(?<=\S)__", re.S)
_ITALIC = lazyre.compile(r"(?<![*\w])\*(?=[^\s*])([^*\n]+?)(?<=[^\s*])\*(?![*\w])")
_STRIKE = lazyre.compile(r"~~(?=\S)(.+?)(?<=\S)~~")
_BULLET = lazyre.compile(r"^([ \t]*)[-*+][ \t]+", re.M)
_BOLD_MARK = "\x02"


def escape(text: str) -> str:
    """Slack's three control characters."""
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def unescape(text: str) -> str:
    return text.replace("&lt;", "<").replace("&gt;", ">").replace("&amp;", "&")


def to_mrkdwn(text: str) -> str:
    """**bold** -> *bold*, *italic* -> _italic_, ~~strike~~ -> ~strike~, [t](u) -> <u|t>, headings -> bold
    lines, list bullets -> •; code spans and fences kept as they are (only & < > escaped, as Slack wants)."""
    out = []
    for i, part in enumerate(_CODE.split(text)):
        out.append(escape(part) if i % 2 else _prose(part))
    return "".join(out)


def _prose(part: str) -> str:
    links: list[str] = []

    def keep_link(m: re.Match) -> str:
        links.append(f"<{escape(m.group(2))}|{escape(m.group(1))}>")
        return f"\x00{len(links) - 1}\x00"

    part = escape(_LINK.sub(keep_link, part))
    part = _HEADING.sub(lambda m: f"{_BOLD_MARK}{m.group(1).strip('*')}{_BOLD_MARK}", part)
    part = _BOLD.sub(lambda m: f"{_BOLD_MARK}{m.group(1) or m.group(2)}{_BOLD_MARK}", part)
    part = _ITALIC.sub(r"_\1_", part)
    part = _STRIKE.sub(r"~\1~", part)
    part = _BULLET.sub(r"\1• ", part)
    part = part.replace(_BOLD_MARK, "*")
    return re.sub("\x00(\\d+)\x00", lambda m: links[int(m.group(1))], part)


def pieces(text: str, limit: int = MAX_LENGTH) -> list[str]:
    """The mrkdwn messages a reply is sent as: split at paragraph/line/sentence/word boundaries, a code fence
    cut in two closed at the end of one piece and reopened at the start of the next."""
    out: list[str] = []
    for piece in split_fenced(text or "(empty reply)", limit):
        converted = to_mrkdwn(piece)
        out.extend(split_text(converted, limit + 1000) if len(converted) > limit + 1000 else [converted])
    return out


def approval_blocks(text: str, buttons: list[tuple[str, str]]) -> list[dict]:
    """The prompt as a section (cut to Slack's 3000 characters) and one actions block of buttons; each button's
    `value` carries the gateway's callback data."""
    section = text if len(text) <= SECTION_LIMIT else text[:SECTION_LIMIT - 1] + "…"
    elements = []
    for i, (label, data) in enumerate(buttons):
        button = {"type": "button", "action_id": f"hermes_button_{i}", "value": data,
                  "text": {"type": "plain_text", "text": label, "emoji": True}}
        if data.endswith(":once"):
            button["style"] = "primary"
        elif data.endswith(":deny"):
            button["style"] = "danger"
        elements.append(button)
    return [{"type": "section", "text": {"type": "mrkdwn", "text": section}},
            {"type": "actions", "block_id": "hermes_buttons", "elements": elements}]
