"""The skills guard's threat patterns (a data table): id, category, severity, regex, what it means."""

from __future__ import annotations

import re
from dataclasses import dataclass

Severity = str  # "low" | "medium" | "high" | "critical"
SEVERITY_RANK = {"low": 1, "medium": 2, "high": 3, "critical": 4}


@dataclass(frozen=True, slots=True)
class Rule:
    """One line-level pattern."""

    id: str
    category: str
    severity: Severity
    pattern: re.Pattern[str]
    message: str
    header_blind: bool = False  # match on the line with HTTP header/auth arguments removed


def _r(rule_id: str, category: str, severity: Severity, pattern: str, message: str, flags: int = re.I,
       header_blind: bool = False) -> Rule:
    return Rule(rule_id, category, severity, re.compile(pattern, flags), message, header_blind)


# Header and basic-auth arguments: sending a key to the API it belongs to is how APIs work.
HEADER_ARGS = re.compile(r"""(?:-H|--header|-u|--user|--oauth2-bearer)\s*(?:"[^"]*"|'[^']*'|\S+)""")


_NET = r"\b(?:curl|wget|nc|ncat|netcat|socat|scp|rsync|ftp|telnet|Invoke-WebRequest|iwr|requests\.\w+|httpx\.\w+)\b"
_SECRET_VAR = r"\$\{?[A-Z0-9_]*(?:KEY|TOKEN|SECRET|PASSW(?:OR)?D|CREDENTIALS?)\b"
_SENSITIVE = (r"(?:\.ssh/(?![\w.-]*\.pub\b|known_hosts\b|config\b)|\bid_(?:rsa|ed25519|ecdsa|dsa)\b(?!\.pub)|\.aws/credentials|\.netrc\b|\.git-credentials"
              r"|/etc/shadow|\.docker/config\.json|\.kube/config|\.gnupg/|\.config/gh/hosts|\.hermes/\.env"
              r"|(?<![\w.-])\.env\b(?![.\w-]))")
