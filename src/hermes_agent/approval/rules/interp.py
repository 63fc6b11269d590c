"""Interpreter payloads (python -c, perl -e, ruby -e, node -e, php -r, awk programs): find the shell
commands they run, trees they delete, sensitive files they write and payloads they decode."""

from __future__ import annotations

import base64
import binascii
import re
from typing import Protocol

from hermes_agent.approval.rules.exposure import metadata_host
from hermes_agent.approval.rules.lazyre import lazy
from hermes_agent.approval.rules.subcommands import SQL_CLIENTS
from hermes_agent.approval.rules.table import SQL_CONTEXT
from hermes_agent.approval.rules.targets import (
    CREDENTIAL_READ,
    classify_path,
    classify_read,
    disposable,
    protected_dir,
    secret_file,
)


class Scanner(Protocol):
    """What the interpreter-code checks need of analyse.py's Scanner (which this leaf does not import)."""

    def add(self, key: str, description: str, hardline: bool = False) -> None: ...

    def text(self, text: str, depth: int = 0) -> set[str]: ...

    def text_rules(self, text: str) -> None: ...

    def sql_rules(self, sql: str) -> None: ...


_EXEC = lazy(
    r"os\s*\.\s*(?:system|popen|exec\w*|spawn\w*|posix_spawn\w*)|subprocess|pty\s*\.\s*spawn|commands\s*\.\s*getoutput"
    r"|child_process|\bexec(?:Sync|File|FileSync)?\s*\(|\bspawn(?:Sync)?\s*\(|\bsystem\s*\(|shell_exec|passthru|popen|pcntl_exec|io\s*\.\s*popen|os\s*\.\s*execute"
    r"|proc_open|Open3|Kernel\s*\.\s*(?:system|exec|spawn)|Deno\s*\.\s*(?:run|Command)|Bun\s*\.\s*(?:spawn|\$)"
    r"|do shell script|\bqx\s*[{(/'\"|]|%x\s*[{(]|['\"]system['\"]|getline|\|\s*\"|\bsystem\b|\bexec\s+[q'\"$]")
_REVERSE_SHELL = lazy(r"(?s)(?:socket|TCPSocket|net\.connect|fsockopen|IO::Socket).*(?:dup2|pty\s*\.\s*spawn|/bin/(?:ba)?sh|['\"](?:ba)?sh['\"]"
                            r"|\bexec\b|spawn\s*\(|child_process)")
_SOCKET = lazy(r"socket|TCPSocket|net\s*\.\s*connect|require\s*\(\s*['\"]net['\"]\s*\)\s*\.\s*connect|fsockopen|IO::Socket|/inet/tcp/")
_SHELL_SIDE = lazy(r"dup2|pty\s*\.\s*spawn|/bin/(?:ba)?sh|['\"](?:ba)?sh['\"]|\bexec\b|spawn\s*\(|child_process|popen|IO\s*\.\s*popen|\|&\s*getline")
_BACKTICK_LANGS = frozenset({"perl", "ruby", "php"})
_TREE_DELETE = lazy(
    r"rmtree|remove_tree|\brm_rf?\b|FileUtils\s*\.\s*(?:remove_dir|remove_entry)|rmSync|rmdirSync|\bfs\s*\.\s*(?:promises\s*\.\s*)?rm(?:dir)?\s*\("
    r"|rimraf|Deno\s*\.\s*remove|removedirs|unlink_recursively")
_TREE_ARG = lazy(
    r"(?:rmtree|remove_tree|rm_rf?|rmSync|rmdirSync|rimraf(?:\.sync)?|\bfs\s*\.\s*rm(?:dir)?|Deno\s*\.\s*remove|remove_dir|remove_entry)"
    r"\s*\(?\s*(?:r?(['\"])(.*?)\1|((?:\w+\s*\.\s*)?Path\s*\.\s*home\s*\(\s*\)|os\.path\.expanduser\(\s*['\"]~/?['\"]\s*\)|os\.environ\[\s*['\"]HOME['\"]\s*\]"
    r"|os\.getenv\(\s*['\"]HOME['\"]\s*\)|os\.homedir\(\)|Dir\.home|ENV\[\s*['\"]HOME['\"]\s*\]|\$ENV\{HOME\}))\s*[,)]?")
