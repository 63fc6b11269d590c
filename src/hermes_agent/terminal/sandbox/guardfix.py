"""Putting back what confined work changed among the run-later files (guard.py, guardscan.py): a changed
or removed file gets its baseline content back, a new one goes to the quarantine, a fresh repository's
config keeps only git's own keys, a moved `.git` directory is renamed back. Every change is made with
*at() calls in a directory fd opened without following symlinks. Stdlib only."""

from __future__ import annotations

import os
import secrets
import shlex
import shutil
import stat as st
from collections.abc import Callable

from hermes_agent.terminal.sandbox import gitconf
from hermes_agent.terminal.sandbox.guarditem import Fds, Item, Slot, same
from hermes_agent.terminal.sandbox.guardscan import Scan
from hermes_agent.terminal.sandbox.guardverdict import judged
from hermes_agent.terminal.sandbox.runlater import RC_FILES
from hermes_agent.termsafe import one_line

Stash = Callable[[str, bytes | None], str]  # (original path, bytes) -> where they were saved ("" if not)

_WHY = {
    "hook": "git runs hooks on the user's next git command",
    "info": "git reads it on the user's next git command",
    "config": "git config can make git run programs",
    "redirect": "it would redirect git's hooks and settings",
    "dir": "git reads hooks and settings from it",
    "wt": "it would redirect a worktree's git settings",
    "dotgit": "it would point git at another git directory",
    "later": "direnv runs .envrc when the user enters the directory",
    "tasks": "VS Code runs folderOpen tasks when the folder is opened",
    "tool": "a tool runs what it names on the user's next use",
    "value": "a tool or editor runs what it names when the user opens or builds the project",
    "start": "python runs it at every start of the venv's interpreter",
    "pyc": "python runs a compiled copy instead of its source",
    "pkg": "a git hook runs its scripts through the package manager",
    "byhand": "the user runs its commands by hand later",
    "byhandinc": "a file the user runs by hand later pulls it in",
    "exec": "the user runs it by hand later",
    "cfgcode": "a tool's configuration names it as code to load",
    "pathbin": "it lies in a directory on the user's PATH",
    "replace": "git uses it in place of the object it names: the user's next checkout writes the replacement, and "
               "git diff shows nothing",
    "cwdshadow": "it lies in the workspace, which python puts first on sys.path when run there (`python -m`, `-c`, "
                 "the REPL), and stands in for a module python, pytest or hermes imports",
    "shadow": "it lies in a PYTHONPATH directory and stands in for a module python or hermes imports: the next "
              "hermes (or python) would run it outside the sandbox",
}
_JUDGED = ("tool", "value", "start", "pyc", "pkg", "byhand", "byhandinc", "pathbin", "cwdshadow", "exec",
           "cfgcode")  # a new or changed file stays when guardverdict finds nothing in it


_STRUCTURAL = {"dotgit": 0, "dir": 1}  # repaired first; what lies below them is looked at again after


def repair(base: Scan, now: Scan, fds: Fds, stash: Stash, roots: tuple[str, ...] = (),
           tainted: bool = False) -> list[str]:
    """Undo what changed between `base` and `now`; one line per action. `.git` entries first (a
    repository moved back changes every path below it: the caller scans again)."""
    lines: list[str] = []
    structural = False
    for slot in sorted(now.items, key=lambda s: _STRUCTURAL.get(now.classes[s], 2)):
        cls = now.classes[slot]
        if structural and cls not in _STRUCTURAL:
            break  # a .git entry or a hooks/ directory was repaired: scan again before what lies below
        cur, in_base = now.items[slot], slot in base.items
        old = base.items.get(slot)
        if in_base and same(old, cur):
            continue
        if cls == "dir" and cur is not None and cur.kind == st.S_IFDIR:
            continue  # an empty hooks/ or info/ made again (hermes makes them to bind them): its entries are watched
        why = ""
        if cls in _JUDGED:
            why = judged(slot, cls, old, cur, base, now, roots, tainted)
            if not why:
                _kept(slot, cls, old if in_base else None, cur)
                continue
        elif not in_base and _allowed_new(slot, cls, cur, slot in now.fresh, now):
            continue
        line = _fix(slot, cls, old if in_base else None, cur, now, fds, stash, why)
        if line:
            lines.append(line)
            structural = structural or cls in _STRUCTURAL
    return lines


_INSTALLED = frozenset({"node_modules", "site-packages", "dist-packages", ".venv", "venv", ".tox", ".nox", ".cache"})


