"""Run-later files the guard's table adds (issue 19, rt7): start-up files a debugger or REPL runs from the
current directory, a venv's `bin/` (activate scripts, console scripts), and `package.json` scripts that a
git hook reaches through a package manager (husky's `.husky/pre-commit` saying `npm test`). The same
verdicts serve the confined side (guardverdict.py: put back) and hermes's own file tools in a tainted turn
(`path_verdict`: the approval gate asks, `chat -q` refuses) — one judgement for both. Stdlib only; regexes
compiled on first use."""

from __future__ import annotations

import ast
import functools
import json
import os
import re
from collections.abc import Callable, Iterable

# Files a tool runs from the directory it starts in, whatever they say (code, not settings).
RC_FILES = {
    ".envrc": "direnv runs .envrc when the user enters the directory",
    ".pdbrc": "pdb runs it when the user debugs here (python -m pdb, pytest --pdb, breakpoint())",
    ".pdbrc.py": "pdb++ runs it when the user debugs here",
    ".irbrc": "irb runs it when started here", "_irbrc": "irb runs it when started here",
    "irb.rc": "irb runs it when started here",
    ".gdbinit": "gdb runs it when started here", ".lldbinit": "lldb runs it when started here",
    ".exrc": "vim and nvim with 'exrc' run it when started here", ".nvimrc": "nvim with 'exrc' runs it here",
    ".nvim.lua": "nvim with 'exrc' runs it here",
    ".Rprofile": "R runs it when started here", ".ghci": "ghci runs it when started here",
    ".pryrc": "pry runs it when started here", ".erlang": "erl runs it when started here",
    ".iex.exs": "iex runs it when started here", ".ocamlinit": "utop and ocaml run it when started here",
    ".sbclrc": "sbcl runs it when started here", ".psqlrc": "psql runs its backslash commands here (\\!)",
    "bunfig.toml": "bun runs its preload scripts at every bun command here",
    ".pnpmfile.cjs": "pnpm runs it at every install here",
    ".octaverc": "octave runs it when started here",
}
_BIN_WHY = "the user runs it from the venv (activate, console scripts; VS Code sources activate in new terminals)"
_PKG_WHY = "a git hook runs it through the package manager on the user's next commit"
Writable = Callable[[str], bool]


# -- a venv's bin/ -------------------------------------------------------------------------------------------

def venv_of(path: str, stop: Iterable[str] = ()) -> str | None:
    """The virtual environment `path` lies in: the nearest directory above it holding `pyvenv.cfg` (found by
    the file, whatever the directory is called: .venv, .tox/py311, .direnv/python-3.11, .nox/tests)."""
    stops = set(stop)
    d = os.path.dirname(path)
    for _ in range(8):
        if os.path.isfile(os.path.join(d, "pyvenv.cfg")) and not os.path.islink(os.path.join(d, "pyvenv.cfg")):
            return d
        if d in stops or d == os.path.dirname(d):
            return None
        d = os.path.dirname(d)
    return None


def bin_risky(venv: str, name: str, data: bytes | None, writable: Writable) -> str:
    """Why a new or changed file `name` of `venv`/bin may not stay ("" when it may): a file of the shape uv venv or
    virtualenv writes (venvshapes.py), an activate script as the base Python's own template renders it, a console script only in the shape installers write
    (a shebang naming the venv's python, imports, `sys.exit(entry())`); anything else (a shell script, a
    binary) is code the user will run."""
    if data is None:
        return "it is not a plain readable file, so it cannot be checked (" + _BIN_WHY + ")"
    from hermes_agent.terminal.sandbox.venvshapes import known_file

    if known_file(venv, data):  # uv venv's or virtualenv's own activate scripts, recognised by their shape
        return ""
    if name.lower().startswith("activate"):
        return "" if _activate_ok(venv, name, data, writable) else f"it is not the activate script venv writes ({_BIN_WHY})"
    if console_ok(venv, data, writable):
        return ""
    if _installed(venv, name, data):  # a RECORD is as writable as bin/ itself: no proof for a system program's name
        from hermes_agent.terminal.sandbox import pathbins

        other = pathbins.shadowed(os.path.join(venv, "bin"), name)
        return "" if not other else (f"it is named like {other}, and the package record that lists it lies where the "
                                     f"sandbox writes ({_BIN_WHY}; if pip made it, install again outside hermes)")
    return f"it is not a console script as installers write it, nor a file an installed package records ({_BIN_WHY})"


