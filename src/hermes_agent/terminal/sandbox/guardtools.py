"""Project tool configs that carry commands, for the run-later guard (guard.py): one table of file shapes
(where the file lies relative to a directory of the workspace, how it is parsed) and the keys whose values a
tool runs or loads code from when the user merely uses the project (`npm test` with `node-options`, `cargo
build` with a `runner`, the next `cd` with mise's `hooks`, VS Code opening the folder with an interpreter
path). A new or changed file is allowed when no such key was added or changed; else it is put back (previous
content restored, a new file quarantined) and the key is named in the line. Files are parsed (ini, TOML,
YAML, JSON with comments), never searched as text; one that does not parse counts as changing every key.

Python's start-up files in a workspace venv (`.pth`, sitecustomize, the modules they import) are judged
by guardpy.py. Stdlib only (ruamel.yaml, a dependency, is imported when a `.yarnrc.yml` changes)."""

from __future__ import annotations

import fnmatch
import json
import os
import re
from collections.abc import Callable

from hermes_agent.messages import safe_loads
from hermes_agent.terminal.sandbox import toolvalues as tv

Flat = dict[str, str]  # "section.key" (lower-case) -> the value as text

# (value test, what it means): "" any value; "path:" a value starting with it; "writable" a path the sandbox
# can write (a venv whose interpreter home is in the workspace)
Rule = tuple[str, str]


def _ini(data: str) -> Flat:
    """npmrc, pip.conf, pyvenv.cfg, yarn v1's `.yarnrc` (`key "value"`): `[section]`, `key = value`."""
    out: Flat = {}
    section = ""
    for raw in data.splitlines():
        line = raw.strip()
        if not line or line[0] in "#;":
            continue
        if line.startswith("[") and line.endswith("]"):
            section = line[1:-1].strip().lower() + "."
            continue
        key, sep, value = line.partition("=")
        if not sep:
            key, _, value = line.partition(" ")
        key = key.strip().lower()
        if key.endswith("[]"):  # npm's array syntax: every entry counts
            key = key[:-2]
            out[section + key] = out.get(section + key, "") + "\n" + value.strip()
            continue
        out[section + key] = value.strip().strip('"')
    return out


def _npm_unsafe(raw: str) -> str:
    """npm's ini reader on one key or value: trimmed; a quoted one loses its quotes (a double-quoted one is
    read as JSON, escapes and all); else `\\;` and `\\#` are unescaped and an unescaped `;` or `#` starts a
    comment."""
    import json as _json

    val = raw.strip()
    if len(val) > 1 and val[0] == val[-1] and val[0] in "'\"":
        if val[0] == "'":
            return val[1:-1]
        try:
            got = _json.loads(val)
        except ValueError:
            return val
        return got if isinstance(got, str) else val
    out, esc = [], False
    for c in val:
        if esc:
            out.append(c if c in "\\;#" else "\\" + c)
            esc = False
        elif c in ";#":
            break
        elif c == "\\":
            esc = True
        else:
            out.append(c)
    return "".join(out).strip()


def _npmrc(data: str) -> Flat:
    """`.npmrc` read the way npm's `ini` does: quoted keys and values unquoted (`"node-options" = ...` is
    node-options), `key[]` arrays, a key without `=` set to true; keys lower-cased with `_` as `-` (more
    names match the rules, never fewer). A key npm would expand (`${VAR}`) cannot be judged: the file then
    counts as setting every key."""
    out: Flat = {}
    section = ""
    for line in re.split(r"[\r\n]+", data):
        if not line.strip() or line.lstrip()[:1] in (";", "#"):
            continue
        head = re.fullmatch(r"\[([^\]]*)\]\s*", line)
        if head:
            section = _npm_unsafe(head.group(1)).lower() + "."
            continue
        key_raw, sep, value_raw = line.partition("=")
        if not key_raw:
            continue
        key = _npm_unsafe(key_raw)
        if "${" in key:
            raise ValueError(f"npm expands variables in the key {key!r}")
        value = _npm_unsafe(value_raw) if sep else "true"
        key = key.lower().replace("_", "-")
        if key.endswith("[]"):
            key = key[:-2]
            out[section + key] = out.get(section + key, "") + "\n" + value
            continue
        out[section + key] = value
    return out


