"""The gateway as a background service: a systemd user unit where systemd runs (`hermes gateway install`),
a pid file otherwise. Unit names follow Hermes's: `hermes-gateway` for ~/.hermes, `hermes-gateway-<profile>`
for ~/.hermes/profiles/<profile>, `hermes-gateway-<hash8>` for any other HERMES_HOME, so a Hermes user's unit
and ours are the same unit."""

from __future__ import annotations

import hashlib
import os
import re
import shlex
import signal
import subprocess
import sys
import time
from pathlib import Path

from hermes_agent import paths

BASE = "hermes-gateway"


def service_name() -> str:
    home = paths.hermes_home().expanduser().resolve()
    default = (Path.home() / ".hermes").resolve()
    if home == default:
        return BASE
    if home.parent == default / "profiles" and re.fullmatch(paths.PROFILE_NAME, home.name):
        return f"{BASE}-{home.name}"
    return f"{BASE}-{hashlib.sha256(str(home).encode()).hexdigest()[:8]}"


def unit_path() -> Path:
    return Path.home() / ".config" / "systemd" / "user" / f"{service_name()}.service"


def unit_text() -> str:
    """A user unit running `python -m hermes_agent gateway run` for this HERMES_HOME, restarted on failure."""
    home = paths.hermes_home().expanduser().resolve()
    path = ":".join(dict.fromkeys([str(Path(sys.executable).parent), *os.environ.get("PATH", "").split(":"),
                                   "/usr/local/bin", "/usr/bin", "/bin"]))
    return (f"[Unit]\nDescription=Hermes Agent messaging gateway ({home})\n"
            "After=network-online.target\nWants=network-online.target\nStartLimitIntervalSec=0\n\n"
            f"[Service]\nType=simple\nExecStart={shlex.join(paths.python_module('hermes_agent', 'gateway', 'run'))}\n"
            f"WorkingDirectory={home}\nEnvironment=\"HERMES_HOME={home}\"\nEnvironment=\"PATH={path}\"\n"
            "Restart=always\nRestartSec=5\nKillMode=mixed\nKillSignal=SIGTERM\nTimeoutStopSec=60\n"
            "StandardOutput=journal\nStandardError=journal\n\n[Install]\nWantedBy=default.target\n")


def _systemctl(*args: str) -> subprocess.CompletedProcess | None:
    """`systemctl --user ...`, or None when there is no reachable user systemd."""
    exe = paths.trusted_which("systemctl")
    if exe is None:
        return None
    try:
        res = subprocess.run([exe, "--user", *args], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return None
    if res.returncode != 0 and re.search(r"Failed to connect to bus|No medium found|not been booted", res.stderr):
        return None
    return res


def user_systemd() -> bool:
    """A user systemd manager answers (not just a systemctl binary in a container)."""
    res = _systemctl("is-system-running")
    return res is not None and res.stdout.strip() in ("running", "degraded", "starting", "initializing", "maintenance")


def systemd_managed() -> bool:
    """The unit is installed and a user systemd answers: start/stop/restart go through systemctl."""
    return unit_path().is_file() and user_systemd()


def install(force: bool = False) -> int:
    target = unit_path()
    text = unit_text()
    if target.is_file() and target.read_text(encoding="utf-8") == text and not force:
        print(f"Unit already installed and current: {target}")
        return 0
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = target.with_suffix(".tmp")
    tmp.write_text(text, encoding="utf-8")
    tmp.replace(target)
    print(f"Installed {target}")
    name = service_name()
    if not user_systemd() or _systemctl("daemon-reload") is None:
        print("No user systemd here (no user bus): the unit is written but not enabled.\n"
              f"Where systemd runs: systemctl --user daemon-reload && systemctl --user enable --now {name}\n"
              "Meanwhile `hermes gateway start` runs it in the background with a pid file.")
        return 0
    res = _systemctl("enable", "--now", f"{name}.service")
    if res is None or res.returncode != 0:
        print(f"systemctl --user enable --now {name} failed: {(res.stderr.strip() if res else '') or 'no user bus'}")
        return 1
    print(f"Enabled and started {name} (logs: journalctl --user -u {name} -f). "
          "To keep it running after logout: loginctl enable-linger $USER")
    return 0


def uninstall() -> int:
    target = unit_path()
    if not target.is_file():
        print(f"No unit installed at {target}.")
        return 1
    name = service_name()
    _systemctl("disable", "--now", f"{name}.service")
    target.unlink()
    _systemctl("daemon-reload")
    print(f"Removed {target}")
    return 0


def control(action: str) -> int:
    """start | stop | restart: through systemctl when the unit is managed by systemd, else the pid file."""
    if systemd_managed():
        res = _systemctl(action, f"{service_name()}.service")
        if res is None or res.returncode != 0:
            print(f"systemctl --user {action} {service_name()} failed: {res.stderr.strip() if res else 'no user bus'}")
            return 1
        print(f"Gateway {action}ed (systemd unit {service_name()}).")
        return 0
    return _pid_control(action)


def pid_file() -> Path:
    return paths.gateway_dir() / "gateway.pid"



def running_pid() -> int | None:
    try:
        pid = int(pid_file().read_text().strip())
    except (OSError, ValueError):
        return None
    return pid if paths.pid_alive(pid) else None


def _pid_control(action: str) -> int:
    """A background gateway tracked by a pid file (no systemd)."""
    pid = running_pid()
    if action in ("stop", "restart"):
        if pid is None and action == "stop":
            print("Gateway: not running.")
            return 1
        if pid is not None:
            os.kill(pid, signal.SIGTERM)
            deadline = time.time() + 30
            while paths.pid_alive(pid) and time.time() < deadline:
                time.sleep(0.1)
            print(f"Gateway stopped (pid {pid}).")
            pid = None
        if action == "stop":
            return 0
    if pid is not None:
        print(f"Gateway: already running (pid {pid}).")
        return 0
    log_path = paths.logs_dir() / "gateway.log"
    log_path.parent.mkdir(parents=True, exist_ok=True)
    with open(log_path, "ab") as log:
        offset = log.tell()
        proc = subprocess.Popen(paths.python_module("hermes_agent", "gateway", "run"), stdout=log,
                                stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, start_new_session=True)
    pid_file().parent.mkdir(parents=True, exist_ok=True)
    pid_file().write_text(str(proc.pid))
    code = _early_exit(proc)
    if code is not None:
        pid_file().unlink(missing_ok=True)
        print(f"Gateway exited at once (exit code {code}): {_last_line(log_path, offset)}\nlog: {log_path}")
        return 1
    print(f"Gateway started (pid {proc.pid}); log: {log_path}")
    return 0


def _early_exit(proc: subprocess.Popen, wait: float = 8.0) -> int | None:
    """The exit code of a gateway that stopped during start-up (no platform, bad config), or None once it
    is serving (its state file names its pid) or still alive after `wait` seconds."""
    from hermes_agent.paths import gateway_state_path

    deadline = time.time() + wait
    while time.time() < deadline:
        code = proc.poll()
        if code is not None:
            return code
        try:
            if f'"pid": {proc.pid},' in gateway_state_path().read_text(encoding="utf-8"):
                return None
        except OSError:
            pass
        time.sleep(0.1)
    return None


def _last_line(log_path: Path, offset: int) -> str:
    """The last line this start wrote to the (appended) log."""
    try:
        with open(log_path, "rb") as fh:
            fh.seek(offset)
            lines = [ln.strip() for ln in fh.read().decode("utf-8", "replace").splitlines()]
    except OSError:
        return "(no log)"
    return next((ln for ln in reversed(lines) if ln), "(nothing logged)")
