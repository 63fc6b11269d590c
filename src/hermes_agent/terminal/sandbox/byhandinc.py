"""What a run-by-hand file pulls in (red-team round 12 a13): `make` runs the recipes of every file the Makefile
`include`s, so putting the Makefile back while `mk/common.mk` keeps a planted recipe protects nothing. The
runnable part of a run-by-hand file (byhand.py) includes, resolved like git config includes (gitconf.py,
guardscan `_configs`: relative to the including file, recursively, INCLUDE_DEPTH levels, INCLUDES files):

- make: `include` / `-include` / `sinclude` (words; `$(wildcard ...)` and globs matched; a simple variable
  set in the same file substituted; a word still holding `$` is not followed);
- just: `import 'x'`, `import? 'x'`, `mod name 'x'` and `mod name` (name.just, name/mod.just, name/justfile);
- Taskfile: `includes:` (`name: ./dir`, `taskfile: ./x.yml`; a directory means its Taskfile.yml/.yaml);
- package.json: the files its scripts name (`node scripts/build.js`, `./run.sh`): those files' own imports are
  not followed; the configuration files of the tools they start (`jest` -> jest.config.js, .mocharc.js,
  present or not: code the tool loads); and the package.json of each workspace its `workspaces` (or pnpm-workspace.yaml) globs match,
  links followed as npm does (a link swapped in on the way is judged);
- docker compose: `extends: {file: x}` and top-level `include:`;
- CMake: `include(x.cmake)` and `add_subdirectory(dir)` (dir/CMakeLists.txt).

An included file that does not exist yet (`-include local.mk`, a `mod` candidate) is watched too: one made by
a confined command would run. Stdlib only; regexes compiled on first use."""

from __future__ import annotations

import functools
import json
import os
import re
import stat as st
from collections.abc import Callable, Iterator

INCLUDE_DEPTH, INCLUDES = 10, 32
_GLOB = re.compile(r"[*?\[]")


@functools.cache
def _re(name: str) -> re.Pattern[str]:
    return {
        "make": re.compile(r"^[ ]*(?:-include|sinclude|include)[ \t]+(.+?)\s*$", re.M),
        "makevar": re.compile(r"^[ ]*([A-Za-z_][\w.-]*)[ \t]*(?::{1,3}=|\?=|=)[ \t]*(.*?)\s*$", re.M),
        "wildcard": re.compile(r"\$\(wildcard\s+([^)]*)\)"),
        "var": re.compile(r"\$[({]([A-Za-z_][\w.-]*)[)}]"),
        "just": re.compile(r"""^\s*(?:import\??\s+(['"])(.+?)\1|mod\??\s+([\w-]+)(?:\s+(['"])(.+?)\4)?)""", re.M),
        "task": re.compile(r"""^\s*(?:taskfile:\s*|[\w.-]+:\s+)(['"]?)(\.{0,2}/?[\w./-]+)\1\s*$"""),
        "compose_file": re.compile(r"""^\s*(?:-\s*)?(?:file|path):\s*(['"]?)([^'"#\s]+)\1""", re.M),
        "compose_item": re.compile(r"""^\s*-\s*(['"]?)([^'"#:\s]+\.ya?ml)\1\s*$""", re.M),
        "cmake": re.compile(r"""\b(include|add_subdirectory)\s*\(\s*"?([^")\s]+)""", re.I),
    }[name]


KINDS = {"Makefile": "make", "makefile": "make", "GNUmakefile": "make", "justfile": "just", "Justfile": "just",
         ".justfile": "just", "Taskfile.yml": "task", "Taskfile.yaml": "task", "package.json": "pkg",
         **dict.fromkeys(("taskfile.yml", "taskfile.yaml", "Taskfile.dist.yml", "taskfile.dist.yml", "Taskfile.dist.yaml",
                          "taskfile.dist.yaml"), "task"),
         "compose.yaml": "compose", "compose.yml": "compose", "docker-compose.yml": "compose",
         "docker-compose.yaml": "compose", "CMakeLists.txt": "cmake", "pnpm-workspace.yaml": "pnpm"}


