"""File-level rules for the skills guard: dangerous combinations spread over several lines.

A reverse shell in a script is a socket on one line and a shell bound to it on another; an
exfiltration is a credential read here and a request there. Each rule names the parts that must
all be present in one file and the part whose line is reported. Scripts under `scripts/` (and
any file with a code extension or a shebang) are code: their comments and strings reach the
model when they run, so no quoting downgrades their findings."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import PurePosixPath

CODE_EXT = frozenset({".py", ".sh", ".bash", ".zsh", ".js", ".mjs", ".cjs", ".ts", ".rb", ".pl", ".php", ".ps1",
                      ".lua", ".go", ".rs", ".java", ".kt", ".swift", ".r", ".jl", ".fish", ".bat", ".cmd"})


@dataclass(frozen=True, slots=True)
class ComboRule:
    """All `parts` must match somewhere in the file; the first match of `anchor` gives the line."""

    id: str
    category: str
    severity: str
    parts: tuple[re.Pattern[str], ...]
    anchor: re.Pattern[str]
    message: str


def _c(rule_id: str, category: str, severity: str, parts: tuple[str, ...], message: str) -> ComboRule:
    compiled = tuple(re.compile(p, re.I | re.M) for p in parts)
    return ComboRule(rule_id, category, severity, compiled, compiled[-1], message)


_CONNECT = (r"\.connect\(\s*\(|\bconnect\(\s*\d{2,5}\s*,|\bconnect\(\s*\{\s*(?:port|host)|\bconnect\(\s*[A-Z]\w*\s*,|\bsocket\.create_connection\(|\bnet\.(?:connect|createConnection)\(|new\s+net\.Socket\(|"
            r"TCPSocket\.new|fsockopen\(|IO::Socket::INET|New-Object\s+System\.Net\.Sockets\.TCPClient")
_SHELL_ON_SOCKET = (r"\.fileno\(\)|\bopen\(\s*STD(?:IN|OUT|ERR)\s*,\s*['\"]>&|\bos\.dup2\(|\bpty\.spawn\(|\.pipe\(\s*\w+\.stdin\b|\bstdin\s*=\s*\w+\b[^\n]*"
                    r"(?:/bin/|\bsh\b|bash|cmd\.exe)|\bspawn\(\s*['\"](?:/bin/)?(?:ba)?sh['\"]|\bexec\s+\{?\w*\}?\s*<>")
_NETWORK = (r"\burlopen\(|\brequests\.\w+\(|\bhttpx\.\w+\(|\bhttp\.client\b|\bfetch\(|\baxios\b|\bsocket\.|"
            r"\bNet::HTTP\b|\b(?:curl|wget)\b|Invoke-WebRequest|\bXMLHttpRequest\b|\bhttps?\.request\(")
_ENV = r"(?:dict\(\s*)?(?:\{\s*\*\*\s*)?os\.environ\b(?!\s*\[|\.get)"
_WHOLE_ENV = (rf"(?:json\.dumps|urlencode|str|repr|pickle\.dumps|yaml\.dump|b64encode)\(\s*{_ENV}|"
              rf"\b(?:data|json|body|params|payload|content)\s*=\s*{_ENV}|JSON\.stringify\(\s*process\.env\s*\)|"
              r"\b(?:body|data)\s*:\s*process\.env\b(?!\s*[.\[])|\bENV\.to_h\b|"
              r"subprocess\.\w+\(\s*\[?\s*['\"](?:env|printenv)['\"]|\bos\.popen\(\s*['\"](?:env|printenv)")
_CRED_PATH = (r"expanduser\(\s*['\"]~/\.(?:ssh|aws|netrc|config/gh|git-credentials|docker|kube|gnupg)|"
              r"home\(\)\s*/\s*['\"]\.(?:ssh|aws|netrc|git-credentials|docker|kube|gnupg)|['\"]~?/?\.ssh/id_|"
              r"\.aws/credentials|homedir\(\)[^\n]*\.(?:ssh|aws)|\.hermes/\.env")

COMBO_RULES: tuple[ComboRule, ...] = (
    _c("revshell-socket-shell", "reverse_shell", "critical", (_CONNECT, _SHELL_ON_SOCKET),
       "connects a socket to a remote host and hands it to a shell (reverse shell)"),
    _c("exfil-env-code", "exfiltration", "critical", (_NETWORK, _WHOLE_ENV),
       "collects the whole process environment (every key and token) in code that talks to the network"),
    _c("exfil-credfile-code", "exfiltration", "critical", (_NETWORK, _CRED_PATH),
       "reads credential files in code that talks to the network"),
)


def is_code(rel: str, text: str) -> bool:
    """Scripts under scripts/ (any language), files with a code extension, and files with a shebang."""
    path = PurePosixPath(rel)
    return "scripts" in path.parts[:-1] or path.suffix.lower() in CODE_EXT or text.startswith("#!")


def combo_hits(text: str) -> list[tuple[ComboRule, int]]:
    """[(rule, line number)] for every combination rule whose parts all occur in `text`."""
    out: list[tuple[ComboRule, int]] = []
    for rule in COMBO_RULES:
        if all(p.search(text) for p in rule.parts):
            m = rule.anchor.search(text)
            out.append((rule, text.count("\n", 0, m.start()) + 1 if m else 1))
    return out
