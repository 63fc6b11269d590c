"""Context files planted through git (red-team round 9 a36): confined code can write a repository's objects
and refs (commits are ordinary work), so `git hash-object` + `commit-tree` + `update-ref` can put an AGENTS.md
into HEAD without any file in the work tree, where the context watch looks. It lands later, unconfined: the
user's next checkout or `hermes -w`. At the session's first confined call the repositories' ref tips are noted;
at its end, the watched names (and SKILL.md) that commits made meanwhile add or change are recorded in the context-file
ledger as content nobody vouched for (unless the same content is vouched for at some path), and the loader
holds such a file back wherever it appears (memory/ctxledger.py `held`). git runs with gitsafe's config.
Every name git resolves to a commit is compared, not only ref tips (issue 19 ctx11): the pseudo-refs a later
`git reset --hard ORIG_HEAD` / `git merge FETCH_HEAD` / `git cherry-pick --continue` reads, every commit a reflog
names (`HEAD@{1}`, `stash@{2}`), the extra parents of stash-shaped commits (the index and untracked-files commits
`git stash pop` restores), refs/notes, refs/stash and refs/replace (compared with replacements off).
A repository that appears mid-session (rt12 a26: `git init` at any depth, moved in, a bare one and its `git
worktree add`, a `git clone`: the run-later guard's deepwatch sees each `.git`) has an empty baseline: every
watched name in any tree of its object store is unvouched (judged by content: tools/ctxobjects.py) — but a clone
of a repository the sandbox cannot write, or of one whose names were noted at the start, starts from that
repository's names (`new_baselines`)."""

from __future__ import annotations

import logging
import os

from hermes_agent import lazyre
from hermes_agent.tools.ctxguard import WATCHED

log = logging.getLogger(__name__)
MAX_FILES = 32
# context files, and skills (a repository's folder listed in skills.external_dirs: red-team round 9 a37)
_NAMES = frozenset({*(w.rsplit("/", 1)[-1] for w in WATCHED), "SKILL.md"})


# pseudo-refs: files in the git directory that later commands resolve (ORIG_HEAD after a reset, FETCH_HEAD...)
PSEUDO = ("ORIG_HEAD", "FETCH_HEAD", "MERGE_HEAD", "CHERRY_PICK_HEAD", "REVERT_HEAD", "REBASE_HEAD", "BISECT_HEAD",
          "AUTO_MERGE")
_GIT = ("--no-replace-objects",)  # compare real commits: a refs/replace/X entry is itself a name to compare
MAX_LOG_FILES = 2048
MAX_LOG_BYTES = 16 << 20
_SHA = lazyre.compile(r"(?!0+\Z)[0-9a-f]{40}(?:[0-9a-f]{24})?\Z")


def tips(root: str) -> dict[str, str] | None:
    """name -> commit of every name git resolves in the repository at work tree `root` (None: not one): refs and
    HEAD, the pseudo-refs (each line of FETCH_HEAD / MERGE_HEAD), `reflog:SHA` for each object a reflog names
    and the second and third parents of stash entries (the index and untracked-files commits `stash pop`
    restores). Three git processes; the reflogs are read as files (git's own walk stats every ref)."""
    from hermes_agent.gitsafe import run_git

    try:
        out = run_git(["show-ref", "--head"], cwd=root, prefix=_GIT, timeout=10)
        where = run_git(["rev-parse", "--git-common-dir", "--git-path", "logs/HEAD", "--git-path", "FETCH_HEAD",
                         "--git-path", "MERGE_HEAD"], cwd=root, timeout=10)
    except (OSError, ValueError) as exc:
        log.debug("git show-ref in %s: %s", root, exc)
        return None
    if out.returncode not in (0, 1) or (out.returncode == 1 and out.stdout) or where.returncode != 0:
        return None
    found = {ref: sha for sha, _, ref in (line.partition(" ") for line in out.stdout.splitlines()) if ref}
    common, own_log, *heads = [os.path.join(root, p) for p in where.stdout.splitlines()]
    logs = _reflogs(os.path.join(common, "logs"), own_log)
    stash = [*logs.get(os.path.join(common, "logs", "refs", "stash"), ()), found.get("refs/stash", "")]
    names = [(p, p) for p in PSEUDO] + _listed_heads(heads)
    names += [(f"parent:{sha}^{n}", f"{sha}^{n}") for sha in dict.fromkeys(filter(None, stash[-256:])) for n in (2, 3)]
    try:
        pseudo = run_git(["cat-file", "--batch-check"], cwd=root, prefix=_GIT, timeout=10,
                         input="".join(f"{spec}^{{commit}}\n" for _name, spec in names))
    except (OSError, ValueError) as exc:
        log.debug("git cat-file in %s: %s", root, exc)
        return None
    for (name, _spec), line in zip(names, pseudo.stdout.splitlines(), strict=False):
        sha, _, kind = line.partition(" ")
        if kind.startswith("commit "):
            found[name] = sha
    found.update((f"reflog:{sha}", sha) for shas in logs.values() for sha in shas)
    return found


