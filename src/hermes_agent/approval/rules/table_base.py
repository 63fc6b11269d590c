"""The shape of one pattern-table entry."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Rule:
    """One pattern: `names` limits a command rule to canonical command names; `via` to a wrapper
    (find -exec, xargs); `hardline` rules are refused even with --yolo."""

    key: str
    description: str
    pattern: str
    names: tuple[str, ...] = ()
    hardline: bool = False
    via: str | None = None
    needles: tuple[str, ...] = ()  # text rules: run only when one of these occurs (lower-cased text)
    sql: str = ""  # text rules: "ci" = case-insensitive where an SQL client/driver appears, else exact case;
    # "only" = only where an SQL client/driver appears
