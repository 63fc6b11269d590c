"""Files a tool runs when the user opens or builds the workspace, judged by VALUE whatever their name (issue 19,
red-team round 12 a23/a31/a36): a name table (guardtools.TABLE, byhand.TABLE) is always one entry short, so the
run-later guard also watches every file of a config SHAPE and judges what a change puts in it.

Shapes (`kind`):
- "config": a dotfile config (`.pylintrc`, `.sqlfluff`, `.eslintrc.json`), a json/yaml/toml/ini/cfg/xml file in a
  dot-directory (`.devcontainer/`, `.zed/`, `.helix/`, `.vscode/`), any ini/cfg/conf/toml/yaml file, and a
  json/xml file at a top of the sandbox's writable roots. A new or changed value is run-later when it is a
  command line, a path to code in a place the sandbox can write, or sits under a code-loading key (`init-hook`,
  `*Command`, `shellHook`, `plugins`/`*path` with a path, `privileged`, a host path in `volumes`...).
- "jscode": `*.config.{js,cjs,mjs,ts}`, `.*rc.{js,cjs,mjs}`, and the editor code files `.lazy.lua`, `.nvim.lua`,
  `.nvimrc`, `.exrc`: editors and their extensions execute them, so any change is run-later.
- "version": `.*-version`, `*-toolchain`, `.tool-versions`: version managers join the value under their root, so
  a value with `/`, `\\` or `..` (or a variable, `~`) is a path.
- "hand": `*file` without an extension (Vagrantfile, Procfile, Tiltfile, Earthfile...) and `*.nix`: only in a
  tainted turn, a change whose added text holds a command, a shell hook or a privileged / host-volume key.
In a tainted turn a config's changed value under a command key (`script`, `command`, `run`...) counts too.

Ordinary edits stay: a compose service with an image and ports, a pylint `disable=`, an eslint rule in JSON, a
relative `./data:/data` volume. A file that does not parse is judged line by line (`key: value` / `key = value`),
never by failing closed (a CloudFormation `!Ref` is not an attack). Stdlib only (ruamel.yaml, a dependency, is
imported when a yaml file changed); nothing at import."""

from __future__ import annotations

import fnmatch
import json
import os
import re
import stat
from collections.abc import Callable, Iterable

Leaves = dict[str, str]  # "a.b.0.c" (lower-case) -> a string value

_CONFIG_EXT = frozenset({"json", "jsonc", "json5", "yaml", "yml", "toml", "ini", "cfg", "conf", "xml", "properties"})
_ANYWHERE_EXT = frozenset({"ini", "cfg", "conf", "toml", "yaml", "yml"})
_JS_EXT = frozenset({"js", "cjs", "mjs", "ts", "cts", "mts"})
_SKIP = frozenset({"node_modules", ".venv", "venv", "__pycache__", ".tox", ".nox", ".mypy_cache", ".pytest_cache",
                   ".ruff_cache", "target", "dist", "build", ".cache", "site-packages", ".git", ".hg", ".svn",
                   ".idea", ".direnv"})
_NOT_CONFIG = frozenset({".coverage", ".DS_Store", ".lesshst", ".viminfo", ".netrwhist", ".keep", ".gitkeep",
                         ".sudo_as_admin_successful", ".hushlogin"})  # state and markers, never read as settings
_BINARY = (b"SQLite format 3\0", b"\x7fELF", b"PK\x03\x04", b"\x1f\x8b")
TAILS = (*(f".{e}" for e in (*_CONFIG_EXT, *_JS_EXT, "nix")), *(f".{e.upper()}" for e in _CONFIG_EXT), "file",
          "File", "FILE", "-toolchain")
_LOCKS = ("package-lock.json", "composer.lock", "npm-shrinkwrap.json")
_EDITOR_CODE = frozenset({".lazy.lua", ".nvim.lua", ".nvimrc", ".exrc"})  # lazy.nvim local specs, exrc
# flags inside a value that make the tool load the module or file that follows (`addopts = -p plug`,
# `NODE_OPTIONS`-like `--require ./x.js`): judged like a `plugins` key's value
_LOAD_FLAGS = frozenset({"-p", "--require", "-r", "--import", "--loader", "--experimental-loader", "--plugin",
                         "--plugins", "--load-plugins", "--rcfile", "-javaagent"})
