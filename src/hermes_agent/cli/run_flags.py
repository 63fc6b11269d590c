"""Hermes's chat flags shared by `hermes` and `hermes chat` (-s/--skills, --ignore-user-config, --ignore-rules,
--safe-mode, --checkpoints, -w/--worktree, -c [NAME]) and `chat --image`, and what they make of one run."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from hermes_agent.errors import UsageError

if TYPE_CHECKING:
    from hermes_agent.bootstrap.options import RunOptions
    from hermes_agent.cli.worktree import Worktree
    from hermes_agent.config.settings import Settings

IMAGE_SUFFIXES = frozenset({".png", ".jpg", ".jpeg", ".gif", ".webp", ".bmp", ".tiff", ".tif", ".svg", ".ico"})


def add_run_flags(p: argparse.ArgumentParser, d: dict) -> None:
    """The flags, on the top-level parser (d = {}) and on `chat` (d suppresses parent-clobbering defaults)."""
    p.add_argument("-c", "--continue", dest="continue_last", nargs="?", const=True, metavar="SESSION_NAME",
                   help="resume the latest session, or the newest one with this title", **d)
    p.add_argument("-s", "--skills", action="append", metavar="NAME",
                   help="preload skills for the session (repeat or comma-separate)", **d)
    p.add_argument("--ignore-user-config", action="store_true",
                   help="ignore config.yaml for this run (.env credentials are still read)", **d)
    p.add_argument("--ignore-rules", action="store_true",
                   help="no AGENTS.md, SOUL.md, .cursorrules or memory in the system prompt", **d)
    p.add_argument("--safe-mode", action="store_true",
                   help="no customisations: --ignore-user-config, --ignore-rules, no plugins, no MCP servers", **d)
    p.add_argument("--checkpoints", action="store_true",
                   help="snapshot the working directory before file changes (for /rollback)", **d)
    p.add_argument("-w", "--worktree", action="store_true",
                   help="run in a new git worktree under <repo>/.worktrees/ on a new branch", **d)


def continue_before_subcommand(argv: list[str], subcommands: object) -> list[str]:
    """`hermes -c chat ...`: a bare -c followed by a subcommand means "the latest session", not a title."""
    out = list(argv)
    for i, arg in enumerate(out[:-1]):
        if arg in ("-c", "--continue") and out[i + 1] in subcommands:  # type: ignore[operator]
            out[i] = "--continue="
    return out


def ignores_user_config(args: argparse.Namespace) -> bool:
    return bool(getattr(args, "ignore_user_config", False) or getattr(args, "safe_mode", False))


def overrides(args: argparse.Namespace) -> dict[str, object]:
    """Config overrides these flags imply."""
    return {"checkpoints.enabled": True} if getattr(args, "checkpoints", False) else {}


def resume_target(args: argparse.Namespace) -> str | None:
    """--resume ID, `-c` (the latest session) or `-c NAME` (a title)."""
    resume = getattr(args, "resume", None)
    if resume:
        return resume
    cont = getattr(args, "continue_last", None)
    if isinstance(cont, str) and cont.strip():
        return cont
    return "latest" if cont is True or cont == "" else None


def skill_names(args: argparse.Namespace) -> list[str]:
    out: list[str] = []
    for raw in getattr(args, "skills", None) or []:
        out.extend(n.strip() for n in raw.split(",") if n.strip() and n.strip() not in out)
    return out


def run_options(args: argparse.Namespace, settings: Settings) -> RunOptions:
    """RunOptions for build_agent; unknown skills raise UsageError (a warning when some others loaded)."""
    from hermes_agent.bootstrap.options import RunOptions, preload_skills

    extra: list[str] = []
    names = skill_names(args)
    if names:
        pre = preload_skills(settings, names)
        if pre.missing and not pre.loaded:
            raise UsageError(f"unknown skill{'s' if len(pre.missing) > 1 else ''}: {', '.join(pre.missing)} "
                             "(see: hermes skills list)")
        if pre.missing:
            print(f"hermes: unknown skill{'s' if len(pre.missing) > 1 else ''} skipped: {', '.join(pre.missing)}; "
                  f"continuing with {', '.join(pre.loaded)}", file=sys.stderr)
        extra.append(pre.prompt)
    safe = bool(getattr(args, "safe_mode", False))
    cont = getattr(args, "continue_last", None)
    by_title = isinstance(cont, str) and bool(cont.strip()) and not getattr(args, "resume", None)
    return RunOptions(prompt_extra=tuple(extra), ignore_rules=safe or bool(getattr(args, "ignore_rules", False)),
                      safe_mode=safe, resume_by_title=by_title)


def enter_worktree(args: argparse.Namespace, options: RunOptions, out: object = None) -> tuple[Worktree | None, RunOptions]:
    """With -w: create the worktree, say where it is, make it this process's working directory and tell
    the model (a note in the system prompt)."""
    if not getattr(args, "worktree", False):
        return None, options
    import dataclasses
    import os

    from hermes_agent.cli.worktree import create_worktree

    wt = create_worktree(Path.cwd())
    print(f"✓ Worktree created: {wt.path}\n  Branch: {wt.branch}\n  Base:   HEAD ({wt.base[:12]})",
          file=out or sys.stdout)
    os.chdir(wt.path)
    return wt, dataclasses.replace(options, prompt_extra=(*options.prompt_extra, wt.prompt_note()))


def image_data_url(raw: str) -> str:
    """A local image file as a base64 data: URL (Hermes's --image); a bad path raises UsageError."""
    import base64

    path = Path(raw).expanduser()
    if not path.is_file():
        raise UsageError(f"image file not found: {raw}")
    if path.suffix.lower() not in IMAGE_SUFFIXES:
        raise UsageError(f"not a supported image file: {raw} (use {', '.join(sorted(IMAGE_SUFFIXES))})")
    from hermes_agent.nofollow import read_regular
    from hermes_agent.tools.builtin._images import sniff

    try:  # the workspace is writable from the sandbox: no symlink followed, regular files only
        data = read_regular(path, limit=64 * 1024 * 1024)
    except OSError as exc:
        raise UsageError(f"cannot read image {raw}: {'a symlink (not followed)' if isinstance(exc, PermissionError) else exc.strerror or exc}") from exc
    mime = sniff(data)
    if mime is None:  # a provider would answer with a 400 about a corrupt image; say it here instead
        raise UsageError(f"not an image: {raw} (its bytes are not PNG, JPEG, GIF, WebP or BMP)")
    return f"data:{mime};base64,{base64.b64encode(data).decode('ascii')}"
