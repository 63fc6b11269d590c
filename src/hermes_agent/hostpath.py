"""The programs hermes itself runs outside the sandbox (bwrap, slirp4netns, unshare, git, docker, ssh, espeak,
an editor...) come only from PATH directories the sandbox cannot write (red-team round 7 a33: with a project's
venv activated, `.venv/bin` first on PATH, a confined command dropped `bwrap`, `slirp4netns` and `git` wrappers
there, and the next session started them unconfined, as the user).

Untrusted PATH entries: relative ones, the working directory hermes started in and everything below it, and
every root a sandbox lets commands write (`distrust`, called as its plan is made, terminal/sandbox/spec.py: the
workspaces, granted paths, the session's temporary directory, /tmp itself with `sandbox.shared_tmp`). `harden()` (the CLI's first step) keeps the user's PATH whole for the commands inside the sandbox
(`user_path()`) and gives hermes's own environment, so every `subprocess` call by bare name, the trusted one."""

from __future__ import annotations

import os

_USER_PATH: list[str] = []  # the PATH hermes was started with (set by harden)
_UNTRUSTED: set[str] = set()


def _real(path: str) -> str:
    return os.path.realpath(path)


def _under(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip("/") + "/")


def trusted_path(path: str | None = None) -> str:
    """`path` (default: the user's PATH) without the entries the sandbox could write."""
    raw = user_path() if path is None else path
    roots = {_real(r) for r in (*_UNTRUSTED, "/dev/shm")}
    kept = []
    for entry in raw.split(os.pathsep):
        if not os.path.isabs(entry):
            continue
        real = _real(entry)
        if not any(_under(real, root) for root in roots) and real not in kept:
            kept.append(entry)
    return os.pathsep.join(kept)


def user_path() -> str:
    """The PATH the user started hermes with: what commands inside the sandbox get."""
    return _USER_PATH[0] if _USER_PATH else os.environ.get("PATH", os.defpath)


def user_environ() -> dict[str, str]:
    """os.environ with the user's PATH: the environment confined programs start from."""
    env = dict(os.environ)
    env["PATH"] = user_path()
    return env


def distrust(*roots: str) -> None:
    """Directories the sandbox may write: never a place hermes takes a program from."""
    added = {_real(os.path.abspath(r)) for r in roots if r} - _UNTRUSTED
    if added:
        _UNTRUSTED.update(added)
        if _USER_PATH:
            os.environ["PATH"] = trusted_path()


def harden() -> None:
    """Keep the user's PATH for the commands; hermes's own PATH is the trusted part of it."""
    if not _USER_PATH:
        _USER_PATH.append(os.environ.get("PATH", os.defpath))
    try:
        distrust(os.getcwd())
    except OSError:
        pass
    os.environ["PATH"] = trusted_path()


def which(name: str) -> str | None:
    """`name` on the trusted PATH (an absolute or relative path is returned as shutil.which would)."""
    import shutil

    return shutil.which(name, path=trusted_path())
