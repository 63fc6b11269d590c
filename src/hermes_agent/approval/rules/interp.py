"""Interpreter payloads (python -c, perl -e, ruby -e, node -e, php -r, awk programs): find the shell
commands they run, trees they delete, sensitive files they write and payloads they decode."""

from __future__ import annotations

import base64
import binascii
import re
from typing import TYPE_CHECKING

from hermes_agent.approval.rules.targets import classify_path, protected_dir

if TYPE_CHECKING:
    from hermes_agent.approval.rules.analyse import Scanner

_EXEC = re.compile(
    r"os\s*\.\s*(?:system|popen|exec\w*|spawn\w*|posix_spawn\w*)|subprocess|pty\s*\.\s*spawn|commands\s*\.\s*getoutput"
    r"|child_process|\bexec(?:Sync|File|FileSync)?\s*\(|\bspawn(?:Sync)?\s*\(|\bsystem\s*\(|shell_exec|passthru|popen"
    r"|proc_open|Open3|Kernel\s*\.\s*(?:system|exec|spawn)|Deno\s*\.\s*(?:run|Command)|Bun\s*\.\s*(?:spawn|\$)"
    r"|do shell script|\bqx\s*[{(/'\"|]|%x\s*[{(]|['\"]system['\"]|getline|\|\s*\"|\bsystem\b|\bexec\s+[q'\"$]")
_BACKTICK_LANGS = frozenset({"perl", "ruby", "php"})
_TREE_DELETE = re.compile(
    r"rmtree|remove_tree|\brm_rf?\b|FileUtils\s*\.\s*(?:remove_dir|remove_entry)|rmSync|rmdirSync|\bfs\s*\.\s*(?:promises\s*\.\s*)?rm(?:dir)?\s*\("
    r"|rimraf|Deno\s*\.\s*remove|removedirs|unlink_recursively")
_TREE_ARG = re.compile(
    r"(?:rmtree|remove_tree|rm_rf?|rmSync|rmdirSync|rimraf(?:\.sync)?|\bfs\s*\.\s*rm(?:dir)?|Deno\s*\.\s*remove|remove_dir|remove_entry)"
    r"\s*\(?\s*(?:r?(['\"])(.*?)\1|((?:\w+\s*\.\s*)?Path\s*\.\s*home\s*\(\s*\)|os\.path\.expanduser\(\s*['\"]~/?['\"]\s*\)|os\.environ\[\s*['\"]HOME['\"]\s*\]"
    r"|os\.getenv\(\s*['\"]HOME['\"]\s*\)|os\.homedir\(\)|Dir\.home|ENV\[\s*['\"]HOME['\"]\s*\]|\$ENV\{HOME\}))\s*[,)]?")
_WRITE = re.compile(
    r"open\s*\([^)]*['\"][wax+]|write_text|write_bytes|writeFile|appendFile|File\s*\.\s*(?:write|open)|os\s*\.\s*(?:remove|unlink|rename|replace)"
    r"|\bunlink\s*\(|\.unlink\s*\(|shutil\s*\.\s*(?:copy\w*|move)|\brename\s*\(|file_put_contents|>>?\s*['\"]|print\s*\{|\bopen\s*\(\s*\w+\s*,\s*['\"]?>")
_DECODE = re.compile(r"b(?:64|32|85)decode|a85decode|base64|fromhex|unhexlify|codecs\s*\.\s*decode|fromCharCode|\batob\s*\(|Buffer\s*\.\s*from\s*\([^)]*(?:base64|hex)|zlib\s*\.\s*decompress|marshal\s*\.\s*loads|rot.?13|pack\s*\(\s*['\"][Hh]|unpack1?\s*\(\s*['\"]m")
_REMOTE = re.compile(r"urlopen|urllib|requests\s*\.\s*get|httpx|http\.get|https\.get|fetch\s*\(|Net::HTTP|LWP|open-uri|URI\.open|curl|wget")
_EVAL = re.compile(r"\b(?:exec|eval|compile|instance_eval|class_eval|Function)\s*\(")
_STR = re.compile(r"'((?:[^'\\\n]|\\.)*)'|\"((?:[^\"\\\n]|\\.)*)\"")
_BACKTICK = re.compile(r"`([^`]*)`")
_LIST = re.compile(r"\[([^\[\]]*)\]")
_ARGV_CALL = re.compile(r"\(\s*(['\"])([^'\"]+)\1\s*,\s*\[([^\[\]]*)\]")
_SEPARATORS = str.maketrans({c: ";" for c in "'\"`{}()[],"})
_ONLY_STRINGS = re.compile(r"\s*(?:(?:'[^']*'|\"[^\"]*\")\s*,?\s*)+\Z")
_B64 = re.compile(r"[A-Za-z0-9+/]{8,}={0,2}\Z")
_HEX = re.compile(r"(?:[0-9a-fA-F]{2}){4,}\Z")
_ESC = re.compile(r"\\(x[0-9a-fA-F]{2}|[0-7]{1,3}|[nt'\"\\])")
_LANGS = {"crontab": "cron", "python": "python", "pypy": "python", "perl": "perl", "ruby": "ruby", "node": "node", "nodejs": "node",
          "bun": "node", "deno": "node", "php": "php", "lua": "lua", "luajit": "lua", "rscript": "r"}


