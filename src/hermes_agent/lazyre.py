"""Regular expressions compiled on first use: `lazyre.compile(...)` at module level costs nothing until a run
needs the pattern (ARCHITECTURE rule 3). The object answers like the compiled `re.Pattern`."""

from __future__ import annotations

import re
import sys
from collections.abc import Callable, Iterator
from typing import Any


class LazyPattern:
    """Stands in for `re.compile(pattern, flags)`: every attribute (search, sub, pattern, ...) compiles it once."""

    __slots__ = ("_compiled", "_flags", "_pattern")

    def __init__(self, pattern: str, flags: int = 0) -> None:
        self._pattern, self._flags = pattern, flags
        self._compiled: re.Pattern[str] | None = None

    def compiled(self) -> re.Pattern[str]:
        """The real `re.Pattern` (for APIs that insist on one, e.g. `re.sub(p.compiled(), ...)`)."""
        if self._compiled is None:
            self._compiled = re.compile(self._pattern, self._flags)
        return self._compiled

    def match(self, string: str, pos: int = 0, endpos: int = sys.maxsize) -> re.Match[str] | None:
        return self.compiled().match(string, pos, endpos)

    def fullmatch(self, string: str, pos: int = 0, endpos: int = sys.maxsize) -> re.Match[str] | None:
        return self.compiled().fullmatch(string, pos, endpos)

    def search(self, string: str, pos: int = 0, endpos: int = sys.maxsize) -> re.Match[str] | None:
        return self.compiled().search(string, pos, endpos)

    def finditer(self, string: str, pos: int = 0, endpos: int = sys.maxsize) -> Iterator[re.Match[str]]:
        return self.compiled().finditer(string, pos, endpos)

    def findall(self, string: str, pos: int = 0, endpos: int = sys.maxsize) -> list[Any]:
        return self.compiled().findall(string, pos, endpos)

    def sub(self, repl: str | Callable[[re.Match[str]], str], string: str, count: int = 0) -> str:
        return self.compiled().sub(repl, string, count)

    def split(self, string: str, maxsplit: int = 0) -> list[str | Any]:
        return self.compiled().split(string, maxsplit)

    def __getattr__(self, name: str) -> Any:  # the rest of re.Pattern (subn, pattern, groupindex, ...)
        return getattr(self.compiled(), name)

    def __repr__(self) -> str:
        return f"lazyre.compile({self._pattern!r}, {self._flags})"


def compile(pattern: str, flags: int = 0) -> LazyPattern:  # noqa: A001 - mirrors re.compile
    """A pattern compiled the first time it is used."""
    return LazyPattern(pattern, flags)