def _kept(slot: Slot, cls: str, old: Item | None, cur: Item | None) -> None:
    """A run-by-hand file (any depth) or a file one pulls in that changed and stays: told in the session
    report (byhand.py), a new one too; not the packages an installer writes (node_modules/x/package.json)."""
    if cls in ("byhand", "byhandinc") and cur is not None and cur.kind == st.S_IFREG \
            and not _INSTALLED.intersection(slot[0].split("/")):
        from hermes_agent.terminal.sandbox import byhand

        byhand.track(os.path.join(*slot), slot[1], old.data if old is not None and old.kind == st.S_IFREG else None)


def _allowed_new(slot: Slot, cls: str, cur: Item | None, fresh: bool, now: Scan) -> bool:
    """A slot seen for the first time that may stay as it is."""
    if cur is None:
        return True
    d, name = slot
    if cls == "dotgit":
        if cur.kind == st.S_IFDIR:
            return True  # a new repository: its git directory is checked as fresh
        target = _gitdir_target(d, cur)
        return target is not None and target in now.gitdirs and _inside_known(target, now, d)
    if cls == "tasks":
        return b"folderopen" not in (cur.data or b"folderopen").lower()
    if cls in ("info", "dir"):
        return fresh
    if cls == "hook":
        return fresh and name.endswith(".sample") and cur.kind == st.S_IFREG
    if cls == "config":
        return fresh and cur.kind == st.S_IFREG and cur.data is not None and \
            not gitconf.filter_config(cur.data.decode("utf-8", "replace"), _fresh_keep(os.path.join(d, name)))[1]
    if cls == "redirect" and name == "commondir" and fresh and cur.data is not None:
        # `git worktree add` inside the workspace: .git/worktrees/<name>/commondir names its repository
        target = os.path.normpath(os.path.join(d, cur.data.decode(errors="replace").strip()))
        return target in now.gitdirs and d == os.path.join(target, "worktrees", os.path.basename(d))
    if cls == "wt":
        return name == "gitdir" or (name == "commondir" and cur.data is not None
                                    and os.path.normpath(os.path.join(d, cur.data.decode(errors="replace").strip()))
                                    == os.path.dirname(os.path.dirname(d)))
    return False


def _fresh_keep(config: str) -> gitconf.Keep:
    """gitconf.fresh_repo_keep, plus the core.worktree git writes for a submodule (.git/modules/x/config):
    allowed when it leads back below the repository that holds that git directory, never elsewhere."""
    gd = os.path.dirname(config)
    top = gd.split("/.git/", 1)[0] if "/.git/" in gd else ""

    def keep(section: str, subsection: str, key: str, value: str) -> bool:
        if section == "core" and key == "worktree" and top:
            target = os.path.normpath(os.path.join(gd, os.path.expanduser(value.strip().strip('"'))))
            return target.startswith(top + "/")
        return gitconf.fresh_repo_keep(section, subsection, key, value)
    return keep


def _gitdir_target(d: str, item: Item) -> str | None:
    if item.kind != st.S_IFREG or not item.data or not item.data.lower().startswith(b"gitdir:"):
        return None
    target = os.fsdecode(item.data.split(b":", 1)[1].strip())
    return os.path.normpath(os.path.join(d, os.path.expanduser(target)))


def _inside_known(target: str, now: Scan, d: str) -> bool:
    """A new `gitdir:` file may point below its own work tree or into a git directory's modules/ or
    worktrees/ (what `git submodule` and `git worktree add` write), never at another repository."""
    def under(p: str, root: str) -> bool:
        return p.startswith(root.rstrip("/") + "/")
    return under(target, d) or any(under(target, os.path.join(g, sub)) for g in now.gitdirs
                                   for sub in ("modules", "worktrees"))


def _fix(slot: Slot, cls: str, old: Item | None, cur: Item | None, now: Scan, fds: Fds, stash: Stash,
         why: str = "") -> str:
    d, name = slot
    path = os.path.join(d, name)
    named = shown(path)  # a name the command chose: no escape sequence or newline reaches the user's terminal
    fd = fds.get(d)
    if fd is None:
        return ""
    why = why or (RC_FILES.get(name, "") if cls == "later" else "") or _WHY.get(cls, "")
    if cls == "dotgit" and old is not None and old.kind == st.S_IFDIR:
        return _move_back(fd, d, old, cur, stash, fds)
    if cls == "config" and old is None and cur is not None and slot in now.fresh and cur.kind == st.S_IFREG:
        return _filter_fresh(fd, path, name, cur, stash)
    saved = ""
    if cur is not None:
        saved = stash(path, cur.data if cur.kind == st.S_IFREG else None)
        if not _remove(fd, name, cur):
            return f"[warning: {named} was changed and could not be put back; check it before running git here]"
        fds.forget(path)
    if old is None:
        where = ""
        if saved and shown(saved) == saved and named == path:  # a line safe to paste: both quoted for the shell
            where = f"; to restore it: cp -p {shlex.quote(saved)} {shlex.quote(path)}"
        elif saved:
            where = f"; saved as {shown(saved)}"
        return f"[the sandbox removed {named} (the command created it; {why}){where}]"
    if not _restore(fd, name, old):
        return f"[warning: {named} was changed and its previous content could not be restored ({why})]"
    where = f"; the command's version is saved as {shown(saved)}" if saved else ""
    return f"[the sandbox restored {named} as it was before the command ({why}){where}]"


