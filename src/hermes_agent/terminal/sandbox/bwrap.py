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
    """The bwrap prefix (ends with `--`). Later mounts cover earlier ones, hence the order: root
    read-only, /dev and /proc, then writable roots and read-only carve-outs by depth (at one depth the
    read-only one last), then hidden secrets."""
    argv = [binary, "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc"]
    mounts = [(_depth(p), 0, "--bind", p) for p in (*spec.writable, *spec.pinned) if os.path.exists(p)]
    mounts += [(_depth(p), 1, "--ro-bind", p) for p in spec.readonly if os.path.lexists(p) and not os.path.islink(p)]
    for *_, flag, path in sorted(dict.fromkeys(mounts)):  # deeper mounts cover shallower ones
        argv += [flag, path, path]
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
