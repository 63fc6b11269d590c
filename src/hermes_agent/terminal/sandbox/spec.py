"""SandboxSpec: what the OS sandbox of one local backend enforces, taken from the path policy
(duck-typed: terminal sits beside approval.policy in the layer list and cannot import it).
Also the environment scrub and the "blocked by the sandbox" note of a command's result."""

from __future__ import annotations

import functools
import glob
import os
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field, replace
from typing import Protocol

from hermes_agent import paths
from hermes_agent.approval.toolsecrets import hidden_in_trees
from hermes_agent.paths import is_under as _under
from hermes_agent.terminal.sandbox import dotlinks, gitglobal, homecode, shellrc, views

# Inside a writable root these stay read-only (they make direnv run code later); git's are resolved
# at use (views.git_paths).
WORKSPACE_ASK: tuple[str, ...] = (".envrc",)
MODES = ("workspace-write", "read-only", "off")
MECHANISMS = ("auto", "bwrap", "landlock")


class PolicyLike(Protocol):
    """The fields of approval.policy.PathPolicy the sandbox reads."""

    home: str
    workspace: tuple[str, ...]
    writable: tuple[str, ...]
    secrets: tuple[str, ...]
    protected: tuple[str, ...]
    hermes_roots: tuple[str, ...]
    readable: tuple[str, ...]
    mode: str


@dataclass(frozen=True, slots=True)
class SandboxSpec:
    """Resolved paths: `writable` roots (existing), `readonly` paths inside them re-bound read-only
    (`sealed`: the part Landlock enforces too — HOME and the Hermes home under a writable root),
    `pinned` directories bound onto themselves (a workspace's .git: it cannot be renamed away),
    `secrets` hidden (existing files and directories), `network` off unshares/denies TCP.
    `private_tmp`: the session's own temp directory (mounted on /tmp under bwrap, TMPDIR under Landlock)
    when /tmp is not shared; `sockets`: unix sockets the user granted (others are unreachable).
    `replan` rebuilds the spec when `stamp` (views.watch_stamp) no longer matches the disk."""

    mode: str = "workspace-write"
    writable: tuple[str, ...] = ()
    readonly: tuple[str, ...] = ()
    secrets: tuple[str, ...] = ()
    network: bool = True
    mechanism: str = "auto"
    pinned: tuple[str, ...] = ()
    sealed: tuple[str, ...] = ()
    dot_sealed: tuple[str, ...] = ()  # the part of `sealed` kept for HOME's dot-links and includes (dotlinks.py)
    home_workspace: bool = False
    extra: tuple[str, ...] = ()
    private_tmp: str = ""
    sockets: tuple[str, ...] = ()
    loopback_ports: tuple[int, ...] = ()  # host 127.0.0.1 ports reachable from bwrap's own netns (netns.py)
    workspaces: tuple[str, ...] = ()  # watched by the run-later guard (guard.py) when writable
    quarantine: str = ""  # where the guard moves what it takes away ($HERMES_HOME/quarantine)
    git_globals: tuple[tuple[str, str], ...] = ()  # (original, credential-free copy); ("", combined) last
    note: str = ""  # said once to the user when the plan took something away (dotlinks over budget)
    # A closed HOME (default-deny, not a workspace): bwrap mounts an empty tmpfs on it and binds `home_readable`
    # back (read-only; writable and pinned roots by their own rule), `home_links` (name, target) recreated as
    # symlinks; Landlock grants reads on `home_readable` only. A file made in HOME later is not seen.
    home_closed: str = ""
    home_readable: tuple[str, ...] = ()
    home_links: tuple[tuple[str, str], ...] = ()

    @property
    def git_config_global(self) -> str:
        """The combined credential-free global git config (GIT_CONFIG_GLOBAL under Landlock), or ""."""
        return next((copy for orig, copy in self.git_globals if not orig), "")
    stamp: tuple = field(default=(), compare=False, repr=False)
    replan: Callable[[], SandboxSpec] | None = field(default=None, compare=False, repr=False)
    watch: Callable[[], tuple] | None = field(default=None, compare=False, repr=False)

    @property
    def enabled(self) -> bool:
        return self.mode != "off"

    def with_writable(self, *roots: str) -> SandboxSpec:
        """A copy with more writable roots (the backend's private state and temp directory)."""
        extra = tuple(os.path.realpath(p) for p in roots if p)
        paths.distrust_writable(*extra)
        return replace(self, writable=tuple(dict.fromkeys((*self.writable, *extra))),
                       extra=tuple(dict.fromkeys((*self.extra, *extra))))

    def refreshed(self) -> SandboxSpec | None:
        """A new spec when what it was planned from changed on disk (a .git appeared or moved, a new
        dot-entry in HOME), else None. A few stat calls."""
        if self.replan is None or self.watch is None or self.watch() == self.stamp:
            return None
        return self.replanned()

    def replanned(self) -> SandboxSpec:
        """The spec planned again from the disk as it is now, keeping the grants added to this one."""
        assert self.replan is not None
        return replace(self.replan().with_writable(*self.extra), private_tmp=self.private_tmp)

    def with_private_tmp(self, path: str) -> SandboxSpec:
        """A copy whose /tmp is `path` (writable), unless /tmp is shared (sandbox.shared_tmp: true)."""
        if not self.denies_write("/tmp"):
            return self
        return replace(self.with_writable(path), private_tmp=os.path.realpath(path))

    def denies_write(self, path: str) -> bool:
        """True when a write to `path` is refused by this spec (readonly, secret or outside the roots)."""
        real = os.path.realpath(path)
        if real.startswith("/dev/"):
            return False
        if _match(real, self.secrets):
            return True
        rw = _match(real, (*self.writable, *self.pinned))
        ro = _match(real, self.readonly)
        return rw is None or (ro is not None and len(ro) >= len(rw))

    def hides(self, path: str) -> bool:
        real = os.path.realpath(path)
        return _match(real, self.secrets) is not None or self.unseen(real)

    def read_view(self) -> tuple[tuple[str, ...], tuple[str, ...]]:
        """For Landlock: (directories granted nothing, paths readable again inside them): the host's /tmp when
        the session has its own (Landlock cannot remap it, a47), and a closed HOME but for its allowlist."""
        unseen: tuple[str, ...] = ()
        reveal: tuple[str, ...] = ()
        if self.private_tmp:
            from hermes_agent.terminal.sandbox.bwrap import visible_under_tmp

            unseen, reveal = ("/tmp", "/var/tmp"), tuple(visible_under_tmp())
        if self.home_closed:
            unseen += (self.home_closed,)
            reveal = (*(r for r in reveal if not self.unseen(r)),  # not a hidden one (a git config's original)
                      *(r for r in self.home_readable if _match(r, self.secrets) is None))
        return unseen, reveal

    def unseen(self, real: str) -> bool:
        """Resolved `real` lies in the closed HOME outside what is bound back (nothing there to mount on)."""
        return bool(self.home_closed) and _under(real, self.home_closed) and \
            _match(real, _bound_in(self.home_closed, self.home_readable, self.writable, self.pinned)) is None


