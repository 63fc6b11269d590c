"""A small, total bash lexer: text -> statements of simple commands (quotes, escapes, $(), backticks,
<(), heredocs, ${VAR:-x}, $'..'). It never raises; malformed input sets `error` on the result."""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass, field

from hermes_agent.approval.rules.lazyre import lazy

# Expansion markers inside a word's text (control characters are stripped from input, so they cannot clash):
# VAR/QVAR + raw parameter body ("HOME", "X:+rm", "x:1:2") + END for an unquoted/quoted $NAME or ${...};
# SUB/QSUB + index into Word.subs + END for an unquoted/quoted $(...) or `...`.
VAR = "\x00"
SUB = "\x01"
QVAR = "\x02"
END = "\x03"
QSUB = "\x04"
MARKERS = VAR + SUB + QVAR + QSUB

_ANSI = lazy(r"\x1b(?:\[[0-?]*[ -/]*[@-~]|\][^\x07\x1b]*(?:\x07|\x1b\\)?|[@-Z\\-_])")
_CTRL = lazy(r"[\x00-\x08\x0b-\x1f\x7f]")
_PLAIN = lazy(r"[^\s'\"\\$`;&|<>()]+")
_DQ_PLAIN = lazy(r"[^\"\\$`]+")
_NAME = lazy(r"[A-Za-z_]\w*")
_ANSI_C = lazy(r"\\(x[0-9a-fA-F]{1,2}|u[0-9a-fA-F]{1,4}|U[0-9a-fA-F]{1,8}|[0-7]{1,3}|c.|.)", re.S)
_PRINTF_HOLE = lazy(r"%[-+ #0]*\d*(?:\.\d+)?([sbdqcixXfgeEu])")
_OCTAL0 = lazy(r"\\0([0-7]{1,3})")
_C_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "a": "\a", "b": "\b", "e": "\x1b", "E": "\x1b", "f": "\f", "v": "\v"}
_OPS = ("&>>", "<<<", "<<-", ";;&", "&&", "||", "|&", ";;", ";&", ">>", "<<", "&>", ">&", "<&", "<>", ">|",
        ";", "&", "|", "<", ">", "(", ")")
REDIRECTS = frozenset({">", ">>", "<", "<<", "<<-", "<<<", "&>", "&>>", ">&", "<&", "<>", ">|"})
_TOP_SEPARATORS = frozenset({";", "&", "&&", "||", "\n", ";;", ";&", ";;&"})


def clean(text: str) -> str:
    """Strip ANSI escapes, NUL/control characters and zero-width marks; fold fullwidth forms (NFKC)."""
    if "\x1b" in text:
        text = _ANSI.sub("", text)
    if not text.isascii():
        text = unicodedata.normalize("NFKC", text)
        text = "".join(ch for ch in text if ch in "\t\n" or unicodedata.category(ch)[0] != "C")
    return _CTRL.sub("", text)


def decode_ansi_c(body: str) -> str:
    """Decode the escapes of bash $'...' quoting (also used for printf format strings)."""

    def repl(m: re.Match) -> str:
        esc = m.group(1)
        head = esc[0]
        if head in "xuU" and len(esc) > 1:  # `\x` with no digits is a plain x
            code = int(esc[1:], 16)
            return chr(code) if code < 0x110000 else ""
        if head in "01234567":
            return chr(int(esc, 8))
        if head == "c" and len(esc) > 1:
            return chr(ord(esc[1]) & 0x1F)
        return _C_ESCAPES.get(esc, esc)

    return _ANSI_C.sub(repl, body)


def printf_text(args: list) -> str:
    """What `printf FORMAT ARGS...` prints: %s and %b take the arguments in turn (%b decodes its argument's escapes,
    `\\0NNN` octal included) and the format repeats while arguments remain, as bash does; other conversions print
    their argument as is."""
    if args[:1] == ["--"] and len(args) > 1:  # `printf -- FORMAT`: the end of options, not the format
        args = args[1:]
    fmt, values = decode_ansi_c(args[0]), list(args[1:])
    holes = _PRINTF_HOLE.findall(fmt)
    if not holes:
        return fmt

    def fill(m: re.Match) -> str:
        if not values:
            return ""
        value = values.pop(0)
        return decode_ansi_c(_OCTAL0.sub(r"\\\1", value)) if m.group(1) == "b" else value

    out = _PRINTF_HOLE.sub(fill, fmt)
    for _ in range(64):
        if not values:
            break
        out += _PRINTF_HOLE.sub(fill, fmt)
    return out


