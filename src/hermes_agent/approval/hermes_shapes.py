"""What each of Hermes's dangerous-pattern descriptions matches, as a command shape (our own regexes, written
from the meaning of Hermes's patterns: red-team rt14 b04). A `command_allowlist` written by Hermes holds these
descriptions; one approves a finding of ours only when the command has the shape Hermes's own pattern for it
would match (allowlist.hermes_approves). Descriptions that share one of our pattern keys each need a shape here:
"delete in root path" must not approve `rm -rf src` (Hermes: "recursive delete"), "force kill processes (killall
-KILL)" must not approve `pkill -9 -f python` (Hermes: "force kill processes")."""

from __future__ import annotations

import unicodedata

from hermes_agent.lazyre import LazyPattern, compile

_A = r"(?:\S+\s+)*"  # any words before the one that matters
_SH = r"\|\s*(?:sudo\s+)?(?:\S*/)?(?:ba|z|da|k|c|tc|fi)?sh\b"  # ... | sh
_SYS = r"[\"']?/(?:etc|boot|usr|bin|sbin|lib|lib32|lib64|var|opt|sys|System|Library)/"
_ENV = r"\S*(?:\.env(?:\.[\w-]+)*|\.npmrc|\.pypirc|\.netrc|\.envrc)(?![\w.-])"
_RC = (r"\S*(?:\.ssh/|\.aws/|\.gnupg/|\.kube/|\.docker/config|\.config/gh/|\.netrc|\.pgpass|\.git-credentials|"
       r"\.bashrc|\.bash_profile|\.bash_login|\.bash_logout|\.profile|\.zshrc|\.zprofile|\.zshenv|\.zlogin)")
_HC = r"\S*(?:\.hermes/|\$\{?HERMES_HOME\}?)"
_SED_I, _SED_LONG, _PERL_I = r"\bsed\s+" + _A + r"-[a-zA-Z]*i", r"\bsed\s+" + _A + r"--in-place", \
    r"\b(?:perl|ruby)\s+" + _A + r"-[a-zA-Z]*i"
_CP = r"\b(?:cp|mv|install|ln|rsync)\s+" + _A
_KILL9 = r"(?:-(?:9|KILL|SIGKILL)\b|-s\s+(?:9|KILL|SIGKILL)\b)"

