"""Code files a tool's configuration names (issue 19, rt13 a59): putting back a `.coveragerc` that gained
`plugins = covplug` protects nothing when the config was already there and the turn rewrites `covplug.py`; the
tool imports it on the user's next `coverage run` / `pytest --cov`. The code a config names is part of what the
tool runs, like what a Makefile includes (byhandinc.py), so the guard watches it as class "cfgcode": in a turn
that took in untrusted content a change to it, or a new one (a module the config names that did not exist), is
put back; in a clean turn the project's own plugin is ordinary work and stays.

What counts as naming code (present or not):
- a value under a key that loads code (`plugins`, `load-plugins`, flake8's `local-plugins`, `require`,
  `setupFiles`, `globalSetup`, `transform`, `extends`, `preset`, `parser`, `rulePaths`...) in any config of a
  watched shape (byvalue.kind, guardtools/byhand tables: `.coveragerc`, setup.cfg, tox.ini, pyproject.toml,
  mypy.ini, `.pylintrc`, `.babelrc`, `.prettierrc`, `.mocharc.yml`, jest.config.json...): a relative path
  (`./p.py`, `<rootDir>/setup.js`, `./rules` resolved as node does) or a module name (`covplug`, `pkg.plug`:
  the file the project folder holds under that name, python putting the folder first on sys.path);
- a load flag inside any value (`addopts = -p plug`, `--require ./hook.js`) and, under a command key (a
  pre-commit local hook's `entry`, tox's `commands`), a script path (`python tools/check.py`) or `-m module`;
- a relative `require()` / `import` of a JS config file (`eslint.config.js` importing `./eslint-rules/x.js`),
  followed through what those import, a few levels.
Stdlib only; nothing at import; parsed results cached by content."""

from __future__ import annotations

import fnmatch
import functools
import os
import re
import stat as st
from collections.abc import Callable, Iterator

DEPTH, LIMIT = 3, 32
_JS = (".js", ".cjs", ".mjs", ".ts", ".cts", ".mts", ".jsx", ".tsx")
_RESOLVE = ("", *_JS, *(f"/index{e}" for e in _JS[:4]))
_CODE = (".py", *_JS, ".sh", ".bash", ".rb", ".pl", ".lua", ".php")
# a key part under which a value names code the tool loads (modules or paths)
_LOAD_KEYS = ("plugins", "plugin", "load-plugins", "load_plugins", "*local-plugins*", "require", "requires",
              "setupfiles*", "globalsetup", "globalteardown", "testenvironment", "transform", "extends", "preset",
              "presets", "parser", "rulepaths", "rulesdir", "rules-dir", "loader", "preload", "resolver",
              "reporters", "reporter", "snapshotresolver", "testrunner", "runner", "watchplugins", "init-hook",
              "import", "imports")
_CONFIGS = (".toml", ".cfg", ".ini", ".yaml", ".yml", ".json", ".jsonc", ".json5", *_JS)  # files followed
_MODULE_KEYS = ("plugins", "plugin", "load-plugins", "load_plugins", "*local-plugins*")  # bare names = modules
_TRIGGER = re.compile(rb"plugin|require|setup|teardown|transform|extends|preset|parser|rule|loader|preload|"
                      rb"resolver|reporter|runner|import|entry|command|-p|-m ", re.I)


@functools.cache
def _js_re() -> re.Pattern[str]:
    return re.compile(r"""(?:\brequire\s*\(|\bimport\s*\(|\bfrom|^\s*import)\s*(['"])(\.{1,2}/[^'"\n]+)\1""", re.M)


def _is_js(name: str) -> bool:
    return name.endswith(_JS)


def _folder(d: str) -> str:
    """The project folder a config in `d` belongs to (`.vscode/x.json`'s parent)."""
    return os.path.dirname(d) if os.path.basename(d)[:1] == "." and os.path.basename(d) not in (".", "..") else d


def _match(part: str, patterns: tuple[str, ...]) -> bool:
    return any(fnmatch.fnmatchcase(part, p) for p in patterns)


