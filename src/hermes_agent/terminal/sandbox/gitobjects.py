"""git's object store and the sources of objects and refs beside it, held immutable against confined work
(rt13 a52/a53; the run-later guard, guard.py, calls it).

An object that exists in git never changes: its name is the hash of its content. A confined command can
still rewrite one (the object directories are writable: unlink + new file under the same name, or chmod and
write in place), add a pack whose index claims an existing object id for other bytes, point
`objects/info/alternates` at a directory of forged objects, or write a `refs/replace/*` line into
`packed-refs`: the user's next `git checkout -- Makefile` / `reset --hard` / `stash` then writes the payload
into the work tree while `git diff` shows nothing. None of this is ever legitimate from a confined command.

How, at about no cost per command whatever the number of objects: inotify(7) watches on `objects/`, each
`objects/??` fan-out directory, `objects/pack` and `objects/info` of every repository the guard knows (the
kernel reports each name written, renamed, chmod-ed or removed there, through bind mounts and Landlock alike;
the queue is hermes's, close-on-exec). After confined work, each loose object named in the queue is
inflated and hashed (sha1 or sha256, by the length of its name) and removed to the quarantine when its
content is not what its name says (or it is a link); one the check's read budget (new objects only, smallest
first, charged by the bytes read: rt14b c05) did not reach is renamed aside, never deleted; one the user had and
nothing wrote is not read at all (gitloose.py, rt15 d10); it is left read-only (a write in place then needs a
chmod, which the queue reports). Packs are also compared by lstat (mmap writes escape inotify): a new or
changed `.idx`/`.pack` pair is checked with `git index-pack --verify` run outside any repository, whatever
its size (rt14b c25), and its index set aside (renamed: the pack is never deleted) when it fails or runs past
its time; a new or changed multi-pack-index or commit-graph (caches that map ids to data) is removed, git
rebuilds it; `objects/info/alternates` and `http-alternates` get their baseline content back;
`refs/replace/*` lines new in `packed-refs` are stripped, the rest kept; a `shallow` file new in a full
repository is removed. A queue overflow, or a watched directory moved or removed, means every loose object
of that repository is looked at (the user's unchanged ones by lstat only). Ordinary git (commit, fetch from a
local remote, gc, repack, rebase) only adds objects that hash right and packs that verify. Stdlib only; nothing
happens at import."""

from __future__ import annotations

import os
import re
import shutil
import stat as st
import subprocess
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field

from hermes_agent.nofollow import open_dir, remove_nofollow, write_nofollow
from hermes_agent.paths import host_program
from hermes_agent.terminal.sandbox.deepwatch import _EVENT, _IN_Q_OVERFLOW, _libc
from hermes_agent.terminal.sandbox.gitloose import (
    _ASIDE,
    _DIR,
    _LOOSE,
    Ident,
    _at,
    _read,
    _set_aside,
    ident,
    idents,
    index_entries,
    judge_all,
)
from hermes_agent.terminal.sandbox.guarditem import _sig

__all__ = ["ObjectWatch", "_put", "_read", "index_entries"]

Stash = Callable[[str, bytes | None], str]

_DIR_MASK = 0x2 | 0x4 | 0x8 | 0x40 | 0x80 | 0x100 | 0x200 | 0x400 | 0x800  # modify attrib close_write moved create delete self
_FILE_MASK = 0x2 | 0x4 | 0x8 | 0x02000000  # modify attrib (chmod, link count) close_write; dont_follow
FILE_WATCHES = 30_000  # loose objects watched one by one (a write through another hard link); git gc keeps fewer
_SELF = 0x400 | 0x800 | 0x8000  # delete_self, move_self, ignored
_IN_ISDIR, _IN_NONBLOCK, _IN_CLOEXEC = 0x40000000, 0o4000, 0o2000000
_FANOUT = re.compile(r"^[0-9a-f]{2}$")
_TYPES = (b"blob", b"tree", b"commit", b"tag")
_INFO = ("alternates", "http-alternates")  # sources of objects: put back as they were
_CACHES = ("commit-graph", "commit-graphs", "multi-pack-index")  # map ids to data: removed when new or changed


