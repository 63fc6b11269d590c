"""The one path for messages that are not a chat's reply (send_message, cron delivery): a target
('telegram' = its home channel, 'telegram:<chat_id>') goes out through the running gateway's adapter when
there is one in this process, else through a one-shot adapter (the platform's API: connect, send, close;
no polling). Home channels are Hermes's `<PLATFORM>_HOME_CHANNEL` (.env), set by `/sethome`."""

from __future__ import annotations

import asyncio
import importlib
import logging
import threading
from collections.abc import Mapping
from typing import TYPE_CHECKING

from hermes_agent import paths
from hermes_agent.config.settings import Settings
from hermes_agent.gateway.base import PlatformAdapter, platform_conf
from hermes_agent.gateway.platforms import PLATFORMS
from hermes_agent.gateway.session import discard, media_of
from hermes_agent.tools.builtin.send_message import DeliveryError

if TYPE_CHECKING:
    from pathlib import Path

    from hermes_agent.approval.policy import PathPolicy

log = logging.getLogger(__name__)
SEND_TIMEOUT = 60.0


def home_env_key(platform: str) -> str:
    return f"{platform.upper()}_HOME_CHANNEL"


class HomeChannels:
    """platform -> home chat id: `<PLATFORM>_HOME_CHANNEL` from the settings' environment (.env included),
    changed live by `/sethome`, which also writes it to HERMES_HOME/.env (as Hermes does)."""

    def __init__(self, env: Mapping[str, str]) -> None:
        self._lock = threading.Lock()
        self._homes = {name: str(env[home_env_key(name)]).strip() for name, _ in PLATFORMS
                       if str(env.get(home_env_key(name)) or "").strip()}

    def get(self, platform: str) -> str | None:
        with self._lock:
            return self._homes.get(platform)

    def set(self, platform: str, chat_id: str) -> Path:
        """Make `chat_id` the platform's home channel, here and in .env; returns the .env path."""
        from hermes_agent.config.edit import set_env_values

        env_file = paths.env_path()
        with self._lock:
            set_env_values(env_file, {home_env_key(platform): str(chat_id)})
            self._homes[platform] = str(chat_id)
        return env_file


def resolve(target: str, homes: HomeChannels) -> tuple[str, str]:
    """(platform, chat_id) of a target ('origin' with no chat: the first home channel); an unknown platform
    or a missing home channel is a DeliveryError."""
    platform, _, chat = target.strip().partition(":")
    platform = platform.strip().lower()
    if platform == "origin":  # a job made outside any chat: the first platform with a home channel
        platform = next((name for name, _ in PLATFORMS if homes.get(name)), "")
        if not platform:
            raise DeliveryError("origin: the job was not created from a chat and no home channel is set")
    if platform not in dict(PLATFORMS):
        known = ", ".join(name for name, _ in PLATFORMS)
        raise DeliveryError(f"Unknown platform: {platform or target} (known: {known})")
    chat = chat.strip() or (homes.get(platform) or "")
    if not chat:
        raise DeliveryError(f"No home channel set for {platform} to determine where to send the message. "
                            f"Either specify a chat directly with '{platform}:CHAT_ID', send /sethome in the chat "
                            f"that should be home, or set it via: hermes config set {home_env_key(platform)} <chat_id>")
    return platform, chat


async def deliver(adapter: PlatformAdapter, chat_id: str, text: str, scope: str = "",
                  policy: PathPolicy | None = None) -> None:
    """Send `text` (MEDIA:/path lines as attachments: what the sender's `policy` lets its commands read, and of
    HERMES_HOME's media only its `scope`) through a connected adapter; a refusal raises."""
    body, files = media_of(text, scope, policy)
    try:
        if body.strip() or not files:
            if await adapter.send(chat_id, body) is None:
                raise DeliveryError(f"{adapter.name} refused the message to {chat_id}: "
                                    f"{getattr(adapter, 'last_error', '') or 'no message id returned'}")
        for path in files:
            if await adapter.send_file(chat_id, path) is None:
                raise DeliveryError(f"{adapter.name} refused the file {path.name} to {chat_id}")
    finally:
        discard(files)


class Outbox:
    """The Messenger of this process: the gateway's live adapters (run on its loop) when it runs here,
    else a one-shot adapter per send built from the settings (as `hermes cron daemon` needs)."""

    def __init__(self, settings: Settings, homes: HomeChannels | None = None,
                 adapters: Mapping[str, PlatformAdapter] | None = None,
                 loop: asyncio.AbstractEventLoop | None = None) -> None:
        self.settings = settings
        self.homes = homes or HomeChannels(settings.env)
        self.adapters = dict(adapters or {})
        self.loop = loop

    def send(self, target: str, text: str, scope: str = "", policy: PathPolicy | None = None) -> str:
        platform, chat_id = resolve(target, self.homes)
        adapter = self.adapters.get(platform)
        if adapter is not None and self.loop is not None:
            future = asyncio.run_coroutine_threadsafe(deliver(adapter, chat_id, text, scope, policy), self.loop)
            try:
                future.result(SEND_TIMEOUT)
            except TimeoutError:
                future.cancel()
                raise DeliveryError(f"{platform} did not accept the message within {SEND_TIMEOUT:g}s") from None
        else:
            asyncio.run(asyncio.wait_for(self._one_shot(platform, chat_id, text, scope, policy), SEND_TIMEOUT))
        return f"{platform}:{chat_id}"

    async def _one_shot(self, platform: str, chat_id: str, text: str, scope: str = "",
                        policy: PathPolicy | None = None) -> None:
        adapter = self._build(platform)
        if adapter is None:
            raise DeliveryError(f"{platform} is not configured here (set its token, e.g. "
                                f"{platform.upper()}_BOT_TOKEN, in HERMES_HOME/.env)")
        try:
            await adapter.connect()
            await deliver(adapter, chat_id, text, scope, policy)
        finally:
            await adapter.stop()

    def _build(self, platform: str) -> PlatformAdapter | None:
        conf = platform_conf(self.settings.cfg.platforms, platform)
        if conf.get("enabled", True) is False:
            return None
        return importlib.import_module(dict(PLATFORMS)[platform]).from_settings(self.settings, conf)

    def targets(self) -> list[dict]:
        """Each platform this process can send to (live, or configured for a one-shot send) and its home."""
        out = []
        for name, _ in PLATFORMS:
            live = name in self.adapters
            if live or self._build(name) is not None:
                home = self.homes.get(name)
                out.append({"platform": name, "target": name, "home_channel": home,
                            "via": "gateway" if live else "direct",
                            "note": None if home else f"no home channel: use '{name}:<chat_id>' or /sethome"})
        return out