def spec_from_policy(policy: PolicyLike, *, network: object = True, mechanism: str = "auto",
                     mode: str | None = None, sockets: Iterable[str] = (),
                     loopback_ports: Iterable[object] = ()) -> SandboxSpec:
    """The sandbox of a path policy. Only existing paths are mounted or hidden (bwrap needs them)."""
    mode = str(mode or policy.mode or "workspace-write").strip().lower()
    if mode not in MODES:
        mode = "workspace-write"
    home = os.path.realpath(getattr(policy, "home", "") or os.path.expanduser("~"))
    home = "" if home == "/" else home
    writable = [p for p in policy.writable if os.path.exists(p)] if mode == "workspace-write" else []
    paths.distrust_writable(*writable)  # never a place hermes takes a program it runs unconfined from
    secrets = (*_existing(policy.secrets), *(os.path.realpath(p) for p in views.hidden_paths(
        home, getattr(policy, "hermes_roots", ()), getattr(policy, "readable", ()),
        getattr(policy, "foreign_homes", ()))), *hidden_in_trees(getattr(policy, "tool_trees", ()),
                                                                  getattr(policy, "readable_grants", ())))
    readonly = [p for p in policy.protected if _match(p, writable) and os.path.exists(p)]
    pinned: list[str] = []
    sealed = [p for p in (home, getattr(policy, "hermes_home", ""), *getattr(policy, "hermes_roots", ()))
              if p and _match(p, writable) and os.path.isdir(p)]
    home_ws = bool(home) and mode == "workspace-write" and any(views.under(home, w) for w in policy.workspace)
    if home_ws:  # HOME read-only; its existing non-dot entries writable
        rc = shellrc.protected_paths(home)
        writable += views.home_children(home, keep=(*rc, *homecode.code_paths(home, protected=rc)))
    notes: list[str] = []
    # where the nested-repository scan looks: what commands can write (HOME as the workspace: its entries)
    scan_within = [w for w in writable if not (home_ws and views.under(home, w))]
    for root in policy.workspace if mode == "workspace-write" else ():
        readonly += [os.path.join(root, rel) for rel in WORKSPACE_ASK if os.path.lexists(os.path.join(root, rel))]
        ro, pin = views.git_paths(root, home, os.environ.get("GIT_DIR"), scan_within)
        readonly += ro
        pinned += pin
        notes += _nested_notes(root, scan_within)
    dot = _dot_link_plan(home, writable, pinned, sealed)
    sealed += dot.sealed
    readonly += dot.readonly
    writable += dot.writable
    pinned += _ancestors_in(sealed, writable)
    readonly = [p for p in (*readonly, *sealed) if _match(os.path.realpath(p), (*writable, *pinned))]
    git_globals = gitglobal.filtered_globals(home, getattr(policy, "hermes_home", ""),
                                             functools.partial(_can_write, (*writable, *pinned), readonly))
    if any(o and _match(os.path.realpath(o), getattr(policy, "readable_grants", ())) for o, _ in git_globals):
        git_globals = ()  # the user granted an original (sandbox.readable_paths): git reads the originals
    # the originals are hidden (Landlock: no read rule); bwrap binds the filtered copies over them
    secrets = (*secrets, *(orig for orig, _ in git_globals if orig and os.path.lexists(orig)))
    mech = str(mechanism or "auto").strip().lower()
    workspaces = tuple(os.path.realpath(w) for w in policy.workspace)
    secrets = tuple(dict.fromkeys((*secrets, *_outside_home(policy, sockets))))
    closed = home if home and getattr(policy, "home_closed", False) else ""
    visible = views.home_view(closed, (*policy.readable, *getattr(policy, "readable_grants", ())),
                              (*writable, *pinned)) if closed else ()
    if closed:  # what lies in the closed HOME outside the allowlist is unseen already: not one mount each
        seen = _bound_in(closed, visible, writable, pinned)
        secrets = tuple(p for p in secrets if not _under(p, closed) or _match(p, seen))
    secrets = _outermost(secrets)
    sockets = tuple(os.path.realpath(os.path.expanduser(str(p))) for p in sockets)
    # a closed HOME: only dot-entries the allowlist reaches change the plan when they appear or go
    watched = frozenset(os.path.relpath(p, closed).split("/")[0] for p in (*policy.readable, *getattr(
        policy, "readable_grants", ())) if _under(p, closed) and p != closed) if closed and not home_ws else None
    spec = SandboxSpec(mode=mode, writable=tuple(dict.fromkeys(writable)),
                       readonly=tuple(dict.fromkeys(os.path.realpath(p) for p in readonly)),
                       secrets=secrets, network=_flag(network),
                       mechanism=mech if mech in MECHANISMS else "auto", pinned=tuple(dict.fromkeys(pinned)),
                       sealed=tuple(dict.fromkeys(sealed)), dot_sealed=dot.sealed, home_workspace=home_ws,
                       sockets=sockets, loopback_ports=_ports(loopback_ports),
                       git_globals=git_globals, workspaces=workspaces if mode == "workspace-write" else (),
                       note="; ".join(n for n in (dot.note, *notes) if n), home_closed=closed, home_readable=visible,
                       home_links=tuple(getattr(policy, "home_links", ())) if closed else (), quarantine=os.path.join(getattr(policy, "hermes_home", "") or "", "quarantine")
                       if getattr(policy, "hermes_home", "") else "",
                       stamp=views.watch_stamp(workspaces, home, watched),
                       replan=functools.partial(spec_from_policy, policy, network=network, mechanism=mechanism,
                                                mode=mode, sockets=sockets, loopback_ports=loopback_ports),
                       watch=functools.partial(views.watch_stamp, workspaces, home, watched))
    return spec