_CODE_EXT = (".py", ".pyc", ".js", ".cjs", ".mjs", ".ts", ".sh", ".bash", ".zsh", ".rb", ".pl", ".jar", ".so",
             ".dylib", ".node", ".exe", ".bin", ".lua", ".php", ".class")
# keys whose any non-empty value makes a tool run something (the last name of a dotted key, lower-case)
_HOOK_KEYS = ("init-hook", "init_hook", "inithook", "shellhook", "*hook", "*hooks", "?*command", "?*commands",
              "prelaunchtask", "postdebugtask", "privileged", "cap_add", "devices")
# keys whose value is run only when it names a path (a module name from site-packages is not the workspace's)
_PATH_KEYS = ("*path", "plugins", "plugin", "binary", "program", "executable", "interpreter*",
              "runtime*", "loader", "require", "preload", "server", "load-plugins", "rcfile")
# keys whose value is a command line: judged by its shape (`pytest` stays), any change in a tainted turn; a
# program key (`command`, `entry`...) naming a shell or the project's own program counts in any turn
_CMD_KEYS = ("command", "commands", "cmd", "script", "scripts", "before_script", "after_script", "entry",
             "entrypoint", "run", "exec", "args", "arguments", "shell", "test", "build", "start", "init", "before")
_SHELLS = frozenset({"sh", "bash", "zsh", "dash", "ksh", "fish", "env", "eval", "exec", "pwsh", "powershell",
                     "cmd", "osascript", "busybox"})
_PROGRAM_KEYS = frozenset({"command", "cmd", "exec", "entry", "entrypoint"})
_VOLUME_KEYS = ("volumes", "volume", "binds", "mounts", "mount")
_HOST_MODES = ("pid", "ipc", "network_mode", "userns_mode", "uts", "cgroupns")
_FALSE = ("", "false", "0", "no", "off", "none", "null", "[]", "{}")
_RX: dict[str, re.Pattern[str]] = {}


def _rx(name: str) -> re.Pattern[str]:
    """The module's patterns, compiled at first use."""
    if not _RX:
        _RX["cmd"] = re.compile(
            r"\$\(|`|>>?\s*[~/$]|\|\s*(?:ba|z|da)?sh\b|(?:^|[\s;&|(\"'])(?:sh|bash|zsh|dash|env|eval|exec|curl|"
            r"wget|nc|ncat|socat|python3?|node|perl|ruby|php|powershell|pwsh)\s+-|(?:^|[\s;&|(])(?:curl|wget|nc|"
            r"eval|chmod|rm)\s|os\.system|subprocess|child_process|execSync|spawnSync|__import__|\bsystem\s*\(|"
            r"\blocal\s*\(|\bexec\s*\(|\bshellHook\b|\binit_hook\b|\bprivileged\b|['\"\s-]/:/|\bIO\.popen|"
            r"%x\(|\bspawn\s*\(", re.IGNORECASE)
        _RX["earth"] = re.compile(r"^\s*(?:RUN|LOCALLY|ENTRYPOINT|CMD)\b")  # Earthfile, Dockerfile
        _RX["line"] = re.compile(r"^\s*[-\"']?\s*([\w.@/-]+?)\s*[\"']?\s*[:=]\s*(.*)$")
    return _RX[name]


