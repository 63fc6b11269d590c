"""SKILL.md frontmatter: split, parse (ruamel.yaml safe loader) and validate; no filesystem access."""

from __future__ import annotations

import re

from hermes_agent import lazyre
from hermes_agent.config.loader import yaml_problem

NAME_RE = lazyre.compile(r"^[a-z0-9][a-z0-9._-]*$")
MAX_NAME = 64
MAX_DESCRIPTION = 1024
_DELIM = lazyre.compile(r"^(?:---|\.\.\.)[ \t]*$", re.MULTILINE)


class FrontmatterError(ValueError):
    """SKILL.md has no frontmatter or it is not a YAML mapping; the message says which."""


def split_frontmatter(text: str) -> tuple[str | None, str]:
    """(`yaml text` or None, body) of a SKILL.md document."""
    text = text.lstrip("\ufeff")
    if not text.startswith("---"):
        return None, text
    first_nl = text.find("\n")
    if first_nl < 0 or text[:first_nl].strip() != "---":
        return None, text
    end = _DELIM.search(text, first_nl + 1)
    if end is None:
        return None, text
    body = text[end.end():]
    return text[first_nl + 1:end.start()], body[1:] if body.startswith("\n") else body


def parse_yaml(yaml_text: str) -> dict:
    """Load one YAML mapping with the safe loader; FrontmatterError on anything else."""
    from ruamel.yaml import YAML
    from ruamel.yaml.error import YAMLError

    try:
        data = YAML(typ="safe", pure=True).load(yaml_text)
    except YAMLError as exc:
        raise FrontmatterError(f"frontmatter is not valid YAML{yaml_problem(exc, line_offset=2)}") from exc
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise FrontmatterError(f"frontmatter must be a mapping of keys, got {type(data).__name__}")
    return data


def parse_document(text: str) -> tuple[dict, str]:
    """(frontmatter mapping, body) of a SKILL.md; FrontmatterError when the block is missing or broken."""
    yaml_text, body = split_frontmatter(text)
    if yaml_text is None:
        raise FrontmatterError(
            "SKILL.md must start with a YAML frontmatter block: '---' line, 'name:' and "
            "'description:' keys, then a closing '---' line")
    return parse_yaml(yaml_text), body


def name_problem(name: object) -> str | None:
    """Why `name` is not a valid skill (or category) name, or None."""
    if not isinstance(name, str) or not name:
        return "name is required"
    if len(name) > MAX_NAME:
        return f"name is {len(name)} characters; the limit is {MAX_NAME}"
    if not NAME_RE.match(name):
        return f"name {name!r} must match {NAME_RE.pattern} (lowercase letters, digits, '.', '_', '-')"
    return None


def validate_meta(meta: dict, expected_name: str | None = None) -> list[str]:
    """Problems that make frontmatter unacceptable for a written skill (empty list = valid)."""
    problems: list[str] = []
    name = meta.get("name")
    if (p := name_problem(name)) is not None:
        problems.append(f"frontmatter {p}")
    elif expected_name is not None and name != expected_name:
        problems.append(f"frontmatter name {name!r} must equal the skill name {expected_name!r}")
    desc = meta.get("description")
    if not isinstance(desc, str) or not desc.strip():
        problems.append("frontmatter description is required (a one-line summary of when to use the skill)")
    elif len(desc) > MAX_DESCRIPTION:
        problems.append(f"frontmatter description is {len(desc)} characters; the limit is {MAX_DESCRIPTION}")
    for key in ("tags", "related_skills", "platforms"):
        value = meta.get(key)
        if value is not None and not isinstance(value, list | str):
            problems.append(f"frontmatter {key} must be a list")
    return problems


def check_document(text: str, expected_name: str | None = None) -> tuple[dict | None, list[str]]:
    """Parse and validate a whole SKILL.md: (meta, problems)."""
    try:
        meta, _ = parse_document(text)
    except FrontmatterError as exc:
        return None, [str(exc)]
    return meta, validate_meta(meta, expected_name)
