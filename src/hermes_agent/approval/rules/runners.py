"""Commands that run other commands later or elsewhere, and settings that decide what runs: terminal
multiplexers (tmux, screen), expect scripts, at/batch/systemd-run scheduling, package-manager scripts
and settings (npm pkg set, npm/yarn/pnpm/pip config), make variables, Hermes's own safety overrides,
account tools (uid 0, non-unique ids) and git history rewriting. Each adds the payload it will run
(scanned like any shell text) and, where the act itself needs a prompt, a finding. Pure string work."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from hermes_agent.approval.rules.lazyre import lazy
from hermes_agent.approval.rules.sources import PACKAGE_SOURCE, foreign, variable
from hermes_agent.approval.rules.unwrapped import SHELLS

if TYPE_CHECKING:
    from hermes_agent.approval.rules.unwrapped import Unwrapped

_TMUX_CMDS = {"new-session": "new", "new": "new", "new-window": "new", "neww": "new", "split-window": "new",
              "splitw": "new", "respawn-pane": "new", "respawnp": "new", "respawn-window": "new", "respawnw": "new",
              "run-shell": "run", "run": "run", "send-keys": "send", "send": "send", "if-shell": "if", "if": "if",
              "display-popup": "popup", "popup": "popup", "pipe-pane": "new", "pipep": "new"}
_TMUX_VALUED = {"new": "cefFnstxylNpT", "popup": "bcdehwxysST", "run": "dct", "send": "Nt", "if": "t"}
_KEYS = {"enter": "\n", "c-m": "\n", "kpenter": "\n", "c-j": "\n", "space": " ", "tab": "\t"}
_SCREEN_WORDS = frozenset({"-ls", "-list", "-wipe", "-fn", "-fa", "-ln", "-Logfile"})
_EXPECT_STMT = lazy(r"[;\n]")
_EXPECT_STR = lazy(r"\"((?:[^\"\\]|\\.)*)\"|\{([^{}]*)\}|(\S+)")
DETACHED = ("detached_runner", "start a command that keeps running outside this call (a detached or another tmux/screen "
            "session, setsid, expect, a daemon tool): what it does later is not shown here", False)
SCHEDULED = ("scheduled_exec", "schedule a command to run later, outside this session (at, batch, systemd-run timers)", False)
# npm lifecycle and settings
_PM = frozenset({"npm", "pnpm", "yarn", "bun", "cnpm"})
_SCRIPT_SHELL = lazy(r"(?:^|:|\.)(?:script-shell|shell|node-options|onload-script|git)\Z", re.I)
_REGISTRY = lazy(r"(?:^|[:.@/-])(?:registry|index-url|extra-index-url|find-links|trusted-host|index)\Z", re.I)
_TLS_OFF_KEY = lazy(r"(?:^|[:.])(?:strict-ssl|sslverify|ssl-verify|cert|cafile|enablestrictsslverification)\Z", re.I)
TLS_OFF = ("tls_verify_off", "turn off TLS certificate verification", False)
# Hermes's own safety settings (approvals, sandbox, security, allowlist, passthrough of secrets)
SAFETY_KEY = lazy(r"(?:approvals|sandbox|security|command_allowlist|yolo)(?:\.|=|\Z)|terminal\.(?:env_passthrough|sandbox)"
                        r"|mcp_servers\.[^.=]+\.(?:approval|sandbox)|browser\.allow_private_urls|code_execution\.mode", re.I)
HERMES_SAFETY = ("hermes_config_change", "change Hermes approval, sandbox or security settings", False)
_UID0 = ("uid0_account", "create or change an account with uid 0 or a duplicate (non-unique) id", False)
_HISTORY_REWRITE = ("git_history_rewrite", "rewrite or drop git history (filter-branch/filter-repo, update-ref -d, reflog expire, gc --prune=now)", False)


def tmux(u: Unwrapped) -> None:
    """`tmux [opts] CMD [args] [\\; CMD ...]`: the shell commands of new-session/new-window/run-shell/send-keys..."""
    args, i = u.args, 0
    while i < len(args) and args[i].startswith("-"):
        i += 2 if args[i] in ("-L", "-S", "-f", "-c", "-T") else 1
    if i < len(args) and args[i - 1:i] == ["-c"]:
        u.payloads.append((args[i - 1], None))
    group: list[str] = []
    for a in [*args[i:], ";"]:
        if a in (";", "\\;"):
            _tmux_command(group, u)
            group = []
        else:
            group.append(a)


def _tmux_command(argv: list, u: Unwrapped) -> None:
    kind = _TMUX_CMDS.get(argv[0]) if argv else None
    if kind is None:
        return
    valued, i = _TMUX_VALUED[kind], 1
    while i < len(argv) and argv[i].startswith("-") and len(argv[i]) > 1:
        i += 2 if argv[i][-1] in valued and len(argv[i]) == 2 else 1
    rest = argv[i:]
    if not rest:
        return
    detached = any(a.startswith("-") and not a.startswith("--") and "d" in a[1:] for a in argv[1:i])
    if kind != "new" or detached or argv[0] not in ("new-session", "new"):  # runs in a server, not in front of the user
        u.findings.append(DETACHED)
    if kind == "send":
        text = "".join(_KEYS.get(k.lower(), k if len(k) > 1 or not k.isspace() else k) + ("" if k.lower() in _KEYS else " ")
                       for k in rest)
        u.payloads.append((text, None))
    elif kind == "if":
        u.payloads.extend((r, None) for r in rest)
    else:
        u.payloads.append((" ".join(rest) if len(rest) > 1 else rest[0], None))


def screen(u: Unwrapped) -> None:
    """`screen [opts] CMD ARGS` runs CMD; `screen -X stuff TEXT` types TEXT; `-X exec/screen CMD` runs CMD."""
    args, i = u.args, 0
    while i < len(args) and args[i].startswith("-"):
        if args[i] == "-X":
            rest = args[i + 1:]
            if rest[:1] in (["stuff"], ["exec"], ["screen"]) and len(rest) > 1:
                u.findings.append(DETACHED)
            if rest[:1] == ["stuff"] and len(rest) > 1:
                u.payloads.append((rest[1].replace("^M", "\n").replace("\\r", "\n").replace("\\n", "\n"), None))
            elif rest[:1] in (["exec"], ["screen"]) and len(rest) > 1:
                u.commands.append((rest[1:], "screen"))
            return
        a = args[i]
        i += 2 if a == "-Logfile" or (a not in _SCREEN_WORDS and len(a) > 1 and a[-1] in "ScehpTts") else 1
    if i < len(args):
        u.commands.append((args[i:], "screen"))
        flags = "".join(a[1:] for a in args[:i] if a.startswith("-") and not a.startswith("--"))
        if "m" in flags and ("d" in flags or "D" in flags):
            u.findings.append(DETACHED)


def expect(u: Unwrapped) -> None:
    """`expect -c SCRIPT`: the programs it spawns and the lines it sends (typed into them) are shell text; with no
    -c and no script file, the script arrives on stdin (a heredoc or pipe: flows.feed reads it with expect_script)."""
    script = next((u.args[k + 1] for k, a in enumerate(u.args[:-1]) if a == "-c"), None)
    if script is None:
        u.stdin_code = not [a for a in u.args if not a.startswith("-")] or u.args[-1:] == ["-"]
        return
    detached, payloads = expect_script(script)
    u.findings.extend([DETACHED] if detached else [])
    u.payloads.extend((p, None) for p in payloads)


def expect_script(script: str) -> tuple[bool, list[str]]:
    """What an expect script runs: (spawns a program, the shell texts it spawns, execs or sends)."""
    detached, out = False, []
    for stmt in _EXPECT_STMT.split(script):
        words = [a or b or c for a, b, c in _EXPECT_STR.findall(stmt)]
        if not words:
            continue
        detached = detached or words[0] in ("spawn", "exec", "system")
        if words[0] == "spawn":
            k = 1
            while k < len(words) and words[k].startswith("-"):  # spawn's own options (-noecho, -open ID)
                k += 2 if words[k] in ("-open", "-leaveopen") else 1
            out.append(" ".join(words[k:]))
        elif words[0] == "send" and len(words) > 1:
            out.append(words[-1].replace("\\r", "\n").replace("\\n", "\n"))
        elif words[0] in ("exec", "system"):
            out.append(" ".join(words[1:]))
    return detached, out


def at(u: Unwrapped) -> None:
    """at/batch queue a job that runs later (its text arrives on stdin and is scanned there)."""
    listing = any(a in ("-l", "-r", "-d", "-c", "-V", "--version", "-h", "--help") for a in u.args)
    u.stdin_code = not listing and "-f" not in u.args
    if not listing:
        u.findings.append(SCHEDULED)


def systemd_run(args: list) -> bool:
    """True when systemd-run starts a unit that outlives the command (a timer or a detached service)."""
    attached = {"--scope", "--wait", "--pty", "-t", "--pipe", "-P", "-G", "--collect"}
    if args[:1] in (["-h"], ["--help"], ["--version"]):
        return False
    if any(a.startswith(("--on-", "--timer-property")) for a in args):
        return True
    return not any(a in attached for a in args)


def package_manager(u: Unwrapped) -> None:
    """npm/pnpm/yarn/bun: scripts set from the command line run later; registry and script-shell settings."""
    args = [a for a in u.args if not a.startswith("-")]
    if args[:1] == ["pm"]:  # bun pm pkg set ...
        args = args[1:]
    if args[:2] == ["pkg", "set"]:
        for a in args[2:]:
            key, eq, value = a.partition("=")
            if eq and key.startswith("scripts."):
                u.payloads.append((value, None))
                if _LIFECYCLE.fullmatch(key[8:]) and runs_unseen_file(value):
                    u.findings.append(LIFECYCLE_SCRIPT)
    elif args[:1] == ["set-script"] and len(args) >= 3:
        u.payloads.append((args[2], None))
        if _LIFECYCLE.fullmatch(args[1]) and runs_unseen_file(args[2]):
            u.findings.append(LIFECYCLE_SCRIPT)
    elif args[:2] == ["config", "set"] or args[:1] == ["set"]:
        rest = args[2:] if args[0] == "config" else args[1:]
        settings(u, rest)


# scripts a package manager runs by itself (install, pack, publish), not only when the user names them
_LIFECYCLE = lazy(r"(?:pre|post)?(?:install|prepare|pack|publish|prepublishOnly|uninstall|dependencies)|prepublish")
LIFECYCLE_SCRIPT = ("pkg_lifecycle_script", "set a package lifecycle script that runs a file from outside the project or "
                    "a hidden place (runs by itself on the next install, pack or publish; the file is not shown)", False)
_RUNS_FILE = lazy(r"\A\s*(?:(?:env\s+)?(?:sh|bash|zsh|dash|node|nodejs|deno|bun|python3?|perl|ruby|php)\s+(?:-\S+\s+)*)?"
                  r"(?:[/~]|\$\{?HOME\b|\.\./|(?:\./)?\.[\w-]|(?:\./)?(?:\S*/)?(?:tmp|\.cache)/)")


def runs_unseen_file(script: str) -> bool:
    """A script line that runs a file from outside the project or from a hidden or scratch place (`node /tmp/x.js`,
    `sh ~/.x.sh`, `./.hook`, `bash ../other/x.sh`): not `husky install` nor `node scripts/postinstall.js`."""
    return bool(_RUNS_FILE.match(script))


def uv(u: Unwrapped) -> None:
    """uv pip ... is pip."""
    if u.args[:1] == ["pip"]:
        u.args = u.args[1:]
        pip(u)
        u.args = ["pip", *u.args]


def pip(u: Unwrapped) -> None:
    """pip config set KEY VALUE (index URLs, trusted hosts); pip install of a plain-http index."""
    args = [a for a in u.args if not a.startswith("-")]
    if args[:2] == ["config", "set"]:
        settings(u, args[2:])
    for k, a in enumerate(u.args[:-1]):
        if a in ("-i", "--index-url", "--extra-index-url", "--trusted-host") and foreign(u.args[k + 1]):
            u.findings.append(PACKAGE_SOURCE)


def settings(u: Unwrapped, rest: list) -> None:
    """KEY VALUE or KEY=VALUE given to a package manager's config command."""
    if not rest:
        return
    key, eq, value = rest[0].partition("=")
    value = value if eq else (rest[1] if len(rest) > 1 else "")
    if _SCRIPT_SHELL.search(key):
        u.findings.append(PACKAGE_SOURCE)
        u.payloads.append((value, None))
    elif _REGISTRY.search(key) and (foreign(value) or key.lower().endswith("trusted-host")):
        u.findings.append(PACKAGE_SOURCE)
    elif _TLS_OFF_KEY.search(key) and value.lower() in ("false", "0", "no", "off", ""):
        u.findings.append(TLS_OFF)


