"""A regular expression compiled on first use, so that importing the rules compiles nothing
(ARCHITECTURE.md rule 3). After the first call its methods are the compiled pattern's own bound
methods, so a lookup costs what an attribute lookup costs."""

from __future__ import annotations

import re

_METHODS = ("search", "match", "fullmatch", "sub", "subn", "finditer", "findall", "split")


class LazyRe:
    """Stands in for `re.compile(pattern, flags)` until a method is first called."""

    def __init__(self, pattern: str, flags: int = 0) -> None:
        self.pattern = pattern
        self.flags = flags

    def _compile(self) -> re.Pattern:
        rx = re.compile(self.pattern, self.flags)
        for name in _METHODS:
            setattr(self, name, getattr(rx, name))
        return rx

    def search(self, *args, **kwargs):  # noqa: ANN201 - same as re.Pattern
        return self._compile().search(*args, **kwargs)

    def match(self, *args, **kwargs):  # noqa: ANN201
        return self._compile().match(*args, **kwargs)

    def fullmatch(self, *args, **kwargs):  # noqa: ANN201
        return self._compile().fullmatch(*args, **kwargs)

    def sub(self, *args, **kwargs):  # noqa: ANN201
        return self._compile().sub(*args, **kwargs)

    def subn(self, *args, **kwargs):  # noqa: ANN201
        return self._compile().subn(*args, **kwargs)

    def finditer(self, *args, **kwargs):  # noqa: ANN201
        return self._compile().finditer(*args, **kwargs)

    def findall(self, *args, **kwargs):  # noqa: ANN201
        return self._compile().findall(*args, **kwargs)

    def split(self, *args, **kwargs):  # noqa: ANN201
        return self._compile().split(*args, **kwargs)


def lazy(pattern: str, flags: int = 0) -> LazyRe:
    return LazyRe(pattern, flags)
