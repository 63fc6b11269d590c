"""Filesystem checkpoints in Hermes's layout (its v2 "single store", 0.19.0 and upstream alike), so each
program lists and restores the other's and neither archives the other's into `checkpoints/legacy-<ts>/`:

    HERMES_HOME/checkpoints/store/          one bare git repository for every working directory
        refs/hermes/<sha256(realpath)[:16]>  a directory's checkpoints: a chain of commits, newest at the tip
        projects/<hash>.json               {"workdir", "created_at", "last_touch"}
        info/exclude                       excludes shared by both programs

The user's directory is the work tree (GIT_DIR is the store); its own .git is never read or written. Each
of our operations stages into a private temporary index (Hermes keeps its own under store/indexes/).
Pruning past `max_snapshots` rebuilds a directory's chain from the commits it keeps: the newest ones and,
for a while, older ones holding a file version no later one holds (cpprune.py; trees, messages and dates
kept; commit ids change, as Hermes's own pruning does). Safety snapshots taken before a restore carry a
`Hermes-Kind: safety` trailer (Hermes's "pre-rollback snapshot" ones count too). Homes written by earlier
versions of ours (one repository per directory, checkpoints/<hash>/) are moved into the store once."""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import logging
import os
import subprocess
import tempfile
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path

from hermes_agent import paths
from hermes_agent.errors import StorageError
from hermes_agent.nofollow import read_regular_text

log = logging.getLogger(__name__)

REF_PREFIX = "refs/hermes/"
SAFETY_TRAILER = "Hermes-Kind: safety"
HERMES_SAFETY_PREFIX = "pre-rollback snapshot"
BASE_EXCLUDES = (".git/", "node_modules/", ".venv/", "venv/", "__pycache__/", "*.pyc", ".DS_Store",
                 ".hermes-*", ".mypy_cache/", ".pytest_cache/", ".ruff_cache/", ".tox/", ".env", ".env.*",
                 ".worktrees/", ".hg/", ".svn/")
_GIT_TIMEOUT_S = 120
_FIELD, _RECORD = "\x1f", "\x1e"


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
    kept: tuple[str, ...] = ()  # copies of overwritten files no snapshot held (hermes_agent.quarantine)


def project_key(workdir: str | Path) -> str:
    """Hermes's per-directory key: sha256 of the real path, first 16 hex digits."""
    return hashlib.sha256(os.fsencode(_abs(workdir))).hexdigest()[:16]