_TLS_VARS = {"NODE_TLS_REJECT_UNAUTHORIZED": "0", "PYTHONHTTPSVERIFY": "0", "GIT_SSL_NO_VERIFY": "*", "CURL_CA_BUNDLE": "",
             "REQUESTS_CA_BUNDLE": "", "NPM_CONFIG_STRICT_SSL": "false"}
_HERMES_VAR = lazy(r"HERMES_\w*(?:YOLO|APPROVAL|SANDBOX)\w*\Z")


def risky_variable(name: str, value: str) -> tuple[str, str, bool] | None:
    """NAME=VALUE that switches Hermes's approvals off or TLS verification off for what follows."""
    if _HERMES_VAR.match(name):
        low = value.lower()
        if "YOLO" in name and low in ("1", "true", "yes", "on") or "YOLO" not in name and low in ("off", "0", "false", "none", "never", ""):
            return HERMES_SAFETY
        return None
    low_name = name.lower()
    if low_name.startswith(("npm_config_", "yarn_", "pnpm_config_", "pip_", "uv_")):  # a package manager setting by variable
        key = low_name.split("_", 2 if low_name.startswith(("npm_config_", "pnpm_config_")) else 1)[-1].replace("_", "-")
        probe = _Probe()
        settings(probe, [key, value])  # type: ignore[arg-type]
        return probe.findings[0] if probe.findings else None
    source = variable(name, value)
    if source:
        return source
    want = _TLS_VARS.get(name)
    if want is not None and (value.lower() == want or want == "*" and value not in ("", "0", "false")):
        return TLS_OFF
    return None