def _nested_notes(root: str, scan_within: list[str]) -> list[str]:
    """What the nested-repository plan of workspace `root` keeps read-only whole, said once (views.py)."""
    notes: list[str] = []
    unscanned = views.nested_scan(root, scan_within)[1]
    whole = views.collapsed_repos(root, scan_within)
    if whole:
        shown = ", ".join(os.path.relpath(p, root) if p != root else "the whole workspace" for p in whole[:3]) + (
            " ..." if len(whole) > 3 else "")
        notes.append(f"hermes: more than {views.NESTED_REPOS} git repositories are nested in the workspace {root}: "
                     f"{shown} stay read-only in the sandbox")
    if unscanned:
        shown = ", ".join(os.path.relpath(p, root) for p in unscanned[:3]) + (" ..." if len(unscanned) > 3 else "")
        notes.append(f"hermes: the workspace {root} is too large to check for nested git repositories (more than "
                     f"{views.NESTED_BUDGET} directories or {views.NESTED_DEPTH} levels): {shown} stay "
                     "read-only in the sandbox")
    return notes


def _ports(values: Iterable[object]) -> tuple[int, ...]:
    """`sandbox.loopback_ports` as TCP port numbers (anything else is dropped; below 1024 too: the launcher,
    without capabilities, cannot listen there inside)."""
    ports = []
    for value in values or ():
        try:
            port = int(str(value).strip())
        except ValueError:
            continue
        if 1024 <= port < 65536 and port not in ports:
            ports.append(port)
    return tuple(ports)


