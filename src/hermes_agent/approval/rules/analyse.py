"""The scanner: walks every simple command of a text (and of every payload, substitution, heredoc and
function body inside it), evaluating words as bash would (expand.py), and records findings from the
pattern table; data flows between commands are checked by the FlowChecks mixin (flows.py)."""

from __future__ import annotations

import posixpath
import re
from functools import cache

from hermes_agent.approval.rules import (
    argsem,
    clobber,
    contexts,
    gitpush,
    interp,
    mass,
    planted,
    replaces,
    unseen,
    wipes,
)
from hermes_agent.approval.rules.budget import check
from hermes_agent.approval.rules.canonical import SHELLS, Unwrapped
from hermes_agent.approval.rules.dynamic import BUILT, built_at_run_time
from hermes_agent.approval.rules.expand import ASSIGN_WORD, ShellEnv, expand_text, expand_word, render_sub
from hermes_agent.approval.rules.flows import SOURCES, Cmd, FlowChecks
from hermes_agent.approval.rules.lazyre import lazy
from hermes_agent.approval.rules.leaks import LeakChecks
from hermes_agent.approval.rules.lexer import Simple, lex, parse
from hermes_agent.approval.rules.planted import script_edits
from hermes_agent.approval.rules.runners import LIFECYCLE_SCRIPT, risky_variable
from hermes_agent.approval.rules.table import DANGEROUS_RULES, HARDLINE_RULES, TEXT_RULES
from hermes_agent.approval.rules.targets import HISTORY_WIPE, disposable, norm_path
from hermes_agent.approval.rules.unwrap import program_variable, unwrap
from hermes_agent.approval.rules.workfiles import WorkFiles

MAX_DEPTH = 8
MAX_TEXTS = 96
_HISTORY_VARS = frozenset({"HISTFILE", "HISTSIZE", "HISTFILESIZE", "SAVEHIST"})
_CLEANUP_KEYS = frozenset({"recursive_delete", "glob_delete", "find_exec_rm", "xargs_rm", "git_clean"})
_IMAGE_TOOLS = frozenset({"mkswap", "wipefs", "fdisk", "sfdisk", "gdisk", "cfdisk", "sgdisk", "parted"})
_CODE_FLAGS = frozenset({"-c", "-e", "-E", "-r", "--eval", "--command", "-p", "--print", "eval"})
_FILE_RUNNERS = frozenset({"make", "gmake", "just", "task", "go-task", "ansible-playbook", "rake", "ninja", "invoke"})
_PROGRAM_FILE_FLAGS = frozenset({"-f", "--file", "--makefile", "--justfile", "-t", "--taskfile", "-i", "--inventory"})
_HELP = frozenset({"--help", "-help", "--version", "-version", "--usage", "help"})
_DRY = ("--dry-run", "--dryrun", "--simulate", "--just-print", "--what-if", "--recon", "--no-act")
_DRY_SHORT = {"rsync": "n", "make": "n", "apt": "s", "apt-get": "s", "git": "n"}
_SQL_SHELL = lazy(r"(?:^|\n|;)\s*(?:\\!|\.shell|\.system)\s+([^\n;]+)|\bPROGRAM\s+'((?:[^']|'')*)'", re.I)
_QUOTED = lazy(r"\$?'[^']*'|\"(?:[^\"\\]|\\.)*\"")
_HEREDOC_OP = lazy(r"<<(?!<)-?[ \t]*(['\"]?)([\w.-]+)\1")
_SQL_COMMENT = lazy(r"/\*.*?\*/|--[^\n]*", re.S)


@cache
def _index() -> tuple[dict, list, list]:
    by_name: dict[str, list] = {}
    for rule in HARDLINE_RULES + DANGEROUS_RULES:
        for name in rule.names:
            by_name.setdefault(name, []).append((rule, re.compile(rule.pattern)))
    shell = [(rule, re.compile(rule.pattern, re.M)) for rule in TEXT_RULES if not rule.sql]
    sql = [(rule, re.compile(rule.pattern, re.M | re.I)) for rule in TEXT_RULES if rule.sql]
    return by_name, shell, sql


