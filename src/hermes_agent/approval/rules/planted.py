"""Code planted for a tool to run later: text written into a Makefile (recipes are shell), setup.py,
conftest.py or a .pth file (Python that pip, pytest or every interpreter start runs), package.json
scripts (npm/yarn/pnpm lifecycle hooks), build.rs (cargo runs it); and edits of package.json whose
new text is a script. Returns (language, text) pairs for the scanner. Pure string work."""

from __future__ import annotations

from typing import TYPE_CHECKING

from hermes_agent.approval.rules.lazyre import lazy

if TYPE_CHECKING:
    from hermes_agent.approval.rules.canonical import Unwrapped

_PYTHON_RUN = frozenset({"setup.py", "conftest.py", "sitecustomize.py", "usercustomize.py", "noxfile.py", "dodo.py",
                         "fabfile.py", "tasks.py", "manage.py"})
_MAKE = frozenset({"makefile", "gnumakefile", "justfile"})
_JSON_SCRIPT = lazy(r"\"((?:pre|post)?[\w:-]+)\"\s*:\s*\"((?:[^\"\\]|\\.)*)\"")
_DQ = lazy(r"\"((?:[^\"\\]|\\.)*)\"")
_RUST_STR = lazy(r"\"((?:[^\"\\]|\\.)*)\"")
_SCRIPTS_KEY = lazy(r"\.scripts\b|[\"']scripts[\"']|[\"'](?:pre|post)\w+[\"']\s*:|[\"']prepare[\"']\s*:")
_ANY_STR = lazy(r"\"((?:[^\"\\]|\\.)*)\"|'((?:[^'\\]|\\.)*)'")
_GIT_PROGRAM = lazy(r"(?im)^\s*(?:pager|editor|sshcommand|fsmonitor|askpass|textconv|clean|smudge|process|helper|cmd|command"
                    r"|program|\w+)\s*=\s*(.*(?:\bsh\b|\||;|&&|\$\(|`|curl|wget|rm ).*)$")
_EDITORS = frozenset({"jq", "yq", "sed", "gsed", "perl", "awk", "gawk", "python", "python3", "node"})


def _unescape(s: str) -> str:
    return s.replace("\\/", "/").replace('\\"', '"').replace("\\\\", "\\")


def planted(path: str, content: str) -> list[tuple[str, str]]:
    """What running the file at `path` later would run, given the text just written into it."""
    base = path.rstrip("/").rsplit("/", 1)[-1].lower()
    if base in _MAKE or base.endswith(".mk"):
        lines = [ln.lstrip("\t").lstrip("@-+ ") for ln in content.splitlines() if ln.startswith("\t")]
        return [("sh", "\n".join(lines))] if lines else []
    if base in _PYTHON_RUN or base.endswith(".pth"):
        return [("python", content)]
    if base == ".gitconfig" or path.endswith((".git/config", ".config/git/config")):
        text = content.replace("\\n", "\n").replace("\\t", "\t")
        return [("sh", m.group(1).strip().strip('"').lstrip("!")) for m in _GIT_PROGRAM.finditer(text)]
    if base == "package.json":
        return [("sh", _unescape(v)) for _, v in _JSON_SCRIPT.findall(content)]
    if base == "build.rs" and "Command" in content:
        return [("sh", s) for s in _RUST_STR.findall(content) if " " in s]
    return []


def script_edits(u: Unwrapped) -> list[str]:
    """jq/yq/sed/python edits that put a script into package.json: the strings they put in are scripts npm will
    run (whether the file is named, piped in, or opened by the program)."""
    if u.name not in _EDITORS and not u.code:
        return []
    program = u.code[1] if u.code else " ".join(u.args)
    names_file = "package.json" in program or any(a.rsplit("/", 1)[-1] == "package.json" for a in u.args)
    if not (_SCRIPTS_KEY.search(program) and (names_file or u.name in ("jq", "yq"))):
        return []
    return [_unescape(a or b) for a, b in _ANY_STR.findall(program) if " " in (a or b)]
