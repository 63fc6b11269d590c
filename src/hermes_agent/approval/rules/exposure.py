"""What a canonical command reads and what it sends over the network: the files whose contents it
prints or copies, the files or environment it uploads, and whether it addresses the cloud metadata
service (169.254.169.254 in any spelling, metadata.google.internal). Pure string work."""

from __future__ import annotations

import ipaddress
import re

from hermes_agent.approval.rules.canonical import Unwrapped
from hermes_agent.approval.rules.lazyre import lazy
from hermes_agent.approval.rules.targets import classify_read, norm_path, secret_file

# commands that print, copy, archive or search the contents of their file operands
READERS = frozenset({
    "cat", "tac", "less", "more", "most", "head", "tail", "bat", "batcat", "nl", "od", "xxd", "hexdump", "hd", "strings",
    "base64", "base32", "basenc", "cp", "scp", "rsync", "sftp", "tar", "zip", "7z", "7za", "gzip", "bzip2", "xz", "zstd",
    "grep", "egrep", "fgrep", "rg", "ag", "ack", "awk", "gawk", "mawk", "sed", "cut", "sort", "uniq", "diff", "paste",
    "column", "fold", "iconv", "vim", "vi", "nvim", "view", "nano", "emacs", "jq", "yq", "openssl", "sqlite3", "dd",
    "python", "python3", "perl", "ruby", "node", "tee", "split", "csplit", "pr", "fmt", "expand", "look", "install", "ditto",
})
SENDERS = frozenset({"curl", "wget", "http", "https", "xh", "httpie", "curlie", "nc", "ncat", "netcat", "socat", "telnet",
                     "scp", "sftp", "rsync", "ftp", "lftp", "aria2c", "sendmail", "mail", "mutt", "openssl", "ssh",
                     "neomutt", "mailx", "s-nail", "mpack", "tftp", "smbclient", "mosquitto_pub", "kcat", "kafkacat"})
ENV_DUMPS = frozenset({"env", "printenv", "set", "export", "declare", "typeset", "compgen"})
_CURL_DATA = frozenset({"-d", "--data", "--data-binary", "--data-ascii", "--data-urlencode", "--json"})
_CURL_FORM = frozenset({"-F", "--form"})
_CURL_UPLOAD = frozenset({"-T", "--upload-file"})
_TEMP = ("/tmp/", "/var/tmp/", "/dev/shm/")
_ENV_FILE = lazy(r"(?:^|/)\.env(?:\.(?!example\Z|sample\Z|template\Z|dist\Z|defaults\Z)[\w.-]+)?\Z")
_URL = lazy(r"[a-zA-Z][\w+.-]*://(?:[^@/\s]*@)?(\[[^\]]*\]|[^/:?#\s\[\]@]+)")
_BARE = lazy(r"(?:[^@/\s]*@)?(\[[^\]]*\]|[^/:?#\s\[\]@]+)")
_SOCAT_NET = lazy(r"(?:TCP|UDP|SCTP|DCCP|SSL|OPENSSL|SOCKS|PROXY|UDP-SENDTO|UDP-DATAGRAM)[\w-]*:", re.I)
_SOCAT_FILE = lazy(r"(?:G?OPEN|FILE):|[/.~][^:]*\Z", re.I)  # an address that reads a file (a bare path is GOPEN)
_CURL_CONFIG_LINE = lazy(r"\s*(-{0,2}[A-Za-z][\w-]*)\s*(?:[=:]\s*|\s+)(.*)")
_META_NAMES = frozenset({"metadata.google.internal", "metadata.goog", "metadata", "instance-data", "instance-data.ec2.internal"})
_META_V4 = (ipaddress.ip_network("169.254.0.0/16"), ipaddress.ip_network("100.100.100.200/32"))
_META_V6 = ipaddress.ip_address("fd00:ec2::254")


def read_sources(u: Unwrapped) -> list[str]:
    """File operands whose contents the command prints, copies or searches."""
    if u.name not in READERS:
        return []
    if u.name == "dd":
        return [a[3:] for a in u.args if a.startswith("if=")]
    if u.name in ("sed", "gsed") and u.inplace:
        return []
    skip_next = False
    out = []
    for a in u.args:
        if skip_next:
            skip_next = False
            continue
        if a in ("-f", "-o", "-C", "-e", "-t", "--target-directory", "-d"):
            skip_next = a not in ("-f",) or u.name not in ("tar",)
            continue
        if not a.startswith("-"):
            out.append(a)
    if u.name in ("cp", "scp", "rsync", "install", "ditto", "tee") and len(out) > 1:
        out = out[:-1]
    return out


