"""Regular expressions compiled on first use: `lazyre.compile(...)` at module level costs nothing until a run
needs the pattern (ARCHITECTURE rule 3). The object answers like the compiled `re.Pattern`; after the first
call its matching methods are the compiled pattern's own bound methods, so a lookup costs an attribute lookup."""

from __future__ import annotations

import re

_METHODS = ("search", "match", "fullmatch", "sub", "subn", "finditer", "findall", "split")


class LazyPattern:
    """Stands in for `re.compile(pattern, flags)`: the first use compiles it once."""

    def __init__(self, pattern: str, flags: int = 0) -> None:
        self.pattern, self.flags = pattern, flags
        self._compiled: re.Pattern[str] | None = None

    def compiled(self) -> re.Pattern[str]:
        """The real `re.Pattern` (for APIs that insist on one, e.g. `re.sub(p.compiled(), ...)`)."""
        if self._compiled is None:
            self._compiled = re.compile(self.pattern, self.flags)
            for name in _METHODS:  # later calls skip this object's methods entirely
                setattr(self, name, getattr(self._compiled, name))
        return self._compiled

    def search(self, *args, **kwargs):  # noqa: ANN201 - as re.Pattern
        return self.compiled().search(*args, **kwargs)

    def match(self, *args, **kwargs):  # noqa: ANN201
        return self.compiled().match(*args, **kwargs)

    def fullmatch(self, *args, **kwargs):  # noqa: ANN201
        return self.compiled().fullmatch(*args, **kwargs)

    def sub(self, *args, **kwargs):  # noqa: ANN201
        return self.compiled().sub(*args, **kwargs)

    def subn(self, *args, **kwargs):  # noqa: ANN201
        return self.compiled().subn(*args, **kwargs)

    def finditer(self, *args, **kwargs):  # noqa: ANN201
        return self.compiled().finditer(*args, **kwargs)

    def findall(self, *args, **kwargs):  # noqa: ANN201
        return self.compiled().findall(*args, **kwargs)

    def split(self, *args, **kwargs):  # noqa: ANN201
        return self.compiled().split(*args, **kwargs)

    def __getattr__(self, name: str) -> object:  # groups, groupindex, ...
        if name.startswith("__") or name == "_compiled":
            raise AttributeError(name)
        return getattr(self.compiled(), name)

    def __repr__(self) -> str:
        return f"lazyre.compile({self.pattern!r}, {self.flags})"


def compile(pattern: str, flags: int = 0) -> LazyPattern:  # noqa: A001 - mirrors re.compile
    """A pattern compiled the first time it is used."""
    return LazyPattern(pattern, flags)
