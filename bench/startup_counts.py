"""Deterministic start-up cost of `hermes`: modules imported, regular expressions compiled and dataclasses built
(and, for information only, CPU time) by `hermes --version`, `hermes --help` and by `hermes chat -q` up to its first model request (no clock involved).

Usage: python bench/startup_counts.py version|help|chat|gateway|prompt|keptprompt   (prints one JSON object;
`gateway`: `hermes gateway run` up to its first Bot API call (getMe: the count is taken at its name lookup,
so it also ends for Telegram's own api.telegram.org offline; the budget's home points
platforms.telegram.extra.base_url at a loopback URL, gateway_default's has no platforms section); `prompt`: the
interactive `hermes` up to its early prompt symbol; `keptprompt`: the same on a pseudo-terminal when the last run
kept its banner (cli/fast_prompt.py; a first run keeps it and exits 3); `chat` needs HERMES_HOME set to a
home whose config points the model at a loopback URL: the count is taken when the first connection to it
starts, and the process ends there). tests/unit/test_startup_budget.py checks the figures against
bench/budgets.json."""

from __future__ import annotations

import json
import os
import sys
import time

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable

_counts = {"regexes": 0, "dataclasses": 0, "argparse_usage_regexes": 0, "dataclasses_before_cache": 0}
HEAVY = ("http.client", "email", "ssl", "asyncio", "prompt_toolkit", "logging")  # big stdlib/library imports kept off the chat path


def _count_regexes() -> None:
    import re._compiler as compiler  # re itself is loaded by the interpreter's start-up here

    real = compiler.compile

    def counting(p: object, flags: int = 0) -> object:
        if _from_argparse_usage():
            _counts["argparse_usage_regexes"] += 1
        else:
            _counts["regexes"] += 1
        return real(p, flags)

    compiler.compile = counting


def _from_argparse_usage() -> bool:
    """Whether argparse's usage line formatter asked for this pattern: the patterns it compiles differ between
    Python patch releases (3.11.2's has one more than 3.11.7's, 3.13's none), so they are counted apart and the
    same hermes code gives the same `regexes` figure on any interpreter (the normal user's venv is Debian's)."""
    frame = sys._getframe(2)
    while frame is not None:
        if frame.f_code.co_name in ("_format_usage", "_format_actions_usage") and \
                frame.f_code.co_filename.endswith("argparse.py"):
            return True
        frame = frame.f_back
    return False


def _count_dataclasses() -> None:
    """Counts each dataclass built, from when hermes imports `dataclasses` (not imported here first: hermes imports
    it without `inspect`, hermes_agent/dccache.py, and the modules it brings are part of the count)."""
    _when_imported("dataclasses", _wrap)


def _hold_background() -> None:
    """Work hermes starts on a thread without waiting for it (hermes_agent.background: the session store's
    opening, the sandbox warm-up) is off the path to the first request: it never runs here, so what it imports
    is not counted, whichever thread the scheduler happened to run first."""
    def held(module: object) -> None:  # (threading is not imported here: hermes's own import of it is counted)
        module.start = lambda work: module.threading.Event()  # type: ignore[attr-defined]

    _when_imported("hermes_agent.background", held)


def _when_imported(wanted: str, patch: Callable[[object], None]) -> None:
    """Call `patch(module)` as `wanted` is first imported (by hermes, so that it and its imports are counted)."""
    path_finder = next(f for f in sys.meta_path if getattr(f, "__name__", "") == "PathFinder")  # (no import)

    class _Finder:  # wraps the module's loader: the patch goes in as the module is executed
        @staticmethod
        def find_spec(name: str, path: object = None, target: object = None) -> object:
            if name != wanted:
                return None
            sys.meta_path.remove(_Finder)  # type: ignore[arg-type]
            spec = path_finder.find_spec(name, path)
            real_exec = spec.loader.exec_module  # type: ignore[union-attr]

            def exec_module(module: object) -> None:
                real_exec(module)
                patch(module)

            spec.loader.exec_module = exec_module  # type: ignore[union-attr]
            return spec

    sys.meta_path.insert(0, _Finder)  # type: ignore[arg-type]


def _wrap(dataclasses: object) -> None:
    real = dataclasses._process_class  # type: ignore[attr-defined]

    def counting(*args: object, **kw: object) -> object:
        _counts["dataclasses"] += 1
        cache = sys.modules.get("hermes_agent.dccache")
        if cache is None or "file" not in cache._state:  # type: ignore[attr-defined]
            _counts["dataclasses_before_cache"] += 1  # its methods compiled from source on every start
        return real(*args, **kw)

    dataclasses._process_class = counting  # type: ignore[attr-defined]


