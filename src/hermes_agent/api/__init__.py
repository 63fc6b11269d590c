"""The OpenAI-compatible API server (`hermes api`): aiohttp app, per-conversation agents."""
