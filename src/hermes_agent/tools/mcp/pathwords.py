"""The words of an unconfined server's arguments, `env:` values and pinned config files that may name paths
(issue 19 class 2): one reader for all three, so `--plugins=./p`, `-I./lib`, `-javaagent:/ws/a.jar`,
`CONFIG=~/proj/mcp.json`, `PATHS=/a:/ws/b`, `file:///ws/c.json` and `"plugins": "/ws/p"` are found the same way.
A URL of another scheme (`https://host/a/b`) names no path here. Pure string work: no file is touched."""

from __future__ import annotations

import re
from collections.abc import Iterator

_WORD = re.compile(r"[^\s:=,;\"'`\[\]()<>|&]+")  # braces kept: ${HOME}/x is one word
_TILDE = re.compile(r"~([a-z_][A-Za-z0-9_.-]*)?(/|$)")
_URL = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*://\S*")
_FILE_URL = re.compile(r"(?:git\+)?file:(?://)?(/[^\s\"'`,;\]})>]*)")


def looks_like_path(value: str) -> bool:
    """An explicit path: absolute, `./`, `../`, `~`, `~/`, `~user/`, `.` or `..` (a `file:` URL's path, once taken
    out); `~5` in prose is none."""
    value = value.removeprefix("git+").removeprefix("file:")
    return value.startswith(("/", "./", "../")) or value in (".", "..") or bool(_TILDE.match(value))


def spans(text: str) -> Iterator[tuple[int, int]]:
    """(start, end) of each word of `text` that may name a path: a `file:` URL's path, the value of
    `--opt=VALUE` or `-XVALUE` when VALUE is an explicit path, and every other word between separators
    (spaces, `:`, `=`, `,`, `;`, quotes, brackets) outside URLs of other schemes."""
    skip: list[tuple[int, int]] = []
    for m in _FILE_URL.finditer(text):
        skip.append(m.span())
        yield m.span(1)
    skip += [m.span() for m in _URL.finditer(text) if not any(a <= m.start() < b for a, b in skip)]
    for m in _WORD.finditer(text):
        a, b = m.span()
        if any(s <= a < e for s, e in skip):
            continue
        word = m.group()
        if word.startswith("-"):  # an option: only a path glued to a short one (-I./lib, -r/abs/x.js)
            if not word.startswith("--") and len(word) > 2 and looks_like_path(word[2:]):
                yield a + 2, b
            continue
        yield a, b
