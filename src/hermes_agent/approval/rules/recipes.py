"""Task-runner files read as the shell they run: a justfile's recipes (`just [-f F] [RECIPE...]`) and a
Taskfile's `cmds` (`task [-t F] [TASK...]`), the picked ones with their dependencies, every one when a
pick is not found. Pure string work (no YAML library in this layer: Taskfile.yml is read by indentation,
the shapes go-task documents: `cmds:` lists of strings or `cmd:` items, a task given as a list or a string,
`deps:`)."""

from __future__ import annotations

from collections.abc import Iterator

from hermes_agent.approval.rules.lazyre import lazy

JUSTFILES = ("justfile", "Justfile", ".justfile")
TASKFILES = ("Taskfile.yml", "Taskfile.yaml", "taskfile.yml", "taskfile.yaml", "Taskfile.dist.yml")
_JUST_RULE = lazy(r"^@?([A-Za-z_][\w-]*)(?:\s+[^:=]*)?:(?!=)\s*(.*)$")
_JUST_VAR = lazy(r"^(?:export\s+)?([A-Za-z_][\w-]*)\s*:=\s*(.*)$")
_JUST_REF = lazy(r"\{\{\s*([A-Za-z_][\w-]*)\s*\}\}")
# options that only list, show or check: nothing runs
_INERT = {"just": frozenset({"-l", "--list", "--summary", "-s", "--show", "--dump", "--evaluate", "-h", "--help", "-V",
                             "--version", "-n", "--dry-run", "--fmt", "--init", "--edit", "--variables", "--groups"}),
          "task": frozenset({"-l", "--list", "-a", "--list-all", "--summary", "-n", "--dry", "-h", "--help",
                             "--version", "-i", "--init"})}
_YAML_KEY = lazy(r"^(\s*)(?:-\s+)?([\w.:-]+|\"[^\"]*\"|'[^']*')\s*:\s*(.*)$")
_YAML_ITEM = lazy(r"^(\s*)-\s+(.*)$")


def runs(name: str, args: list[str], workdir: str | None) -> Iterator[tuple[str, str, tuple[str, ...]]]:
    """(kind, path, picks) for `just ...` / `task ...`: the file it reads and the recipes asked for."""
    if any(a in _INERT[name] for a in args):
        return
    flags = ("-f", "--justfile") if name == "just" else ("-t", "--taskfile")
    dirs = ("-d", "--working-directory") if name == "just" else ("-d", "--dir")
    path = where = None
    picks: list[str] = []
    skip = False
    for i, a in enumerate(args):
        if skip:
            skip = False
            continue
        if a in flags or a in dirs:
            value = args[i + 1] if i + 1 < len(args) else ""
            path, where = (value, where) if a in flags else (path, value)
            skip = True
        elif a.startswith(tuple(f + "=" for f in (*flags, *dirs) if f.startswith("--"))):
            key, value = a.split("=", 1)
            path, where = (value, where) if key in flags else (path, value)
        elif a == "--":
            continue
        elif not a.startswith("-") and "=" not in a:
            picks.append(a)
    base = next((d.rstrip("/") + "/" for d in (where, workdir) if d), "")
    for file in ([path] if path else (JUSTFILES if name == "just" else TASKFILES)):
        yield name, (file if file.startswith("/") else base + file), tuple(picks)


def just_recipes(text: str, picks: tuple[str, ...]) -> list[str]:
    """The lines `just` runs for `picks` (the first recipe without any), dependencies first; `{{var}}` expanded
    from the file's `:=` assignments one level."""
    variables: dict[str, str] = {}
    rules: dict[str, tuple[list[str], list[str]]] = {}
    order: list[str] = []
    current: list[str] | None = None
    for line in text.replace("\\\n", " ").splitlines():
        if line[:1] in (" ", "\t") and current is not None:
            if line.strip() and not line.strip().startswith("#"):
                current.append(line.strip().lstrip("@-"))
            continue
        var = _JUST_VAR.match(line)
        rule = None if var else _JUST_RULE.match(line)
        if var:
            variables[var.group(1)] = var.group(2).strip().strip("\"'")
        if rule:
            current = []
            order.append(rule.group(1))
            rules[rule.group(1)] = ([d for d in rule.group(2).split() if not d.startswith("#")], current)
        elif line.strip() and not line.startswith("#"):
            current = None
    return [_JUST_REF.sub(lambda m: variables.get(m.group(1), m.group(0)), r) for r in walk(rules, order, picks)]


def task_commands(text: str, picks: tuple[str, ...]) -> list[str]:
    """The commands `task` runs for `picks` (`default` without any), dependencies first."""
    rules: dict[str, tuple[list[str], list[str]]] = {}
    order: list[str] = []
    tasks_indent = task_indent = None
    task: str | None = None
    section = ""
    for raw in text.splitlines():
        if not raw.strip() or raw.lstrip().startswith("#"):
            continue
        indent = len(raw) - len(raw.lstrip())
        key, item = _YAML_KEY.match(raw), _YAML_ITEM.match(raw)
        if tasks_indent is None or indent <= tasks_indent:
            tasks_indent = indent if key and key.group(2) == "tasks" and not key.group(3) else None
            task = None
            continue
        if task_indent is None or indent <= task_indent:
            if key and not item:
                task_indent, task, section = indent, key.group(2).strip("\"'"), "cmds"
                order.append(task)
                rules[task] = ([], [])
                if key.group(3):
                    rules[task][1].append(_scalar(key.group(3)))
            continue
        if task is None:
            continue
        if key and (not item or key.group(2) in ("cmd", "task")) and key.group(2) in ("cmds", "deps", "cmd", "task"):
            if key.group(2) in ("cmds", "deps"):
                section = key.group(2)
                inline = key.group(3).strip()
                if inline.startswith("["):
                    rules[task][0 if section == "deps" else 1].extend(_scalar(v) for v in inline.strip("[]").split(","))
            elif key.group(3):
                rules[task][0 if key.group(2) == "task" else 1].append(_scalar(key.group(3)))
        elif key and not item:
            section = key.group(2)
        elif item and section in ("cmds", "deps") and not _YAML_KEY.match(raw):
            rules[task][0 if section == "deps" else 1].append(_scalar(item.group(2)))
        elif not key and not item and section == "cmds":  # the lines of a `- |` block
            rules[task][1].append(raw.strip())
    return walk(rules, order, picks or ("default",))


def _scalar(value: str) -> str:
    value = value.strip()
    if len(value) >= 2 and value[0] == value[-1] and value[0] in "\"'":
        value = value[1:-1]
    return value.lstrip("|>").strip()


def walk(rules: dict[str, tuple[list[str], list[str]]], order: list[str], picks: tuple[str, ...]) -> list[str]:
    """The non-empty lines of the picked rules (the first rule when none is picked) and of what they depend on,
    in order, each rule once; every rule when a pick is unknown (make, just and task alike)."""
    targets = list(picks) or order[:1]
    todo = targets if all(t in rules for t in targets) else list(rules)
    seen: set[str] = set()
    out: list[str] = []
    while todo:
        name = todo.pop(0)
        if name in seen or name not in rules:
            continue
        seen.add(name)
        deps, lines = rules[name]
        todo.extend(deps)
        out.extend(line for line in lines if line)
    return out