def _installed(venv: str, name: str, data: bytes) -> bool:
    """`bin/name` is a file an installed package put there (`pip install ruff`: a binary): a RECORD of the
    venv's site-packages lists it with this content's sha256. (Writing a matching RECORD is installing a
    package, which commands may do anyway; what this refuses is a file no installer wrote.)"""
    import base64
    import glob
    import hashlib

    digest = "sha256=" + base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    target = os.path.join(venv, "bin", name)
    for record in glob.glob(os.path.join(glob.escape(venv), "lib", "python*", "site-packages", "*.dist-info",
                                         "RECORD"))[:2000]:
        try:
            with open(record, encoding="utf-8", errors="replace") as f:
                rows = f.read(1 << 22).splitlines()
        except OSError:
            continue
        site = os.path.dirname(os.path.dirname(record))
        for row in rows:
            path, _, rest = row.partition(",")
            if path.endswith("/" + name) and rest.startswith(digest + ",") and \
                    os.path.normpath(os.path.join(site, path)) == target:
                return True
    return False


def _cfg(venv: str) -> dict[str, str]:
    try:
        with open(os.path.join(venv, "pyvenv.cfg"), encoding="utf-8", errors="replace") as f:
            text = f.read(65536)
    except OSError:
        return {}
    return {k.strip().lower(): v.strip() for k, _, v in (ln.partition("=") for ln in text.splitlines()) if _}


def _activate_ok(venv: str, name: str, data: bytes, writable: Writable) -> bool:
    cfg = _cfg(venv)
    ver = ".".join(cfg.get("version", cfg.get("version_info", "")).split(".")[:2])
    home = cfg.get("home", "")
    if not ver or not home.startswith("/"):
        return False
    base = os.path.dirname(os.path.normpath(home))
    for sub in ("common", "posix", "nt"):
        tpl = os.path.join(base, "lib", f"python{ver}", "venv", "scripts", sub, name)
        if writable(tpl) or writable(os.path.realpath(tpl)):
            continue
        try:
            with open(tpl, "rb") as f:
                template = f.read(1 << 20)
        except OSError:
            continue
        return _template_re(template).fullmatch(data) is not None
    return False


@functools.lru_cache(maxsize=16)
def _template_re(template: bytes) -> re.Pattern[bytes]:
    """The template with each __VENV_X__ placeholder as a value that cannot run anything: inside double
    quotes no `$`, backquote, backslash or quote; elsewhere a shell word of safe characters or a quoted one
    (what shlex.quote writes)."""
    out, pos = [], 0
    for m in re.finditer(rb"__VENV_[A-Z_]+__", template):
        out.append(re.escape(template[pos:m.start()]))
        quoted = template[max(0, m.start() - 1):m.start()] == b'"'
        out.append(rb'[^\n"$`\\\']*' if quoted else rb"(?:'[^'\n]*'|[\w@%+=:,./-])*")
        pos = m.end()
    out.append(re.escape(template[pos:]))
    return re.compile(b"".join(out))


def console_ok(venv: str, data: bytes, writable: Writable) -> bool:
    """A console script: `#!<venv>/bin/python*` (or an interpreter the sandbox cannot write; or the
    `#!/bin/sh` + `'''exec' <python>` prologue pip writes for long paths), then Python of the installers'
    shape only."""
    text = data.decode("utf-8", "strict") if data.isascii() or _utf8(data) else ""
    lines = text.split("\n")
    if not text.startswith("#!"):
        return False
    python = lines[0][2:].strip()
    if python == "/bin/sh" and len(lines) > 2:
        m = re.fullmatch(r"'''exec' (?:'([^']+)'|(\S+)) \"\$0\" \"\$@\"", lines[1])
        python = (m.group(1) or m.group(2)) if m else ""
    if not _python_ok(venv, python, writable):
        return False
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError):
        return False
    return all(_stmt_ok(node, top=True) for node in tree.body)


def _utf8(data: bytes) -> bool:
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


def _python_ok(venv: str, python: str, writable: Writable) -> bool:
    if python in ("/usr/bin/env python", "/usr/bin/env python3"):
        return True
    if not python.startswith("/") or " " in python.strip():
        return False
    path = os.path.normpath(python)
    if os.path.dirname(path) == os.path.join(venv, "bin") and os.path.basename(path).startswith("python"):
        return True  # bin/python* is judged on its own (guardverdict._interpreter)
    return not writable(path) and not writable(os.path.realpath(path))


