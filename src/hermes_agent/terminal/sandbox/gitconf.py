"""Git config files read as data and filtered line by line, the kept lines copied verbatim (no re-quoting).

- `fresh_repo_keep`: what a repository created inside the sandbox (`git init`, `git clone`) may keep in its
  `.git/config`: the keys those commands write, nothing that makes git run a program (core.fsmonitor,
  core.hooksPath, aliases, filters, include...). Default-deny: an unknown key is dropped.
- `credential_free`: the global config (~/.gitconfig, ~/.config/git/config) as the sandbox sees it: settings
  only, by an allowlist of sections and keys (`_GLOBAL`: user.name, core/pull/push/diff settings, aliases,
  colours...), and of those only values without a secret shape (`secret_shaped`: URL userinfo, words such as
  auth/token/password, token prefixes, long letter-and-digit runs) and no `!` shell alias; no credential.*, http extraHeader or proxy, tokens of github/hub/gitlab/lfs/sendemail, URL
  rewrites other than between bare hosts, include/includeIf. An unknown key is dropped.
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
_BARE_BASE = re.compile(r"^(?:[a-z][a-z0-9+.-]*://[^/@]+/?|[^/@:]+@[^/:]+:|[^/@:]+:)$", re.I)  # host only, no path

# What the sandbox's copy of the global config keeps (red-team round 7 a30: a deny list of credential keys let
# sendemail.smtpPass, github.token, hub.oauthtoken, gitlab.token, lfs access, an http proxy's password and a
# token in an insteadOf base through). Default-deny: settings only; "*" any key of the section.
_GLOBAL: dict[str, frozenset[str] | str] = {
    "user": frozenset({"name", "email", "usetimestamp"}),
    "core": frozenset({"autocrlf", "eol", "safecrlf", "filemode", "ignorecase", "precomposeunicode", "quotepath",
                       "symlinks", "whitespace", "longpaths", "compression", "editor", "pager", "excludesfile",
                       "attributesfile", "abbrev", "commentchar", "preloadindex", "untrackedcache", "checkstat"}),
    "init": frozenset({"defaultbranch"}),
    "pull": frozenset({"rebase", "ff", "twohead"}),
    "push": frozenset({"default", "autosetupremote", "followtags", "recursesubmodules"}),
    "fetch": frozenset({"prune", "prunetags", "parallel", "writecommitgraph"}),
    "merge": frozenset({"conflictstyle", "ff", "log", "renamelimit", "tool"}),
    "rebase": frozenset({"autosquash", "autostash", "updaterefs", "missingcommitscheck", "stat"}),
    "branch": frozenset({"sort", "autosetupmerge", "autosetuprebase"}),
    "tag": frozenset({"sort"}),
    "diff": frozenset({"algorithm", "colormoved", "renames", "mnemonicprefix", "noprefix", "context", "tool",
                       "submodule", "wserrorhighlight", "indentheuristic"}),
    "commit": frozenset({"verbose", "cleanup", "status"}),
    "status": "*", "log": "*", "color": "*", "column": "*", "advice": "*", "alias": "*", "rerere": "*",
    "gc": "*", "pack": "*", "help": "*", "interactive": "*", "grep": "*", "blame": "*", "feature": "*",
    "filter": frozenset({"clean", "smudge", "process", "required"}),  # git-lfs's: programs run confined
    "protocol": frozenset({"version"}),
    "safe": frozenset({"directory"}),
    "submodule": frozenset({"recurse"}),
    "transfer": frozenset({"fsckobjects"}),
    "receive": frozenset({"fsckobjects"}),
    "http": frozenset({"sslverify", "postbuffer", "version", "lowspeedlimit", "lowspeedtime", "maxrequests"}),
    "url": frozenset({"insteadof", "pushinsteadof"}),
}


def credential_free(section: str, subsection: str, key: str, value: str) -> bool:
    """True for the settings the sandbox's copy of a global git config keeps (`_GLOBAL`); a URL rewrite only
    between bare hosts (no userinfo, no path that could carry a token)."""
    allowed = _GLOBAL.get(section)
    if allowed is None or (allowed != "*" and key not in allowed):
        return False
    if section == "url":
        return bool(_BARE_BASE.match(subsection)) and bool(_BARE_BASE.match(_unquote(value)))
    if section == "filter" and subsection != "lfs":
        return False
    if section == "alias" and _unquote(value).lstrip().startswith("!"):
        return False  # a shell alias is a script: free text (curl -H "Authorization: token ..."), rt15 d04
    return not secret_shaped(value)


# A value that may carry a credential, whatever key holds it (rt15 d04: an allowlisted key with a free-text value
# is a deny list on the value, so the test is on the shape): URL userinfo, a word that names a credential, a
# known token prefix, or a long run of letters and digits mixed (a hex or base64 token).
_SECRET_WORDS = re.compile(r"auth(?!or)|passw|passwd|pwd|secret|token|bearer|api[-_]?key|private[-_]?key|credential|"
                           r"session[-_]?id|cookie|signature|x-[a-z-]*key", re.I)
_TOKEN_PREFIX = re.compile(r"(?:ghp_|gho_|ghu_|ghs_|ghr_|github_pat_|glpat-|npm_|xox[abprs]-|sk-|AKIA|ASIA|AIza|hf_|"
                           r"pypi-|dckr_pat_|ya29\.)[A-Za-z0-9_-]{6,}")
_LONG_RUN = re.compile(r"[A-Za-z0-9+_=-]{24,}")


def secret_shaped(value: str) -> bool:
    """True when a git config value looks like it holds or sends a credential (see the patterns above)."""
    text = _unquote(value) if value.startswith('"') else value
    if _USERINFO.search(text) or re.search(r"://[^/\s@]*@", text):
        return True
    if _SECRET_WORDS.search(text) or _TOKEN_PREFIX.search(text):
        return True
    return any(re.search(r"[0-9]", run) and re.search(r"[A-Za-z]", run) for run in _LONG_RUN.findall(text))


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