_WRITE = lazy(
    r"open\s*\((?:[^()]|\((?:[^()]|\([^()]*\))*\))*['\"][wax+]|write_text|write_bytes|writeFile|appendFile|File\s*\.\s*(?:write|open)|os\s*\.\s*(?:remove|unlink|rename|replace)"
    r"|\bunlink\s*\(|\.unlink\s*\(|shutil\s*\.\s*(?:copy\w*|move)|\brename\s*\(|file_put_contents|>>?\s*['\"]|print\s*\{|\bopen\s*\(\s*\w+\s*,\s*['\"]?>")
_DECODE = lazy(r"b(?:64|32|85)decode|a85decode|base64|fromhex|unhexlify|codecs\s*\.\s*decode|fromCharCode|\batob\s*\(|Buffer\s*\.\s*from\s*\([^)]*(?:base64|hex)|zlib\s*\.\s*decompress|marshal\s*\.\s*loads|rot.?13|pack\s*\(\s*['\"][Hh]|unpack1?\s*\(\s*['\"]m")
_REMOTE = lazy(r"urlopen|urllib|requests\s*\.\s*get|httpx|https?\s*\.\s*(?:get|request)\b|fetch\s*\(|Net::HTTP|LWP|open-uri|URI\.open|curl|wget|\bget\s+['\"]https?:"
               r"|require\s*\(\s*['\"](?:node:)?(?:https?|net|tls|node-fetch|axios|got|undici)['\"]\s*\)|\bimport\s*\(\s*['\"](?:node:)?https?['\"]"
                     r"|file_get_contents\s*\(\s*['\"]https?:|fopen\s*\(\s*['\"]https?:")
_EVAL = lazy(r"\b(?:exec|eval|compile|instance_eval|class_eval|Function)\s*\(|\beval\s+[\w$]")
_STR = lazy(r"'((?:[^'\\\n]|\\.)*)'|\"((?:[^\"\\\n]|\\.)*)\"")
_BACKTICK = lazy(r"`([^`]*)`")
_LIST = lazy(r"\[([^\[\]]*)\]")
_CALL_ARGS = lazy(r"\(([^()\n]*)\)")
_ARGV_CALL = lazy(r"\(\s*(['\"])([^'\"]+)\1\s*,\s*\[([^\[\]]*)\]")
_SEPARATORS = str.maketrans({c: ";" for c in "'\"`{}()[],"})
_ONLY_STRINGS = lazy(r"\s*(?:(?:'[^']*'|\"[^\"]*\")\s*(?:,\s*)?)+\Z")  # no two adjacent \s*: linear
_B64 = lazy(r"[A-Za-z0-9+/]{8,}={0,2}\Z")
_HEX = lazy(r"(?:[0-9a-fA-F]{2}){4,}\Z")
_ESC = lazy(r"\\(x[0-9a-fA-F]{2}|[0-7]{1,3}|[nt'\"\\])")
_LANGS = {"crontab": "cron", "make": "make", "gmake": "make", "redis-cli": "redis", "valkey-cli": "redis", "keydb-cli": "redis", "python": "python", "pypy": "python", "perl": "perl", "ruby": "ruby", "node": "node", "nodejs": "node",
          "bun": "node", "deno": "node", "php": "php", "lua": "lua", "luajit": "lua", "rscript": "r"}


