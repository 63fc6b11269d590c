"""Decoding for the skills guard: what a file says once its encodings and string tricks are undone.

Two products. `views(lines)` are whole-file rewrites with the same line count that the line rules
scan again: string literals concatenated (`'ex'+'ec'`, `''.join([...])`), quotes and backslashes
removed (`"rm" "-rf"`, `r\\m`), and simple variables substituted (`d="$HOME/.ss"'h'` then `"$d"`).
`payloads(lines)` are pieces of hidden text with the line they came from: base64, hex, `\\x..`,
octal and `%xx` escapes, `chr()` and char-code lists, ROT13 literals (when the file uses ROT13)
and names that only exist once split literals are joined. Pure functions."""

from __future__ import annotations

import base64
import binascii
import codecs
import re
from dataclasses import dataclass
from urllib.parse import unquote_to_bytes

from hermes_agent import lazyre

_STR = r"""(?:'[^'\\\n]*'|"[^"\\\n]*")"""
_CONCAT = lazyre.compile(rf"({_STR})\s*\+\s*({_STR})")
_TOUCHING = lazyre.compile(rf"({_STR})[ \t]*({_STR})(?![ \t]*[:,])")
_PY_JOIN = lazyre.compile(rf"""(['"])\1\s*\.join\(\s*[\[(]\s*((?:{_STR}\s*,\s*)*{_STR})\s*,?\s*[\])]\s*\)""")
_JS_JOIN = lazyre.compile(rf"""\[\s*((?:{_STR}\s*,\s*)*{_STR})\s*,?\s*\]\s*\.join\(\s*(['"])\2\s*\)""")
_LITERAL = lazyre.compile(_STR)
_SHELL_ASSIGN = lazyre.compile(r"""^\s*(?:export\s+|local\s+|readonly\s+)?([A-Za-z_]\w*)=((?:"[^"\n]*"|'[^'\n]*'|[^\s;&|'"])+)""")
_CODE_ASSIGN = lazyre.compile(r"^\s*(?:const\s+|let\s+|var\s+)?([A-Za-z_]\w*)\s*=(?!=)\s*([^\n;]{1,160}?)\s*;?\s*$")
_B64 = lazyre.compile(r"(?<![A-Za-z0-9+/=_-])[A-Za-z0-9+/_-]{12,}={0,2}(?![A-Za-z0-9+/=_-])")
_HEX_RUN = lazyre.compile(r"(?<![0-9A-Fa-f])(?:[0-9A-Fa-f]{2}){8,}(?![0-9A-Fa-f])")
_ESCAPES = (
    ("hex escapes", re.compile(r"(?:\\x[0-9A-Fa-f]{2}){3,}"), lambda m: bytes.fromhex(m.replace("\\x", ""))),
    ("unicode escapes", re.compile(r"(?:\\u00[0-9A-Fa-f]{2}){3,}"), lambda m: bytes.fromhex(m.replace("\\u00", ""))),
    ("octal escapes", re.compile(r"(?:\\[0-3][0-7]{2}){3,}"),
     lambda m: bytes(int(o, 8) for o in m.split("\\")[1:])),
    ("URL encoding", re.compile(r"(?:%[0-9A-Fa-f]{2}){4,}"), unquote_to_bytes),
)
_CHR_CALL = lazyre.compile(r"\bchr\(\s*(\d{1,3})\s*\)")
_INT_LIST = lazyre.compile(r"[\[(]\s*(\d{1,3}(?:\s*,\s*\d{1,3}){3,})\s*,?\s*[\])]")
_CHAR_CODE_HINT = lazyre.compile(r"\bchr\b|fromCharCode|\bbytes\(|\bbytearray\(|\.pack\(|\bord\b")
_ROT13_HINT = lazyre.compile(r"rot[_-]?13|N-ZA-Mn-za-m|A-Za-z['\"]?\s+['\"]?N-ZA-M", re.I)
# Names an honest script writes whole; written in pieces they are hiding from a scanner.
SENSITIVE_NAMES = frozenset({
    "exec", "eval", "system", "popen", "spawn", "execsync", "execfile", "spawnsync", "child_process",
    "subprocess", "os", "builtins", "__builtins__", "__import__", "compile", "socket", "pty", "import_module",
    "getattr", "rm", "sh", "bash", "curl", "wget", "nc", "base64", ".ssh", "id_rsa", "environ", "ctypes",
    "check_output", "shell", "/bin/sh", "/bin/bash", "marshal", "rm -rf", "dup2",
})


@dataclass(frozen=True, slots=True)
class Payload:
    """Hidden text recovered from one line: how it was hidden and what it says."""

    line: int
    how: str
    text: str


def _inner(lit: str) -> str:
    return lit[1:-1]


