"""Peel wrappers (env, sudo, timeout, xargs, nohup, doas, busybox...) off a simple command, then
canonicalise what is left (see canonical.py)."""

from __future__ import annotations

from hermes_agent.approval.rules.canonical import Unwrapped, basename, canonicalise
from hermes_agent.approval.rules.lazyre import lazy
from hermes_agent.approval.rules.runners import DETACHED, SCHEDULED, risky_variable, systemd_run
from hermes_agent.approval.rules.unseen import UNSEEN

_ASSIGN = lazy(r"[A-Za-z_]\w*(?:\[[^\]]*\])?\+?=")
_KEYWORDS = frozenset({"!", "{", "}", "then", "do", "else", "elif", "if", "while", "until", "coproc", "in"})

# wrapper -> (short options taking a value, long options taking a value, positional operands before the command)
_WRAPPERS: dict[str, tuple[str, frozenset, int]] = {
    "sudo": ("ugCDhprtTU", frozenset({"--user", "--group", "--close-from", "--chdir", "--host", "--prompt", "--role",
                                      "--type", "--command-timeout", "--other-user"}), 0),
    "doas": ("uC", frozenset(), 0),
    "env": ("uC", frozenset({"--unset", "--chdir"}), 0),
    "nice": ("n", frozenset({"--adjustment"}), 0),
    "nohup": ("", frozenset(), 0),
    "time": ("fo", frozenset({"--format", "--output"}), 0),
    "command": ("", frozenset(), 0),
    "builtin": ("", frozenset(), 0),
    "exec": ("a", frozenset(), 0),
    "setsid": ("", frozenset(), 0),
    "stdbuf": ("ioe", frozenset({"--input", "--output", "--error"}), 0),
    "timeout": ("sk", frozenset({"--signal", "--kill-after"}), 1),
    "xargs": ("IdnPLsaE", frozenset({"--delimiter", "--max-args", "--max-procs", "--max-lines", "--max-chars", "--arg-file",
                                     "--eof", "--replace", "--process-slot-var"}), 0),
    "ionice": ("cnpt", frozenset({"--class", "--classdata", "--pid"}), 0),
    "taskset": ("", frozenset(), 1),
    "chrt": ("", frozenset(), 1),
    "chroot": ("", frozenset({"--userspec", "--groups"}), 1),
    "unbuffer": ("", frozenset(), 0),
    "caffeinate": ("wt", frozenset(), 0),
    "torsocks": ("", frozenset(), 0),
    "proxychains": ("f", frozenset(), 0),
    "proxychains4": ("f", frozenset(), 0),
    "strace": ("abeEIoOpPsSuX", frozenset(), 0),
    "ltrace": ("aeEnopsSuA", frozenset(), 0),
    "systemd-run": ("HMpEu", frozenset({"--unit", "--property", "--setenv", "--host", "--machine", "--description",
                                        "--slice", "--uid", "--gid", "--working-directory"}), 0),
    "busybox": ("", frozenset(), 0),
    "nsenter": ("tSGUmunipCr", frozenset(), 0),
    "unshare": ("", frozenset(), 0),
    "setpriv": ("", frozenset(), 0),
    "fakeroot": ("lis", frozenset(), 0),
    "catchsegv": ("", frozenset(), 0),
    "parallel": ("jSIa", frozenset({"--arg-file"}), 0),
    "pkexec": ("", frozenset({"--user"}), 0),
    "run0": ("uDg", frozenset({"--user", "--chdir", "--group", "--setenv", "--property", "--unit", "--description", "--slice"}), 0),
    "npx": ("p", frozenset({"--package"}), 0),
    "pnpx": ("", frozenset(), 0),
    "bunx": ("", frozenset(), 0),
}
_SUDO_PRIV = frozenset("SAsil")
_SUDO_PRIV_LONG = frozenset({"--stdin", "--askpass", "--shell", "--login", "--list"})


