"""The interactive `hermes` prompt before anything else loads (issue 24, prompt ready <= 0.15 s): a plain `hermes`
on a terminal draws the banner the previous run drew, with the first line's editor (cli/early_line.py), before
argparse, the settings and their schema load (to the prompt: ~20 M instructions past bare python, not ~185 M).

The banner's inputs are kept in `$HERMES_HOME/.banner-cache` (0600, hidden from commands and file tools like
config.yaml: approval/policy.py HERMES_SECRETS) under a key of everything they come from: hermes's version, the
home, config.yaml's and .env's size/mtime/inode, and the environment variables that set the model, endpoint,
YOLO or colour. Any change misses the key and the prompt comes after the settings, as before. The file is read
without following a link and its text shown with control characters dropped. Standard library `os` only."""

from __future__ import annotations

import os
import sys

from hermes_agent import __version__

TYPE_CHECKING = False  # not `from typing import ...`: this module loads before anything else
if TYPE_CHECKING:
    from hermes_agent.cli.early_line import EarlyLine

CACHE = ".banner-cache"
_FORMAT = "hermes-banner-1"
_shown: list[EarlyLine] = []  # the EarlyLine started here, until chat takes it
_plain: list = []  # [True] for a plain `hermes` on a terminal: its banner is the one to keep


def home_dir() -> str:
    """paths.hermes_home() without pathlib: $HERMES_HOME, else the sticky profile, else ~/.hermes."""
    raw = os.environ.get("HERMES_HOME", "").strip()
    if raw:
        return os.path.expanduser(raw)
    root = os.path.join(os.path.expanduser("~"), ".hermes")
    try:
        with open(os.path.join(root, "active_profile"), encoding="utf-8") as fh:
            name = fh.read().strip()
    except (OSError, ValueError):
        return root
    if name and name != "default" and os.path.isdir(os.path.join(root, "profiles", name)):
        return os.path.join(root, "profiles", name)
    return root


def _stat(path: str) -> str:
    try:
        st = os.stat(path)
    except OSError:
        return "-"
    return f"{st.st_size}:{st.st_mtime_ns}:{st.st_ino}"


def _env_part(name: str) -> bool:
    if name == "NO_COLOR" or name.startswith("TERMINAL_"):
        return True
    return name.startswith(("HERMES_", "OPENAI_", "OPENROUTER_")) and not any(
        s in name for s in ("KEY", "TOKEN", "SECRET"))


def key(home: str) -> str:
    """Everything the banner's lines come from, as one line of text."""
    env = ";".join(f"{k}={v}" for k, v in sorted(os.environ.items()) if _env_part(k))
    return "|".join((__version__, os.path.abspath(home), _stat(os.path.join(home, "config.yaml")),
                     _stat(os.path.join(home, ".env")), env)).replace("\n", " ")


def _clean(text: str) -> str:
    return "".join(c for c in text if c >= " " and not "\x7f" <= c <= "\x9f")


def render(model: str, where: str, yolo: bool, color: bool) -> str:
    """The banner: name, version, model and endpoint, working directory, and the keys worth knowing."""
    def c(code: str, text: str) -> str:
        return f"\x1b[{code}m{text}\x1b[0m" if color else text

    cwd, user_home = os.getcwd(), os.path.expanduser("~")
    if cwd.startswith(user_home + os.sep):
        cwd = "~" + cwd[len(user_home):]
    rows = [
        c("1;36", "⚕ Hermes Agent") + c("2", f" {__version__}"),
        f"  model  {c('1', _clean(model))}" + c("2", f"  via {_clean(where)}"),
        f"  cwd    {_clean(cwd)}",
        c("2", "  /help commands · Alt-Enter newline · Ctrl-C stop · Ctrl-D quit"),
    ]
    if yolo:
        rows.append(c("33", "  YOLO: flagged commands run without asking (hard-line rules still apply)"))
    return "\n".join(rows) + "\n"


def _read(home: str) -> list[str] | None:
    try:
        fd = os.open(os.path.join(home, CACHE), os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError:
        return None
    try:
        st = os.fstat(fd)
        if st.st_uid != os.getuid() or st.st_size > 65536:
            return None
        data = os.read(fd, 65536).decode("utf-8", "replace")
    finally:
        os.close(fd)
    lines = data.split("\n")
    return lines if len(lines) >= 6 and lines[0] == _FORMAT else None


def show(argv: list[str]) -> None:
    """For a plain `hermes` on a terminal with a banner saved under the current key: the banner and the first
    line's editor, now."""
    if argv or not (sys.stdin.isatty() and sys.stdout.isatty()):
        return
    _plain.append(True)
    home = home_dir()
    saved = _read(home)
    if saved is None or saved[1] != key(home):
        return
    from hermes_agent.cli.early_line import EarlyLine

    color = saved[5] != "1"
    line = EarlyLine.start(os.path.join(home, ".hermes_history"), color,
                           before=render(saved[2], saved[3], saved[4] == "1", color))
    if line is not None:
        _shown.append(line)


def take() -> EarlyLine | None:
    """The EarlyLine `show` started (once), or None."""
    return _shown.pop() if _shown else None


def abandon() -> None:
    """hermes ends before the REPL took the line (a config error): the terminal gets its modes back."""
    line = take()
    if line is not None:
        line.finish(leaving=True)


def save(home: str, model: str, where: str, yolo: bool, no_color: bool) -> None:
    """Keep a plain `hermes`'s banner inputs for the next one (written only when they changed)."""
    if not _plain:
        return
    text = "\n".join((_FORMAT, key(home), model.replace("\n", " "), where.replace("\n", " "), "1" if yolo else "0",
                      "1" if no_color else "0", ""))
    path = os.path.join(home, CACHE)
    saved = _read(home)
    if saved is not None and "\n".join(saved) == text:
        return
    tmp = f"{path}.{os.getpid()}.tmp"
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
        try:
            os.write(fd, text.encode("utf-8"))
        finally:
            os.close(fd)
        os.replace(tmp, path)
    except OSError:
        try:
            os.unlink(tmp)
        except OSError:
            pass
