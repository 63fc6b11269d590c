"""`hermes -w/--worktree`: run in a new git worktree under <repo>/.worktrees/ on a new branch (as Hermes
does), and remove it at exit when the run left nothing in it."""

from __future__ import annotations

import hashlib
import os
import stat
import subprocess
import uuid
from dataclasses import dataclass
from pathlib import Path

from hermes_agent.errors import HermesError


@dataclass(frozen=True, slots=True)
class Worktree:
    """A worktree this run created: where, on which branch, from which commit of which repository."""

    path: Path
    branch: str
    repo: Path
    base: str
    included: tuple[tuple[str, bytes], ...] = ()  # what .worktreeinclude put there: (path, link target or sha256)

    def prompt_note(self) -> str:
        return (f"[System note: you are working in an isolated git worktree at {self.path}, on branch "
                f"`{self.branch}`. Changes here do not affect the main working tree or other agents; commit "
                "your work on this branch.]")


def _git(args: list[str], cwd: Path, timeout: float = 30) -> subprocess.CompletedProcess:
    """git in the workspace, which the sandbox writes: no hook, filter, fsmonitor... of it runs (gitsafe)."""
    from hermes_agent.gitsafe import run_git

    return run_git(args, cwd=cwd, timeout=timeout)


def repo_root(cwd: Path) -> Path | None:
    try:
        out = _git(["rev-parse", "--show-toplevel"], cwd)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return Path(out.stdout.strip()) if out.returncode == 0 and out.stdout.strip() else None


def create_worktree(cwd: Path) -> Worktree:
    """A fresh worktree `.worktrees/hermes-<id>` on branch `hermes/hermes-<id>` from HEAD."""
    root = repo_root(cwd)
    if root is None:
        raise HermesError("--worktree needs a git repository: cd into your project first, then run hermes -w")
    head = _git(["rev-parse", "HEAD"], root)
    if head.returncode != 0:
        raise HermesError(f"--worktree: the repository at {root} has no commit to branch from yet")
    name = f"hermes-{uuid.uuid4().hex[:8]}"
    root = Path(os.path.realpath(root))
    path, branch = root / ".worktrees" / name, f"hermes/{name}"
    made_id = _make_dir(root, name)
    _ignore_worktrees(root)
    made = _git(["worktree", "add", str(path), "-b", branch, "HEAD"], root)
    if made.returncode != 0:
        raise HermesError(f"--worktree: cannot create the worktree: {made.stderr.strip()}")
    if _identity(path) != made_id:  # swapped while git ran: whatever git wrote there is not ours to use
        _git(["worktree", "remove", "--force", str(path)], root)
        raise HermesError(f"--worktree: {path} changed while the worktree was being created; nothing was used")
    included = _copy_included(root, path)
    _git(["worktree", "lock", "--reason", f"hermes pid={os.getpid()}", str(path)], root)
    return Worktree(path=path, branch=branch, repo=root, base=head.stdout.strip(), included=included)


def _make_dir(root: Path, name: str) -> tuple[int, int]:
    """Create `<root>/.worktrees/<name>` without following a symlink: the repository is the sandbox's
    workspace, and a planted `.worktrees -> ~/.hermes/skills` would put the checkout (and the next session's
    workspace) anywhere. Returns the new directory's (st_dev, st_ino) to check the path against later."""
    from hermes_agent.nofollow import open_dir

    try:
        fd = open_dir(str(root / ".worktrees"), create=True)
    except (PermissionError, NotADirectoryError):
        raise HermesError(f"--worktree: {root / '.worktrees'} is a symlink or not a directory (hermes does not "
                          "follow one there: a command could have planted it); remove it and run hermes -w again") from None
    try:
        os.mkdir(name, 0o777, dir_fd=fd)
        st = os.stat(name, dir_fd=fd, follow_symlinks=False)
    finally:
        os.close(fd)
    made = (st.st_dev, st.st_ino)
    if _identity(root / ".worktrees" / name) != made:
        raise HermesError(f"--worktree: {root / '.worktrees' / name} changed while it was being created")
    return made


def _identity(path: Path) -> tuple[int, int] | None:
    """(st_dev, st_ino) of the directory `path` names when no symlink is on the way to it, else None."""
    from hermes_agent.nofollow import open_dir

    try:
        fd = open_dir(str(path), create=False)
    except OSError:
        return None
    try:
        st = os.fstat(fd)
    finally:
        os.close(fd)
    return st.st_dev, st.st_ino


def _ignore_worktrees(root: Path) -> None:
    """Add `.worktrees/` to the repository's .gitignore. The repository is the sandbox's workspace: the
    file is read and appended without following a symlink (a link to ~/.bashrc is refused, with a line)."""
    import sys

    from hermes_agent.nofollow import append_nofollow, read_regular_text

    gitignore = root / ".gitignore"
    try:
        existing = read_regular_text(gitignore)
    except FileNotFoundError:
        existing = ""
    except OSError as exc:
        print(f"hermes: --worktree: {gitignore} not updated ({exc.strerror or exc})", file=sys.stderr)
        return
    if ".worktrees/" in existing.splitlines():
        return
    sep = "\n" if existing and not existing.endswith("\n") else ""
    try:
        append_nofollow(gitignore, f"{sep}.worktrees/\n")
    except OSError as exc:
        print(f"hermes: --worktree: {gitignore} not updated ({exc.strerror or exc})", file=sys.stderr)


