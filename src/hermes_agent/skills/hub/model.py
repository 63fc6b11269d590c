"""Skills Hub data types and the SkillSource seam (search, inspect, fetch), plus bundle path checks.

Contract of a SkillSource: `search` returns matching SkillMeta (may raise SourceError with a one-line
reason the CLI shows next to the source id); `inspect` returns one SkillMeta or None; `fetch` returns a
SkillBundle whose file paths are relative and safe, or raises SourceError. Nothing touches the disk."""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field
from typing import Protocol

from hermes_agent import lazyre
from hermes_agent.skills.taps import HubError

MAX_BUNDLE_FILES = 200
MAX_BUNDLE_BYTES = 5 * 1024 * 1024
TRUST_RANK = {"builtin": 2, "trusted": 1, "community": 0}
_SAFE_PART = lazyre.compile(r"^[^\x00/\\]+$")


class SourceError(HubError):
    """A source could not answer; the message says why in one line."""


class RateLimited(SourceError):
    """The source refused because of a rate limit; `reset` is the epoch second it lifts (or None)."""

    def __init__(self, message: str, reset: float | None = None) -> None:
        super().__init__(message)
        self.reset = reset


@dataclass(frozen=True, slots=True)
class SkillMeta:
    """One search hit: `identifier` is what `hermes skills install` accepts for `source`."""

    name: str
    description: str
    source: str
    identifier: str
    trust_level: str
    tags: tuple[str, ...] = ()

    @property
    def ref(self) -> str:
        """The unambiguous install reference (`source:identifier`)."""
        return f"{self.source}:{self.identifier}"


@dataclass(frozen=True, slots=True)
class SkillBundle:
    """A downloaded skill: relative path -> bytes, ready for quarantine and scanning."""

    name: str
    files: dict[str, bytes]
    source: str
    identifier: str
    trust_level: str
    revision: str = ""
    metadata: dict[str, str] = field(default_factory=dict)

    @property
    def ref_str(self) -> str:
        return f"{self.source}:{self.identifier}"

    def content_hash(self) -> str:
        """sha256 over sorted (path NUL bytes), 16 hex digits, as Hermes's lock file records it."""
        h = hashlib.sha256()
        for rel in sorted(self.files):
            h.update(rel.encode("utf-8") + b"\x00")
            h.update(self.files[rel])
        return f"sha256:{h.hexdigest()[:16]}"


class SkillSource(Protocol):
    """A registry of skills (see the module docstring for the contract)."""

    source_id: str

    def search(self, query: str, limit: int = 20) -> list[SkillMeta]: ...

    def inspect(self, identifier: str) -> SkillMeta | None: ...

    def fetch(self, identifier: str) -> SkillBundle: ...


def safe_rel_path(path: str) -> str:
    """`path` as a normalised relative POSIX path; SourceError on absolute paths, `..`, or odd parts."""
    text = path.replace("\\", "/").strip()
    parts = [p for p in text.split("/") if p not in ("", ".")]
    if text.startswith("/") or re.match(r"^[A-Za-z]:", text) or not parts \
            or any(p == ".." or not _SAFE_PART.match(p) for p in parts):
        raise SourceError(f"unsafe path in skill bundle: {path!r}")
    return "/".join(parts)


def checked_files(files: dict[str, bytes]) -> dict[str, bytes]:
    """Validate a bundle's paths, count and total size; it must contain SKILL.md."""
    out = {safe_rel_path(k): v for k, v in files.items()}
    if len(out) > MAX_BUNDLE_FILES:
        raise SourceError(f"skill bundle has {len(out)} files (limit {MAX_BUNDLE_FILES})")
    total = sum(len(v) for v in out.values())
    if total > MAX_BUNDLE_BYTES:
        raise SourceError(f"skill bundle is {total} bytes (limit {MAX_BUNDLE_BYTES})")
    if "SKILL.md" not in out:
        raise SourceError("skill bundle has no SKILL.md")
    return out


def matches(query: str, *fields: str) -> bool:
    """Every word of `query` appears in the fields (an empty query matches everything)."""
    hay = " ".join(fields).lower()
    return all(word in hay for word in query.lower().split())


def frontmatter_meta(text: str) -> dict:
    """The YAML frontmatter of a SKILL.md as a dict ({} when missing or malformed)."""
    from hermes_agent.skills.frontmatter import FrontmatterError, parse_document

    try:
        meta, _ = parse_document(text)
    except FrontmatterError:
        return {}
    return meta
