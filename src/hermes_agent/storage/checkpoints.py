"""Filesystem checkpoints: a shadow git repository per working directory under
HERMES_HOME/checkpoints/<hash>/ (GIT_DIR there, the user's directory as work tree). It never reads or
writes the user's own .git. Each checkpoint is a parentless commit under refs/hermes/, so pruning old
ones never changes the ids of the rest."""

from __future__ import annotations

import hashlib
import logging
import os
import subprocess
import tempfile
import threading
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from hermes_agent import paths
from hermes_agent.errors import StorageError

log = logging.getLogger(__name__)

REF_PREFIX = "refs/hermes/"
SAFETY_TRAILER = "Hermes-Kind: safety"
BASE_EXCLUDES = (".git/", "node_modules/", ".venv/", "venv/", "__pycache__/", "*.pyc", ".DS_Store",
                 ".hermes-*", ".mypy_cache/", ".pytest_cache/", ".ruff_cache/", ".tox/")
_GIT_TIMEOUT_S = 120


class CheckpointError(StorageError):
    """A checkpoint could not be listed, compared or restored."""


@dataclass(frozen=True, slots=True)
class Checkpoint:
    """One snapshot of a working directory."""

    id: str
    created: float
    reason: str
    safety: bool = False

    @property
    def short(self) -> str:
        return self.id[:10]


@dataclass(frozen=True, slots=True)
class RestoreResult:
    """What a restore did: the checkpoint restored, the safety snapshot taken first, files removed."""

    restored: str
    safety_id: str | None
    removed: tuple[str, ...]
    path: str | None = None


