"""The path policy inside the file tools (local backend only: a container's or a remote host's paths are
not this machine's). Reads of secret paths are refused; writes the policy does not allow go to the
approval gate; and every read and write happens on the resolved path that was checked, opened one
component at a time without following symlinks, so a symlink swapped in after the check is refused."""

from __future__ import annotations

import errno
import os
import stat as stat_mod
from typing import BinaryIO

from hermes_agent.approval.policy import PathPolicy, Verdict, resolve
from hermes_agent.nofollow import open_dir, open_nofollow, pseudo_fs, write_nofollow
from hermes_agent.paths import is_under as _under
from hermes_agent.terminal.base import TerminalBackend, keep_work
from hermes_agent.tools.builtin._fileio import FileToolError


def denied_read(verdict: Verdict) -> FileToolError:
    """The error the model reads for a secret path: what, why, and how the user can grant it."""
    return FileToolError(f"Access denied: {verdict.reason}. Do not try to read it another way.", path=verdict.path)


class GuardedBackend:
    """A local backend whose file operations obey `policy` and never follow a symlink: reads of secrets
    raise, writes succeed only on resolved paths `authorize` approved. It offers exactly the operations
    the file tools use (no attribute forwarding: nothing unguarded can be reached through it)."""

    kind = "local"
    isolated = False

    def __init__(self, backend: TerminalBackend, policy: PathPolicy) -> None:
        self._backend = backend
        self.policy = policy
        self.approved: set[str] = set()

    def cwd(self) -> str:
        return self._backend.cwd()

    def execute(self, command: str, **kw: object):  # noqa: ANN201 - the backend's ExecResult
        """A command: it runs inside the backend's OS sandbox like any terminal call."""
        return self._backend.execute(command, **kw)

    def stat(self, path: str) -> dict | None:
        """{"size", "is_dir", "mtime"} of the resolved path (no symlink followed on the way: a swapped-in
        link is refused), None when missing. Metadata only: reading is checked by `readable`."""
        try:
            fd = open_nofollow(self.real(path), getattr(os, "O_PATH", os.O_RDONLY))
        except (FileNotFoundError, NotADirectoryError):
            return None
        try:
            st = os.fstat(fd)
        finally:
            os.close(fd)
        return {"size": st.st_size, "is_dir": stat_mod.S_ISDIR(st.st_mode), "mtime": st.st_mtime}

    def real(self, path: str) -> str:
        return resolve(path, self._backend.cwd(), self.policy.home)

    def readable(self, path: str) -> str:
        """The resolved path of a readable file; FileToolError for a secret or a path outside what commands
        may read (the sandbox's allowlist outside HOME: the file tools read what a command could)."""
        verdict = self.policy.check_read(path, self._backend.cwd())
        if verdict.allowed:
            verdict = outside_verdict(self.policy, verdict.path)
        if not verdict.allowed:
            raise denied_read(verdict)
        return verdict.path

    def open_bytes(self, path: str) -> BinaryIO:
        """A regular file opened for reading, no symlink followed anywhere on its resolved path."""
        fd = open_nofollow(self.readable(path), os.O_RDONLY | os.O_NONBLOCK)
        try:
            st = os.fstat(fd)
            if not stat_mod.S_ISREG(st.st_mode):
                raise FileToolError(f"{path} is not a regular file (device, FIFO or socket); not read")
            from hermes_agent.tools.builtin._linkguard import linked_secret

            if (secret := linked_secret(self.policy, st)) is not None:  # or a copy made apart from one
                raise FileToolError(f"Access denied: {path} is a hard link to {secret}, which is private "
                                    "(credentials, or the Hermes home); not read. Do not try to read it "
                                    "another way.", path=path)
            fs = pseudo_fs(fd)
            if fs:
                raise FileToolError(f"{path} is a kernel {fs} file (it may block, never end or drain kernel "
                                    "state); the file tools do not read it. Use the terminal for it.")
            os.set_blocking(fd, True)
            return os.fdopen(fd, "rb")
        except BaseException:
            os.close(fd)
            raise

    def read_bytes(self, path: str, limit: int | None = None) -> bytes:
        with self.open_bytes(path) as fh:
            return fh.read() if limit is None else fh.read(limit)

    def confine(self, argv: list[str]) -> tuple[list[str], dict[str, str]] | None:
        """(argv, environment) that run `argv` (a search program) inside a read-only OS sandbox of the policy,
        so a symlink swapped in under it cannot lead it to a secret; None when no sandbox works here."""
        from hermes_agent.terminal.sandbox.launcher import choose_mechanism
        from hermes_agent.terminal.sandbox.spec import spec_from_policy
        from hermes_agent.terminal.sandbox.wrapped import sandbox_launch

        spec = spec_from_policy(self.policy, mode="read-only")
        if choose_mechanism(spec)[0] is None:
            return None
        argv, plan = sandbox_launch(spec, argv, pidns=False)  # rg/grep run no one's code: no per-search namespace
        return argv, {**os.environ, **plan}

    def write_bytes(self, path: str, data: bytes) -> None:
        real = self._approved(path)
        from hermes_agent.terminal.sandbox import byhand

        byhand.remember(self.policy.workspace)  # the session report's baseline (first write or command)
        keep_work([os.path.dirname(real)], f"a file tool writes {os.path.basename(path)}")  # the uncommitted work it may replace (c14)
        with self._trusted():
            write_nofollow(real, data)

    def remove(self, path: str) -> None:
        real = self._approved(path)
        keep_work([os.path.dirname(real)], f"a file tool removes {os.path.basename(path)}")
        parent = open_dir(os.path.dirname(real), create=False)
        try:
            with self._trusted():
                os.unlink(os.path.basename(real), dir_fd=parent)
        finally:
            os.close(parent)

    def _trusted(self):  # noqa: ANN202 - a context manager
        """The write is hermes's own (the gate approved it): the run-later guard must not put it back."""
        import contextlib

        from hermes_agent.terminal.sandbox.guard import existing_guard
        from hermes_agent.tools.confined import CONFINED_ORIGIN

        guard = existing_guard(self.policy.workspace)
        if guard is None or CONFINED_ORIGIN.get():  # a script's RPC write: judged like the script's own writes
            return contextlib.nullcontext()
        return guard.trusted()

    def _approved(self, path: str) -> str:
        real = self.real(path)
        if real not in self.approved:
            raise PermissionError(errno.EACCES, "not checked against the path policy (or a symlink changed it)", path)
        return real


