"""Canonical forms of the commands the pattern table knows: rm flags split and sorted, kill signals
named, git/docker global options stripped, and the payloads commands run (sh -c, eval, su -c, ssh,
find -exec, interpreter code, programs passed as options). Pure string work."""

from __future__ import annotations

from hermes_agent.approval.rules import gitdiscard, runners, sources
from hermes_agent.approval.rules.containers import container_run
from hermes_agent.approval.rules.gitpush import REMOTE_OVERRIDE, redirects_remote
from hermes_agent.approval.rules.lazyre import lazy
from hermes_agent.approval.rules.subcommands import (
    SQL_CLIENTS,
    container_exec,
    expand_long_options,
    git_config,
    git_setting,
    sql_client,
)
from hermes_agent.approval.rules.targets import norm_path, protected_dir
from hermes_agent.approval.rules.unwrapped import SHELLS, Unwrapped

_INTERP = lazy(r"(python[\d.]*|pypy[\d.]*|perl[\d.]*|ruby[\d.]*|node|nodejs|bun|deno|php[\d.]*|lua[\d.]*|luajit|rscript|osascript)\Z")
AWKS = frozenset({"awk", "gawk", "mawk", "nawk", "busybox-awk"})
_GIT_GLOBAL_ARG = frozenset({"-C", "-c", "--git-dir", "--work-tree", "--namespace", "--exec-path", "--config-env"})
_DOCKER_GLOBAL_ARG = frozenset({"-H", "--host", "--context", "-c", "--config", "-l", "--log-level", "--tlscacert",
                                "--tlscert", "--tlskey", "--url", "--connection"})
_COMPOSE_GLOBAL_ARG = frozenset({"-f", "--file", "-p", "--project-name", "--profile", "--env-file", "--project-directory",
                                 "--ansi", "--parallel", "--progress"})
_VALUE_FLAGS = {"perl": "MmIxCdD", "ruby": "rIECKTxF", "python": "WXQ", "pypy": "WXQ", "node": "r", "nodejs": "r", "php": "dcfz"}
_DOLLAR0 = lazy(r"\$\{?0\}?(?!\w)")
_SIGNALS = {"9": "KILL", "1": "HUP", "15": "TERM", "2": "INT", "3": "QUIT", "19": "STOP", "6": "ABRT"}


def basename(word: str) -> str:
    return word.rsplit("/", 1)[-1] if "/" in word[:-1] else word


def canonicalise(u: Unwrapped) -> None:
    """Rewrite `u` into its canonical form and collect the payloads it runs."""
    name = u.name
    sources.source_flags(u)
    if runners.dispatch(u):
        pass
    elif name in SHELLS:
        _shell(u)
    elif name == "eval":
        u.payloads.append((" ".join(u.args), u.words[0] if len(u.words) == 1 else None))
    elif name == "trap" and len(u.args) >= 2 and u.args[0] != "-":
        u.payloads.append((u.args[0], u.words[0]))
    elif name in ("source", ".") and u.args[:1] in (["/dev/stdin"], ["-"], ["/proc/self/fd/0"], ["/dev/fd/0"]):
        u.stdin_code = True
    elif name == "crontab":
        u.stdin_code = u.args in ([], ["-"])
    elif name in ("su", "runuser", "sg", "script"):
        _command_option(u)
    elif name == "ssh":
        _ssh(u)
    elif name in ("watch", "flock"):
        _watch_flock(u)
    elif name == "find":
        _find(u)
    elif name in ("fd", "fdfind"):
        _fd(u)
    elif name == "git":
        u.args = _strip_globals(u.args, _GIT_GLOBAL_ARG, u)
        _exec_options(u, _GIT_EXEC_OPTIONS)
        if u.args[:1] == ["config"]:
            git_config(u)
        elif u.args:
            u.args = [u.args[0], *expand_long_options("git " + u.args[0], u.args[1:])]
            runners.git_history(u)
            if gitdiscard.discarded(u):
                u.findings.append(gitdiscard.DISCARD)
    elif name == "rimraf":
        u.name, u.args = "rm", ["-r", "-f", *u.args]
    elif name in ("docker", "podman", "nerdctl", "docker-compose", "podman-compose"):
        _docker(u)
        container_exec(u)
        container_run(u)
    elif name in ("kubectl", "oc"):
        container_exec(u)
    elif name == "rm":
        _rm(u)
    elif name in SQL_CLIENTS:
        sql_client(u)
    elif name in ("chmod", "chown", "chgrp", "shred", "rsync"):
        u.args = expand_long_options("chown" if name == "chgrp" else name, u.args)
        if name in _EXEC_OPTIONS:
            _exec_options(u, _EXEC_OPTIONS[name])
    elif name == "kill":
        _kill(u)
    elif name in AWKS:
        u.code = ("awk", next((a for a in u.args if not a.startswith("-")), ""))
    elif name in ("sed", "gsed"):
        u.inplace = any(a.startswith("--in-place") or (a.startswith("-") and not a.startswith("--") and "i" in a)
                        for a in u.args)
    elif _INTERP.match(name):
        _interpreter(u)
        _python_module(u)
    elif name in _EXEC_OPTIONS:
        _exec_options(u, _EXEC_OPTIONS[name])
    u.args = [norm_path(a) if a[:1] in ("/", "~", "$") else a for a in u.args]


