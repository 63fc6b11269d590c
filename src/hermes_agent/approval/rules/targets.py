"""Path classification shared by command rules and the file-write gate: raw disks, devices,
credentials, shell rc files, SSH files, .env files and system paths. Pure string work, no filesystem."""

from __future__ import annotations

import posixpath
import re

from hermes_agent.approval.rules.lazyre import lazy

RAW_DISK = r"/dev/(?:sd[a-z]+\d*|hd[a-z]+\d*|vd[a-z]+\d*|xvd[a-z]+\d*|nvme\d+(?:n\d+)?(?:p\d+)?|mmcblk\d+(?:p\d+)?|disk\d+(?:s\d+)?|rdisk\d+|md\d+|dm-\d+|mapper/\S+|loop\d+|sr\d+)"
_RAW_DISK = lazy(RAW_DISK + r"\Z")
_SAFE_DEV = lazy(r"/dev/(?:null|zero|full|random|urandom|stdin|stdout|stderr|tty|fd/\S*|shm/\S*|pts/\S*|ptmx)\Z")
_NET_DEV = lazy(r"/dev/(?:tcp|udp)/")
_SHELL_RC = frozenset({
    ".bashrc", ".bash_profile", ".bash_login", ".bash_logout", ".profile", ".zshrc", ".zprofile", ".zshenv",
    ".zlogin", ".zlogout", ".kshrc", ".cshrc", ".tcshrc", ".mkshrc", ".inputrc", ".bash_aliases",
})
_ENV_FILE = lazy(r"\.env(?:\.[\w.-]+)?\Z")
_ENV_TEMPLATE = lazy(r"\.(?:example|sample|template|dist|defaults|bak|old|orig|backup|save|swp)(?:\.|\Z)|~\Z")
_CREDENTIAL = lazy(
    r"(?:^|/)(?:\.aws/(?:credentials|config)|\.netrc|\.git-credentials|\.pgpass|\.docker/config\.json|\.kube/config"
    r"|\.gnupg(?:/|\Z)|\.pypirc|\.npmrc|\.config/gh/hosts\.yml|\.my\.cnf)")
_HISTORY = frozenset({".bash_history", ".zsh_history", ".history", ".sh_history", ".python_history", ".node_repl_history",
                      ".psql_history", ".mysql_history", ".sqlite_history", ".lesshst", ".zhistory"})
_GIT_INTERNAL = lazy(r"(?:^|/)\.git/(?:hooks(?:/|\Z)|config\Z)|(?:^|/)\.husky/(?!_/)[^/]+\Z")
_SECRET = lazy(
    r"(?:^|/)(?:\.ssh/(?!.*\.pub\Z|known_hosts\S*\Z|authorized_keys\Z|config\Z)\S|\.ssh\Z|\.gnupg(?:/|\Z)|\.aws(?:/|\Z)"
    r"|\.azure(?:/|\Z)|\.config/(?:gcloud|gh)(?:/|\Z)|\.kube(?:/|\Z)|\.docker/config\.json\Z|\.netrc\Z|\.git-credentials\Z"
    r"|\.pgpass\Z|\.pypirc\Z|\.npmrc\Z|\.my\.cnf\Z|\.password-store(?:/|\Z)|\.local/share/keyrings(?:/|\Z)"
    r"|Library/Keychains(?:/|\Z)|\.hermes/(?:\S*/)?(?:\.env|auth\.json|state\.db|pairing\S*)\Z"
    r"|\.mozilla/\S*/(?:logins\.json|key[34]\.db|cookies\.sqlite)\Z|\.config/(?:google-chrome|chromium|BraveSoftware)/\S*"
    r"(?:Login Data|Cookies)\Z)"
    r"|\A/etc/(?:g?shadow-?|sudoers|ssh/ssh_host_\w+_key)\Z|\A/proc/(?:self|\d+|\*)/environ\Z|\A(?:/var)?/run/secrets(?:/|\Z)")