class CheckpointStore:
    """Shadow-git snapshots of working directories. Snapshot failures are logged and return None:
    a checkpoint problem never blocks the change it was meant to protect."""

    def __init__(self, root: Path | str | None = None, *, max_snapshots: int = 50,
                 max_file_bytes: int = 10 * 1024 * 1024, max_files: int = 50_000,
                 env: Mapping[str, str] | None = None) -> None:
        self.root = Path(root) if root is not None else paths.checkpoints_dir()
        self.max_snapshots = max(1, int(max_snapshots))
        self.max_file_bytes = max_file_bytes
        self.max_files = max_files
        self._env = env
        self._turns: dict[str, object] = {}
        self._locks: dict[str, threading.Lock] = {}
        self._guard = threading.Lock()

    # -- plumbing -----------------------------------------------------------------------------

    def repo_dir(self, workdir: str | Path) -> Path:
        """The shadow GIT_DIR of `workdir`."""
        key = hashlib.sha256(_abs(workdir).encode()).hexdigest()[:16]
        return self.root / key

    def _git_env(self, index: str | None = None) -> dict[str, str]:
        base = dict(os.environ if self._env is None else self._env)
        env = {k: v for k, v in base.items() if not k.startswith("GIT_")}
        env.update(GIT_CONFIG_NOSYSTEM="1", GIT_CONFIG_GLOBAL=os.devnull, GIT_TERMINAL_PROMPT="0",
                   GIT_AUTHOR_NAME="Hermes", GIT_AUTHOR_EMAIL="hermes@localhost",
                   GIT_COMMITTER_NAME="Hermes", GIT_COMMITTER_EMAIL="hermes@localhost", LC_ALL="C")
        if index:
            env["GIT_INDEX_FILE"] = index
        return env

    def _git(self, wd: str, *args: str, index: str | None = None, check: bool = True,
             stdin: bytes | None = None) -> str:
        cmd = ["git", f"--git-dir={self.repo_dir(wd)}", f"--work-tree={wd}", *args]
        proc = subprocess.run(cmd, cwd=wd, env=self._git_env(index), input=stdin, capture_output=True,
                              timeout=_GIT_TIMEOUT_S)
        out = proc.stdout.decode("utf-8", "surrogateescape")
        if check and proc.returncode != 0:
            err = proc.stderr.decode("utf-8", "replace").strip()
            raise subprocess.CalledProcessError(proc.returncode, cmd, out, err)
        return out

    def _lock(self, wd: str) -> threading.Lock:
        with self._guard:
            return self._locks.setdefault(wd, threading.Lock())

    def _ensure_repo(self, wd: str) -> None:
        gd = self.repo_dir(wd)
        if (gd / "HEAD").exists():
            return
        gd.mkdir(parents=True, exist_ok=True)
        subprocess.run(["git", "init", "--quiet", "--bare", str(gd)], check=True, capture_output=True,
                       env=self._git_env(), timeout=_GIT_TIMEOUT_S)
        for key, value in (("core.bare", "false"), ("core.autocrlf", "false"), ("gc.auto", "0"),
                           ("commit.gpgsign", "false"), ("core.quotepath", "false")):
            self._git(wd, "config", key, value)
        (gd / "HERMES_WORKDIR").write_text(wd + "\n", encoding="utf-8")

    def _write_excludes(self, wd: str, extra: list[str]) -> None:
        lines = list(BASE_EXCLUDES)
        user_exclude = Path(wd, ".git", "info", "exclude")
        if user_exclude.is_file():  # read-only: the user's own excludes apply here too
            lines.extend(user_exclude.read_text(encoding="utf-8", errors="replace").splitlines())
        lines.extend(extra)
        info = self.repo_dir(wd) / "info"
        info.mkdir(exist_ok=True)
        (info / "exclude").write_text("\n".join(lines) + "\n", encoding="utf-8")

    def _large_files(self, wd: str) -> list[str] | None:
        """Changed/untracked files above the size limit (None: too many files to snapshot)."""
        self._write_excludes(wd, [])
        out = self._git(wd, "ls-files", "-z", "--others", "--modified", "--exclude-standard")
        names = [n for n in out.split("\0") if n]
        if len(names) > self.max_files:
            return None
        big = []
        for name in names:
            try:
                if os.lstat(os.path.join(wd, name)).st_size > self.max_file_bytes:
                    big.append(name)
            except OSError:
                continue
        return big

    def _stage(self, wd: str, index: str | None = None) -> str | None:
        """Stage the work tree (minus excluded and large files); returns its tree id."""
        big = self._large_files(wd)
        if big is None:
            log.warning("checkpoint skipped: %s has more than %d files", wd, self.max_files)
            return None
        self._write_excludes(wd, ["/" + _glob_escape(b) for b in big])
        self._git(wd, "add", "-A", "--ignore-errors", ".", index=index, check=False)
        if big:
            self._git(wd, "rm", "--cached", "-q", "--ignore-unmatch", "--",
                      *(f":(literal){b}" for b in big), index=index)
        return self._git(wd, "write-tree", index=index).strip()

    def _refs(self, wd: str) -> list[tuple[str, str]]:
        """(refname, commit id), newest first."""
        out = self._git(wd, "for-each-ref", "--sort=-refname", "--format=%(refname) %(objectname)", REF_PREFIX)
        return [tuple(line.split(" ", 1)) for line in out.splitlines() if line]  # type: ignore[misc]

    # -- public API ---------------------------------------------------------------------------

    def snapshot(self, workdir: str | Path, reason: str = "", *, turn: object = None,
                 safety: bool = False) -> str | None:
        """Checkpoint `workdir`; None when skipped (same turn, nothing changed, refused dir, git error)."""
        wd = _abs(workdir)
        if not _snapshottable(wd):
            return None
        if turn is not None and self._turns.get(wd) == turn:
            return None
        with self._lock(wd):
            try:
                cid = self._snapshot_locked(wd, reason, safety)
            except (subprocess.SubprocessError, OSError) as exc:
                log.warning("checkpoint of %s failed: %s", wd, _why(exc))
                return None
        if turn is not None:
            self._turns[wd] = turn
        return cid

    def _snapshot_locked(self, wd: str, reason: str, safety: bool, keep: str = "") -> str | None:
        self._ensure_repo(wd)
        tree = self._stage(wd)
        return None if tree is None else self._commit_if_changed(wd, tree, reason, safety, keep)

    def _commit_if_changed(self, wd: str, tree: str, reason: str, safety: bool, keep: str = "") -> str | None:
        refs = self._refs(wd)
        if refs and self._git(wd, "rev-parse", f"{refs[0][1]}^{{tree}}").strip() == tree:
            return None
        message = (reason or "checkpoint").strip() + (f"\n\n{SAFETY_TRAILER}\n" if safety else "\n")
        cid = self._git(wd, "commit-tree", tree, stdin=message.encode("utf-8")).strip()
        seq = int(refs[0][0].rsplit("/", 1)[1]) + 1 if refs else 1
        self._git(wd, "update-ref", f"{REF_PREFIX}{seq:08d}", cid)
        self._prune(wd, [(f"{REF_PREFIX}{seq:08d}", cid), *refs], keep)
        return cid

    def _prune(self, wd: str, refs: list[tuple[str, str]], keep: str = "") -> None:
        stale = [(name, cid) for name, cid in refs[self.max_snapshots:] if cid != keep]
        if not stale:
            return
        script = "".join(f"delete {name}\n" for name, _ in stale).encode()
        self._git(wd, "update-ref", "--stdin", stdin=script)
        self._git(wd, "prune", "--expire=now", check=False)

    def list(self, workdir: str | Path) -> list[Checkpoint]:
        """Checkpoints of `workdir`, newest first."""
        wd = _abs(workdir)
        if not (self.repo_dir(wd) / "HEAD").exists():
            return []
        fmt = "%(objectname)%00%(creatordate:unix)%00%(contents:subject)%00%(contents:body)%01"
        out = self._run(wd, "for-each-ref", "--sort=-refname", f"--format={fmt}", REF_PREFIX)
        items = []
        for record in out.split("\x01"):
            parts = record.strip("\n").split("\0")
            if len(parts) == 4:
                cid, when, subject, body = parts
                items.append(Checkpoint(cid, float(when or 0), subject, SAFETY_TRAILER in body))
        return items

    def workdirs(self) -> list[str]:
        """Every working directory that has a shadow repository."""
        if not self.root.is_dir():
            return []
        out = []
        for marker in sorted(self.root.glob("*/HERMES_WORKDIR")):
            out.append(marker.read_text(encoding="utf-8", errors="replace").strip())
        return [wd for wd in out if wd]

    def resolve(self, workdir: str | Path, checkpoint_id: str) -> Checkpoint:
        """The checkpoint of `workdir` whose id starts with `checkpoint_id`."""
        wanted = checkpoint_id.strip().lower()
        hits = [c for c in self.list(workdir) if wanted and c.id.startswith(wanted)]
        if len(hits) != 1:
            what = "no checkpoint" if not hits else f"{len(hits)} checkpoints"
            raise CheckpointError(f"{what} of {_abs(workdir)} matches id '{checkpoint_id}' "
                                  "(see `hermes checkpoints list`)")
        return hits[0]

    def diff(self, workdir: str | Path, checkpoint_id: str, *, stat: bool = False) -> str:
        """Unified diff from a checkpoint to the directory as it is now (new files included)."""
        wd = _abs(workdir)
        target = self.resolve(wd, checkpoint_id)
        with self._lock(wd), tempfile.TemporaryDirectory(prefix="hermes-cp-") as tmp:
            index = os.path.join(tmp, "index")
            try:
                if self._stage(wd, index=index) is None:
                    raise CheckpointError(f"{wd} has too many files to compare")
                args = ["--stat"] if stat else []
                return self._git(wd, "diff", "--cached", "--no-color", "--no-ext-diff", *args, target.id,
                                 index=index)
            except (subprocess.SubprocessError, OSError) as exc:
                raise CheckpointError(f"diff failed: {_why(exc)}") from exc

    def _run(self, wd: str, *args: str) -> str:
        try:
            return self._git(wd, *args)
        except (subprocess.SubprocessError, OSError) as exc:
            raise CheckpointError(f"git failed on the checkpoints of {wd}: {_why(exc)}") from exc

    def restore(self, workdir: str | Path, checkpoint_id: str, path: str | None = None) -> RestoreResult:
        """Put files (all, or those under `path`) back as they were at the checkpoint; files created
        since are removed. A safety snapshot is taken first, so a restore can itself be undone."""
        wd = _abs(workdir)
        target = self.resolve(wd, checkpoint_id)
        rel = _relative(wd, path) if path else None
        with self._lock(wd):
            try:
                tree = self._stage(wd)
                if tree is None:
                    raise CheckpointError(f"{wd} has too many files for a safety snapshot; nothing restored")
                safety = self._commit_if_changed(wd, tree, f"before restore to {target.short}", True, target.id)
                current = self._refs(wd)[0][1]
                removed = self._restore_tree(wd, target.id, current, rel)
            except (subprocess.SubprocessError, OSError) as exc:
                raise CheckpointError(f"restore failed: {_why(exc)}") from exc
        return RestoreResult(target.id, safety, tuple(removed), rel)

    def _restore_tree(self, wd: str, target: str, current: str, rel: str | None) -> list[str]:
        """Remove files added since `target`, then check the target's files out (within `rel`)."""
        spec = [f":(literal){rel}"] if rel and rel != "." else ["."]
        added = self._git(wd, "diff", "--name-only", "-z", "--no-renames", "--diff-filter=A", target, current,
                          "--", *spec)
        removed = []
        for name in (n for n in added.split("\0") if n):
            full = os.path.join(wd, name)
            if os.path.lexists(full) and not os.path.isdir(full):
                os.remove(full)
                removed.append(name)
                _remove_empty_parents(os.path.dirname(full), wd)
        if self._git(wd, "ls-tree", "-r", "--name-only", target, "--", *spec).strip():
            self._git(wd, "checkout", target, "--", *spec)
        return removed

    def current_tree(self, workdir: str | Path) -> str | None:
        """Tree id of the directory as it is now (without recording a checkpoint)."""
        wd = _abs(workdir)
        with self._lock(wd), tempfile.TemporaryDirectory(prefix="hermes-cp-") as tmp:
            return self._stage(wd, index=os.path.join(tmp, "index"))

    def rollback(self, workdir: str | Path, n: int = 1) -> RestoreResult:
        """Undo the last `n` recorded change sets: restore the n-th checkpoint older than the state the
        directory is in now (safety snapshots are skipped, so repeated rollbacks keep going back)."""
        wd = _abs(workdir)
        marks = [cp for cp in self.list(wd) if not cp.safety]
        if not marks:
            raise CheckpointError(f"nothing to roll back in {wd}: no checkpoints yet")
        now = self.current_tree(wd)
        trees = self._run(wd, "rev-parse", *(f"{cp.id}^{{tree}}" for cp in marks)).split() if marks else []
        candidates: list[Checkpoint] = []
        matched = False
        for cp, tree in zip(marks, trees, strict=True):
            if tree == now:
                if not matched:  # the newest checkpoint equal to now: only older ones can be targets
                    candidates, matched = [], True
                continue
            candidates.append(cp)
        if len(candidates) < max(1, n):
            raise CheckpointError(f"nothing to roll back in {wd}: {len(candidates)} earlier checkpoint(s)")
        return self.restore(wd, candidates[max(1, n) - 1].id)