# options whose value is a program the command runs; True = running it is itself worth a prompt
_EXEC_OPTIONS: dict[str, dict[str, bool]] = {
    "sort": {"--compress-program": False},
    "tar": {"--to-command": True, "--use-compress-program": False, "-I": False, "--rsh-command": False,
            "--info-script": True, "-F": True, "--new-volume-script": True, "--checkpoint-action": True},
    "rsync": {"-e": False, "--rsh": False},
    "zip": {"-TT": True, "--unzip-command": True},
    "man": {"-P": False, "--pager": False, "-H": False, "--html": False},
    "vim": {"-c": False, "+": False}, "vi": {"-c": False, "+": False}, "nvim": {"-c": False, "+": False},
    "ex": {"-c": False, "+": False},
    "less": {"+": False}, "more": {"+": False}, "gdb": {"-ex": False, "--ex": False, "-eval-command": False, "--eval-command": False},
}
_SHELL_ESCAPE = {"vim": ("!",), "vi": ("!",), "nvim": ("!",), "ex": ("!",), "less": ("!",), "more": ("!",), "gdb": ("!", "shell ")}
_RUNS_STDIN = lazy(r"\b(?:exec|eval|compile)(?:\s*\(\s*|\s+)(?:sys\s*\.\s*stdin\s*\.\s*read|input\s*\(|open\s*\(\s*['\"]/dev/stdin|"
                   r"\$stdin\s*\.\s*read|STDIN\s*\.\s*read|<STDIN>|require\s*\(\s*['\"]fs['\"]\s*\)\s*\.\s*readFileSync\s*\(\s*(?:0|['\"]/dev/stdin))"
                   r"|\beval\s*(?:\(\s*)?(?:join\s*\(\s*['\"]{2}\s*,\s*)?<STDIN>")
_STDIN_FILES = ("-", "/dev/stdin", "/dev/fd/0", "/proc/self/fd/0")  # a program file that is the standard input
_GIT_EXEC_OPTIONS = {"--upload-pack": True, "--receive-pack": True, "--exec": True}
_RUNNERS = lazy(r"(?:.*/)?(?:sh|bash|zsh|dash|ksh|fish|python[\d.]*|perl|ruby|node|php|eval|exec)\b|.*[;&|`$]")


