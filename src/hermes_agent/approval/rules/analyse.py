"""The scanner: walks every simple command of a text (and of every payload, substitution and
heredoc inside it) and records findings from the pattern table, write targets and pipelines."""

from __future__ import annotations

import posixpath
import re
from dataclasses import dataclass, field
from functools import cache

from hermes_agent.approval.rules import interp
from hermes_agent.approval.rules.canonical import SHELLS, Unwrapped, basename
from hermes_agent.approval.rules.effects import WRITE_OPS, arg_targets, decodes, download_targets
from hermes_agent.approval.rules.lexer import SUB, VAR, Simple, Word, decode_ansi_c, lex, parse
from hermes_agent.approval.rules.table import DANGEROUS_RULES, HARDLINE_RULES, SQL_CONTEXT, TEXT_RULES
from hermes_agent.approval.rules.targets import classify_path, norm_path
from hermes_agent.approval.rules.unwrap import unwrap

MAX_DEPTH = 8
MAX_TEXTS = 96
DOWNLOADERS = frozenset({"curl", "wget", "fetch", "http", "https", "xh", "aria2c", "lwp-request", "lwp-download", "get",
                         "nc", "ncat", "netcat", "socat", "curlie", "httpie"})
_ASSIGN = re.compile(r"([A-Za-z_]\w*)\+?=(.*)\Z", re.S)
_VAR_RX = re.compile(VAR + r"([^" + VAR + r"=]*)(?:=([^" + VAR + r"]*))?" + VAR)
_BRACES = re.compile(r"\{([^{}\s]*,[^{}\s]*)\}\Z")
_CHMOD_X = re.compile(r"(?:[ugoa]*\+[rwxXst]*x[rwxXst]*|0?[0-7]?[1357][0-7]{2})\Z")
_STDIN_OPS = frozenset({"<<", "<<-", "<<<"})
_SOURCES = frozenset({"source", ".", "eval"})


@dataclass(slots=True)
class Cmd:
    """What the pipeline checks need to know about one canonical command."""

    name: str
    args: list
    stdin_code: bool = False
    lang: str | None = None
    downloads: bool = False
    decodes: bool = False
    literal: str | None = None  # what echo/printf/cat<<EOF writes to stdout


@dataclass(slots=True)
class _Env:
    vars: dict = field(default_factory=dict)
    aliases: dict = field(default_factory=dict)
    chmodded: set = field(default_factory=set)
    downloaded: set = field(default_factory=set)
    files: dict = field(default_factory=dict)  # file name -> text an earlier command wrote into it
    cwd: str | None = None  # directory set by an earlier cd in the same text, when it is knowable


@cache
def _index() -> tuple[dict, list]:
    by_name: dict[str, list] = {}
    for rule in HARDLINE_RULES + DANGEROUS_RULES:
        for name in rule.names:
            by_name.setdefault(name, []).append((rule, re.compile(rule.pattern)))
    texts = []
    for rule in TEXT_RULES:
        exact = re.compile(rule.pattern, re.M)
        folded = re.compile(rule.pattern, re.M | re.I)
        texts.append((rule, exact, folded))
    return by_name, texts


@cache
def _sql_context() -> re.Pattern:
    return re.compile(SQL_CONTEXT, re.I)


