"""The directories a project's own tools put FIRST on PATH, which hermes's own $PATH never shows (issue 19, rt13
a56/a57): `npm test` / `npm run` / `npx` / yarn / pnpm put node_modules/.bin of the package directory and of
each directory above it; `composer run` vendor/bin; `pdm run` __pypackages__/<version>/bin; direnv runs the
user's `.envrc` (`PATH_add bin`, `path_add PATH tools`, `export PATH=$PWD/scripts:$PATH`, `layout
node|php|go|ruby|perl|python`); mise's `env._.path` (`.mise.toml`, `mise.toml`); a Makefile's `export PATH :=
$(CURDIR)/bin:$(PATH)` for its recipes. A program planted there under the name of a system one (`git`, `node`,
`ls`, `make`) runs in the user's unconfined shell instead of it, so the guard counts them as PATH directories
(pathbins.risky judges their entries; a venv's bin/ keeps its own rule). A directory named by a pattern
(`.direnv/python-*/bin`) is matched at each look (`expand`). The files that name them are read from the
guard's scan (no path opened); `installed` reads the package.json and lock files of node_modules (parsed, never
shown). Stdlib only."""

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
_MAKE_PATH = re.compile(r"^\s*(?:export\s+)?PATH\s*[:?!]?=\s*(.+?)\s*$", re.M)
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
    for name in ("GNUmakefile", "makefile", "Makefile"):
        if name in names:
            rels += prepended(m for m in _MAKE_PATH.findall(_text(read(name))))
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


def installed(d: str, name: str, target: bytes | None) -> bool:
    """`d/name` is a node_modules/.bin entry as npm / yarn install it: a link into `../<pkg>/` (or
    `../@scope/<pkg>/`) whose package.json `bin` names `name` with that file, <pkg> being a dependency the
    project declares (its package.json or lock file names it). Any other entry there (a regular file called
    `git`, a link to elsewhere) is no installer's (rt13 a57)."""
    nm = os.path.dirname(d)
    if os.path.basename(d) != ".bin" or os.path.basename(nm) != "node_modules" or not target:
        return False
    dest = os.path.normpath(os.path.join(d, os.fsdecode(target)))
    parts = dest[len(nm) + 1:].split("/") if dest.startswith(nm + "/") else []
    pkg = "/".join(parts[:2] if parts[:1] and parts[0].startswith("@") else parts[:1])
    if not pkg or pkg.startswith(".") or len(parts) <= pkg.count("/") + 1:
        return False
    doc = _json(os.path.join(nm, pkg, "package.json"))
    bins = doc.get("bin")
    bins = {pkg.rsplit("/", 1)[-1]: bins} if isinstance(bins, str) else bins if isinstance(bins, dict) else {}
    if not isinstance(bins.get(name), str) or os.path.normpath(os.path.join(nm, pkg, bins[name])) != dest:
        return False
    project = os.path.dirname(nm)
    own = _json(os.path.join(project, "package.json"))
    if any(isinstance(own.get(k), dict) and pkg in own[k] for k in
           ("dependencies", "devDependencies", "optionalDependencies", "peerDependencies")):
        return True
    for lock, needle in (("package-lock.json", f'"node_modules/{pkg}"'), ("npm-shrinkwrap.json", f'"node_modules/{pkg}"'),
                         ("yarn.lock", f"{pkg}@"), ("pnpm-lock.yaml", f"/{pkg}@")):
        if needle.encode() in (_read(os.path.join(project, lock)) or b""):
            return True
    return False


def _read(path: str) -> bytes | None:
    """A small file's bytes, the last component not followed (only parsed here: nothing is shown; the package
    directory may be npm's link to a local `file:` dependency)."""
    from hermes_agent.terminal.sandbox.guarditem import read_at

    try:
        fd = os.open(os.path.dirname(path), os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    except OSError:
        return None
    try:
        return read_at(fd, os.path.basename(path))
    finally:
        os.close(fd)


def _json(path: str) -> dict:
    import json

    try:
        doc = json.loads(_read(path) or b"{}")
    except ValueError:
        return {}
    return doc if isinstance(doc, dict) else {}
