"""Edit config.yaml in ruamel round-trip mode (comments and order survive) and `.env` line by line (0600).
Every write is atomic: a temp file in the same directory, then os.replace."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from io import StringIO
from pathlib import Path

from hermes_agent import lazyre
from hermes_agent.atomicfile import atomic_write_text
from hermes_agent.config.loader import get_dotted, yaml_problem
from hermes_agent.errors import ConfigError

_MISSING = object()
_ENV_LINE = lazyre.compile(r"^\s*(?:export\s+)?([A-Za-z_][A-Za-z0-9_]*)\s*=")
_ENV_NAME = lazyre.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_PLAIN_VALUE = lazyre.compile(r"^[A-Za-z0-9_./:@+,=%~-]*$")


def _yaml(style: tuple[int, int] = (2, 2)) -> object:
    from ruamel.yaml import YAML

    mapping, offset = style
    yaml = YAML()  # round-trip
    yaml.preserve_quotes = True
    yaml.width = 4096  # never re-wrap the user's long strings
    yaml.indent(mapping=mapping, sequence=offset + 2, offset=offset)
    return yaml


def _guess_style(text: str) -> tuple[int, int]:
    """(mapping indent, dash offset) the file already uses, so a rewrite does not re-indent it."""
    mapping = offset = None
    prev_indent, prev_key = 0, False
    for line in text.splitlines():
        stripped = line.strip()
        if not stripped or stripped.startswith("#"):
            continue
        indent = len(line) - len(line.lstrip(" "))
        if stripped.startswith("- ") or stripped == "-":
            if offset is None and prev_key:
                offset = max(0, indent - prev_indent)
        elif mapping is None and prev_key and indent > prev_indent:
            mapping = indent - prev_indent
        prev_indent, prev_key = indent, stripped.endswith(":")
        if mapping is not None and offset is not None:
            break
    return (mapping or 2, 2 if offset is None else offset)


class ConfigDocument:
    """config.yaml as a round-trip tree: get/set/unset dotted keys, then save() keeps comments and order."""

    def __init__(self, path: Path, data: dict, style: tuple[int, int] = (2, 2)) -> None:
        self.path = path
        self.data = data
        self.style = style

    @classmethod
    def load(cls, path: Path) -> ConfigDocument:
        """Parse `path` (a missing or empty file is an empty document); bad YAML is a ConfigError naming it."""
        from ruamel.yaml.comments import CommentedMap
        from ruamel.yaml.error import YAMLError

        try:
            text = path.read_text(encoding="utf-8") if path.exists() else ""
            style = _guess_style(text)
            data = _yaml(style).load(text) if text.strip() else None  # type: ignore[attr-defined]
        except (OSError, UnicodeDecodeError) as exc:
            raise ConfigError(f"{path}: cannot read: {exc}") from exc
        except YAMLError as exc:
            raise ConfigError(f"{path}: invalid YAML{yaml_problem(exc)}") from exc
        if data is None:
            data = CommentedMap()
        if not isinstance(data, dict):
            raise ConfigError(f"{path}: expected a mapping of settings at the top level")
        return cls(path, data, style)

    def get(self, dotted: str, default: object = None) -> object:
        """The value at `a.b.c` in the file (not merged with defaults)."""
        return get_dotted(self.data, dotted, default)

    def has(self, dotted: str) -> bool:
        return self.get(dotted, _MISSING) is not _MISSING

    def set(self, dotted: str, value: object) -> None:
        """Set `a.b.c`, creating sections; `model: name` (the short form) becomes `model: {default: name}`."""
        from ruamel.yaml.comments import CommentedMap

        parts = dotted.split(".")
        node = self.data
        added: tuple[dict, str] | None = None  # the outermost key this call creates
        for i, part in enumerate(parts[:-1]):
            nxt = node.get(part)
            if nxt is None:
                nxt = CommentedMap()
                if added is None and part not in node:
                    added = (node, part)
                node[part] = nxt
            elif not isinstance(nxt, dict):
                if i == 0 and part == "model" and isinstance(nxt, str):
                    nxt = CommentedMap([("default", nxt)])
                    node[part] = nxt
                else:
                    where = ".".join(parts[: i + 1])
                    raise ConfigError(f"{self.path}: {where} is {nxt!r}, not a section; unset it first")
            node = nxt
        if added is None and parts[-1] in node:
            _replace(node, parts[-1], _commented(value))
            return
        node[parts[-1]] = _commented(value)
        _carry_tail(*(added or (node, parts[-1])))

    def unset(self, dotted: str) -> bool:
        """Remove `a.b.c` (and sections left empty by it); True when it was there. Comments that
        followed it stay in place."""
        parts = dotted.split(".")
        parent = self.get(".".join(parts[:-1])) if len(parts) > 1 else self.data
        if not isinstance(parent, dict) or parts[-1] not in parent:
            return False
        self._remove(parts, "")
        return True

    def _remove(self, parts: list[str], carry: str) -> None:
        parent = self.get(".".join(parts[:-1])) if len(parts) > 1 else self.data
        keys = list(parent)  # type: ignore[arg-type]
        pos = keys.index(parts[-1])
        slot = _tail_slot(parent[parts[-1]]) or (parent, parts[-1], 2)  # type: ignore[index]
        text = _take_tail(*slot, keep_first_line=False) if hasattr(parent, "ca") else None
        del parent[parts[-1]]  # type: ignore[attr-defined]
        rest = (text or "").partition("\n")[2] + carry
        if not parent and len(parts) > 1:
            self._remove(parts[:-1], rest)
        elif rest and pos > 0:
            _append_tail(parent, keys[pos - 1], rest)  # type: ignore[arg-type]

    def dumps(self) -> str:
        buf = StringIO()
        _yaml(self.style).dump(self.data, buf)  # type: ignore[attr-defined]
        text = buf.getvalue()
        return text if text.endswith("\n") or not text else text + "\n"

    def save(self) -> None:
        """Write back atomically, keeping the file's mode (0600 for a new file)."""
        text = self.dumps()
        atomic_write_text(self.path, "" if text.strip() == "{}" else text)