class Scanner:
    """Collects findings (key, description, hardline) for one command; `views` for deny rules."""

    def __init__(self, views: bool = False) -> None:
        self.findings: list[tuple[str, str, bool]] = []
        self._keys: set[str] = set()
        self.views: list[str] | None = [] if views else None
        self.texts = 0
        self.top_commands = 0
        self.top_compound = False

    def add(self, key: str, description: str, hardline: bool = False) -> None:
        """Record a finding once per key."""
        if key not in self._keys:
            self._keys.add(key)
            self.findings.append((key, description, hardline))

    def text(self, text: str, depth: int = 0, conservative: bool = False) -> set[str]:
        """Scan shell text; returns traits (command names, "@download", "@decode") of what it runs."""
        self.texts += 1
        if depth > MAX_DEPTH or self.texts > MAX_TEXTS:
            self.add("nesting_limit", "command nested too deeply to inspect")
            return set()
        tokens, error = lex(text)
        if error and not conservative:
            stripped = text.replace('"', "").replace("'", "").replace("\\", "").replace("`", " ")
            self.text(stripped, depth + 1, conservative=True)
        self.text_rules(text)
        traits: set[str] = set()
        env = _Env()
        statements = parse(tokens)
        if depth == 0 and not conservative:
            self._note_structure(statements, error)
        for statement in statements:
            cmds = [(simple, self._simple(simple, env, depth, traits)) for simple in statement]
            self._pipeline(cmds, depth)
        return traits

    def text_rules(self, text: str) -> None:
        """Apply the whole-text rules (fork bombs, SQL)."""
        lower = text.lower()
        context = None
        for rule, exact, folded in _index()[1]:
            if not any(n in lower for n in rule.needles):
                continue
            if rule.sql:
                if context is None:
                    context = bool(_sql_context().search(text))
                if rule.sql == "only" and not context:
                    continue
            rx = folded if (rule.sql and context) else exact
            if rx.search(text):
                self.add(rule.key, rule.description, rule.hardline)

    def _note_structure(self, statements: list, error: bool) -> None:
        simples = [s for st in statements for s in st]
        self.top_commands = len(simples)
        self.top_compound = error or len(simples) > 1 or any(
            s.redirects or any(w.subs for w in s.words) for s in simples)

    # -- one simple command -------------------------------------------------------------------------

    def _simple(self, simple: Simple, env: _Env, depth: int, traits: set) -> Cmd | None:
        sub_traits: dict[int, set] = {}
        for w in (*simple.words, *(t for _, t in simple.redirects)):
            if w.subs:
                acc: set[str] = set()
                for _kind, inner in w.subs:
                    acc |= self.text(inner, depth + 1)
                sub_traits[id(w)] = acc
        args, words = self._resolve_words(simple.words, env)
        if args and all(_ASSIGN.match(a) for a in args):
            self._assign(args, env)
            return None
        if args and args[0] in ("export", "declare", "local", "readonly", "typeset"):
            self._assign([a for a in args[1:] if _ASSIGN.match(a)], env)
        elif args and args[0] == "alias":
            for a in args[1:]:
                name, eq, value = a.partition("=")
                if eq:
                    env.aliases[name] = value
                    self.text(value, depth + 1)  # an alias may be used by a later call of the same shell
        first = next((w for w in simple.words if not _ASSIGN.match(w.text)), None)
        if first is not None and first.subs:
            self._check_sources(sub_traits.get(id(first)), "command substitution")
        u = unwrap(args, words)
        redirects = [(op, self._resolve(w, env)) for op, w in simple.redirects]
        return self._process(u, redirects, simple.redirects, sub_traits, env, depth, traits)

    def _process(self, u: Unwrapped, redirects: list, raw_redirects: list, sub_traits: dict, env: _Env,
                 depth: int, traits: set) -> Cmd | None:
        if self.views is not None:
            self.views.extend(u.views)
        for key, description, hard in u.findings:
            self.add(key, description, hard)
        for text, w in u.payloads:
            self.text(text, depth + 1)
            self._check_sources(sub_traits.get(id(w)) if w is not None else None, "command substitution")
        for argv, via in u.commands:
            inner = unwrap(argv, [None] * len(argv))
            inner.chain.insert(0, via)
            self._process(inner, [], [], {}, env, depth + 1, traits)
        if not u.name:
            self._writes(u, redirects)
            return None
        if u.name in env.aliases:
            self.text(" ".join([env.aliases[u.name], *u.args]), depth + 1)
        self._rules(u)
        self._track_cwd(u, env)
        self._writes(u, redirects)
        if u.code:
            interp.scan_code(self, u.code[0], u.code[1], depth + 1)
        self._chmod_exec(u, env)
        cmd = self._describe(u)
        self._stdin_feeds(u, cmd, raw_redirects, redirects, sub_traits, depth)
        self._scripts(u, cmd, redirects, env, depth)
        if u.name in SHELLS or u.name in _SOURCES or interp.language(u.name):
            for w in u.words:
                if w is not None and any(kind == "<(" for kind, _ in w.subs):
                    self._check_sources(sub_traits.get(id(w)), "process substitution")
        if any(ch in u.raw_name for ch in "$`*?["):
            self._dynamic_name(u)
        traits.add(u.name)
        if cmd.downloads:
            traits.add("@download")
        if cmd.decodes:
            traits.add("@decode")
        return cmd

    def _rules(self, u: Unwrapped) -> None:
        rules = _index()[0].get(u.name)
        if not rules:
            return
        line = " ".join([u.name, *u.args])
        for rule, rx in rules:
            if rule.via and rule.via not in u.chain:
                continue
            if rx.match(line):
                self.add(rule.key, rule.description, rule.hardline)

    def _track_cwd(self, u: Unwrapped, env: _Env) -> None:
        """Follow `cd` so that `cd / && rm -rf *` is judged like `rm -rf /*`."""
        if u.name in ("cd", "pushd"):
            target = next((a for a in u.args if not a.startswith("-") or a == "-"), "~")
            if target == "-" or "$" in target:
                env.cwd = None
            elif target.startswith(("/", "~")):
                env.cwd = norm_path(target)
            elif env.cwd:
                env.cwd = norm_path(posixpath.join(env.cwd, target))
        elif u.name == "rm" and env.cwd:
            args = [a if a.startswith(("-", "/", "~", "$")) else norm_path(posixpath.join(env.cwd, a)) for a in u.args]
            if args != u.args:
                self._rules(Unwrapped(name="rm", args=args, chain=list(u.chain)))

    def _check_sources(self, sources: set | None, how: str) -> None:
        if not sources:
            return
        if "@download" in sources or sources & DOWNLOADERS:
            self.add("remote_exec", f"run remote content via {how} (e.g. bash <(curl ...), $(curl ...))")
        if "@decode" in sources:
            self.add("decoded_exec", f"run decoded content via {how} (base64 -d, xxd -r, openssl...)")

    def _dynamic_name(self, u: Unwrapped) -> None:
        if not u.args and "$" in u.raw_name:
            self.add("dynamic_command", "the whole command comes from a variable or substitution and cannot be inspected")
            return
        shadow = Scanner()
        shadow._rules(unwrap(["rm", *u.args], [None] * (len(u.args) + 1)))
        if shadow.findings:
            hard = any(h for _, _, h in shadow.findings)
            self.add("dynamic_command", "command name computed at run time with destructive-looking arguments", hard)

    # -- words --------------------------------------------------------------------------------------

    def _resolve(self, w: Word, env: _Env) -> str:
        text = w.text
        if VAR in text:
            text = _VAR_RX.sub(lambda m: _lookup(env, m.group(1), m.group(2)), text)
        if SUB in text:
            subs = iter(inner for kind, inner in w.subs if kind in ("$(", "`"))
            text = "".join(_render_sub(next(subs, "")) if part == SUB else part for part in re.split("(" + SUB + ")", text))
        return text

    def _resolve_words(self, words: list, env: _Env) -> tuple[list, list]:
        args: list[str] = []
        objs: list = []
        for w in words:
            text = self._resolve(w, env)
            m = None if w.quoted else _BRACES.match(text)
            if m and text.startswith("{"):
                parts = m.group(1).split(",")
                args.extend(parts)
                objs.extend([w] * len(parts))
            elif not args and (" " in text or "\t" in text) and (VAR in w.text or SUB in w.text):
                parts = text.split()
                args.extend(parts)
                objs.extend([w] * len(parts))
            else:
                args.append(text)
                objs.append(w)
        return args, objs

    @staticmethod
    def _assign(assignments: list, env: _Env) -> None:
        for a in assignments:
            m = _ASSIGN.match(a)
            if m:
                env.vars[m.group(1)] = m.group(2)

    # -- effects ------------------------------------------------------------------------------------

    def _writes(self, u: Unwrapped, redirects: list) -> None:
        targets = [t for op, t in redirects if op in WRITE_OPS or (op == ">&" and not t.isdigit() and t != "-")]
        for op, t in redirects:
            if op in ("<", "<&", "<>") and t.startswith(("/dev/tcp/", "/dev/udp/")):
                targets.append(t)
        targets.extend(arg_targets(u))
        for t in targets:
            cls = classify_path(t)
            if cls:
                self.add(*cls)

    def _chmod_exec(self, u: Unwrapped, env: _Env) -> None:
        if u.name == "chmod":
            operands = [a for a in u.args if not a.startswith("-")]
            if len(operands) >= 2 and _CHMOD_X.match(operands[0]):
                env.chmodded.update(basename(p).lower() for p in operands[1:])
        elif env.chmodded and basename(u.raw_name).lower() in env.chmodded:
            self.add("chmod_exec", "chmod +x followed by running the file")
        elif env.chmodded and u.name in SHELLS and u.args and basename(u.args[-1]).lower() in env.chmodded:
            self.add("chmod_exec", "chmod +x followed by running the file")

    def _scripts(self, u: Unwrapped, cmd: Cmd, redirects: list, env: _Env, depth: int) -> None:
        """Files written or downloaded earlier in the same text and then run: check what they contain."""
        if cmd.downloads:
            env.downloaded.update(download_targets(u, redirects))
            return
        if cmd.literal is not None:
            for op, target in redirects:
                if op in WRITE_OPS:
                    env.files[basename(target).lower()] = cmd.literal
        if not (env.downloaded or env.files):
            return
        lang = interp.language(u.name)
        ran = {basename(u.raw_name).lower()}
        if u.name in SHELLS or u.name in _SOURCES or lang:
            ran.update(basename(a).lower() for a in u.args[:1] if not a.startswith("-"))
        if ran & env.downloaded:
            self.add("remote_exec", "run a script just downloaded (curl -o x && sh x)")
        for name in ran & env.files.keys():
            self._feed(Cmd(u.name, u.args, lang=lang), env.files.pop(name), depth)

    def _describe(self, u: Unwrapped) -> Cmd:
        name, args = u.name, u.args
        cmd = Cmd(name, args, stdin_code=u.stdin_code, downloads=name in DOWNLOADERS)
        if u.code is None and u.stdin_code and name not in SHELLS:
            cmd.lang = interp.language(name)
        elif u.code is not None:
            cmd.lang = u.code[0]
        cmd.decodes = decodes(name, args)
        if name == "echo":
            cmd.literal = " ".join(a for a in args if a not in ("-n", "-e", "-E", "-ne", "-en"))
        elif name == "printf" and args:
            cmd.literal = decode_ansi_c(args[0]).replace("%s", " ".join(args[1:]))
        return cmd

    def _stdin_feeds(self, u: Unwrapped, cmd: Cmd, raw: list, resolved: list, sub_traits: dict, depth: int) -> None:
        for (op, w), (_, text) in zip(raw, resolved, strict=False):
            if op not in _STDIN_OPS and not (op == "<" and any(k == "<(" for k, _ in w.subs)):
                continue
            if u.name == "cat" and op != "<":
                cmd.literal = text
            if not cmd.stdin_code:
                continue
            if op in ("<<", "<<-") and u.name in SHELLS:
                self.add("heredoc_shell", "shell commands run from a heredoc")
            self._check_sources(sub_traits.get(id(w)), "redirection into an interpreter")
            if op != "<":
                self._feed(cmd, text, depth)

    def _feed(self, sink: Cmd, text: str, depth: int) -> None:
        if sink.lang:
            interp.scan_code(self, sink.lang, text, depth + 1)
        else:
            self.text(text, depth + 1)

    def _pipeline(self, cmds: list, depth: int) -> None:
        for idx, (simple, sink) in enumerate(cmds):
            if sink is None or not simple.pipe_in or not sink.stdin_code:
                continue
            upstream = [c for _, c in cmds[:idx] if c is not None]
            if any(c.downloads for c in upstream):
                self.add("remote_pipe_shell", "pipe remote content to a shell or interpreter (curl | sh)")
            if any(c.decodes for c in upstream):
                self.add("decoded_pipe_shell", "pipe decoded content to a shell (base64 -d | sh)")
                for c in upstream:
                    if c.literal:
                        decoded = interp.try_decode(c.literal)
                        if decoded:
                            self._feed(sink, decoded, depth)
            for c in upstream:
                if c.literal and not c.decodes:
                    self._feed(sink, c.literal, depth)


def _lookup(env: _Env, name: str, default: str | None) -> str:
    if name in env.vars:
        return env.vars[name]
    if name == "HOME":
        return "~"
    return default if default is not None else "$" + name


def _render_sub(inner: str) -> str:
    tokens, error = lex(inner)
    statements = parse(tokens) if not error else []
    if len(statements) == 1 and len(statements[0]) == 1:
        words = statements[0][0].words
        if words and words[0].text in ("echo", "printf") and not any(w.subs or VAR in w.text for w in words):
            out = [w.text for w in words[1:] if w.text not in ("-n", "-e")]
            return decode_ansi_c(" ".join(out)) if words[0].text == "printf" else " ".join(out)
    return "$(" + " ".join(inner.split()) + ")"