def pulled_in(kind: str, text: str, here: str, top: str = "") -> list[str]:
    """Absolute paths the file of `kind` in directory `here` pulls in (present or not). A relative path counts
    against `here` and against `top`, the run-by-hand file's directory (make resolves an include against the
    directory it runs in, CMake against the current source directory, not the including file's)."""
    try:
        found = list(getattr(_Parse, kind)(text, here))
    except Exception:  # noqa: BLE001 - a file that does not parse pulls in nothing we can name
        return []
    bases = dict.fromkeys((here, top or here))
    return list(dict.fromkeys(os.path.normpath(os.path.join(b, os.path.expanduser(p))) for p in found
                              if p and "\0" not in p for b in bases))


class _Parse:
    @staticmethod
    def make(text: str, here: str) -> Iterator[str]:
        vars_ = {m.group(1): m.group(2) for m in _re("makevar").finditer(text)}
        for m in _re("make").finditer(text):
            line = _re("wildcard").sub(lambda w: w.group(1), m.group(1).split("#", 1)[0])
            line = _re("var").sub(lambda v: vars_.get(v.group(1), "$?"), line)
            for word in line.split():
                if "$" not in word:
                    yield from _globbed(word, here)

    @staticmethod
    def just(text: str, here: str) -> Iterator[str]:
        for m in _re("just").finditer(text):
            if m.group(2):
                yield m.group(2)
            elif m.group(5):
                yield from (m.group(5), f"{m.group(5)}/mod.just", f"{m.group(5)}/justfile")
            else:
                name = m.group(3)
                yield from (f"{name}.just", f"{name}/mod.just", f"{name}/justfile", f"{name}/.justfile")

    @staticmethod
    def task(text: str, here: str) -> Iterator[str]:
        block = False
        for line in text.splitlines():
            if not line.strip() or line.lstrip().startswith("#"):
                continue
            if not line[0].isspace():
                block = line.split("#", 1)[0].strip() == "includes:"
                continue
            m = _re("task").match(line) if block else None
            if m and ("/" in m.group(2) or m.group(2).endswith((".yml", ".yaml"))):
                path = m.group(2)
                yield from ((path,) if path.endswith((".yml", ".yaml")) else
                            (f"{path}/Taskfile.yml", f"{path}/Taskfile.yaml"))

    @staticmethod
    def pkg(text: str, here: str) -> Iterator[str]:
        import shlex

        from hermes_agent.terminal.sandbox.byhandnew import npm_globs

        yield from _workspaces(npm_globs(text.encode()), here)  # first: links made there stay within INCLUDES
        doc = json.loads(text or "{}")
        scripts = doc.get("scripts") if isinstance(doc, dict) else None
        yield from _tool_configs([v for v in scripts.values() if isinstance(v, str)] if isinstance(scripts, dict) else [])
        for value in scripts.values() if isinstance(scripts, dict) else ():
            if not isinstance(value, str):
                continue
            try:
                words = shlex.split(value)
            except ValueError:
                words = value.split()
            for word in words:
                if word[:1] not in "-$" and ("/" in word or "." in word.strip(".")) and "://" not in word \
                        and os.path.isfile(os.path.join(here, word)):
                    yield word

    @staticmethod
    def pnpm(text: str, here: str) -> Iterator[str]:
        from hermes_agent.terminal.sandbox.byhandnew import pnpm_globs

        yield from _workspaces(pnpm_globs(text.encode()), here)

    @staticmethod
    def compose(text: str, here: str) -> Iterator[str]:
        yield from (m.group(2) for m in _re("compose_file").finditer(text))
        yield from (m.group(2) for m in _re("compose_item").finditer(text))

    @staticmethod
    def cmake(text: str, here: str) -> Iterator[str]:
        for m in _re("cmake").finditer(text):
            word = m.group(2)
            if "$" in word:
                continue
            if m.group(1).lower() == "add_subdirectory":
                yield f"{word}/CMakeLists.txt"
            elif "/" in word or word.endswith(".cmake"):
                yield word


def _globbed(word: str, here: str) -> list[str]:
    if not _GLOB.search(word):
        return [word]
    import glob

    return sorted(os.path.relpath(p, here) for p in glob.glob(os.path.join(here, word)))[:INCLUDES] or []


_RUNNERS = frozenset({"npx", "pnpx", "bunx", "exec", "run", "dlx", "npm", "yarn", "pnpm", "bun", "cross-env", "env",
                      "node", "sh", "bash", "python", "python3"})  # a runner or interpreter: the next word counts


