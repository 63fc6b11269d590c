"""What a confined command may read outside HOME: an allowlist (issue 19, rt4 a01: a root session's command
read an SSH key in /work/ci/sshd and used it on a loopback sshd). Everything not listed is hidden, planned as
concrete paths (the complement of the allowlist, expanded where an allowed path lies deeper), so bwrap
(`--tmpfs` / `/dev/null`) and Landlock (no read rule) enforce the same list through `SandboxSpec.secrets`.

Readable:
- the system: `SYSTEM_READABLE` (programs, libraries, /etc, /opt, /nix, /snap; /proc, /dev, /sys and the temp
  dirs as the rest of the sandbox arranges them; of /var only the package managers' databases and caches, of
  /run only the resolver's files: /var and /run hold the machine's state — databases, mail, backups, logs,
  container and service secrets);
- HOME (default-deny inside it by its own rule: views.hidden_paths, views.home_view), the workspaces, the writable roots, the readable
  locations of the policy (sandbox.readable_paths, hermes's code, other homes' tool directories): the grants;
- each PATH directory (resolved), and for a PATH directory named bin/sbin outside every home its prefix's
  lib*, libexec, share, include and pyvenv.cfg; for an executable symlink in a PATH directory outside the
  system roots, the *file* it points to (never its directory, rt5 a07: a key beside a linked script) and,
  when that file lies in a bin/sbin, that prefix's parts (a venv's python -> /root/.pyenv/versions/X/bin/
  python3: its standard library);
- the targets of /etc's own symlinks (resolv.conf -> /run/systemd/resolve/...) when they are files.
One rule for every tree that packages do not own (`PUBLIC_ONLY`: /etc, /usr/local, /opt; and each PATH
directory, prefix part or link target above that lies outside the system roots and every home): only what
everyone on this machine may read, at any depth (publicwalk.py): a file without the other-read bit, or a
directory without other-read-and-search (shadow, sudoers*, ssh host keys, docker's key.json, a deploy key of
mode 0600, a 0700 directory in /usr/local/lib) is hidden, whoever owns it; a private PATH directory or
link target is not readable at all. The grants are exempt: the user named them.
Stdlib only."""

from __future__ import annotations

import os
from collections.abc import Iterable

from hermes_agent import paths
from hermes_agent.terminal.sandbox import publicwalk
from hermes_agent.terminal.sandbox.publicwalk import ancestors, under
from hermes_agent.terminal.sandbox.publicwalk import complement as _complement

SYSTEM_READABLE: tuple[str, ...] = (
    "/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc", "/opt", "/nix", "/snap",
    "/proc", "/dev", "/sys", "/tmp", "/var/tmp",
    "/var/lib/dpkg", "/var/lib/apt", "/var/lib/rpm", "/var/lib/pacman", "/var/lib/dnf",
    "/var/cache/apt", "/var/cache/fontconfig", "/var/cache/man",
    "/run/systemd/resolve", "/run/resolvconf",
)
# Trees packages do not own (or hold admins' files among theirs): inside them only what everyone may read
PUBLIC_ONLY: tuple[str, ...] = ("/etc", "/usr/local", "/opt")
PREFIX_PARTS: tuple[str, ...] = ("bin", "sbin", "lib", "lib32", "lib64", "libexec", "share", "include", "pyvenv.cfg")
_LINK_BUDGET = 4000  # entries of a non-system PATH directory looked at for interpreter symlinks


def allowed_roots(home: str, allow: Iterable[str], homes: Iterable[str] = (),
                  search_path: str | None = None, writable: Iterable[str] = ()) -> list[str]:
    """Every path readable outside the hidden dot-entries: system roots, HOME, `allow` (workspaces, writable
    roots, the policy's readable locations), PATH directories and interpreter prefixes (resolved)."""
    homes = [h for h in (home, *homes) if h]
    system = [os.path.realpath(p) for p in SYSTEM_READABLE if os.path.lexists(p)]
    out = list(system)
    out += [home] if home else []
    out += [os.path.normpath(a) for a in allow if a]  # resolved by the policy
    out += _etc_link_targets()
    out += path_dirs(search_path, homes, system, [os.path.normpath(w) for w in writable if w])
    return list(dict.fromkeys(p for p in out if p and p != "/"))


def path_dirs(search_path: str | None, homes: list[str], system: list[str],
              writable: Iterable[str] = ()) -> list[str]:
    """PATH's directories (resolved) with the prefixes of those named bin/sbin outside every home, and of
    the interpreters their symlinks point to (a PATH directory outside `system` only). A PATH entry in a
    `writable` root (named or resolved) is skipped: readable anyway, and the sandbox could make it a
    symlink to anywhere before the next plan."""
    raw = paths.user_path() if search_path is None else search_path
    out: list[str] = []
    for entry in raw.split(os.pathsep):
        if not entry or not os.path.isabs(entry) or not os.path.isdir(entry):
            continue
        real = _trusted_real(entry, writable)
        if not real:
            continue
        out += [real, *_prefix_parts(real, homes)]
        if not any(under(real, s) for s in system):
            out += _link_targets(real, homes, writable)
    return out


