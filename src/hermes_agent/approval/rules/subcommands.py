"""Canonical forms that need a command's own grammar: GNU long-option abbreviations (`rm --rec --fo`,
`git push --forc`), `git config` settings that run programs, commands run inside containers and pods
(`docker exec`, `kubectl exec`), and the SQL a database client is given (`psql -c`, `mysql -e`,
`sqlite3 DB SQL`; without one, its stdin is SQL). Pure string work."""

from __future__ import annotations

from typing import TYPE_CHECKING

from hermes_agent.approval.rules.gitpush import URL_REWRITE, redirects_remote
from hermes_agent.approval.rules.lazyre import lazy

if TYPE_CHECKING:
    from hermes_agent.approval.rules.unwrapped import Unwrapped

# GNU getopt_long and git's parse-options accept any unambiguous prefix of a long option
_LONG: dict[str, tuple[str, ...]] = {
    "rm": ("--recursive", "--force", "--interactive", "--one-file-system", "--no-preserve-root", "--preserve-root", "--dir",
           "--verbose", "--help", "--version"),
    "chmod": ("--recursive", "--reference", "--changes", "--silent", "--quiet", "--verbose", "--help", "--version"),
    "chown": ("--recursive", "--reference", "--changes", "--silent", "--quiet", "--verbose", "--dereference", "--from", "--help"),
    "shred": ("--remove", "--zero", "--iterations", "--force", "--exact", "--size", "--verbose", "--help"),
    "rsync": ("--delete", "--delete-before", "--delete-during", "--delete-delay", "--delete-after", "--delete-excluded",
              "--remove-source-files", "--dry-run", "--recursive", "--archive", "--verbose", "--help"),
    "git push": ("--force", "--force-with-lease", "--force-if-includes", "--delete", "--mirror", "--dry-run", "--tags",
                 "--all", "--prune", "--set-upstream", "--verbose", "--quiet", "--no-verify", "--follow-tags", "--atomic"),
    "git reset": ("--hard", "--soft", "--mixed", "--merge", "--keep", "--quiet", "--patch", "--recurse-submodules"),
    "git clean": ("--force", "--dry-run", "--quiet", "--interactive", "--exclude"),
    "git branch": ("--delete", "--force", "--move", "--copy", "--list", "--all", "--remotes", "--verbose", "--track"),
    "git checkout": ("--force", "--ours", "--theirs", "--merge", "--patch", "--quiet", "--detach", "--orphan"),
}
_GIT_OPTION_VALUE = frozenset({"-f", "--file", "--blob", "--type", "--default", "--comment", "--value"})
_GIT_READ = frozenset({"--get", "--get-all", "--get-regexp", "--get-urlmatch", "-l", "--list", "--unset", "--unset-all",
                       "--remove-section", "--rename-section", "-e", "--edit", "--show-origin", "--show-scope", "--name-only"})
_PROGRAM_KEYS = ("core.sshcommand", "core.pager", "core.editor", "core.fsmonitor", "diff.external", "credential.helper",
                 "sequence.editor", "uploadpack.packobjectshook", "core.askpass", "gpg.program", "gpg.ssh.program")
_PROGRAM_SUFFIXES = (".clean", ".smudge", ".process", ".driver", ".textconv", ".command", ".cmd", ".tool")


def expand_long_options(key: str, args: list) -> list:
    """Replace unambiguous long-option prefixes (`--rec`) with the full option for command `key`."""
    known = _LONG.get(key)
    if not known:
        return args
    out = []
    for a in args:
        if a == "--":
            out.extend(args[len(out):])
            break
        if a.startswith("--") and len(a) > 3:
            name, eq, value = a.partition("=")
            hits = [k for k in known if k.startswith(name)]
            if name not in known and len(hits) == 1:
                a = hits[0] + eq + value
        out.append(a)
    return out


def git_setting(key: str, value: str, u: Unwrapped) -> None:
    """A git configuration value that names a program or shell alias: scan it, and ask."""
    key = key.lower()
    if key.startswith("alias.") and value.startswith("!"):
        u.payloads.append((value[1:], None))
        u.findings.append(("exec_via_option", "git alias that runs a shell command", False))
    elif key.startswith("http.") and key.endswith(".sslverify") or key == "http.sslverify":
        if value.lower() in ("false", "0", "no", "off"):
            u.findings.append(("tls_verify_off", "turn off TLS certificate verification", False))
    elif key.startswith("url.") and redirects_remote(key):
        if _host(key[4:].rsplit(".", 1)[0]) != _host(value):  # not git@github.com: for https://github.com/
            u.findings.append(URL_REWRITE)
    elif key in ("core.hookspath", "init.templatedir"):  # a template's hooks land in every repository made after
        u.findings.append(("git_hooks", f"point git at another hooks directory ({key})", False))
    elif key in _PROGRAM_KEYS or (key.count(".") >= 2 and key.endswith(_PROGRAM_SUFFIXES)):
        u.payloads.append((value.lstrip("!"), None))
        if not _installed_tool(key, value):
            u.findings.append(("exec_via_option", f"git setting {key} runs a program", False))


def _host(url: str) -> str:
    """The host a git URL or URL prefix names (https://u@h:1/p, git@h:p, ssh://h/p), lower-case."""
    rest = url.strip().strip("\"'").split("://", 1)[-1]
    return rest.split("@", 1)[-1].split("/", 1)[0].split(":", 1)[0].lower()


