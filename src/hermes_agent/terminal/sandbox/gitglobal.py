"""The sandbox's view of the user's global git config (~/.gitconfig, ~/.config/git/config): a copy without
credentials (gitconf.credential_free: credential.*, http.*.extraHeader, url.<base>.insteadOf with a
user:password@, include/includeIf), written to $HERMES_HOME/cache/sandbox/ (readable from inside, not
writable). bwrap binds each copy read-only over its original; Landlock cannot bind, so the originals are
hidden and GIT_CONFIG_GLOBAL names one combined copy. A symlinked original (~/.gitconfig -> ~/dotfiles/gitconfig)
stands for the file it resolves to: the copy is bound over that file, and that file is hidden under Landlock. An original is read with the no-follow opener; one
reached through a symlink is read only when its real path lies outside every writable root (a dotfiles
repository of the user's, not something the sandbox could swap). Stdlib only."""

from __future__ import annotations

import os
from collections.abc import Callable

from hermes_agent.terminal.sandbox.gitconf import credential_free, filter_config

GLOBALS = (".config/git/config", ".gitconfig")  # git reads them in this order; the later one wins
_LIMIT = 1 << 20


def _read(path: str, writable: Callable[[str], bool]) -> str | None:
    from hermes_agent.nofollow import open_nofollow

    real = os.path.realpath(path)
    if writable(real):
        return None  # the sandbox could rewrite it: not trusted as settings
    try:
        fd = open_nofollow(real, os.O_RDONLY | os.O_NONBLOCK)
    except OSError:
        return None
    try:
        import stat

        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None
        return os.read(fd, _LIMIT).decode("utf-8", "replace")
    finally:
        os.close(fd)


def filtered_globals(home: str, hermes_home: str, writable: Callable[[str], bool]) -> tuple[tuple[str, str], ...]:
    """((original, filtered copy), ...) for each global git config file of `home` that exists, plus
    ("", combined copy) last (for GIT_CONFIG_GLOBAL). Empty when there is none or no copy can be written:
    the originals are then hidden like any other dot-file. `writable(path)`: may the sandbox write there?"""
    from hermes_agent.nofollow import write_nofollow

    if not home or not hermes_home:
        return ()
    out: list[tuple[str, str]] = []
    combined: list[str] = []
    target = os.path.join(os.path.realpath(hermes_home), "cache", "sandbox")
    for rel in GLOBALS:
        original = os.path.join(home, rel)
        if not os.path.lexists(original):
            continue
        text = _read(original, writable)
        kept = filter_config(text, credential_free)[0] if text is not None else ""
        copy = os.path.join(target, rel.replace("/", "-").lstrip("."))
        if not _write_if_changed(write_nofollow, copy, kept):
            return ()
        out.append((mount_point(original), copy))
        combined.append(kept)
    if out:
        copy = os.path.join(target, "git-global")
        if not _write_if_changed(write_nofollow, copy, "".join(combined)):
            return ()
        out.append(("", copy))
    return tuple(out)


def left_out(home: str) -> list[str]:
    """The "section.key" names the sandbox's copies leave out of the user's global git configs (for `hermes
    doctor`: credentials, shell aliases, settings that run programs or carry a secret-shaped value)."""
    out: list[str] = []
    for rel in GLOBALS:
        text = _read(os.path.join(home, rel), lambda _p: False) if home else None
        out += filter_config(text, credential_free)[1] if text else []
    return list(dict.fromkeys(out))


def mount_point(original: str) -> str:
    """Where the copy goes over `original`: the file a symlinked ~/.gitconfig resolves to (bwrap cannot
    bind onto a symlink: "Can't create file"), else the original itself."""
    return os.path.realpath(original) if os.path.islink(original) else original


def _write_if_changed(write, path: str, text: str) -> bool:  # noqa: ANN001 - nofollow.write_nofollow
    data = text.encode()
    try:
        with open(path, "rb") as fh:
            if fh.read() == data:
                return True
    except OSError:
        pass
    try:
        write(path, data)
    except OSError:
        return False
    return True
