"""Multi-file patch transactions: plan every file's new text in memory, then write all of them;
any failure before or during the writes leaves every file as it was (all or nothing)."""

from __future__ import annotations

import shlex
from dataclasses import dataclass

from hermes_agent.terminal.base import TerminalBackend
from hermes_agent.tools.builtin._diffparse import FileOp, added_text, apply_hunks, parse_patch
from hermes_agent.tools.builtin._fileio import (
    FileToolError,
    checkpoint,
    load_text,
    resolve,
    write_text,
)
from hermes_agent.tools.builtin._patching import DIFF_MAX_CHARS, unified_diff
from hermes_agent.tools.builtin._pathguard import GuardedBackend, authorize, check_read, real_path


@dataclass(slots=True)
class Planned:
    """One file's change: original bytes (None: did not exist) and new text (None: delete)."""

    path: str
    before: bytes | None
    before_text: str
    after: str | None


def plan(backend: TerminalBackend, patch_text: str) -> list[Planned]:
    """The change of every file in the patch, computed without writing anything."""
    planned: dict[str, Planned] = {}
    for op in parse_patch(patch_text):
        path = real_path(backend, resolve(backend, op.path))
        current = planned.get(path)
        if current is None:
            current = _load(backend, path, must_exist=op.kind != "add")
            planned[path] = current
        _apply_op(backend, op, path, current, planned)
    return [p for p in planned.values() if p.after != (p.before_text if p.before is not None else None)]


def _load(backend: TerminalBackend, path: str, *, must_exist: bool) -> Planned:
    if backend.stat(check_read(backend, path) if must_exist else path) is None:
        if must_exist:
            raise FileToolError(f"{path}: file does not exist (use '--- /dev/null' or '*** Add File' to create it)")
        return Planned(path, None, "", None)
    tf = load_text(backend, path)
    return Planned(path, tf.data, tf.text, tf.text)


def _apply_op(backend: TerminalBackend, op: FileOp, path: str, current: Planned, planned: dict[str, Planned]) -> None:
    if op.kind == "add":
        if current.after is not None:
            raise FileToolError(f"{path}: cannot add, the file already exists (patch it with an update instead)")
        current.after = added_text(op)
        return
    if current.after is None:
        raise FileToolError(f"{path}: file does not exist or was already deleted earlier in this patch")
    if op.kind == "delete":
        current.after = None
        return
    new_text = apply_hunks(current.after, op.hunks, path) if op.hunks else current.after
    if op.move_to:
        dest = real_path(backend, resolve(backend, op.move_to))
        target = planned.get(dest) or _load(backend, dest, must_exist=False)
        if target.after is not None:
            raise FileToolError(f"cannot move {path} to {dest}: destination exists")
        target.after = new_text
        planned[dest] = target
        current.after = None
    else:
        current.after = new_text


def commit(ctx: object, backend: TerminalBackend, changes: list[Planned]) -> None:
    """Write every planned change; on a failure restore the files already written and re-raise. Every
    path is checked against the path policy (and approved when it asks) before the first write."""
    authorize(ctx, backend, [c.path for c in changes], "patch")
    checkpoint(ctx, backend, [c.path for c in changes], "patch (multi-file)")
    done: list[Planned] = []
    try:
        for change in changes:
            if change.after is None:
                _remove(backend, change.path)
            else:
                write_text(backend, change.path, change.after)
            done.append(change)
    except (FileToolError, OSError) as exc:
        failed = _rollback(backend, done)
        suffix = f"; could not restore: {', '.join(failed)}" if failed else "; no file was changed"
        raise FileToolError(f"{exc}{suffix}") from exc


def _remove(backend: TerminalBackend, path: str) -> None:
    if isinstance(backend, GuardedBackend):
        try:
            backend.remove(path)
        except OSError as exc:
            raise FileToolError(f"Failed to delete {path}: {exc.strerror or exc}") from exc
        return
    res = backend.execute(f"rm -f -- {shlex.quote(path)}", timeout=30)
    if res.exit_code != 0 or backend.stat(path) is not None:
        raise FileToolError(f"Failed to delete {path}: {res.output.strip() or 'unknown error'}")


def _rollback(backend: TerminalBackend, done: list[Planned]) -> list[str]:
    failed = []
    for change in reversed(done):
        try:
            if change.before is None:
                _remove(backend, change.path)
            else:
                backend.write_bytes(change.path, change.before)
        except (OSError, FileToolError):
            failed.append(change.path)
    return failed


def summary(changes: list[Planned], display) -> dict:
    """Result mapping: per-file action and line counts, and the combined diff (capped)."""
    files, diffs = [], []
    for c in changes:
        action = "created" if c.before is None else "deleted" if c.after is None else "updated"
        diff = unified_diff(c.before_text, c.after or "", display(c.path))
        added = sum(1 for x in diff.splitlines() if x.startswith("+") and not x.startswith("+++"))
        removed = sum(1 for x in diff.splitlines() if x.startswith("-") and not x.startswith("---"))
        files.append({"path": display(c.path), "action": action, "added": added, "removed": removed})
        diffs.append(diff)
    combined = "".join(diffs)
    if len(combined) > DIFF_MAX_CHARS:
        combined = combined[:DIFF_MAX_CHARS] + "\n... [diff truncated]\n"
    return {"files": files, "diff": combined}


def apply(ctx: object, backend: TerminalBackend, patch_text: str, display) -> dict:
    """Plan and commit a multi-file patch; returns the summary mapping."""
    changes = plan(backend, patch_text)
    if not changes:
        raise FileToolError("the patch changes nothing (every file already matches)")
    commit(ctx, backend, changes)
    return summary(changes, display)