_DISPOSABLE = frozenset({
    "node_modules", "build", "dist", "out", "target", "__pycache__", ".pytest_cache", ".mypy_cache", ".ruff_cache", ".tox",
    ".nox", ".coverage", "coverage", "htmlcov", ".next", ".nuxt", ".turbo", ".parcel-cache", ".svelte-kit", ".angular",
    ".gradle", ".eggs", ".hypothesis", "_build", "bower_components", ".sass-cache", ".cache", ".pytype", ".benchmarks",
    ".docusaurus", ".expo", ".vite", "cmake-build-debug", "cmake-build-release", ".venv", "venv", ".virtualenv", "_cacache"})
_DISPOSABLE_GLOB = lazy(r"\*\.(?:egg-info|pyc|pyo|o|obj|class)\Z|\A[\w.-]+\.egg-info\Z")
_SYSTEM = lazy(
    r"/(?:etc|boot|usr|bin|sbin|lib|lib32|lib64|libx32|sys|proc/sys|var/spool/cron|var/lib/dpkg|var/log|System"
    r"|Library/(?:LaunchDaemons|LaunchAgents))(?:/|\Z)")

# (pattern_key, description, hardline)
Class = tuple[str, str, bool]
RAW_DISK_WRITE: Class = ("raw_disk_write", "write to a raw disk device", True)
DEVICE_WRITE: Class = ("device_write", "write to a device file under /dev", False)
NETWORK_REDIRECT: Class = ("network_redirect", "redirection to a network socket (/dev/tcp, /dev/udp)", False)
SSH_WRITE: Class = ("ssh_write", "write to SSH keys or config (~/.ssh)", False)
SHELL_RC_WRITE: Class = ("shell_rc_write", "write to a shell startup file (~/.bashrc, ~/.zshrc, ~/.profile...)", False)
HERMES_CONFIG_WRITE: Class = ("hermes_config_write", "write to Hermes config or secrets (~/.hermes/config.yaml, .env)", False)
HERMES_STATE_WRITE: Class = ("hermes_state_write", "write into the Hermes home (memory, skills, SOUL.md, cron, plugins: what "
                             "future sessions read)", False)
ENV_FILE_WRITE: Class = ("env_file_write", "write to a .env secrets file", False)
CREDENTIAL_WRITE: Class = ("credential_write", "write to a credential file (~/.aws, ~/.netrc, ~/.gnupg...)", False)
HISTORY_WIPE: Class = ("history_wipe", "erase shell history", False)
GIT_HOOK_WRITE: Class = ("git_hooks", "write a git hook or .git/config (runs code on later git commands)", False)
CREDENTIAL_READ: Class = ("credential_read", "read credentials (~/.ssh keys, ~/.aws, ~/.kube, .netrc, Hermes .env...)", False)
SYSRQ: Class = ("shutdown", "crash or reboot the kernel via /proc/sysrq-trigger", True)
AUTOSTART_WRITE: Class = ("autostart_write", "write a file that runs at login, boot or interpreter start (autostart, "
                          "user systemd units, .pth, sitecustomize, a common command's name in ~/bin or ~/.local/bin)", False)
_AUTOSTART = lazy(r"(?:^|/)(?:\.config/(?:autostart|autostart-scripts|plasma-workspace/(?:env|shutdown)|systemd/user|environment\.d)(?:/|\Z)|\.local/share/systemd(?:/|\Z)|\.config/upstart(?:/|\Z)"
                        r"|Library/LaunchAgents(?:/|\Z))|\A(?:~|/home/[^/]+|/root)/(?:\.local/)?bin/(?:sudo|su|git|ssh|scp|ls|cd|cat|python3?|pip3?"
                        r"|npm|npx|node|bash|sh|zsh|docker|curl|wget|passwd|gpg|kubectl|aws|make|hermes|env|which|ps|id|gh)\Z"
                        # code an interpreter runs at every start, launchers, where downloads go (editor and
                        # multiplexer settings are dotfiles people link in: not here)
                        r"|\A(?:~|/home/[^/]+|/root)/(?:\.pythonrc(?:\.py)?|\.pythonstartup|\.irbrc|\.pryrc|\.Rprofile|\.curlrc|\.wgetrc"
                        r"|\.ipython/profile_\w+/startup/[^/]+|\.local/share/applications/[^/]+\.desktop|\.config/direnv/direnvrc)\Z|(?:site|dist)-packages/(?:[^/]+\.pth|(?:site|user)customize\.py)\Z")