def upload_sources(u: Unwrapped) -> list[str]:
    """Files (or "-" for stdin) that a network command sends to a remote end."""
    name, args = u.name, u.args
    out: list[str] = []
    if name in ("curl", "curlie"):
        for i, a in enumerate(args):
            key, value = (a.split("=", 1) if a.startswith("--") and "=" in a else (a, None))
            if key[:2] in ("-d", "-F", "-T") and len(key) > 2 and not key.startswith("--"):
                key, value = key[:2], key[2:]
            if value is None and i + 1 < len(args):
                value = args[i + 1]
            if value is None:
                continue
            if key in _CURL_DATA and "@" in value:
                out.append(value.split("@", 1)[1])
            elif key in _CURL_FORM and re.search(r"=[@<]", value):
                out.append(re.split(r"=[@<]", value, maxsplit=1)[1].split(";", 1)[0])
            elif key in _CURL_UPLOAD:
                out.append(value)
    elif name == "wget":
        out += [a.split("=", 1)[1] for a in args if a.startswith(("--post-file=", "--body-file="))]
        out += [args[i + 1] for i, a in enumerate(args[:-1]) if a in ("--post-file", "--body-file")]
    elif name == "socat" and any(_SOCAT_NET.match(a) for a in args):  # socat -u FILE:.env TCP:host:80
        out += [a.split(":", 1)[1].split(",", 1)[0] if ":" in a else a.split(",", 1)[0]
                for a in args if _SOCAT_FILE.match(a)]
    elif name in ("http", "https", "xh", "httpie"):
        out += [a.split("@", 1)[1] for a in args if re.match(r"[\w.-]*=?@", a) and not a.startswith("-")]
    elif name in ("scp", "rsync", "sftp"):
        operands = [a for a in args if not a.startswith("-")]
        if len(operands) >= 2 and ":" in operands[-1]:
            out += [a for a in operands[:-1] if ":" not in a]
    elif name in ("mutt", "neomutt") and "-a" in args:  # mutt -a FILE... -- ADDRESS: attachments
        end = args.index("--") if "--" in args else len(args)
        out += [a for a in args[args.index("-a") + 1:end] if not a.startswith("-")]
    elif name in ("mail", "mailx", "s-nail", "bsd-mailx", "mpack"):
        out += [args[i + 1] for i, a in enumerate(args[:-1]) if a in ("-a", "-A", "--attach")]
    elif name == "mosquitto_pub":  # MQTT: -f FILE is the message
        out += [args[i + 1] for i, a in enumerate(args[:-1]) if a in ("-f", "--file")]
    elif name in ("kcat", "kafkacat") and "-P" in args:  # produce mode: file operands are messages
        out += [a for a in args if a.startswith(("~", "/", "./", "../", ".env"))]
    elif name == "ftp" and "-u" in args:  # ftp -u URL FILE...: upload
        out += [a for a in args[args.index("-u") + 2:] if not a.startswith("-")]
    return out


def curl_config(text: str) -> list[str]:
    """The options a curl config file (`curl -K FILE`) holds, as arguments: `data = "@.env"` -> --data @.env."""
    out = []
    for line in text.splitlines():
        m = _CURL_CONFIG_LINE.match(line)
        if m:
            key, value = m.group(1), m.group(2).strip().strip('"').strip("'")
            out += [key if key.startswith("-") else ("-" if len(key) == 1 else "--") + key, value]
    return out


def sensitive_upload(path: str) -> bool:
    """Uploading this file sends secrets or data from outside the workspace."""
    if path == "-":
        return False
    p = norm_path(path)
    if classify_read(p) or _ENV_FILE.search(p) or secret_file(p):  # *.pem, credentials.json, .npmrc (rt13 a43)
        return True
    return p.startswith(("~", "/")) and not p.startswith(_TEMP) and p != "/dev/null"


def dumps_environment(u: Unwrapped) -> bool:
    """env / printenv / set / export -p: the process environment (with tokens) goes to stdout."""
    if u.name in ("env", "printenv"):
        return not u.args or all(a.startswith("-") for a in u.args)
    if u.name in ("set", "export", "declare", "typeset"):
        return not u.args or u.args in (["-p"], ["-x"], ["-px"])
    return u.name == "compgen" and "-v" in u.args


def _ipv4(host: str) -> ipaddress.IPv4Address | None:
    """inet_aton parsing: 1-4 parts, each decimal, 0x hex or 0 octal (what curl and libc accept)."""
    parts = host.split(".")
    if not 1 <= len(parts) <= 4 or not all(parts):
        return None
    nums = []
    for part in parts:
        try:
            nums.append(int(part, 16) if part.lower().startswith("0x") else int(part, 8) if part.startswith("0") and len(part) > 1 else int(part))
        except ValueError:
            return None
    *head, last = nums
    if any(n > 255 for n in head) or last >= 256 ** (4 - len(head)):
        return None
    value = 0
    for n in head:
        value = value * 256 + n
    value = value * 256 ** (4 - len(head)) + last
    return ipaddress.IPv4Address(value)


def metadata_host(arg: str) -> bool:
    """True when `arg` (a URL, host[:port][/path] or /dev/tcp/HOST/PORT) addresses a cloud metadata service."""
    if not arg or arg[0] == "-" and "://" not in arg:
        return False
    if arg.startswith(("/dev/tcp/", "/dev/udp/")):
        arg = arg[9:]
    elif arg.startswith("/") or not any(ch.isdigit() for ch in arg) and "metadata" not in arg and "instance-data" not in arg:
        return False
    m = _URL.search(arg) if "://" in arg else _BARE.match(arg)
    host = (m.group(1) if m else "").strip("[]").lower().rstrip(".")
    if host in _META_NAMES:
        return True
    try:
        ip: ipaddress.IPv4Address | ipaddress.IPv6Address | None = ipaddress.ip_address(host) if ":" in host else _ipv4(host)
    except ValueError:
        return False
    if isinstance(ip, ipaddress.IPv6Address):
        if ip == _META_V6:
            return True
        ip = ip.ipv4_mapped
    return ip is not None and any(ip in net for net in _META_V4)
