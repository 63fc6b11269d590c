"""Files of the workspace that a command runs: `bash a.sh`, `sh a.sh`, `./a.sh`, `source a.sh`, `make [target]`
(the Makefile's recipes), `just`/`task` (justfile recipes, Taskfile cmds: recipes.py), `python x.py` (and
other interpreters), `npm run x` / `npm test` / `npm install`
(package.json scripts). Their text is scanned with the same rules as the command, and findings name the
file. Pure: the caller hands in `reader(path, base) -> text | None | UNREADABLE` (the approval gate reads
with a fail-closed opener, approval/scriptfiles.py); without a reader nothing here runs."""

from __future__ import annotations

import shlex
from collections.abc import Iterator

from hermes_agent.approval.rules import interp, recipes, testrunners
from hermes_agent.approval.rules.canonical import SHELLS, Unwrapped, basename
from hermes_agent.approval.rules.lazyre import lazy
from hermes_agent.approval.rules.state import CONFIG_FILE_WORD, INJECT_WORD
from hermes_agent.messages import safe_loads

UNREADABLE = object()
_MAKEFILES = ("GNUmakefile", "makefile", "Makefile")
_NPM = frozenset({"npm", "pnpm", "yarn", "bun"})
_NPM_LIFECYCLE = {"install": ("preinstall", "install", "postinstall", "prepare"), "ci": ("preinstall", "install",
                  "postinstall", "prepare"), "i": ("preinstall", "install", "postinstall", "prepare")}
_NPM_DIRECT = frozenset({"test", "t", "start", "stop", "restart"})
_MAKE_INERT = frozenset({"--dry-run", "--just-print", "--recon", "--question", "--help", "-h", "-v", "--version"})
_MAKE_DRY = lazy(r"-[BbdeiIkLprRsStw]*[nq][BbdeiIkLprRsStwnq]*")
_MAKE_RULE = lazy(r"^([^\t#:=\s][^:=]*?)\s*::?(?!=)\s*([^;]*)(?:;(.*))?$")
_MAKE_VAR = lazy(r"^\s*(?:export\s+|override\s+)?([A-Za-z_][\w.]*)\s*[:?+!]?=\s*(.*)$")
_MAKE_REF = lazy(r"\$[({]([A-Za-z_][\w.]*)[)}]")
_PY_IMPORT = lazy(r"(?:^|[;\n])\s*(?:from\s+([\w.]+)\s+import|import\s+([\w., \t]+))")
_GIT_SECTION = lazy(r'^\[\s*([\w.-]+)(?:\s+"((?:[^"\\]|\\.)*)")?\s*\]')
_GIT_ENTRY = lazy(r"^([A-Za-z][\w-]*)\s*(?:=\s*(.*))?$")


def runs(u: Unwrapped) -> Iterator[tuple[str, str, tuple[str, ...]]]:
    """(kind, path, picks) for each workspace file `u` would run: kind "sh", "exe" (by its shebang),
    "make" (picks: targets and VAR=value), "npm" (picks: script names) or an interpreter language."""
    args = [a for a in u.args if a != "--"]
    if u.name == CONFIG_FILE_WORD and args:
        yield "gitconfig", args[0], ()
        return
    if u.name == INJECT_WORD and len(args) >= 2:
        yield "inject", args[1], (args[0],)
        return
    if u.name == testrunners.PLUGIN_WORD and args:  # a pytest plugin named by a config, conftest or variable
        yield from (("tests", path, ("plugin", "")) for _kind, path, _p in testrunners.dotted(args[0]))
        return
    if u.name in SHELLS or u.name in ("source", "."):
        if "-c" not in args and not any(a.startswith("-") and "c" in a[1:] and not a.startswith("--") for a in args):
            first = next((a for a in args if not a.startswith(("-", "+"))), None)
            if first:
                yield "sh", first, ()
        return
    if u.name == "make" or u.name == "gmake":
        yield from _make(args, u.workdir)
        return
    if u.name in _NPM:
        yield from _npm(u.name, args)
        return
    if u.name in ("just", "task"):
        yield from recipes.runs(u.name, args, u.workdir)
        return
    if u.name in testrunners.PROJECT_RUNNERS:  # `uv run pytest`, `poetry run python x.py`: what they run
        inner = testrunners.project_command(u.name, args)
        if inner:
            yield from runs(Unwrapped(name=basename(inner[0]).lower(), raw_name=inner[0], args=inner[1:],
                                      workdir=u.workdir))
        return
    if u.name in testrunners.RUNNERS:
        yield from testrunners.runs(u.name, args)
        return
    lang = interp.language(u.name)
    if lang == "python" and "-m" in args[:-1]:
        module = args[args.index("-m") + 1]
        if module in testrunners.RUNNERS:
            yield from testrunners.runs(module, args[args.index("-m") + 2:], module=True)
        else:
            yield from _python_module(module)
        return
    if lang == "python" and "-c" in args[:-1]:
        code = args[args.index("-c") + 1]
        names = [n.strip().split(" ")[0] for m in _PY_IMPORT.finditer(code) for n in (m.group(1) or m.group(2)).split(",")]
        for module in dict.fromkeys(n for n in names if n):
            yield from _python_module(module)
        return
    if lang and lang != "sql":
        if not any(a in ("-c", "-m", "-e", "--eval", "-E", "-p") for a in args):
            first = next((a for a in args if not a.startswith("-")), None)
            if first:
                yield lang, first, ()
        return
    if "/" in u.raw_name and not u.raw_name.startswith(("/usr/", "/bin/", "/sbin/", "/opt/", "/nix/")):
        yield "exe", u.raw_name, ()