def _exec_options(u: Unwrapped, options: dict[str, bool]) -> None:
    args = u.args
    for i, a in enumerate(args):
        key, value = a, None
        if a.startswith("--") and "=" in a:
            key, value = a.split("=", 1)
        elif a.startswith("+") and "+" in options:
            key, value = "+", a[1:]
        elif a[:2] in options and len(a) > 2 and not a.startswith("--"):
            key, value = a[:2], a[2:]
        if key not in options and key.startswith("--") and len(key) > 3:  # GNU getopt takes any unambiguous prefix
            longer = [o for o in options if o.startswith(key)]
            key = longer[0] if len(longer) == 1 else key
        if key not in options:
            continue
        if value is None:
            value = args[i + 1] if i + 1 < len(args) else ""
        always = options[key]
        if key == "--checkpoint-action":
            always, value = value.startswith("exec="), value.removeprefix("exec=")
        if u.name in _SHELL_ESCAPE:
            bare = value.lstrip(":")
            prefix = next((p for p in _SHELL_ESCAPE[u.name] if bare.startswith(p)), None)
            if prefix is None:
                continue
            value, always = bare[len(prefix):], True
        u.payloads.append((value, None))
        if always or _RUNNERS.match(value):
            u.findings.append(("exec_via_option", f"{u.name} {key} runs a program ({value})", False))


def _shell(u: Unwrapped) -> None:
    has_c, flags, i = False, "", 0
    while i < len(u.args):
        a = u.args[i]
        if a in ("-o", "+o", "-O", "+O", "--rcfile", "--init-file", "-C"):
            i += 2
            continue
        if a == "--command" or a.startswith("--command="):
            has_c = True
            if "=" in a:
                u.payloads.append((a.split("=", 1)[1], u.words[i]))
                return
            i += 1
            break
        if a == "--" or a == "-" or not a.startswith(("-", "+")):
            break
        flags += a[1:]
        has_c = has_c or ("c" in a[1:] and not a.startswith("--"))
        i += 1
    operands = u.args[i:]
    if has_c and operands and "xargs" in u.chain:  # xargs sh -c SCRIPT [_]: the input lines are $0/$1/"$@"
        script = _DOLLAR0.sub("'*'", operands[0]) if len(operands) == 1 else operands[0]
        u.payloads.append(("set -- '*' '*'\n" + script, u.words[i]))
        return
    if has_c:
        if len(operands) > 1:  # sh -c SCRIPT $0 $1...: the script sees them as "$0", "$1"...
            quoted = ["'" + a.replace("'", "'\\''") + "'" for a in operands[1:]]
            script = _DOLLAR0.sub(lambda _: quoted[0], operands[0])
            u.payloads.append(("set -- " + " ".join(quoted[1:]) + "\n" + script, u.words[i]))
        elif operands:
            u.payloads.append((operands[0], u.words[i]))
        return
    u.stdin_code = not operands or operands[0] in ("--", *_STDIN_FILES) or "s" in flags


def _command_option(u: Unwrapped) -> None:
    for i, a in enumerate(u.args):
        if a in ("-c", "--command", "--session-command") or (a.startswith("-") and not a.startswith("--") and a.endswith("c")):
            if i + 1 < len(u.args):
                u.payloads.append((u.args[i + 1], u.words[i + 1]))
            u.name = u.name + "-c"
            return
        if a.startswith(("--command=", "--session-command=")):
            u.payloads.append((a.split("=", 1)[1], u.words[i]))
            u.name = u.name + "-c"
            return
    if u.name == "runuser" and "--" in u.args:
        rest = u.args[u.args.index("--") + 1:]
        if rest:
            u.commands.append((rest, "runuser"))


def _ssh(u: Unwrapped) -> None:
    i = 0
    while i < len(u.args):
        a = u.args[i]
        option = a[2:] if a.startswith("-o") and len(a) > 2 else (u.args[i + 1] if a == "-o" and i + 1 < len(u.args) else "")
        if option.lower().startswith(("proxycommand", "localcommand", "permitlocalcommand=yes")):
            u.payloads.append((option.split("=", 1)[-1].split(" ", 1)[-1] if "=" in option else option, None))
            u.findings.append(("exec_via_option", "ssh -o ProxyCommand/LocalCommand runs a program", False))
        if a.startswith("-") and len(a) > 1:
            i += 2 if (len(a) == 2 and a[1] in "bcDEeFIiJLlmOopQRSWwB") else 1
            continue
        rest = u.args[i + 1:]
        if rest:
            u.payloads.append((" ".join(rest), u.words[i + 1] if len(rest) == 1 else None))
        return


