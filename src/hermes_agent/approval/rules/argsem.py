"""Argument semantics for commands whose danger depends on what they are pointed at: mkfs of an image
file in the workspace (not a device), shred of a workspace file, pkill of one named program (not every
interpreter), and the version/help forms of hardline commands. Pure string work."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from hermes_agent.approval.rules.lazyre import lazy

if TYPE_CHECKING:
    from hermes_agent.approval.rules.canonical import Unwrapped

_MKFS_VALUED = frozenset("bcCdEgGiIjJlLmnNoOrsStTUFRvzMPABfhDV") - frozenset("FqvVcn")
# kill by name: programs so common that a pattern naming only them hits processes the session did not start
_BROAD = frozenset({
    "node", "nodejs", "python", "python3", "python2", "java", "ruby", "perl", "php", "bash", "sh", "zsh", "dash", "fish",
    "ssh", "sshd", "systemd", "init", "xorg", "x", "gnome-shell", "kwin", "plasmashell", "dbus-daemon", "dockerd",
    "containerd", "docker", "kubelet", "postgres", "postgresql", "mysqld", "mysql", "redis-server", "nginx", "apache2",
    "httpd", "cron", "crond", "sudo", "login", "agetty", "getty", "hermes", "code", "chrome", "firefox", "tmux", "screen",
    "pulseaudio", "pipewire", "networkmanager", "wpa_supplicant", "dhclient", "journald", "systemd-journald", "rsyslogd",
})
_KILL_SCOPE = frozenset({"-u", "-U", "-g", "-G", "-s", "-t", "-P", "--euid", "--uid", "--pgroup", "--group", "--session",
                         "--terminal", "--parent", "-v", "--inverse", "-x", "--exact", "-o", "-n", "--oldest", "--newest"})
_SIG_KILL = lazy(r"\A-(?:9|KILL|SIGKILL|s(?:9|KILL|SIGKILL)?)\Z|\A--signal(?:=(?:9|KILL|SIGKILL))?\Z", re.I)


def _local_file(arg: str) -> bool:
    """A plain relative path inside the workspace (no parent escape, device, variable or glob)."""
    return (bool(arg) and not arg.startswith(("/", "~", "$", "-")) and ".." not in arg.split("/")
            and not any(ch in arg for ch in "*?[$`"))


def mkfs_on_file(u: Unwrapped, resolve) -> bool:
    """mkfs.* -V / --help (prints the version), or mkfs of a regular image file in the workspace."""
    operands, i, args = [], 0, u.args
    while i < len(args):
        a = args[i]
        if a.startswith("-") and len(a) == 2 and a[1] in _MKFS_VALUED:
            i += 2
            continue
        if not a.startswith("-"):
            operands.append(a)
        i += 1
    if not operands:
        return any(a in ("-V", "--version", "--help", "-h") for a in args)
    target = resolve(operands[0]) if operands[0][:1] not in ("-",) else operands[0]
    return _local_file(target) and not target.startswith("dev/")


def shred_local(u: Unwrapped, resolve) -> bool:
    """shred of named workspace files (not devices, globs, paths outside the workspace, nor find/xargs input)."""
    if "find" in u.chain or "xargs" in u.chain:
        return False
    skip, operands = False, []
    for a in u.args:
        if skip:
            skip = False
        elif a in ("-n", "-s", "--iterations", "--size", "--random-source"):
            skip = True
        elif not a.startswith("-"):
            operands.append(a)
    return bool(operands) and len(operands) <= 4 and all(_local_file(resolve(a)) for a in operands)


def pkill_specific(u: Unwrapped) -> bool:
    """pkill -f of one full command line or script name with the default signal: what a session does to the server
    it started (`pkill -f "python -m http.server 8000"`); a bare program name (`pkill -f gunicorn`) may hit the
    user's own processes and still asks."""
    if u.name not in ("pkill", "killall"):
        return False
    pattern, full = [], False
    for a in u.args:
        if a in _KILL_SCOPE or a.split("=", 1)[0] in _KILL_SCOPE or _SIG_KILL.match(a):
            return False
        if a in ("-f", "--full"):
            full = True
        elif a.startswith("-") and not a.startswith("--") and len(a) > 1 and set(a[1:]) <= set("fe"):
            full = full or "f" in a
        elif a.startswith("-"):
            return False  # another signal or an option we do not model
        else:
            pattern.append(a)
    if len(pattern) != 1:
        return False
    p = pattern[0]
    words = p.replace("\\", "").split()
    if not words or any(ch in p for ch in "^$|*") or len(p.strip(".*")) < 3:
        return False
    head = words[0].rsplit("/", 1)[-1].lower()
    if len(words) == 1:  # one word: specific only when it names a script or module (app.py, http.server, src/main.ts)
        return full and head not in _BROAD and any(ch in p for ch in "./:")
    return full and not all(w.rsplit("/", 1)[-1].lower() in _BROAD or w.startswith("-") for w in words)


def help_only(u: Unwrapped) -> bool:
    """Only --help / --version / --usage (long forms: `shutdown -h` halts): prints and exits."""
    return bool(u.args) and all(a in ("--help", "--version", "--usage") for a in u.args)