@dataclass(frozen=True, slots=True)
class _DotPlan:
    sealed: tuple[str, ...] = ()  # kept read-only by both mechanisms (Landlock: carved out of its root)
    readonly: tuple[str, ...] = ()  # bwrap: a directory re-bound read-only around a name it must keep
    writable: tuple[str, ...] = ()  # bwrap: that directory's other entries, bound writable again
    note: str = ""


def _dot_link_plan(home: str, writable: list[str], pinned: list[str], sealed_now: list[str]) -> _DotPlan:
    """Keep the run-later files that HOME's dot-links resolve into (dotlinks.py) read-only. An existing
    target is sealed (bwrap: ro-bind, its directories pinned; Landlock: carved out of its root, so no new
    entry in the directories on the way to it). A name bwrap cannot bind (a missing target, an intermediate
    symlink) keeps its directory read-only and that directory's other entries writable. Over the walk's
    budget every writable root is kept read-only (fail closed) and the note says so. "Writable" is what
    both mechanisms allow: bwrap's other read-only carve-outs (a shell rc file's target) are not Landlock's."""
    can = functools.partial(_can_write, (*writable, *pinned), sealed_now)
    kept, complete = dotlinks.kept_paths(home, can)
    if not complete:
        return _DotPlan(sealed=tuple(w for w in writable if os.path.isdir(w)),
                        note="hermes: too many entries in your home's dot-directories to check which "
                             "symlinks lead into the workspace: the workspace is read-only in the sandbox")
    sealed: list[str] = []
    dirs: list[str] = []
    rw: list[str] = []
    for path in kept:
        root = _match(path, (*writable, *pinned)) or path
        exists = os.path.lexists(path) and not os.path.islink(path)
        if _shared_scratch(root):  # a shared /tmp: bwrap only (see _shared_scratch)
            dirs += [path] if exists else []
            continue
        sealed.append(path)
        if exists:
            continue
        parent = dotlinks.nearest_existing(os.path.dirname(path), (root,))
        if parent not in dirs:
            dirs.append(parent)
            rw += dotlinks.other_entries(parent, path)
    note = ""
    if kept:
        shown = ", ".join(kept[:3]) + (f" and {len(kept) - 3} more" if len(kept) > 3 else "")
        note = (f"hermes: your home's dot-files link into what the sandbox could write: {shown} stay read-only "
                "(they run or configure code later); under Landlock no new entry can be made in the "
                "directories holding them either")
    # an entry made writable again around a missing name must not reopen another kept path (a kept directory
    # holding it: ~/.config -> dotfiles/config is kept whole, its fish/config.fish missing)
    rw = [p for p in rw if not any(p == k or p.startswith(k.rstrip("/") + "/") for k in kept)]
    return _DotPlan(tuple(sealed), tuple(dirs), tuple(rw), note)


def _shared_scratch(root: str) -> bool:
    """A world-writable sticky directory (/tmp with sandbox.shared_tmp): a link into it (~/.config/pulse/
    *-runtime -> /tmp/pulse-*) is as open to every local user as to the sandbox. bwrap re-binds an existing
    target read-only; Landlock would have to take file creation away from all of /tmp, so it does not."""
    try:
        mode = os.stat(root).st_mode
    except OSError:
        return False
    return bool(mode & 0o1000) and bool(mode & 0o002)


def _can_write(writable: Iterable[str], readonly: Iterable[str], path: str) -> bool:
    """Would the planned sandbox let a command write `path` (a writable root not covered by a carve-out)?"""
    rw, ro = _match(path, writable), _match(path, readonly)
    return rw is not None and (ro is None or len(ro) < len(rw))


def _ancestors_in(paths: Iterable[str], roots: Iterable[str]) -> list[str]:
    """The directories between each path and the writable root holding it (a58: HOME's parent under a
    shared /tmp was renamed and a fake HOME put in its place). Under bwrap each is bound onto itself: a
    mount point cannot be renamed. Landlock refuses such a rename by itself (REFER: the moved tree would
    hold HOME's fewer rights)."""
    roots = [r for r in roots if r != "/"]
    out: list[str] = []
    for path in paths:
        holder = _match(path, [r for r in roots if r != path])
        if holder is None:
            continue
        parent = os.path.dirname(path)
        while parent != holder and _under(parent, holder):
            out.append(parent)
            parent = os.path.dirname(parent)
    return out