def shown(path: str) -> str:
    """`path` (or a note naming one) as the user's terminal may show it: controls, newline and tab visible."""
    return one_line(path)


def _remove(fd: int, name: str, cur: Item) -> bool:
    try:
        if cur.kind == st.S_IFDIR:
            shutil.rmtree(name, dir_fd=fd)
        else:
            os.unlink(name, dir_fd=fd)
    except FileNotFoundError:
        return True
    except OSError:
        return False
    return True


def _restore(fd: int, name: str, old: Item) -> bool:
    """Put `old` back at `name`: a directory is made again (empty: its entries are restored by the next
    pass), a file written to a temp name and renamed over, a symlink re-made."""
    try:
        if old.kind == st.S_IFDIR:
            os.mkdir(name, old.mode or 0o755, dir_fd=fd)
        elif old.kind == st.S_IFLNK and old.data is not None:
            os.symlink(os.fsdecode(old.data), name, dir_fd=fd)
        elif old.kind == st.S_IFREG and old.data is not None:
            _write_at(fd, name, old.data, old.mode)
        else:
            return False
    except OSError:
        return False
    return True


def _write_at(fd: int, name: str, data: bytes, mode: int) -> None:
    tmp = f".hermes-guard-{secrets.token_hex(6)}"
    f = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600, dir_fd=fd)
    try:
        os.write(f, data)
        os.fchmod(f, mode)
    finally:
        os.close(f)
    try:
        os.replace(tmp, name, src_dir_fd=fd, dst_dir_fd=fd)
    except OSError:
        os.unlink(tmp, dir_fd=fd)
        raise


def _filter_fresh(fd: int, path: str, name: str, cur: Item, stash: Stash) -> str:
    """The config of a repository the command created keeps git's own keys only."""
    if cur.data is None:
        return "" if not _remove(fd, name, cur) else f"[the sandbox removed {path} (too large to check)]"
    kept, dropped = gitconf.filter_config(cur.data.decode("utf-8", "replace"), _fresh_keep(path))
    saved = stash(path, cur.data)
    try:
        _write_at(fd, name, kept.encode(), cur.mode)
    except OSError:
        return f"[warning: {path} sets {', '.join(dropped)} and could not be rewritten; check it before using git]"
    where = f"; the original is saved as {saved}" if saved else ""
    return (f"[the sandbox dropped {', '.join(dropped)} from {path} (a repository made in the sandbox keeps "
            f"git's own settings only: {_WHY['config']}){where}]")


def _move_back(fd: int, d: str, old: Item, cur: Item | None, stash: Stash, fds: Fds) -> str:
    """The workspace's `.git` directory was renamed away: find it by inode among its siblings, move what
    now sits at `.git` to the quarantine and rename the directory back."""
    path = os.path.join(d, ".git")
    moved = None
    for name in os.listdir(fd):
        try:
            s = os.stat(name, dir_fd=fd, follow_symlinks=False)
        except OSError:
            continue
        if st.S_ISDIR(s.st_mode) and s.st_ino == old.sig[1] and name != ".git":
            moved = name
            break
    if cur is not None and cur.kind == st.S_IFDIR and moved is None:
        return ""  # replaced by another directory (a fresh repository): checked as one
    if cur is not None:
        stash(path, cur.data if cur.kind == st.S_IFREG else None)
        if not _remove(fd, ".git", cur):
            return f"[warning: {path} was replaced and could not be put back; check it before running git here]"
    if moved is None:
        return f"[warning: the git directory {path} was moved or removed and was not found again]"
    try:
        os.rename(moved, ".git", src_dir_fd=fd, dst_dir_fd=fd)
    except OSError as exc:
        return f"[warning: the git directory {path} was moved to {moved} and could not be moved back ({exc.strerror})]"
    fds.forget(os.path.join(d, moved))
    fds.forget(path)
    return f"[the sandbox moved the git directory back from {os.path.join(d, moved)} to {path} ({_WHY['dotgit']})]"