_SAFE_METHODS = {"removesuffix", "endswith", "replace"}


def _stmt_ok(node: ast.stmt, top: bool = False) -> bool:
    if isinstance(node, ast.Import):
        return top and all(a.name in ("re", "sys") and a.asname is None for a in node.names)
    if isinstance(node, ast.ImportFrom):
        return top and node.level == 0 and len(node.names) == 1 and node.names[0].name != "*"
    if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str):
        return True  # the `'''exec' ...` prologue, a docstring
    if isinstance(node, ast.If):
        main = top and ast.dump(node.test) == ast.dump(ast.parse("__name__ == '__main__'", mode="eval").body)
        return (main or _expr_ok(node.test)) and all(_stmt_ok(n) for n in node.body + node.orelse)
    if isinstance(node, ast.Assign) and not top:
        return len(node.targets) == 1 and ast.unparse(node.targets[0]) == "sys.argv[0]" and _expr_ok(node.value)
    if isinstance(node, ast.Expr) and not top:
        call = node.value
        return (isinstance(call, ast.Call) and ast.unparse(call.func) == "sys.exit" and len(call.args) == 1
                and not call.keywords and isinstance(call.args[0], ast.Call) and not call.args[0].args
                and not call.args[0].keywords and isinstance(call.args[0].func, (ast.Name, ast.Attribute))
                and "(" not in ast.unparse(call.args[0].func))
    return False


def _expr_ok(node: ast.expr) -> bool:
    """Only `sys.argv[0]`, constants, slices, `re.sub(...)` and a few string methods of those."""
    if isinstance(node, ast.Constant):
        return True
    if ast.unparse(node) == "sys.argv[0]":
        return True
    if isinstance(node, ast.Subscript):
        return _expr_ok(node.value) and isinstance(node.slice, ast.Slice) and all(
            p is None or _expr_ok(p) for p in (node.slice.lower, node.slice.upper, node.slice.step))
    if isinstance(node, ast.UnaryOp):
        return _expr_ok(node.operand)
    if isinstance(node, ast.Call) and not node.keywords:
        f = node.func
        good = ast.unparse(f) == "re.sub" or (isinstance(f, ast.Attribute) and f.attr in _SAFE_METHODS
                                              and _expr_ok(f.value))
        return good and all(_expr_ok(a) for a in node.args)
    return False


# -- package.json scripts a hook reaches -------------------------------------------------------------------

_LIFECYCLE = ("preinstall", "install", "postinstall", "prepublish", "preprepare", "prepare", "postprepare")
_BUILTIN = {"install", "i", "ci", "add", "update", "up", "rebuild", "link", "pack", "publish", "uninstall",
            "remove", "rm"}
_NOT_SCRIPTS = {"exec", "x", "dlx", "view", "info", "config", "set", "get", "help", "version", "--version",
                "-v", "whoami", "ls", "list", "outdated", "audit", "why", "cache", "login", "logout"}
_ALIASES = {"t": "test", "tst": "test", "rum": "run", "urn": "run", "run-script": "run"}


@functools.cache
def _pm_shapes() -> tuple[re.Pattern[str], re.Pattern[str]]:
    return re.compile(r"\blint-staged\b"), re.compile(r"(?<![\w.-])(npm|pnpm|yarn|bun)\b([^\n;&|)]*)")


def hook_scripts(texts: Iterable[bytes]) -> set[str]:
    """package.json keys the hook texts reach: `scripts.X` for `npm run X`, `npm test`, `yarn X`, `pnpm X`
    (with preX/postX), the install lifecycle for `npm install`/`ci`, `lint-staged` when it is called, and
    "*" (every script) for a call whose script cannot be told (a variable, an unknown word)."""
    out: set[str] = set()
    lint, call = _pm_shapes()
    for data in texts:
        if not any(w in data for w in (b"npm", b"yarn", b"bun", b"lint-staged")):
            continue
        text = data.decode("utf-8", "replace")
        if lint.search(text):
            out.add("lint-staged")
        for m in call.finditer(text):
            words = [w for w in m.group(2).split() if not w.startswith("-")]
            first = _ALIASES.get(words[0], words[0]) if words else ("install" if m.group(1) == "yarn" else "")
            if first == "run":
                name = words[1] if len(words) > 1 else "*"
            elif first in _BUILTIN:
                out.update(f"scripts.{s}" for s in _LIFECYCLE)
                continue
            elif first in _NOT_SCRIPTS:
                continue
            elif first in ("test", "start", "stop", "restart") or (m.group(1) != "npm" and first):
                name = first
            else:
                name = "*"
            name = name.strip("'\"")
            if not re.fullmatch(r"[\w:.@/-]+", name):
                name = "*"
            out.update({"scripts.*"} if name == "*" else {f"scripts.{p}{name}" for p in ("pre", "", "post")})
    return out