@functools.lru_cache(maxsize=256)
def _named(name: str, data: bytes) -> tuple[tuple[str, str], ...]:
    """(kind, word) pairs the config `name` holding `data` names: kind "path" (relative to the config's
    directory, `<rootDir>` = its folder) or "module" (a dotted name in the folder)."""
    if _is_js(name):
        return tuple(("path", m.group(2)) for m in _js_re().finditer(data.decode("utf-8", "replace")))
    if not _TRIGGER.search(data):
        return ()
    from hermes_agent.terminal.sandbox import byvalue

    out: list[tuple[str, str]] = []
    leaves = _yaml(data.decode("utf-8", "replace")) if name.endswith((".yaml", ".yml")) else byvalue._leaves(name, data)
    for key, value in leaves.items():
        parts = [p for p in key.split(".") if p and not p.isdigit()]
        loads = any(_match(p, _LOAD_KEYS) for p in parts)
        modules = any(_match(p, _MODULE_KEYS) for p in parts)
        command = bool(parts) and _match(parts[-1], byvalue._CMD_KEYS)
        words = [w for w in re.split(r"[\s,;=\"'\[\]()]+", value.replace("<rootDir>", ".")) if w]
        for i, word in enumerate(words):
            prev = words[i - 1] if i else ""
            if prev in byvalue._LOAD_FLAGS or prev == "-m" or (word[:2] == "-p" and word[2:3].isalpha()):
                arg = word[2:] if word[:2] == "-p" and prev not in byvalue._LOAD_FLAGS and prev != "-m" else word
                out.append(("path" if "/" in arg else "module", arg))
            elif (loads or command) and (word.startswith(("./", "../")) or ("/" in word and word.endswith(_CODE))):
                out.append(("path", word))
            elif modules:
                for mod in word.split(":")[:1]:  # flake8's `X1 = mod:Class`
                    out.append(("module", mod))
    return tuple(dict.fromkeys(out))


def ini(text: str) -> dict[str, str]:
    """An ini file as Python's configparser and the tools built on it read it (coverage, mypy, pylint, flake8,
    setup.cfg, tox): `[section]`, `key = value` or `key: value`, and an indented line continuing the value
    before it (`plugins =` then one module per line)."""
    out: dict[str, str] = {}
    section, last = "", ""
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line[0] in "#;":
            continue
        if raw[:1] in " \t" and last:
            out[last] = (out[last] + "\n" + line).strip()
            continue
        if line.startswith("[") and line.endswith("]"):
            section, last = line[1:-1].strip().lower() + ".", ""
            continue
        cut = line.find("=") if "=" in line else line.find(":")  # `key: value` only without an `=`
        key, value = (line[:cut], line[cut + 1:]) if cut > 0 else line.partition(" ")[::2]
        last = section + key.strip().lower()
        out[last] = value.strip().strip('"')
    return out


def _yaml(text: str) -> dict[str, str]:
    """A YAML file's `key: value` and `- item` lines under the keys they nest in, by indentation (no YAML
    library at every scan: the baseline looks at every config; what names code is a plain scalar)."""
    out: dict[str, str] = {}
    stack: list[tuple[int, str]] = []
    for raw in text.splitlines():
        body = raw.split(" #", 1)[0].rstrip()
        if not body.strip() or body.lstrip().startswith("#"):
            continue
        indent = len(body) - len(body.lstrip(" -"))
        m = re.match(r"\s*(?:-\s+)?(['\"]?)([\w.@/-]+)\1\s*:(?:\s+(.*))?$", body)
        while stack and stack[-1][0] >= indent:
            stack.pop()
        path = ".".join(k for _, k in stack)
        if m:
            key = f"{path}.{m.group(2).lower()}" if path else m.group(2).lower()
            if m.group(3):
                out[key] = m.group(3).strip().strip("'\"")
            else:
                stack.append((indent, m.group(2).lower()))
        elif body.lstrip().startswith("-"):
            out[f"{path}.{len(out)}"] = body.lstrip(" -").strip().strip("'\"")
    return out


def named(d: str, name: str, data: bytes) -> list[str]:
    """Absolute paths of the code files the config (or JS config) `d/name` holding `data` names, present or
    not (a module: its `.py` and its package's `__init__.py`; a path without a suffix: as node resolves it)."""
    folder = _folder(d)
    out: list[str] = []
    for kind, word in _named(name, data):
        if "\0" in word or "://" in word or "$" in word or "*" in word:
            continue
        if kind == "module":
            if not re.fullmatch(r"[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*", word):
                continue
            base = os.path.join(folder, *word.split("."))
            out += [base + ".py", os.path.join(base, "__init__.py")]
            continue
        path = os.path.normpath(os.path.join(d, os.path.expanduser(word)))
        out += [path] if path.endswith(_CODE) else [path + e for e in _RESOLVE[1:]]
    return list(dict.fromkeys(out))[:LIMIT]