class _Probe:  # the two fields settings() touches
    def __init__(self) -> None:
        self.findings: list = []
        self.payloads: list = []


def make(u: Unwrapped) -> None:
    """make NAME=VALUE: recipes expand $(NAME) into shell commands, so each value is shell text; make -f - reads
    a Makefile from stdin (scanned as `make` code)."""
    u.stdin_code = any(a in ("-f", "--file", "--makefile") and b in ("-", "/dev/stdin") for a, b in zip(u.args, u.args[1:], strict=False))
    for a in u.args:
        name, eq, value = a.partition("=")
        if _make_rewired(name.rstrip(":+?!"), eq, value, a):
            u.findings.append(("exec_via_option", f"make {a[:60]} changes how recipes run or adds rules", False))
        if eq and value and re.fullmatch(r"\.?[A-Za-z_][\w.]*\+?:?", name) and (" " in value or "|" in value or ";" in value):
            u.payloads.append((value, None))
        elif name.rstrip(":") in ("SHELL", "MAKESHELL") and eq and value.rsplit("/", 1)[-1] not in SHELLS:
            u.findings.append(("exec_via_option", f"make {name}={value} runs every recipe through that program", False))


_SAFE_SHELLFLAGS = lazy(r"\A\s*(?:-[eEuxvo]+\s+(?:pipefail\s+)?)*-[eEux]*c\s*\Z")