def _watch_flock(u: Unwrapped) -> None:
    args, i = u.args, 0
    takes = "nd" if u.name == "watch" else "wE"
    positional = 0 if u.name == "watch" else 1
    while i < len(args):
        a = args[i]
        if u.name == "flock" and a in ("-c", "--command"):
            if i + 1 < len(args):
                u.payloads.append((args[i + 1], u.words[i + 1]))
            return
        if a.startswith("-") and len(a) > 1:
            i += 2 if (len(a) == 2 and a[1] in takes) else 1
            continue
        if positional:
            positional -= 1
            i += 1
            continue
        break
    rest = args[i:]
    if rest:
        u.payloads.append((" ".join(rest), u.words[i] if len(rest) == 1 else None))


def _find(u: Unwrapped) -> None:
    """find -exec CMD {}: CMD runs on START/NAME (the -name pattern, else every file under START)."""
    args, i = u.args, 0
    start = next((a for a in args if not a.startswith(("-", "(", "!"))), ".")
    names = [args[k + 1] for k, a in enumerate(args[:-1]) if a in ("-name", "-iname")]
    found = start.rstrip("/") + "/" + (names[0] if len(names) == 1 else "*")
    while i < len(args):
        if args[i] in ("-exec", "-execdir", "-ok", "-okdir"):
            j = i + 1
            while j < len(args) and args[j] not in (";", "+"):
                j += 1
            if j > i + 1:
                u.commands.append(([a.replace("{}", found) for a in args[i + 1:j]], "find"))
            i = j
        i += 1


def _fd(u: Unwrapped) -> None:
    """fd PATTERN -x/-X CMD: CMD runs on every match (like find -exec)."""
    for i, a in enumerate(u.args):
        if a in ("-x", "--exec", "-X", "--exec-batch") and i + 1 < len(u.args):
            rest = [w for w in u.args[i + 1:] if w != ";"]
            u.commands.append(([w.replace("{}", "./*") for w in rest], "find"))
            return


def _strip_globals(args: list, with_arg: frozenset, u: Unwrapped) -> list:
    i = 0
    while i < len(args) and args[i].startswith("-"):
        key = args[i].split("=", 1)[0]
        if key == "-c" and i + 1 < len(args):
            _git_config(args[i + 1], u)
        elif key == "-C" and i + 1 < len(args) and u.name == "git":
            u.workdir = norm_path(args[i + 1])
        i += 2 if (key in with_arg and "=" not in args[i]) else 1
    return args[i:]


def _git_config(setting: str, u: Unwrapped) -> None:
    key, _, value = setting.partition("=")
    if redirects_remote(key):
        u.findings.append(REMOTE_OVERRIDE)
    git_setting(key, value, u)


def _docker(u: Unwrapped) -> None:
    args = list(u.args)
    if u.name.endswith("-compose"):
        args = ["compose", *args]
    u.name = "docker"
    args = _strip_globals(args, _DOCKER_GLOBAL_ARG, u)
    if args[:1] == ["compose"]:
        args = ["compose", *_strip_globals(args[1:], _COMPOSE_GLOBAL_ARG, u)]
    u.args = args


_MASS_GLOB = lazy(r"(?:\A|/)[.*?\[\]!^]*\*[.*?\[\]!^]*\Z")


def _rm(u: Unwrapped) -> None:
    flags, operands, ended = [], [], False
    for a in expand_long_options("rm", u.args):
        if ended or not a.startswith("-") or a == "-":
            operands.append(a)
        elif a == "--":
            ended = True
        elif a.startswith("--"):
            flags.append(a)
        else:
            flags.extend("-r" if ch == "R" else f"-{ch}" for ch in a[1:])
    flags = ["-r" if f == "--recursive" else "-f" if f == "--force" else f for f in flags]
    u.args = [*dict.fromkeys(flags), *(["--"] if any(o.startswith("-") for o in operands) else []), *operands]
    u.mass_glob = any(_MASS_GLOB.search(a) or a.startswith(("$(", "`")) for a in operands)  # rm $(find ...): many files


