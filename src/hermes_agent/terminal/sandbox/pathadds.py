"""The directories a project's own tools put FIRST on PATH, which hermes's own $PATH never shows (issue 19, rt13
a56/a57): `npm test` / `npm run` / `npx` / yarn / pnpm put node_modules/.bin of the package directory and of
each directory above it; `composer run` vendor/bin; `pdm run` __pypackages__/<version>/bin; direnv runs the
user's `.envrc` (`PATH_add bin`, `path_add PATH tools`, `export PATH=$PWD/scripts:$PATH`, `layout
node|php|go|ruby|perl|python`); mise's `env._.path` (`.mise.toml`, `mise.toml`); a Makefile's `export PATH :=
$(CURDIR)/bin:$(PATH)` for its recipes (any spelling: `make`). A program planted there under the name of a system one (`git`, `node`,
`ls`, `make`) runs in the user's unconfined shell instead of it, so the guard counts them as PATH directories
(pathbins.risky judges their entries; a venv's bin/ keeps its own rule). A directory named by a pattern
(`.direnv/python-*/bin`) is matched at each look (`expand`). The files that name them are read from the
guard's scan (no path opened). A node_modules/.bin entry is judged by its name like any other PATH entry: the
package.json that would "prove" npm made it is as writable by confined work as the link (rt14b c06). Stdlib only."""

from __future__ import annotations

import os
import re
import shlex
from collections.abc import Callable

NODE_BIN = "node_modules/.bin"
# direnv stdlib layouts -> what they PATH_add ($(direnv_layout_dir) is .direnv; python's is a venv: its own rule)
_LAYOUTS = {"node": (NODE_BIN,), "php": ("vendor/bin",), "go": ("bin", ".direnv/go/bin"),
            "ruby": (".direnv/ruby/bin", ".direnv/bin"), "perl": (".direnv/perl5/bin",),
            # python's: $(direnv_layout_dir)/python-<version>, used as it is when it exists (a folder made
            # without pyvenv.cfg is no venv, and not the venv rule's): a pattern, `expand`ed at each look
            "python": (".direnv/python-*/bin",)}
_HERE = re.compile(r"^(?:\$PWD|\$\{PWD\}|\$\(pwd\)|`pwd`|\$\(CURDIR\)|\$\{CURDIR\}|\$\(PWD\)|\$\{PWD\}|\$\(shell pwd\)"
                   r"|\{\{\s*config_root\s*\}\}|\$\(dirname \$\{?BASH_SOURCE\[?0?\]?\}?\))(?=/|$)")
_SELF = re.compile(r"^\$\{?PATH\}?$|^\$\(PATH\)$")

Read = Callable[[str], "bytes | None"]


def added(d: str, names: set[str], read: Read) -> list[str]:
    """The directories (absolute) that tools run in directory `d` put first on PATH, given the entry names of `d`
    and `read` (the bytes of one of them, as the guard holds it; None when it does not)."""
    rels: list[str] = []
    if "package.json" in names:  # npm / yarn / pnpm / npx: node_modules/.bin here and in every directory above
        up = d
        while True:
            rels.append(os.path.join(up, NODE_BIN))
            if up in ("/", ""):
                break
            up = os.path.dirname(up)
    if "composer.json" in names:
        rels.append("vendor/bin")
    if "pyproject.toml" in names:  # `pdm run` in PEP 582 mode: __pypackages__/<version>/bin (no venv)
        rels.append("__pypackages__/*/bin")
    if ".envrc" in names:
        rels += envrc(_text(read(".envrc")))
    for name in (".mise.toml", "mise.toml", ".mise.local.toml", "mise.local.toml", ".rtx.toml"):
        if name in names:
            rels += mise(_text(read(name)))
    # a Makefile, and a `.mk` beside it (`make -f tools.mk`, or one it includes)
    for name in sorted(n for n in names if n in ("GNUmakefile", "makefile", "Makefile") or n.endswith(".mk"))[:16]:
        rels += make(_text(read(name)), read)
    out: list[str] = []
    for rel in rels:
        p = os.path.normpath(os.path.join(d, os.path.expanduser(rel)))
        if p not in out:
            out.append(p)
    return out