def _make_rewired(name: str, eq: str, value: str, arg: str) -> bool:
    """.SHELLFLAGS= other than `-c` forms, MAKEFLAGS= carrying SHELL or --eval, --eval/-E rules (rt13 a16)."""
    if arg in ("-E", "--eval") or arg.startswith("--eval="):
        return True
    value = value.strip().strip("'\"")
    if name == ".SHELLFLAGS" and eq:
        return not _SAFE_SHELLFLAGS.match(value)
    return name == "MAKEFLAGS" and bool(eq) and ("SHELL" in value or "--eval" in value or
                                                 re.search(r"(?:\A|\s)-\w*E", value) is not None)


def composer(u: Unwrapped) -> None:
    """composer config scripts.NAME CMD: the command runs on the next install/update (its text is scanned)."""
    args = [a for a in u.args if not a.startswith("-")]
    if args[:1] == ["config"] and len(args) >= 3 and args[1].startswith("scripts."):
        u.payloads.extend((a, None) for a in args[2:])


_HERMES_VALUED = frozenset({"-q", "--query", "-z", "--oneshot", "-m", "--model", "-r", "--resume", "-p", "--profile", "-t",
                            "--toolsets", "--provider", "--base-url", "-s", "--skills"})


def hermes(u: Unwrapped) -> None:
    """`hermes -C/--config-set KEY=VALUE` (any position, any unambiguous --long prefix, as argparse allows)
    overriding a safety setting for that run, `--yolo` (or `--yol`), and `config set` of a safety key."""
    skip = False
    for k, a in enumerate(u.args):
        if skip or a in _HERMES_VALUED:  # the prompt of -q/-z, a model or profile name: data, not flags
            skip = not skip and a in _HERMES_VALUED
            continue
        name, eq, attached = a.partition("=")
        if len(a) >= 4 and "--yolo".startswith(a) or a == "--trusted" and "tap" in u.args[:k]:  # a trusted skill
            u.findings.append(HERMES_SAFETY)  # tap: only critical scanner findings block its skills
            return
        setting = None
        if a == "-C" or (len(name) >= 5 and "--config-set".startswith(name)):
            setting = attached if eq else (u.args[k + 1] if k + 1 < len(u.args) else None)
        elif a.startswith("-C") and len(a) > 2:
            setting = a[2:]
        if setting and SAFETY_KEY.match(setting):
            u.findings.append(HERMES_SAFETY)
            return
        if a == "config" and u.args[k + 1:k + 2] in (["set"], ["unset"], ["reset"]) and k + 2 < len(u.args) \
                and SAFETY_KEY.match(u.args[k + 2]):
            u.findings.append(HERMES_SAFETY)
            return