SYSTEM_WRITE: Class = ("system_file_write", "write to or delete a system path (/etc, /usr, /boot, /bin...)", False)


def norm_path(arg: str) -> str:
    """Fold `$HOME`, duplicate slashes, `..` and trailing `/`, `/*`, `/.` of an absolute or ~ path."""
    if not arg or arg[0] not in "/~$":
        return arg
    if arg.startswith("$"):
        if not (arg.startswith("$HOME") or arg.startswith("${HOME}")):
            return arg
        arg = "~" + arg[7 if arg.startswith("${HOME}") else 5:]
    while len(arg) > 1 and arg.endswith(("/*", "/.*", "/.", "/")):
        arg = arg[:-2] if arg.endswith(("/*", "/.")) else (arg[:-3] if arg.endswith("/.*") else arg[:-1])
    if arg.startswith("/") and ("//" in arg or "/." in arg):
        arg = posixpath.normpath(arg)
        if arg.startswith("//"):
            arg = arg[1:]
    return arg or "/"


_GLOB_CANDIDATES = (
    "~/.ssh/authorized_keys", "~/.ssh/config", "~/.ssh/id_rsa", "~/.ssh/id_ed25519", "~/.bashrc", "~/.zshrc", "~/.profile",
    "~/.bash_profile", "~/.bash_login", "~/.zprofile", "~/.bash_history", "~/.zsh_history", "~/.gitconfig",
    "~/.aws/credentials", "~/.netrc", "~/.git-credentials", "~/.gnupg/private-keys-v1.d", "~/.kube/config",
    "~/.hermes/config.yaml", "~/.hermes/.env", "/etc/hosts", "/etc/passwd", "/etc/shadow", "/etc/sudoers",
    "/etc/resolv.conf", "/etc/crontab", "/etc/fstab", "/etc/ld.so.preload", ".env", ".git/config", ".git/hooks/pre-commit")


def glob_hits(pattern: str) -> list[str]:
    """Sensitive paths a glob (`~/.[s]sh/authorized_keys`, `/e?c/hosts`, `~/.*rc`) would match, with bash's rule
    that `*`, `?` and `[...]` do not match a leading dot."""
    if not any(ch in pattern for ch in "*?[") or "**" in pattern:
        return []
    from fnmatch import fnmatchcase

    parts = pattern.split("/")
    out = []
    for cand in _GLOB_CANDIDATES:
        segs = cand.split("/")
        if len(segs) == len(parts) and all(
                fnmatchcase(c, g) and (g.startswith(".") or not c.startswith(".") or g == c) for c, g in zip(segs, parts, strict=True)):
            out.append(cand)
    return out


def classify_path(path: str, *, hermes_home: str | None = None) -> Class | None:
    """The sensitivity class of a path that is about to be written, or None for ordinary files."""
    p = norm_path(path.strip())
    if not p:
        return None
    hits = glob_hits(p)
    if hits:
        return next((c for c in (classify_path(h, hermes_home=hermes_home) for h in hits) if c), None)
    if p.startswith("/dev/"):
        if _SAFE_DEV.match(p):
            return None
        if _NET_DEV.match(p):
            return NETWORK_REDIRECT
        return RAW_DISK_WRITE if _RAW_DISK.match(p) else DEVICE_WRITE
    if not p.startswith(("/", "~")) and ("/.." in p or p.startswith("..")):
        p = posixpath.normpath(p)
    base = p.rsplit("/", 1)[-1]
    if "/.ssh/" in p or p.startswith(".ssh/") or p.endswith("/.ssh") or p == ".ssh":
        return SSH_WRITE
    if base in _HISTORY:
        return HISTORY_WIPE
    if _GIT_INTERNAL.search(p):
        return GIT_HOOK_WRITE
    if base in _SHELL_RC or "/.config/fish/" in p:
        return SHELL_RC_WRITE
    if hermes_home and (p == f"{hermes_home}/config.yaml" or p == f"{hermes_home}/.env"):
        return HERMES_CONFIG_WRITE
    if re.search(r"(?:^|/)\.hermes/(?:profiles/[^/]+/)?(?:config\.yaml|\.env)\Z", p):
        return HERMES_CONFIG_WRITE
    if re.search(r"(?:^|/)\.hermes/\S", p):
        return HERMES_STATE_WRITE
    if _ENV_FILE.match(base) and not _ENV_TEMPLATE.search(base):
        return ENV_FILE_WRITE
    if _CREDENTIAL.search(p):
        return CREDENTIAL_WRITE
    if _AUTOSTART.search(p):
        return AUTOSTART_WRITE
    if p == "/proc/sysrq-trigger":
        return SYSRQ
    if _SYSTEM.match(p):
        return SYSTEM_WRITE
    return None