_SQL_CTX = lazy(SQL_CONTEXT, re.I)
# the whole environment as data (not one variable looked up by name)
_ALL_ENV = lazy(r"(?:dict|str|repr|json\.dumps|list)\s*\(\s*os\s*\.\s*environ\s*\)|os\s*\.\s*environ\s*\.\s*(?:items|copy)\s*\("
                      r"|process\s*\.\s*env\b(?!\s*\.\s*\w|\s*\[)|\bENV\s*\.\s*(?:to_h|to_a|inspect|each|map|keys)\b|%ENV\b(?!\s*\{)"
                      r"|\$_ENV\b(?!\s*\[)|getenv\s*\(\s*\)|Deno\s*\.\s*env\s*\.\s*toObject")
_SENDS = lazy(r"urlopen|urllib|requests\s*\.\s*(?:post|put|get)|httpx|http\.client|fetch\s*\(|Net::HTTP|LWP|IO::Socket"
                    r"|socket|XMLHttpRequest|axios|https?\s*\.\s*request|curl_exec|smtplib|require\s*\(\s*['\"](?:https?|net|tls|dgram)['\"]\s*\)"
                    r"|TCPSocket|fsockopen|HTTP::Tiny|requests\s*\.\s*(?:request|patch|Session)|HTTPS?Connection|aiohttp|urllib3"
                    r"|(?:file_get_contents|fopen|curl_init)\s*\(\s*['\"]https?:|sendto|create_connection|dgram|WebSocket")
_REDIS_WIPE = lazy(r"(?im)^\s*(?:flushall|flushdb)\b|^\s*config\s+set\s+(?:dir|dbfilename)\b")
_GLOB_DELETE = lazy(r"(?s)(?:\bunlink|os\s*\.\s*(?:remove|unlink)|\.unlink\s*\(|File\s*\.\s*delete|unlinkSync|FileUtils\s*\.\s*rm)\b[^\n]{0,60}"
                    r"(?:\bglob\b|Dir\s*(?:\[|\.glob)|\.rglob|readdirSync|listdir|scandir|iterdir|opendir|readdir)"
                    r"|(?:\bglob\s*\(|\.rglob|Dir\s*\[|listdir|scandir|iterdir|readdirSync).{0,80}(?:unlink|remove|delete)"
                    r"|\bunlink\s*\(?\s*<[^<>\s]*[*?][^<>]*>")
_TREE_WALK = lazy(r"\bglob\b|\.rglob|os\s*\.\s*walk|readdirSync|Dir\s*(?:\[|\.glob)|Find\s*\.\s*find|File::Find|scandir")
_OVERWRITE = lazy(r"open\s*\([^)]*['\"]w|write_text|write_bytes|writeFileSync|truncate|File\s*\.\s*write|\bunlink|os\s*\.\s*remove")
_READ = lazy(r"\bopen\s*\(|\bopen\s+\w+\s*,|read_text|read_bytes|readFile|createReadStream|File\s*\.\s*(?:read|open|binread)"
             r"|IO\s*\.\s*(?:read|binread)|slurp|file_get_contents|fopen|copy|Deno\s*\.\s*readFile|Bun\s*\.\s*file")
# one variable of the environment looked up by a secret-looking name: os.environ['API_KEY'], process.env.GH_TOKEN
_ENV_NAMED = lazy(r"(?:environ\s*(?:\.\s*get\s*\(|\[)|getenv\s*\(|ENV\s*(?:\.\s*fetch\s*\(|\[)|\$ENV\s*\{|\$_ENV\s*\[|env\s*\.\s*get\s*\()"
                  r"\s*['\"]?([A-Za-z_]\w*)|process\s*\.\s*env\s*(?:\.\s*|\[\s*['\"])([A-Za-z_]\w*)")
