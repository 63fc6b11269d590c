"""Helpers for tests: config writers and a runner for the real `hermes` executable."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

HERMES = str(Path(sys.executable).with_name("hermes"))


def write_config(home: Path, text: str) -> Path:
    path = home / "config.yaml"
    path.write_text(text, encoding="utf-8")
    return path


def model_config(home: Path, url: str, extra: str = "") -> Path:
    """A config.yaml pointing at `url` with fast retries."""
    return write_config(home, f"model:\n  provider: custom\n  default: scripted-model\n  base_url: {url}\n"
                              f"  api_key: test-key\nagent:\n  retry_base_delay: 0.01\n{extra}")


def run_hermes(*args: str, home: Path, input: str | None = None, timeout: float = 60,
               env: dict | None = None, cwd: str | None = None) -> subprocess.CompletedProcess:
    """Run the real `hermes` executable with HERMES_HOME=home."""
    full_env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "OPENROUTER_", "HERMES_"))}
    full_env.update({"HERMES_HOME": str(home), **(env or {})})
    return subprocess.run([HERMES, *args], input=input, capture_output=True, text=True, timeout=timeout,
                          env=full_env, cwd=cwd)


def chat_tool_results(scripted, home: Path, cwd: Path, calls: list, *, toolsets: str = "terminal",
                      extra: str = "", timeout: float = 180) -> list[dict]:
    """One `hermes chat -q` (no terminal: what needs approval is refused with the reason) in which the scripted
    model makes `calls` in order — a string is a terminal command, else (tool, arguments) — then says done;
    returns the tool results the model received, one a call."""
    import json

    model_config(home, scripted.url, extra)
    steps = [(("terminal", {"command": c}) if isinstance(c, str) else c) for c in calls]
    scripted.add(*({"tool_calls": [{"name": n, "arguments": a}]} for n, a in steps), {"content": "done"})
    out = run_hermes("chat", "-q", "tidy the project", "-t", toolsets, home=home, input="", cwd=str(cwd),
                     timeout=timeout)
    assert out.returncode == 0, out.stderr
    results = [json.loads(m["content"]) for m in scripted.requests[-1]["body"]["messages"] if m["role"] == "tool"]
    assert len(results) == len(calls), results
    return results


def refused(result: dict, words: str = "") -> bool:
    """A tool result refused without asking (nobody to ask: `chat -q` with no terminal) for a reason with `words`."""
    text = result.get("error", "")
    return "BLOCKED" in text and "cannot ask" in text and words in text


def run_other_hermes(binary: str, *args: str, home: Path, timeout: float = 240) -> subprocess.CompletedProcess:
    """Run another Hermes program (the released 0.19.0 or an upstream-tracking build, each in its own venv)
    with HERMES_HOME=home, a private HOME beside it, and the working directory home's parent."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "OPENROUTER_", "HERMES_"))}
    env.update(HERMES_HOME=str(home), HOME=str(home.parent / "user-home"), NO_COLOR="1")
    (home.parent / "user-home").mkdir(exist_ok=True)
    return subprocess.run([binary, *args], capture_output=True, text=True, timeout=timeout, env=env,
                          cwd=str(home.parent))


def ssh_service_skip() -> str | None:
    """Why the test sshd (.ci/start-sshd.sh, HERMES_TEST_SSH_*) cannot be used by this user, or None. It belongs
    to root: a normal user running the suite (HERMES_TEST_AS=user) cannot read its client key."""
    names = ("HERMES_TEST_SSH_HOST", "HERMES_TEST_SSH_PORT", "HERMES_TEST_SSH_USER", "HERMES_TEST_SSH_KEY")
    missing = [v for v in names if not os.environ.get(v)]
    if missing:
        return f"ssh: set {', '.join(missing)} (source the env file of .ci/start-sshd.sh)"
    key = os.environ["HERMES_TEST_SSH_KEY"]
    if not os.access(key, os.R_OK):
        return f"ssh: the test sshd's client key {key} is not readable by uid {os.geteuid()} (it belongs to root)"
    return None


def docker_service_skip() -> str | None:
    """Why the test dockerd (.ci/start-dockerd.sh, DOCKER_HOST) cannot be used by this user, or None: its
    socket is root's (mode 0660, group docker), so a normal user outside that group cannot connect."""
    host = os.environ.get("DOCKER_HOST", "")
    if not host or not os.environ.get("HERMES_TEST_DOCKER_IMAGE"):
        return "docker: set DOCKER_HOST and HERMES_TEST_DOCKER_IMAGE (source the env file of .ci/start-dockerd.sh)"
    sock = host.removeprefix("unix://")
    if host.startswith("unix://") and os.path.exists(sock) and not os.access(sock, os.R_OK | os.W_OK):
        return f"docker: the test dockerd's socket {sock} is not open to uid {os.geteuid()} (root's, group docker)"
    return None