def inert(u: Unwrapped) -> bool:
    """--help / --version / dry-run forms that only print what would happen."""
    args = u.args[:u.args.index("--")] if "--" in u.args else u.args
    if args[:1] == ["help"] or any(a in _HELP and a != "help" for a in args):
        return True
    if any(a.startswith(_DRY) and not a.endswith(("=none", "=false")) for a in args):
        return True
    short = _DRY_SHORT.get(u.name)
    if u.name == "git" and args[:1] not in (["push"], ["clean"]):
        return False
    return bool(short) and any(a.startswith("-") and not a.startswith("--") and short in a[1:] for a in args)


def _data_removed(text: str) -> str:
    """`text` without its quoted strings and heredoc bodies (the text a shell reads as commands)."""
    if "<<" in text:  # one pass over the lines (a regex over the whole text is quadratic on many `<<`)
        kept, pending = [], []
        for line in text.split("\n"):
            if pending:
                if line.lstrip("\t").rstrip(" \t") == pending[0]:
                    pending.pop(0)
                continue
            kept.append(line)
            if "<<" in line:
                pending.extend(m.group(2) for m in _HEREDOC_OP.finditer(line))
        text = "\n".join(kept)
    return _QUOTED.sub(" ", text) if "'" in text or '"' in text else text


def _clean_paths(u: Unwrapped) -> list[str]:
    """The pathspecs of `git clean` (what it is limited to); none for other commands."""
    if u.name != "git" or u.args[:1] != ["clean"]:
        return []
    out, skip = [], False
    for a in u.args[1:]:
        if skip or a == "--":
            skip = False
        elif a in ("-e", "--exclude"):
            skip = True
        elif not a.startswith("-"):
            out.append(a)
    return out


