"""Page snapshots for the model: Playwright's accessibility snapshot in "ai" mode (YAML-like lines with
[ref=eN] on each element), made compact: wrapper `generic` nodes without text are dropped (their
children move up a level) and cursor/focus markers removed. Refs stay valid for aria-ref= locators."""

from __future__ import annotations

import re

SNAPSHOT_CAP = 15000
_WRAPPER = re.compile(r"^- generic(?: \[[^\]]*\])*:?$")
_NOISE = re.compile(r" \[(?:cursor=pointer|active)\]")
_REF = re.compile(r"\[ref=((?:f\d+)?e\d+)\]")
_REF_ARG = re.compile(r"^(?:f\d+)?e\d+$")


def compact(snapshot: str) -> str:
    """The snapshot without text-less wrapper nodes and noise markers."""
    out: list[str] = []
    dropped: list[int] = []  # indents of the wrappers whose children are being lifted
    for line in snapshot.splitlines():
        body = line.lstrip(" ")
        indent = len(line) - len(body)
        while dropped and dropped[-1] >= indent:
            dropped.pop()
        if _WRAPPER.match(body):
            dropped.append(indent)
            continue
        out.append(" " * max(0, indent - 2 * len(dropped)) + _NOISE.sub("", body))
    return "\n".join(out)


def element_count(snapshot: str) -> int:
    return len(_REF.findall(snapshot))


def capped(snapshot: str, cap: int = SNAPSHOT_CAP) -> str:
    """At most `cap` characters, cut at a line end, with a note of what was left out."""
    if len(snapshot) <= cap:
        return snapshot
    head = snapshot[:cap].rsplit("\n", 1)[0]
    return f"{head}\n[... {len(snapshot) - len(head)} more characters of this page left out]"


def normalise_ref(ref: object) -> str | None:
    """'e12' from 'e12', '@e12', '[ref=e12]' or 'ref=e12'; None when it is not a ref."""
    text = str(ref or "").strip().strip("[]").removeprefix("@").removeprefix("ref=").strip()
    return text if _REF_ARG.match(text) else None