# environment variables whose value is a program something will run
_PROGRAM_VARS = frozenset({"GIT_SSH_COMMAND", "GIT_SSH", "GIT_PAGER", "GIT_EDITOR", "PAGER", "EDITOR", "VISUAL", "LESSOPEN",
                           "LESSCLOSE", "BROWSER", "SSH_ASKPASS", "SUDO_ASKPASS", "PROMPT_COMMAND", "BASH_ENV", "ENV",
                           "GIT_EXTERNAL_DIFF", "GIT_ASKPASS", "MANPAGER", "SYSTEMD_PAGER"})


def program_variable(name: str, value: str, u: Unwrapped) -> bool:
    """A variable that makes programs load a library (LD_PRELOAD: a finding) or run a program (PAGER, BASH_ENV,
    PROMPT_COMMAND...: its value scanned as a payload), set for one command or exported; False for others."""
    if name in ("LD_PRELOAD", "LD_AUDIT", "DYLD_INSERT_LIBRARIES"):
        u.findings.append(("ld_preload", f"inject a library into programs ({name})", False))
    elif name in _PROGRAM_VARS:
        u.payloads.extend([(value.lstrip("|"), None)] if value else [])
    else:
        return False
    return True


def _assignment(word: str, u: Unwrapped) -> None:
    """NAME=value before a command: programs hidden in such variables are scanned too."""
    name, _, value = word.partition("=")
    name = name.rstrip("+")
    risky = risky_variable(name, value)
    if risky:
        u.findings.append(risky)
    if not program_variable(name, value, u):  # else the exported-variable table (state._HOOKS), judged by value
        from hermes_agent.approval.rules import state  # LD_LIBRARY_PATH=./lib, PYTEST_PLUGINS=x

        u.payloads.extend((line, None) for line in state.assigned_lines(name, value, u.workdir or ""))
        if state.GIT_VARS.match(name):  # GIT_CONFIG_COUNT/KEY_n/VALUE_n, GIT_CONFIG_PARAMETERS: settings of that git
            done = set(state.git_assigned_lines(u.git_env, u.workdir or ""))
            u.git_env[name] = value
            u.payloads.extend((line, None) for line in state.git_assigned_lines(u.git_env, u.workdir or "")
                              if line not in done)


def _skip_options(args: list, i: int, argletters: str, longs: frozenset, u: Unwrapped, name: str) -> int:
    """Index of the first operand after the options of wrapper `name` (records sudo/env specials)."""
    while i < len(args):
        a = args[i]
        if a == "--":
            return i + 1
        if name == "env" and _ASSIGN.match(a):
            _assignment(a, u)
            i += 1
            continue
        if a.startswith("--"):
            key = a.split("=", 1)[0]
            if name == "env" and key == "--split-string":
                return _env_split(args, i, a.partition("=")[2] if "=" in a else None, u)
            if name == "sudo" and key in _SUDO_PRIV_LONG:
                u.findings.append(("sudo_priv", f"sudo with privilege flag {key}", False))
            i += 2 if (key in longs and "=" not in a) else 1
            continue
        if not a.startswith("-") or a == "-":
            return i
        i += 1
        for k, ch in enumerate(a[1:], 1):
            if name == "env" and ch == "S":
                return _env_split(args, i - 1, a[k + 1:] or None, u)
            if name == "sudo" and ch in _SUDO_PRIV:
                u.findings.append(("sudo_priv", f"sudo with privilege flag -{ch}", False))
            if name in ("command", "type") and ch in "vV":
                u.name = "command-lookup"
                return len(args)
            if ch in argletters:
                if k == len(a) - 1:
                    i += 1
                break
    return i


_ESCAPE = ("namespace_escape", "enter another process's namespaces or another root filesystem (nsenter -t, chroot into a disk "
           "or /proc/N/root): out of the sandbox or container", False)