@dataclass(slots=True)
class Word:
    """One shell word: `text` with quotes removed; `subs` holds (kind, inner text) substitutions."""

    text: str = ""
    subs: list = field(default_factory=list)
    quoted: bool = False
    brace: bool = False  # an unquoted `{` occurs (brace expansion may apply)


@dataclass(slots=True)
class Simple:
    """A simple command: words, redirections (op, target word) and whether stdin is a pipe."""

    words: list = field(default_factory=list)
    redirects: list = field(default_factory=list)
    pipe_in: bool = False
    func: str | None = None  # the function whose body this command belongs to
    background: bool = False  # ended by `&`: started, not waited for


class _Lexer:
    def __init__(self, s: str) -> None:
        self.s, self.i, self.n = s, 0, len(s)
        self.error = False
        self.tokens: list = []
        self.pending: list = []  # heredocs waiting for the end of the line: (delimiter, strip_tabs, word)

    def run(self) -> list:
        s, n = self.s, self.n
        while self.i < n:
            c = s[self.i]
            if c in " \t":
                self.i += 1
            elif c == "\n":
                self.tokens.append("\n")
                self.i += 1
                if self.pending:
                    self._heredoc_bodies()
            elif c == "#":
                end = s.find("\n", self.i)
                self.i = n if end < 0 else end
            elif c in "<>" and s.startswith("(", self.i + 1):
                self.tokens.append(self._word())
            elif c in ";&|<>()":
                self._operator()
            else:
                word = self._word()
                if (self.i < n and s[self.i] in "<>" and word.text.isdigit() and not word.quoted
                        and not s.startswith("(", self.i + 1)):
                    continue  # a file-descriptor number such as the 2 of 2>&1
                self.tokens.append(word)
        if self.pending:
            self._heredoc_bodies()
        return self.tokens

    def _operator(self) -> None:
        for op in _OPS:
            if self.s.startswith(op, self.i):
                self.i += len(op)
                self.tokens.append(op)
                if op in ("<<", "<<-"):
                    self._heredoc_start(op)
                return

    def _heredoc_start(self, op: str) -> None:
        while self.i < self.n and self.s[self.i] in " \t":
            self.i += 1
        delim = self._word()
        body = Word(quoted=delim.quoted)
        self.tokens.append(body)
        self.pending.append((delim.text, op == "<<-", body))

    def _heredoc_bodies(self) -> None:
        for delim, strip_tabs, body in self.pending:
            lines = []
            while self.i < self.n:
                end = self.s.find("\n", self.i)
                end = self.n if end < 0 else end
                line = self.s[self.i:end]
                self.i = end + 1
                if (line.lstrip("\t") if strip_tabs else line) == delim:
                    break
                lines.append(line)
            text = "\n".join(lines)
            if body.quoted:
                body.text = text
            else:
                inner = _Lexer(text)
                parts: list[str] = []
                inner._dquote(body, parts, terminator=None)
                body.text = "".join(parts)
                self.error |= inner.error
        self.pending = []
        self.i = min(self.i, self.n)

    def _word(self) -> Word:
        s, n = self.s, self.n
        w = Word()
        parts: list[str] = []
        while self.i < n:
            c = s[self.i]
            if c in " \t\n;&|()":
                break
            if c in "<>":
                if not s.startswith("(", self.i + 1):
                    break
                inner = self._balanced(self.i + 2)
                w.subs.append((c + "(", inner))
                parts.append("/dev/fd/63")
                continue
            m = _PLAIN.match(s, self.i)
            if m:
                parts.append(m.group())
                self.i = m.end()
                w.brace = w.brace or "{" in m.group()
            elif c == "\\":
                if self.i + 1 < n and s[self.i + 1] != "\n":
                    parts.append(s[self.i + 1])
                self.i += 2
                w.quoted = True
            elif c == "'":
                end = s.find("'", self.i + 1)
                if end < 0:
                    self.error, end = True, n
                parts.append(s[self.i + 1:end])
                self.i = end + 1
                w.quoted = True
            elif c == '"':
                self.i += 1
                self._dquote(w, parts)
                w.quoted = True
            elif c == "$":
                self._dollar(w, parts, in_dq=False)
            else:  # backtick
                self._backtick(w, parts, in_dq=False)
        w.text = "".join(parts)
        return w

    def _dquote(self, w: Word, parts: list[str], terminator: str | None = '"') -> None:
        s, n = self.s, self.n
        while self.i < n:
            c = s[self.i]
            m = _DQ_PLAIN.match(s, self.i)
            if m:
                parts.append(m.group())
                self.i = m.end()
            elif c == '"':
                self.i += 1
                if terminator:
                    return
                parts.append('"')
            elif c == "\\":
                nxt = s[self.i + 1] if self.i + 1 < n else ""
                if nxt and nxt != "\n":  # inside "...", a backslash only escapes $ ` " \\ and newline
                    parts.append(nxt if nxt in '$`"\\' else "\\" + nxt)
                self.i += 2
            elif c == "$":
                self._dollar(w, parts, in_dq=True)
            else:
                self._backtick(w, parts, in_dq=True)
        if terminator:
            self.error = True

    def _dollar(self, w: Word, parts: list[str], in_dq: bool) -> None:
        """Handle one `$` expansion (a marker is left in the text for the evaluator)."""
        s, i = self.s, self.i
        nxt = s[i + 1] if i + 1 < self.n else ""
        if nxt == "(":
            if s.startswith("((", i + 1):
                self._balanced(i + 3)
                if self.i < self.n and s[self.i] == ")":
                    self.i += 1
                parts.append("0")
                return
            inner = self._balanced(i + 2)
            w.subs.append(("$(", inner))
            parts.append(f"{QSUB if in_dq else SUB}{len(w.subs) - 1}{END}")
        elif nxt == "{":
            parts.append(f"{QVAR if in_dq else VAR}{self._brace_body()}{END}")
        elif nxt == "'" and not in_dq:
            end = i + 2
            while end < self.n and s[end] != "'":
                end += 2 if s[end] == "\\" else 1
            if end >= self.n:
                self.error = True
            parts.append(decode_ansi_c(s[i + 2:end]))
            self.i = end + 1
            w.quoted = True
        elif nxt == '"' and not in_dq:
            self.i = i + 2
            self._dquote(w, parts)
            w.quoted = True
        elif (m := _NAME.match(s, i + 1)) or (nxt and nxt in "@*#?$!-0123456789"):
            name = m.group() if m else nxt
            self.i = m.end() if m else i + 2
            parts.append(f"{QVAR if in_dq else VAR}{name}{END}")
        else:
            parts.append("$")
            self.i = i + 1

    def _brace_body(self) -> str:
        s, depth, j = self.s, 0, self.i + 1
        while j < self.n:
            if s[j] == "{":
                depth += 1
            elif s[j] == "}":
                depth -= 1
                if depth == 0:
                    break
            j += 1
        if j >= self.n:
            self.error = True
        body = s[self.i + 2:j]
        self.i = j + 1
        return "".join(ch for ch in body if ch not in MARKERS + END)

    def _backtick(self, w: Word, parts: list[str], in_dq: bool) -> None:
        s, j = self.s, self.i + 1
        buf: list[str] = []
        while j < self.n and s[j] != "`":
            if s[j] == "\\" and j + 1 < self.n:
                buf.append(s[j + 1])
                j += 2
                continue
            buf.append(s[j])
            j += 1
        if j >= self.n:
            self.error = True
        self.i = j + 1
        w.subs.append(("`", "".join(buf)))
        parts.append(f"{QSUB if in_dq else SUB}{len(w.subs) - 1}{END}")

    def _balanced(self, start: int) -> str:
        """Text up to the `)` matching an opening paren just before `start`; moves past it."""
        s, n, depth, j = self.s, self.n, 1, start
        while j < n:
            c = s[j]
            if c == "\\":
                j += 2
                continue
            if c == "'" or c == '"':
                end = j + 1
                while end < n and s[end] != c:
                    end += 2 if (c == '"' and s[end] == "\\") else 1
                j = end + 1
                continue
            if c == "(":
                depth += 1
            elif c == ")":
                depth -= 1
                if depth == 0:
                    self.i = j + 1
                    return s[start:j]
            j += 1
        self.error = True
        self.i = n
        return s[start:]