@dataclass
class _Repo:
    gd: str
    worktree: str = ""  # "" for a bare repository
    packs: dict[str, tuple | None] = field(default_factory=dict)  # objects/pack entry -> lstat sig
    info: dict[str, bytes | None] = field(default_factory=dict)  # objects/info alternates files -> content
    caches: dict[str, tuple | None] = field(default_factory=dict)  # commit-graph, multi-pack-index -> sig
    replace: set[bytes] = field(default_factory=set)  # refs/replace lines of packed-refs at the baseline
    packed: tuple | None = None  # packed-refs' sig
    shallow: bool = False
    stamp: tuple = ()  # `_stamp` when last looked at: equal means nothing below changed
    watched: tuple[str, ...] = ()  # the paths `_stamp` looks at


class ObjectWatch:
    """See the module doc. `track` the guard's repositories (the baseline, and any found later), `accept`
    what changed while nothing confined ran (the user's), `check` after confined work."""

    def __init__(self, scratch: str = "") -> None:
        self.scratch = scratch  # an empty repository of hermes's own, out of the sandbox's reach ("": none)
        self.fd = -1
        self.wds: dict[int, tuple[str, str]] = {}  # wd -> (git dir, directory watched)
        self.files: dict[int, tuple[str, str, str]] = {}  # wd -> (git dir, fan-out directory, object file name)
        self.unwatched = 0  # loose objects past the watch budget (said once)
        self.repos: dict[str, _Repo] = {}
        self.known: dict[str, Ident] = {}  # loose object path -> `ident` while trusted: never judged unchanged

    def track(self, gitdirs: Mapping[str, str], stash: Stash | None = None) -> list[str]:
        """Watch these repositories (git directory -> its work tree, "" if none) from now on. With `stash`
        they were made by confined work (`git init`, `clone`): their loose objects, packs, caches and replace
        lines are judged as new first (alternates and shallow stay: `clone --shared`, `--depth`)."""
        lines: list[str] = []
        for gd, worktree in gitdirs.items():
            if gd in self.repos:
                continue
            self._watch(gd)
            repo = self.repos[gd] = self._baseline(gd, worktree)
            if stash is not None:
                lines += judge_all(self._all_loose(gd), stash, self.known)
                repo.packs, repo.caches = {}, dict.fromkeys(repo.caches)
                repo.replace, repo.packed, repo.stamp = set(), None, ()
                lines += self._others(repo, stash)
            self._remember_all(gd)
        return lines

    def accept(self) -> None:
        """The user's own changes (nothing confined ran): the queue is emptied, the baseline taken again."""
        events, overflow, lost = self._drain()
        for gd in set(lost) | (set(self.repos) if overflow else set()):
            self._watch(gd)
            self._remember_all(gd)
        for gd, d, name, mask in events:  # objects the user's git wrote: watched and known from now on
            if _FANOUT.match(os.path.basename(d)) and d != os.path.join(gd, "objects"):
                self._remember([(d, name)])
                if mask & 0x180:
                    self._watch_files(gd, d, (name,))
            elif mask & _IN_ISDIR and mask & 0x180 and d == os.path.join(gd, "objects") and _FANOUT.match(name):
                self._add(gd, os.path.join(d, name))
                self._watch_files(gd, os.path.join(d, name), _listdir(os.path.join(d, name)))
                self.known.update(idents(os.path.join(d, name)))
        for gd, repo in self.repos.items():
            if _stamp(repo) != repo.stamp:
                self.repos[gd] = self._baseline(gd, repo.worktree)

    def check(self, stash: Stash) -> list[str]:
        """After confined work: what was forged is removed or put back; one line per action."""
        events, overflow, lost = self._drain()
        touched: dict[str, set[str]] = {}  # fan-out directory -> names written there (None: all it holds)
        fresh: set[str] = set()  # fan-out directories made or moved in: all they hold is new
        for gd, d, name, mask in events:
            if d == os.path.join(gd, "objects"):
                if mask & _IN_ISDIR and _FANOUT.match(name):
                    fresh.add(os.path.join(d, name))
            elif _FANOUT.match(os.path.basename(d)):
                touched.setdefault(d, set()).add(name)
        todo: list[tuple[str, str, str]] = []  # (fan-out directory, name, work tree): judged smallest first
        for gd in sorted(set(self.repos) if overflow else lost):
            self._watch(gd)
            todo += self._all_loose(gd)
        for d in sorted(fresh):
            if not any(d.startswith(gd + "/") for gd in lost):
                self._add(os.path.dirname(os.path.dirname(d)), d)
                touched[d] = set(_listdir(d))
        for d, names in sorted(touched.items()):
            if not any(d.startswith(gd + "/") for gd in lost):
                wt = self.repos[gd].worktree if (gd := os.path.dirname(os.path.dirname(d))) in self.repos else ""
                todo += [(d, n, wt) for n in names]
        lines = judge_all(todo, stash, self.known)
        self._remember(todo)  # what is left under an object's name hashed right, or was the user's untouched
        for d, names in touched.items():
            if not any(d.startswith(gd + "/") for gd in lost):
                self._watch_files(os.path.dirname(os.path.dirname(d)), d, names)
        for repo in self.repos.values():
            lines += self._others(repo, stash)
        if self.unwatched > 0:
            lines.append(f"git objects: {self.unwatched} loose objects past the watch budget ({FILE_WATCHES}): a "
                         "write to one through another hard link is not seen; `git gc` packs them")
            self.unwatched = -1  # said once
        return lines

    # -- watches

    def _watch(self, gd: str) -> None:
        if self.fd < 0:
            try:
                self.fd = _libc().inotify_init1(_IN_NONBLOCK | _IN_CLOEXEC)
            except (OSError, AttributeError):
                self.fd = -1
            if self.fd < 0:
                return
        objects = os.path.join(gd, "objects")
        dirs = [objects, os.path.join(objects, "pack"), os.path.join(objects, "info")]
        dirs += [os.path.join(objects, n) for n in _listdir(objects) if _FANOUT.match(n)]
        for d in dirs:
            self._add(gd, d)
            if _FANOUT.match(os.path.basename(d)):
                self._watch_files(gd, d, _listdir(d))

    def _remember(self, items: Iterable[tuple[str, ...]]) -> None:
        """Each (fan-out directory, name, ...) trusted as it is now (`ident`; gone: forgotten)."""
        for d, name, *_ in items:
            path = os.path.join(d, name)
            now = ident(path) if len(name) in _LOOSE else None
            if now is None:
                self.known.pop(path, None)
            else:
                self.known[path] = now

    def _remember_all(self, gd: str) -> None:
        objects = os.path.join(gd, "objects")
        for sub in _listdir(objects):
            if _FANOUT.match(sub):
                self.known.update(idents(os.path.join(objects, sub)))

    def _watch_files(self, gd: str, d: str, names: Iterable[str]) -> None:
        """Each loose object's own inode: a write through a hard link made elsewhere is reported too."""
        if self.fd < 0:
            return
        add = _libc().inotify_add_watch
        for name in names:
            if len(name) not in _LOOSE:
                continue
            if len(self.files) >= FILE_WATCHES:
                if self.unwatched >= 0:
                    self.unwatched += 1
                continue
            wd = add(self.fd, os.fsencode(f"{d}/{name}"), _FILE_MASK)
            if wd >= 0 and wd not in self.wds:
                self.files[wd] = (gd, d, name)

    def _add(self, gd: str, d: str) -> None:
        if self.fd < 0:
            return
        try:
            fd = os.open(d, _DIR)
        except OSError:
            return
        try:
            wd = _libc().inotify_add_watch(self.fd, f"/proc/self/fd/{fd}".encode(), _DIR_MASK)
        finally:
            os.close(fd)
        if wd >= 0:
            self.wds[wd] = (gd, d)

    def _drain(self) -> tuple[list[tuple[str, str, str, int]], bool, set[str]]:
        """(gd, directory, name, mask) events, overflow, repositories whose watched directory went away."""
        out: list[tuple[str, str, str, int]] = []
        overflow, lost = self.fd < 0 and bool(self.repos), set()
        while self.fd >= 0:
            try:
                buf = os.read(self.fd, 1 << 16)
            except BlockingIOError:
                break
            except OSError:
                overflow = True
                break
            pos = 0
            while pos + _EVENT.size <= len(buf):
                wd, mask, _cookie, size = _EVENT.unpack_from(buf, pos)
                name = os.fsdecode(buf[pos + _EVENT.size:pos + _EVENT.size + size].split(b"\0", 1)[0])
                pos += _EVENT.size + size
                overflow |= bool(mask & _IN_Q_OVERFLOW)
                obj = self.files.get(wd)
                if obj is not None:
                    if mask & 0x8000:
                        self.files.pop(wd, None)
                    else:
                        out.append((*obj, mask))
                    continue
                where = self.wds.get(wd)
                if where is None:
                    continue
                if mask & _SELF:
                    if mask & 0x8000:
                        self.wds.pop(wd, None)
                    if not _FANOUT.match(os.path.basename(where[1])):  # objects/, pack/, info/ went away
                        lost.add(where[0])
                else:
                    out.append((*where, name, mask))
        return out, overflow, lost

    def _cache_ok(self, gd: str, name: str) -> bool:
        """`git commit-graph verify` / `multi-pack-index verify` of the repository's objects, run in the scratch
        repository (no configuration of the user's repository read): every commit's tree and parents, every
        id's pack and offset checked against the objects."""
        verb = ["multi-pack-index", "verify"] if name == _CACHES[2] else ["commit-graph", "verify"]
        return self.in_objects(gd, verb) is not None

    def in_objects(self, gd: str, args: list[str]) -> bytes | None:
        """git `args` over repository `gd`'s objects only, in the scratch repository (nothing of the user's
        repository but its objects read: no configuration, hooks or refs): its output, None when it failed."""
        if not self.scratch:
            return None
        if _sig(os.path.join(self.scratch, "HEAD")) is None and not _git(["init", "-q", "--bare", self.scratch]):
            return None
        out: list[bytes] = []
        return out[0] if _git(args, self.scratch, os.path.join(gd, "objects"), out) else None

    # -- loose objects

    def _all_loose(self, gd: str) -> list[tuple[str, str, str]]:
        objects = os.path.join(gd, "objects")
        wt = self.repos[gd].worktree if gd in self.repos else ""
        return [(os.path.join(objects, sub), n, wt) for sub in _listdir(objects) if _FANOUT.match(sub)
                for n in _listdir(os.path.join(objects, sub))]

    # -- packs, alternates, caches, packed-refs, shallow

    def _baseline(self, gd: str, worktree: str) -> _Repo:
        repo = _Repo(gd, worktree)
        pack = os.path.join(gd, "objects", "pack")
        repo.packs = {n: _sig(os.path.join(pack, n)) for n in _listdir(pack) if n.endswith((".pack", ".idx"))}
        info = os.path.join(gd, "objects", "info")
        repo.info = {n: _read(os.path.join(info, n)) for n in _INFO}
        repo.caches = {n: _sig(os.path.join(info, n)) for n in _CACHES[:2]}
        repo.caches[_CACHES[2]] = _sig(os.path.join(pack, _CACHES[2]))
        repo.replace = set(_replace_lines(_read(os.path.join(gd, "packed-refs"))))
        repo.packed = _sig(os.path.join(gd, "packed-refs"))
        repo.shallow = _sig(os.path.join(gd, "shallow")) is not None
        repo.stamp = _stamp(repo)
        return repo

    def _others(self, repo: _Repo, stash: Stash) -> list[str]:
        gd = repo.gd
        if _stamp(repo) == repo.stamp:  # the common case: a dozen lstat calls
            return []
        lines = _packs(repo)
        info = os.path.join(gd, "objects", "info")
        for name, was in repo.info.items():
            path = os.path.join(info, name)
            data = _read(path)
            if data != was and (data is not None or _sig(path) is not None):
                saved = stash(path, data)
                _put(info, name, was)
                lines.append(f"{path}: {'restored' if was is not None else 'removed'} (git would take objects "
                             f"from where it points, in place of the repository's own){_at(saved)}")
        for name, old in repo.caches.items():
            path = os.path.join(gd, "objects", "pack" if name == _CACHES[2] else "info", name)
            sig = _sig(path)
            if sig is not None and (old is None or sig[1:] != old[1:]) and not self._cache_ok(gd, name):
                _remove(path)
                lines.append(f"{path}: removed: it does not match the objects (git would take another tree or "
                             "object for an existing id; gc writes it again)")
        packed = os.path.join(gd, "packed-refs")
        if _sig(packed) != repo.packed:
            lines += _strip_replace(packed, repo.replace, stash)
            repo.replace = set(_replace_lines(_read(packed)))
            repo.packed = _sig(packed)
        shallow = os.path.join(gd, "shallow")
        if not repo.shallow and _sig(shallow) is not None:
            saved = stash(shallow, _read(shallow))
            _remove(shallow)
            lines.append(f"{shallow}: removed (it would cut the full history git has here){_at(saved)}")
        pack = os.path.join(gd, "objects", "pack")
        repo.packs = {n: _sig(os.path.join(pack, n)) for n in _listdir(pack) if n.endswith((".pack", ".idx"))}
        repo.caches = {n: _sig(os.path.join(info, n)) for n in _CACHES[:2]}
        repo.caches[_CACHES[2]] = _sig(os.path.join(pack, _CACHES[2]))
        repo.watched = ()
        repo.stamp = _stamp(repo)
        return lines


