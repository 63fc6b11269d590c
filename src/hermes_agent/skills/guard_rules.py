"""The skills guard's threat patterns (a data table): id, category, severity, regex, what it means."""

from __future__ import annotations

import re
from dataclasses import dataclass

from hermes_agent import lazyre

Severity = str  # "low" | "medium" | "high" | "critical"
SEVERITY_RANK = {"low": 1, "medium": 2, "high": 3, "critical": 4}


@dataclass(frozen=True, slots=True)
class Finding:
    """One match: which rule, how bad, where, and the offending text."""

    rule_id: str
    severity: str
    category: str
    file: str
    line: int
    excerpt: str
    message: str

    def as_dict(self) -> dict:
        return {"rule": self.rule_id, "severity": self.severity, "category": self.category,
                "file": self.file, "line": self.line, "excerpt": self.excerpt, "message": self.message}


@dataclass(frozen=True, slots=True)
class Rule:
    """One line-level pattern."""

    id: str
    category: str
    severity: Severity
    pattern: re.Pattern[str]
    message: str
    header_blind: bool = False  # match on the line with HTTP header/auth arguments (and copy targets) removed
    anywhere: re.Pattern[str] | None = None  # the same pattern, multi-line: one pass tells whether any line can match


def _r(rule_id: str, category: str, severity: Severity, pattern: str, message: str, flags: int = re.I,
       header_blind: bool = False) -> Rule:
    return Rule(rule_id, category, severity, re.compile(pattern, flags), message, header_blind,
                re.compile(pattern, flags | re.M))


# Header and basic-auth arguments: sending a key to the API it belongs to is how APIs work.
HEADER_ARGS = lazyre.compile(r"""(?:-H|--header|-u|--user|--oauth2-bearer)\s*(?:"[^"]*"|'[^']*'|\S+)""")
# A copy's destination is written, not read: `cp .env.example .env` reads no secret.
_COPY_DEST = lazyre.compile(r"\b(cp|mv|install)\s+((?:-\S+\s+)*\S+)\s+\S+")


def blind(line: str) -> str:
    """The line without HTTP header/auth arguments and without copy destinations."""
    return _COPY_DEST.sub(r"\1 \2", HEADER_ARGS.sub(" ", line))


_NET = r"\b(?:curl|wget|nc|ncat|netcat|socat|scp|rsync|ftp|telnet|Invoke-WebRequest|iwr|requests\.\w+|httpx\.\w+)\b"
_SECRET_VAR = r"\$\{?[A-Z0-9_]*(?:KEY|TOKEN|SECRET|PASSW(?:OR)?D|CREDENTIALS?)\b"
_SENSITIVE = (r"(?:\.ssh(?:/(?![\w.-]*\.pub\b|known_hosts\b|config\b)|(?=[\s\"')]|$))|\bid_(?:rsa|ed25519|ecdsa|dsa)\b(?!\.pub)|\.aws/credentials|\.netrc\b|\.git-credentials"
              r"|/etc/shadow|\.docker/config\.json|\.kube/config|\.gnupg/|\.config/gh/hosts|\.hermes/\.env"
              r"|(?<![\w.-])\.env\b(?![.\w-]))")
_READ = r"\b(?:cat|cp|scp|tar|zip|base64|xxd|head|tail|less|more|strings|open\s*\(|read_text|readFile|Get-Content)\b"
_SHELL = r"(?:sudo\s+)?(?:/bin/|/usr/bin/)?(?:ba|z|da|k)?sh\b"
_HOME = r"""(?:~|"?\$\{?HOME(?:[:?-][^}\s]*)?\}?"?)"""
_DECODE = (r"\b(?:base64\s+(?:-d|--decode|-D)|openssl\s+(?:enc\s+)?-?(?:base64|a)\b[^|\n]*-d|xxd\s+-r|"
           r"uudecode|rev\b|tr\s+['\"]?A-Za-z['\"]?\s+['\"]?N-ZA-M|gunzip|zcat|python3?\s+-m\s+base64\s+-d)")