def lex(text: str) -> tuple[list, bool]:
    """Tokens (Word objects and operator strings) and whether the text was malformed."""
    lexer = _Lexer(text)
    tokens = lexer.run()
    return tokens, lexer.error


class _Parser:
    """Groups tokens into statements; records which commands form the body of a function."""

    def __init__(self) -> None:
        self.statements: list[list[Simple]] = []
        self.current: list[Simple] = []
        self.cmd = Simple()
        self.depth = 0
        self.pending_fn: str | None = None  # `function NAME` or `NAME ()` seen, body not yet opened
        self.fn_stack: list[tuple[str, int]] = []  # (function name, depth outside its body)

    def new_cmd(self, pipe_in: bool = False) -> None:
        if self.cmd.words or self.cmd.redirects:
            self.current.append(self.cmd)
        self.cmd = Simple(pipe_in=pipe_in, func=self.fn_stack[-1][0] if self.fn_stack else None)

    def open_group(self) -> None:
        if self.pending_fn:
            self.fn_stack.append((self.pending_fn, self.depth))
            self.pending_fn = None
            self.cmd.func = self.fn_stack[-1][0]
        self.depth += 1

    def close_group(self) -> None:
        self.depth = max(0, self.depth - 1)
        if self.fn_stack and self.fn_stack[-1][1] == self.depth:
            self.fn_stack.pop()

    def word(self, tok: Word, redirect: str | None, nxt: object) -> None:
        cmd = self.cmd
        if redirect:
            cmd.redirects.append((redirect, tok))
            return
        if not cmd.words and not tok.quoted and tok.text in ("{", "}"):
            if tok.text == "{":
                self.open_group()
            else:
                self.close_group()
            return
        if not cmd.words and not tok.quoted and tok.text == "function" and isinstance(nxt, Word):
            self.pending_fn = ""
            return
        if self.pending_fn == "" and not cmd.words:
            self.pending_fn = tok.text
            return
        cmd.words.append(tok)

    def operator(self, tok: str, nxt: object) -> bool:
        """Handle an operator; returns True when the next token (`)` of `NAME ()`) is consumed."""
        cmd = self.cmd
        if tok == "(" and nxt == ")" and (self.pending_fn or (len(cmd.words) == 1 and not cmd.redirects)):
            if not self.pending_fn:
                self.pending_fn = cmd.words[0].text
                cmd.words = []
            return True
        if tok == "&":
            cmd.background = True
        self.new_cmd(pipe_in=tok in ("|", "|&"))
        if tok != "\n" and tok != "(":
            self.pending_fn = None
        if tok == "(":
            self.open_group()
        elif tok == ")":
            self.close_group()
        elif tok in _TOP_SEPARATORS and self.depth == 0 and self.current:
            self.statements.append(self.current)
            self.current = []
        return False


def parse(tokens: list) -> list[list[Simple]]:
    """Group tokens into statements (split at top-level ; & && || newline) of simple commands; the
    commands of a function body carry the function's name in `func`."""
    p = _Parser()
    redirect: str | None = None
    skip = False
    for k, tok in enumerate(tokens):
        if skip:
            skip = False
            continue
        nxt = tokens[k + 1] if k + 1 < len(tokens) else None
        if isinstance(tok, Word):
            p.word(tok, redirect, nxt)
            redirect = None
        elif tok in REDIRECTS:
            redirect = tok
        else:
            redirect = None
            skip = p.operator(tok, nxt)
    p.new_cmd()
    if p.current:
        p.statements.append(p.current)
    return p.statements
