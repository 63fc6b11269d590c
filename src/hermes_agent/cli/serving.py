"""Foreground servers (`hermes api`, `hermes dashboard`): run one until SIGINT/SIGTERM."""

from __future__ import annotations

import asyncio
import signal
from collections.abc import Awaitable, Callable


def serve_until_signal(serve: Callable[[asyncio.Event], Awaitable[None]]) -> None:
    """Run `serve(stop)` on a fresh loop; SIGINT and SIGTERM set `stop`."""

    async def main() -> None:
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(sig, stop.set)
        await serve(stop)

    asyncio.run(main())