_SECRET_VAR = lazy(r"(?:KEY|TOKEN|SECRET|PASSWORD|PASSWD|PASS|PAT|CREDENTIALS?|AUTH|COOKIE|PRIVATE|DSN)(?:_|\Z)|\A(?:DATABASE_URL|PGPASSWORD)\Z")
_URL_HOST = lazy(r"[a-zA-Z][\w+.-]*://(?:[^@/\s]*@)?([^/:?#\s'\"]+)")
# characters built from numbers: chr(114), String.fromCharCode(114,109), map(chr,[114,109]), bytes([114,109])
_CHR = lazy(r"\b(?:chr|unichr)\s*\(\s*(0x[0-9a-fA-F]+|\d+)\s*\)")
_NUMS = r"((?:0x[0-9a-fA-F]+|\d+)(?:\s*,\s*(?:0x[0-9a-fA-F]+|\d+))*)\s*,?\s*"
_CHAR_LIST = lazy(r"(?:String\s*\.\s*)?fromCharCode\s*\(\s*" + _NUMS + r"\)|map\s*\(\s*chr\s*,\s*[\[(]\s*" + _NUMS + r"[\])]\s*\)"
                        r"|bytes\s*\(\s*\[\s*" + _NUMS + r"\]\s*\)|pack\s*\(\s*['\"]C\*['\"]\s*,\s*" + _NUMS + r"\)")
_LIT = r"""'((?:[^'\\\n]|\\.)*)'|"((?:[^"\\\n]|\\.)*)\""""
_CONCAT = lazy(r"(?:" + _LIT + r")\s*[+.]\s*(?:" + _LIT + r")")
_PACK_HEX = lazy(r"(['\"])([0-9a-fA-F]{8,})\1\s*\]?\s*\)?\s*\.pack\s*\(\s*['\"]H\*")


def sends_network(code: str) -> bool:
    """Interpreter code that talks to the network (a pipeline sink that may carry its stdin off the machine)."""
    return bool(_SENDS.search(code))


def language(name: str) -> str | None:
    """The language of an interpreter command name (python3.11 -> python, psql -> sql), or None."""
    if name in SQL_CLIENTS:
        return "sql"
    base = name.rstrip("0123456789.")
    return _LANGS.get(base)


def _char(n: str) -> str:
    code = int(n, 16) if n.lower().startswith("0x") else int(n)
    ch = chr(code) if 0 < code < 0x110000 else ""
    return {"'": "\\'", "\\": "\\\\"}.get(ch, ch)


_LIST_ITEM = lazy(r"'([^'\\\n]*)'|\"([^\"\\\n]*)\"")
_ITEMS = r"(?P<items>(?:'[^'\\\n]*'|\"[^\"\\\n]*\")(?:\s*,\s*(?:'[^'\\\n]*'|\"[^\"\\\n]*\")){0,64})"
_LIST_JOIN = lazy(r"\[\s*" + _ITEMS + r"\s*\]\s*\.\s*join\b(?P<parens>\s*\(\s*(?:(?P<q1>['\"])(?P<sep>[^'\"\\\n]*)(?P=q1))?\s*\))?"
                  r"|(?P<q2>['\"])(?P<pysep>[^'\"\\\n]*)(?P=q2)\s*\.\s*join\s*\(\s*[\[(]\s*" + _ITEMS.replace("items", "items2")
                  + r"\s*[\])]\s*\)")


def fold_chars(code: str) -> str:
    """Turn characters built from numbers into string literals, then join adjacent literals."""
    if "chr" not in code and "CharCode" not in code and "bytes" not in code and "pack" not in code:
        return join_literals(code) if ("+" in code or "." in code) else code
    code = _CHAR_LIST.sub(lambda m: "'" + "".join(_char(n) for n in re.split(r"\s*,\s*", next(g for g in m.groups() if g).strip())) + "'", code)
    code = _CHR.sub(lambda m: "'" + _char(m.group(1)) + "'", code)
    code = _PACK_HEX.sub(lambda m: "'" + (try_decode(m.group(2)) or m.group(2)) + "'", code)
    return join_literals(code)


def _joined(m: re.Match) -> str:
    a = m.group(1) if m.group(1) is not None else m.group(2)
    b = m.group(3) if m.group(3) is not None else m.group(4)
    return '"' + (a + b).replace('"', '\\"') + '"'