def _kill(u: Unwrapped) -> None:
    sig, ops, i, args = "TERM", [], 0, u.args
    while i < len(args):
        a = args[i]
        if a in ("-s", "-n") and i + 1 < len(args):
            sig, i = args[i + 1], i + 2
            continue
        if a == "--":
            ops.extend(args[i + 1:])
            break
        if a.startswith("-") and not ops and i == 0 and len(a) > 1 and (len(args) > 1 or not a[1:].isdigit() or a != "-1"):
            sig = a[1:]
        else:
            ops.append(a)
        i += 1
    sig = sig.upper().removeprefix("SIG")
    u.args = ["-s", _SIGNALS.get(sig, sig), "--", *ops]


def _python_module(u: Unwrapped) -> None:
    """python -m hermes_agent ...: the same checks as the `hermes` command."""
    args = u.args
    k = next((i for i, a in enumerate(args[:-1]) if a == "-m"), None)
    if k is not None and args[k + 1].split(".")[0] in ("hermes_agent", "hermes_cli", "hermes"):
        probe = Unwrapped(name="hermes", args=args[k + 2:])
        runners.hermes(probe)
        u.findings.extend(probe.findings)
    elif k is not None and args[k + 1] == "http.server":  # a web server over the home or the root filesystem
        rest = args[k + 2:]
        folder = next((rest[j + 1] for j, a in enumerate(rest[:-1]) if a in ("-d", "--directory")), None)
        folder = folder or next((a.split("=", 1)[1] for a in rest if a.startswith("--directory=")), None)
        if folder and protected_dir(folder):
            u.findings.append(("serve_private", f"serve {folder} over HTTP (every file in it, keys included)", False))


def _interpreter(u: Unwrapped) -> None:
    lang = _INTERP.match(u.name).group(1).rstrip("0123456789.")
    args, i, code = u.args, 0, []
    code_flags = {"python": "c", "pypy": "c", "perl": "eE", "ruby": "e", "node": "ep", "nodejs": "ep", "bun": "e",
                  "php": "r", "lua": "e", "luajit": "e", "rscript": "e", "osascript": "e", "deno": ""}.get(lang, "e")
    module = False
    if lang == "deno" and args[:1] == ["eval"] and len(args) > 1:
        code.append(args[1])
    while i < len(args) and not code:
        a = args[i]
        i += 1
        if a in ("--eval", "--print") and i < len(args):
            code.append(args[i])
            break
        if a.startswith(("--eval=", "--print=")):
            code.append(a.split("=", 1)[1])
            break
        if not a.startswith("-") or a in ("-", "--"):
            break
        for k, ch in enumerate(a[1:], 1):
            if ch in code_flags:
                rest = a[k + 1:]
                code.append(rest if rest else (args[i] if i < len(args) else ""))
                i += 0 if rest else 1
                break
            if ch == "i" and lang in ("perl", "ruby"):
                u.inplace = True
                break
            if ch == "m" and lang in ("python", "pypy"):
                module = True
                break
            if ch in _VALUE_FLAGS.get(lang, ""):  # -rnet/http, -MIO::Socket, -Wignore: the rest is a value
                i += 0 if a[k + 1:] else 1
                break
    for j, a in enumerate(args[i:], i):
        if a in ("-e", "-E") and lang == "perl" and j + 1 < len(args):
            code.append(args[j + 1])
    if code:
        u.code = (lang, "\n".join(code))
        u.stdin_code = bool(_RUNS_STDIN.search(u.code[1]))  # exec(sys.stdin.read()): what is piped in is the program
    elif not module and lang != "osascript":
        operands = [a for a in args if not a.startswith("-") or a == "-"]
        u.stdin_code = not operands or operands[0] in _STDIN_FILES