def _commented(value: object) -> object:
    """Plain dicts/lists as round-trip nodes (so comments can be attached to them)."""
    from ruamel.yaml.comments import CommentedMap, CommentedSeq

    if isinstance(value, dict) and not isinstance(value, CommentedMap):
        return CommentedMap((k, _commented(v)) for k, v in value.items())
    if isinstance(value, list) and not isinstance(value, CommentedSeq):
        return CommentedSeq(_commented(v) for v in value)
    return value


def _tail_slot(node: object) -> tuple[object, object, int] | None:
    """(container, key, slot) of the comment printed after the last line of `node`, when there is one."""
    from ruamel.yaml.comments import CommentedMap, CommentedSeq

    if isinstance(node, CommentedMap) and node:
        last = list(node)[-1]
        deeper = _tail_slot(node[last])
        return deeper or (node, last, 2)
    if isinstance(node, CommentedSeq) and node:
        deeper = _tail_slot(node[-1])
        return deeper or (node, len(node) - 1, 0)
    return None


def _take_tail(holder: object, key: object, idx: int, *, keep_first_line: bool) -> str | None:
    """Remove and return the comment text in a slot (optionally leaving its end-of-line comment)."""
    item = holder.ca.items.get(key)  # type: ignore[attr-defined]
    token = item[idx] if item and len(item) > idx else None
    if token is None:
        return None
    if not keep_first_line:
        item[idx] = None
        return token.value
    first, _, rest = token.value.partition("\n")
    if not rest:
        return None
    if first:
        token.value = first + "\n"
    else:
        item[idx] = None
    return "\n" + rest


def _put_tail(container: dict, key: str, text: str) -> None:
    from ruamel.yaml.error import CommentMark
    from ruamel.yaml.tokens import CommentToken

    holder, slot_key, idx = _tail_slot(container[key]) or (container, key, 2)
    entry = holder.ca.items.setdefault(slot_key, [None, None, None, None])  # type: ignore[attr-defined]
    entry[idx] = CommentToken(text, CommentMark(0), None)


def _append_tail(container: dict, key: str, rest: str) -> None:
    holder, slot_key, idx = _tail_slot(container[key]) or (container, key, 2)
    item = holder.ca.items.get(slot_key)  # type: ignore[attr-defined]
    token = item[idx] if item and len(item) > idx else None
    if token is not None:
        token.value += rest
    else:
        _put_tail(container, key, "\n" + rest)