_PROTECTED = lazy(
    r"(?P<root>/)\Z|(?P<system>/(?:etc|usr|bin|sbin|boot|lib|lib32|lib64|libx32|var|home|root|opt|srv|dev|proc|sys|snap|run"
    r"|mnt|media|System|Library|Applications|Users|private|usr/(?:bin|sbin|lib|lib64|local|share|include)|var/lib))\Z"
    r"|(?P<home>~[\w.-]*|/home/[^/]+|/Users/[^/]+)\Z")


def protected_dir(path: str) -> str | None:
    """"root", "system" or "home" when deleting `path` recursively would destroy the machine or a home."""
    m = _PROTECTED.match(norm_path(path))
    return m.lastgroup if m else None


def classify_read(path: str) -> Class | None:
    """CREDENTIAL_READ when reading `path` would hand secrets to the model (private keys, cloud credentials)."""
    p = norm_path(path.strip())
    if not p or ("/" not in p and p not in (".netrc", ".git-credentials", ".pgpass", ".ssh", ".aws", ".gnupg")):
        return None
    if any(classify_read(h) for h in glob_hits(p)):
        return CREDENTIAL_READ
    return CREDENTIAL_READ if _SECRET.search(p) else None


_SECRET_NAME_FILE = lazy(
    r"\A(?:\.env(?:\.[\w.-]+)?|\.envrc|id_(?:rsa|dsa|ecdsa|ed25519)\w*|[\w.-]+\.(?:pem|key|p12|pfx|kdbx|keystore|jks|ppk)"
    r"|(?:[\w-]+[._-])?(?:credentials?|secrets?|tokens?|creds|passwords?)(?:\.(?:json|ya?ml|txt|ini|toml|cfg|conf|env|csv|xml|properties|enc|gpg|asc))?|\.netrc|\.npmrc|\.pypirc|\.pgpass"
    r"|\.git-credentials|\.my\.cnf|auth\.json|service[-_]?account[\w.-]*\.json|[\w.-]*_token)\Z", re.I)


def secret_file(path: str) -> bool:
    """A file whose contents are secrets by its name (.env, id_rsa, *.pem, credentials.json, .npmrc, tokens...)
    or its place (classify_read); templates and backups of .env (.env.example, .env.bak) are not."""
    p = norm_path(path.strip())
    if not p or len(p) > 300 or any(c.isspace() for c in p):
        return False
    base = p.rstrip("/").rsplit("/", 1)[-1]
    if base.startswith(".env") and _ENV_TEMPLATE.search(base):
        return False
    return bool(_SECRET_NAME_FILE.match(base)) or classify_read(p) is not None


def disposable(path: str) -> bool:
    """True for build outputs and caches that a build recreates (node_modules, dist, __pycache__...)."""
    p = path.rstrip("/")
    if p.startswith("/") and p.count("/") < 2 or protected_dir(p):
        return False
    base = p.rsplit("/", 1)[-1]
    if base in _DISPOSABLE or _DISPOSABLE_GLOB.search(base):
        return True
    parts = p.split("/")  # inside a cache or build output (~/.cache/pip, node_modules/.cache): recreated on demand too
    return ".." not in parts and not any(ch in p for ch in "*?[") and any(d in _DISPOSABLE for d in parts[1:-1])