def _namespace_escape(name: str, argv: list, u: Unwrapped) -> None:
    """nsenter into a target process (PID 1 is the host), chroot into an absolute root outside the workspace."""
    if name == "nsenter":
        if any(a in ("-t", "--target", "-a", "--all") or a.startswith(("--target=", "-t")) for a in argv):
            u.findings.append(_ESCAPE)
    elif argv and argv[-1].startswith("/") and not argv[-1].startswith("/tmp/"):
        u.findings.append(_ESCAPE)


def _env_split(args: list, i: int, attached: str | None, u: Unwrapped) -> int:
    """env -S STRING: STRING is split into words like a shell would; scan it as shell text."""
    rest = args[i + 1:] if attached is not None else args[i + 2:]
    text = attached if attached is not None else (args[i + 1] if i + 1 < len(args) else "")
    u.payloads.append((" ".join([text, *rest]), None))
    u.name = "env"
    return len(args)


def _xargs_replace(args: list, i: int, start: int) -> list:
    """xargs -I R / --replace=R / -i: R in the command stands for each input line (any of many files: `*`)."""
    token = None
    for k in range(start + 1, i):
        a = args[k]
        if a == "-I" and k + 1 < i:
            token = args[k + 1]
        elif a.startswith("-I") and len(a) > 2:
            token = a[2:]
        elif a.startswith("--replace"):
            token = a.partition("=")[2] or "{}"
        elif a == "-i" or a.startswith("-i") and not a.startswith("--"):
            token = a[2:] or "{}"
    if not token:
        return args
    return [*args[:i], *(a.replace(token, "*") for a in args[i:])]


def unwrap(args: list, words: list) -> Unwrapped:
    """Canonicalise one simple command given its resolved words (and the Word objects behind them)."""
    u = Unwrapped()
    i = 0
    while True:
        while i < len(args) and (args[i] in _KEYWORDS or _ASSIGN.match(args[i])):
            _assignment(args[i], u)
            i += 1
        if i >= len(args):
            return u
        raw = args[i]
        start = i
        name = basename(raw).lower()
        u.views.append(" ".join([name, *args[i + 1:]]))
        spec = _WRAPPERS.get(name)
        if spec is None or (name == "busybox" and i + 1 >= len(args)):
            break
        u.chain.append("xargs" if name == "parallel" else name)
        if name == "systemd-run" and systemd_run(args[i + 1:]):
            u.findings.append(SCHEDULED)
        if name == "setsid":  # a new session: out of the call's process group and terminal
            u.findings.append(DETACHED)
        i = _skip_options(args, i + 1, spec[0], spec[1], u, name)
        if name in ("nsenter", "chroot"):
            _namespace_escape(name, args[start + 1:i + 1], u)
        if u.name:  # env -S or command -v: nothing further to unwrap
            return u
        if i >= len(args) and name == "parallel" and not {"--version", "--help", "-h"} & set(args[start:]):  # `cat steps | parallel`: each input line is a command
            u.findings.append(UNSEEN)
        if i >= len(args):  # the wrapper alone: `env` prints the environment, `sudo -s` opens a shell
            if name in ("env", "printenv", "sudo", "doas", "pkexec"):
                u.raw_name, u.name, u.args = raw, name, list(args[args.index(raw) + 1:])
            return u
        i += min(spec[2], max(0, len(args) - i - 1))
        if name == "xargs" and i >= len(args):
            args, words, i = [*args, "echo"], [*words, None], i
        if name == "xargs":
            args = _xargs_replace(args, i, start)
    if u.chain and u.chain[-1] in ("npx", "pnpx", "bunx") and ("://" in raw or raw.endswith((".tgz", ".tar.gz")) or raw.startswith(("git+", "github:"))):
        u.findings.append(("remote_exec", "run a package fetched from a URL or git (npx URL)", False))
    u.raw_name, u.name = raw, ("mkfs" if name.startswith("mkfs.") else name)
    u.args, u.words = list(args[i + 1:]), list(words[i + 1:])
    if raw.startswith("/etc/init.d/") and u.args:
        u.name, u.args, u.words = "service", [name, *u.args], [None, *u.words]
    canonicalise(u)
    return u
