"""Python code judged by effect, not by spelling (execute_code scripts, `python3 -c`, heredocs to python).

Two findings: code this reader cannot follow (an attribute or module named by a computed string, exec/eval/
compile, `__builtins__`, ctypes, a program run with a computed argv) and a path-taking mutation (remove, unlink,
rmtree, rename, replace, open for writing, truncate, chmod, write_text...) whose target is not inside the working
directory: an absolute or home path, or a value this reader cannot trace (a function argument nobody passes, an
attribute, input). Relative paths, the shared temp directories (writable by any command anyway) and names from `os.listdir` (relative to the cwd) are the
workspace's. Pure; parses with `ast`, never runs the code."""

from __future__ import annotations

import ast

INSIDE, UNKNOWN, OUTSIDE = 0, 1, 2
OPAQUE = ("opaque_code", "Python code names what it calls at run time (computed getattr/import, exec/eval, "
                         "ctypes, a computed argv): what it does cannot be inspected")
OUTSIDE_WRITE = ("code_mutates_outside", "Python code deletes, moves or overwrites files outside the workspace")
UNKNOWN_WRITE = ("code_mutates_unknown", "Python code deletes, moves or overwrites files at a path it computes")

_OS_MUTATE = frozenset({"remove", "unlink", "rmdir", "removedirs", "rename", "renames", "replace", "truncate", "chmod",
                        "chown", "lchown", "lchmod", "utime", "symlink", "link", "mkfifo"})
_SHUTIL_MUTATE = frozenset({"rmtree", "move", "copy", "copy2", "copyfile", "copytree", "chown", "copymode", "copystat"})
_PATH_METHODS = frozenset({"unlink", "rmdir", "rename", "replace", "write_text", "write_bytes", "chmod", "lchmod",
                           "touch", "symlink_to", "hardlink_to", "link_to"})
_MOVES = frozenset({"rename", "renames", "replace", "move", "copy", "copy2", "copyfile", "copytree", "symlink", "link"})
_RUNS = {"os": frozenset({"system", "popen", "execv", "execve", "execvp", "execvpe", "execl", "execlp", "execle",
                          "execlpe", "spawnv", "spawnvp", "spawnl", "spawnlp", "posix_spawn", "posix_spawnp"}),
         "subprocess": frozenset({"run", "call", "check_call", "check_output", "Popen", "getoutput", "getstatusoutput"})}
_HOME = frozenset({"home", "expanduser", "getenv", "environ", "expandvars", "gettempdir"})
_TEMP = frozenset({"gettempdir", "mkdtemp", "mkstemp", "TemporaryDirectory", "NamedTemporaryFile"})
_KEEP = frozenset({"join", "abspath", "realpath", "normpath", "Path", "PurePath", "PosixPath", "resolve", "absolute",
                   "joinpath", "with_name", "with_suffix", "with_stem", "str", "fspath", "dirname", "expanduser"})


def _dotted(node: ast.AST) -> str:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return _dotted(node.value) + "." + node.attr
    if isinstance(node, ast.Call) and _dotted(node.func) in ("__import__", "importlib.import_module", "import_module") \
            and node.args and isinstance(node.args[0], ast.Constant):
        return str(node.args[0].value)  # __import__('shutil').rmtree: the module by its name
    return ""


def _literal_kind(text: str) -> int:
    if text.startswith("~") or text.startswith("$"):
        return OUTSIDE
    if text.startswith("/"):  # the workspace is often spelled absolute: the sandbox's write set judges it (UNKNOWN)
        return INSIDE if text.startswith(("/tmp/", "/var/tmp/", "/dev/shm/", "/dev/null")) and ".." not in text else UNKNOWN
    return OUTSIDE if text.split("/", 1)[0] == ".." else INSIDE