def _prefix_parts(bin_dir: str, homes: list[str]) -> list[str]:
    """bin_dir's prefix's library and data parts, when bin_dir is a bin/sbin outside every home (the prefix
    of ~/.local/bin holds ~/.local/share: keyrings, histories)."""
    if os.path.basename(bin_dir) not in ("bin", "sbin") or any(under(bin_dir, h) for h in homes):
        return []
    prefix = os.path.dirname(bin_dir)
    if prefix == "/":
        return []
    return [os.path.join(prefix, p) for p in PREFIX_PARTS if os.path.lexists(os.path.join(prefix, p))]


def _trusted_real(path: str, writable: Iterable[str], hops: int = 8) -> str:
    """realpath(path), or "" when the path or a symlink on its way lies in a writable root (the sandbox
    could point it anywhere before the next plan), or the chain is longer than `hops`."""
    current = os.path.normpath(path)
    for _ in range(hops):
        folder = os.path.realpath(os.path.dirname(current))
        if any(under(p, w) for p in (current, folder) for w in writable):
            return ""
        here = os.path.join(folder, os.path.basename(current))
        if not os.path.islink(here):
            return "" if any(under(here, w) for w in writable) else here
        current = os.path.normpath(os.path.join(folder, os.readlink(here)))
    return ""


def _link_targets(directory: str, homes: list[str], writable: Iterable[str] = ()) -> list[str]:
    """The files that symlinked executables of `directory` point to (not their directories), and the
    prefix parts when such a file lies in a bin/sbin (an interpreter's standard library)."""
    out: list[str] = []
    try:
        with os.scandir(directory) as it:
            for n, entry in enumerate(it):
                if n >= _LINK_BUDGET:
                    break
                if not entry.is_symlink():
                    continue
                target = _trusted_real(entry.path, writable)
                parent = os.path.dirname(target)
                if target and parent != directory and os.path.isfile(target) and target not in out:
                    out += [target, *(p for p in _prefix_parts(parent, homes) if p not in out)]
    except OSError:
        pass
    return out


def program_paths(words: Iterable[str], writable: Iterable[str] = ()) -> list[str]:
    """What a configured program (an MCP server's command and arguments) needs to read: for each word that
    is an existing absolute path, or the command found on PATH, the directory holding it (a file) or itself
    (a directory), named and resolved, and the outermost `node_modules` above either (its dependencies).
    Paths through a writable root are left out (readable anyway, and they could be redirected)."""
    import shutil

    words = [str(w) for w in words if w]
    if words and not os.path.isabs(words[0]):
        words[0] = shutil.which(words[0]) or ""
    out: list[str] = []
    for word in words:
        if not os.path.isabs(word) or not os.path.exists(word):
            continue
        real = _trusted_real(word, writable)
        if not real:
            continue
        for path in dict.fromkeys((os.path.normpath(word), real)):
            folder = path if os.path.isdir(path) else os.path.dirname(path)
            parts = folder.split("/")
            top = parts.index("node_modules") if "node_modules" in parts else -1
            out.append("/".join(parts[:top + 1]) if top > 0 else folder)
    return [p for p in dict.fromkeys(out) if p and p != "/"]


def _etc_link_targets() -> list[str]:
    """Files that /etc's top-level symlinks name (/etc/resolv.conf -> /run/systemd/resolve/stub-resolv.conf)."""
    out: list[str] = []
    try:
        with os.scandir("/etc") as it:
            links = [e.path for e in it if e.is_symlink()]
    except OSError:
        return out
    for link in links:
        target = os.path.realpath(link)
        if os.path.isfile(target) and not under(target, "/etc"):
            out.append(target)
    return out


def hidden_outside(home: str, allow: Iterable[str], homes: Iterable[str] = (), search_path: str | None = None,
                   cache_dir: str = "", writable: Iterable[str] = ()) -> list[str]:
    """Concrete paths to hide so that only the allowlist is readable: the complement of `allowed_roots`
    under / and, inside the trees packages do not own (`public_trees`), what not everyone may read (minus
    the grants below)."""
    allow = list(allow)
    if any(os.path.normpath(a) == "/" for a in allow if a):
        return []  # a workspace or grant of / itself: nothing outside it
    roots = allowed_roots(home, allow, homes, search_path, writable)
    granted = [p for p in ([home] if home else []) + [os.path.normpath(a) for a in allow if a] if p != "/"]
    bases, closed = public_trees(roots, granted, [h for h in (home, *homes) if h])
    out = _complement("/", [r for r in roots if r not in closed])
    for base in bases:
        out += publicwalk.not_public(base, [g for g in granted if g != base and under(g, base)], cache_dir,
                                     [r for r in roots if r != base and under(r, base)])
    return list(dict.fromkeys(out))


