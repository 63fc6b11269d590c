"""Who may talk to the gateway: allowlists, GATEWAY_ALLOW_ALL_USERS, paired users; pairing replies."""

from __future__ import annotations

from dataclasses import dataclass

from hermes_agent.config.settings import Settings
from hermes_agent.gateway.base import Inbound, platform_conf
from hermes_agent.gateway.pairing import PairingStore

_TRUE = ("1", "true", "yes", "on")
_ENV_ALIASES = {"whatsapp": ("WHATSAPP_CLOUD",)}  # Hermes's Cloud API adapter reads WHATSAPP_CLOUD_ALLOWED_USERS


@dataclass(frozen=True, slots=True)
class Access:
    """Access rules of one platform."""

    platform: str
    allowed: frozenset[str]
    allow_all: bool

    @classmethod
    def from_settings(cls, settings: Settings, platform: str) -> Access:
        env = settings.env
        names = (platform.upper(), *_ENV_ALIASES.get(platform, ()))
        raw = ",".join(str(env.get(f"{n}_ALLOWED_USERS", "") or "") for n in names)
        extra = platform_conf(settings.cfg.platforms, platform, "extra").get("allowed_users") or []
        ids = {u.strip() for u in str(raw).split(",") if u.strip()} | {str(u) for u in extra}
        allow_all = str(env.get("GATEWAY_ALLOW_ALL_USERS", "")).lower() in _TRUE or \
            any(str(env.get(f"{n}_ALLOW_ALL_USERS", "")).lower() in _TRUE for n in names)
        return cls(platform, frozenset(ids), allow_all)


def authorized(access: Access, pairing: PairingStore, event: Inbound) -> bool:
    return access.allow_all or event.user_id in access.allowed or pairing.is_approved(access.platform, event.user_id)


def pairing_reply(access: Access, pairing: PairingStore, event: Inbound) -> str | None:
    """The text an unauthorised user gets: a pairing code in a DM when no allowlist is set, else nothing."""
    if access.allowed or not event.is_dm or event.callback_data is not None:
        return None
    result = pairing.request(access.platform, event.user_id, event.user_name)
    if result.code is None:
        return None  # rate limited, too many pending or locked out: silence (no oracle, no spam)
    return (f"Hi! I don't know you yet. Your pairing code is {result.code}\n"
            f"Ask the owner to run: hermes pairing approve {access.platform} {result.code}\n"
            f"(the code expires in 1 hour)")
