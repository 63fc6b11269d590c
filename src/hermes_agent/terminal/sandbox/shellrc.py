"""What the user's shell start-up files pull in, for a workspace that is HOME (issue 19): the files they
source (`source F`, `. F`; a glob or a `for f in DIR/*` loop gives the directory) and the directories they
put on PATH (`PATH=~/x:$PATH`, zsh `path=(~/x $path)`, fish `set PATH`, `fish_add_path`), followed a few
levels into the sourced files. Those inside HOME stay read-only: a line appended to them, or a program
dropped into them, would run in the user's next shell.

Read on the unconfined side with the no-follow opener (hermes_agent.nofollow): small, bounded, and a
name the sandbox swapped for a symlink, FIFO or device is not read. A heuristic, not a shell: it expands
`~`, `$HOME`, `${HOME}` and variables assigned earlier in the same files; a path hidden behind anything
else is missed. Stdlib only."""

from __future__ import annotations

import functools
import glob
import os
import re
import shlex

START_FILES = (".bashrc", ".bash_profile", ".bash_login", ".profile", ".bash_aliases", ".zshrc", ".zshenv",
               ".zprofile", ".zlogin", ".config/fish/config.fish")
MAX_DEPTH, MAX_FILES, MAX_BYTES = 3, 32, 65536
_PATH_VARS = frozenset({"PATH", "path", "fish_user_paths"})
_STARTS = frozenset({";", "&&", "||", "|", "&", "(", ")", "{", "}", "then", "do", "else", "elif", "if", "while",
                     "until", "!", "begin", "and", "or", "not", "command", "builtin", "exec"})
_ASSIGN = re.compile(r"^([A-Za-z_][A-Za-z0-9_]*)(\+?=)(.*)$", re.S)
_VAR = re.compile(r"\$(?:\{([A-Za-z_][A-Za-z0-9_]*)(?:[:]?[-=][^}]*)?\}|([A-Za-z_][A-Za-z0-9_]*))")
_GLOB = re.compile(r"[*?\[]")


def protected_paths(home: str, *, path_dirs: bool = True) -> list[str]:
    """Paths inside HOME (not HOME itself) that the start-up files are, source, or (`path_dirs`) put on PATH."""
    if not home or not os.path.isdir(home):
        return []
    found: list[str] = []
    queue = [(os.path.join(home, name), 0) for name in START_FILES]
    seen: set[str] = set()
    env: dict[str, list[str]] = {"HOME": [home]}
    while queue and len(seen) < MAX_FILES:
        path, depth = queue.pop(0)
        real = os.path.realpath(path)
        found += [path, real]
        if real in seen:
            continue
        seen.add(real)
        text = _read(real)
        if text is None:
            continue
        sourced, dirs = _scan(text, home, env)
        found += dirs if path_dirs else []
        for src in sourced:
            found.append(src)
            if depth + 1 < MAX_DEPTH and not _GLOB.search(src):
                queue.append((src, depth + 1))
    inside = [p for p in dict.fromkeys(found) if p != home and p.startswith(home.rstrip("/") + "/")]
    return inside


def _read(real: str) -> str | None:
    from hermes_agent.nofollow import read_regular_or_none

    data = read_regular_or_none(real, MAX_BYTES)
    return None if data is None else data.decode("utf-8", errors="replace")


