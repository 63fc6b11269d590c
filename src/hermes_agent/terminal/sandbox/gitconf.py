"""Git config files read as data and filtered line by line, the kept lines copied verbatim (no re-quoting).

- `fresh_repo_keep`: what a repository created inside the sandbox (`git init`, `git clone`) may keep in its
  `.git/config`: the keys those commands write, nothing that makes git run a program (core.fsmonitor,
  core.hooksPath, aliases, filters, include...). Default-deny: an unknown key is dropped.
- `credential_free`: the global config (~/.gitconfig, ~/.config/git/config) as the sandbox sees it: no
  credential.* section, no http.*.extraHeader, no url.<base>.insteadOf whose base carries a user:password@,
  no include/includeIf (they would read files the sandbox cannot see, or can write).
Stdlib only."""

from __future__ import annotations

import re
from collections.abc import Callable

_HEADER = re.compile(r'^\s*\[\s*([A-Za-z0-9.-]+)(?:\s+"((?:[^"\\]|\\.)*)")?\s*\]\s*(.*)$')
_KEY = re.compile(r"^\s*([A-Za-z][A-Za-z0-9-]*)\s*(?:=\s*(.*))?$")

Keep = Callable[[str, str, str, str], bool]  # (section, subsection, key, value) -> keep?


def _split_section(name: str, sub: str | None) -> tuple[str, str]:
    """`[a "b"]` and the old `[a.b]` form as (section lower-case, subsection)."""
    if sub is not None:
        return name.lower(), sub
    sec, _, rest = name.partition(".")
    return sec.lower(), rest.lower()


def filter_config(text: str, keep: Keep) -> tuple[str, list[str]]:
    """(the config with only the entries `keep` accepts, the dropped "section.key" names). A section
    header is written once, before its first kept entry; a continued value (trailing backslash) stays
    with its key; a line that is neither header nor key (garbage) is dropped."""
    out: list[str] = []
    dropped: list[str] = []
    section = subsection = ""
    header = ""
    header_written = True
    lines = text.splitlines(keepends=True)
    i = 0
    while i < len(lines):
        line = lines[i]
        i += 1
        stripped = line.strip()
        if not stripped or stripped[0] in "#;":
            continue
        m = _HEADER.match(line)
        if m:
            section, subsection = _split_section(m.group(1), m.group(2))
            header, header_written = f"[{m.group(1)}" + (f' "{m.group(2)}"' if m.group(2) is not None else "") + "]\n", False
            line = m.group(3)  # `[core] bare = false` on one line
            if not line.strip():
                continue
        entry = [line]
        while entry[-1].rstrip("\r\n").endswith("\\") and i < len(lines):
            entry.append(lines[i])
            i += 1
        km = _KEY.match("".join(entry).replace("\\\n", ""))
        value = (km.group(2) or "").strip() if km else ""
        name = f"{section}.{subsection + '.' if subsection else ''}{km.group(1).lower() if km else '?'}"
        if km is None or not section or not keep(section, subsection, km.group(1).lower(), value):
            dropped.append(name)
            continue
        if not header_written:
            out.append(header)
            header_written = True
        out.append("\t" + "".join(entry).lstrip() if not entry[0].startswith((" ", "\t")) else "".join(entry))
    text_out = "".join(x if x.endswith("\n") else x + "\n" for x in out)
    return text_out, dropped


_FRESH = {
    "core": {"repositoryformatversion", "filemode", "bare", "logallrefupdates", "ignorecase", "precomposeunicode",
             "symlinks", "autocrlf", "eol", "safecrlf"},
    "extensions": {"objectformat"},
    "remote": {"url", "fetch", "pushurl", "tagopt", "prune", "mirror"},
    "branch": {"remote", "merge", "rebase", "pushremote"},
    "user": {"name", "email"},
    "init": {"defaultbranch"},
    "submodule": {"url", "active", "branch", "update-not-command"},
    "pull": {"rebase", "ff"},
    "push": {"default", "autosetupremote"},
    "gc": {"auto"},
    "index": {"version"},
}


def fresh_repo_keep(section: str, subsection: str, key: str, value: str) -> bool:
    """Keys a repository made inside the sandbox may carry (see module doc); `submodule.*.update` only as
    one of git's own modes (`!command` would run a program)."""
    if section == "submodule" and key == "update":
        return value.strip().strip('"') in ("checkout", "rebase", "merge", "none")
    return key in _FRESH.get(section, ())


_USERINFO = re.compile(r"^[a-z][a-z0-9+.-]*://[^/@]*@", re.I)


def credential_free(section: str, subsection: str, key: str, value: str) -> bool:
    """False for the entries of a global git config that carry or reach credentials (see module doc)."""
    if section in ("credential", "include", "includeif"):
        return False
    if section == "http" and key == "extraheader":
        return False
    if section == "url" and _USERINFO.match(subsection):
        return False
    return not (key in ("insteadof", "pushinsteadof") and _USERINFO.match(value))


def _unquote(value: str) -> str:
    """A config value as git reads it, roughly: a quoted one up to its closing quote, else cut at a comment."""
    if value.startswith('"'):
        end = re.search(r'(?<!\\)"', value[1:])
        return value[1:end.start() + 1] if end else value[1:]
    return re.split(r"\s[#;]|^[#;]", value, maxsplit=1)[0].strip()


def include_paths(text: str) -> list[str]:
    """The files a config includes: every `include.path` and `includeIf.<condition>.path`, whatever the
    condition (the file may apply one day), as written (relative to the including file, `~` unexpanded)."""
    found: list[str] = []

    def keep(section: str, subsection: str, key: str, value: str) -> bool:
        if section in ("include", "includeif") and key == "path" and (path := _unquote(value)):
            found.append(path)
        return False
    filter_config(text, keep)
    return found