class Scanner(LeakChecks, FlowChecks, WorkFiles):
    """Collects findings (key, description, hardline) for one command; `views` for deny rules."""

    def __init__(self, views: bool = False) -> None:
        self.findings: list[tuple[str, str, bool]] = []
        self._keys: set[str] = set()
        self.views: list[str] | None = [] if views else None
        self.texts = 0
        self.top_commands = 0
        self.top_compound = False
        self._resolve = None  # path resolver of the text being scanned (cd, symlinks), set per command
        self._env: ShellEnv | None = None

    def add(self, key: str, description: str, hardline: bool = False) -> None:
        """Record a finding once per key."""
        if key not in self._keys:
            self._keys.add(key)
            self.findings.append((key, description, hardline))

    def text(self, text: str, depth: int = 0, conservative: bool = False, env: ShellEnv | None = None) -> set[str]:
        """Scan shell text; returns traits (command names, "@download", "@decode", "@secret") of what it runs."""
        self.texts += 1
        if depth > MAX_DEPTH or self.texts > MAX_TEXTS:
            self.add("nesting_limit", "command nested too deeply to inspect")
            return set()
        env = env if env is not None else ShellEnv()
        tokens, error = lex(text)
        if error and not conservative:
            stripped = text.replace('"', "").replace("'", "").replace("\\", "").replace("`", " ")
            self.text(stripped, depth + 1, conservative=True, env=env.child())
        self.text_rules(_data_removed(text))  # quoted text and heredoc bodies are data here; the payloads that
        # run them (bash -c '...', eval, | sh, bash <<EOF) are scanned as text of their own
        traits: set[str] = set()
        statements = parse(tokens)
        if depth == 0 and not conservative:
            self._note_structure(statements, error)
        for statement in statements:
            check()
            if statement[0].func:
                env.functions.setdefault(statement[0].func, []).append(statement)
            self._statement(statement, env, depth, traits)
        return traits

    def _statement(self, statement: list, env: ShellEnv, depth: int, traits: set) -> None:
        cmds = [(simple, self._simple(simple, env, depth, traits)) for simple in statement]
        self.pipeline(cmds, env, depth)

    def text_rules(self, text: str) -> None:
        """Apply the whole-text shell rules (fork bombs)."""
        lower = text.lower()
        for rule, rx in _index()[1]:
            if any(n in lower for n in rule.needles) and rx.search(text):
                self.add(rule.key, rule.description, rule.hardline)

    def sql_rules(self, sql: str) -> None:
        """Apply the SQL rules to SQL a client or driver is given (comments removed first: DR/**/OP)."""
        joined = _SQL_COMMENT.sub(lambda m: "" if m.group().startswith("/*") else "\n", sql)  # DR/**/OP
        spaced = _SQL_COMMENT.sub(lambda m: " " if m.group().startswith("/*") else "\n", sql)  # DROP/**/TABLE
        for rule, rx in _index()[2]:
            if rx.search(joined) or rx.search(spaced):
                self.add(rule.key, rule.description, rule.hardline)
        for m in _SQL_SHELL.finditer(spaced):  # psql \! CMD, sqlite .shell/.system CMD, COPY ... TO PROGRAM 'CMD'
            self.text(m.group(1) or m.group(2) or "", 1)

    def _note_structure(self, statements: list, error: bool) -> None:
        simples = [s for st in statements for s in st]
        self.top_commands = len(simples)
        self.top_compound = error or len(simples) > 1 or any(
            s.redirects or any(w.subs for w in s.words) for s in simples)

    # -- one simple command -------------------------------------------------------------------------

    def _simple(self, simple: Simple, env: ShellEnv, depth: int, traits: set):
        sub_traits: dict[int, set] = {}
        for w in (*simple.words, *(t for _, t in simple.redirects)):
            if w.subs:
                acc: set[str] = set()
                for _kind, inner in w.subs:
                    acc |= self.text(inner, depth + 1, env=env.child())
                sub_traits[id(w)] = acc
        if sub_traits or any("=" in w.text for w in simple.words) or simple.words[:1] and simple.words[0].text == "for":
            self.taint_assignments(simple.words, sub_traits, env)
        args, words = self._resolve_words(simple.words, env)
        redirects = [(op, expand_text(w, env)) for op, w in simple.redirects]
        if args and all(ASSIGN_WORD.match(a) for a in args):
            self._assign(args, env)
            args, words = [], []
        self._builtins(args, redirects, env, depth)
        first = next((w for w in simple.words if not ASSIGN_WORD.match(w.text)), None)
        if first is not None and first.subs:
            self.check_sources(sub_traits.get(id(first)), "command substitution")
        if first is not None and built_at_run_time(first, args[words.index(first)] if first in words else "", env):
            self.add(*BUILT)
        u = unwrap(args, words)
        if "xargs" in u.chain and (u.name in SHELLS or u.name in SOURCES or interp.language(u.name)):
            for w in simple.words:  # xargs -a <(curl ...) sh -c: the downloaded lines become the shell's code
                if any(kind == "<(" for kind, _ in w.subs):
                    self.check_sources(sub_traits.get(id(w)), "xargs reading a process substitution")
        cmd = self._process(u, redirects, simple.redirects, sub_traits, env, depth, traits)
        if u.name and (simple.background or "nohup" in u.chain or "setsid" in u.chain):
            env.started.append(" ".join([u.name, *u.args]))  # a server this text started (argsem.started_here)
        return cmd

    def _process(self, u: Unwrapped, redirects: list, raw_redirects: list, sub_traits: dict, env: ShellEnv,
                 depth: int, traits: set):
        if self.views is not None:
            self.views.extend(u.views)
        for key, description, hard in u.findings:
            self.add(key, description, hard)
        if unseen.input_script(u.name, u.args, u.chain, u.payloads):
            self.add(*unseen.UNSEEN)
        for text, w in u.payloads:
            if unseen.input_payload(text, u.chain) or (w is not None and unseen.unknown_start(w, text, env)):
                self.add(*unseen.UNSEEN)  # xargs -I{} sh -c '{}', while read l; do eval "$l"
            self.text(text, depth + 1, env=env.child())
            self.check_sources(sub_traits.get(id(w)) if w is not None else None, "command substitution")
        for argv, via in u.commands:
            inner = unwrap(argv, [None] * len(argv))
            inner.chain.insert(0, via)
            self._process(inner, [], [], {}, env, depth + 1, traits)
        if mass.mass_rewrite(u, redirects):
            self.add(*mass.MASS_REWRITE)
        elif mass.everything(u):
            self.add(*mass.EDIT_EVERYTHING)
        elif clobber.clobbered(u, redirects):
            self.add(*clobber.CLOBBER)
        elif mass.deletes_sources(u):
            self.add(*mass.SOURCE_DELETE)
        for finding in wipes.findings(u, redirects):
            self.add(*finding)
        if not u.name:
            self.writes(u, redirects, env)
            return None
        if u.name in env.aliases:
            self.text(" ".join([env.aliases[u.name], *u.args]), depth + 1, env=env.child())
        if u.name in env.functions and u.name not in env.active:
            self._call(u, env, depth, traits)
        self._resolve = lambda p: self.path(p, env)
        self._env = env
        self._rules(u)
        if u.name == "git":
            self._git_push(u, env)
        self._track_cwd(u, env)
        self.writes(u, redirects, env)
        cmd = self.describe(u)
        self.exposure(u, cmd, redirects, sub_traits, env)
        self.leaks(u, cmd, redirects, sub_traits, env)
        if u.code:
            interp.scan_code(self, u.code[0], u.code[1], depth + 1)
            if unseen.runs_input(u.code[1]):  # awk '{system($0)}' f: the file's lines run as commands
                self.add(*unseen.UNSEEN)
        for script in script_edits(u):
            self.text(script, depth + 1, env=env.child())
        if planted.lifecycle_edit(u):
            self.add(*LIFECYCLE_SCRIPT)
        for lang, code in planted.inserted(u):
            self.text(code, depth + 1, env=env.child()) if lang == "sh" else interp.scan_code(self, lang, code, depth + 1)
        self.chmod_exec(u, env)
        self.stdin_feeds(u, cmd, raw_redirects, redirects, sub_traits, depth, env)
        self.scripts(u, cmd, redirects, env, depth)
        if self.reader is not None:
            self._with_reader(u, env, depth, redirects)
        if u.name in _FILE_RUNNERS:  # just --justfile <(curl ...), task -t <(./gen): the substitution is the program
            for k, w in enumerate(u.words[1:], 1):
                if w is not None and u.words[k - 1] is not None and u.words[k - 1].text in _PROGRAM_FILE_FLAGS:
                    self.check_sources(sub_traits.get(id(w)), "process substitution")
                    self.unseen_subs(w, sub_traits.get(id(w)), cmd, depth, env) if w.subs else None
        if u.name in SHELLS or u.name in SOURCES or interp.language(u.name):
            for k, w in enumerate(u.words):
                if w is not None and any(kind == "<(" for kind, _ in w.subs):
                    self.check_sources(sub_traits.get(id(w)), "process substitution")
                    if k == 0 and (u.name in SHELLS or u.name in SOURCES):  # `. <(echo CMD)`, `bash <(printf CMD)`
                        self._printed_program(w, env, depth)
                    if k == 0:  # bash <(./gen), python3 <(cat x.py): unseen.py
                        self.unseen_subs(w, sub_traits.get(id(w)), cmd, depth, env)
                elif w is not None and w.subs and k and u.words[k - 1] is not None and u.words[k - 1].text in _CODE_FLAGS:
                    self.check_sources(sub_traits.get(id(w)), "command substitution as code (python -c \"$(curl ...)\")")
                    self.unseen_subs(w, sub_traits.get(id(w)), Cmd(u.name, [], lang=interp.language(u.name)), depth, env)
        if any(ch in u.raw_name for ch in "$`*?["):
            self._dynamic_name(u)
        traits.add(u.name)
        traits.update(t for t, on in (("@download", cmd.downloads), ("@decode", cmd.decodes), ("@secret", cmd.secret)) if on)
        return cmd

    def _with_reader(self, u: Unwrapped, env: ShellEnv, depth: int, redirects: list) -> None:
        """What only the workspace's files tell (scan_files): the files it runs, secrets in folders it sends, an
        existing file it copies over."""
        self.workspace_files(u, env, depth)
        contexts.check(self, u, env)
        replaces.check(self, u, env, redirects)

    def _printed_program(self, w, env: ShellEnv, depth: int) -> None:  # noqa: ANN001 - lexer.Word
        """What a process substitution prints, when the text fixes it (echo/printf), run as shell text."""
        for kind, inner in w.subs:
            printed = render_sub(inner, env) if kind == "<(" else None
            if printed is not None and printed != "$(" + " ".join(inner.split()) + ")":
                self.text(printed, depth + 1, env=env.child())

    def _call(self, u: Unwrapped, env: ShellEnv, depth: int, traits: set) -> None:
        """A call of a function defined earlier: its body runs with the call's arguments."""
        self.texts += 1
        if depth > MAX_DEPTH or self.texts > MAX_TEXTS:
            self.add("nesting_limit", "command nested too deeply to inspect")
            return
        child = env.child()
        child.active.add(u.name)
        child.vars.update({str(k): a for k, a in enumerate(u.args[:9], 1)})
        child.vars.update({"@": " ".join(u.args), "*": " ".join(u.args), "#": str(len(u.args))})
        for statement in env.functions[u.name]:
            self._statement(statement, child, depth + 1, traits)

    def _rules(self, u: Unwrapped) -> None:
        rules = _index()[0].get(u.name)
        if not rules:
            return
        line = " ".join([u.name, *u.args])
        if argsem.help_only(u):
            return
        quiet = inert(u)
        spared = self._spared(u, self._env)
        operands = [a for a in u.args if not a.startswith("-")] if u.name == "rm" else _clean_paths(u)
        cleanup = bool(operands) and all(disposable(a) for a in operands)
        for rule, rx in rules:
            if rule.via and rule.via not in u.chain:
                continue
            if rule.key in spared or not rule.hardline and (quiet or (cleanup and rule.key in _CLEANUP_KEYS)):
                continue
            if rx.match(line):
                self.add(rule.key, rule.description, rule.hardline)
        if u.mass_glob and not quiet:
            self.add("glob_delete", "delete every file of a directory (rm DIR/*, rm ~/.*)")

    def _spared(self, u: Unwrapped, env: ShellEnv | None = None) -> tuple[str, ...]:
        """Rule keys that do not apply given what the command is pointed at (argsem.py)."""
        resolve = self._resolve or (lambda p: p)
        if u.name in ("mkfs", "mke2fs", "mkdosfs", "mkntfs", "mkexfatfs") and argsem.mkfs_on_file(u, resolve):
            return ("mkfs",)
        if u.name == "shred" and argsem.shred_local(u, resolve):
            return ("secure_delete",)
        if u.name in _IMAGE_TOOLS and argsem.image_file(u, resolve):
            return ("disk_partition", "wipe_raw_disk")
        if u.name == "kill" and argsem.pgrep_specific(u):
            return ("kill_pgrep",)
        if argsem.own_jobs(u):
            return ("force_kill",)
        if argsem.pkill_specific(u) or argsem.started_here(u, env):
            return ("kill_by_name",)
        if argsem.user_unit(u):
            return ("service_control",)
        return ()

    def _builtins(self, args: list, redirects: list, env: ShellEnv, depth: int) -> None:
        """Shell builtins that change what later commands mean (export, alias, unset, for, read)."""
        while args and args[0] in ("while", "until", "if", "!", "do", "then"):
            args = args[1:]
        name = args[0] if args else ""
        if name in ("declare", "local", "typeset") and any(a.startswith("-") and "n" in a for a in args[1:]):
            for a in args[1:]:  # a nameref: its value is another variable's, whatever that holds later
                env.vars.pop(a.partition("=")[0], None)
        elif name in ("export", "declare", "local", "readonly", "typeset"):
            self._assign([a for a in args[1:] if ASSIGN_WORD.match(a)], env)
            if name == "export":  # export LD_PRELOAD=/tmp/x.so, export PROMPT_COMMAND='...': every later program
                probe = Unwrapped()
                for a in args[1:]:
                    program_variable(a.partition("=")[0], a.partition("=")[2], probe)
                for key, description, hard in probe.findings:
                    self.add(key, description, hard)
                for text, _ in probe.payloads:  # a value naming a program by a variable (`$PWD/x.sh`) is judged
                    before = len(self.findings)  # when a program runs it (state.hook_lines reads the file then)
                    self.text(text, depth + 1, env=env.child())
                    if any(f[0] == "dynamic_command" for f in self.findings[before:]):
                        self.findings[before:] = [f for f in self.findings[before:] if f[0] != "dynamic_command"]
                        self._keys.discard("dynamic_command")
        elif name == "alias":
            for a in args[1:]:
                alias, eq, value = a.partition("=")
                if eq:
                    env.aliases[alias] = value
                    self.text(value, depth + 1, env=env.child())  # a later call of the same shell may use it
        elif name == "unset":
            for var in args[1:]:
                env.vars.pop(var, None)
                if var in _HISTORY_VARS:
                    self.add(*HISTORY_WIPE)
        elif name == "set" and "history" in args and "+o" in args:
            self.add(*HISTORY_WIPE)
        elif name == "set" and "--" in args:  # set -- a b: the positional parameters
            values = args[args.index("--") + 1:]
            env.vars.update({str(k): v for k, v in enumerate(values[:9], 1)})
            env.vars.update({"@": " ".join(values), "*": " ".join(values), "#": str(len(values))})
        elif name in ("for", "select") and len(args) >= 3 and args[2] == "in":
            env.vars[args[1]] = " ".join(args[3:])
        elif name in ("for", "select") and len(args) >= 2:  # `for f; do`: over the positional parameters
            env.vars[args[1].rstrip(";")] = env.vars.get("@", "")
        elif name == "read":
            here = next((t for op, t in redirects if op == "<<<"), None)
            names = [a for a in args[1:] if not a.startswith("-")]
            if names:  # without a here-string: one line of input at a time, any of many (`while read f`)
                env.vars[names[-1]] = here if here is not None else "*"

    def _git_push(self, u: Unwrapped, env: ShellEnv) -> None:
        """Pushes to a destination the repository was not set up with (gitpush.py)."""
        if inert(u):
            return
        found = gitpush.push_target(u.args, env.remotes)
        if found:
            self.add(*found)
        gitpush.track(u.args, env.remotes)

    def _track_cwd(self, u: Unwrapped, env: ShellEnv) -> None:
        """Follow `cd`/`pushd` so that `cd / && rm -rf *` is judged like `rm -rf /*`."""
        if u.name in ("cd", "pushd"):
            target = next((a for a in u.args if not a.startswith("-") or a == "-"), "~")
            if target == "-" or "$" in target:
                env.cwd = None
            elif target.startswith(("/", "~")):
                env.cwd = norm_path(target)
            elif env.cwd:
                env.cwd = norm_path(posixpath.join(env.cwd, target))
        elif u.name == "popd":
            env.cwd = None
        elif u.name == "rm" and env.cwd:
            args = [a if a.startswith(("-", "/", "~", "$")) else norm_path(posixpath.join(env.cwd, a)) for a in u.args]
            if args != u.args:
                self._rules(Unwrapped(name="rm", args=args, chain=list(u.chain)))

    def _dynamic_name(self, u: Unwrapped) -> None:
        if u.raw_name in ("$@", "$*") or (len(u.raw_name) == 2 and u.raw_name[1].isdigit()):
            return  # a function's own arguments, unknown where it is defined: its calls are scanned with them
        if not u.args and "$" in u.raw_name:
            self.add("dynamic_command", "the whole command comes from a variable or substitution and cannot be inspected")
            return
        shadow = Scanner()
        shadow._rules(unwrap(["rm", *u.args], [None] * (len(u.args) + 1)))
        if shadow.findings:
            hard = any(h for _, _, h in shadow.findings)
            self.add("dynamic_command", "command name computed at run time with destructive-looking arguments", hard)

    # -- words --------------------------------------------------------------------------------------

    @staticmethod
    def _resolve_words(words: list, env: ShellEnv) -> tuple[list, list]:
        args: list[str] = []
        objs: list = []
        assigning = True
        for w in words:
            if assigning and ASSIGN_WORD.match(w.text):
                fields = [expand_text(w, env)]
            else:
                assigning = False
                fields = expand_word(w, env)
            args.extend(fields)
            objs.extend([w] * len(fields))
        return args, objs

    def _assign(self, assignments: list, env: ShellEnv) -> None:
        for a in assignments:
            m = ASSIGN_WORD.match(a)
            if not m:
                continue
            name, append, value = m.groups()
            env.vars[name] = env.vars.get(name, "") + value if append else value
            risky = risky_variable(name, value)
            if risky:
                self.add(*risky)
            if name in _HISTORY_VARS and value in ("", "0", "/dev/null"):
                self.add(*HISTORY_WIPE)