def _list_joined(m: re.Match) -> str:
    items = [a or b for a, b in _LIST_ITEM.findall(m.group("items") or m.group("items2") or "")]
    if m.group("pysep") is not None:
        sep = m.group("pysep")
    elif m.group("sep") is not None:
        sep = m.group("sep")
    else:  # Ruby's join with no argument uses "", JavaScript's join() uses ","
        sep = "," if m.group("parens") else ""
    return '"' + sep.join(items).replace('"', '\\"') + '"'


def join_literals(code: str) -> str:
    """'r' + 'm' / "r"."m" / ["r","m"].join / ''.join(['r','m']) -> "rm" (string building in any of the languages)."""
    if "join" in code:
        code = _LIST_JOIN.sub(_list_joined, code)
    for _ in range(8):
        joined = _CONCAT.sub(_joined, code)
        if joined == code:
            break
        code = joined
    return code


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
    for m in _CALL_ARGS.finditer(code):  # system("rm", "-rf", "/srv"): an argv given as separate strings
        if "," in m.group(1) and _ONLY_STRINGS.match(m.group(1)):
            out.append(" ".join(_unescape(a or b) for a, b in _STR.findall(m.group(1))))
    for m in _ARGV_CALL.finditer(code):
        if _ONLY_STRINGS.match(m.group(3)):
            out.append(" ".join([m.group(2), *(_unescape(a or b) for a, b in _STR.findall(m.group(3)))]))
    return [s for s in out if s.strip()]


def written_files(lang: str, code: str) -> dict[str, str]:
    """Interpreter code that writes files (`open('M9','w').write('...')`): each file-name-like string it holds ->
    the other strings, the best reading of what it puts there (judged when the text runs that file later)."""
    if not _WRITE.search(code):
        return {}
    literals = _literals(code, lang)
    names = [s for s in literals if len(s) < 200 and not any(c in s.lstrip(">+< ") for c in " \n\t")
             and s not in ("w", "a", "wb", "w+")]
    body = "\n".join(s for s in literals if s not in names and s not in ("w", "a", "wb", "w+"))
    return {name.lstrip("+<> "): body for name in names}  # perl's open(F, ">x.sh")


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


def _non_code(scanner: Scanner, lang: str, code: str, depth: int) -> bool:
    """Crontab lines, SQL, Makefile recipes and Redis commands: handled here; True when `lang` was one of them."""
    if lang == "cron":
        for line in code.splitlines():
            line = line.strip()
            parts = line.split(None, 1 if line.startswith("@") else 5)
            if line and not line.startswith("#") and len(parts) > (1 if line.startswith("@") else 5):
                scanner.text(parts[-1], depth + 1)
    elif lang == "sql":
        scanner.sql_rules(code)
    elif lang == "make":
        scanner.text("\n".join(ln.lstrip("\t").lstrip("@-+ ") for ln in code.splitlines() if ln.startswith("\t")), depth + 1)
    elif lang == "redis":
        if _REDIS_WIPE.search(code):
            scanner.add("db_flush", "flush a Redis database or move its files (commands on stdin)")
    else:
        return False
    return True


def _network(scanner: Scanner, lang: str, code: str, literals: list) -> None:
    """Sockets wired to shells, secrets or the environment sent, metadata addresses contacted."""
    if (_REVERSE_SHELL.search(code) or _SOCKET.search(code) and _SHELL_SIDE.search(code)) and (
            "connect" in code or "TCPSocket" in code or "fsockopen" in code or "IO::Socket" in code or "/inet/tcp/" in code):
        scanner.add("reverse_shell", f"{lang} code connects a socket to a shell")
    if _READ.search(code) and any(classify_read(lit) for lit in literals if "/" in lit):
        scanner.add(*CREDENTIAL_READ)
    if _SENDS.search(code) and (_ALL_ENV.search(code) or _secret_source(code, literals)):
        scanner.add("exfiltration", f"{lang} code sends secrets or the environment over the network")
    if (_REMOTE.search(code) or "socket" in code) and any(metadata_host(lit) for lit in literals):
        scanner.add("cloud_metadata", f"{lang} code contacts the cloud metadata service")


