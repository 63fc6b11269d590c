"""Which stored memory entries may enter the system prompt, judged once per content (issue 24: start-up).

Judging entries (scan.py, directives.py and the intent rules of hermes_agent.intent / intent_chain, each entry
alone and with its neighbours) compiles ~70 regular expressions: with a few memories that was ~370 M of the
~780 M instructions `hermes chat -q` spent before its first model request. The verdict is kept in
HERMES_HOME/cache/memory-verdicts.json: the Hermes home, out of the sandbox's sight (issue 19), like the memory
files themselves. An entry list is found again only by the exact text of every entry (compared as text, not a
hash) and only under the same rules: the version stamp holds the Python version and the mtime and size of every
rule module, so an edited entry, an edited rule or another interpreter judges again. A missing, unreadable,
malformed or foreign file means judging afresh; a verdict that does not fit its entries is never used."""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable
from pathlib import Path

_KEEP = 16  # files remembered (MEMORY.md, USER.md, team members' USER.md); the oldest go first
_HERE = os.path.dirname(os.path.abspath(__file__))
_RULE_FILES = (os.path.join(_HERE, "scan.py"), os.path.join(_HERE, "directives.py"),
               os.path.join(os.path.dirname(_HERE), "intent.py"), os.path.join(os.path.dirname(_HERE), "intent_chain.py"),
               os.path.join(os.path.dirname(_HERE), "intent_signals.py"), os.path.join(_HERE, "context_files.py"),
               os.path.abspath(__file__))


def judge(entries: list[str]) -> list[int]:
    """Indexes of the entries that pass: no threat-scan finding, no order to execute, alone or with a neighbour."""
    from hermes_agent.memory.directives import execution_directives, withheld
    from hermes_agent.memory.scan import scan

    joined = withheld(entries)
    return [i for i, e in enumerate(entries) if i not in joined and not scan(e) and not execution_directives(e)]


def rules_version() -> str:
    """Python's version and every rule module's mtime and size: what a kept verdict was judged under."""
    parts = [sys.version]
    for name in _RULE_FILES:
        try:
            st = os.stat(name)
        except OSError:
            return ""  # a rule module we cannot see: never reuse a verdict
        parts.append(f"{st.st_mtime_ns}:{st.st_size}")
    return "|".join(parts)


class Verdicts:
    """The kept verdicts of one render: `safe(file, entries)` for each memory file, then `save()`. Without a
    file (`None`) every call judges. `judge` is memory's unless given (context files judge their lines)."""

    def __init__(self, file: Path | None, judge: Callable[[list[str]], list[int]] = judge) -> None:
        self.file = file
        self._judge = judge
        self._version = rules_version() if file is not None else ""
        self._kept: dict[str, list] | None = None
        self._dirty = False

    def _load(self) -> dict[str, list]:
        if self._kept is None:
            self._kept = {}
            if self.file is not None and self._version:
                try:
                    data = json.loads(self.file.read_text(encoding="utf-8"))
                except (OSError, ValueError):
                    data = None
                if isinstance(data, dict) and data.get("version") == self._version and \
                        isinstance(data.get("files"), dict):
                    self._kept = data["files"]
        return self._kept

    def safe(self, source: Path, entries: list[str]) -> list[int]:
        """Indexes of `entries` (the entries of `source`) that may enter the prompt."""
        if self.file is None or not self._version:
            return self._judge(entries)
        kept = self._load()
        hit = kept.get(str(source))
        if isinstance(hit, list) and len(hit) == 2 and hit[0] == entries and isinstance(hit[1], list) and \
                all(type(i) is int and 0 <= i < len(entries) for i in hit[1]):
            return list(hit[1])
        safe = self._judge(entries)
        kept.pop(str(source), None)
        kept[str(source)] = [list(entries), safe]
        self._dirty = True
        return safe

    def save(self) -> None:
        """Write the verdicts back when one was judged now (atomically, 0600); silently not when it cannot."""
        if not self._dirty or self.file is None or self._kept is None:
            return
        from hermes_agent.atomicfile import write_json

        files = dict(list(self._kept.items())[-_KEEP:])
        try:
            write_json(self.file, {"version": self._version, "files": files})
        except OSError:
            return
        self._dirty = False
