"""Loggers that load `logging` when first used (issue 24, speed15): `logging` brings traceback, linecache, tokenize,
textwrap and string, with 11 regexes (~28 M instructions), and `hermes chat -q` logs nothing before its first
request. A module's `log = get_logger(__name__)` is `logging.getLogger(__name__)` from its first call on (the same
logger object: levels, handlers and pytest's caplog are unchanged).

`when_loaded(setup)` runs the CLI's handler setup (cli/logs.py) at once when `logging` is loaded, else right after
its first import, by hermes or by a library (a library's records reach agent.log as before, never logging's bare
last-resort stderr). Standard library `sys` only."""

from __future__ import annotations

import sys

TYPE_CHECKING = False  # not `from typing import ...`: loaded by modules on every command's path
if TYPE_CHECKING:
    import logging
    from collections.abc import Callable

_pending: list[Callable[[], None]] = []


class _Lazy:
    __slots__ = ("_name", "_real")

    def __init__(self, name: str) -> None:
        self._name = name
        self._real: logging.Logger | None = None

    def __getattr__(self, attr: str) -> object:  # (only names that are not slots: debug, info, warning, ...)
        real = self._real
        if real is None:
            import logging

            real = self._real = logging.getLogger(self._name)
        return getattr(real, attr)


def get_logger(name: str) -> logging.Logger:
    """logging.getLogger(name), loaded on its first use."""
    return _Lazy(name)  # type: ignore[return-value]


def when_loaded(then: Callable[[], None]) -> None:
    """Call `then()` now if `logging` is loaded, else as soon as its first import has run."""
    if "logging" in sys.modules:
        then()
        return
    _pending.append(then)
    if _Finder not in sys.meta_path:
        sys.meta_path.insert(0, _Finder)  # type: ignore[arg-type]
    if "logging" in sys.modules:  # another thread's import got past the finders meanwhile: run it here
        _run_pending()


def _run_pending() -> None:
    while True:  # each call popped once (list.pop is atomic): run by whichever thread gets it, never twice
        try:
            then = _pending.pop(0)
        except IndexError:
            return
        then()


class _Finder:
    """Finds nothing itself: for `logging`, the standard path finder's spec with the pending calls run after the
    module's code (importlib.machinery is not imported for it: the finder is taken from sys.meta_path)."""

    @staticmethod
    def find_spec(name: str, path: object = None, target: object = None) -> object:
        if name != "logging":
            return None
        sys.meta_path.remove(_Finder)  # type: ignore[arg-type]
        finder = next(f for f in sys.meta_path if getattr(f, "__name__", "") == "PathFinder")
        spec = finder.find_spec(name, path)  # type: ignore[attr-defined]
        loader = getattr(spec, "loader", None)
        if loader is None:  # (not where the standard library keeps it: the calls run with the next one)
            sys.meta_path.insert(0, _Finder)  # type: ignore[arg-type]
            return spec
        real_exec = loader.exec_module

        def exec_module(module: object) -> None:
            real_exec(module)
            _run_pending()

        loader.exec_module = exec_module
        return spec