def _fold_line(line: str, found: list[str]) -> str:
    def concat(m: re.Match[str]) -> str:
        joined = _inner(m.group(1)) + _inner(m.group(2))
        found.append(joined)
        return m.group(1)[0] + joined + m.group(1)[0]

    def join(m: re.Match[str], group: int) -> str:
        joined = "".join(_inner(s) for s in _LITERAL.findall(m.group(group)))
        found.append(joined)
        return repr(joined)

    for _ in range(32):
        new = _PY_JOIN.sub(lambda m: join(m, 2), line)
        new = _JS_JOIN.sub(lambda m: join(m, 1), new)
        new = _CONCAT.sub(concat, new)
        new = _TOUCHING.sub(concat, new)
        if new == line:
            break
        line = new
    return line


def _dequote(line: str) -> str:
    return re.sub(r"\\(?=[A-Za-z0-9/-])", "", line.replace('"', "").replace("'", ""))


def _assignments(lines: list[str]) -> dict[str, str]:
    out: dict[str, str] = {}
    for line in lines:
        if m := _SHELL_ASSIGN.match(line):
            out["$" + m.group(1)] = _dequote(m.group(2))
        elif m := _CODE_ASSIGN.match(line):
            out[m.group(1)] = m.group(2)
    return out


def _substitute(line: str, names: dict[str, str]) -> str:
    def shell(m: re.Match[str]) -> str:
        return names.get("$" + (m.group(1) or m.group(2)), m.group(0))

    line = re.sub(r"\$\{(\w+)\}|\$(\w+)", shell, line)
    if (m := _CODE_ASSIGN.match(line)) and m.group(1) in names:
        return line  # keep an assignment's own left side
    return re.sub(r"(?<![.\w$])([A-Za-z_]\w*)\b(?!\s*=[^=])", lambda m: names.get(m.group(1), m.group(1)), line)


def views(lines: list[str]) -> list[tuple[str, list[str]]]:
    """[(name, rewritten lines)] for the line rules; every view keeps the line count."""
    scratch: list[str] = []
    folded = [_fold_line(line, scratch) for line in lines]
    names = _assignments(folded)
    substituted = [_substitute(line, names) for line in folded] if names else folded
    return [("joined string literals", folded), ("quotes removed", [_dequote(s) for s in substituted]),
            ("variables substituted", substituted)]


def split_names(lines: list[str]) -> list[Payload]:
    """Literals that only spell something once joined: [Payload(line, 'split string', joined)]."""
    out: list[Payload] = []
    for n, line in enumerate(lines, 1):
        found: list[str] = []
        _fold_line(line, found)
        out.extend(Payload(n, "split string literals", s) for s in found)
    return out


def _printable(data: bytes) -> str | None:
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return None
    if len(text) < 4 or not any(c.isalpha() for c in text):
        return None
    good = sum(1 for c in text if c.isprintable() or c in "\n\t\r")
    return text if good >= 0.95 * len(text) else None


def _b64(token: str) -> bytes | None:
    padded = token + "=" * (-len(token) % 4)
    decode = base64.urlsafe_b64decode if ("-" in token or "_" in token) else base64.b64decode
    try:
        return decode(padded)
    except (binascii.Error, ValueError):
        return None


def _line_payloads(n: int, line: str, char_codes: bool, rot13: bool) -> list[Payload]:
    out: list[Payload] = []
    for tok in _B64.findall(line):
        if (raw := _b64(tok)) is not None and (text := _printable(raw)):
            out.append(Payload(n, "base64", text))
    for tok in _HEX_RUN.findall(line):
        if text := _printable(bytes.fromhex(tok)):
            out.append(Payload(n, "hex", text))
    for how, rx, conv in _ESCAPES:
        for tok in rx.findall(line):
            if text := _printable(conv(tok)):
                out.append(Payload(n, how, text))
    codes = [int(c) for c in _CHR_CALL.findall(line)]
    if len(codes) >= 3:
        out.append(Payload(n, "chr() calls", "".join(chr(c) for c in codes if c < 0x110000)))
    if char_codes:
        for group in _INT_LIST.findall(line):
            nums = [int(x) for x in re.findall(r"\d+", group)]
            if all(9 <= x <= 126 for x in nums):
                out.append(Payload(n, "character codes", "".join(map(chr, nums))))
    if rot13:
        for lit in _LITERAL.findall(line):
            if len(lit) >= 8:
                out.append(Payload(n, "ROT13", codecs.decode(_inner(lit), "rot13")))
    return out


def payloads(lines: list[str]) -> list[Payload]:
    """Every piece of encoded text in the file, decoded, with its source line."""
    text = "\n".join(lines)
    char_codes = bool(_CHAR_CODE_HINT.search(text))
    rot13 = bool(_ROT13_HINT.search(text))
    out: list[Payload] = []
    for n, line in enumerate(lines, 1):
        out.extend(_line_payloads(n, line, char_codes, rot13))
    return out
