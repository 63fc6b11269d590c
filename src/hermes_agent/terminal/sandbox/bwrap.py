"""bubblewrap argv for a SandboxSpec: the host's root read-only, writable roots bound back,
protected paths inside them re-bound read-only, secrets hidden, all capabilities dropped."""

from __future__ import annotations

import functools
import os
import shutil
import subprocess

from hermes_agent.terminal.sandbox.spec import SandboxSpec


def _depth(path: str) -> int:
    return path.rstrip("/").count("/")


def bwrap_argv(spec: SandboxSpec, binary: str = "bwrap") -> list[str]:
    """The bwrap prefix (ends with `--`). Later mounts cover earlier ones, hence the order:
    root read-only, /dev and /proc, writable roots, read-only carve-outs, then hidden secrets."""
    argv = [binary, "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc"]
    for root in sorted(spec.writable, key=_depth):
        if os.path.exists(root):
            argv += ["--bind", root, root]
    for path in sorted(spec.readonly, key=_depth):
        if os.path.lexists(path) and not os.path.islink(path):
            argv += ["--ro-bind", path, path]
    for path in sorted(spec.secrets, key=_depth):
        if os.path.isdir(path) and not os.path.islink(path):
            argv += ["--tmpfs", path, "--remount-ro", path]
        elif os.path.exists(path):
            argv += ["--ro-bind", "/dev/null", path]  # nodev mount: opening it is "Permission denied"
    if not spec.network:
        argv.append("--unshare-net")
    # No pid namespace: the parent kills process groups by the pids the launcher reports.
    argv += ["--cap-drop", "ALL", "--new-session", "--die-with-parent", "--chdir", "/", "--"]
    return argv


@functools.cache
def bwrap_problem() -> str | None:
    """None when bubblewrap is installed and can build a sandbox here (probed once)."""
    binary = shutil.which("bwrap")
    if binary is None:
        return "bubblewrap (bwrap) is not installed"
    probe = [binary, "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--cap-drop", "ALL",
             "--die-with-parent", "--", "true"]
    try:
        res = subprocess.run(probe, capture_output=True, timeout=10, check=False)
    except (OSError, subprocess.SubprocessError) as exc:
        return f"bwrap cannot run: {exc}"
    if res.returncode != 0:
        err = res.stderr.decode("utf-8", "replace").strip().splitlines()
        return f"bwrap cannot create a sandbox here: {err[-1] if err else 'exit ' + str(res.returncode)}"
    return None