class _Reader:
    def __init__(self, tree: ast.AST) -> None:
        self.values: dict[str, list[ast.AST]] = {}
        self.modules: set[str] = set()
        self.funcs: dict[str, ast.FunctionDef | ast.AsyncFunctionDef] = {}
        self.calls: dict[str, list[ast.Call]] = {}
        self.busy: set[str] = set()
        self.aliases: dict[str, str] = {}  # `import shutil as s`, `from os import remove as rm`: local name -> dotted
        for node in ast.walk(tree):
            self._index(node)

    def _bind(self, target: ast.AST, value: ast.AST) -> None:
        if isinstance(target, ast.Name):
            self.values.setdefault(target.id, []).append(value)
        elif isinstance(target, (ast.Tuple, ast.List)):
            for i, t in enumerate(target.elts):  # os.walk's (root, dirs, files): root is the tree, the rest names
                self._bind(t, value if i == 0 or not isinstance(value, ast.Call) else ast.Constant("name"))

    def _index(self, node: ast.AST) -> None:
        if isinstance(node, ast.Import):
            self.modules.update((a.asname or a.name).split(".")[0] for a in node.names)
            self.aliases.update({a.asname: a.name for a in node.names if a.asname})
        elif isinstance(node, ast.ImportFrom):
            self.aliases.update({a.asname or a.name: f"{node.module or ''}.{a.name}" for a in node.names})
            self.modules.update(a.asname or a.name for a in node.names if node.module in ("os", "importlib"))
        elif isinstance(node, ast.Assign):
            for t in node.targets:
                self._bind(t, node.value)
        elif isinstance(node, (ast.AnnAssign, ast.AugAssign, ast.NamedExpr)) and node.value is not None:
            self._bind(node.target, node.value)
        elif isinstance(node, (ast.For, ast.AsyncFor, ast.comprehension)):
            self._bind(node.target, node.iter)
        elif isinstance(node, ast.withitem) and node.optional_vars is not None:
            self._bind(node.optional_vars, node.context_expr)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            self.funcs[node.name] = node
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
            self.calls.setdefault(node.func.id, []).append(node)

    def dotted(self, node: ast.AST) -> str:
        """`node`'s dotted name with import aliases undone (s.rmtree -> shutil.rmtree, rm -> os.remove)."""
        name = _dotted(node)
        head, dot, rest = name.partition(".")
        return self.aliases[head] + dot + rest if head in self.aliases else name

    def _param(self, name: str) -> int | None:
        """The worst of what callers pass for parameter `name` of a function defined here; None if not one."""
        for fname, fn in self.funcs.items():
            params = [a.arg for a in fn.args.posonlyargs + fn.args.args + fn.args.kwonlyargs]
            if name not in params:
                continue
            sites = self.calls.get(fname, [])
            if not sites:
                return UNKNOWN
            idx, worst = params.index(name), INSIDE
            for call in sites:
                args = [k.value for k in call.keywords if k.arg == name] or call.args[idx:idx + 1]
                worst = max(worst, self.kind(args[0]) if args else UNKNOWN)
            return worst
        return None

    def kind(self, node: ast.AST) -> int:  # noqa: C901 - one case per expression shape
        if isinstance(node, ast.Constant):
            return _literal_kind(node.value) if isinstance(node.value, str) else INSIDE
        if isinstance(node, ast.JoinedStr):
            first = node.values[0] if node.values else None
            if isinstance(first, ast.Constant) and str(first.value):
                return _literal_kind(str(first.value))
            return self.kind(first.value) if isinstance(first, ast.FormattedValue) else INSIDE
        if isinstance(node, ast.BinOp):
            right = self.kind(node.right) if isinstance(node.op, ast.Div) and isinstance(node.right, ast.Constant) \
                and str(node.right.value).startswith("/") else INSIDE
            return max(self.kind(node.left), right)
        if isinstance(node, ast.Name):
            return INSIDE if node.id == "__file__" else self._name(node.id)  # execute_code's script.py, in the cwd
        if isinstance(node, (ast.List, ast.Tuple, ast.Set)):
            return max((self.kind(e) for e in node.elts), default=INSIDE)
        if isinstance(node, ast.Subscript):
            if _dotted(node.value) == "sys.argv":
                return INSIDE  # the command line's own words: the shell rules judge those (interp.py argv targets)
            return self.kind(node.value) if isinstance(node.value, (ast.Name, ast.List, ast.Tuple)) else UNKNOWN
        if isinstance(node, ast.Attribute):
            if node.attr in ("parent", "parents", "name", "stem", "path"):
                return self.kind(node.value)
            return OUTSIDE if node.attr in _HOME else UNKNOWN
        if isinstance(node, ast.Call):
            return self._call(node)
        if isinstance(node, ast.IfExp):
            return max(self.kind(node.body), self.kind(node.orelse))
        return UNKNOWN

    def _name(self, name: str) -> int:
        if name in self.busy:
            return UNKNOWN
        values = self.values.get(name)
        if values is None:
            param = self._param(name)
            return UNKNOWN if param is None else param
        self.busy.add(name)
        try:
            return max(self.kind(v) for v in values)
        finally:
            self.busy.discard(name)

    def _call(self, node: ast.Call) -> int:
        name = self.dotted(node.func)
        last = name.rsplit(".", 1)[-1]
        if last in _TEMP:
            return INSIDE
        if last in ("home", "expanduser") and (last == "home" or not (node.args and self.kind(node.args[0]) == INSIDE
                                                                     and not _starts_tilde(node.args[0]))):
            return OUTSIDE
        if last in ("getenv", "get") and "environ" in name or last == "getenv":
            return OUTSIDE
        if last in ("cwd", "getcwd"):
            return INSIDE
        if last in ("listdir",):  # bare names, relative to the cwd
            return INSIDE
        if last == "join" and name.endswith("path.join") or last in ("joinpath", "Path", "PurePath", "PosixPath"):
            kinds = [self.kind(a) for a in node.args]
            if isinstance(node.func, ast.Attribute) and last == "joinpath":
                kinds.insert(0, self.kind(node.func.value))
            return max(kinds, default=INSIDE)
        if isinstance(node.func, ast.Attribute) and last in _KEEP | {"glob", "rglob", "iterdir", "walk", "scandir"}:
            base = self.kind(node.func.value)
            if name.split(".")[0] in self.modules or base == UNKNOWN and _dotted(node.func.value) in ("os", "os.path", "glob"):
                return max((self.kind(a) for a in node.args[:1]), default=INSIDE)
            return max([base] + [self.kind(a) for a in node.args[:1]])
        if last in ("str", "fspath", "sorted", "list", "reversed", "abspath", "realpath", "normpath", "glob", "iglob"):
            return max((self.kind(a) for a in node.args[:1]), default=INSIDE)
        if last == "chain" or last == "enumerate" or last == "zip":
            return max((self.kind(a) for a in node.args), default=INSIDE)
        return UNKNOWN