def _outside_home(policy: PolicyLike, sockets: Iterable[str]) -> list[str]:
    """What the sandbox hides outside HOME: reads there are an allowlist (readable.py)."""
    from hermes_agent.terminal.sandbox import readable

    return readable.for_policy(policy, (os.path.realpath(os.path.expanduser(str(p))) for p in sockets))


def _existing(entries: Iterable[str]) -> tuple[str, ...]:
    out: list[str] = []
    for entry in entries:
        if entry.startswith("/proc/"):  # a fresh /proc inside; other processes are fenced off by Landlock
            continue
        hits = glob.glob(entry) if any(ch in entry for ch in "*?[") else [entry]
        out += [os.path.realpath(h) for h in hits if os.path.lexists(h)]
    return tuple(dict.fromkeys(out))


def _flag(value: object) -> bool:
    if isinstance(value, str):
        return value.strip().lower() not in ("off", "false", "no", "0", "none")
    return bool(value)


def _bound_in(home: str, *groups: Iterable[str]) -> tuple[str, ...]:
    """The paths of `groups` strictly inside `home` (a writable /tmp holding HOME does not open it)."""
    return tuple(p for g in groups for p in g if p != home and _under(p, home))


def _match(path: str, roots: Iterable[str]) -> str | None:
    best = None
    for root in roots:
        if _under(path, root) and (best is None or len(root) > len(best)):
            best = root
    return best


def _outermost(paths: tuple[str, ...]) -> tuple[str, ...]:
    """`paths` minus those inside another one (set lookups of each one's ancestors: the list holds hundreds
    since reads outside HOME are an allowlist)."""
    keep = set(paths)

    def inside(p: str) -> bool:
        parent = os.path.dirname(p)
        while parent and parent != p:
            if parent in keep:
                return True
            p, parent = parent, os.path.dirname(parent)
        return False
    return tuple(p for p in paths if not inside(p))


# -- environment ------------------------------------------------------------------------------

_SECRET_KEY = re.compile(r"(api_?key|token|secret|password)$", re.I)


def secret_env_names(dotenv: Mapping[str, str], config: Mapping, environ: Mapping[str, str]) -> tuple[str, ...]:
    """Variables a command must not see: every name loaded from $HERMES_HOME/.env, and every
    variable whose value is a config value named like api_key/token/secret/password."""
    values = {v for v in _secret_values(config) if len(v) >= 8}
    named = {k for k, v in environ.items() if v and v in values}
    return tuple(sorted(set(dotenv) | named))


def _secret_values(node: object, key: str = "") -> list[str]:
    if isinstance(node, Mapping):
        return [v for k, sub in node.items() for v in _secret_values(sub, str(k))]
    if isinstance(node, list):
        return [v for sub in node for v in _secret_values(sub, key)]
    return [node.strip()] if isinstance(node, str) and _SECRET_KEY.search(key) and node.strip() else []


# -- "blocked by the sandbox" note ------------------------------------------------------------

BLOCKED_NOTE = ("[sandbox: the OS sandbox blocked this (writes only in the workspace and temp dirs; "
                "credentials hidden). If it is really needed, re-run with sandbox: false and a reason; "
                "the user will be asked to approve]")
_DENIAL = re.compile(r"Read-only file system|Permission denied|Operation not permitted|No such file or directory"
                     r"|EROFS|EACCES|EPERM")
_PATH = re.compile(r"(?:~|\.{0,2})/[^\s:'\"`,;()‘’]*|['‘\"]([^'’\"\n]+)['’\"]|([^\s:'\"‘’]+): (?=Read-only|Permission|Operation|No such)")


def blocked_by_sandbox(spec: SandboxSpec, output: str, cwd: str, home: str) -> bool:
    """Did a failed command hit the sandbox? A denial line that names a path the spec refuses."""
    for line in output.splitlines()[-200:]:
        m = _DENIAL.search(line)
        if not m:
            continue
        write_err = m.group(0) in ("Read-only file system", "EROFS")
        for found in _PATH.finditer(line):
            raw = found.group(1) or found.group(2) or found.group(0)
            path = home + raw[1:] if raw.startswith("~") else os.path.join(cwd, raw)
            if spec.hides(path) or (m.group(0) != "No such file or directory" and spec.denies_write(path)):
                return True
        if write_err:
            return True
    return False