def other_hermes_skip(binary: str | os.PathLike) -> str | None:
    """Why another Hermes program (the released 0.19.0, $HERMES_REF_BIN; an upstream build) cannot run here, or
    None: not installed, or its venv's interpreter is one this user cannot run (.ci installs it with root's
    Python, which may sit under /root, mode 0700: a normal user running the suite gets this reason)."""
    return venv_program_skip(binary, "set HERMES_REF_BIN / HERMES_UPSTREAM_BIN")


def venv_program_skip(binary: str | os.PathLike, install: str) -> str | None:
    """Why a program of a venv that .ci set up (the released Hermes, the a2a-sdk 0.3 client's Python) cannot run
    here, or None: not installed (`install` says how to), or the venv's interpreter is one this user cannot run
    (root's pyenv Python under /root, mode 0700, when the suite runs as a normal user: HERMES_TEST_AS)."""
    path = Path(binary)
    try:
        if not path.is_file():
            return f"{path} is not installed ({install})"
    except OSError:  # a symlink into a directory this user cannot search
        pass
    python = path.with_name("python")
    try:
        real = os.path.realpath(python)
        runnable = os.access(real, os.X_OK) and os.path.isfile(real)
    except OSError:
        runnable = False
    if not runnable:
        return f"{path} runs on {python}, which uid {os.geteuid()} cannot run (root's Python, under /root)"
    return None


def end_fake_box(root: str, commands: list[str]) -> None:
    """What deleting a cloud sandbox does, for the fakes that run its commands on this host (fake_daytona.py,
    fake_modal.py): every process the box started (HOME=its root) is killed, and its root and the state
    directories its commands named (/tmp/hermes-<id>, terminal/remote.py) are removed. Before, a backgrounded
    `sleep` and thousands of state directories outlived the runs on a long-lived machine."""
    import re
    import shutil
    import signal

    mark = f"HOME={root}".encode()
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{pid}/environ", "rb") as fh:
                if mark in fh.read().split(b"\0"):
                    os.kill(int(pid), signal.SIGKILL)
        except OSError:
            continue
    for state in set(re.findall(r"/tmp/hermes-[0-9a-f]{8,}\b", "\n".join(commands))):
        shutil.rmtree(state, ignore_errors=True)
    shutil.rmtree(root, ignore_errors=True)


def wait_for(predicate, timeout: float = 10.0, step: float = 0.05) -> bool:  # noqa: ANN001
    """Poll `predicate` until it is true (True) or `timeout` seconds pass (False): await the event, not a sleep."""
    import time

    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            return False
        time.sleep(step)
    return True


def on_pty(argv: list[str], env: dict, cwd: str, react, timeout: float = 90,  # noqa: ANN001
           size: tuple[int, int] | None = None) -> bytes:
    """Run `argv` with a new pty as its controlling terminal (/dev/tty), `size` (rows, cols) if given. After each
    read, `react(fd, shown)` may type into the terminal (os.write(fd, ...)); it returns True to stop. Returns
    everything shown; the program is killed at the end."""
    import pty
    import select
    import time

    pid, fd = pty.fork()
    if pid == 0:
        os.chdir(cwd)
        os.execve(argv[0], argv, env)
    if size is not None:
        import fcntl
        import struct
        import termios

        fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack("HHHH", size[0], size[1], 0, 0))
    shown, deadline = b"", time.monotonic() + timeout
    try:
        while time.monotonic() < deadline:
            ready, _, _ = select.select([fd], [], [], 0.5)
            if ready:
                try:
                    chunk = os.read(fd, 65536)
                except OSError:
                    break
                if not chunk:
                    break
                shown += chunk
            if react(fd, shown):
                break
    finally:
        try:
            os.kill(pid, 9)
        except ProcessLookupError:
            pass
        os.waitpid(pid, 0)
        os.close(fd)
    return shown


def home_outside_tmp(tag: str) -> Path:
    """A new HOME path (not yet made) under the running user's own home, outside /tmp where the red team found
    the escapes; the test is skipped where that home is not writable or lies under a temp dir."""
    import uuid

    import pytest

    base = Path(os.path.expanduser("~"))
    if not os.access(base, os.W_OK) or str(base).startswith(("/tmp/", "/var/tmp/", "/dev/shm/")):
        pytest.skip("cannot create a home outside /tmp")
    return base / f".hermes-test-{tag}-{uuid.uuid4().hex[:8]}"
