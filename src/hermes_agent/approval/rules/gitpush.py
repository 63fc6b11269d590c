"""Pushes of the repository to a destination it was not already set up with: `git push URL` (any URL,
scp-like host:path or local path), `git push --repo=URL`, a push to a remote that the same text added or
redirected (`git remote add x URL && git push x`, `git remote set-url origin URL; git push`, `git config
remote.x.url URL`), and `-c remote.X.url=` / `-c url.X.insteadOf=` overrides (canonical.py adds those).
Remotes configured before the command are the user's; the rules read no repository file. Pure."""

from __future__ import annotations

import re

from hermes_agent.approval.rules.lazyre import lazy

PUSH_NEW = ("git_push_new_remote", "push the repository to a destination it was not already set up with (a URL, or a "
                                   "remote added or redirected in this command)", False)
REMOTE_OVERRIDE = ("git_push_new_remote", "point git at another repository for this command (-c remote.X.url / "
                                          "url.X.insteadOf)", False)
URL_REWRITE = ("git_push_new_remote", "rewrite git URLs to another place (url.X.insteadOf): later fetches and pushes "
                                      "of every repository go there", False)
_URLISH = lazy(r"\A(?:[a-z][\w+.-]*://|[\w.-]+@[\w.-]+:|[\w-]+(?:\.[\w-]+)+:(?!\d+\Z)|/|\.\.?/|~/|file:)")
_REMOTE_KEY = lazy(r"\A(?:remote\.[^=]+\.(?:url|pushurl)|url\..+\.(?:pushinsteadof|insteadof))\Z", re.I)
_PUSH_VALUED = frozenset({"--repo", "-o", "--push-option", "--receive-pack", "--exec", "--signed", "--force-with-lease"})
ANY = "*"


def redirects_remote(key: str) -> bool:
    """A git setting that changes where a remote (or every URL) points."""
    return bool(_REMOTE_KEY.match(key))


def track(args: list, remotes: set) -> None:
    """Record remotes that `git ARGS` adds or points elsewhere (remote add/set-url/rename, config remote.X.url)."""
    sub, rest = (args[0], args[1:]) if args else ("", [])
    ops = [a for a in rest if not a.startswith("-")]
    if sub == "remote" and ops[:1] in (["add"], ["set-url"]) and len(ops) >= 2:
        remotes.add(ops[1])
    elif sub == "remote" and ops[:1] == ["rename"] and len(ops) >= 3 and ops[1] in remotes:
        remotes.add(ops[2])
    elif sub == "config" and ops:
        key = ops[1] if ops[0] in ("set", "--add") and len(ops) > 1 else ops[0]
        if len(ops) >= 2 and redirects_remote(key.lower()):
            remotes.add(key.split(".")[1] if key.lower().startswith("remote.") else ANY)


def push_target(args: list, remotes: set) -> tuple | None:
    """The finding for `git push ...` when its destination is new (see module doc), else None."""
    if args[:1] != ["push"]:
        return None
    positional, i, rest = [], 0, args[1:]
    while i < len(rest):
        a = rest[i]
        if a.startswith("--repo="):
            positional.insert(0, a.partition("=")[2])
        elif a == "--repo" and i + 1 < len(rest):
            positional.insert(0, rest[i + 1])
            i += 1
        elif a in _PUSH_VALUED and a != "--force-with-lease":
            i += 1
        elif not a.startswith("-"):
            positional.append(a)
        i += 1
    repo = positional[0] if positional else None
    if repo is not None and (_URLISH.match(repo) or repo in remotes):
        return PUSH_NEW
    if (repo is None and remotes) or ANY in remotes:
        return PUSH_NEW
    return None
