"""Driving the real `hermes` REPL in a pseudo-terminal (pexpect): screen text without escape codes, and
what the scripted model server received."""

from __future__ import annotations

import os
import re
import time
from pathlib import Path

import pexpect

from tests.helpers import HERMES

ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]|\x1b\][^\x07]*\x07|\x1b[()][A-Z0-9]|\x1b[=>]|[\r\x08]")
PROMPT = "❯ "


class Repl:
    """Drives one `hermes` process; `expect` searches the screen text with escape codes removed."""

    def __init__(self, home: Path, cwd: Path, *args: str, env: dict | None = None) -> None:
        extra = env or {}
        env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "OPENROUTER_", "HERMES_"))}
        env.update(HERMES_HOME=str(home), TERM="xterm", PROMPT_TOOLKIT_NO_CPR="1", COLUMNS="120", LINES="40")
        env.update(extra)
        self.child = pexpect.spawn(HERMES, list(args), env=env, cwd=str(cwd), dimensions=(40, 120),
                                   encoding="utf-8", codec_errors="replace", timeout=15)
        self.raw = ""
        self.pos = 0  # search position in the stripped text

    @property
    def text(self) -> str:
        return ANSI.sub("", self.raw)

    def _pump(self, wait: float) -> None:
        try:
            self.raw += self.child.read_nonblocking(65536, timeout=wait)
        except pexpect.TIMEOUT:
            pass
        except pexpect.EOF:
            if not self.child.isalive():
                raise

    def expect(self, pattern: str, timeout: float = 15.0, *, anywhere: bool = False) -> re.Match:
        """Wait until `pattern` (a regex) appears after the previous match (or anywhere on screen, for
        lines whose order against the banner is not fixed); return the match."""
        deadline = time.monotonic() + timeout
        rx = re.compile(pattern)
        while True:
            m = rx.search(self.text, 0 if anywhere else self.pos)
            if m:
                self.pos = m.end()
                return m
            if time.monotonic() > deadline:
                raise AssertionError(f"{pattern!r} not seen; screen text after last match:\n{self.text[self.pos:]}")
            self._pump(0.05)

    def ready(self) -> None:
        """Wait for the prompt and for the agent (the banner's tools line)."""
        self.expect(r"\d+ tools from \d+ toolset")
        self.expect(PROMPT)

    def send(self, line: str) -> None:
        self.child.send(line + "\r")

    def exit(self) -> int:
        self.child.sendcontrol("d")
        self.child.expect(pexpect.EOF, timeout=15)
        self.child.close()
        return self.child.exitstatus

    def close(self) -> None:
        if self.child.isalive():
            self.child.terminate(force=True)


def wait_requests(server, n: int, timeout: float = 10.0) -> list[dict]:
    deadline = time.monotonic() + timeout
    while len(server.requests) < n:
        if time.monotonic() > deadline:
            raise AssertionError(f"expected {n} model requests, got {len(server.requests)}")
        time.sleep(0.02)
    return [r["body"] for r in server.requests]


def convo(body: dict) -> list[tuple[str, str]]:
    """(role, content) of the non-system messages of a request."""
    return [(m["role"], m.get("content") or "") for m in body["messages"] if m["role"] != "system"]