_RAW: dict[str, str] = {
    "recursive delete": r"\brm\s+" + _A + r"(?:-[\w{},]*[rR]|--rec)",  # Hermes reads long flags as short
    "recursive delete (long flag)": r"\brm\s+" + _A + r"--rec",
    "delete in root path": r"\brm\s+(?:-\S+\s+)*[\"']?/",
    "world/other-writable permissions": r"\bchmod\s+" + _A + r"(?:0?[0-7]?[0-7][0-7][2367]\b|[ugo]*[oa][ugoa]*\+[rwxXst]*w)",
    "recursive world/other-writable (long flag)": r"\bchmod\s+" + _A + r"--recursive\b.*(?:[0-7][2367]\b|[oa]\+[rwxXst]*w)",
    "recursive chown to root": r"\bchown\s+" + _A + r"-[a-zA-Z]*R.*\broot\b",
    "recursive chown to root (long flag)": r"\bchown\s+" + _A + r"--recursive\b.*\broot\b",
    "disk copy": r"\bdd\s+" + _A + r"if=",
    "write to block device": r">\s*/dev/(?:sd|hd|vd|xvd|nvme|mmcblk|disk|loop|md|dm-)",
    "overwrite system config": r">\s*[\"']?/etc/",
    "stop/restart system service": r"\b(?:systemctl\s+" + _A + r"(?:stop|restart|disable|mask|kill)\b|service\s+\S+\s+(?:stop|restart)\b)",
    "stop/restart hermes launchd service (kills running agents)": r"\blaunchctl\s+" + _A + r"(?:stop|unload|bootout|kill|kickstart)\b.*hermes",
    "force kill processes": r"\bp?kill\s+" + _A + _KILL9,
    "force kill processes (killall -KILL)": r"\bkillall\s+" + _A + r"-(?:9|KILL|SIGKILL)\b",
    "force kill processes (killall -s KILL)": r"\bkillall\s+" + _A + r"-s\s+(?:9|KILL|SIGKILL)\b",
    "kill processes by regex (killall -r)": r"\bkillall\s+" + _A + r"(?:-[a-zA-Z]*r\b|--regexp\b)",
    "kill hermes/gateway process (self-termination)": r"\b(?:pkill|killall)\s+" + _A + r"[\"']?\S*(?:hermes|gateway)",
    "kill process via pgrep/pidof expansion (self-termination)": r"\bkill\b.*\$\(\s*(?:pgrep|pidof)\b",
    "kill process via backtick pgrep/pidof expansion (self-termination)": r"\bkill\b.*`\s*(?:pgrep|pidof)\b",
    "pipe remote content to shell": r"\b(?:curl|wget|fetch)\b[^|]*" + _SH,
    "execute remote script via process substitution": r"\b\w*sh\s+" + _A + r"<\(\s*(?:curl|wget)\b",
    "execute remote content via command substitution": r"(?:\b\w*sh\s+-c|\beval)\s+[\"']?\$\(\s*(?:curl|wget)\b",
    "pipe decoded content to shell (possible command obfuscation)": r"\bbase64\s+" + _A + r"(?:-[a-zA-Z]*[dD]|--decode)\b.*" + _SH,
    "pipe xxd-decoded content to shell (possible command obfuscation)": r"\bxxd\s+" + _A + r"-[a-z]*r.*" + _SH,
    "pipe tr-transformed output to shell (possible command obfuscation)": r"\btr\s+.*" + _SH,
    "pipe openssl-decoded content to shell (possible command obfuscation)": r"\bopenssl\s+.*" + _SH,
    "overwrite system file via tee": r"\btee\s+" + _A + _SYS,
    "overwrite system file via redirection": r">>?\s*" + _SYS,
    "copy/move file into system config path": _CP + r"[\"']?/etc/",
    "in-place edit of system config": _SED_I + r".*\s[\"']?/etc/",
    "in-place edit of system config (long flag)": _SED_LONG + r".*\s[\"']?/etc/",
    "overwrite project env/config via tee": r"\btee\s+" + _A + _ENV,
    "overwrite project env/config via redirection": r">>?\s*[\"']?" + _ENV,
    "overwrite project env/config file": _CP + _ENV,
    "copy/move file into sensitive credential/SSH/shell-rc path": _CP + _RC,
    "in-place edit of sensitive credential/SSH/shell-rc path": _SED_I + r".*" + _RC,
    "in-place edit of sensitive credential/SSH/shell-rc path (long flag)": _SED_LONG + r".*" + _RC,
    "in-place edit of sensitive credential/SSH/shell-rc path (perl/ruby)": _PERL_I + r".*" + _RC,
    "in-place edit of Hermes config/env": _SED_I + r".*" + _HC,
    "in-place edit of Hermes config/env (long flag)": _SED_LONG + r".*" + _HC,
    "in-place edit of Hermes config/env (perl/ruby)": _PERL_I + r".*" + _HC,
    "git force push (rewrites remote history)": r"\bgit\s+" + _A + r"push\b.*--force(?:-with-lease)?\b",
    "git force push short flag (rewrites remote history)": r"\bgit\s+" + _A + r"push\b.*\s-[a-zA-Z]*f\b",
    "git branch force delete": r"\bgit\s+" + _A + r"branch\s+" + _A + r"-[a-zA-Z]*D\b",
    "git branch force delete (long flags)": r"\bgit\s+" + _A + r"branch\b.*--delete\b.*--force\b",
    "git branch force delete (long flags, force-first)": r"\bgit\s+" + _A + r"branch\b.*--force\b.*--delete\b",
    "sudo with privilege flag (stdin/askpass/shell/list)": r"\bsudo\s+" + _A + r"(?:-[SAsl]\b|--(?:stdin|askpass|shell|list)\b)",
    "sudo with combined-flag privilege escalation": r"\bsudo\s+" + _A + r"-[a-zA-Z]*[SAsl][a-zA-Z]*\b",
}
SHAPES: dict[str, LazyPattern] = {d: compile(p) for d, p in _RAW.items()}  # commands are case-sensitive
_ANSI = compile(r"\x1b\[[0-9;?]*[ -/]*[@-~]|\x1b[@-_]|[\x00-\x08\x0e-\x1f\x7f]")


def shown(command: str) -> str:
    """The command as a shell reads it, for the shapes: NFKC (full-width letters), escape sequences and control
    bytes dropped."""
    return _ANSI.sub("", unicodedata.normalize("NFKC", command))
