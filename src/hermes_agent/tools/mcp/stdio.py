"""A stdio MCP server's process and its message streams, started before the `mcp` SDK is loaded.

The SDK's `stdio_client` spawns the server only once the SDK is imported (~1 s of CPU), so a server that dies
at start, or one slow to start, cost that import first. Here the process starts at once and the SDK loads on a
worker thread meanwhile: a server that exits before the SDK is loaded fails its attempt then (no SDK import
waited for), and a healthy one starts while the SDK loads. The streams and the shutdown are the SDK's contract
(`ClientSession(read, write)`): one JSON-RPC message per line; at the end stdin is closed, the server gets 2 s
to exit, then its process group SIGTERM, 2 s more, SIGKILL (what the Landlock keeper and bwrap's pid namespace
rely on: tools/mcp/README.md)."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import threading
from collections.abc import AsyncIterator

INHERITED = ("HOME", "LOGNAME", "PATH", "SHELL", "TERM", "USER")  # as the SDK's get_default_environment
EXIT_GRACE_S = 2.0  # after stdin closes
KILL_GRACE_S = 2.0  # after the group's SIGTERM
LINE_LIMIT = 64 * 1024 * 1024  # one message; a longer line ends the connection


class ServerExited(Exception):
    """The server process ended before the SDK was even loaded."""


async def spawn(argv: list[str], env: dict[str, str], cwd: str | None, errlog: int) -> asyncio.subprocess.Process:
    """Start the server in a process group of its own, stdin/stdout piped, stderr to the fd `errlog` (the
    pipe of errlog.StderrRelay, which stores it terminal-safe)."""
    full = {k: v for k in INHERITED if (v := os.environ.get(k)) is not None and not v.startswith("()")}
    full.update(env)
    return await asyncio.create_subprocess_exec(
        *argv, stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE, stderr=errlog, env=full, cwd=cwd,
        start_new_session=True, limit=LINE_LIMIT)


def _load_sdk() -> None:
    import mcp  # noqa: F401
    import mcp.shared.message  # noqa: F401


async def load_sdk_unless_exited(proc: asyncio.subprocess.Process) -> None:
    """Load the SDK on a worker thread; raise ServerExited when the server ends first (the thread finishes the
    import in the background: a retry needs it)."""
    loop = asyncio.get_running_loop()
    sdk: asyncio.Future = loop.create_future()

    def load() -> None:
        failed: BaseException | None = None
        try:
            _load_sdk()
        except BaseException as exc:  # handed to the awaiting task
            failed = exc
        with contextlib.suppress(RuntimeError):  # the loop closed meanwhile (the run ended): nobody waits
            loop.call_soon_threadsafe(_settle, sdk, failed)

    # a daemon thread of its own: a run that ends meanwhile does not wait for the import (executor threads are
    # joined at exit)
    threading.Thread(target=load, name="hermes-mcp-sdk", daemon=True).start()
    gone = asyncio.ensure_future(proc.wait())
    try:
        await asyncio.wait({sdk, gone}, return_when=asyncio.FIRST_COMPLETED)
    finally:
        gone.cancel()
    if not sdk.done():
        sdk.add_done_callback(lambda f: f.cancelled() or f.exception())  # never "exception was never retrieved"
        raise ServerExited(f"the server exited with code {proc.returncode} before it answered")
    sdk.result()


def _settle(future: asyncio.Future, exc: BaseException | None) -> None:
    if not future.done():
        future.set_exception(exc) if exc is not None else future.set_result(None)


@contextlib.asynccontextmanager
async def streams(proc: asyncio.subprocess.Process) -> AsyncIterator[tuple[object, object]]:
    """(read, write) memory streams of SessionMessage over the process's stdout/stdin; stops the process when
    the block ends (shielded: a cancelled caller still never leaves the server running)."""
    import anyio
    from mcp import types
    from mcp.shared.message import SessionMessage

    parse = getattr(types, "jsonrpc_message_adapter", None)
    read_writer, read_stream = anyio.create_memory_object_stream(0)
    write_stream, write_reader = anyio.create_memory_object_stream(0)

    def message(line: bytes) -> object:
        try:
            if parse is not None:
                return SessionMessage(parse.validate_json(line, by_name=False))
            return SessionMessage(types.JSONRPCMessage.model_validate_json(line))
        except ValueError as exc:  # handed to the session, which reports it
            return exc

    async def reader() -> None:
        assert proc.stdout is not None
        async with read_writer:
            while True:
                try:
                    line = await proc.stdout.readline()
                except (ValueError, OSError, ConnectionError):  # a line past LINE_LIMIT, a broken pipe
                    return
                if not line:
                    return
                if not line.strip():
                    continue
                try:
                    await read_writer.send(message(line))
                except (anyio.ClosedResourceError, anyio.BrokenResourceError):
                    return

    async def writer() -> None:
        assert proc.stdin is not None
        try:
            async with write_reader:
                async for item in write_reader:
                    data = item.message.model_dump_json(by_alias=True, exclude_unset=True) + "\n"
                    proc.stdin.write(data.encode())
                    await proc.stdin.drain()
        except (anyio.ClosedResourceError, anyio.BrokenResourceError, OSError, ConnectionError):
            await read_writer.aclose()  # the session sees the end instead of waiting forever

    tasks = [asyncio.ensure_future(reader()), asyncio.ensure_future(writer())]
    try:
        yield read_stream, write_stream
    finally:
        with anyio.CancelScope(shield=True):
            await write_stream.aclose()
            await read_stream.aclose()
            await stop(proc)
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)


async def stop(proc: asyncio.subprocess.Process) -> None:
    """Close stdin and let the server exit by itself for EXIT_GRACE_S; else SIGTERM its process group, SIGKILL
    what is left of the group KILL_GRACE_S later, and wait for the leader to be reaped (the SDK's order)."""
    if proc.stdin is not None:
        with contextlib.suppress(OSError, RuntimeError):
            proc.stdin.close()
    if await _exited(proc, EXIT_GRACE_S):
        return
    pgid = proc.pid  # the leader's pid is the group's (start_new_session); getpgid fails once it is reaped
    try:
        os.killpg(pgid, signal.SIGTERM)
    except ProcessLookupError:
        return
    except PermissionError:
        pass
    loop = asyncio.get_running_loop()
    deadline = loop.time() + KILL_GRACE_S
    while _group_alive(pgid):
        if loop.time() >= deadline:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(pgid, signal.SIGKILL)
            break
        await asyncio.sleep(0.02)
    await _exited(proc, KILL_GRACE_S)


def _group_alive(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


async def _exited(proc: asyncio.subprocess.Process, timeout: float) -> bool:
    """The process ended within `timeout` (returncode polled: wait() would also wait for a pipe a surviving
    descendant keeps open)."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while proc.returncode is None:
        if loop.time() >= deadline:
            return False
        await asyncio.sleep(0.01)
    return True