def _stamp(repo: _Repo) -> tuple:
    """lstat of what `_others` looks at: the pack and info directories (an entry made or removed), each pack
    and index of the baseline (a write in place, mmap too), the alternates files, caches, packed-refs, shallow."""
    objects = os.path.join(repo.gd, "objects")
    if not repo.watched:  # made again whenever the packs are listed again
        repo.watched = (os.path.join(objects, "pack"), os.path.join(objects, "info"),
                        *(os.path.join(objects, "pack", n) for n in repo.packs),
                        *(os.path.join(objects, "info", n) for n in (*_INFO, *_CACHES[:2])),
                        os.path.join(objects, "pack", _CACHES[2]), os.path.join(repo.gd, "packed-refs"),
                        os.path.join(repo.gd, "shallow"))
    return tuple(map(_sig, repo.watched))


def _packs(repo: _Repo) -> list[str]:
    pack = os.path.join(repo.gd, "objects", "pack")
    names = [n for n in _listdir(pack) if n.endswith(".idx")]
    lines: list[str] = []
    for idx in sorted(names):
        base = idx[:-4]
        changed = [n for n in (idx, base + ".pack")
                   if (now := _sig(os.path.join(pack, n))) is None or n not in repo.packs
                   or repo.packs[n] is None or now[1:] != repo.packs[n][1:]]  # type: ignore[index]
        ok = bool(changed) and _pack_ok(pack, base)
        if ok is None:  # nothing to verify with: kept, and said
            lines.append(f"{os.path.join(pack, base)}.pack: not verified (no git found to run `index-pack "
                         "--verify`); run `git fsck` before trusting this repository")
        if not changed or ok is not False:
            continue
        for n in (base + ".rev", base + ".bitmap"):  # caches of the index: git writes them again
            _remove(os.path.join(pack, n))
        lines.append(f"{os.path.join(pack, base)}.pack/.idx: {_pack_aside(pack, idx)}: the index does not match "
                     "the pack's objects, or checking it took past 300 s (git would hand out other content for "
                     "existing object ids); if the pack is yours: `git index-pack --verify` it, rename the index back")
    return lines