@functools.cache
def _import_re() -> re.Pattern[bytes]:
    return re.compile(rb"^\s*(?:from\s+([A-Za-z_][\w.]*)\s+import\b|import\s+([A-Za-z_][\w.]*(?:\s*,\s*[A-Za-z_][\w.]*)*))",
                      re.M)


def _py_imports(data: bytes, folder: str) -> list[str]:
    """The project folder's own modules a plugin module imports (`import helpers`, `from pkg.x import y`),
    those present only (python finds them there first)."""
    out = []
    for m in _import_re().finditer(data):
        for mod in (m.group(1) or m.group(2) or b"").decode().replace(" ", "").split(","):
            parts = mod.split(".")
            base = os.path.join(folder, *parts)
            parents = [os.path.join(folder, *parts[:k], "__init__.py") for k in range(1, len(parts))]  # run first
            out += [p for p in (*parents, base + ".py", os.path.join(base, "__init__.py")) if os.path.isfile(p)]
    return list(dict.fromkeys(out))[:LIMIT]


def closure(d: str, name: str, data: bytes, read: Callable[[str], bytes | None]) -> Iterator[str]:
    """Every code file the config names, and what those import in turn (a JS file's relative requires, a
    Python plugin's modules of the project folder), DEPTH levels (`read(path)`: its bytes, None when absent or
    not a plain file)."""
    folder = _folder(d)
    queue, seen = [(d, name, data, 0)], set()
    while queue:
        here, nm, text, depth = queue.pop(0)
        for path in _py_imports(text, folder) if depth and nm.endswith(".py") else named(here, nm, text):
            if path in seen or len(seen) >= LIMIT:
                continue
            seen.add(path)
            yield path
            got = read(path)
            if got is not None and path.endswith((*_JS, ".py")) and depth + 1 < DEPTH:
                queue.append((os.path.dirname(path), os.path.basename(path), got, depth + 1))


def follow(walk: object, d: str, name: str) -> None:
    """Watch the code files the config (d, name) names as class "cfgcode" in guardscan's `walk` (a slot it
    already watches keeps its own, stricter or equal, class)."""
    if not (name.startswith(".") or name.endswith(_CONFIGS)):
        return  # a run-by-hand file that is code itself (setup.py, a Makefile): byhand.py's and byhandinc.py's
    item = walk.scan.items.get((d, name))  # type: ignore[attr-defined]
    if item is None or item.data is None or item.kind != st.S_IFREG:
        return
    scan = walk.scan  # type: ignore[attr-defined]

    def read(path: str) -> bytes | None:
        slot = os.path.split(path)
        got = scan.items.get(slot) if slot in scan.items else walk.add(slot, "cfgcode", False)  # type: ignore[attr-defined]
        return got.data if got is not None and got.kind == st.S_IFREG else None
    for _ in closure(d, name, item.data, read):
        pass


def risky(old: object, cur: object, tainted: bool) -> str:
    """Why a code file a config names must be put back: in a tainted turn, a change or a new one."""
    if not tainted or cur is None or cur.kind == st.S_IFDIR:  # type: ignore[attr-defined]
        return ""
    if cur.kind != st.S_IFREG or cur.data is None:  # type: ignore[attr-defined]
        return "a tool's configuration names it as code to load, and it is now not a plain readable file"
    before = old.data if old is not None and old.kind == st.S_IFREG else None  # type: ignore[attr-defined]
    if before == cur.data:  # type: ignore[attr-defined]
        return ""
    return ("the turn took in untrusted content, and a tool's configuration names this file as code it loads "
            f"when the user runs the tool ({'changed' if before is not None else 'new file'})")


def namer_of(path: str, levels: int = 8) -> str:
    """The config, in the directory of `path` or up to `levels` above, that names `path` as code it loads ("":
    none): hermes's own write of it in a tainted turn (runlater.path_verdict)."""
    from hermes_agent.nofollow import read_regular_or_none
    from hermes_agent.terminal.sandbox import byhand, byvalue

    def read(p: str) -> bytes | None:
        return read_regular_or_none(p, 1 << 20)
    d = os.path.dirname(path)
    for _ in range(levels):
        try:
            names = [n for n in sorted(os.listdir(d)) if byvalue.kind(d, n, True) or n in byhand.TABLE]
        except OSError:
            names = []
        for n in names[:64]:
            data = read(os.path.join(d, n))
            if data is not None and path in closure(d, n, data, read):
                return os.path.join(d, n)
        if d == "/":
            break
        d = os.path.dirname(d)
    return ""