def _copy_included(root: Path, path: Path) -> tuple[tuple[str, bytes], ...]:
    """Files named in `.worktreeinclude` (ignored files the agent needs) are copied, directories linked. Both
    trees are the sandbox's to write: the listing and every file are read, and every copy written, without
    following a symlink (an entry leading outside either tree is skipped). Returns what was put there."""
    import sys

    from hermes_agent.nofollow import read_regular_text

    try:
        listing = read_regular_text(root / ".worktreeinclude")
    except FileNotFoundError:
        return ()
    except OSError as exc:
        print(f"hermes: --worktree: .worktreeinclude not read ({exc.strerror or exc})", file=sys.stderr)
        return ()
    done = []
    for line in listing.splitlines():
        entry = line.strip()
        if entry and not entry.startswith("#"):
            try:
                put = _include(root, path, entry)
            except OSError as exc:
                print(f"hermes: --worktree: {entry} not copied ({exc.strerror or exc})", file=sys.stderr)
                continue
            if put is not None:
                done.append(put)
    return tuple(done)


def _include(root: Path, path: Path, entry: str) -> tuple[str, bytes] | None:
    from hermes_agent.nofollow import open_dir, read_regular, write_nofollow
    from hermes_agent.paths import is_under

    src, dst = os.path.realpath(root / entry), os.path.realpath(path / entry)
    if not is_under(src, str(root)) or not is_under(dst, str(path)) or dst in (str(path), str(root)) \
            or os.path.lexists(dst):
        return None
    if stat.S_ISDIR(os.lstat(src).st_mode):
        parent = open_dir(os.path.dirname(dst), create=True)
        try:
            os.symlink(src, os.path.basename(dst), dir_fd=parent)
        finally:
            os.close(parent)
        return os.path.relpath(dst, path), b"link:" + os.fsencode(src)
    data = read_regular(src)
    write_nofollow(dst, data)
    return os.path.relpath(dst, path), b"file:" + hashlib.sha256(data).digest()


def finish(wt: Worktree) -> str:
    """Remove the worktree and its branch when the run left no commit and no file in it (tracked, untracked or
    IGNORED: a session's outputs are usually ignored, results.db, models/, build/); otherwise keep it and say
    where it is and how to remove it. Returns the line to show."""
    if not wt.path.exists():
        return ""
    made = _made_files(wt)
    ahead = _git(["rev-list", "--count", f"{wt.base}..HEAD"], wt.path).stdout.strip()
    if made or ahead not in ("", "0"):
        from hermes_agent.termsafe import one_line

        shown = ", ".join(one_line(m) for m in made[:5]) + (f" (+{len(made) - 5} more)" if len(made) > 5 else "")
        what = f"files made or changed there: {shown}" if made else "new commits on its branch"
        return (f"worktree kept (it has changes): {wt.path} on branch {wt.branch}\n  {what}\n"
                f"  remove it with: git worktree remove --force {wt.path} && git branch -D {wt.branch}")
    _git(["worktree", "unlock", str(wt.path)], wt.repo)
    _git(["worktree", "remove", "--force", str(wt.path)], wt.repo)
    _git(["branch", "-D", wt.branch], wt.repo)
    return f"worktree removed (nothing changed): {wt.path}"


# Regenerated by the tools that made them: no reason alone to keep a worktree.
_CACHES = ("__pycache__", ".pytest_cache", ".mypy_cache", ".ruff_cache")


def _made_files(wt: Worktree) -> list[str]:
    """Every path git reports in the worktree (changed, untracked or ignored, files inside ignored directories
    listed one by one), less tool caches and what .worktreeinclude put there unchanged. A status git cannot
    give counts as a change (the worktree is then kept)."""
    out = _git(["status", "--porcelain=v1", "-z", "--untracked-files=all", "--ignored=traditional"], wt.path)
    if out.returncode != 0:
        return ["(git status failed: kept to be safe)"]
    included = dict(wt.included)
    made = []
    for item in out.stdout.split("\0"):
        name = item[3:].rstrip("/") if len(item) > 3 else ""
        if not name:
            continue
        if any(part in _CACHES for part in name.split("/")) or name.endswith(".pyc"):
            continue
        if name in included and _still(wt.path / name, included[name]):
            continue
        made.append(name)
    return made


def _still(path: Path, was: bytes) -> bool:
    """Is `path` still what .worktreeinclude put there (a link to the same place, or the same bytes)?"""
    from hermes_agent.nofollow import read_regular

    try:
        if was.startswith(b"link:"):
            return os.fsencode(os.readlink(path)) == was[5:]
        return b"file:" + hashlib.sha256(read_regular(path)).digest() == was
    except OSError:
        return False
