"""A file a running background process may execute, written later by write_file/patch (rt15b e12): judged at
write time as if it ran now. A background process is judged once, at spawn, on the files it names as they are
then (terminal/judged.py); a loop that runs `go.sh` once it appears, `sleep 4; make -f M`, or a watcher
(`nodemon`, `entr`, `watchexec`, a `while` loop) runs whatever is there later. So when a live background
process names the written file (its path or its name as a word of the command), or is a watcher or a loop that
may run any file, the new content becomes the command the approval gate judges (approval/gate.py `_decide`):
shell by default, python/node/make by the file's kind or the command that runs it. Nothing runs, nothing is
imported, when no background process is alive."""

from __future__ import annotations

import os
import re
from collections.abc import Callable

from hermes_agent.approval.subject import heredoc
from hermes_agent.lazyre import compile as lazy

_WATCHER = lazy(r"(?:^|[\s;&|(])(?:while|until|watch|entr|nodemon|watchexec|watchmedo|inotifywait|fswatch|reflex|"
                r"when-changed|onchange|chokidar|air|modd|ptw|pytest-watch|cargo\s+watch|npm\s+run\s+(?:dev|watch)|"
                r"tsc\s+(?:-w|--watch)|make)\b")
_RUNNERS = {"python": "python3 -", "node": "node -", "make": "make -f -"}


def _language(path: str, commands: list[str]) -> str:
    base = os.path.basename(path)
    ext = base.rsplit(".", 1)[-1].lower() if "." in base else ""
    if ext == "py":
        return "python"
    if ext in ("js", "mjs", "cjs", "ts"):
        return "node"
    if base in ("Makefile", "makefile", "GNUmakefile") or ext == "mk" or any(
            re.search(r"\bmake\b[^;&|\n]*\s-f\s*" + re.escape(base) + r"(?:\s|$)", c) for c in commands):
        return "make"
    return "sh"


def _names(command: str, path: str) -> bool:
    """`command` mentions `path` (as written, or its file name) as a word."""
    words = set(re.split(r"[\s;&|()<>'\"`=]+", command))
    base = os.path.basename(path.rstrip("/"))
    return bool(base) and (path in words or base in words or any(w.endswith("/" + base) for w in words))


def as_run(paths: list[str], args: dict, new_text: Callable[[str, str, dict], str | None]) -> str:
    """The text to judge as a command for writing `paths` while background processes run ("" when none may run
    them). `new_text(path, real, args)` is the file's content after the call (files.py)."""
    from hermes_agent.terminal.processes import get_manager

    commands = get_manager().running_commands()
    if not commands:
        return ""
    out = []
    for path in paths:
        if not any(_names(c, path) or _WATCHER.search(c) for c in commands):
            continue
        raw = os.path.expanduser(path.strip())
        text = new_text(path, os.path.realpath(raw if os.path.isabs(raw) else os.path.join(os.getcwd(), raw)), args)
        if not text or not text.strip():
            continue
        lang = _language(path, commands)
        out.append(text if lang == "sh" else heredoc(_RUNNERS[lang], text, "HERMES_WRITTEN_FILE"))
    return "\n".join(out)
