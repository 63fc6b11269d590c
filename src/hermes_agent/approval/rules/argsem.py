"""Argument semantics for commands whose danger depends on what they are pointed at: mkfs of an image
file in the workspace (not a device), shred of a workspace file, pkill of one named program (not every
interpreter), and the version/help forms of hardline commands. Pure string work."""

from __future__ import annotations

import re

from hermes_agent.approval.rules.lazyre import lazy
from hermes_agent.approval.rules.unwrapped import Unwrapped

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
_JOB = lazy(r"%(?:\d+|[%+-])?")
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
    if not operands:  # -V / --help, or the image is taken for an option's value (mkfs.btrfs -f IMG: -f is valued for mke2fs)
        return any(a in ("-V", "--version", "--help", "-h") for a in args) or (
            not any("/dev/" in a or a.startswith("dev/") for a in args) and any(_local_file(resolve(a)) and "." in a for a in args))
    # the device is any operand that is not a number (mke2fs DEVICE [BLOCKS]; mkfs.vfat -F 32 DEVICE: a valued
    # option the table above cannot know for every mkfs.* leaves its value among the operands)
    targets = [resolve(o) for o in operands if not o.isdigit()]
    if not targets:  # the file is an option's value (mkfs.fat -C FILE BLOCKS): no device may be named anywhere
        return not any("/dev/" in a or a.startswith("dev/") for a in args)
    return all(_local_file(t) and not t.startswith("dev/") for t in targets)


def image_file(u: Unwrapped, resolve) -> bool:
    """mkswap/wipefs/fdisk/sgdisk/parted... of a regular image file in the workspace (the first operand), not a device."""
    first = next((a for a in u.args if not a.startswith("-")), None)
    return first is not None and _local_file(resolve(first)) and not resolve(first).startswith("dev/")


def pgrep_specific(u: Unwrapped) -> bool:
    """kill $(pgrep -f 'one full command line'): the same judgement as pkill -f of that line (an unquoted
    substitution reaches us split into words: they are joined back)."""
    import shlex  # only here: a kill of a pgrep substitution is rare

    text = " ".join(u.args)  # canonical kill: `-s SIGNAL -- PIDS`
    for signal in ("TERM", "INT", "HUP", "15", "2", "1"):
        text = text.removeprefix(f"-s {signal} -- ")
    if not text.startswith("$(pgrep ") or not text.endswith(")"):
        return False
    try:
        words = shlex.split(text[text.index("$(pgrep ") + 8:-1])
    except ValueError:
        return False
    return pkill_specific(Unwrapped(name="pkill", args=words))


def own_jobs(u: Unwrapped) -> bool:
    """kill of the text's own background jobs only: job specs (%1, %%, %+) and `$!` (the last background pid,
    also through a variable set from it: `PID=$!; kill -9 $PID`)."""
    if u.name != "kill":
        return False
    pids = u.args[u.args.index("--") + 1:] if "--" in u.args else [a for a in u.args if not a.startswith("-")]
    return bool(pids) and all(p == "$!" or _JOB.fullmatch(p) for p in pids)


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


def started_here(u: Unwrapped, env) -> bool:  # noqa: ANN001 - ShellEnv (expand.py imports nothing from here)
    """pkill -f PATTERN where an earlier command of the same text started in the background what PATTERN names
    (`python -m http.server & ...; pkill -f http.server`): the session stops its own server."""
    if env is None or u.name != "pkill" or not any(a in ("-f", "--full") for a in u.args):
        return False
    pattern = [a for a in u.args if not a.startswith("-")]
    if len(pattern) != 1 or any(_SIG_KILL.match(a) or a in _KILL_SCOPE for a in u.args):
        return False
    return len(pattern[0]) >= 3 and any(pattern[0] in line for line in env.started)


def user_unit(u: Unwrapped) -> bool:
    """systemctl --user stop/restart/reload of the user's own unit (not disable/mask: those change what starts)."""
    if u.name != "systemctl" or "--user" not in u.args:
        return False
    verbs = [a for a in u.args if not a.startswith("-")]
    return bool(verbs) and verbs[0] in ("stop", "restart", "try-restart", "reload-or-restart", "reload", "kill")


def help_only(u: Unwrapped) -> bool:
    """Only --help / --version / --usage (long forms: `shutdown -h` halts): prints and exits."""
    return bool(u.args) and all(a in ("--help", "--version", "--usage") for a in u.args)
