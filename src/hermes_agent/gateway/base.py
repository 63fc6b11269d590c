"""The PlatformAdapter seam: adapters translate a platform's API to these calls and nothing more."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol


@dataclass(frozen=True, slots=True)
class Inbound:
    """One accepted platform event: a text message or a button press (`callback_data` set)."""

    platform: str
    event_id: int
    chat_id: str
    user_id: str
    user_name: str
    text: str
    is_dm: bool = True
    callback_data: str | None = None
    callback_id: str | None = None
    extra: dict = field(default_factory=dict)


Handler = Callable[[Inbound], Awaitable[None]]


def platform_conf(platforms: Mapping[str, object], name: str, key: str = "") -> dict:
    """`platforms.<name>` of config.yaml (or its `key` part, e.g. `extra`) as a mapping: {} when absent or not one."""
    conf = platforms.get(name)
    if key and isinstance(conf, dict):
        conf = conf.get(key)
    return conf if isinstance(conf, dict) else {}


class PlatformAdapter(Protocol):
    """Connect, receive (through `handler`), acknowledge, send text and files, edit, typing. No policy lives here.
    Every adapter in platforms/ implements all of it (their `from_settings` return this type: the checker sees)."""

    name: str
    max_length: int

    async def start(self, handler: Handler) -> None:
        """Connect and start delivering events to `handler` (returns once polling runs)."""
        ...

    async def connect(self) -> None:
        """Ready to send without receiving (a one-shot send: `hermes cron`, send_message outside the gateway)."""
        ...

    async def stop(self) -> None: ...

    def ack(self, event_ids: list[int] | tuple[int, ...]) -> None:
        """These inbound events are answered: never handed over again (the adapter's inbox, across restarts)."""
        ...

    async def download(self, file_id: str, target: Path) -> Path:
        """Fetch an inbound attachment (voice note, image, document) to `target`; returns where it landed."""
        ...

    async def send_file(self, chat_id: str, path: Path, caption: str = "") -> str | None:
        """Send a file (an image as a photo where the platform has them); the message id, None when refused."""
        ...

    async def send(self, chat_id: str, text: str, buttons: list[tuple[str, str]] | None = None) -> str | None:
        """Send `text` (split by the adapter if too long); returns the last message id."""
        ...

    async def edit(self, chat_id: str, message_id: str, text: str) -> None: ...

    async def typing(self, chat_id: str) -> None: ...

    async def answer_callback(self, callback_id: str, text: str = "") -> None: ...

    async def open_dm(self, user_id: str) -> str:
        """The chat id of a direct conversation with this user, opened when the platform needs that (Discord: a DM
        channel, Slack: conversations.open; Telegram and WhatsApp: the user id itself). Raises OSError when the
        platform refuses (the user blocks DMs, shares no server with the bot)."""
        ...

    def status(self) -> dict: ...


def split_text(text: str, limit: int) -> list[str]:
    """Pieces of at most `limit` characters, cut at a paragraph, line, sentence or word boundary when one
    lies in the second half of the window, mid-word only when there is none."""
    pieces: list[str] = []
    rest = text
    while len(rest) > limit:
        window = rest[:limit]
        cut = -1
        for sep in ("\n\n", "\n", ". ", " "):
            pos = window.rfind(sep)
            if pos >= limit // 2:
                cut = pos + len(sep)
                break
        if cut <= 0:
            cut = limit
        pieces.append(rest[:cut].rstrip())
        rest = rest[cut:].lstrip("\n")
    if rest.strip() or not pieces:
        pieces.append(rest)
    return pieces


def _open_fence(text: str, opener: str = "") -> str:
    """The fence line (e.g. "```python") still open at the end of `text`, "" when every fence is closed."""
    for line in text.split("\n"):
        fence = line.strip()
        if not fence.startswith("```"):
            continue
        if opener:
            opener = "" if fence.strip("`") == "" else opener  # a closing fence has no info string
        elif fence.count("```") == 1:  # (a one-line ```code``` span opens nothing)
            info = fence[3:].split()
            opener = "```" + (info[0][:16] if info else "")
    return opener


def split_fenced(text: str, limit: int) -> list[str]:
    """`split_text`'s boundaries (paragraph, line, sentence, word); a code fence a cut falls inside is closed
    at the end of that piece and reopened, with its language, at the start of the next."""
    if len(text) <= limit:
        return [text]
    out: list[str] = []
    opener = ""
    for piece in split_text(text, limit - 24):  # room for a fence line closed and reopened
        body = f"{opener}\n{piece}" if opener else piece
        opener = _open_fence(piece, opener)
        out.append(body + "\n```" if opener else body)
    return out
