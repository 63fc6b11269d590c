"""Code planted for a tool to run later: text written into a Makefile (recipes are shell), setup.py,
conftest.py or a .pth file (Python that pip, pytest or every interpreter start runs), package.json
scripts (npm/yarn/pnpm lifecycle hooks), build.rs (cargo runs it); and edits of package.json whose
new text is a script. Returns (language, text) pairs for the scanner. Pure string work."""

from __future__ import annotations

from typing import TYPE_CHECKING

from hermes_agent.approval.rules.lazyre import lazy
from hermes_agent.approval.rules.runners import runs_unseen_file

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
_INLINE_RECIPE = lazy(r"[^\t#=:;]+:(?![:=])[^=;]*;(.*)")  # `target: prerequisites ; recipe`
# the replacement of a sed `s` command (any delimiter): the text a `sed -i` puts into the file
SED_SUBST = lazy(r"(?:^|[;\n])\s*(?:[\d$,/]*\s*)?s(.)(?:(?!\1)[^\\]|\\.)*\1((?:(?!\1)[^\\]|\\.)*)\1")
_SED_TEXT = lazy(r"(?:^|[;\n])\s*(?:\d+|\$|/(?:[^/\\]|\\.)*/)?(?:,\s*(?:\d+|\$|/(?:[^/\\]|\\.)*/))?\s*[aic]\\?\s?([^\n]*)")
_LIFECYCLE_EDIT = lazy(r"(?:\.scripts\.|[\"']scripts[\"']\s*\]?\s*\.?\s*\[?\s*[\"']|[\"'])"
                       r"(?:pre|post)?(?:install|prepare|pack|publish|uninstall|dependencies)[\"']?\s*[:=]\s*\\?[\"']((?:[^\"'\\]|\\.)*)")
_EDITORS = frozenset({"jq", "yq", "sed", "gsed", "perl", "awk", "gawk", "python", "python3", "node"})


def _unescape(s: str) -> str:
    return s.replace("\\/", "/").replace('\\"', '"').replace("\\\\", "\\")


def planted(path: str, content: str) -> list[tuple[str, str]]:
    """What running the file at `path` later would run, given the text just written into it."""
    base = path.rstrip("/").rsplit("/", 1)[-1].lower()
    if base in _MAKE or base.endswith(".mk"):
        lines = [ln[1:] if ln.startswith("\t") else m.group(1) for ln in content.splitlines()
                 if ln.startswith("\t") or (m := _INLINE_RECIPE.match(ln))]
        lines = [ln.lstrip("@-+ \t").replace("$$", "$") for ln in lines]  # make turns $$ into the shell's $
        return [("sh", "\n".join(lines))] if lines else []
    if base in _PYTHON_RUN or base.endswith(".pth") or base in (".pythonrc", ".pythonrc.py", ".pythonstartup"):
        return [("python", content)]
    if base in (".envrc", "direnvrc") or (base in ("activate", "postactivate") and "/bin/" in "/" + path):
        return [("sh", content)]  # direnv runs .envrc on cd; a virtualenv's activate runs in the user's shell
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


def inserted(u: Unwrapped) -> list[tuple[str, str]]:
    """sed -i with a/i/c commands or s/// replacements: the text it puts into a file another tool runs (setup.py,
    a Makefile, package.json's scripts...)."""
    if u.name not in ("sed", "gsed") or not u.inplace:
        return []
    scripts = [u.args[k + 1] for k, a in enumerate(u.args[:-1]) if a in ("-e", "--expression")]
    operands = [a for a in u.args if not a.startswith("-") and a not in scripts]
    if not scripts and operands:
        scripts, operands = operands[:1], operands[1:]
    text = "\n".join([*(m.group(1) for sc in scripts for m in _SED_TEXT.finditer(sc) if m.group(1)),
                      *(m.group(2).replace("\\n", "\n").replace("\\t", "") for sc in scripts
                        for m in SED_SUBST.finditer(sc) if m.group(2).strip())])
    return [found for path in operands for found in planted(path, "\t" + text if path.lower().endswith(
        ("makefile", ".mk")) else text)] if text else []


def lifecycle_edit(u: Unwrapped) -> bool:
    """jq/yq/sed/python edits of package.json that set a lifecycle script (install, prepare, pack...)."""
    if u.name not in _EDITORS and not u.code:
        return False
    program = u.code[1] if u.code else " ".join(u.args)
    names_file = "package.json" in program or any(a.rsplit("/", 1)[-1] == "package.json" for a in u.args)
    return (names_file or u.name in ("jq", "yq")) and any(runs_unseen_file(m.group(1)) for m in _LIFECYCLE_EDIT.finditer(program))
