"""Page snapshots for the model: Playwright's accessibility snapshot in "ai" mode (YAML-like lines with
[ref=eN] on each element), made compact (see `compact`). Every ref, shown or not, stays valid for the
aria-ref= locator until the next snapshot."""

from __future__ import annotations

from hermes_agent import lazyre

SNAPSHOT_CAP = 15000
_WRAPPER = lazyre.compile(r"^- (?:generic|list|listitem|group|none|presentation)(?: \[[^\]]*\])*:?$")
_NOISE = lazyre.compile(r" \[(?:cursor=pointer|active)\]")
_REF = lazyre.compile(r"\[ref=((?:f\d+)?e\d+)\]")
_REF_ARG = lazyre.compile(r"^(?:f\d+)?e\d+$")
_ROLE = lazyre.compile(r"^- ([a-z]+)")
# Roles whose refs the compact view keeps (others keep theirs only when the page marks them clickable).
_ACTIONABLE = frozenset({"link", "button", "textbox", "searchbox", "checkbox", "radio", "combobox", "listbox",
                         "option", "menuitem", "menuitemcheckbox", "menuitemradio", "tab", "switch", "slider",
                         "spinbutton", "treeitem", "img", "iframe", "summary"})


def _line(body: str) -> str:
    role = _ROLE.match(body)
    if role and role.group(1) not in _ACTIONABLE and "[cursor=pointer]" not in body:
        body = _REF.sub("", body).replace("  ", " ").replace(" :", ":")
    return _NOISE.sub("", body).rstrip()


def compact(snapshot: str) -> str:
    """The snapshot for reading and acting: wrappers without text dropped (their children move up),
    link targets (/url) left out, and refs kept on what can be clicked or typed into."""
    out: list[tuple[int, str]] = []
    dropped: list[int] = []  # indents of the wrappers whose children are being lifted
    for line in snapshot.splitlines():
        body = line.lstrip(" ")
        indent = len(line) - len(body)
        while dropped and dropped[-1] >= indent:
            dropped.pop()
        if _WRAPPER.match(body) and "[cursor=pointer]" not in body:
            dropped.append(indent)
        elif not body.startswith("- /url:"):
            out.append((indent - 2 * len(dropped), _line(body)))
    lines = []
    for i, (indent, body) in enumerate(out):
        has_children = i + 1 < len(out) and out[i + 1][0] > indent
        lines.append(" " * max(0, indent) + (body if has_children or not body.endswith(":") else body[:-1]))
    return "\n".join(lines)


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
