"""The shell state a terminal session carries between calls (`declare -f` and `alias -p` output that the
confined shell hands back as data), read for classification only: a later call's bare word that names an
alias or a function defined there is judged by what it expands to (`alias ll='rm -rf src'` in one call,
`ll` in the next). The state text is parsed by the rules' own lexer and never run. Pure string work."""

from __future__ import annotations

import re
from functools import lru_cache

from hermes_agent.approval.rules.lazyre import lazy

MAX_STATE_CHARS = 2_000_000
MAX_DEFINITIONS = 64
_FUNC_HEAD = lazy(r"\A([^\s()=|&;<>`$'\"]+) \(\) ?\Z")
_ALIAS = lazy(r"\Aalias (?:-- )?([^\s=]+)=")
_NAMES = lazy(r"^(?:([^\s()=|&;<>`$'\"]+) \(\) ?$|alias (?:-- )?([^\s=]+)=)", re.M)
_WORD = lazy(r"[^\s|&;<>()`$'\"{}]+")


@lru_cache(maxsize=4)
def _names(state: str) -> frozenset[str]:
    """Every name the state defines (a cheap scan; the full parse only when a command uses one)."""
    return frozenset(m.group(1) or m.group(2) for m in _NAMES.finditer(state[:MAX_STATE_CHARS]))


@lru_cache(maxsize=4)
def definitions(state: str) -> dict[str, str]:
    """name -> shell text defining it (an `alias NAME=...` line or a function's `NAME () { ... }` block)."""
    found: dict[str, str] = {}
    lines = state[:MAX_STATE_CHARS].splitlines()
    i = 0
    while i < len(lines):
        line = lines[i]
        head = _FUNC_HEAD.match(line)
        if head and i + 1 < len(lines) and lines[i + 1].strip() == "{":
            end = i + 2
            while end < len(lines) and lines[end] != "}":
                end += 1
            found[head.group(1)] = "\n".join(lines[i:end + 1])
            i = end + 1
            continue
        alias = _ALIAS.match(line)
        if alias:
            found[alias.group(1)] = line
        i += 1
    return found


def relevant(state: str, command: str) -> str:
    """The definitions of the names `command` uses (and of the names those use), as one shell text."""
    if not state or ("alias " not in state and "() " not in state):
        return ""
    words = dict.fromkeys(_WORD.findall(command))
    if not any(w in _names(state) for w in words):
        return ""  # the usual case: nothing the command names is defined there
    defined = definitions(state)
    wanted = [w for w in words if w in defined]
    chosen: dict[str, str] = {}
    while wanted and len(chosen) < MAX_DEFINITIONS:
        name = wanted.pop(0)
        if name in chosen:
            continue
        chosen[name] = defined[name]
        wanted.extend(w for w in dict.fromkeys(_WORD.findall(defined[name])) if w in defined and w not in chosen)
    return "\n".join(chosen.values())