def _tool_configs(values: list[str]) -> list[str]:
    """The configuration files the commands a package.json's scripts start load by name, present or not (`jest`:
    jest.config.js, `mocha`: .mocharc.js): code the tool runs, so a new one made there changes what
    `npm test` runs."""
    tools = []
    for value in values:
        for seg in re.split(r"&&|\|\||[;|]", value):
            words = [w for w in seg.split() if "=" not in w]  # `NODE_ENV=test jest`
            while words and words[0] in _RUNNERS:
                words.pop(0)
            if words and re.fullmatch(r"[a-z][\w-]*", words[0]):
                tools.append(words[0])
    return [f for t in dict.fromkeys(tools) for f in (*(f"{t}.config.{e}" for e in ("js", "cjs", "mjs", "ts")),
                                                      f".{t}rc.js", f".{t}rc.cjs")]


def _workspaces(globs: list[str], here: str) -> list[str]:
    """The package.json of each workspace the globs match now (links followed, as npm does: a link made in
    `packages/` is then judged on the way; byhandnew.py judges a new package there)."""
    import glob

    found = [os.path.relpath(p, here) for g in globs if g and not g.startswith("!")
             for p in glob.glob(os.path.join(here, g.strip().removeprefix("./")), recursive=True)]
    found.sort(key=lambda p: (not os.path.islink(os.path.join(here, p)), p))  # links first: within INCLUDES
    return [os.path.join(p, "package.json") for p in dict.fromkeys(found)][:INCLUDES]


def _closure(kind: str, d: str, data: bytes, read: Callable[[str], bytes | None]) -> Iterator[str]:
    """Every path the run-by-hand file of `kind` in `d` holding `data` pulls in, recursively: `read(path)`
    gives an included file's bytes (None: absent or not a plain file, then not followed)."""
    queue, seen = [(d, data, 0)], set()
    limit = INCLUDES * 4 if kind == "pkg" else INCLUDES  # one level, but workspaces and tools' configs
    while queue:
        here, text, depth = queue.pop(0)
        for path in pulled_in(kind, text.decode("utf-8", "replace"), here, d):
            if path in seen or len(seen) >= limit:
                continue
            seen.add(path)
            yield path
            got = read(path)
            if kind != "pkg" and depth + 1 < INCLUDE_DEPTH and got is not None:
                queue.append((os.path.dirname(path), got, depth + 1))


def follow(walk: object, d: str, name: str) -> None:
    """Watch what the run-by-hand file (d, name) pulls in, recursively, as class "byhandinc" in guardscan's
    `walk` (and each directory below `d` on the way to it: a link swapped in there is judged too)."""
    kind = KINDS.get(name)
    item = walk.scan.items.get((d, name))  # type: ignore[attr-defined]
    if kind is None or item is None or item.data is None or item.kind != st.S_IFREG:
        return

    def read(path: str) -> bytes | None:
        _on_the_way(walk, d, os.path.dirname(path))
        got = walk.add(os.path.split(path), "byhandinc", False)  # type: ignore[attr-defined]
        return got.data if got is not None and got.kind == st.S_IFREG else None
    for _ in _closure(kind, d, item.data, read):
        pass


def includer_of(path: str, levels: int = 8) -> str:
    """The run-by-hand file, in the directory of `path` (absolute, resolved) or up to `levels` above it, that
    pulls `path` in ("" when none): hermes's own write of it in a tainted turn (runlater.path_verdict)."""
    from hermes_agent.nofollow import read_regular_or_none

    def read(p: str) -> bytes | None:
        return read_regular_or_none(p, 1 << 20)
    d = os.path.dirname(path)
    for _ in range(levels):
        try:
            names = KINDS.keys() & set(os.listdir(d))
        except OSError:
            names = set()
        for name in sorted(names):
            data = read(os.path.join(d, name))
            if data is not None and path in _closure(KINDS[name], d, data, read):
                return os.path.join(d, name)
        if d == "/":
            break
        d = os.path.dirname(d)
    return ""


def _on_the_way(walk: object, top: str, d: str) -> None:
    """The directories between `top` and `d` (below `top` only)."""
    steps = []
    while d.startswith(top.rstrip("/") + "/"):
        steps.append(os.path.split(d))
        d = os.path.dirname(d)
    for slot in reversed(steps):
        walk.add(slot, "byhandinc", False)  # type: ignore[attr-defined]