def account(u: Unwrapped) -> None:
    """useradd/adduser/usermod/groupadd with uid or gid 0 or a non-unique id; chpasswd, vipw, setcap."""
    if u.name in ("chpasswd", "chgpasswd", "vipw", "vigr", "newusers", "pwconv", "grpconv"):
        u.findings.append(("account_change", "rewrite passwords or account files", False))
        return
    if u.name == "setcap":
        if any("setuid" in a or "sys_admin" in a or "dac_" in a or "=ep" in a.replace("+", "=") for a in u.args):
            u.findings.append(("setuid", "grant a program root capabilities (setcap)", False))
        return
    if u.name == "dscl":  # macOS: dscl . -create /Users/x UniqueID 0, -append /Groups/admin GroupMembership x
        words = [a.lower() for a in u.args]
        if "uniqueid" in words and words[-1:] == ["0"] or "primarygroupid" in words and words[-1:] == ["0"] or \
                any(w.rstrip("/").endswith(("/groups/admin", "/groups/wheel")) for w in words) and "groupmembership" in words:
            u.findings.append(_UID0)
        return
    if u.name == "sysadminctl":
        if "-adduser" in [a.lower() for a in u.args] and "-admin" in u.args:
            u.findings.append(_UID0)
        return
    args = _split_clusters(u.args[1:] if u.name == "pw" else u.args, _ACCOUNT_VALUED)  # BSD: pw useradd NAME -u 0 -o
    if u.name == "pw" and u.args[:1] not in (["useradd"], ["usermod"], ["groupadd"], ["groupmod"]):
        return
    for k, a in enumerate(args):
        value = args[k + 1] if k + 1 < len(args) else ""
        if a in ("-o", "--non-unique") or (a in ("-u", "--uid", "-g", "--gid") and value.strip() == "0") or a in ("--uid=0", "--gid=0"):
            u.findings.append(_UID0)
            return


_ACCOUNT_VALUED = frozenset("bcdefgGkKpsuZRPL")


def _split_clusters(args: list, valued: frozenset) -> list:
    """getopt's short options as separate words: `-ou 0` is `-o -u 0`, `-u0` is `-u 0`."""
    out: list[str] = []
    for a in args:
        if not a.startswith("-") or a.startswith("--") or len(a) <= 2:
            out.append(a)
            continue
        for k, ch in enumerate(a[1:], 1):
            out.append("-" + ch)
            if ch in valued:
                if a[k + 1:]:
                    out.append(a[k + 1:])
                break
    return out