def pkg_risky(keys: set[str], old: bytes | None, new: bytes | None) -> str:
    """Why this change of package.json must be put back: a key of `keys` (hook_scripts) added or changed."""
    if new is None or not keys:
        return ""
    try:
        now = json.loads(new.decode("utf-8", "replace") or "{}")
        if not isinstance(now, dict):
            raise ValueError("not an object")
    except ValueError:
        return f"it does not parse as npm reads it, so every script counts ({_PKG_WHY})"
    try:
        before = json.loads(old.decode("utf-8", "replace")) if old is not None else {}
    except ValueError:
        before = {}
    before = before if isinstance(before, dict) else {}
    changed = sorted(k for k in _flat(now) | _flat(before) if _flat(now).get(k) != _flat(before).get(k)
                     and any(k == w or (w == "scripts.*" and k.startswith("scripts.")) for w in keys))
    if not changed:
        return ""
    return f"it changes {', '.join(changed[:4])}{' ...' if len(changed) > 4 else ''} ({_PKG_WHY})"


def _flat(doc: dict) -> dict[str, str]:
    out = {"lint-staged": json.dumps(doc.get("lint-staged"), sort_keys=True)}
    scripts = doc.get("scripts")
    if isinstance(scripts, dict):
        out.update({f"scripts.{k}": json.dumps(v) for k, v in scripts.items()})
    elif scripts is not None:
        out["scripts.?"] = json.dumps(scripts, sort_keys=True, default=str)
    return out


# -- hermes's own writes: the same verdicts, by path --------------------------------------------------------

_MANAGER_FILES = (".pre-commit-config.yaml", "lefthook.yml", "lefthook.yaml", ".lefthook.yml", ".lefthook.yaml",
                  "lefthook-local.yml")


def _executable(path: str, roots: tuple[str, ...]) -> bool:
    """A file the guard watches as one the user runs by hand (guarditem.executables): `*.sh` or executable."""
    from hermes_agent.terminal.sandbox.guarditem import exec_dir

    try:
        return exec_dir(os.path.dirname(path), roots) and (path.endswith(".sh") or bool(os.lstat(path).st_mode & 0o111))
    except OSError:
        return False


def path_verdict(path: str, new: bytes | None, roots: Iterable[str] = ()) -> str:
    """Why hermes's own write of `new` (None: not known in advance, a patch) to `path` (absolute) would
    plant a file a tool runs later without being asked ("" when it would not): the guard's classes and
    verdicts, by path. `roots`: where the sandbox can write (empty: everywhere, the conservative answer)."""
    from hermes_agent.terminal.sandbox import guardtools

    roots = tuple(os.path.realpath(r) for r in roots)

    def writable(p: str) -> bool:
        return not roots or any(p == r or p.startswith(r.rstrip("/") + "/") for r in roots)

    from hermes_agent.terminal.sandbox import byhand, byhandnew
    from hermes_agent.terminal.sandbox.byhandinc import includer_of

    d, name = os.path.split(path)
    old = _read(path)
    if name in RC_FILES:
        return RC_FILES[name]
    rel = next((r for r in byhand.TABLE if path.endswith("/" + r)), None)
    if rel is not None and (why := byhand.risky(rel, old, new if new is not None else b"\0?")):
        return why
    if rel is not None and old is None and (why := byhandnew.risky(path, rel, new or b"\0?", os.path.lexists)):
        return why  # a new file the project's tool loads (a `makefile` beside the `Makefile`, a conftest.py)
    if rel is None and (top := includer_of(path)) and (why := byhand.risky(name, old, new or b"\0?", included=True)):
        return f"{top} pulls it in: {why}"
    from hermes_agent.terminal.sandbox.cfgcode import namer_of

    if (top := namer_of(path)) and (new is None or new != old):  # a plugin module a config names (rt13 a59)
        return f"{top} names it as code the tool loads when the user runs it"
    if "/.git/" in path + "/" or name == ".git":
        return "git reads hooks and settings from it on the user's next git command"
    from stat import S_IFREG

    from hermes_agent.terminal.sandbox import pathbins

    if pathbins.on_path(d) and (why := pathbins.risky(d, name, S_IFREG, roots)):
        return why  # `bin/ls`, `node_modules/.bin/git`: the guard's "pathbin" class (rt11 a04, rt13 a56/a57)
    if old is not None and _executable(path, roots) and (why := byhand.exec_risky(old, new if new is not None else b"\0?")):
        return why  # `./run.sh`, `bin/tool`: the guard's "exec" class
    if name == "tasks.json" and os.path.basename(d) == ".vscode":
        return "" if new is not None and b"folderopen" not in new.lower() else \
            "VS Code runs folderOpen tasks when the folder is opened"
    rel = guardtools.shape(d, name)
    if rel is not None:
        return guardtools.risky(rel, old, new if new is not None else b"\0", writable)
    from hermes_agent.terminal.sandbox import byvalue

    if byvalue.kind(d, name, True) and not byvalue.skipped(d, roots):  # any config by its shape, judged by value
        if why := byvalue.risky(d, name, old, new if new is not None else b"\0?", writable, tainted=True):
            return why
    venv = venv_of(path)
    if venv is not None:
        why = _venv_verdict(venv, path, new, writable)
        if why:
            return why
    return _git_verdict(d, name, old, new)