def main() -> int:
    what = sys.argv[1] if len(sys.argv) > 1 else "version"
    _count_regexes()
    _count_dataclasses()
    _hold_background()
    before = set(sys.modules)
    for k in _counts:
        _counts[k] = 0

    def report() -> None:
        hermes = sorted(m for m in set(sys.modules) - before if m.startswith("hermes_agent"))
        out = {"modules": len(set(sys.modules) - before), "hermes_modules": len(hermes), **_counts,
               "cpu_ms": round(time.process_time() * 1000, 1), "mcp_imported": "mcp" in sys.modules,
               "heavy_imported": [m for m in HEAVY if m in sys.modules],
               "hermes_module_names": hermes}
        sys.__stdout__.write(json.dumps(out) + "\n")
        sys.__stdout__.flush()

    if what in ("chat", "gateway"):
        def on_event(event: str, args: tuple) -> None:
            # the first connection to an IP endpoint (not a unix socket) starts with its name lookup: the count
            # is taken there, so a host nobody answers for (Telegram's default api.telegram.org offline) ends it too
            if event == "socket.getaddrinfo" or (event == "socket.connect" and isinstance(args[1], tuple)):
                report()
                os._exit(0)  # the first model request is about to leave: that is the whole measure

        sys.addaudithook(on_event)
        argv = ["chat", "-q", "hi", "-Q"] if what == "chat" else ["gateway", "run"]
        if what == "gateway":  # Telegram at HERMES_HOME's platforms.telegram.extra.base_url: counted at its first call
            os.environ.setdefault("TELEGRAM_BOT_TOKEN", "1:budget")
            os.environ.setdefault("GATEWAY_ALLOW_ALL_USERS", "true")
    elif what == "prompt":  # the interactive `hermes`, up to the early prompt symbol (the REPL's banner line)
        class _Tty:  # stdin as a terminal: `hermes` with no message opens the REPL
            def __init__(self, real: object) -> None:
                self.real = real

            def isatty(self) -> bool:
                return True

            def __getattr__(self, name: str) -> object:
                return getattr(self.real, name)

        class _Until:  # stdout that reports and ends the process when the prompt symbol is written
            def __init__(self, real: object) -> None:
                self.real = real

            def write(self, text: str) -> int:
                if "\u276f" in text:
                    sys.stdout = sys.__stdout__
                    report()
                    os._exit(0)
                return len(text)

            def __getattr__(self, name: str) -> object:
                return getattr(self.real, name)

        sys.stdin = _Tty(sys.stdin)  # type: ignore[assignment]
        from hermes_agent.cli.main import main as prompt_main

        sys.stdout = _Until(sys.stdout)  # type: ignore[assignment]
        prompt_main([])
        print("hermes returned without showing its prompt", file=sys.stderr)
        return 1
    elif what == "keptprompt":  # a plain `hermes` on a terminal whose last run kept its banner (cli/fast_prompt.py)
        return _kept_prompt(report)
    elif what == "help":
        argv = ["--help"]
    else:
        argv = ["--version"]
    from hermes_agent.cli.main import main as hermes_main

    saved, sys.stdout = sys.stdout, open(os.devnull, "w")  # noqa: SIM115
    try:
        code = hermes_main(argv)
    except SystemExit as exc:  # argparse's --help
        code = exc.code
    finally:
        sys.stdout = saved
    if what in ("chat", "gateway"):
        print(f"hermes exited ({code}) without contacting the {'model' if what == 'chat' else 'Bot API'}",
              file=sys.stderr)
        return 1
    report()
    return 0


def _kept_prompt(report: object) -> int:
    """`hermes` on a pseudo-terminal up to the prompt symbol; the report goes to the original stdout. With no kept
    banner (or one whose key misses) the first run draws the prompt after the settings and keeps it for the next."""
    real_out = os.dup(1)
    master, slave = os.openpty()
    os.dup2(slave, 0)
    os.dup2(slave, 1)
    sys.stdin = open(0, encoding="utf-8", closefd=False)  # noqa: SIM115
    sys.stdout = sys.__stdout__ = open(real_out, "w", encoding="utf-8", closefd=False)  # noqa: SIM115
    write = os.write

    class _Tty:  # what hermes writes to the terminal: the prompt symbol ends the count
        def write(self, text: str) -> int:
            if "\u276f" in text and os.write is watching:
                _reported()
            return len(text)

        def flush(self) -> None:
            pass

        def isatty(self) -> bool:
            return True

        def fileno(self) -> int:
            return slave

    def _reported() -> None:
        report()  # type: ignore[operator]
        os._exit(0)

    def watching(fd: int, data: bytes) -> int:
        if fd == slave and "\u276f".encode() in data:
            _reported()
        return write(fd, data)

    from hermes_agent.cli import fast_prompt

    home = fast_prompt.home_dir()
    kept = fast_prompt._read(home)
    if kept is None or kept[1] != fast_prompt.key(home):  # a first run: on to the banner's keeping, then out
        real_save = fast_prompt.save

        def save_and_leave(*args: object) -> None:
            real_save(*args)  # type: ignore[arg-type]
            print("kept the banner: run again to count", file=sys.stderr)
            os._exit(3)

        fast_prompt.save = save_and_leave  # type: ignore[assignment]
    else:
        os.write = watching  # type: ignore[assignment]
    tty = _Tty()
    from hermes_agent.cli.main import main as prompt_main

    saved, sys.stdout = sys.stdout, tty  # type: ignore[assignment]
    try:
        prompt_main([])
    finally:
        sys.stdout = saved
        os.close(master)
    print("hermes returned without showing its prompt", file=sys.stderr)
    return 1


if __name__ == "__main__":
    raise SystemExit(main())