def _starts_tilde(node: ast.AST) -> bool:
    return isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value.startswith("~")


def _opaque(r: _Reader, node: ast.Call) -> bool:
    name = r.dotted(node.func)
    last = name.rsplit(".", 1)[-1]
    computed = bool(node.args) and not isinstance(node.args[0], ast.Constant)
    if name in ("exec", "eval", "compile", "__import__", "builtins.exec", "builtins.eval"):
        return name != "__import__" or computed
    if name in ("importlib.import_module", "import_module"):
        return computed
    if name in ("getattr", "setattr") and len(node.args) >= 2 and not isinstance(node.args[1], ast.Constant):
        return isinstance(node.args[0], ast.Name) and node.args[0].id in r.modules | {"__builtins__", "builtins"}
    mod = name.split(".")[0]
    if mod in _RUNS and last in _RUNS[mod] and node.args:
        argv = node.args[0]
        items = argv.elts if isinstance(argv, (ast.List, ast.Tuple)) else [argv]
        return not all(isinstance(i, ast.Constant) for i in items[:1])
    return False


def _targets(r: _Reader, node: ast.Call) -> list[ast.AST]:
    """The paths a call mutates ([] if it mutates none)."""
    name = r.dotted(node.func)
    last = name.rsplit(".", 1)[-1]
    mod = name.split(".")[0]
    if name in ("open", "io.open", "os.open", "codecs.open") and node.args:
        mode = node.args[1] if len(node.args) > 1 else next((k.value for k in node.keywords if k.arg in ("mode", "flags")), None)
        if mode is None:
            return []
        if isinstance(mode, ast.Constant) and isinstance(mode.value, str) and not set(mode.value) & set("wax+"):
            return []
        if name == "os.open" and isinstance(mode, ast.Attribute) and mode.attr == "O_RDONLY":
            return []
        return node.args[:1]
    if mod == "os" and last in _OS_MUTATE or mod == "shutil" and last in _SHUTIL_MUTATE:
        args = node.args[:2] if last in _MOVES else node.args[:1]
        return [a for i, a in enumerate(args) if not (last.startswith("copy") and i == 0)] or [ast.Constant("?")]
    if isinstance(node.func, ast.Attribute) and last in _PATH_METHODS and mod not in ("os", "shutil") \
            and not (last in ("rename", "replace") and len(node.args) != 1):  # str.replace(a, b) is not a move
        return [node.func.value] + (node.args[:1] if last in ("rename", "replace") else [])
    if isinstance(node.func, ast.Attribute) and last == "open" and node.args and isinstance(node.args[0], ast.Constant) \
            and isinstance(node.args[0].value, str) and set(node.args[0].value) & set("wax+"):
        return [node.func.value]  # Path(...).open('w')
    return []


def scan(code: str) -> list[tuple[str, str]] | None:
    """Findings (key, description) for Python `code`, [] when every mutation was traced into the workspace;
    None when it does not parse (the spelling rules alone apply)."""
    try:
        tree = ast.parse(code)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    r = _Reader(tree)
    found: dict[str, str] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and node.id == "__builtins__" or \
                isinstance(node, (ast.Import, ast.ImportFrom)) and any(
                    (a.name if isinstance(node, ast.Import) else node.module or "").split(".")[0] == "ctypes" for a in node.names):
            found.setdefault(*OPAQUE)
        if not isinstance(node, ast.Call):
            continue
        if _opaque(r, node):
            found.setdefault(*OPAQUE)
        for target in _targets(r, node):
            k = r.kind(target)
            if k == OUTSIDE:
                found.setdefault(*OUTSIDE_WRITE)
            elif k == UNKNOWN:
                found.setdefault(*UNKNOWN_WRITE)
    return list(found.items())