def _scan(text: str, home: str, env: dict[str, list[str]]) -> tuple[list[str], list[str]]:
    """(paths sourced, directories put on PATH) of one file; `env` collects simple assignments."""
    sourced: list[str] = []
    dirs: list[str] = []
    for line in text.splitlines():
        words = _words(line)
        for i, word in enumerate(words):
            start = i == 0 or words[i - 1] in _STARTS
            nxt = words[i + 1] if i + 1 < len(words) else None
            if start and word in ("source", ".") and nxt and nxt not in _STARTS:
                sourced += _paths(nxt, home, env)
            elif word == "for" and nxt and i + 3 < len(words) and words[i + 2] == "in":
                env[nxt] = [v for w in _until_end(words[i + 3:]) for v in _expand(w, home, env)]
            elif start and word == "fish_add_path":
                dirs += [p for w in words[i + 1:] if not w.startswith("-") for p in _paths(w, home, env)]
            elif start and word == "set" and nxt:
                rest = [w for w in words[i + 1:] if not w.startswith("-")]
                if rest:
                    _assign(rest[0], _until_end(rest[1:]), home, env, dirs)
            elif (m := _ASSIGN.match(word)) and (start or words[i - 1] in ("export", "local", "declare",
                                                                             "typeset", "readonly", "-x")):
                values = _until_end(words[i + 2:]) if m.group(3) == "" and nxt == "(" else [m.group(3)]
                _assign(m.group(1), values, home, env, dirs, append=m.group(2) == "+=")
    return sourced, dirs


@functools.lru_cache(maxsize=4096)  # the same lines are read again at every plan (and by homecode.py)
def _words(line: str) -> tuple[str, ...]:
    lexer = shlex.shlex(line, posix=True, punctuation_chars=";&|()")
    lexer.whitespace_split = True
    lexer.commenters = "#"
    try:
        return tuple(lexer)
    except ValueError:  # an unbalanced quote: whitespace words are good enough
        return tuple(line.split("#", 1)[0].split())


def _until_end(words: list[str]) -> list[str]:
    out = []
    for w in words:
        if w in (";", ")", "&&", "||", "|", "&"):
            break
        out.append(w)
    return out


def _assign(name: str, values: list[str], home: str, env: dict[str, list[str]], dirs: list[str], *,
            append: bool = False) -> None:
    parts = [p for v in values for p in (v.split(":") if name != "fish_user_paths" else [v])]
    if name in _PATH_VARS:
        dirs += [d for p in parts if p and not _VAR.fullmatch(p) for d in _paths(p, home, env)]
        return
    if name == "HOME":
        return
    expanded = [x for v in values for x in _expand(v, home, env)]
    env[name] = (env.get(name, []) if append else []) + expanded


def _expand(word: str, home: str, env: dict[str, list[str]]) -> list[str]:
    """`word` with ~ and known variables substituted; an unknown variable becomes a `*` (any name)."""
    if word == "~" or word.startswith("~/"):
        word = home + word[1:]
    outs = [word]
    for _ in range(8):
        nxt: list[str] = []
        for w in outs:
            m = _VAR.search(w)
            if not m:
                nxt.append(w)
                continue
            vals = env.get(m.group(1) or m.group(2)) or ["*"]
            nxt += [w[:m.start()] + v + w[m.end():] for v in vals[:16]]
        if nxt == outs:
            break
        outs = nxt[:32]
    return outs


def _paths(word: str, home: str, env: dict[str, list[str]]) -> list[str]:
    """Absolute paths a word may name: a pattern gives the directory holding the varying name (a new
    match would be created there) and the existing matches."""
    out: list[str] = []
    for w in _expand(word, home, env):
        out += glob_paths(os.path.normpath(w if os.path.isabs(w) else os.path.join(home, w)))
    return out


def glob_paths(pattern: str) -> list[str]:
    """An absolute pattern's directory holding the varying name (a match made later lands there) and its
    existing matches."""
    m = _GLOB.search(pattern)
    if not m:
        return [os.path.normpath(pattern)]
    return [os.path.dirname(pattern[:m.start()] + "x"), *(os.path.normpath(p) for p in glob.glob(pattern)[:64])]


def assignments(text: str, home: str, env: dict[str, list[str]]) -> None:
    """Collect a file's simple variable assignments into `env` (for `expand`)."""
    _scan(text, home, env)


# the pieces homecode.py reads the same files with
read_start_file, words, expand = _read, _words, _expand
