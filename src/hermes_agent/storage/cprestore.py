"""A checkpoint's files put back into the working directory - a tree the sandbox can change while it
happens - without ever acting on a path string: every removal and write goes through hermes_agent.nofollow
(the parent opened by a no-follow walk, then unlinkat/openat/renameat relative to it), so a directory the
sandbox swaps for a symlink to ~/.ssh mid-restore is refused, never followed. `git checkout` is not used:
it unlinks and creates by path in the work tree."""

from __future__ import annotations

import os
from collections.abc import Callable

from hermes_agent.nofollow import open_dir, remove_nofollow, write_at

_LINK, _GITLINK = "120000", "160000"


def restore_files(git: Callable[..., str], wd: str, target: str, current: str, spec: list[str],
                  keep: object = None) -> list[str]:
    """Make the files of `wd` (within `spec`) those of commit `target`, given `current` (a commit of the
    directory as it is now): files added since are removed, the target's files written back. `git`
    runs a git command in `wd`'s store and returns its output. Returns the removed names. `keep`: a
    hermes_agent.quarantine.Quarantine; a file about to be overwritten that `current` does not hold (too
    large for a snapshot, excluded) is copied there first."""
    raw = git("diff", "--name-only", "-z", "--no-renames", "--diff-filter=A", target, current, "--", *spec)
    added = [name for name in raw.split("\0") if name]
    wanted = []  # every file of the target, as `git checkout` wrote them (the context ledger sees each put back)
    for entry in git("ls-tree", "-r", "-z", "--full-tree", target, "--", *spec).split("\0"):
        head, _, name = entry.partition("\t")
        if name and head.split(" ")[0] != _GITLINK:
            mode, _kind, sha = head.split(" ")
            wanted.append((name, mode, sha))
    removed = [name for name in added if _remove(wd, name)]
    blobs = _blobs(git, [sha for _, _, sha in wanted])
    held = set(git("ls-tree", "-r", "-z", "--name-only", "--full-tree", current, "--", *spec).split("\0"))
    for name, mode, sha in wanted:
        _put(wd, name, mode, blobs[sha], None if name in held else keep)
    return removed


def _remove(wd: str, name: str) -> bool:
    try:
        return remove_nofollow(os.path.join(wd, name), stop=wd)
    except (IsADirectoryError, NotADirectoryError):
        return False


def _put(wd: str, name: str, mode: str, data: bytes, keep: object = None) -> None:
    parent = open_dir(os.path.dirname(os.path.join(wd, name)), create=True)
    base = os.path.basename(name)
    try:
        if keep is not None:  # what is there now is in no snapshot: kept before it is overwritten
            keep.keep_at(parent, base, os.path.join(wd, name))  # type: ignore[attr-defined]
        if mode == _LINK:
            try:
                os.unlink(base, dir_fd=parent)
            except FileNotFoundError:
                pass
            os.symlink(os.fsdecode(data), base, dir_fd=parent)
        else:
            write_at(parent, base, data, mode=0o777 if mode == "100755" else 0o666)
    finally:
        os.close(parent)


def _blobs(git: Callable[..., str], shas: list[str]) -> dict[str, bytes]:
    """The contents of `shas` by one `git cat-file --batch`."""
    if not shas:
        return {}
    out = git("cat-file", "--batch", stdin="\n".join(dict.fromkeys(shas)).encode() + b"\n").encode(
        "utf-8", "surrogateescape")  # (git's output was decoded losslessly)
    blobs, pos = {}, 0
    while pos < len(out):
        end = out.index(b"\n", pos)
        sha, _kind, size = out[pos:end].decode().split(" ")
        blobs[sha] = out[end + 1:end + 1 + int(size)]
        pos = end + 1 + int(size) + 1
    return blobs
