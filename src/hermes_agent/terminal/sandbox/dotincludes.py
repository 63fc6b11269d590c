"""Files the user's dot-files pull in (rt5 a03): `[include] path=` and `[includeIf ...] path=` of the global
git config, `Include` of ~/.ssh/config and what the shell start-up files `source` (shellrc.py). When one of
them lies where the sandbox may write (~/.gitconfig -> ~/dotfiles/gitconfig including ~/dotfiles/git-extra,
the dotfiles repository being the workspace), a line appended to it runs in the user's next git, ssh or shell
outside the sandbox, exactly as if the dot-file itself had been changed. `included` lists them (followed
recursively, bounded); dotlinks.kept_paths keeps each one, and the symlinks on its way, read-only like a
dot-link's target, whether it exists yet or not.

Read on the unconfined side: each file resolved hop by hop (dotlinks.resolve_chain) and read with the
no-follow opener, small and bounded. What the sandbox wrote there can only add paths to keep. Stdlib only."""

from __future__ import annotations

import glob
import os
import shlex

MAX_FILES, MAX_BYTES, MAX_DEPTH = 32, 65536, 10
_GLOB_CHARS = "*?["


def included(home: str) -> list[str]:
    """Absolute paths (not resolved) that HOME's git config, ssh config and shell start-up files include."""
    from hermes_agent.terminal.sandbox.shellrc import protected_paths

    xdg = os.environ.get("XDG_CONFIG_HOME") or os.path.join(home, ".config")
    found = _follow([os.path.join(home, ".gitconfig"), os.path.join(xdg, "git", "config")], home, _git)
    found += _follow([os.path.join(home, ".ssh", "config")], home, _ssh)
    found += protected_paths(home, path_dirs=False)
    return list(dict.fromkeys(found))


def _follow(starts: list[str], home: str, parse) -> list[str]:  # type: ignore[no-untyped-def]
    """Breadth first from `starts`: every path the files name, read at most MAX_FILES files."""
    queue = [(p, 0) for p in starts]
    seen: set[str] = set()
    out: list[str] = []
    while queue and len(seen) < MAX_FILES:
        path, depth = queue.pop(0)
        real = _real(path)
        if real is None or real in seen:
            continue
        seen.add(real)
        text = _read(real)
        if text is None:
            continue
        for name in parse(text, path, real, home):
            out.append(name)
            if depth + 1 < MAX_DEPTH and not any(c in name for c in _GLOB_CHARS):
                queue.append((name, depth + 1))
    return out


def _git(text: str, path: str, real: str, home: str) -> list[str]:
    """include.path / includeIf.*.path: relative to the including file (as opened, and where it leads)."""
    from hermes_agent.terminal.sandbox.gitconf import include_paths

    out = []
    for name in include_paths(text):
        name = home + name[1:] if name == "~" or name.startswith("~/") else name
        if os.path.isabs(name):
            out.append(os.path.normpath(name))
        else:
            out += [os.path.normpath(os.path.join(os.path.dirname(p), name)) for p in (path, real)]
    return out


def _ssh(text: str, path: str, real: str, home: str) -> list[str]:
    """`Include` (any case, `Include=x` too, anywhere: top level or in a Host/Match block), several
    arguments, globs: relative names are relative to ~/.ssh. A pattern keeps its directory (a new match
    would be made there) and its current matches."""
    out: list[str] = []
    for line in text.splitlines():
        stripped = line.strip()
        if not stripped or stripped.startswith("#"):
            continue
        key, _, rest = stripped.replace("=", " ", 1).partition(" ") if "=" in stripped.split(None, 1)[0] \
            else stripped.partition(" ")
        if key.lower() != "include":
            continue
        try:
            words = shlex.split(rest, comments=True)
        except ValueError:
            words = rest.split()
        for word in words:
            word = home + word[1:] if word == "~" or word.startswith("~/") else word
            name = os.path.normpath(word if os.path.isabs(word) else os.path.join(home, ".ssh", word))
            if any(c in name for c in _GLOB_CHARS):
                cut = min(i for i in (name.find(c) for c in _GLOB_CHARS) if i >= 0)
                out.append(os.path.dirname(name[:cut] + "x"))
                out += sorted(glob.glob(name))[:64]
            else:
                out.append(name)
    return out


def _real(path: str) -> str | None:
    from hermes_agent.terminal.sandbox.dotlinks import resolve_chain

    resolved = resolve_chain(path)
    return resolved[0] if resolved is not None else None


def _read(real: str) -> str | None:
    from hermes_agent.nofollow import read_regular_text

    try:
        return read_regular_text(real, MAX_BYTES)
    except (OSError, ValueError):
        return None