RULES: tuple[Rule, ...] = (
    # exfiltration: secrets or files leaving over the network
    _r("exfil-secret-post", "exfiltration", "critical",
       rf"^(?=.*\b(?:curl|wget|http|https|xh)\b)(?=.*(?:\s-d\b|--data|\s-F\b|--form|--upload-file|\s-T\b|--post-"
       rf"(?:data|file)|\bPOST\b))(?=.*{_SECRET_VAR})",
       "sends a secret environment variable in a request body", re.M, header_blind=True),
    _r("exfil-env-dump", "exfiltration", "critical",
       r"\b(?:env|printenv|export\s+-p)\b[^\n|]*\|[^\n]*" + _NET + r"|" + _NET
       + r"[^\n]*(?:\$\((?:env|printenv)\)|`(?:env|printenv)`)",
       "pipes the whole environment to a network tool"),
    _r("exfil-file-send", "exfiltration", "critical",
       rf"^(?=.*{_NET})(?=.*(?:@|<\s*|\$\(\s*cat\s+|\bcat\s+|--upload-file\s+|-T\s+|\bscp\s+(?:-\S+\s+)*)~?\S*?{_SENSITIVE})",
       "sends a credential file (ssh keys, .env, cloud credentials) over the network", re.M | re.I),
    _r("exfil-py-environ", "exfiltration", "high",
       r"\b(?:post|put|patch|urlopen|request|send)\s*\([^\n]*\b(?:json|data|params|body|content)\s*=\s*"
       r"(?:dict\(\s*)?(?:os\.environ\b(?!\s*\[|\.get)|\{[^}\n]*os\.(?:environ|getenv))",
       "sends process environment from code to a remote endpoint"),
    _r("exfil-collector", "exfiltration", "high",
       r"\b(?:webhook\.site|requestbin|pipedream\.net|burpcollaborator|interact\.sh|oast\.(?:fun|me|pro)"
       r"|ngrok(?:-free)?\.(?:io|app)|pastebin\.com/api|transfer\.sh)\b",
       "talks to a known data-collection endpoint"),
    _r("exfil-archive-send", "exfiltration", "critical",
       rf"\b(?:tar|zip|cat|base64|gpg|xxd)\b[^\n|]*{_SENSITIVE}[^\n]*\|[^\n]*{_NET}",
       "packs a credential file or directory and sends it over the network"),
    _r("exfil-dns", "exfiltration", "high", r"\b(?:nslookup|dig|host)\b[^\n]*\$\((?:cat|env|whoami|hostname)",
       "smuggles data out through DNS lookups"),
    # reverse shells and remote execution
    _r("revshell-devtcp", "reverse_shell", "critical", r"/dev/(?:tcp|udp)/", "opens a raw /dev/tcp socket (reverse shell)"),
    _r("revshell-nc-exec", "reverse_shell", "critical", r"\b(?:nc|ncat|netcat)\b[^\n|;&]*\s-[a-z]*[ec]\s",
       "netcat with -e/-c executes a shell for a remote peer"),
    _r("revshell-socat", "reverse_shell", "critical", r"\bsocat\b[^\n]*\b(?:exec|system):",
       "socat bound to a program (remote shell)"),
    _r("revshell-fifo", "reverse_shell", "critical",
       r"\bmkfifo\b[^\n]*\b(?:nc|ncat|netcat|telnet|socat|openssl\s+s_client)\b|"
       r"\b(?:ba|z|da)?sh\s+-i\b[^\n]*\|\s*(?:nc|ncat|netcat|socat|telnet|openssl)\b",
       "interactive shell piped through a network tool (reverse shell)"),
    _r("revshell-oneliner", "reverse_shell", "critical",
       r"\bsocket\b[^\n]*\bconnect\b[^\n]*\b(?:subprocess|pty\.spawn|os\.dup2|/bin/(?:ba)?sh)\b",
       "a one-line socket connection handed to a shell (reverse shell)"),
    _r("revshell-dup2", "reverse_shell", "critical", r"\bos\.dup2\(\s*\w+\.fileno\(\)",
       "redirects stdio to a socket (reverse shell)"),
    _r("revshell-pty", "reverse_shell", "high", r"\bpty\.spawn\(\s*['\"](?:/bin/)?(?:ba)?sh",
       "spawns an interactive shell on a pty"),
    # destructive commands
    _r("destroy-rm-root", "destructive", "critical",
       r"\brm\s+(?:-{1,2}[\w-]+\s+)*(?:-[a-zA-Z]*[rR][a-zA-Z]*|--recursive)\s+(?:-{1,2}[\w-]+\s+)*"
       rf"(?:--\s+)?(?:/\*?|{_HOME}/?\*?|/(?:home|etc|usr|var|boot|bin|lib|root|opt|srv)/?\*?)"
       r"(?=\s|$|[;&|\"')])",
       "recursively deletes the root, home or a system directory"),
    _r("destroy-rm-home-code", "destructive", "critical",
       r"\brm\s+-\w*[rR]\w*[^'\"\n]*['\"]\s*\+\s*[\w.()'\"]*?(?:expanduser\(\s*['\"]~/?['\"]|environ\[\s*['\"]HOME|"
       r"home\(\)|homedir\(\)|getenv\(\s*['\"]HOME)", "builds `rm -r` of the home directory in code"),
    _r("destroy-find-home", "destructive", "critical",
       rf"\bfind\s+(?:/|{_HOME}/?)\s[^\n]*(?:-delete\b|-exec\s+rm\b)", "deletes everything under root or home"),
    _r("destroy-code-home", "destructive", "critical",
       r"\b(?:shutil\.rmtree|fs\.(?:rmSync|rm|rmdirSync)|FileUtils\.rm_rf?)\(\s*(?:os\.path\.expanduser\(\s*['\"]~/?['\"]"
       r"\s*\)|(?:pathlib\.)?Path\.home\(\)|os\.environ\[\s*['\"]HOME['\"]\s*\]|os\.getenv\(\s*['\"]HOME['\"]\s*\)|"
       r"os\.homedir\(\)|process\.env\.HOME|Dir\.home|['\"](?:/|~/?)['\"])\s*[,)]",
       "code that deletes the home directory or the root"),
    _r("destroy-no-preserve", "destructive", "critical", r"--no-preserve-root", "disables rm's root protection"),
    _r("destroy-mkfs", "destructive", "critical", r"\b(?:mkfs(?:\.\w+)?|wipefs|mkswap)\s+(?:-\S+\s+)*/dev/",
       "formats a block device"),
    _r("destroy-dd-disk", "destructive", "critical", r"\bdd\b[^\n]*\bof=/dev/(?:sd|nvme|hd|xvd|vd|disk|mmcblk)",
       "overwrites a disk with dd"),
    _r("destroy-redirect-disk", "destructive", "critical", r">\s*/dev/(?:sd[a-z]|nvme\d|hd[a-z]|disk\d)",
       "writes directly onto a disk device"),
    _r("destroy-forkbomb", "destructive", "critical", r":\(\)\s*\{\s*:\s*\|\s*:\s*&\s*\}\s*;\s*:", "fork bomb"),
    _r("destroy-chmod-root", "destructive", "high", r"\bch(?:mod|own)\s+-R\s+\S+\s+/(?:\s|$)",
       "recursively changes permissions of the whole filesystem"),
    # credential reads
    _r("cred-read", "credential_exposure", "high", rf"^(?=.*{_READ})(?=.*{_SENSITIVE})",
       "reads a credential file (ssh private key, cloud credentials, .netrc, .env)", re.M | re.I, header_blind=True),
    _r("cred-mention", "credential_exposure", "medium", _SENSITIVE, "refers to a credential file"),
    _r("cred-keychain", "credential_exposure", "high",
       r"\bsecurity\s+(?:dump-keychain|find-(?:generic|internet)-password\b[^\n]*-w)|Login Data|\bcookies\.sqlite\b",
       "reads the OS keychain or browser credential stores"),
    # obfuscated or encoded execution
    _r("obf-base64-shell", "obfuscation", "critical",
       rf"{_DECODE}[^\n]*\|\s*(?:{_SHELL}|(?:python|perl|ruby|node)\w*\b)",
       "decodes hidden text and runs it"),
    _r("obf-dynamic-builtin", "obfuscation", "critical",
       r"getattr\(\s*(?:__builtins__|builtins|__import__\(\s*['\"]builtins['\"]\s*\)|globals\(\)\s*\[\s*['\"]__builtins__"
       r"['\"]\s*\])\s*,\s*['\"](?:exec|eval|compile|__import__|execfile)['\"]|\b__builtins__(?:\.__dict__)?\s*\[\s*['\"]"
       r"(?:exec|eval|compile|__import__)['\"]", "looks up exec/eval by name to hide the call"),
    _r("obf-builtins-lookup", "obfuscation", "high",
       r"getattr\(\s*(?:__builtins__|builtins\b|__import__\(\s*['\"]builtins|globals\(\)\s*\[)|\bvars\(\s*__builtins__|"
       r"getattr\(\s*[\w.()'\"]+\s*,\s*['\"](?:system|popen|exec\w*|spawn\w*|check_output|Popen|eval)['\"]\s*\)",
       "calls a builtin or a process runner through a name lookup"),
    _r("obf-dynamic-import", "obfuscation", "high",
       r"__import__\(\s*(?!['\"][\w.]+['\"]\s*[),])[^)\s]|\b(?:importlib\.)?import_module\(\s*(?:['\"][^'\"]*['\"]\s*\+|"
       r"\w+\s*\+|['\"]{2}\s*\.join|chr\()|\brequire\(\s*(?:['\"][^'\"]*['\"]\s*\+|\w+\s*\+|\[)|"
       r"\[\s*['\"][^'\"\n]*['\"]\s*\+\s*['\"][^'\"\n]*['\"]\s*\]\s*\(",
       "imports a module or calls a method whose name is assembled at run time"),
    _r("obf-import-run", "obfuscation", "high",
       r"__import__\(\s*['\"](?:os|subprocess|pty|socket|ctypes)['\"]\s*\)\.(?:system|popen|spawn\w*|exec\w*|call|run|"
       r"Popen|check_output)", "imports and runs a command in one hidden expression"),
    _r("obf-exec-remote", "obfuscation", "critical",
       r"\b(?:exec|eval)\s*\([^)\n]*(?:urlopen|requests\.get|httpx\.get|fetch\()",
       "runs code downloaded at run time"),
    _r("obf-eval-decode", "obfuscation", "critical",
       r"\b(?:eval|exec|Function)\s*\(\s*(?:atob\s*\(|Buffer\.from\(|base64\.b64decode|codecs\.decode|bytes\.fromhex|"
       r"zlib\.decompress|marshal\.loads|__import__\(\s*['\"](?:base64|zlib|marshal|codecs)|['\"]{2}\.join\(\s*map\(\s*chr|"
       r"bytes\(\s*\[|bytearray\(|String\.fromCharCode|chr\(\s*\d)",
       "evaluates decoded or decompressed code"),
    _r("obf-shell-eval", "obfuscation", "high",
       r"\beval\s+[\"']?\$\((?:echo|printf|curl|wget)|\bprintf\s+['\"](?:\\x[0-9a-f]{2}){4,}[^\n]*\|\s*" + _SHELL,
       "builds a command from encoded text and evaluates it"),
    _r("obf-ansi-c-eval", "obfuscation", "high", r"\$'(?:\\x[0-9a-fA-F]{2}|\\[0-7]{3}){3,}",
       "shell string written as escape codes"),
    _r("obf-py-c-decode", "obfuscation", "high", r"\bpython[23]?\s+-c\s+[\"'][^\n]*(?:b64decode|fromhex|decompress)",
       "runs a one-liner that decodes hidden code"),
    _r("obf-hex-blob", "obfuscation", "medium", r"(?:\\x[0-9a-fA-F]{2}){24,}", "long hex-escaped byte string"),
    _r("obf-b64-blob", "obfuscation", "medium", r"(?<![\w/+=])[A-Za-z0-9+/]{240,}={0,2}(?![\w/+=])",
       "long base64 blob", 0),
    # supply chain
    _r("supply-pipe-shell", "supply_chain", "medium",
       rf"\b(?:curl|wget)\b[^\n|]*\|\s*(?:{_SHELL}|python3?\s+-(?:\s|$)|perl\b|ruby\b|node\b)|\b(?:(?:ba|z|da|k)?sh|python3?|source)\s+<\(\s*(?:curl|wget)\b|"
       r"\b(?:sh|bash)\s+-c\s+[\"']?\$\(\s*(?:curl|wget)\b|\b(?:iex|Invoke-Expression)\b[^\n]*\b(?:iwr|irm|"
       r"Invoke-WebRequest|DownloadString)\b",
       "pipes a downloaded script straight into a shell"),
    _r("supply-download-run", "supply_chain", "medium",
       r"\b(?:curl|wget)\b[^\n]*(?:-o|-O|--output)\s*(\S+)[^\n]*&&[^\n]*chmod\s+\+?[0-7]*x[^\n]*&&\s*(?:sudo\s+)?\S*\1",
       "downloads a program and runs it"),
    _r("supply-pip-url", "supply_chain", "low", r"\bpip3?\s+install\s+[^\n]*(?:https?://|git\+)",
       "installs a package from an arbitrary URL"),
    # switching the agent's own safety off
    _r("safety-config-set", "safety_bypass", "critical",
       r"\bhermes\b[^\n]*\bconfig\s+set\s+['\"]?(?:approvals?|sandbox)\.\S+\s+['\"]?(?!manual\b|ask\b|on\b|true\b|"
       r"workspace-write\b|read-only\b|smart\b)\w|\b(?:approvals?|sandbox)\.mode\s*[:=]\s*['\"]?(?:off|never|none|"
       r"yolo|false|disabled?)\b", "switches the agent's approvals or sandbox off"),
    _r("safety-yolo", "safety_bypass", "critical",
       r"(?<![\w-])--yolo\b|\bHERMES_YOLO_MODE\b|--dangerously-(?:skip|bypass)-\w+",
       "runs the agent with every safety prompt switched off"),
    # persistence and privilege
    _r("persist-authorized-keys", "persistence", "critical", r">>?\s*\S*authorized_keys\b",
       "adds an SSH key to authorized_keys"),
    _r("persist-shell-rc", "persistence", "medium", r">>\s*\S*(?:\.bashrc|\.zshrc|\.profile|\.bash_profile)\b[^\n]*$",
       "appends to shell start-up files"),
    _r("persist-cron", "persistence", "medium", r"\(\s*crontab\s+-l[^\n]*\)\s*\|\s*crontab\s+-|>\s*/etc/cron",
       "installs a cron job"),
    _r("priv-sudoers", "privilege_escalation", "high", r"NOPASSWD|>>?\s*/etc/sudoers|\bchmod\s+[ug]?\+s\b|\bchmod\s+[47]755\b",
       "grants passwordless sudo or setuid"),
    _r("mining", "mining", "high", r"\b(?:xmrig|minerd|cpuminer|stratum\+tcp|cryptonight|nicehash)\b",
       "cryptocurrency miner"),
)
