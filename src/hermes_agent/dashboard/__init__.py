"""`hermes dashboard`: a token-protected, server-rendered web dashboard (aiohttp, no JavaScript)."""