def new_baselines(repos: dict[str, str], known: dict[str, dict[str, str]],
                  writable: list[str]) -> dict[str, dict[str, str]]:
    """work tree (a bare repository: its git directory) -> the names to compare against, for each repository
    new this session (`repos`: git directory -> work tree or ""; those in `known` are not new). Empty, but for
    a clone whose `remote.origin.url` is a local repository confined code could not change (outside
    `writable`) or one in `known`: that one's names, so what the clone brought from it is not taken for the
    session's own (its config names the origin; a planted commit is new to the origin's names all the same)."""
    from hermes_agent.paths import is_under

    out: dict[str, dict[str, str]] = {}
    for gitdir, work in repos.items():
        root = work or gitdir
        if root in known or root in out:
            continue
        origin = _origin(root)
        if origin and origin in known:
            out[root] = known[origin]
        elif origin and not any(is_under(origin, w) for w in writable):
            out[root] = tips(origin) or {}
        else:
            out[root] = {}
    return out


def ref_stamp(root: str) -> tuple:
    """What every name git resolves in the repository at work tree `root` rests on, by lstat only (no git
    process): HEAD, packed-refs, the pseudo-refs, each file under refs/ and logs/ (size, mtime, inode, ctime). A
    commit, update-ref, reflog or stash changes it. `.git` may be a `gitdir:` file (a worktree, a submodule)."""
    from hermes_agent.nofollow import read_regular_text

    gd = os.path.join(root, ".git")
    if not os.path.isdir(gd):
        try:
            line = read_regular_text(gd, 4096).strip()
        except (OSError, ValueError):
            return ()
        gd = os.path.normpath(os.path.join(root, line.partition(":")[2].strip()))
    try:  # a linked worktree's branches live in the repository it belongs to
        common = os.path.normpath(os.path.join(gd, read_regular_text(os.path.join(gd, "commondir"), 4096).strip()))
    except (OSError, ValueError):
        common = gd
    out = []
    for d in dict.fromkeys((gd, common)):
        out += [(os.path.join(d, n), _stamp(os.path.join(d, n))) for n in ("HEAD", "packed-refs", "commondir", *PSEUDO)]
        for sub in ("refs", "logs"):
            for top, dirs, files in os.walk(os.path.join(d, sub)):
                dirs.sort()
                out += [(os.path.join(top, f), _stamp(os.path.join(top, f))) for f in sorted(files)]
    return tuple(out)


def _stamp(path: str) -> tuple | None:
    try:
        s = os.lstat(path)
    except OSError:
        return None
    return (s.st_size, s.st_mtime_ns, s.st_ino, s.st_ctime_ns)


def _origin(root: str) -> str:
    """The real path of the local repository `root` was cloned from ("" when none or not local)."""
    from hermes_agent.gitsafe import run_git

    try:
        url = run_git(["config", "--get", "remote.origin.url"], cwd=root, timeout=10).stdout.strip()
    except (OSError, ValueError):
        return ""
    url = url.removeprefix("file://")
    if not url.startswith("/"):
        return ""
    try:
        top = run_git(["rev-parse", "--show-toplevel"], cwd=url, timeout=10)
        if top.returncode == 0 and top.stdout.strip():
            return os.path.realpath(top.stdout.strip())
        bare = run_git(["rev-parse", "--absolute-git-dir"], cwd=url, timeout=10)
    except (OSError, ValueError):
        return ""
    return os.path.realpath(bare.stdout.strip()) if bare.returncode == 0 and bare.stdout.strip() else ""