def expand(d: str) -> tuple[str, list[str]]:
    """A PATH directory as `added` gave it, and the directories it names now: itself, or for a pattern
    (`<ws>/.direnv/python-*/bin`) each match; the first: the directory whose new entries change the matches
    ("" for a plain one)."""
    if "*" not in d:
        return "", [d]
    import fnmatch

    head, _, rest = d.partition("*")
    top, _, start = head.rpartition("/")
    comp, _, tail = (start + "*" + rest).partition("/")
    try:
        names = sorted(n for n in os.listdir(top) if fnmatch.fnmatchcase(n, comp))
    except OSError:
        names = []
    return top, [os.path.join(top, n, tail) for n in names]


def _text(data: bytes | None) -> str:
    return data.decode("utf-8", "replace") if data else ""


def _here(entry: str) -> str:
    """An entry with its `this directory` spelling ($PWD, $(pwd), $(CURDIR), {{config_root}}) made relative;
    "" when it still names a variable (unknown: not counted)."""
    entry = _HERE.sub(".", entry.strip().strip("'\""), count=1)
    return "" if not entry or "$" in entry or "`" in entry or "{{" in entry else entry


def prepended(values) -> list[str]:  # noqa: ANN001 - an iterable of PATH values
    """The entries of PATH values that come before the old PATH (`bin:$PATH`: `bin`); every entry of a value
    that does not name the old PATH at all (it replaces it)."""
    out: list[str] = []
    for value in values:
        for entry in value.strip().strip("'\"").split(":"):
            if _SELF.match(entry.strip()):
                break
            if rel := _here(entry):
                out.append(rel)
    return out


def envrc(text: str) -> list[str]:
    """What direnv puts first on PATH for this `.envrc`: PATH_add, path_add PATH, PATH= / export PATH=, layout."""
    out: list[str] = []
    text = re.sub(r"\$\(expand_path\s+['\"]?([^)\s'\"]+)['\"]?\s*\)", r"\1", text)  # direnv's own helpers
    text = text.replace("$(direnv_layout_dir)", ".direnv")
    # the shell's own ways to name a directory here: $(realpath bin), $(readlink -f bin), $(cd bin && pwd)
    text = re.sub(r"\$\((?:realpath|readlink\s+-[fem])\s+['\"]?([^)\s'\"]+)['\"]?\s*\)", r"\1", text)
    text = re.sub(r"\$\(cd\s+['\"]?([^)\s'\"&;]+)['\"]?\s*&&\s*pwd(?:\s+-[PL])?\s*\)", r"\1", text)
    for part in re.split(r"\s*(?:;|&&|\|\||\|)\s*", text.replace("\n", ";")):
        try:
            cmd = shlex.split(part, comments=True)
        except ValueError:
            cmd = part.split()
        head, args = (cmd[0], cmd[1:]) if cmd else ("", [])
        if head == "PATH_add" or (head == "path_add" and args[:1] == ["PATH"]):
            out += [r for a in args[head == "path_add":] if (r := _here(a))]
        elif head == "layout" and args or head.startswith("layout_"):
            kind = args[0] if head == "layout" else head[len("layout_"):]
            out += _LAYOUTS.get("python" if kind.startswith("python") else kind, ())
        else:
            for word in cmd[1:] if head in ("export", "declare", "local", "typeset") else cmd[:1]:
                if word.startswith("PATH="):
                    out += prepended([word[5:]])
    return out


def mise(text: str) -> list[str]:
    """mise's `[env] _.path` entries (a string or a list)."""
    import tomllib

    try:
        doc = tomllib.loads(text)
    except (tomllib.TOMLDecodeError, ValueError):
        return []
    env = doc.get("env") if isinstance(doc.get("env"), dict) else {}
    under = env.get("_") if isinstance(env.get("_"), dict) else {}
    paths = under.get("path", [])
    paths = [paths] if isinstance(paths, str) else paths if isinstance(paths, list) else []
    out = [r for p in paths if isinstance(p, str) and (r := _here(p))]
    if isinstance(env.get("PATH"), str):
        out += prepended([env["PATH"]])
    return out


# make: an assignment (`override`/`export`/`private` prefixes, a target-specific one, any operator), an include
_MK_SET = re.compile(r"^(?:[^\s:=#][^:=#]*:\s+)?(?:(?:override|export|private)\s+)*([A-Za-z_][\w.-]*)\s*"
                     r"(::?:?=|[?!+]?=)\s*(.*)$")