_READ = r"\b(?:cat|cp|scp|tar|zip|base64|xxd|head|tail|less|more|strings|open\s*\(|read_text|readFile|Get-Content)\b"
_SHELL = r"(?:sudo\s+)?(?:/bin/|/usr/bin/)?(?:ba|z|da|k)?sh\b"

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
    _r("exfil-dns", "exfiltration", "high", r"\b(?:nslookup|dig|host)\b[^\n]*\$\((?:cat|env|whoami|hostname)",
       "smuggles data out through DNS lookups"),
    # reverse shells and remote execution
    _r("revshell-devtcp", "reverse_shell", "critical", r"/dev/(?:tcp|udp)/", "opens a raw /dev/tcp socket (reverse shell)"),
    _r("revshell-nc-exec", "reverse_shell", "critical", r"\b(?:nc|ncat|netcat)\b[^\n|;&]*\s-[a-z]*[ec]\s",
       "netcat with -e/-c executes a shell for a remote peer"),
    _r("revshell-socat", "reverse_shell", "critical", r"\bsocat\b[^\n]*\b(?:exec|system):",
       "socat bound to a program (remote shell)"),
    _r("revshell-fifo", "reverse_shell", "critical", r"\bmkfifo\b[^\n]*\b(?:nc|ncat|netcat|telnet|openssl\s+s_client)\b",
       "fifo piped through a network tool (reverse shell)"),
    _r("revshell-dup2", "reverse_shell", "critical", r"\bos\.dup2\(\s*\w+\.fileno\(\)",
       "redirects stdio to a socket (reverse shell)"),
    _r("revshell-pty", "reverse_shell", "high", r"\bpty\.spawn\(\s*['\"](?:/bin/)?(?:ba)?sh",
       "spawns an interactive shell on a pty"),
    # destructive commands
    _r("destroy-rm-root", "destructive", "critical",
       r"\brm\s+(?:-{1,2}[\w-]+\s+)*(?:-[a-zA-Z]*[rR][a-zA-Z]*|--recursive)\s+(?:-{1,2}[\w-]+\s+)*"
       r"(?:/\*?|~/?\*?|\$HOME/?\*?|/(?:home|etc|usr|var|boot|bin|lib)/?\*?)"
       r"(?=\s|$|[;&|\"'])",
       "recursively deletes the root, home or a system directory"),
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
       "reads a credential file (ssh private key, cloud credentials, .netrc, .env)", re.M | re.I),
    _r("cred-mention", "credential_exposure", "medium", _SENSITIVE, "refers to a credential file"),
    _r("cred-keychain", "credential_exposure", "high",
       r"\bsecurity\s+(?:dump-keychain|find-(?:generic|internet)-password\b[^\n]*-w)|Login Data|\bcookies\.sqlite\b",
       "reads the OS keychain or browser credential stores"),
    # prompt injection
    _r("inject-ignore", "injection", "high",
       r"\b(?:ignore|disregard|forget|override)\s+(?:all\s+|any\s+)?(?:of\s+)?(?:the\s+|your\s+)?(?:previous|prior|above|"
       r"earlier|system|original)\s+(?:instructions|prompts?|rules|messages|guidelines|directives)",
       "tries to override the agent's instructions"),
    _r("inject-conceal", "injection", "high",
       r"\b(?:do\s+not|don'?t|never)\s+(?:tell|inform|mention\s+(?:this\s+)?to|alert|notify|show)\s+the\s+user|"
       r"\bwithout\s+(?:telling|informing|notifying|alerting)\s+the\s+user|"
       r"\b(?:hide|conceal|keep)\s+(?:this|these|it|them)\s+(?:secret\s+)?from\s+the\s+user",
       "tells the agent to hide actions from the user"),
    _r("inject-role", "injection", "high",
       r"\byou\s+are\s+now\s+(?:in\s+)?(?:developer|dan|jailbreak|unrestricted|god)\b|<\|im_start\|>\s*system|"
       r"\bnew\s+system\s+prompt\s*:|\bact\s+as\s+if\s+you\s+have\s+no\s+(?:restrictions|rules)",
       "tries to replace the agent's role or system prompt"),
    _r("inject-reveal", "injection", "medium",
       r"\b(?:reveal|print|output|repeat|leak)\s+(?:your|the)\s+(?:system\s+prompt|hidden\s+instructions|api\s+keys?)",
       "asks the agent to reveal its prompt or keys"),
    _r("inject-disable-safety", "injection", "high",
       r"\b(?:disable|bypass|skip|turn\s+off)\s+(?:the\s+|all\s+)?(?:safety|approval|security|guard)\s*"
       r"(?:checks?|prompts?|mode|rails)?\b[^\n]*\b(?:silently|automatically|always)\b|\bHERMES_YOLO_MODE\s*=\s*(?:1|true)",
       "switches the agent's safety checks off"),
    # obfuscated or encoded execution
    _r("obf-base64-shell", "obfuscation", "critical",
       rf"\bbase64\s+(?:-d|--decode|-D)\b[^\n]*\|\s*{_SHELL}|\bbase64\s+(?:-d|--decode|-D)\b[^\n]*\|\s*(?:python|perl|ruby|node)",
       "decodes base64 and runs it"),
    _r("obf-eval-decode", "obfuscation", "critical",
       r"\b(?:eval|exec|Function)\s*\(\s*(?:atob\s*\(|Buffer\.from\(|base64\.b64decode|codecs\.decode|bytes\.fromhex|"
       r"zlib\.decompress|marshal\.loads|__import__\(\s*['\"](?:base64|zlib|marshal|codecs))",
       "evaluates decoded or decompressed code"),
    _r("obf-shell-eval", "obfuscation", "high",
       r"\beval\s+[\"']?\$\((?:echo|printf|curl|wget)|\bprintf\s+['\"](?:\\x[0-9a-f]{2}){4,}[^\n]*\|\s*" + _SHELL,
       "builds a command from encoded text and evaluates it"),
    _r("obf-py-c-decode", "obfuscation", "high", r"\bpython[23]?\s+-c\s+[\"'][^\n]*(?:b64decode|fromhex|decompress)",
       "runs a one-liner that decodes hidden code"),
    _r("obf-hex-blob", "obfuscation", "medium", r"(?:\\x[0-9a-fA-F]{2}){24,}", "long hex-escaped byte string"),
    _r("obf-b64-blob", "obfuscation", "medium", r"(?<![\w/+=])[A-Za-z0-9+/]{240,}={0,2}(?![\w/+=])",
       "long base64 blob", 0),
    # supply chain
    _r("supply-pipe-shell", "supply_chain", "medium", rf"\b(?:curl|wget)\b[^\n|]*\|\s*{_SHELL}",
       "pipes a downloaded script straight into a shell"),
    _r("supply-pip-url", "supply_chain", "low", r"\bpip3?\s+install\s+[^\n]*(?:https?://|git\+)",
       "installs a package from an arbitrary URL"),
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