class CheckpointStore:
    """Shadow-git snapshots of working directories. Snapshot failures are logged and return None:
    a checkpoint problem never blocks the change it was meant to protect."""

    def __init__(self, root: Path | str | None = None, *, max_snapshots: int = 50,
                 max_file_bytes: int = 10 * 1024 * 1024, max_files: int = 50_000,
                 env: Mapping[str, str] | None = None) -> None:
        self.root = Path(root) if root is not None else paths.checkpoints_dir()
        self.store = self.root / "store"
        self.max_snapshots = max(1, int(max_snapshots))
        self.max_file_bytes = max_file_bytes
        self.max_files = max_files
        self.skip_reading: Callable[[str], bool] | None = None  # files a snapshot leaves unread (readwatch.py)
        self.skip_listing: Callable[[], list[str]] | None = None  # and folders git must not list (listwatch.py)
        self._env = env
        self._turns: dict[str, object] = {}
        self._locks: dict[str, threading.Lock] = {}
        self._guard = threading.Lock()

    # -- plumbing -----------------------------------------------------------------------------

    def repo_dir(self, workdir: str | Path) -> Path:
        """The shared GIT_DIR (every directory's checkpoints live in one store)."""
        return self.store

    def ref(self, workdir: str | Path) -> str:
        return REF_PREFIX + project_key(workdir)

    def _git_env(self, index: str | None = None) -> dict[str, str]:
        base = dict(os.environ if self._env is None else self._env)
        env = {k: v for k, v in base.items() if not k.startswith("GIT_")}
        env.update(GIT_CONFIG_NOSYSTEM="1", GIT_CONFIG_GLOBAL=os.devnull, GIT_TERMINAL_PROMPT="0",
                   GIT_AUTHOR_NAME="Hermes Checkpoint", GIT_AUTHOR_EMAIL="hermes@local",
                   GIT_COMMITTER_NAME="Hermes Checkpoint", GIT_COMMITTER_EMAIL="hermes@local", LC_ALL="C")
        if index:
            env["GIT_INDEX_FILE"] = index
        return env

    def _git(self, wd: str, *args: str, index: str | None = None, check: bool = True, stdin: bytes | None = None,
             env: Mapping[str, str] | None = None, excludes: str | None = None) -> str:
        config = ["-c", f"core.excludesFile={excludes}"] if excludes else []
        from hermes_agent.gitsafe import git_argv

        cwd = wd if os.path.isdir(wd) else str(self.root)
        full_env = {**self._git_env(index), **(env or {})}
        cmd = git_argv(args, cwd=cwd, prefix=[f"--git-dir={self.store}", f"--work-tree={wd}", *config], env=full_env)
        proc = subprocess.run(cmd, cwd=cwd, input=stdin, env=full_env, capture_output=True, timeout=_GIT_TIMEOUT_S)
        out = proc.stdout.decode("utf-8", "surrogateescape")
        if check and proc.returncode != 0:
            err = proc.stderr.decode("utf-8", "replace").strip()
            raise subprocess.CalledProcessError(proc.returncode, cmd, out, err)
        return out

    def _lock(self, wd: str) -> threading.Lock:
        with self._guard:
            return self._locks.setdefault(wd, threading.Lock())

    @contextlib.contextmanager
    def _locked(self, wd: str) -> Iterator[None]:
        """This process's per-directory lock, then a cross-process one (our other processes; Hermes's
        own writes to a ref are compare-and-swap updates)."""
        with self._lock(wd):
            self.store.mkdir(parents=True, exist_ok=True)  # (before anything else: Hermes archives strays)
            with open(self.store / ".hermes-agent.lock", "a") as fh:
                fcntl.flock(fh, fcntl.LOCK_EX)
                yield

    def _ensure_store(self) -> None:
        """Create the store if needed; move in what earlier versions of ours left (also out of Hermes's
        legacy archive, when Hermes created the store first)."""
        from hermes_agent.storage.checkpoint_import import import_old_repos, old_repos

        if not (self.store / "HEAD").exists():
            self._init_store()
        if old_repos(self.root):
            import_old_repos(self)

    def _init_store(self) -> None:
        self.store.mkdir(parents=True, exist_ok=True)
        from hermes_agent.gitsafe import git_argv

        subprocess.run(git_argv(["init", "--quiet", "--bare", str(self.store)]), check=True, capture_output=True,
                       env=self._git_env(), timeout=_GIT_TIMEOUT_S)
        for key, value in (("user.email", "hermes@local"), ("user.name", "Hermes Checkpoint"), ("gc.auto", "0"),
                           ("commit.gpgsign", "false"), ("core.autocrlf", "false"), ("core.quotepath", "false")):
            self._git(str(self.root), "config", key, value)
        for sub in ("indexes", "projects", "info"):
            (self.store / sub).mkdir(exist_ok=True)
        (self.store / "info" / "exclude").write_text("\n".join(BASE_EXCLUDES) + "\n", encoding="utf-8")

    def touch_project(self, wd: str) -> None:
        """Write projects/<hash>.json as Hermes does (created_at kept, last_touch now)."""
        meta_path = self.store / "projects" / f"{project_key(wd)}.json"
        now = time.time()
        try:
            old = json.loads(meta_path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            old = {}
        created = old.get("created_at", now) if isinstance(old, dict) else now
        meta_path.parent.mkdir(parents=True, exist_ok=True)
        from hermes_agent.atomicfile import atomic_write_text

        atomic_write_text(meta_path, json.dumps({"workdir": wd, "created_at": created, "last_touch": now}), 0o644)

    def _excludes(self, wd: str, tmp: str) -> str:
        """A private excludes file: ours and the user's own .git/info/exclude (read-only)."""
        lines = list(BASE_EXCLUDES)
        try:  # in the workspace, which the sandbox writes: no symlink followed, regular files only
            lines.extend(read_regular_text(Path(wd, ".git", "info", "exclude"), limit=1 << 20).splitlines())
        except OSError:
            pass
        if not os.path.lexists(os.path.join(wd, ".git")):  # no repository: its builds and dependencies left out
            from hermes_agent.paths import GENERATED_DIRS

            lines.extend(f"{d}/" for d in sorted(GENERATED_DIRS))
        for folder in self.skip_listing() if self.skip_listing is not None else ():
            rel = os.path.relpath(folder, wd)
            if rel != "." and not rel.startswith(".."):  # left out whole: git does not open it
                lines.append("/" + "".join("\\" + c if c in "*?[\\!# " else c for c in rel) + "/")
        path = os.path.join(tmp, "exclude")
        Path(path).write_text("\n".join(lines) + "\n", encoding="utf-8")
        return path

    def _stage(self, wd: str, tmp: str, extra: Iterable[str] = ()) -> str | None:
        """The tree of the work tree minus excluded and large files (None: too many files), staged into our
        private index. git lists the names; the files are read by storage/cpstage.py, never by a path
        string the sandbox could have swapped a link into."""
        from hermes_agent.storage.cpstage import stage_tree

        out = self._git(wd, "ls-files", "-z", "--others", "--exclude-standard", excludes=self._excludes(wd, tmp),
                        index=os.path.join(tmp, "empty-index"))  # every file not excluded
        names = list(dict.fromkeys([*(n for n in out.split("\0") if n and not n.endswith("/")), *extra]))
        if self.skip_reading is not None:
            names = [n for n in names if not self.skip_reading(os.path.join(wd, n))]
        if len(names) > self.max_files:
            log.warning("checkpoint skipped: %s has more than %d files", wd, self.max_files)
            return None
        return stage_tree(lambda *a, **kw: self._git(wd, *a, **kw), wd, self.store, self.index(wd), names,
                          self.max_file_bytes)

    def ignored(self, workdir: str | Path) -> set[str]:
        """What the excludes leave out of `workdir`'s snapshots (the user's .gitignore files, ours, the
        repository's info/exclude): file names, and directories wholly left out with a trailing "/"."""
        wd = _abs(workdir)
        with self._locked(wd), tempfile.TemporaryDirectory(prefix="hermes-cp-") as tmp:
            self._ensure_store()
            out = self._git(wd, "ls-files", "-z", "--others", "--ignored", "--exclude-standard", "--directory",
                            excludes=self._excludes(wd, tmp), index=os.path.join(tmp, "empty-index"))
        return {n for n in out.split("\0") if n}

    def index(self, wd: str) -> str:
        """Our staging index of `wd` (kept between calls so unchanged files are not hashed again; beside
        Hermes's indexes/<hash>, never the same file)."""
        (self.store / "indexes").mkdir(parents=True, exist_ok=True)
        return str(self.store / "indexes" / f"{project_key(wd)}.hermes-agent")

    def _tip(self, wd: str) -> str | None:
        out = self._git(wd, "rev-parse", "-q", "--verify", f"{self.ref(wd)}^{{commit}}", check=False).strip()
        return out or None

    # -- public API ---------------------------------------------------------------------------

    def snapshot(self, workdir: str | Path, reason: str = "", *, turn: object = None,
                 safety: bool = False, pin: bool = False, extra: list[str] | None = None,
                 exact: bool = False) -> str | None:
        """Checkpoint `workdir`; None when skipped (same turn, nothing changed, refused dir, git error). `pin`:
        its tree is the user's work (the dirty guard's first snapshot of a session, before any confined work of
        it): pruning past the hard cap drops it last (cpprune.py; rt14b c03). `extra`: names the excludes leave
        out that are kept too (files git ignores that the user wrote by hand: storage/handkept.py). `exact`:
        `workdir` is a real path the caller found; a link on it now (a directory the sandbox swapped) refuses it,
        and the files are then read by a walk that follows no link (cpstage.py)."""
        wd = _abs(workdir)
        if not _snapshottable(wd) or exact and wd != os.path.abspath(workdir):  # `exact`: no link on the way
            return None
        if turn is not None and self._turns.get(wd) == turn:
            return None
        try:
            with self._locked(wd), tempfile.TemporaryDirectory(prefix="hermes-cp-") as tmp:
                self._ensure_store()
                self.touch_project(wd)
                tree = self._stage(wd, tmp, extra or ())
                if pin and tree is not None:
                    with open(self.store / f"pinned-{project_key(wd)}", "a", encoding="ascii") as fh:
                        fh.write(tree + "\n")
                cid = None if tree is None else self._commit_if_changed(wd, tree, reason, safety, prune=True)
        except (subprocess.SubprocessError, OSError) as exc:
            log.warning("checkpoint of %s failed: %s", wd, _why(exc))
            return None
        if turn is not None:
            self._turns[wd] = turn
        return cid

    def _commit_if_changed(self, wd: str, tree: str, reason: str, safety: bool, *, prune: bool) -> str | None:
        tip = self._tip(wd)
        if tip and self._git(wd, "rev-parse", f"{tip}^{{tree}}").strip() == tree:
            return None
        message = (reason or "checkpoint").strip() + (f"\n\n{SAFETY_TRAILER}\n" if safety else "\n")
        parent = ["-p", tip] if tip else []
        cid = self._git(wd, "commit-tree", tree, *parent, stdin=message.encode("utf-8")).strip()
        self._git(wd, "update-ref", self.ref(wd), cid, *([tip] if tip else []))
        if prune:
            cid = self._prune(wd) or cid
        return cid

    def _prune(self, wd: str) -> str | None:
        """Past `max_snapshots`, drop the older checkpoints that hold nothing a later one does not (cpprune.py:
        by content, not only by count): rebuild the chain from the kept ones; returns the new tip."""
        from hermes_agent.storage import cpprune

        git = lambda *a, **kw: self._git(wd, *a, **kw)  # noqa: E731
        commits = cpprune.chain(git, self.ref(wd))
        if len(commits) <= self.max_snapshots:
            return None
        try:
            pinned = set((self.store / f"pinned-{project_key(wd)}").read_text(encoding="ascii").split())
        except OSError:
            pinned = set()
        kept = cpprune.keep(git, commits, self.max_snapshots, pinned=pinned)
        if len(kept) == len(commits):
            return None
        messages = {cid: message for cid, _when, message in self._log(wd, held=True)}
        parent: str | None = None
        for cid, tree, when, _changes in reversed([commits[i] for i in kept]):
            message = messages.get(cid, "checkpoint").strip("\n")
            date = {"GIT_AUTHOR_DATE": f"{when} +0000", "GIT_COMMITTER_DATE": f"{when} +0000"}
            parent = self._git(wd, "commit-tree", tree, *(["-p", parent] if parent else []),
                               stdin=(message + "\n").encode("utf-8"), env=date).strip()
        self._git(wd, "update-ref", self.ref(wd), str(parent), commits[0][0])
        self._git(wd, "prune", "--expire=1.hour.ago", check=False)
        return parent

    def _log(self, wd: str, held: bool = False) -> list[tuple[str, str, str]]:
        """(id, author time, full message) of the directory's chain, newest first (`held`: the caller
        holds the lock and has brought the store up to date)."""
        from hermes_agent.storage.checkpoint_import import old_repos

        if not held and old_repos(self.root):
            with self._locked(wd):
                self._ensure_store()
        if not (self.store / "HEAD").exists() or self._tip(wd) is None:
            return []
        out = self._git(wd, "log", self.ref(wd), f"--format=%H{_FIELD}%at{_FIELD}%B{_RECORD}")
        items = []
        for record in out.split(_RECORD):
            parts = record.strip("\n").split(_FIELD)
            if len(parts) == 3:
                items.append((parts[0], parts[1], parts[2]))
        return items

    def list(self, workdir: str | Path) -> list[Checkpoint]:
        """Checkpoints of `workdir` (ours and Hermes's), newest first."""
        wd = _abs(workdir)
        try:
            entries = self._log(wd)
        except (subprocess.SubprocessError, OSError) as exc:
            raise CheckpointError(f"git failed on the checkpoints of {wd}: {_why(exc)}") from exc
        out = []
        for cid, when, message in entries:
            subject, _, body = message.partition("\n")
            safety = SAFETY_TRAILER in body or subject.startswith(HERMES_SAFETY_PREFIX)
            out.append(Checkpoint(cid, float(when or 0), subject.strip(), safety))
        return out

    def workdirs(self) -> list[str]:
        """Every working directory with checkpoints (from projects/<hash>.json, Hermes's registry)."""
        out = []
        for meta in sorted((self.store / "projects").glob("*.json")):
            try:
                wd = json.loads(meta.read_text(encoding="utf-8")).get("workdir")
            except (OSError, ValueError, AttributeError):
                continue
            if wd and ((self.store / "refs" / "hermes" / meta.stem).exists() or self._has_packed(meta.stem)):
                out.append(str(wd))
        return out

    def _has_packed(self, key: str) -> bool:
        try:
            return f" {REF_PREFIX}{key}\n" in (self.store / "packed-refs").read_text(encoding="utf-8")
        except OSError:
            return False

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
        with self._locked(wd), tempfile.TemporaryDirectory(prefix="hermes-cp-") as tmp:
            try:
                if self._stage(wd, tmp) is None:
                    raise CheckpointError(f"{wd} has too many files to compare")
                args = ["--stat"] if stat else []
                return self._git(wd, "diff", "--cached", "--no-color", "--no-ext-diff", *args, target.id,
                                 index=self.index(wd))
            except (subprocess.SubprocessError, OSError) as exc:
                raise CheckpointError(f"diff failed: {_why(exc)}") from exc

    def restore(self, workdir: str | Path, checkpoint_id: str, path: str | None = None) -> RestoreResult:
        """Put files (all, or those under `path`) back as they were at the checkpoint; files created
        since are removed. A safety snapshot is taken first, so a restore can itself be undone."""
        wd = _abs(workdir)
        target = self.resolve(wd, checkpoint_id)
        rel = _relative(wd, path) if path else None
        with self._locked(wd), tempfile.TemporaryDirectory(prefix="hermes-cp-") as tmp:
            try:
                tree = self._stage(wd, tmp)
                if tree is None:
                    raise CheckpointError(f"{wd} has too many files for a safety snapshot; nothing restored")
                safety = self._commit_if_changed(wd, tree, f"before restore to {target.short}", True, prune=False)
                keep = self._quarantine()
                before = len(keep.kept)
                removed = self._restore_tree(wd, target.id, str(self._tip(wd)), rel, keep)
            except (subprocess.SubprocessError, OSError) as exc:
                raise CheckpointError(f"restore failed: {_why(exc)}") from exc
        return RestoreResult(target.id, safety, tuple(removed), rel, tuple(keep.kept[before:]))

    def _quarantine(self):  # noqa: ANN202 - hermes_agent.quarantine.Quarantine (imported when used)
        """Where a restore keeps what it overwrites that no snapshot holds: HERMES_HOME/quarantine."""
        from hermes_agent.quarantine import session_quarantine

        return session_quarantine(str(self.root.parent / "quarantine"))

    def _restore_tree(self, wd: str, target: str, current: str, rel: str | None, keep: object) -> list[str]:
        """Remove files added since `target`, then write the target's changed files back (within `rel`),
        never following a link the sandbox swapped in (storage/cprestore.py)."""
        from hermes_agent.storage.cprestore import restore_files

        spec = [f":(literal){rel}"] if rel and rel != "." else ["."]
        return restore_files(lambda *a, **kw: self._git(wd, *a, **kw), wd, target, current, spec, keep)

    def current_tree(self, workdir: str | Path) -> str | None:
        """Tree id of the directory as it is now (without recording a checkpoint)."""
        wd = _abs(workdir)
        with self._locked(wd), tempfile.TemporaryDirectory(prefix="hermes-cp-") as tmp:
            self._ensure_store()
            return self._stage(wd, tmp)

    def rollback(self, workdir: str | Path, n: int = 1) -> RestoreResult:
        """Undo the last `n` recorded change sets: restore the n-th checkpoint older than the state the
        directory is in now (safety snapshots are skipped, so repeated rollbacks keep going back)."""
        wd = _abs(workdir)
        marks = [cp for cp in self.list(wd) if not cp.safety]
        if not marks:
            raise CheckpointError(f"nothing to roll back in {wd}: no checkpoints yet")
        try:
            now = self.current_tree(wd)
            trees = self._git(wd, "rev-parse", *(f"{cp.id}^{{tree}}" for cp in marks)).split()
        except (subprocess.SubprocessError, OSError) as exc:
            raise CheckpointError(f"git failed on the checkpoints of {wd}: {_why(exc)}") from exc
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


def _why(exc: BaseException) -> str:
    if isinstance(exc, subprocess.CalledProcessError):
        return (exc.stderr or str(exc)).strip().splitlines()[-1] if (exc.stderr or "").strip() else str(exc)
    if isinstance(exc, FileNotFoundError) and os.path.basename(str(exc.filename or "")) == "git":
        return "git is not installed"
    return str(exc)
