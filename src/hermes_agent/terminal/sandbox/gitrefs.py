"""Branch tips and index flags of the guard's repositories, after confined work in a tainted turn (rt14b c21).

gitobjects.py keeps every object what its name says; this is harm done with valid objects. A command that
took in untrusted text amends the last commit so its Makefile is a payload (same message, author, committer
and date), stages it, and sets `skip-worktree` on the file: `git status`, `git diff HEAD` and `cat Makefile`
all look clean, and the next push or fresh clone builds the payload. Confined git moves branches and sets
flags legitimately, so neither is forbidden; but in a tainted turn:

- a branch (or a detached HEAD) whose tip moved to a commit that does not contain the old tip (amend, reset,
  rebase: history rewritten) is said, with the files the rewrite changed and the command that goes back;
- an index entry newly flagged `skip-worktree` or `assume-unchanged` has the flag cleared in place (the
  index's checksum written again), so `git status` shows the difference the flag hid; said too.

Git runs only over the repository's objects, in hermes's scratch repository (ObjectWatch.in_objects): none of
the user's configuration, hooks or refs is read by it. Refs and the index are read as files, no link followed.
Stdlib only; nothing happens at import."""

from __future__ import annotations

import hashlib
import os
import re
from collections.abc import Mapping

from hermes_agent.terminal.sandbox.gitobjects import ObjectWatch, _put, _read, index_entries
from hermes_agent.terminal.sandbox.guarditem import _sig

_OID = re.compile(rb"^([0-9a-f]{40}|[0-9a-f]{64})$")
_SHA256 = re.compile(rb"(?im)^\s*objectformat\s*=\s*sha256\s*$")
_ASSUME, _EXTENDED, _SKIP = 0x8000, 0x4000, 0x4000  # flags; extended flags


class RefWatch:
    """`take` the baseline (the user's changes, or after a check); `check` after confined work."""

    def __init__(self, objects: ObjectWatch) -> None:
        self.objects = objects
        self.tips: dict[str, dict[str, str]] = {}  # git dir -> ref ("HEAD" when detached) -> commit id
        self.flags: dict[str, tuple[tuple | None, set[str]]] = {}  # git dir -> (index's lstat, paths flagged
        # skip-worktree / assume-unchanged): the index is parsed again only when it changed

    def take(self, gitdirs: Mapping[str, str]) -> None:
        for gd in gitdirs:
            self.tips[gd] = _tips(gd)
            sig = _sig(os.path.join(gd, "index"))
            if gd not in self.flags or self.flags[gd][0] != sig:
                self.flags[gd] = sig, set(_flagged(gd))

    def check(self, gitdirs: Mapping[str, str], tainted: bool) -> list[str]:
        lines: list[str] = []
        if tainted:
            for gd, worktree in gitdirs.items():
                if gd in self.tips:
                    lines += self._rewritten(gd, worktree or gd)
                    lines += _unflag(gd, worktree or gd, self.flags.get(gd, (None, set()))[1])
        self.take(gitdirs)
        return lines

    def _rewritten(self, gd: str, where: str) -> list[str]:
        now, lines, common = _tips(gd), [], _common(gd)
        head = (_read(os.path.join(gd, "HEAD")) or b"").strip()
        for ref, old in sorted(self.tips[gd].items()):
            new = now.get(ref)
            if new is None or new == old or not all(self.objects.in_objects(common, ["cat-file", "-e", f"{o}^{{commit}}"])
                                                    is not None for o in (old, new)):
                continue  # removed (a deleted branch's commits stay), unchanged, or not a commit git has here
            if self.objects.in_objects(common, ["merge-base", "--is-ancestor", old, new]) is not None:
                continue  # moved forward: the old tip is still in its history
            out = self.objects.in_objects(common, ["diff-tree", "-r", "--name-only", "-z", old, new]) or b""
            files = [os.fsdecode(f) for f in out.split(b"\0") if f]
            back = (f"git reset {old}" if head in (b"ref: " + ref.encode(), old.encode()) or ref == "HEAD"
                    else f"git update-ref {ref} {old}")
            shown = ", ".join(files[:8]) + (f" and {len(files) - 8} more" if len(files) > 8 else "")
            lines.append(f"{where}: {ref} was rewritten by a command after untrusted content (its tip {old[:12]} "
                         f"is no longer in its history; the new commit changes {shown or 'no file'}): check "
                         f"`git show {new[:12]}`; to go back: {back}")
        return lines