def _read(path: str, limit: int, real: bool = False) -> str:
    """A file of the git directory (which confined commands write), no symlink followed; "" when unreadable.
    `real`: `path` is already a real path (found by a walk below a resolved directory)."""
    from hermes_agent.approval.scriptfiles import read_nofollow

    try:
        return (read_nofollow(path if real else os.path.realpath(path), limit) or b"").decode("ascii", "replace")
    except OSError as exc:
        log.debug("%s: %s", path, exc)
        return ""


def _sha(word: str) -> bool:
    return _SHA.match(word) is not None


def _reflogs(logs: str, own: str) -> dict[str, list[str]]:
    """reflog file -> the objects its entries name (old and new), for every reflog under `logs` and this
    worktree's HEAD log `own`; walked without following links."""
    files = [os.path.realpath(own)]
    for top, dirs, names in os.walk(os.path.realpath(logs), followlinks=False):
        dirs.sort()
        files += [os.path.join(top, n) for n in sorted(names)]
        if len(files) > MAX_LOG_FILES:
            log.warning("%s: more than %d reflogs, the rest are not compared", logs, MAX_LOG_FILES)
            break
    found: dict[str, list[str]] = {}
    for path in dict.fromkeys(files[:MAX_LOG_FILES]):
        words = [w for line in _read(path, MAX_LOG_BYTES, real=True).splitlines() for w in line.split(" ", 2)[:2]]
        found[path] = [w for w in dict.fromkeys(words) if _sha(w)]
    return found


def _listed_heads(paths: list[str]) -> list[tuple[str, str]]:
    """(name, commit) for every line of FETCH_HEAD and MERGE_HEAD (git resolves only the first as a name, but
    `git merge FETCH_HEAD` merges each line not marked not-for-merge, an octopus MERGE_HEAD each): only the
    leading object names are taken from the files."""
    found: list[tuple[str, str]] = []
    for path in paths:
        for i, line in enumerate(_read(path, 1 << 20).splitlines()[:256]):
            sha = line.split("\t", 1)[0].strip()
            if _sha(sha):
                found.append((f"{os.path.basename(path)}:{i}", sha))
    return found


def _watched(path: str) -> bool:
    return path.rsplit("/", 1)[-1] in _NAMES


def _pairs(before: dict[str, str], after: dict[str, str]) -> list[tuple[str | None, str]]:
    """(old, new) commit pairs to compare: each name whose commit is new to the repository (not resolved by any
    name before), against the name's old commit or, for a name that is new, the old HEAD."""
    known = set(before.values())
    pairs: dict[tuple[str | None, str], None] = {}
    for ref, new in after.items():
        if new in known:
            continue
        old = before.get(ref) or before.get("HEAD")
        pairs[(old, new)] = None
    return list(pairs)


def _changes(root: str, old: str | None, new: str, listed: dict) -> list[tuple[str, str]]:
    """(status A/M/T/D, path) of what commit `new` changes against `old` (no old: everything it holds, added).
    `listed` keeps each pair's answer: the session's end lists a pair once, whichever report asks first."""
    if (old, new) not in listed:
        from hermes_agent.gitsafe import run_git

        args = ["diff-tree", "-r", "-z", "--no-renames", "--name-status", old, new] if old else \
            ["ls-tree", "-r", "-z", "--name-only", new]
        out = run_git(args, cwd=root, prefix=_GIT, timeout=20).stdout.split("\0")
        listed[(old, new)] = list(zip(out[::2], out[1::2], strict=False)) if old else [("A", p) for p in out if p]
    return listed[(old, new)]