def language(name: str) -> str | None:
    """The language of an interpreter command name (python3.11 -> python), or None."""
    base = name.rstrip("0123456789.")
    return _LANGS.get(base)


def _unescape(s: str) -> str:
    def repl(m: re.Match) -> str:
        e = m.group(1)
        if e[0] == "x":
            return chr(int(e[1:], 16))
        if e[0].isdigit():
            return chr(int(e, 8))
        return {"n": "\n", "t": "\t"}.get(e, e)

    return _ESC.sub(repl, s) if "\\" in s else s


def _literals(code: str, lang: str) -> list[str]:
    joiner = r"\s*\.\s*" if lang in ("perl", "php") else r"\s*\+\s*"
    code = re.sub(r"(['\"])" + joiner + r"\1", "", code)
    out = [_unescape(a or b) for a, b in _STR.findall(code)]
    if lang in _BACKTICK_LANGS or lang == "awk":
        out += _BACKTICK.findall(code)
    for m in _LIST.finditer(code):
        if _ONLY_STRINGS.match(m.group(1)):
            out.append(" ".join(_unescape(a or b) for a, b in _STR.findall(m.group(1))))
    for m in _ARGV_CALL.finditer(code):
        if _ONLY_STRINGS.match(m.group(3)):
            out.append(" ".join([m.group(2), *(_unescape(a or b) for a, b in _STR.findall(m.group(3)))]))
    return [s for s in out if s.strip()]


def try_decode(text: str) -> str | None:
    """Decode a base64 or hex literal to printable text, else None."""
    text = text.strip()
    raw = None
    if _HEX.match(text):
        raw = binascii.unhexlify(text)
    elif _B64.match(text) and len(text) % 4 == 0:
        try:
            raw = base64.b64decode(text, validate=True)
        except (binascii.Error, ValueError):
            return None
    if raw is None:
        return None
    try:
        decoded = raw.decode("utf-8")
    except UnicodeDecodeError:
        return None
    return decoded if decoded.isprintable() or decoded.strip().isprintable() else None


def scan_code(scanner: Scanner, lang: str, code: str, depth: int) -> None:
    """Record findings for interpreter `code` written in `lang`."""
    if depth > 8 or not code:
        return
    if lang == "cron":
        for line in code.splitlines():
            line = line.strip()
            parts = line.split(None, 1 if line.startswith("@") else 5)
            if line and not line.startswith("#") and len(parts) > (1 if line.startswith("@") else 5):
                scanner.text(parts[-1], depth + 1)
        return
    scanner.text_rules(code)
    literals = _literals(code, lang)
    runs = bool(_EXEC.search(code)) or (lang in _BACKTICK_LANGS and "`" in code)
    if runs:
        for lit in literals:
            scanner.text(lit, depth + 1)
        # Fallback for quoting this parser does not model (perl qq{}, ruby %w, concatenations):
        # the code itself, with every quote and bracket turned into a command separator.
        scanner.text(code.translate(_SEPARATORS), depth + 1)
        if _DECODE.search(code):
            scanner.add("decoded_exec", f"{lang} code runs a decoded payload")
    if (runs or _EVAL.search(code)) and _REMOTE.search(code):
        scanner.add("remote_exec", f"{lang} code runs content fetched from the network")
    if _TREE_DELETE.search(code):
        scanner.add("recursive_delete", f"recursive delete from {lang} code")
        for m in _TREE_ARG.finditer(code):
            kind = "home" if m.group(3) else protected_dir(m.group(2) or "")
            if kind:
                key = {"root": "rm_root", "system": "rm_system_dir", "home": "rm_home"}[kind]
                scanner.add(key, f"recursive delete of a {kind} directory from {lang} code", True)
    if _WRITE.search(code):
        for lit in literals:
            cls = classify_path(lit)
            if cls:
                scanner.add(*cls)
    for lit in literals:
        decoded = try_decode(lit) if len(lit) >= 8 else None
        if decoded:
            scanner.text(decoded, depth + 1)
            scan_code(scanner, lang, decoded, depth + 1)
        elif _EVAL.search(lit) or _EXEC.search(lit):
            scan_code(scanner, lang, lit, depth + 1)
