"""Allowlists read the names Hermes users write: <PLATFORM>_ALLOWED_USERS, and WHATSAPP_CLOUD_* for WhatsApp."""

from __future__ import annotations

from hermes_agent.config.defaults import DEFAULT_CONFIG
from hermes_agent.config.settings import Settings
from hermes_agent.gateway.routing import Access


def _access(platform: str, env: dict) -> Access:
    return Access.from_settings(Settings(data=dict(DEFAULT_CONFIG), env=env), platform)


def test_whatsapp_cloud_names_are_read():
    access = _access("whatsapp", {"WHATSAPP_CLOUD_ALLOWED_USERS": "15551234567, 15557654321"})
    assert access.allowed == {"15551234567", "15557654321"} and not access.allow_all
    assert _access("whatsapp", {"WHATSAPP_CLOUD_ALLOW_ALL_USERS": "true"}).allow_all
    assert _access("whatsapp", {"WHATSAPP_ALLOWED_USERS": "1"}).allowed == {"1"}


def test_other_platforms_keep_their_own_names():
    assert _access("telegram", {"WHATSAPP_CLOUD_ALLOWED_USERS": "9", "TELEGRAM_ALLOWED_USERS": "42"}).allowed == {"42"}
    assert _access("discord", {"GATEWAY_ALLOW_ALL_USERS": "yes"}).allow_all