def _flatten(value: object, prefix: str, out: Flat) -> None:
    if isinstance(value, dict):
        if not value and prefix:
            out[prefix] = "{}"
        for k, v in value.items():
            _flatten(v, f"{prefix}.{str(k).lower()}" if prefix else str(k).lower(), out)
    else:
        out[prefix] = json.dumps(value, sort_keys=True, default=str) if not isinstance(value, str) else value


def _toml(data: str) -> Flat:
    import tomllib

    out: Flat = {}
    _flatten(tomllib.loads(data), "", out)
    return out


def _yaml(data: str) -> Flat:
    from ruamel.yaml import YAML

    doc = YAML(typ="safe", pure=True).load(data)
    out: Flat = {}
    if doc is None:
        return out
    if not isinstance(doc, dict):
        raise ValueError("not a mapping")
    _flatten(doc, "", out)
    return out


def _jsonc(data: str) -> Flat:
    """VS Code's JSON with comments and trailing commas. Top-level keys are dotted setting names already."""
    doc = safe_loads(_strip_jsonc(data) or "{}")
    if not isinstance(doc, dict):
        raise ValueError("not an object")
    return {str(k).lower(): json.dumps(v, sort_keys=True) for k, v in doc.items()}


def _strip_jsonc(text: str) -> str:
    out: list[str] = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if c == '"':
            j = i + 1
            while j < n and text[j] != '"':
                j += 2 if text[j] == "\\" else 1
            out.append(text[i:j + 1])
            i = j + 1
        elif text.startswith("//", i):
            i = text.find("\n", i) if "\n" in text[i:] else n
        elif text.startswith("/*", i):
            end = text.find("*/", i + 2)
            i = n if end < 0 else end + 2
        elif c in "}]":
            k = len(out) - 1
            while k >= 0 and out[k].isspace():
                k -= 1
            if k >= 0 and out[k] == ",":
                out[k] = ""
            out.append(c)
            i += 1
        else:
            out.append(c)
            i += 1
    return "".join(out).strip()


def _tool_versions(data: str) -> Flat:
    """asdf's `.tool-versions`: `tool version...` per line (`path:/dir` uses the binaries in that dir)."""
    out: Flat = {}
    for raw in data.splitlines():
        fields = raw.split("#", 1)[0].split()
        if fields:
            out[fields[0].lower()] = " ".join(fields[1:])
    return out


_CARGO = ("target.*.runner", "target.*.linker", "target.*.rustflags", "target.*.rustdocflags", "host.linker",
          "host.*.linker", "host.rustflags", "host.*.rustflags", "build.rustc", "build.rustc-wrapper",
          "build.rustc-workspace-wrapper", "build.rustdoc", "build.rustflags", "build.rustdocflags", "alias.*",
          "env.*", "credential-provider", "registry.credential-provider", "registry.global-credential-providers",
          "registries.*", "source.*", "patch.*", "paths", "doc.browser", "unstable.*", "include", "core.*")
_MISE = ("env", "env.*", "hooks.*", "plugins.*", "watch_files*", "tools.*=path:", "tools.*=ref:",
         "settings.*", "redactions*", "vars.*")
# VS Code: extensions read any setting as a program or a folder to run from (go.alternateTools, go.goroot,
# java.jdt.ls.java.home, terminal.external.linuxExec...), so a name list is always one short (rt9 a09). Judged by
# VALUE: whatever the key, a string anywhere in it that points into the workspace or a writable place is
# dangerous ("*=pointsin"); key patterns still catch values that are not paths (args, env, trust). Keys that
# only shape the editor's look and lists ("!pattern") are never dangerous.
_VSCODE_HARMLESS = ("!editor.*", "!workbench.*", "!window.*", "!explorer.*", "!breadcrumbs.*",
                    "!diffeditor.*", "!files.exclude", "!files.associations", "!files.watcherexclude",
                    "!files.eol", "!files.encoding", "!files.trimtrailingwhitespace", "!files.insertfinalnewline",
                    "!files.autosave", "!search.exclude", "!search.useignorefiles", "!cspell.words",
                    "!cspell.ignorewords", "!markdown.preview.fontsize", "!zenmode.*", "!outline.*",
                    # where a language server looks for sources to index (read, never run)
                    "!python.analysis.extrapaths", "!python.analysis.include", "!python.analysis.exclude",
                    "!python.autocomplete.extrapaths")