def kind(d: str, name: str, top: bool = False) -> str:
    """The shape of the file `name` in directory `d` ("" when it has none). `top`: `d` is a writable root."""
    if not name or name in (".", "..") or (name[0] != "." and not name.endswith(TAILS)):
        return ""  # the common case, a source file, in one C call
    if (name[0] == "." and name.endswith("-version")) or name.endswith("-toolchain") or name == ".tool-versions":
        return "version"
    stem, dot, ext = name.rpartition(".")
    ext = ext.lower() if dot else ""
    if ext in _JS_EXT and (stem.endswith(".config") or (stem[:1] == "." and stem.endswith("rc"))):
        return "jscode"
    if name in _EDITOR_CODE:  # run by the editor when it opens the folder (rt13 a46)
        return "jscode"
    if name[0] == ".":
        if name in _NOT_CONFIG or name.endswith(("history", "ignore", "hsts")):
            return ""
        if not stem or ext in _CONFIG_EXT or ext.endswith("rc"):
            return "config"
        return ""
    if ext in _ANYWHERE_EXT or (ext in _CONFIG_EXT and os.path.basename(d)[:1] == "."):
        return "config"
    if ext in ("json", "xml") and top and name not in _LOCKS and "lock" not in stem.lower():
        return "config"
    if not dot and len(name) > 4 and name.lower().endswith("file"):
        return "hand"
    return "hand" if ext == "nix" else ""


def skipped(d: str, roots: Iterable[str]) -> bool:
    """A directory whose files no tool reads as the project's config (installed packages, build output), by
    the path below the nearest of `roots` (a workspace under `~/build/` is not skipped); none: not skipped."""
    best = max((r for r in roots if d == r or d.startswith(r.rstrip("/") + "/")), key=len, default=None)
    return best is not None and any(part in _SKIP for part in d[len(best):].split("/"))


def names(d: str, listing: Iterable[str], roots: Iterable[str]) -> list[str]:
    """The names of `listing` (directory `d`) the guard watches by shape."""
    roots = tuple(roots)
    if skipped(d, roots):
        return []
    from hermes_agent.terminal.sandbox import byhand, runlater

    top = d in roots
    vscode = os.path.basename(d) == ".vscode"  # tasks.json is the guard's own class
    return [n for n in listing if kind(d, n, top) and n not in runlater.RC_FILES and n not in byhand.TABLE
            and not (vscode and n == "tasks.json") and not _is_dir(f"{d}/{n}")]


def _is_dir(path: str) -> bool:
    try:
        return stat.S_ISDIR(os.lstat(path).st_mode)
    except OSError:
        return False


def unknown(d: str, known: dict[tuple[str, str], object], roots: Iterable[str] = ()) -> bool:
    """Does directory `d` hold a file of a shape that is not watched yet (one listing)?"""
    roots = tuple(roots)
    if skipped(d, roots):
        return False
    try:
        with os.scandir(d) as it:
            fresh = [e.name for e in it if (d, e.name) not in known and not e.is_dir(follow_symlinks=False)]
    except OSError:
        return False
    return bool(fresh) and bool(names(d, fresh, roots))


def risky(d: str, name: str, old: bytes | None, new: bytes | None, writable: Callable[[str], bool],
          tainted: bool = False, top: bool = False) -> str:
    """Why the change from `old` to `new` (None: absent) of the file `d/name` must be put back ("" when not)."""
    if new is None:
        return ""
    shape = kind(d, name, True)
    if shape == "jscode":
        return "" if new == old else "editors and their linters execute this file when the folder is opened"
    if shape == "version":
        bad = [v for v in _versions(new) if v not in _versions(old) and _path_like(v)]
        return f"it names the path {bad[0][:80]!r} where a version manager expects a version name" if bad else ""
    if shape == "hand":
        return _hand(old, new) if tainted and old is not None else ""
    if shape != "config" or new.startswith(_BINARY):
        return ""  # a database or archive is no tool's settings file
    now, before = _leaves(name, new), _leaves(name, old) if old is not None else {}
    folder = d[: -len(os.path.basename(d)) - 1] if os.path.basename(d)[:1] == "." else d
    keys = [k for k, v in now.items() if before.get(k) != v and _dangerous(k, v, writable, folder, tainted)]
    if not keys:
        return ""
    shown = ", ".join(sorted(keys)[:4]) + (" ..." if len(keys) > 4 else "")
    return f"it sets {shown} (a tool or editor runs or loads code from it when the user opens or builds the project)"


def _hand(old: bytes, new: bytes) -> str:
    before = set(old.decode("utf-8", "replace").splitlines())
    added = [line for line in new.decode("utf-8", "replace").splitlines() if line not in before]
    hit = next((line for line in added if _rx("cmd").search(line) or _rx("earth").match(line)), None)
    if hit is None:
        return ""
    return (f"the turn took in untrusted content, and the user runs this file by hand later; it now holds "
            f"{' '.join(hit.split())[:80]!r}")