def _secret_source(code: str, literals: list) -> bool:
    """The code reads a secret-bearing file (.env, keys, credentials) or a secret-named variable of the environment
    that is not meant for a host the code names (OPENAI_API_KEY to api.openai.com is ordinary)."""
    if _READ.search(code) and any(secret_file(lit) for lit in literals):
        return True
    hosts = [m.group(1).lower() for m in _URL_HOST.finditer(code)]
    for m in _ENV_NAMED.finditer(code):
        name = (m.group(1) or m.group(2) or "").upper()
        if _SECRET_VAR.search(name):
            vendor = name.split("_", 1)[0].lower()
            if not (len(vendor) > 1 and hosts and all(vendor in h or (vendor == "gh" and "github" in h) for h in hosts)):
                return True
    return False


def _tree_deletes(code: str) -> bool:
    """A recursive delete whose target is not only caches named in the code (rmtree('__pycache__'))."""
    if not _TREE_DELETE.search(code):
        return False
    if re.search(r"rmSync|rmdirSync|\bfs\s*\.\s*(?:promises\s*\.\s*)?rm(?:dir)?\s*\(", code) and "recursive" not in code \
            and not re.search(r"rmtree|remove_tree|rm_rf?\b|remove_dir|remove_entry|rimraf|removedirs|unlink_recursively", code):
        return False  # fs.rmSync(path) without {recursive: true} removes one file
    args = list(_TREE_ARG.finditer(code))
    calls = len(_TREE_DELETE.findall(code))
    return not (args and len(args) >= calls and all(m.group(2) and _cache_dir(m.group(2)) for m in args))


def _cache_dir(path: str) -> bool:
    """A cache the tools refill on their own (__pycache__, .pytest_cache); build outputs (build, dist) still ask."""
    return disposable(path) and "cache" in path.rstrip("/").rsplit("/", 1)[-1].lower()


def _files(scanner: Scanner, lang: str, code: str, literals: list) -> None:
    """Deletes (trees, globs) and writes (sensitive paths, every file found) done by the code."""
    if _GLOB_DELETE.search(code):
        scanner.add("glob_delete", f"delete every file matching a pattern from {lang} code")
    if _tree_deletes(code):
        scanner.add("recursive_delete", f"recursive delete from {lang} code")
        for m in _TREE_ARG.finditer(code):
            kind = "home" if m.group(3) else protected_dir(m.group(2) or "")
            if kind:
                key = {"root": "rm_root", "system": "rm_system_dir", "home": "rm_home"}[kind]
                scanner.add(key, f"recursive delete of a {kind} directory from {lang} code", True)
    if _WRITE.search(code):
        if _TREE_WALK.search(code) and _OVERWRITE.search(code):
            scanner.add("mass_rewrite", f"{lang} code empties or overwrites every file it finds")
        for lit in literals:
            cls = classify_path(lit)
            if cls:
                scanner.add(*cls)


def scan_code(scanner: Scanner, lang: str, code: str, depth: int) -> None:
    """Record findings for interpreter `code` written in `lang`."""
    if depth > 8 or not code or _non_code(scanner, lang, code, depth):
        return
    original, code = code, fold_chars(code)
    scanner.text_rules(code)
    if _SQL_CTX.search(code):
        scanner.sql_rules(code)
    literals = _literals(code, lang)
    _network(scanner, lang, code, literals)
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
    _files(scanner, lang, code, literals)
    if lang == "python":  # by effect: what the spellings above do not name (pyeffects.py)
        from hermes_agent.approval.rules import pyeffects  # ast: only when python code is judged

        for key, description in pyeffects.scan(original) or ():
            scanner.add(key, description)
    for lit in literals:
        decoded = try_decode(lit) if len(lit) >= 8 else None
        if decoded:
            scanner.text(decoded, depth + 1)
            scan_code(scanner, lang, decoded, depth + 1)
        elif _EVAL.search(lit) or _EXEC.search(lit):
            scan_code(scanner, lang, lit, depth + 1)