_VSCODE = (*_VSCODE_HARMLESS, "*=pointsin", "*path", "*executable*", "*interpreter*", "*runtime*", "*command*",
           "*binary*", "*server*", "*args*", "*exec*", "terminal.*", "*.env.*", "*.env",
           "task.*", "git.*hook*", "python.venvfolders", "security.*", "*trust*", "*automatic*")
_NPM = ("node-options", "script-shell", "shell", "onload-script", "init-module", "editor", "browser", "git",
        "viewer", "userconfig", "globalconfig", "prefix", "node-gyp", "registry", "*:registry", "npm-path",
        "ignore-scripts", "git-tag-version", "sign-git-commit")
_PIP = ("*.index-url", "*.extra-index-url", "*.find-links", "*.trusted-host", "*.no-index", "*.src",
        "*.prefix", "*.target", "*.root", "*.config-settings", "*.use-pep517")

# (path below a directory of the workspace, parser, dangerous key patterns ("pattern=prefix": only values
# starting with prefix; "=writable": a path the sandbox can write), the tool that runs them)
TABLE: tuple[tuple[str, Callable[[str], Flat], tuple[str, ...], str], ...] = (
    (".npmrc", _npmrc, _NPM, "npm and npx"),
    (".yarnrc.yml", _yaml, ("yarnpath", "plugins*", "injectenvironmentfiles*", "npmregistryserver",
                            "npmscopes.*", "unsafehttpwhitelist*"), "yarn"),
    (".yarnrc", _ini, ("yarn-path", "registry", "--*", "*:registry"), "yarn"),
    (".mise.toml", _toml, _MISE, "mise"),
    ("mise.toml", _toml, _MISE, "mise"),
    (".mise.local.toml", _toml, _MISE, "mise"),
    ("mise.local.toml", _toml, _MISE, "mise"),
    (".mise/config.toml", _toml, _MISE, "mise"),
    (".config/mise.toml", _toml, _MISE, "mise"),
    (".config/mise/config.toml", _toml, _MISE, "mise"),
    (".rtx.toml", _toml, _MISE, "mise"),
    (".tool-versions", _tool_versions, ("*=path:", "*=version"), "asdf and mise"),
    (".cargo/config.toml", _toml, _CARGO, "cargo"),
    (".cargo/config", _toml, _CARGO, "cargo"),
    (".vscode/settings.json", _jsonc, _VSCODE, "VS Code"),
    (".venv/pip.conf", _ini, _PIP, "the venv's pip"),
    ("venv/pip.conf", _ini, _PIP, "the venv's pip"),
    (".venv/pyvenv.cfg", _ini, ("home=writable", "executable=writable", "base-executable=writable"),
     "the venv's python"),
    ("venv/pyvenv.cfg", _ini, ("home=writable", "executable=writable", "base-executable=writable"),
     "the venv's python"),
    # judged by value (toolvalues.py): a path into a writable place, a flag that loads code (rt11 a38)
    ("rust-toolchain.toml", tv.rust_toolchain, tv.RUST, "rustup (cargo, rustc)"),
    ("rust-toolchain", tv.rust_toolchain, tv.RUST, "rustup (cargo, rustc)"),
    (".mvn/jvm.config", tv.flag_file, tv.JVM, "Maven's JVM"),
    (".mvn/maven.config", tv.flag_file, tv.JVM, "Maven"),
    (".mvn/extensions.xml", tv.extensions_xml, tv.EXTENSIONS, "Maven (an extension is code it loads)"),
    (".mvn/wrapper/maven-wrapper.properties", tv.properties, tv.WRAPPER, "the Maven wrapper"),
    (".jvmopts", tv.flag_file, tv.JVM, "sbt's JVM"),
    (".sbtopts", tv.flag_file, tv.JVM, "sbt"),
    ("gradle.properties", tv.properties, tv.GRADLE, "Gradle"),
    ("gradle/wrapper/gradle-wrapper.properties", tv.properties, tv.WRAPPER, "the Gradle wrapper"),
    (".python-version", tv.version_file, tv.VERSION, "pyenv and uv"),
    (".nvmrc", tv.version_file, tv.VERSION, "nvm and fnm"),
    (".node-version", tv.version_file, tv.VERSION, "fnm, nodenv and volta"),
    (".ruby-version", tv.version_file, tv.VERSION, "rbenv and chruby"),
    (".java-version", tv.version_file, tv.VERSION, "jenv"),
    ("bunfig.toml", _toml, tv.BUN, "bun"),
    (".bazelrc", tv.flag_file, tv.BAZEL, "bazel"),
    ("global.json", tv.json_file, tv.DOTNET, "dotnet"),
    ("pip.conf", _ini, _PIP, "the venv's pip"),
    ("pyvenv.cfg", _ini, ("home=writable", "executable=writable", "base-executable=writable"),
     "the venv's python"),
)
PATHS = tuple(rel for rel, *_ in TABLE)