def _versions(data: bytes | None) -> list[str]:
    if data is None:
        return []
    out = []
    for raw in data.decode("utf-8", "replace").splitlines():
        fields = raw.split("#", 1)[0].split()
        out.extend(fields[1:] if len(fields) > 1 else fields)  # `.tool-versions`: `tool version...`
    return out


def _path_like(value: str) -> bool:
    v = value.strip().strip("'\"")
    if re.fullmatch(r"lts/[\w*.-]+", v, re.IGNORECASE):  # nvm's names
        return False
    return "/" in v or "\\" in v or ".." in v or v.startswith(("~", "$")) or v.lower().startswith("path:")


def _leaves(name: str, data: bytes) -> Leaves:
    text = data.decode("utf-8", "replace")
    try:
        doc = _parse(name, text)
    except Exception:  # noqa: BLE001 - a file that does not parse is read line by line
        doc = None
    out: Leaves = {}
    if doc is None:
        for raw in text.splitlines():
            m = _rx("line").match(raw)
            key, value = (m.group(1).lower(), m.group(2)) if m else ("line", raw)
            out[f"{key}.{len(out)}" if key in out else key] = value.strip()
        return out
    _flatten(doc, "", out)
    return out


def _parse(name: str, text: str) -> object:
    ext = name.rpartition(".")[2].lower() if "." in name.lstrip(".") else ""
    body = text.lstrip()
    if ext in ("json", "jsonc", "json5") or (not ext and body[:1] in "{["):
        from hermes_agent.terminal.sandbox.guardtools import _strip_jsonc

        try:
            return json.loads(_strip_jsonc(text) or "{}")
        except ValueError:
            if ext or body[:1] == "{":
                raise  # `.coveragerc` starting with `[run]` is ini
    if ext in ("yaml", "yml"):
        from ruamel.yaml import YAML

        return YAML(typ="safe", pure=True).load(text)
    if ext == "toml":
        import tomllib

        return tomllib.loads(text)
    if ext == "xml":
        return _xml(text)
    from hermes_agent.terminal.sandbox.cfgcode import ini

    return ini(text)  # continuation lines too: `plugins =` then a module per line (rt13 a59)


def _xml(text: str) -> dict[str, object]:
    import xml.etree.ElementTree as ET

    if "<!doctype" in text.lower() or "<!entity" in text.lower():
        raise ValueError("a DTD")
    out: dict[str, object] = {}
    for n, el in enumerate(ET.fromstring(text).iter()):
        tag = el.tag.rsplit("}", 1)[-1]
        for k, v in el.attrib.items():
            out[f"{n}.{tag}.{k.rsplit('}', 1)[-1]}"] = v
        if el.text and el.text.strip():
            out[f"{n}.{tag}"] = el.text.strip()
    return out


def _flatten(value: object, prefix: str, out: Leaves) -> None:
    if isinstance(value, dict):
        for k, v in value.items():
            _flatten(v, f"{prefix}.{str(k).lower()}" if prefix else str(k).lower(), out)
    elif isinstance(value, list):
        for i, v in enumerate(value):
            _flatten(v, f"{prefix}.{i}" if prefix else str(i), out)
    elif value is not None:
        out[prefix] = value if isinstance(value, str) else json.dumps(value)


def _names_of(key: str) -> list[str]:
    return [p for p in key.split(".") if p and not p.isdigit()]


def _git_hook_in(parts: list[str]) -> bool:
    from hermes_agent.terminal.sandbox.guardscan import HOOK_NAMES

    return any(p in HOOK_NAMES for p in parts)


def _match(name: str, patterns: tuple[str, ...]) -> bool:
    return any(fnmatch.fnmatchcase(name, p) for p in patterns)