_PLAIN_TOOL = lazy(r"[\w.+-]+(?: +-{0,2}[\w=.,:+-]*)*\Z")
_NOT_TOOLS = frozenset({"sh", "bash", "zsh", "dash", "ksh", "fish", "python", "python3", "perl", "ruby", "node", "php", "curl", "wget",
                        "nc", "ncat", "socat", "eval", "env", "xargs", "busybox", "awk", "sed", "tee", "rm", "dd"})
_HELPERS = frozenset({"store", "cache", "osxkeychain", "manager", "manager-core", "libsecret", "wincred", "gnome-keyring"})


def _installed_tool(key: str, value: str) -> bool:
    """An editor, pager or helper named by its program and flags (`vim`, `less -FRX`, `code --wait`, `delta`,
    credential.helper `store`/`cache --timeout=900`): no shell syntax, no path, no interpreter or network tool."""
    if key in ("core.fsmonitor", "core.sshcommand", "uploadpack.packobjectshook") or not _PLAIN_TOOL.match(value.strip()):
        return False
    head = value.split()[0] if value.split() else ""
    if key == "credential.helper":
        return head in _HELPERS
    return head not in _NOT_TOOLS


def git_config(u: Unwrapped) -> None:
    """`git config [options] KEY VALUE` (and `git config set KEY VALUE`)."""
    args = u.args[1:]
    if args[:1] == ["set"]:
        args = args[1:]
    operands, i = [], 0
    while i < len(args):
        a = args[i]
        if a in _GIT_READ or args[:1] in (["get"], ["list"], ["unset"]):
            return
        if a.startswith("-"):
            i += 2 if a in _GIT_OPTION_VALUE else 1
            continue
        operands.append(a)
        i += 1
    if len(operands) >= 2:
        git_setting(operands[0], operands[1], u)


_EXEC_VALUE = {"docker": frozenset({"-u", "--user", "-w", "--workdir", "-e", "--env", "--env-file", "--detach-keys"}),
               "kubectl": frozenset({"-c", "--container", "-n", "--namespace", "--context", "-f", "--filename"})}


def container_exec(u: Unwrapped) -> None:
    """`docker exec [opts] CTR CMD...` / `kubectl exec [opts] POD -- CMD...`: CMD runs too."""
    tool = "kubectl" if u.name in ("kubectl", "oc") else "docker"
    args = u.args[1:] if u.args[:1] == ["exec"] else u.args[2:] if u.args[:2] == ["container", "exec"] else None
    if args is None:
        return
    if tool == "kubectl":
        if "--" in args:
            rest = args[args.index("--") + 1:]
            if rest:
                u.commands.append((rest, "exec"))
        return
    i = 0
    while i < len(args) and args[i].startswith("-"):
        i += 2 if args[i] in _EXEC_VALUE[tool] else 1
    if len(args) > i + 1:
        u.commands.append((args[i + 1:], "exec"))


# SQL client -> (options whose value is SQL, whether the first operand after the database is SQL)
SQL_CLIENTS: dict[str, tuple[frozenset, bool]] = {
    "psql": (frozenset({"-c", "--command"}), False),
    "mysql": (frozenset({"-e", "--execute"}), False),
    "mariadb": (frozenset({"-e", "--execute"}), False),
    "sqlite3": (frozenset({"-cmd"}), True),
    "sqlite": (frozenset({"-cmd"}), True),
    "duckdb": (frozenset({"-c", "-cmd"}), True),
    "clickhouse-client": (frozenset({"-q", "--query"}), False),
    "cqlsh": (frozenset({"-e", "--execute"}), False),
    "mongosh": (frozenset({"--eval"}), False),
    "mongo": (frozenset({"--eval"}), False),
    "sqlcmd": (frozenset({"-q", "-Q"}), False),
    "snowsql": (frozenset({"-q", "--query"}), False),
    "usql": (frozenset({"-c", "--command"}), False),
    "beeline": (frozenset({"-e"}), False),
    "hive": (frozenset({"-e"}), False),
    "spark-sql": (frozenset({"-e"}), False),
    "trino": (frozenset({"--execute"}), False),
    "pgcli": (frozenset(), False),
    "mycli": (frozenset({"-e", "--execute"}), False),
    "litecli": (frozenset({"-e"}), True),
}
_SQL_FILE_OPTS = frozenset({"-f", "--file", "-i", "--init", "-init", "--source"})


def sql_client(u: Unwrapped) -> None:
    """Collect the SQL a database client is given; with none, its stdin is SQL."""
    opts, positional_sql = SQL_CLIENTS[u.name]
    sql: list[str] = []
    operands: list[str] = []
    reads_file, i, args = False, 0, u.args
    while i < len(args):
        a = args[i]
        key, eq, value = a.partition("=")
        if a in opts and i + 1 < len(args):
            sql.append(args[i + 1])
            i += 2
            continue
        if eq and key in opts:
            sql.append(value)
        elif a[:2] in opts and len(a) > 2 and not a.startswith("--"):
            sql.append(a[2:])
        elif a in _SQL_FILE_OPTS or key in _SQL_FILE_OPTS:
            reads_file = True
        elif not a.startswith("-"):
            operands.append(a)
        i += 1
    if positional_sql and len(operands) >= 2:
        sql.extend(operands[1:])
    if sql:
        u.code = ("sql", "\n".join(sql))
    else:
        u.stdin_code = not reads_file