def _pack_aside(pack: str, idx: str) -> str:
    """The index renamed `<idx>.unverified` (git then ignores its pack; nothing deleted, nothing copied): what
    was done. Removed only where that rename fails (fail closed)."""
    try:
        dfd = os.open(pack, _DIR)
    except OSError:
        return "not found"
    try:
        if _set_aside(dfd, idx):
            return f"set aside (the index renamed {idx}{_ASIDE}, the pack kept; git no longer uses it)"
    finally:
        os.close(dfd)
    _remove(os.path.join(pack, idx))
    return "index removed (it could not be renamed), the pack kept"


def _pack_ok(pack: str, base: str) -> bool | None:
    """`git index-pack --verify`, outside any repository and configuration: every object's id recomputed.
    Always run, whatever the pack's size (no budget lets a pack through unread: a pad of zeros fails at its
    header; a verify past `_git`'s timeout fails, and the pack is removed); None: no trusted git to run."""
    path = os.path.join(pack, base + ".pack")
    sig = _sig(path)
    if sig is None or not st.S_ISREG(sig[0]) or _sig(os.path.join(pack, base + ".idx")) is None:
        return sig is None  # an index without its pack is ignored by git
    return _git(["index-pack", "--verify", path])


def _git(args: list[str], scratch: str = "", objects: str = "", out: list[bytes] | None = None) -> bool | None:
    """git `args` with no configuration, outside the user's repositories (with `scratch`: hermes's own empty
    repository, `objects` its object directory): whether it succeeded (its output appended to `out`); None
    when there is no trusted git."""
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "GIT_CONFIG_NOSYSTEM": "1",
           "GIT_CONFIG_GLOBAL": os.devnull, "HOME": "/", "GIT_CEILING_DIRECTORIES": "/", "LC_ALL": "C"}
    if scratch:
        env.update(GIT_DIR=scratch, GIT_OBJECT_DIRECTORY=objects)
    try:
        git = host_program("git")
    except OSError:
        return None
    try:
        done = subprocess.run([git, *args], cwd="/", env=env, capture_output=True, timeout=300, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return False
    if out is not None:
        out.append(done.stdout)
    return done.returncode == 0


def _replace_lines(data: bytes | None) -> list[bytes]:
    return [ln for ln in (data or b"").splitlines() if ln.split(b" ", 1)[-1].startswith(b"refs/replace/")]


def _strip_replace(path: str, keep: set[bytes], stash: Stash) -> list[str]:
    """`packed-refs` without the refs/replace lines the baseline did not have (and their peeled `^` lines)."""
    data = _read(path)
    if not data or not set(_replace_lines(data)) - keep:
        return []
    out, drop = [], False
    for ln in data.splitlines(keepends=True):
        if ln.startswith(b"^") and drop:
            continue
        drop = ln.rstrip(b"\n") in set(_replace_lines(data)) - keep
        if not drop:
            out.append(ln)
    saved = stash(path, data)
    _put(os.path.dirname(path), os.path.basename(path), b"".join(out))
    return [f"{path}: refs/replace lines removed, the other refs kept (git would use another object in place "
            f"of a committed one, and git diff shows nothing){_at(saved)}"]


def _listdir(d: str) -> list[str]:
    try:
        return os.listdir(d)
    except OSError:
        return []


def _put(d: str, name: str, data: bytes | None) -> None:
    """`d/name` := data (None: removed), never through a link (nofollow.py)."""
    path = os.path.join(d, name)
    try:
        if data is not None:
            write_nofollow(path, data, create_parents=False)
        else:
            remove_nofollow(path)
    except IsADirectoryError:
        parent = open_dir(d, create=False)
        try:
            shutil.rmtree(name, dir_fd=parent)
        finally:
            os.close(parent)
    except OSError:
        return


def _remove(path: str) -> None:
    _put(os.path.dirname(path), os.path.basename(path), None)