def _dangerous(key: str, value: str, writable: Callable[[str], bool], folder: str, tainted: bool) -> bool:
    parts = _names_of(key)
    last = parts[-1] if parts else ""
    v = value.strip()
    if _rx("cmd").search(v) or _code_path(v, writable) or _loads(v, writable, folder):
        return True
    if v.lower() in _FALSE:
        return False
    if any(_match(p, _HOOK_KEYS) for p in parts) and "://" not in v:  # `webhook: https://...` is a URL
        return True
    if _match(last, _CMD_KEYS) and _git_hook_in(parts):  # lefthook `pre-push.commands.x.run`: a hook
        return True  # manager runs it on the user's next git command once installed, whatever the file's name
    if last in _HOST_MODES and (v.lower() == "host" or v.lower().startswith("host:")):
        return True
    if any(p in _VOLUME_KEYS for p in parts) and _host_volume(v, last, writable):
        return True
    if _match(last, _PATH_KEYS) and (_points_in(v, writable, folder) or _module_in(v, folder)):
        return True
    words = v.split()
    if words and last in _PROGRAM_KEYS:  # `command.0` of a list too (list indexes are not names)
        if _points_in(words[0], writable, folder) or os.path.basename(words[0]) in _SHELLS:
            return True  # `command = "./tools/lsp"`: the project's program; `command = "sh"`: runs its args
    return tainted and any(_match(p, _CMD_KEYS) for p in parts)


def _code_path(value: str, writable: Callable[[str], bool]) -> bool:
    """A path (no glob) to a program or module file in a place the sandbox can write: `./x.py`, `tools/a.sh`."""
    v = value.strip().strip("'\"")
    if any(c in v for c in "*?[{ \n") or "://" in v or not v.lower().endswith(_CODE_EXT):
        return False
    if v.startswith("/"):
        return writable(os.path.normpath(v)) or writable(os.path.realpath(v))
    return "/" in v or v.startswith(("${", "$", "~"))


def _loads(value: str, writable: Callable[[str], bool], folder: str) -> bool:
    """A flag in the value that loads code (_LOAD_FLAGS, also `-pNAME`, `--require=x`) followed by a code file
    in a writable place or a module the project folder holds (`-p no:cacheprovider`, `-r fEsx` stay)."""
    words = value.replace("=", " ").split() if "-" in value else []
    for i, w in enumerate(words):
        arg = words[i + 1] if w in _LOAD_FLAGS and i + 1 < len(words) else w[2:] if w[:2] == "-p" and w[2:3].isalpha() else ""
        if arg and (_code_path(arg, writable) or _module_in(arg, folder)):
            return True
    return False


def _points_in(value: str, writable: Callable[[str], bool], folder: str) -> bool:
    from hermes_agent.terminal.sandbox import toolvalues

    if toolvalues.path_in(value, writable):
        return True
    v = value.strip().strip("'\"")  # a bare name of a file in the project folder (`binary = rt12`)
    return bool(v) and "/" not in v and not v.startswith("-") and os.path.isfile(os.path.join(folder, v))


def _module_in(value: str, folder: str) -> bool:
    """A module name (`plugins = covplug, pkg.plug`) that the project folder holds: the tool imports it from
    there, the folder being first on sys.path (rt13 a59: coverage's plugins)."""
    for item in value.replace(",", " ").split():
        mod = item.strip("'\"[]")
        if mod.replace(".", "").replace("_", "").isalnum() and not mod[:1].isdigit():
            base = os.path.join(folder, *mod.split("."))
            if os.path.isfile(base + ".py") or os.path.isfile(os.path.join(base, "__init__.py")):
                return True
    return False


def _host_volume(value: str, last: str, writable: Callable[[str], bool]) -> bool:
    """A bind of a host path outside the project (`/:/host`, `~/.ssh:/k`, `/var/run/docker.sock:...`):
    a relative one (`./data:/data`) and a named volume (`db:/var/lib/x`) stay."""
    if last in ("target", "destination", "type", "read_only", "consistency"):
        return False
    host = value.split(":", 1)[0] if last not in ("source", "src") else value
    host = host.strip().strip("'\"")
    if host.startswith(("~", "$")) or host.startswith("../") or host == "..":
        return True
    return host.startswith("/") and not writable(os.path.normpath(host))