def git_history(u: Unwrapped) -> None:
    """git subcommands that rewrite history or drop refs and unreachable objects."""
    sub, rest = (u.args[0], u.args[1:]) if u.args else ("", [])
    if sub in ("filter-branch", "filter-repo"):
        if not any(a in ("--help", "--analyze", "--dry-run") for a in rest):
            u.findings.append(_HISTORY_REWRITE)
    elif sub == "update-ref" and ("-d" in rest or "--stdin" in rest):
        u.findings.append(_HISTORY_REWRITE)
    elif sub == "reflog" and rest[:1] in (["expire"], ["delete"]) and any(a.endswith(("=now", "=all")) or a == "--all" for a in rest):
        u.findings.append(_HISTORY_REWRITE)
    elif sub == "gc" and any(a in ("--prune=now", "--prune=all") for a in rest):
        u.findings.append(_HISTORY_REWRITE)
    elif sub == "rm" and ("--cached" in rest or "--dry-run" in rest or any(a[:1] == "-" and a[1:2] != "-" and "n" in a for a in rest)):
        pass  # the index only, or a dry run
    elif sub == "rm" and any(a.startswith("--pathspec-from-file") for a in rest):
        u.findings.append(("recursive_delete", "delete the tracked files a list names (git rm --pathspec-from-file)", False))
    elif sub == "rm" and any(a.startswith("-") and "r" in a for a in rest) and any(a in (".", "*", ":/") for a in rest):
        u.findings.append(("git_discard", "delete every tracked file (git rm -r .)", False))
    elif sub == "rm" and any(a.startswith("-") and not a.startswith("--") and "r" in a or a == "--recursive"
                             for a in rest):
        u.findings.append(("recursive_delete", "recursive delete of tracked folders (git rm -r)", False))
    elif sub == "checkout" and any(a in ("-f", "--force") for a in rest):
        u.findings.append(("git_discard", "discard all uncommitted changes (git checkout -f)", False))
    elif sub == "worktree" and rest[:1] == ["remove"] and any(a in ("-f", "--force") for a in rest):
        u.findings.append(("git_discard", "remove a worktree with its uncommitted changes", False))
    elif sub == "submodule" and rest[:1] == ["foreach"] and len(rest) > 1:
        u.payloads.append((" ".join(a for a in rest[1:] if a != "--recursive"), None))


def detached(u: Unwrapped) -> None:
    """Other ways to start a command that outlives the call: dtach/abduco sessions, task spoolers (tsp, nq,
    pueue add), zellij run, entr (on every file change), daemonize, start-stop-daemon --exec."""
    args = u.args
    if u.name in ("dtach", "abduco"):
        k = next((i for i, a in enumerate(args) if a in ("-n", "-A", "-c")), None)
        rest = args[k + 2:] if k is not None else []
        while rest and rest[0].startswith("-"):
            rest = rest[1:]
    elif u.name in ("pueue", "zellij"):
        verb = "add" if u.name == "pueue" else "run"
        rest = args[args.index("--") + 1:] if "--" in args else [a for a in args[args.index(verb) + 1:] if not a.startswith("-")] \
            if verb in args else []
    elif u.name == "entr":
        if "-s" in args:
            k = args.index("-s")
            if k + 1 < len(args):
                u.payloads.append((args[k + 1], None))
            return
        rest = [a for a in args if not (a.startswith("-") and len(a) == 2)]
    elif u.name == "start-stop-daemon":
        exe = next((args[i + 1] for i, a in enumerate(args[:-1]) if a in ("--exec", "-x", "--startas", "-a")), None)
        rest = ([exe] + (args[args.index("--") + 1:] if "--" in args else [])) if exe and ("--start" in args or "-S" in args) else []
    else:  # tsp, nq, daemonize: options then the command
        i = 0
        while i < len(args) and args[i].startswith("-"):
            i += 1
        rest = args[i:]
    if rest:
        u.commands.append((rest, u.name))
        u.findings.append(DETACHED)


def redis(u: Unwrapped) -> None:
    """redis-cli with no command words reads its commands from stdin."""
    args, i = u.args, 0
    while i < len(args) and args[i].startswith("-"):
        i += 2 if args[i] in ("-h", "-p", "-a", "-n", "-u", "-s", "--user", "--pass", "-r", "-i", "--tls-cert", "--cacert") else 1
    u.stdin_code = i >= len(args)


def dispatch(u: Unwrapped) -> bool:
    """Apply the handler for `u.name`; False when there is none."""
    handler = _HANDLERS.get(u.name)
    if handler is None:
        return False
    handler(u)
    return True


_HANDLERS = {"tmux": tmux, "byobu": tmux, "screen": screen,
             **{n: detached for n in ("dtach", "abduco", "pueue", "zellij", "entr", "start-stop-daemon", "tsp", "nq", "daemonize")}, "expect": expect, "at": at, "batch": at, "make": make, "gmake": make, "composer": composer,
             "pip": pip, "pip3": pip, "uv": uv, "redis-cli": redis, "valkey-cli": redis, "keydb-cli": redis, "hermes": hermes, **{n: package_manager for n in _PM},
             **{n: account for n in ("useradd", "adduser", "usermod", "groupadd", "groupmod", "addgroup", "chpasswd", "chgpasswd",
                                     "vipw", "vigr", "newusers", "pwconv", "grpconv", "setcap", "pw", "dscl",
                                     "sysadminctl")}}
