"""Move checkpoints written by earlier versions of ours (one shadow repository per working directory,
HERMES_HOME/checkpoints/<hash>/ with a HERMES_WORKDIR file and parentless commits under refs/hermes/NNNNNNNN)
into Hermes's single store, once: their commits join the directory's chain in time order (trees, messages
and dates kept), then the old repository is removed. Ones Hermes already archived into `legacy-<ts>/` are
taken back the same way (only ours: Hermes's own pre-store repositories stay in its archive)."""

from __future__ import annotations

import logging
import re
import shutil
import subprocess
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from hermes_agent.storage.checkpoints import CheckpointStore

log = logging.getLogger(__name__)
_OUR_REF = re.compile(r"^\d{8}$")
_FIELD, _RECORD = "\x1f", "\x1e"


def _ours(repo: Path) -> bool:
    refs = repo / "refs" / "hermes"
    names = [p.name for p in refs.iterdir()] if refs.is_dir() else []
    packed = (repo / "packed-refs").read_text(encoding="utf-8", errors="replace") if (repo / "packed-refs").is_file() else ""
    return any(_OUR_REF.match(n) for n in names) or bool(re.search(r" refs/hermes/\d{8}$", packed, re.M))


def old_repos(root: Path) -> list[Path]:
    """Per-directory repositories of earlier versions of ours, in `root` and in Hermes's legacy archives."""
    if not root.is_dir():
        return []
    found = [p.parent for p in root.glob("*/HERMES_WORKDIR") if p.parent.name != "store" and (p.parent / "HEAD").exists()
             and not p.parent.name.startswith("legacy-")]
    found += [p.parent for p in root.glob("legacy-*/*/HERMES_WORKDIR") if (p.parent / "HEAD").exists() and _ours(p.parent)]
    return sorted(found)


def import_old_repos(store: CheckpointStore) -> int:
    """Import every old repository (see the module docstring); returns how many were moved."""
    moved = 0
    for repo in old_repos(store.root):
        try:
            _import_one(store, repo)
        except (subprocess.SubprocessError, OSError, ValueError) as exc:
            log.warning("could not move old checkpoints %s into the store: %s", repo, exc)
            continue
        shutil.rmtree(repo, ignore_errors=True)
        if repo.parent.name.startswith("legacy-") and not any(repo.parent.iterdir()):
            repo.parent.rmdir()
        moved += 1
    return moved


def _import_one(store: CheckpointStore, repo: Path) -> None:
    wd = (repo / "HERMES_WORKDIR").read_text(encoding="utf-8", errors="replace").strip()
    if not wd:
        raise ValueError("no HERMES_WORKDIR")
    from hermes_agent.storage.checkpoints import project_key

    staging = f"refs/hermes-import/{project_key(wd)}/"
    store._git(wd, "fetch", "--no-tags", "-q", str(repo), f"+refs/*:{staging}*")
    tips = store._git(wd, "for-each-ref", "--format=%(objectname)", staging).split()
    current = store._tip(wd)
    heads = [*tips, *([current] if current else [])]
    commits: dict[str, tuple[int, str]] = {}
    if heads:
        out = store._git(wd, "log", f"--format=%H{_FIELD}%at{_FIELD}%B{_RECORD}", *heads)
        for record in out.split(_RECORD):
            parts = record.strip("\n").split(_FIELD)
            if len(parts) == 3:
                commits[parts[0]] = (int(parts[1] or 0), parts[2])
    parent: str | None = None
    for cid, (when, message) in sorted(commits.items(), key=lambda kv: kv[1][0]):
        tree = store._git(wd, "rev-parse", f"{cid}^{{tree}}").strip()
        date = {"GIT_AUTHOR_DATE": f"{when} +0000", "GIT_COMMITTER_DATE": f"{when} +0000"}
        parent = store._git(wd, "commit-tree", tree, *(["-p", parent] if parent else []),
                            stdin=message.encode("utf-8"), env=date).strip()
    if parent:
        store._git(wd, "update-ref", store.ref(wd), parent)
        store.touch_project(wd)
    script = "".join(f"delete {ref}\n" for ref in store._git(wd, "for-each-ref", "--format=%(refname)", staging).split())
    if script:
        store._git(wd, "update-ref", "--stdin", stdin=script.encode())