def _python_module(module: str) -> Iterator[tuple[str, str, tuple[str, ...]]]:
    """`python -m a.b` runs a/__init__.py, a/b/__init__.py and a/b/__main__.py, or a/b.py, found from the
    working directory first (the files that do not exist are skipped by the reader)."""
    parts = module.split(".")
    if not all(p.isidentifier() for p in parts):
        return
    for i in range(1, len(parts) + 1):
        yield "python", "/".join(parts[:i]) + "/__init__.py", ()
    yield "python", "/".join(parts) + ".py", ()
    yield "python", "/".join(parts) + "/__main__.py", ()


def _make(args: list[str], workdir: str | None) -> Iterator[tuple[str, str, tuple[str, ...]]]:
    if any(a in _MAKE_INERT or _MAKE_DRY.fullmatch(a) for a in args):
        return  # prints or checks the recipes without running them
    makefile = None
    for i, a in enumerate(args):
        if a in ("-f", "--file", "--makefile") and i + 1 < len(args):
            makefile = args[i + 1]
        elif a.startswith(("--file=", "--makefile=")):
            makefile = a.split("=", 1)[1]
    picks = tuple(a for a in args if not a.startswith("-") and a != makefile)
    base = (workdir.rstrip("/") + "/") if workdir else ""
    for name in ([makefile] if makefile else _MAKEFILES):
        yield "make", base + name, picks


def _npm(name: str, args: list[str]) -> Iterator[tuple[str, str, tuple[str, ...]]]:
    words = [a for a in args if not a.startswith("-")]
    if not words:
        return
    verb = words[0]
    if verb in ("run", "run-script", "exec") and len(words) > 1:
        scripts = (f"pre{words[1]}", words[1], f"post{words[1]}")
    elif verb in _NPM_LIFECYCLE and len(words) == 1:
        scripts = _NPM_LIFECYCLE[verb]
    elif verb in _NPM_DIRECT:
        scripts = (f"pre{verb}", "test" if verb == "t" else verb, f"post{verb}")
    elif name in ("yarn", "pnpm", "bun") and verb not in ("add", "remove", "install", "dlx", "create", "x"):
        scripts = (f"pre{verb}", verb, f"post{verb}")
    else:
        return
    yield "npm", "package.json", scripts


def texts(kind: str, text: str, picks: tuple[str, ...]) -> list[tuple[str, str]]:
    """(language, text) pieces of a file to scan: "sh" for shell."""
    if kind == "sh":
        return [("sh", text)]
    if kind == "tox":
        return [("sh", testrunners.tox_commands(text))]
    if kind == "pytestcfg":  # pytest.ini & co.: the plugins `addopts = -p NAME` loads
        return [("sh", testrunners.config_plugins(picks[0], text))]
    if kind == "pytestpy":  # a conftest.py or test module pytest imports: its code and its `pytest_plugins`
        return [("python", text), ("sh", testrunners.conftest_plugins(text))]
    if kind == "gitconfig":
        return [("sh", "\n".join(f"git config {shlex.quote(k)} {shlex.quote(v)}" for k, v in git_config_pairs(text)))]
    if kind == "make":
        return [("sh", recipe) for recipe in make_recipes(text, picks)]
    if kind == "just":
        return [("sh", "\n".join(recipes.just_recipes(text, picks)))]
    if kind == "task":
        return [("sh", "\n".join(recipes.task_commands(text, picks)))]
    if kind == "npm":
        try:
            scripts = safe_loads(text).get("scripts") or {}
        except (ValueError, AttributeError):
            return []
        return [("sh", str(scripts[s])) for s in picks if isinstance(scripts, dict) and s in scripts]
    if kind == "exe":
        first = text.split("\n", 1)[0]
        if first.startswith("#!"):
            words = first[2:].split()
            interpreter = words[-1] if words and words[0].endswith("/env") else (words[0] if words else "sh")
            lang = interp.language(interpreter.rsplit("/", 1)[-1])
            if lang and lang != "sql":
                return [(lang, text)]
        return [("sh", text)]
    return [(kind, text)]