def rollback(workdir: str | Path, n: int = 1, store: CheckpointStore | None = None) -> RestoreResult:
    """Module-level /rollback entry point for the CLI."""
    return (store or CheckpointStore()).rollback(workdir, n)


def _abs(workdir: str | Path) -> str:
    return os.path.realpath(os.path.expanduser(str(workdir)))


def _snapshottable(wd: str) -> bool:
    """Refuse the filesystem root and the home directory itself (too broad to snapshot)."""
    return os.path.isdir(wd) and wd not in ("/", os.path.realpath(os.path.expanduser("~")))


def _relative(wd: str, path: str) -> str:
    full = os.path.realpath(os.path.join(wd, os.path.expanduser(path)))
    if full != wd and not full.startswith(wd.rstrip("/") + "/"):
        raise CheckpointError(f"{path} is outside {wd}")
    return os.path.relpath(full, wd)


def _remove_empty_parents(directory: str, stop: str) -> None:
    while directory != stop and directory.startswith(stop.rstrip("/") + "/"):
        try:
            os.rmdir(directory)
        except OSError:
            return
        directory = os.path.dirname(directory)


def _glob_escape(name: str) -> str:
    return "".join("\\" + ch if ch in "*?[]\\!# " else ch for ch in name)


def _why(exc: BaseException) -> str:
    if isinstance(exc, subprocess.CalledProcessError):
        return (exc.stderr or str(exc)).strip().splitlines()[-1] if (exc.stderr or "").strip() else str(exc)
    if isinstance(exc, FileNotFoundError):
        return "git is not installed"
    return str(exc)