_MK_INCLUDE = re.compile(r"^[-s]?include\s+(.+)$")
_MK_CALL = re.compile(r"\$[({]([\w.-]+)(?:\s+([^$(){}]*))?[)}]")  # innermost: no `$(` inside
_OLD, _UNKNOWN = "\x00", "\x01"


def make(text: str, read: Read) -> list[str]:
    """The directories a Makefile puts first on PATH for its recipes (rt14b c09), relative to its directory:
    every assignment to PATH, whatever its operator and prefixes, in it or a file it includes (one level), and
    `PATH=... cmd` / `export PATH=...` in its recipes; values evaluated as make would where the answer is this
    directory ($(CURDIR), $(abspath X), $(realpath X), $(shell pwd), $(dir $(lastword $(MAKEFILE_LIST))), the
    Makefile's own variables); a part make computes otherwise (`$(TOOLS)/bin`) counts as this directory."""
    lines = _mk_lines(text)
    sets = _mk_sets(lines)
    for line in list(lines):
        if (m := _MK_INCLUDE.match(line.strip())) and not line.startswith("\t"):
            for word in _mk_eval(m.group(1), sets).split()[:8]:
                word = "." + word[1:] if word.startswith(_UNKNOWN + "/") else word
                if _UNKNOWN not in word and "*" not in word:
                    lines += _mk_lines(_text(read(os.path.normpath(word))))
    sets = _mk_sets(lines)
    values: list[str] = []
    out: list[str] = []
    for line in lines:
        if line.startswith("\t"):  # a recipe: a shell line, `$$` is the shell's `$`
            if "PATH" in line:
                shell = re.sub(r"^\t[@+\-\s]*", "", line).replace("$$", "$")  # `@`: silent, `-`: errors ignored
                out += envrc(_mk_eval(shell, sets).replace(_OLD, "$PATH"))
        elif m := _MK_SET.match(line.strip()):
            if m.group(1) == "PATH":  # `+=` adds after the old PATH; `!=` is a shell's output: unknown
                values.append({"+=": "$(PATH):", "!=": _UNKNOWN}.get(m.group(2), "") + m.group(3))
    for value in values:
        entries = ["." + e[1:] if e.startswith(_UNKNOWN + "/") else e for e in _mk_eval(value, sets).split(":")]
        out += prepended([":".join(e.replace(_OLD, "$(PATH)") for e in entries if e and _UNKNOWN not in e)])
    return out


def _mk_sets(lines: list[str]) -> dict[str, str]:
    """The Makefile's own variables (the last assignment of each; not PATH, not a recipe's line)."""
    sets: dict[str, str] = {}
    for line in lines:
        if not line.startswith("\t") and (m := _MK_SET.match(line.strip())) and m.group(1) != "PATH" \
                and m.group(2) != "+=":
            sets[m.group(1)] = m.group(3)
    return sets


def _mk_lines(text: str) -> list[str]:
    return re.sub(r"\\\n\s*", " ", text).splitlines()


def _mk_eval(value: str, sets: dict[str, str], depth: int = 0) -> str:
    """`value` with the make references that name this directory made `.`, the old PATH `_OLD` and any other
    computed part `_UNKNOWN`."""
    def call(m: re.Match[str]) -> str:
        name, arg = m.group(1), m.group(2)
        if arg is None:
            if name == "PATH":
                return _OLD
            if name in ("CURDIR", "PWD"):
                return "."
            if name == "MAKEFILE_LIST":
                return "Makefile"
            return _mk_eval(sets[name], sets, depth + 1) if name in sets and depth < 4 else _UNKNOWN
        words = arg.split()
        if name in ("abspath", "realpath", "strip") or name in ("firstword", "lastword") and not words:
            return arg.strip()
        if name in ("firstword", "lastword"):
            return words[0 if name == "firstword" else -1]
        if name == "dir":
            return " ".join(os.path.dirname(w) + "/" if "/" in w else "./" for w in words)
        if name in ("patsubst", "subst") and arg.count(",") == 2:
            return arg.rsplit(",", 1)[1].strip().rstrip("/") or "."
        if name == "shell" and arg.strip() in ("pwd", "pwd -P", "pwd -L", "echo $$PWD", "echo $${PWD}"):
            return "."
        return _UNKNOWN
    for _ in range(16):
        value, n = _MK_CALL.subn(call, value)
        if not n:
            break
    return value.strip()