def _tips(gd: str) -> dict[str, str]:
    """refs/heads/* and refs/tags/* (loose over packed; a linked work tree's from the common directory) and
    a detached HEAD."""
    tips: dict[str, str] = {}
    common_dir = _common(gd)
    for line in (_read(os.path.join(common_dir, "packed-refs")) or b"").splitlines():
        oid, _, name = line.partition(b" ")
        if name.startswith((b"refs/heads/", b"refs/tags/")) and _OID.match(oid):
            tips[os.fsdecode(name)] = oid.decode()
    for kind in ("heads", "tags"):
        top = os.path.join(common_dir, "refs", kind)
        for d, _dirs, names in os.walk(top):
            for n in names:
                data = (_read(os.path.join(d, n)) or b"").strip()
                if _OID.match(data):
                    tips[f"refs/{kind}/" + os.path.relpath(os.path.join(d, n), top)] = data.decode()
    head = (_read(os.path.join(gd, "HEAD")) or b"").strip()
    if _OID.match(head):
        tips["HEAD"] = head.decode()
    return tips


def _common(gd: str) -> str:
    """Where refs and objects are: a linked work tree's git directory names it in `commondir`."""
    common = (_read(os.path.join(gd, "commondir")) or b"").strip()
    return os.path.normpath(os.path.join(gd, os.fsdecode(common))) if common else gd


def _size(gd: str) -> int:
    return 32 if _SHA256.search(_read(os.path.join(gd, "config")) or b"") else 20


def _flagged(gd: str, data: bytes | None = None) -> dict[str, tuple[int, int]]:
    """path -> (offset of flags to clear, the bits) for each index entry flagged skip-worktree/assume-unchanged."""
    data = _read(os.path.join(gd, "index")) if data is None else data
    out: dict[str, tuple[int, int]] = {}
    for _pos, path, at in index_entries(data or b"", _size(gd)):
        flags = int.from_bytes(data[at:at + 2], "big")  # type: ignore[index]
        if flags & _ASSUME:
            out[path] = (at, _ASSUME)
        if flags & _EXTENDED and int.from_bytes(data[at + 2:at + 4], "big") & _SKIP:  # type: ignore[index]
            out[path] = (at + 2, _SKIP) if path not in out else (at, _ASSUME | (_SKIP << 16))
    return out


def _unflag(gd: str, where: str, before: set[str]) -> list[str]:
    index = os.path.join(gd, "index")
    data = _read(index)
    new = {p: v for p, v in _flagged(gd, data).items() if p not in before}
    if not data or not new:
        return []
    buf = bytearray(data)
    for at, bits in new.values():
        for off, bit in ((at, bits & 0xFFFF), (at + 2, bits >> 16)):
            if bit:
                buf[off:off + 2] = (int.from_bytes(buf[off:off + 2], "big") & ~bit).to_bytes(2, "big")
    size = _size(gd)
    if any(data[-size:]):  # a zero trailer: index.skipHash, nothing to write again
        buf[-size:] = hashlib.new("sha256" if size == 32 else "sha1", bytes(buf[:-size])).digest()
    _put(gd, "index", bytes(buf))
    names = ", ".join(sorted(new)[:8]) + (f" and {len(new) - 8} more" if len(new) > 8 else "")
    return [f"{where}: skip-worktree / assume-unchanged set by a command after untrusted content was cleared on "
            f"{names} (they hid from `git status` and `git diff` that the index holds other content than the "
            "file)"]