def git_config_pairs(text: str) -> list[tuple[str, str]]:
    """(section[.subsection].key, value) of a git config file's text (quotes and comments as git reads them)."""
    pairs, section = [], ""
    for raw in text.replace("\\\n", "").splitlines():
        line = raw.strip()
        head = _GIT_SECTION.match(line)
        if head:
            section = head.group(1).lower() + (f".{head.group(2)}" if head.group(2) is not None else "")
            continue
        entry = _GIT_ENTRY.match(line)
        if entry and section:
            value = entry.group(2) or "true"
            try:
                value = " ".join(shlex.split(value, comments=True)) if value.strip() else value
            except ValueError:
                pass
            pairs.append((f"{section}.{entry.group(1).lower()}", value))
    return pairs


def make_recipes(text: str, picks: tuple[str, ...]) -> list[str]:
    """The recipes `make` would run for `picks` (targets, and VAR=value overrides), prerequisites included;
    make variables expanded one level ($(RM) is `rm -f`). Every recipe when the targets are not found."""
    variables = {"RM": "rm -f", "MAKE": "make", "SHELL": "/bin/sh"}
    rules: dict[str, tuple[list[str], list[str]]] = {}
    order: list[str] = []
    current: list[str] | None = None
    for line in text.replace("\\\n", " ").splitlines():
        if line.startswith("\t") and current is not None:
            current.append(line.strip().lstrip("@-+"))
            continue
        var = _MAKE_VAR.match(line)
        if var:
            variables[var.group(1)] = var.group(2).strip()
            current = None
            continue
        rule = _MAKE_RULE.match(line)
        if rule:
            current = [rule.group(3).strip()] if rule.group(3) else []
            for target in rule.group(1).split():
                if not target.startswith(".") or "/" in target:
                    order.append(target)
                rules[target] = (rule.group(2).split(), current)
        else:
            current = None
    variables.update(p.split("=", 1) for p in picks if "=" in p)  # type: ignore[arg-type]
    lines = recipes.walk(rules, order, tuple(p for p in picks if "=" not in p))
    expand = lambda s: _MAKE_REF.sub(lambda m: variables.get(m.group(1), ""), s)  # noqa: E731
    return [expand(expand(r)) for r in lines]


class WorkFiles:
    """Scanner mixin: scan the workspace files a command runs (only when a reader was handed in)."""

    reader = None
    lister = None  # lister(path, base, (runner, pattern)) -> the test files a runner collects there

    def _listed(self, u: Unwrapped, base: str | None) -> Iterator[tuple[str, str, tuple[str, ...]]]:
        for kind, path, picks in runs(u):
            if kind != "tests":
                yield kind, path, picks
            elif self.lister is not None:
                kind = "pytestpy" if picks[:1] in (("pytest",), ("plugin",)) else "python"
                yield from ((kind, f, ()) for f in self.lister(path, base, picks))  # type: ignore[misc]

    def workspace_files(self, u: Unwrapped, env: object, depth: int) -> None:
        seen: set = self.__dict__.setdefault("_files_seen", set())
        base = getattr(env, "cwd", None)
        copied: dict = self.__dict__.get("_copied", {})  # `cp SRC M9` earlier in the text: M9 will hold SRC
        for kind, path, picks in self._listed(u, base):
            path = copied.get(basename(path).lower(), path)
            key = (base, path, picks)
            if key in seen:
                continue
            seen.add(key)
            got = self.reader(path, base)  # type: ignore[misc]
            if got is None:
                continue
            if kind == "inject":  # a library or agent: its bytes say nothing, where it lies does
                self.add("ld_preload", f"{picks[0]} makes later programs load code from {path}, which this "  # type: ignore[attr-defined]
                         "session's commands can write")
                continue
            if got is UNREADABLE:
                self.add("script_uninspected", f"run {path}, a workspace file that could not be inspected "  # type: ignore[attr-defined]
                         "(a symlink, larger than 64 KB or unreadable)")
                continue
            before = len(self.findings)  # type: ignore[attr-defined]
            for lang, piece in texts(kind, got, picks):
                if lang == "sh":
                    self.text(piece, depth + 1, env=env.child())  # type: ignore[attr-defined]
                else:
                    interp.scan_code(self, lang, piece, depth + 1)  # type: ignore[arg-type]
            found = self.findings  # type: ignore[attr-defined]
            found[before:] = [(k, f"{d} (in {path})", h) for k, d, h in found[before:]]