def committed(root: str, before: dict[str, str], after: dict[str, str],
              listed: dict | None = None) -> list[tuple[str, bytes]]:
    """(path, content) of the watched names that the commits new in `after` add or change."""
    from hermes_agent.gitsafe import run_git

    out: list[tuple[str, bytes]] = []
    seen: set[tuple[str, bytes]] = set()
    listed = {} if listed is None else listed
    for old, new in _pairs(before, after):
        if len(out) >= MAX_FILES:
            break
        changed = [p for st, p in _changes(root, old, new, listed) if st in ("A", "M", "T") and _watched(p)]
        for path in changed[:MAX_FILES]:
            blob = run_git(["cat-file", "blob", f"{new}:{path}"], cwd=root, prefix=_GIT, timeout=10, text=False)
            if blob.returncode == 0 and (path, blob.stdout) not in seen:
                seen.add((path, blob.stdout))
                out.append((path, blob.stdout))
    return out


def record(home: str, roots_before: dict[str, dict[str, str]]) -> list[str]:
    """At session end: note in the ledger what commits of this session planted; lines for the user."""
    from hermes_agent.memory.ctxledger import digest, note_committed

    lines, items = [], []
    for root, before in roots_before.items():
        if not before:  # a repository new this session: what any of its trees holds (tools/ctxobjects.py)
            from hermes_agent.tools.ctxobjects import new_repository

            found, said = new_repository(root, _NAMES)
            items += [digest(data) for _name, data in found]
            lines += said + moved_runlater(root, {}, tips(root) or {})  # its other branches' Makefile, .envrc...
            continue
        after = tips(root)
        if not after or after == before:
            continue
        listed: dict = {}  # a branch's new commit is in both reports: git lists it once
        for path, data in committed(root, before, after, listed):
            items.append(digest(data))
            lines.append(f"{os.path.join(root, path)}: a commit of this session's commands adds or changes it; "
                         "it will not be loaded into a prompt until you save it yourself after checking it out")
        lines += moved_runlater(root, before, after, listed)
    if items:
        note_committed(home, items)
    return lines


def _runlater_names() -> frozenset[str]:
    from hermes_agent.terminal.sandbox.byhand import TABLE
    from hermes_agent.terminal.sandbox.runlater import RC_FILES

    return frozenset({*TABLE, *RC_FILES})


def moved_runlater(root: str, before: dict[str, str], after: dict[str, str], listed: dict | None = None) -> list[str]:
    """Lines naming each branch, remote-tracking ref or tag the session moved (or made) to commits that change a
    file the user runs later (Makefile, package.json, .envrc, .pdbrc...: red-team round 11 a26): no work-tree file
    changed, so the run-later guard saw nothing; the user's next checkout, merge or pull brings it in."""
    from hermes_agent.gitsafe import run_git

    names, known, out = _runlater_names(), set(before.values()), []
    listed = {} if listed is None else listed
    head = run_git(["symbolic-ref", "-q", "HEAD"], cwd=root, prefix=_GIT, timeout=10).stdout.strip()
    for ref, new in sorted(after.items()):
        if not ref.startswith(("refs/heads/", "refs/remotes/", "refs/tags/")) or ref == head or new in known \
                or len(out) >= MAX_FILES:
            continue  # the checked-out branch's commits change the work tree: the run-by-hand report tells them
        old = before.get(ref) or before.get("HEAD")
        hit = [p for _st, p in _changes(root, old, new, listed) if p in names or p.rsplit("/", 1)[-1] in names]
        shown = ", ".join(hit[:4]) + (f" (+{len(hit) - 4} more)" if len(hit) > 4 else "")
        if hit and not before:  # a repository this session made: every branch is the session's
            out.append(f"{root}: {ref.removeprefix('refs/')} of a repository this session made holds {shown}, which "
                       f"you run by hand; look at them (`git show {new[:12]} --stat`) before you check it out or "
                       "merge it")
        elif hit:
            out.append(f"{root}: {ref.removeprefix('refs/')} now points at a commit this session made that changes "
                       f"{shown}, which you run by hand; check `git diff {(old or '')[:12]} {new[:12]}` before you "
                       "check it out, merge or pull it")
    return out