def _strings(value: str) -> list[str]:
    """Every string in a setting's value: the value itself, or each string nested in its JSON (object values,
    array items)."""
    try:
        doc = json.loads(value)
    except ValueError:
        return [value]
    out: list[str] = []
    todo = [doc]
    while todo:
        item = todo.pop()
        if isinstance(item, str):
            out.append(item)
        elif isinstance(item, dict):
            todo.extend(item.values())
        elif isinstance(item, list):
            todo.extend(item)
    return out


def _points_in(text: str, writable: Callable[[str], bool], folder: str | None) -> bool:
    """A setting's string that is, or leads into, a place the sandbox can write: a variable (`${workspaceFolder}`,
    `${env:...}`: resolved where the sandbox may have put it), a relative path (`./x`, `.bin/go`, `~/x`), an
    absolute path the sandbox can write, or a bare name of a file in the workspace folder."""
    value = text.strip()
    if not value or "://" in value:
        return False
    if "${" in value or value.startswith(("./", "../", ".\\", "~")):
        return True
    if value.startswith("/"):
        return writable(os.path.normpath(value)) or writable(os.path.realpath(value))
    if "/" in value or "\\" in value:
        return True  # relative to the workspace folder
    return folder is not None and not value.startswith("-") and os.path.lexists(os.path.join(folder, value))
_BY_NAME = {rel: (parse, rules, tool) for rel, parse, rules, tool in TABLE}


def shape(d: str, name: str) -> str | None:
    """The table entry for the file `name` in directory `d` (matched by the path's tail), or None."""
    path = f"{d}/{name}"
    return next((rel for rel in PATHS if path.endswith("/" + rel)), None)


def risky(rel: str, old: bytes | None, new: bytes | None, writable: Callable[[str], bool],
          folder: str | None = None) -> str:
    """Why the change from `old` to `new` (None: absent) of a file of shape `rel` must be put back: "" when
    it adds or changes no dangerous key (a removed key is fine), else the keys and the tool. `folder`: the
    directory the file's relative paths are read from (the workspace folder of a .vscode/), when known."""
    if new is None:
        return ""
    parse, rules, tool = _BY_NAME[rel]
    try:
        now = parse(new.decode("utf-8", "replace"))
    except Exception:  # noqa: BLE001 - any parse error: the tool might read it differently; fail closed
        return f"it does not parse as {tool} reads it, so every setting counts ({tool} reads it)"
    try:
        before = parse(old.decode("utf-8", "replace")) if old is not None else {}
    except Exception:  # noqa: BLE001
        before = {}
    keys = [k for k, v in now.items() if before.get(k) != v and _dangerous(k, v, rules, writable, folder)]
    if not keys:
        return ""
    shown = ", ".join(sorted(keys)[:4]) + (" ..." if len(keys) > 4 else "")
    return f"it sets {shown} ({tool} runs or loads code from it on the user's next use)"


def _dangerous(key: str, value: str, rules: tuple[str, ...], writable: Callable[[str], bool],
               folder: str | None = None) -> bool:
    if any(r.startswith("!") and fnmatch.fnmatchcase(key, r[1:]) for r in rules):
        return False
    for rule in rules:
        pattern, _, cond = rule.partition("=")
        if pattern.startswith("!") or not fnmatch.fnmatchcase(key, pattern):
            continue
        if not cond:
            return True
        if cond == "pointsin":
            if any(_points_in(v, writable, folder) for v in _strings(value)):
                return True
            continue
        if cond in tv.CONDITIONS:  # judged by value (toolvalues.py): each string of a list or table
            if any(tv.judge(cond, v, writable) for v in (_strings(value) if cond != "flags" else [value])):
                return True
            continue
        if cond == "writable":
            path = value.strip().strip('"')  # the path as written and where it leads now (a link can move)
            if not path.startswith("/") or writable(os.path.normpath(path)) or writable(os.path.realpath(path)):
                return True
        elif value.strip().strip('"').startswith(cond):
            return True
    return False
