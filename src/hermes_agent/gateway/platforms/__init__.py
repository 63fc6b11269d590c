"""Platform adapters: one file each, each translating one platform's API to the PlatformAdapter seam.

Each module listed here has `from_settings(settings, conf) -> adapter | None` (None: not configured);
`conf` is `platforms.<name>` from config.yaml (enabled/token/extra)."""

PLATFORMS: tuple[tuple[str, str], ...] = (
    ("telegram", "hermes_agent.gateway.platforms.telegram"),
    ("whatsapp", "hermes_agent.gateway.platforms.whatsapp"),
    ("slack", "hermes_agent.gateway.platforms.slack"),
    ("discord", "hermes_agent.gateway.platforms.discord"),
)