def _carry_tail(container: dict, new_key: str) -> None:
    """ruamel keeps the blank lines and comments that precede the NEXT key on the previous key's last
    line; when a key is appended after it, move that block below the new key so it stays where it was."""
    keys = list(container)
    if len(keys) < 2 or keys[-1] != new_key:
        return
    holder, key, idx = _tail_slot(container[keys[-2]]) or (container, keys[-2], 2)
    text = _take_tail(holder, key, idx, keep_first_line=True)
    if text:
        _put_tail(container, new_key, text)


def _replace(container: dict, key: str, value: object) -> None:
    """Replace a value; a comment block that followed the old collection now follows the new value."""
    slot = _tail_slot(container[key])
    text = _take_tail(*slot, keep_first_line=False) if slot else None
    container[key] = value
    rest = (text or "").partition("\n")[2]  # the old last line's own comment goes with it
    if rest:
        _put_tail(container, key, "\n" + rest)


def edit_config(path: Path, mutate: Callable[[dict], object]) -> object:
    """Load `path`, let `mutate(data)` change it in place, save; returns what mutate returned."""
    doc = ConfigDocument.load(path)
    result = mutate(doc.data)
    doc.save()
    return result


def section(data: dict, key: str) -> dict:
    """`data[key]` as a mapping, created (as a round-trip map) when missing or null."""
    from ruamel.yaml.comments import CommentedMap

    value = data.get(key)
    if not isinstance(value, dict):
        value = CommentedMap()
        data[key] = value
    return value


def quote_env_value(value: str) -> str:
    """A value as python-dotenv reads it back unchanged (double quotes when needed)."""
    if _PLAIN_VALUE.match(value):
        return value
    escaped = value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")
    return f'"{escaped}"'


def set_env_values(path: Path, values: Mapping[str, str | None]) -> None:
    """Set (or, with None, remove) KEY=VALUE lines in a dotenv file; other lines and comments stay.
    The file is always left with mode 0600: it holds secrets."""
    for key in values:
        if not _ENV_NAME.match(key):
            raise ConfigError(f"invalid environment variable name {key!r}")
    lines = path.read_text(encoding="utf-8").splitlines() if path.exists() else []
    done: set[str] = set()
    out: list[str] = []
    for line in lines:
        m = _ENV_LINE.match(line)
        key = m.group(1) if m else None
        if key is None or key not in values:
            out.append(line)
        elif key not in done and values[key] is not None:
            out.append(f"{key}={quote_env_value(str(values[key]))}")
            done.add(key)
        else:
            done.add(key)  # a duplicate or a removal: drop the line
    out.extend(f"{k}={quote_env_value(str(v))}" for k, v in values.items() if k not in done and v is not None)
    atomic_write_text(path, "\n".join(out) + "\n" if out else "", mode=0o600)


def mask_secret(value: object) -> str:
    """`sk-a…wxyz` for long secrets, `****` for short ones, '' for empty."""
    text = "" if value is None else str(value)
    if not text:
        return ""
    return f"{text[:4]}…{text[-4:]}" if len(text) >= 12 else "****"


def masked(data: object, key: str = "") -> object:
    """`data` with every value under a secret-looking key (api_key, *_TOKEN, ...) masked."""
    from hermes_agent.config.migrate import is_secret_key

    if isinstance(data, dict):
        return {k: masked(v, str(k)) for k, v in data.items()}
    if isinstance(data, list):
        return [masked(v, key) for v in data]
    if key and is_secret_key(key) and isinstance(data, str) and data:
        return mask_secret(data)
    return data


def save_checked(doc: ConfigDocument) -> None:
    """Write `doc` only when the settings it would make load: a bad value is a ConfigError naming key, value
    and what is expected, and the file stays as it was (comments kept, written atomically)."""
    from hermes_agent.config.loader import load_settings

    load_settings(config_text=doc.dumps())
    doc.save()


def set_checked(path: Path, dotted: str, value: object) -> None:
    """`config set`: set one dotted key in the config.yaml at `path`, validated through the typed schema."""
    doc = ConfigDocument.load(path)
    doc.set(dotted, value)
    save_checked(doc)