_OUTSIDE: dict[PathPolicy, tuple[float, frozenset[str]]] = {}


def outside_hidden(policy: PathPolicy) -> frozenset[str]:
    """What the sandbox of `policy` hides outside HOME (terminal/sandbox/readable.py), planned at most
    once a minute per policy (the file tools build a guarded backend per call)."""
    import time

    from hermes_agent.terminal.sandbox.readable import for_policy

    hit = _OUTSIDE.get(policy)
    if hit is None or time.monotonic() - hit[0] > 60:
        hit = _OUTSIDE[policy] = (time.monotonic(), frozenset(for_policy(policy)))
    return hit[1]


def outside_verdict(policy: PathPolicy, real: str) -> Verdict:
    """deny when resolved `real` lies in a path the sandbox hides outside HOME, else allow."""
    hidden = outside_hidden(policy)
    probe = real
    while True:
        if probe in hidden:
            return Verdict("deny", real, f"{real} is outside what commands and the file tools may read (the "
                                         "system, your home, the workspace, PATH); the user can allow it with "
                                         "sandbox.readable_paths in config.yaml", "outside_read")
        parent = os.path.dirname(probe)
        if parent == probe:
            return Verdict("allow", real)
        probe = parent


def guarded(ctx: object) -> TerminalBackend:
    """The task's backend, wrapped by the path policy when there is one and the backend is local."""
    backend = ctx.backend()
    policy = getattr(ctx, "path_policy", None)
    if policy is None or backend.kind != "local" or isinstance(backend, GuardedBackend):
        return backend
    return GuardedBackend(backend, policy)  # type: ignore[return-value]


def authorize(ctx: object, backend: TerminalBackend, paths: list[str], tool: str) -> list[str]:
    """The resolved form of `paths` once every one may be written: the policy allows it or the approval
    gate says yes (FileToolError with the gate's reason otherwise). Unguarded backends: unchanged."""
    if not isinstance(backend, GuardedBackend):
        return paths
    verdicts = _dot_link_targets_ask(backend.policy, [backend.policy.check_write(p, backend.cwd()) for p in paths])
    verdicts = _git_internals_ask(backend.policy, verdicts)
    real = [v.path for v in verdicts]
    if any(not v.allowed for v in verdicts):
        check = getattr(ctx, "approve_write", None)
        if check is None:
            reasons = "; ".join(v.reason for v in verdicts if not v.allowed)
            raise FileToolError(f"BLOCKED: {tool} was not done: {reasons}, and nobody can approve it here")
        decision = check(real, session_id=getattr(ctx, "session_id", None), tool=tool, verdicts=verdicts)
        if not decision.allowed:
            raise FileToolError(decision.reason)
    backend.approved.update(real)
    return real


_DOT_LINKS: dict[tuple, list[str]] = {}