def _venv_verdict(venv: str, path: str, new: bytes | None, writable: Writable) -> str:
    from hermes_agent.terminal.sandbox import guardpy

    rel = os.path.relpath(path, venv).split("/")
    name = rel[-1]
    if rel[0] == "bin" and len(rel) == 2:
        if name.startswith("python"):
            return "an IDE starts it as the project's interpreter"
        return bin_risky(venv, name, new, writable)
    if "site-packages" not in rel:
        return ""
    if name.endswith(".pth"):
        return guardpy.pth_risky(new if new is not None else b"import ?", {}, {})
    if name.split(".", 1)[0] in guardpy.CUSTOMIZE or guardpy.HACK in rel or "__pycache__" in rel[-2:-1]:
        return "python runs it at every start of the venv's interpreter"
    return ""


def _git_verdict(d: str, name: str, old: bytes | None, new: bytes | None) -> str:
    """A file in a hook directory of the repository `d` lies in (core.hooksPath, husky's `.husky/<hook>`), a
    hook manager's config, or a package.json whose scripts a hook runs."""
    from hermes_agent.terminal.sandbox.guardscan import HOOK_NAMES

    top = _worktree(d)
    if top is None:
        return ""
    hookdirs = _hook_dirs(top)
    if d in hookdirs or (name in HOOK_NAMES and os.path.join(d, "_") in hookdirs):
        return "git runs hooks on the user's next git command"
    if name in _MANAGER_FILES and d == top:
        return "a hook manager's installed hook runs what it names on the user's next commit"
    if name == "package.json":
        texts = [data for h in (*hookdirs, os.path.join(top, ".git", "hooks"), os.path.join(top, ".husky"))
                 for data in _dir_texts(h)]
        texts += [data for f in _MANAGER_FILES if (data := _read(os.path.join(top, f))) is not None]
        return pkg_risky(hook_scripts(texts), old, new if new is not None else b"?")
    return ""


def _worktree(d: str) -> str | None:
    for _ in range(32):
        if os.path.lexists(os.path.join(d, ".git")):
            return d
        if d == os.path.dirname(d):
            return None
        d = os.path.dirname(d)
    return None


def _hook_dirs(top: str) -> set[str]:
    from hermes_agent.terminal.sandbox.views import _gitdir_of, _hooks_paths

    gd = _gitdir_of(os.path.join(top, ".git"))
    configs = [os.path.join(gd, "config")] if gd else []
    home = os.path.expanduser("~")
    configs += [os.path.join(home, ".gitconfig"), os.path.join(home, ".config/git/config")]
    out = set()
    for cfg in configs:
        for raw in _hooks_paths(cfg):
            p = os.path.expanduser(raw)
            out.add(os.path.realpath(p if os.path.isabs(p) else os.path.join(top, p)))
    return out


def _read(path: str, limit: int = 1 << 20) -> bytes | None:
    from hermes_agent.nofollow import read_regular

    try:
        return read_regular(path, limit)
    except (OSError, ValueError):
        return None


def _dir_texts(d: str) -> list[bytes]:
    try:
        names = sorted(os.listdir(d))[:64]
    except OSError:
        return []
    return [data for n in names if not n.endswith(".sample") and (data := _read(os.path.join(d, n), 65536))]
