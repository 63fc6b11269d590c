"""git commands that overwrite the working copy of named files with a committed version, so the uncommitted
changes in them are gone: `git checkout [TREE] -- PATH`, `git checkout PATH` (a file-shaped operand),
`git checkout TREE PATH...`, `git restore PATH` (unless only the index is restored: --staged without
--worktree), `git switch --discard-changes`, and the plumbing `git checkout-index -f`, `git read-tree --reset -u`. Interactive forms (-p) ask per hunk and are not flagged; branch
switches (`git checkout main`, `-b NEW [START]`) are not either. Pure string work over canonical arguments."""

from __future__ import annotations

import re

from hermes_agent.approval.rules.lazyre import lazy
from hermes_agent.approval.rules.unwrapped import Unwrapped

DISCARD = ("git_discard", "discard uncommitted changes to files (git checkout -- PATH, git restore PATH)", False)
_FILE_SHAPED = lazy(r"(?:\A|/)[^/]*\.[A-Za-z][\w-]{0,9}\Z|\A\.{1,2}/|\A/|[*?\[]|\A\.\Z|\A:/")
_INTERACTIVE = frozenset({"-p", "--patch"})
_BRANCH_MAKERS = frozenset({"-b", "-B", "--orphan", "-t", "--track", "--detach", "-d"})
_CHECKOUT_VALUED = frozenset({"-b", "-B", "--orphan", "--conflict", "--pathspec-from-file"})


def discarded(u: Unwrapped) -> bool:
    """True when the git command `u` (global options already stripped) overwrites working-copy files."""
    sub, rest = (u.args[0], u.args[1:]) if u.args else ("", [])
    if any(a in _INTERACTIVE for a in rest):
        return False
    if sub == "checkout":
        return _checkout(rest)
    if sub == "restore":
        staged = any(a in ("--staged", "-S") or _short(a, "S") for a in rest)
        worktree = any(a in ("--worktree", "-W") or _short(a, "W") for a in rest)
        return (not staged or worktree) and (bool(operands(rest, frozenset({"-s", "--source"})))
                                             or any(a.startswith("--pathspec-from-file") for a in rest))
    if sub == "switch":
        return any(a in ("--discard-changes", "-f", "--force") for a in rest)
    if sub == "checkout-index":  # plumbing: -f writes the index's version over every named (-a: every) file
        if any(a.startswith("--prefix") for a in rest):
            return False  # written under the prefix (an export), not over the working copy
        return any(a == "--force" or _short(a, "f") for a in rest) and \
            (any(a == "--all" or _short(a, "a") for a in rest) or bool(operands(rest, frozenset({"--prefix"}))))
    if sub == "read-tree":  # plumbing: --reset -u overwrites the working copy with the tree
        return "--reset" in rest and "-u" in rest
    return False


def _checkout(rest: list) -> bool:
    if "--" in rest:
        return bool(rest[rest.index("--") + 1:])
    if any(a.startswith("--pathspec-from-file") for a in rest):
        return True
    if any(a in _BRANCH_MAKERS or a.startswith(("--orphan=", "--track=")) for a in rest):
        return False
    ops = operands(rest, _CHECKOUT_VALUED)
    return len(ops) >= 2 or (len(ops) == 1 and bool(_FILE_SHAPED.search(ops[0])))


def operands(rest: list, valued: frozenset) -> list[str]:
    """The operands of `rest`: not options, not the values of the options in `valued`, not `--`."""
    out, skip = [], False
    for a in rest:
        if skip:
            skip = False
        elif a == "--":
            continue
        elif a.startswith("-"):
            skip = a in valued
        else:
            out.append(a)
    return out


def _short(arg: str, letter: str) -> bool:
    return bool(re.fullmatch(r"-[A-Za-z]+", arg)) and letter in arg[1:]


def reverts_diff(sink: object, upstream: list) -> bool:
    """`git diff | git apply -R`, `git diff | patch -R -p1`: the working copy's own changes applied in reverse
    are discarded (flows.Cmd: name, args)."""
    name, args = getattr(sink, "name", ""), getattr(sink, "args", [])
    reverse = any(a in ("-R", "--reverse") or _short(a, "R") for a in args)
    checks = {"--check", "--stat", "--numstat", "--summary", "--cached", "--dry-run"}  # prints or index only
    applies = ((name == "git" and args[:1] == ["apply"]) or name == "patch") and not checks & set(args)
    return applies and reverse and any(c.name == "git" and c.args[:1] in (["diff"], ["stash"]) for c in upstream)


def extracts_committed(sink: object, upstream: list) -> bool:
    """`git archive HEAD f | tar x`: a committed version extracted over the working copy (tar in extract mode,
    not to stdout, not into another directory) discards the uncommitted changes like `git checkout -- f`."""
    name, args = getattr(sink, "name", ""), getattr(sink, "args", [])
    if name not in ("tar", "gtar", "bsdtar") or not any(c.name == "git" and c.args[:1] == ["archive"] for c in upstream):
        return False
    first = args[0] if args else ""  # old-style bundle (`tar xf -`) or short options (`-xOf`)
    letters = (first.lstrip("-") if re.fullmatch(r"-?[A-Za-z]+", first) else "") + \
        "".join(a[1:] for a in args[1:] if re.fullmatch(r"-[A-Za-z]+", a))
    extract = "--extract" in args or "--get" in args or "x" in letters
    elsewhere = "O" in letters or "t" in letters or any(a in ("--to-stdout", "--list") or a.startswith("--to-command")
                                                        for a in args)
    dirs = [args[k + 1] for k, a in enumerate(args[:-1]) if a in ("-C", "--directory")]
    dirs += [a.split("=", 1)[1] for a in args if a.startswith("--directory=")]
    return extract and not elsewhere and all(d.rstrip("/") in (".", "") for d in dirs)