def public_trees(roots: list[str], granted: list[str], homes: list[str]) -> tuple[list[str], list[str]]:
    """(directories to walk by the public-only rule, allowed roots nobody else may read: taken off the
    allowlist). The walked ones: the PUBLIC_ONLY trees that an allowed root holds, and each allowed root
    outside the system roots, every home and every grant (a PATH directory in /srv, its prefix's parts, a
    linked executable), the outermost of nested ones."""
    system = [os.path.realpath(p) for p in SYSTEM_READABLE if os.path.lexists(p)]
    bases = [b for b in PUBLIC_ONLY if os.path.isdir(b) and not os.path.islink(b) and any(under(b, r) for r in roots)]
    exempt = {*system, *granted, *homes}  # a root below any of these is not walked here (set lookups)
    extra = [r for r in roots if not any(a in exempt for a in ancestors(r))]
    extra = [t for t in extra if not any(t != o and under(t, o) for o in extra)]
    closed = [t for t in extra if not publicwalk.reachable(t)]
    bases += [t for t in extra if t not in closed and os.path.isdir(t) and not os.path.islink(t)]
    return bases, closed


def policy_allow(policy: object, sockets: Iterable[str] = ()) -> tuple[str, list[str], list[str]]:
    """(home, allowed paths, other homes) of a path policy (duck-typed, spec.PolicyLike): its workspaces,
    writable roots, readable locations and grants, and the unix sockets the user granted."""
    home = os.path.realpath(getattr(policy, "home", "") or os.path.expanduser("~"))
    allow = [*getattr(policy, "workspace", ()), *getattr(policy, "writable", ()), *getattr(policy, "readable", ()),
             *getattr(policy, "readable_grants", ()), *sockets]
    return ("" if home == "/" else home), allow, list(getattr(policy, "foreign_homes", ()))


def for_policy(policy: object, sockets: Iterable[str] = ()) -> list[str]:
    """`hidden_outside` for a path policy: what its sandbox hides outside HOME."""
    home, allow, homes = policy_allow(policy, sockets)
    return hidden_outside(home, allow, homes, cache_dir=_cache_dir(policy),
                          writable=getattr(policy, "writable", ()))


def _cache_dir(policy: object) -> str:
    hermes_home = str(getattr(policy, "hermes_home", "") or "")
    return os.path.join(hermes_home, "cache", "sandbox") if hermes_home else ""


def describe(policy: object) -> str:
    """One line for `hermes doctor`: what a command may read outside HOME, and what is hidden."""
    home, allow, homes = policy_allow(policy)
    writable = getattr(policy, "writable", ())
    roots = allowed_roots(home, allow, homes, writable=writable)
    hidden = hidden_outside(home, allow, homes, cache_dir=_cache_dir(policy), writable=writable)
    system = [p for p in SYSTEM_READABLE if os.path.lexists(p)]
    homes = [h for h in homes if h and h != home]  # HOME itself (closed, views.home_view): its own doctor line
    _, closed = public_trees(roots, [p for p in ([home] if home else []) + [os.path.normpath(a) for a in allow if a]
                                     if p != "/"], [h for h in (home, *homes) if h])
    other = [r for r in roots if os.path.lexists(r) and not any(under(r, s) for s in system) and r not in closed
             and not (home and under(r, home)) and not any(under(r, h) for h in homes)]
    tools = sorted({h for h in homes for r in roots if under(r, h) and r != h and os.path.lexists(r)})
    other += [f"the tool directories of {', '.join(tools)}"] if tools else []
    top = sorted({h for h in hidden if h.count("/") == 1})
    private = [h for h in hidden if any(under(h, b) for b in PUBLIC_ONLY)]
    cut = publicwalk.truncated()
    shown = ", ".join(other[:8]) + (f" (+{len(other) - 8} more)" if len(other) > 8 else "")
    trunc = f"; on PATH but nobody else may read it, hidden: {', '.join(closed)}" if closed else ""
    trunc += (f"; too big to check (over {publicwalk.WALK_BUDGET} entries), the unchecked parts are hidden: "
             f"{', '.join(cut)}") if cut else ""
    return (f"commands may read outside HOME: the system ({', '.join(system)}; in {', '.join(PUBLIC_ONLY)} only what "
            f"everyone may read, at any depth: {len(private)} entries hidden){trunc}; also {shown or 'nothing else'}; everything "
            f"else is hidden ({', '.join(top) or 'nothing at the top level'}, {len(hidden)} paths in all); "
            "add a path to sandbox.readable_paths when a tool needs one more")