def _dot_link_targets_ask(policy: PathPolicy, verdicts: list[Verdict]) -> list[Verdict]:
    """An allowed write to what one of HOME's dot-links leads to (~/.vimrc -> ~/dotfiles/vimrc: the file
    the sandbox keeps read-only, terminal/sandbox/dotlinks.py) asks first: it runs or configures code later.
    The walk is done once per HOME mtime and set of writable roots."""
    if not any(v.allowed for v in verdicts) or not policy.home:
        return verdicts
    from hermes_agent.terminal.sandbox import dotlinks

    try:
        key = (policy.home, policy.writable, os.stat(policy.home).st_mtime_ns)
    except OSError:
        return verdicts
    if key not in _DOT_LINKS:
        kept, complete = dotlinks.kept_paths(policy.home, lambda p: _writes_freely(policy, p))
        _DOT_LINKS.clear()
        _DOT_LINKS[key] = kept if complete else list(policy.writable)
    kept = _DOT_LINKS[key]
    out = []
    for v in verdicts:
        hit = next((k for k in kept if _under(v.path, k)), None) if v.allowed else None
        out.append(Verdict("ask", v.path, f"{v.path} is what a dot-file of your home links to: it runs or "
                                          "configures code later", "protected_write") if hit else v)
    return out


def _git_internals_ask(policy: PathPolicy, verdicts: list[Verdict]) -> list[Verdict]:
    """An allowed write inside a git directory (a `.git` component; a linked worktree's or a submodule's git
    directory outside the workspace, approval/linkedgit.py) asks first: a file tool writes as hermes, where the
    run-later guard and gitobjects.py do not look, and a `refs/replace/*` ref, `objects/info/alternates` or a
    loose object written there changes what git hands out for committed files (rt14b, found with c26)."""
    if not any(v.allowed for v in verdicts):
        return verdicts
    from hermes_agent.approval.linkedgit import outside_gitdir

    outside = [p for ws in policy.workspace for part in outside_gitdir(ws) for p in part]
    out = []
    for v in verdicts:
        inside = v.allowed and ("/.git/" in v.path + "/" or any(_under(v.path, g) for g in outside))
        out.append(Verdict("ask", v.path, f"{v.path} is inside a git directory: git hands out or runs what is "
                                          "written there", "git_hooks") if inside else v)
    return out


def _writes_freely(policy: PathPolicy, path: str) -> bool:
    """Inside a writable root, and not a dot-entry of HOME reached through a root holding HOME (those ask)."""
    home = policy.home
    dot = _under(path, home) and path != home and path[len(home.rstrip("/")) + 1:].startswith(".")
    return any(_under(path, r) and not (dot and _under(home, r)) for r in policy.writable)


def check_read(backend: TerminalBackend, path: str) -> str:
    """`path` resolved and checked when the backend is guarded (FileToolError for a secret), else as is."""
    return backend.readable(path) if isinstance(backend, GuardedBackend) else path


def real_path(backend: TerminalBackend, path: str) -> str:
    """`path` with symlinks resolved when the backend is guarded (one name per file), else as is."""
    return backend.real(path) if isinstance(backend, GuardedBackend) else path


class SearchGuard:
    """What a search under `root` must leave out: secrets below it (excluded from rg and the walker, by
    path relative to the root) and any hit whose resolved path is a secret (symlinked files)."""

    def __init__(self, policy: PathPolicy, root: str) -> None:
        self.policy = policy
        self.root = root
        below = [s for s in policy.secrets if not any(c in s for c in "*?[") and s.startswith(root.rstrip("/") + "/")]
        outside = [s for s in outside_hidden(policy) if s.startswith(root.rstrip("/") + "/")]
        self.exact = frozenset((*(s for s in below if not policy.check_read(s).allowed), *outside))
        self.exclude = tuple(sorted(s[len(root.rstrip("/")) + 1:] for s in self.exact))
        self._seen: dict[str, bool] = {}

    @classmethod
    def for_backend(cls, backend: TerminalBackend, root: str) -> SearchGuard | None:
        """None when the backend is not guarded; FileToolError when `root` itself is a secret."""
        if not isinstance(backend, GuardedBackend):
            return None
        return cls(backend.policy, backend.readable(root))

    def visible(self, path: str) -> bool:
        """May a result at `path` (absolute, or relative to the root) be shown?"""
        seen = self._seen.get(path)
        if seen is None:
            verdict = self.policy.check_read(path, self.root)
            seen = verdict.allowed and outside_verdict(self.policy, verdict.path).allowed
            self._seen[path] = seen = seen and not _hard_linked_secret(self.policy, verdict.path)
        return seen

    def hide(self, path: str, is_link: bool) -> bool:
        """For the walker: secrets below the root, and symlinks that lead to one."""
        return path in self.exact or (is_link and not self.visible(path))


def _hard_linked_secret(policy: PathPolicy, real: str) -> bool:
    """A search hit that is a hard link to a private file (_linkguard): left out like the file itself."""
    try:
        st = os.lstat(real)
    except OSError:
        return False
    from hermes_agent.tools.builtin._linkguard import linked_secret

    return linked_secret(policy, st) is not None
