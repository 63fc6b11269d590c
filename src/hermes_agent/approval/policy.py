"""The path policy (layer 2, pure apart from resolving symlinks): for a path, may a tool or a
contained command read it, write it, and if not, why. One table for the file tools, the approval
gate and the OS sandbox; it never asks anyone and never touches a file."""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Iterable, Mapping
from dataclasses import asdict, dataclass
from fnmatch import fnmatchcase
from typing import Literal

from hermes_agent import paths
from hermes_agent.paths import is_under as _under

Access = Literal["allow", "ask", "deny"]

# Never readable (relative to the user's home unless absolute). Globs allowed.
SECRET_PATHS: tuple[str, ...] = (
    ".ssh", ".gnupg", ".aws", ".azure", ".config/gcloud", ".config/gh", ".kube", ".docker/config.json",
    ".netrc", ".git-credentials", ".pgpass", ".pypirc", ".npmrc", ".password-store", ".local/share/keyrings",
    ".config/hub", ".terraform.d/credentials.tfrc.json", ".vault-token", ".npm/_logs",
    "/etc/shadow", "/etc/gshadow", "/etc/shadow-", "/etc/gshadow-", "/etc/sudoers", "/etc/sudoers.d",
    "/etc/ssh/ssh_host_*_key", "/root/.ssh", "/proc/*/environ", "/proc/*/task/*/environ",
)
# Default-deny inside HOME: nothing of the user's home is readable unless it is (or lies under) a workspace or one
# of these locations, which hold tools and settings rather than credentials (when the workspace is HOME itself,
# its dot-entries but these stay hidden). Extend with sandbox.readable_paths. Shell start-up files are not here: `export TOKEN=...` in ~/.bashrc is common.
# ~/.cache is not readable whole (huggingface/token, editors' auth.json, stored_tokens live there, a48): only the
# caches of tools, and of ~/.npm not the `_logs` (request headers with tokens).
CACHE_TOOLS: tuple[str, ...] = tuple(".cache/" + n for n in (
    "pip", "uv", "pypoetry", "pipenv", "pre-commit", "go-build", "yarn", "pnpm", "node-gyp", "ms-playwright",
    "puppeteer", "electron", "deno", "bazel", "ccache", "sccache", "matplotlib", "fontconfig", "mesa_shader_cache",
    "torch", "huggingface/hub", "huggingface/datasets", "typescript", "black", "ruff", "mypy", "jedi", "pylint",
    "selenium", "Cypress", "composer", "coursier", "JetBrains"))
# HOME is default-deny (issue 19, rt7 a17/a25/a26): besides the workspaces, their enclosing repository, the writable
# and readable paths and the PATH directories inside HOME, only these toolchain locations are readable — programs,
# libraries and package caches a command needs, never a tool's settings or credentials (~/.cargo/credentials.toml,
# ~/.m2/settings.xml, ~/.gradle/gradle.properties, ~/.local/share's keyrings and histories stay hidden).
HOME_TOOLS: tuple[str, ...] = (*CACHE_TOOLS, ".local/bin", ".local/lib", ".local/share/pipx", ".local/share/uv",
                               ".local/share/pnpm", ".local/share/virtualenvs", ".npm/_cacache", ".npm/_npx",
                               ".cargo/bin", ".cargo/registry", ".cargo/git", ".rustup", ".pyenv", ".nvm",
                               ".volta", ".bun/bin", ".deno/bin", "go/bin", "go/pkg/mod", ".m2/repository",
                               ".gradle/caches", ".gradle/wrapper", ".sdkman/candidates")
HOME_READABLE: tuple[str, ...] = (*HOME_TOOLS, ".gitconfig", ".config/git/config")
# Other users' homes (every home in /etc/passwd of uid 0 or >= 1000 but the user's own, /root when HOME is
# not /root) are hidden, except their HOME_TOOLS (a root session with HOME elsewhere still runs pyenv's python).
# Readable inside the Hermes home root (everything else there — every profile's .env, auth.json, config,
# state.db, pairing, sessions, memories — is hidden from commands): the active profile's skills (not their
# dot-entries: skills/deploy/.env, .hub, a45) and the credential-free git config copies; pages fetched, browser
# screenshots and profiles, indexes and other programs' scratch stay hidden (a35).
HERMES_READABLE: tuple[str, ...] = ("skills", "cache/sandbox")
# Media hermes keeps for a session (files users sent in a chat, generated images and speech) live in per-scope
# folders, `cache/<kind>/<scope>` (paths.media_cache): a session reads only its own scope's (a35: another chat's
# session or a cron job never sees them). `image_cache` / `audio_cache` are Hermes's older names.
MEDIA_DIRS: tuple[str, ...] = ("cache/documents", "cache/images", "cache/audio", "image_cache", "audio_cache")
# Dot-entries inside the skills folder, at any depth the globs reach (a skill's own .env, the hub's .hub/).
SKILL_DOT_ENTRIES: tuple[str, ...] = tuple("skills/" + "*/" * n + ".*" for n in range(5))
# With sandbox.hide_home (a team member's sessions, a08): HOME is hidden whole like another user's home, but
# for the workspace, the writable and readable paths and HOME_TOOLS; the Hermes home as above (its media: the
# session's own scope only, which for a member is their own chat's).
# Files under HERMES_HOME that hold secrets.
HERMES_SECRETS: tuple[str, ...] = (".env", "auth.json", "auth.lock", "config.yaml",  # config may hold model.api_key
                                   ".parsed-config.json",  # config/loader.py's parsed copy of config.yaml
                                   ".banner-cache")  # cli/fast_prompt.py: what the next prompt shows before settings load
# Never writable by a command or a file tool without the user's approval, even inside the workspace.
SHELL_STARTUP: tuple[str, ...] = (
    ".bashrc", ".bash_profile", ".bash_login", ".bash_logout", ".profile", ".zshrc", ".zprofile", ".zshenv",
    ".zlogin", ".zlogout", ".kshrc", ".cshrc", ".tcshrc", ".mkshrc", ".inputrc", ".bash_aliases",
    ".config/fish", ".config/autostart", ".config/systemd", ".config/environment.d", ".xprofile", ".xsession",
    ".pam_environment", ".gitconfig", ".config/git", ".local/share/systemd",
)
SYSTEM_PROTECTED: tuple[str, ...] = (
    "/etc", "/boot", "/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/opt", "/var/spool/cron",
    "/var/lib", "/root/.ssh", "/sys", "/proc",
)
# Inside a writable root, these still need approval: they make git (or direnv) run code later.
WORKSPACE_ASK: tuple[str, ...] = (".git/hooks", ".git/config", ".envrc")
# Writable by default besides the workspace: scratch space and package caches.
SHARED_TMP: tuple[str, ...] = ("/tmp", "/var/tmp", "/dev/shm")
DEVICES_WRITABLE: tuple[str, ...] = ("/dev/null", "/dev/zero", "/dev/full", "/dev/tty", "/dev/ptmx", "/dev/pts")


@dataclass(frozen=True, slots=True)
class Verdict:
    """`access` is allow, ask (needs the user's approval) or deny; `key` is a stable approval key."""

    access: Access
    path: str
    reason: str = ""
    key: str = ""

    @property
    def allowed(self) -> bool:
        return self.access == "allow"


def resolve(path: str, cwd: str | None = None, home: str | None = None, memo: dict[str, str] | None = None) -> str:
    """Absolute path with `~` expanded and every symlink and `..` resolved (missing tails kept). `memo` shares
    the resolved parents between the calls of one policy build (see `_realpath`)."""
    raw = str(path)
    if raw == "~" or raw.startswith("~/"):
        raw = (home or os.path.expanduser("~")) + raw[1:]
    if not os.path.isabs(raw):
        raw = os.path.join(cwd or os.getcwd(), raw)
    return os.path.realpath(raw) if memo is None else _realpath(raw, memo)


def _realpath(path: str, memo: dict[str, str]) -> str:
    """os.path.realpath of an absolute path, each parent resolved once per `memo`: a policy build resolves ~250
    paths that share a few parents (HOME, other users' homes; ~10 ms of every start as separate calls)."""
    hit = memo.get(path)
    if hit is not None:
        return hit
    parent, name = os.path.split(path)
    if not name or name in (".", "..") or parent == path or "/./" in path or "/../" in path or "//" in path:
        out = os.path.realpath(path)  # the root, or a path realpath must normalise itself
    else:
        joined = os.path.join(_realpath(parent, memo), name)
        out = os.path.realpath(joined) if os.path.islink(joined) else joined
    memo[path] = out
    return out


def _scope_ok(scope: str) -> bool:
    """A media scope is a plain folder name (paths.media_scope_of): lowercase ASCII letters, digits, '-'."""
    return 0 < len(scope) <= 64 and scope[0].isalpha() and all(c in "abcdefghijklmnopqrstuvwxyz0123456789-" for c in scope)


def _match(path: str, entries: Iterable[str]) -> str | None:
    """The first entry (a resolved path or a glob) that is `path` or one of its ancestors."""
    for entry in entries:
        if any(ch in entry for ch in "*?["):
            parts = path.split("/")
            if any(fnmatchcase("/".join(parts[:n]), entry) for n in range(2, len(parts) + 1)):
                return entry
        elif _under(path, entry):
            return entry
    return None


@dataclass(frozen=True, slots=True)
class PathPolicy:
    """Resolved roots and tables. Build it with `PathPolicy.build`; every check resolves first."""

    home: str
    hermes_home: str
    workspace: tuple[str, ...]
    writable: tuple[str, ...]
    secrets: tuple[str, ...]
    protected: tuple[str, ...]
    readable_grants: tuple[str, ...] = ()
    mode: str = "workspace-write"
    # Default-deny: the Hermes home roots (hidden whole) and the locations readable inside them and inside
    # HOME's dot-entries (resolved; see `default_denied`).
    hermes_roots: tuple[str, ...] = ()
    readable: tuple[str, ...] = ()
    foreign_homes: tuple[str, ...] = ()  # other users' homes (and /root): hidden but for their HOME_TOOLS
    # HOME itself is one of `foreign_homes` unless a workspace (or a grant) holds it: then `home_closed`, and
    # `home_links` are the allowlist's names in HOME that are symlinks, (name, resolved): bwrap recreates them
    home_links: tuple[tuple[str, str], ...] = ()
    tool_trees: tuple[str, ...] = ()  # HOME_TOOLS of HOME and other homes: their settings files hidden (toolsecrets)
    git_settings: tuple[str, ...] = ()  # global git configs: commands see a credential-free copy, file tools nothing

    @property
    def home_closed(self) -> bool:
        """HOME is default-deny: only the allowlist inside it is readable (`readable`)."""
        return self.home in self.foreign_homes

    @classmethod
    def build(cls, *, workspace: Iterable[str], hermes_home: str, home: str | None = None,
              temp_dirs: Iterable[str] = (), config: Mapping | None = None, media_scope: str = "") -> PathPolicy:
        """The policy for a session; `config` is the `sandbox:` section (writable_paths, readable_paths,
        deny_read, protected_paths, shared_tmp, mode); `media_scope` the session's media folder name (its chat's:
        paths.media_scope_of), the only one of MEDIA_DIRS it may read."""
        cfg = dict(config or {})
        memo: dict[str, str] = {}
        home = os.path.realpath(home or os.path.expanduser("~"))
        hh = os.path.realpath(os.path.expanduser(str(hermes_home)))

        def norm(items: Iterable[str]) -> tuple[str, ...]:
            out = []
            for item in items:
                item = str(item).strip()
                if not item:
                    continue
                if any(ch in item for ch in "*?["):
                    out.append(item if item.startswith("/") else os.path.join(home, item.removeprefix("~/")))
                else:
                    out.append(resolve(item if item.startswith(("/", "~")) else "~/" + item, home, home, memo))
            return tuple(dict.fromkeys(out))

        ws = tuple(dict.fromkeys(resolve(w, home=home) for w in workspace))
        grants = [resolve(str(p), ws[0] if ws else None, home) for p in _as_list(cfg.get("writable_paths"))]
        # No package cache in HOME is writable (~/.cache/pre-commit, ~/.npm/_npx hold code that runs later):
        # confined commands get their caches in the session's own temp directory (sandbox/envallow.py).
        scratch = SHARED_TMP if cfg.get("shared_tmp", True) else ()
        from hermes_agent.approval.linkedgit import outside_gitdir

        linked = [outside_gitdir(w) for w in ws]  # a linked worktree's or a submodule's git directory
        writable = ws + norm(scratch) + tuple(os.path.realpath(t) for t in temp_dirs) + tuple(grants) + tuple(
            p for _, w in linked for p in w)
        secrets = norm((*SECRET_PATHS, *_as_list(cfg.get("deny_read")))) + tuple(
            os.path.join(hh, name) for name in (*HERMES_SECRETS, *SKILL_DOT_ENTRIES))
        media = tuple(os.path.join(hh, d, media_scope) for d in MEDIA_DIRS) if _scope_ok(media_scope) else ()
        # hermes's own code and the Python it runs on (red-team round 6 a16: hermes installed in the project's
        # .venv; a .pth or a changed module there ran in the next unconfined `hermes`): read-only wherever it lies
        protected = norm((*SHELL_STARTUP, *SYSTEM_PROTECTED, *_as_list(cfg.get("protected_paths")))) + (hh, *code_dirs())
        readable = tuple(resolve(str(p), ws[0] if ws else None, home) for p in _as_list(cfg.get("readable_paths")))
        mode = str(cfg.get("mode") or "workspace-write").strip().lower()
        xdg = xdg_private_dirs(home, ws)
        roots = tuple(dict.fromkeys((hermes_root_of(hh), os.path.join(home, ".hermes"), *xdg)))
        scoped = bool(cfg.get("hide_home"))
        opened = any(_under(home, p) for p in (*ws, *grants, *readable))  # the workspace is HOME, or holds it
        foreign = foreign_homes(home) if opened and not scoped else (*foreign_homes(home), home)
        xdg_cache = os.path.realpath(os.path.expanduser(os.environ.get("XDG_CACHE_HOME", "") or "~/.cache"))
        settings_files = () if scoped else (*norm(HOME_READABLE[len(HOME_TOOLS):]),
                                            *(os.path.join(x, "git", "config") for x in xdg))
        tools = (*norm(HOME_TOOLS), *(os.path.join(xdg_cache, c.removeprefix(".cache/")) for c in CACHE_TOOLS
                                      if xdg_cache in xdg), *(_realpath(os.path.join(f, t), memo) for f in foreign
                                                              for t in HOME_TOOLS))
        allow = (*tools, *settings_files,
                 *(os.path.join(hh, n) for n in HERMES_READABLE), *media, *readable, *ws, *enclosing_repos(ws, home),
                 *(p for r, _ in linked for p in r),
                 *(w for w in writable if w not in norm(SHARED_TMP)), *code_dirs(), *_home_path_dirs(home))
        allow = tuple(dict.fromkeys(allow))
        names = () if scoped else HOME_READABLE
        links = tuple((n, r) for n, r in ((os.path.join(home, rel), resolve("~/" + rel, home, home, memo))
                                          for rel in names) if n != r and os.path.lexists(n))
        return cls(home, hh, ws, tuple(dict.fromkeys(writable)), secrets + _linked_dots(home, allow, ws), protected,
                   readable, mode, roots, allow, foreign, links, tuple(dict.fromkeys(tools)), tuple(settings_files))

    def default_denied(self, real: str) -> str | None:
        """The hidden root that covers resolved `real` by default (a Hermes home root, or a dot-entry of
        HOME), unless `real` lies under a readable location deeper than that root; else None."""
        for root in self.hermes_roots:
            if _under(real, root) and not self._readable_below(real, root):
                return root
        if real != self.home and _under(real, self.home):  # an open HOME (the workspace): its dot-entries
            first = real[len(self.home.rstrip("/")) + 1:].split("/", 1)[0]
            if (first.startswith(".") or paths.hermes_secret_copy(first)) and not self._readable_below(real, self.home):
                return os.path.join(self.home, first)
        for root in self.foreign_homes:  # HOME itself is one with sandbox.hide_home
            if root != self.home and _under(real, self.home):
                continue
            if _under(real, root) and not self._readable_below(real, root):
                return root
        return None

    def _readable_below(self, real: str, root: str) -> bool:
        return any(_under(real, a) for a in self.readable if a != root and _under(a, root))

    def check_read(self, path: str, cwd: str | None = None) -> Verdict:
        """May a tool or command read `path`? Secrets are denied unless the user granted them."""
        real = resolve(path, cwd, self.home)
        hit = _match(real, self.secrets)
        if hit and not _match(real, self.readable_grants):
            return Verdict("deny", real, f"{real} holds credentials or secrets ({_show(hit, self.home)}); the "
                                         "user can allow it with sandbox.readable_paths in config.yaml", "secret_read")
        hidden = self.default_denied(real)
        if hidden:
            what = "the Hermes home (keys, config, sessions of every profile)" if hidden in self.hermes_roots[:2] else \
                f"{_show(hidden, self.home)}: your XDG config/data/state directory" if hidden in self.hermes_roots else \
                f"{hidden}: your home, readable only in the workspace and the tool directories" if hidden == self.home else \
                f"{hidden}: another user's home" if hidden in self.foreign_homes else \
                f"{_show(hidden, self.home)}: another project's repository" if os.path.lexists(os.path.join(hidden, ".git")) else \
                f"{_show(hidden, self.home)}: dot-files in your home are private unless listed as readable"
            return Verdict("deny", real, f"{real} is private ({what}); the user can allow it with "
                                         "sandbox.readable_paths in config.yaml", "secret_read")
        granted = _match(real, self.readable_grants)
        own = any(_under(real, w) and not _under(self.home, w) for w in self.workspace)  # a dotfiles repository
        if real in self.git_settings and not (granted or own):  # rt15 d04: the original holds what the copy drops
            return Verdict("deny", real, f"{real} is private to the file tools (a global git config can hold tokens "
                                         "and credential helpers; commands see a copy without them: `git config "
                                         "--global --list`); the user can allow it with sandbox.readable_paths in "
                                         "config.yaml", "secret_read")
        tree = None if granted else next((t for t in self.tool_trees if real != t and _under(real, t)), None)
        if tree and _tool_secret(real, tree):
            return Verdict("deny", real, f"{real} is private (a tool's settings or credentials inside "
                                         f"{_show(tree, self.home)}); the user can allow it with "
                                         "sandbox.readable_paths in config.yaml", "secret_read")
        return Verdict("allow", real)

    def check_write(self, path: str, cwd: str | None = None) -> Verdict:
        """May a tool or command write `path`? allow inside the writable roots, ask elsewhere."""
        real = resolve(path, cwd, self.home)
        if real.startswith("/dev/"):
            if _match(real, DEVICES_WRITABLE):
                return Verdict("allow", real)
            return Verdict("ask", real, f"{real} is a device file", "device_write")
        secret = self.check_read(real)
        if not secret.allowed and self.home_closed and _match(real, self.secrets) is None \
                and self.default_denied(real) == self.home:
            secret = Verdict("allow", real)  # a plain place of the closed HOME: judged as outside the workspace
        hit = _match(real, self.protected)
        if not secret.allowed and not (hit and hit != self.hermes_home):  # a hidden rc file is still "protected"
            return Verdict("ask", real, secret.reason.split(";")[0], "secret_write")
        if hit and not self._granted(real, hit):
            what = "the Hermes home (config, secrets, skills, memories)" if hit == self.hermes_home else \
                _show(hit, self.home)
            return Verdict("ask", real, f"{real} is protected: {what} runs or configures code later", "protected_write")
        if self.mode == "read-only":
            return Verdict("ask", real, "sandbox.mode is read-only", "read_only")
        root = _match(real, self.writable)
        if root is not None and _under(self.home, root) and real != self.home and _under(real, self.home):
            first = real[len(self.home.rstrip("/")) + 1:].split("/", 1)[0]
            if root not in self.workspace or first.startswith("."):  # HOME under /tmp, or HOME as workspace
                return Verdict("ask", real, f"{real} is in your home directory outside the workspace, or one "
                                            "of its dot-files (settings and start-up files)", "protected_write")
        if root is None:
            return Verdict("ask", real, f"{real} is outside the workspace ({', '.join(self.workspace)}) and the "
                                        "writable paths (sandbox.writable_paths)", "outside_workspace")
        rel = real[len(root):].lstrip("/")
        if any(rel == a or rel.startswith(a + "/") or f"/{a}" in f"/{rel}" for a in WORKSPACE_ASK):
            return Verdict("ask", real, f"{real} makes git or direnv run code later", "git_hooks")
        return Verdict("allow", real)

    def _granted(self, real: str, protected_hit: str) -> bool:
        """A user grant deeper than the protected entry wins (e.g. a project under /opt)."""
        grant = _match(real, self.writable)
        return grant is not None and len(grant) > len(protected_hit)


class PendingPolicy:
    """A session's PathPolicy, built once: on first demand, or on a background thread started while the first
    model call is out (`start`; issue 24: the ~5 ms build left the start-up path). `get()` returns the policy,
    waiting for a build under way: whatever judges a command, a write or a sandbox gets the whole policy or
    the build's error, never nothing (issue 19)."""

    def __init__(self, build: Callable[[], PathPolicy], ready: PathPolicy | None = None) -> None:
        self._build = build
        self._policy = ready
        self._lock = threading.Lock()
        self._started = ready is not None

    @classmethod
    def of(cls, policy: PathPolicy) -> PendingPolicy:
        return cls(lambda: policy, policy)

    def get(self) -> PathPolicy:
        policy = self._policy
        if policy is None:
            with self._lock:
                if self._policy is None:
                    self._policy = self._build()
                policy = self._policy
        return policy

    def start(self, **_: object) -> None:
        """Build on a daemon thread (once; a pre_llm_call hook). A failed build is left to the next `get()`,
        which builds again in its caller and raises there."""
        if self._started:
            return
        self._started = True
        from hermes_agent import background

        background.start(self._build_quietly)  # (threading.Thread.start waits for the thread to run: ms under load)

    def _build_quietly(self) -> None:
        try:
            self.get()
        except Exception:  # noqa: BLE001 - reported by the get() that needs the policy
            pass


def policy_for_settings(settings: object, workspace: str | None = None, media_scope: str = "") -> PathPolicy:
    """The session's policy from Settings: workspace = `workspace`, else terminal.cwd (default: the cwd). A
    terminal.cwd too broad to be a workspace (`/`, HOME: as Hermes's `config set terminal.cwd ~` writes it) is
    where commands start, not a grant: the workspace is then the directory hermes started in (rt12 a37)."""
    root = workspace or paths.work_root(settings.cfg.terminal.cwd, str(settings.home),
                                        "terminal.cwd" in getattr(settings, "chosen", ()))
    sandbox = asdict(settings.cfg.sandbox)
    # the user's own skill folders (skills.external_dirs) are read like the Hermes home's skills: skill_view,
    # and a command running a skill's script
    skills = getattr(getattr(settings.cfg, "skills", None), "external_dirs", None) or []
    sandbox["readable_paths"] = [*_as_list(sandbox.get("readable_paths")), *map(str, _as_list(skills))]
    return PathPolicy.build(workspace=[root], hermes_home=str(settings.home), config=sandbox,
                            media_scope=media_scope)


def _linked_dots(home: str, allow: Iterable[str], workspace: Iterable[str]) -> tuple[str, ...]:
    """Targets of HOME's symlinked dot-entries (~/.aws -> ~/dotfiles/aws) that are not readable: hidden
    like the entry itself, since every check resolves the link first."""
    try:
        names = [n for n in os.listdir(home) if n.startswith(".")]
    except OSError:
        return ()
    keep = (*allow, *workspace)
    out = []
    for name in names:
        link = os.path.join(home, name)
        if not os.path.islink(link):
            continue
        target = os.path.realpath(link)
        if target != home and _under(target, home) and not any(_under(target, a) or _under(a, target) for a in keep):
            out.append(target)
    return tuple(out)


_NOT_HOMES = ("/", "/nonexistent", "/dev/null", "/bin", "/sbin", "/usr", "/var", "/run", "/tmp", "/etc", "/proc")


def _home_path_dirs(home: str) -> tuple[str, ...]:
    """PATH's directories (resolved) inside HOME, not HOME itself: the user's own programs (~/bin, ~/go/bin)
    stay runnable; a PATH entry of HOME would open all of it."""
    out = (os.path.realpath(p) for p in paths.user_path().split(os.pathsep) if os.path.isabs(p))
    return tuple(p for p in out if p != home and _under(p, home))


def enclosing_repos(workspaces: Iterable[str], home: str) -> tuple[str, ...]:
    """For a workspace below HOME's top level inside a bigger repository (~/mono/svc), that repository's top
    (~/mono: git needs its .git, the workspace its README): the nearest directory above holding `.git`."""
    out = []
    for ws in workspaces:
        if not _under(ws, home):
            continue
        parent = os.path.dirname(ws)
        while parent != home and _under(parent, home):
            if os.path.lexists(os.path.join(parent, ".git")):
                out.append(parent)
                break
            parent = os.path.dirname(parent)
    return tuple(out)


def foreign_homes(home: str) -> tuple[str, ...]:
    """Existing home directories of other users (uid 0 or >= 1000 in the passwd database, not nobody)
    and /root, minus `home` itself. A home that holds `home` (root's HOME moved below /root) is hidden
    except the path down to it (see terminal/sandbox/views.hidden_paths)."""
    import pwd

    try:
        entries = [(e.pw_uid, e.pw_dir) for e in pwd.getpwall()]
    except OSError:
        entries = []
    out = []
    for uid, d in [*entries, (0, "/root")]:
        if (uid != 0 and not 1000 <= uid < 65534) or not d or not os.path.isabs(d):
            continue
        real = os.path.realpath(d)
        if real in _NOT_HOMES or _under(real, home) or not os.path.isdir(real):
            continue
        out.append(real)
    return tuple(dict.fromkeys(out))


XDG_PRIVATE = ("XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_STATE_HOME", "XDG_CACHE_HOME")


def xdg_private_dirs(home: str, workspaces: Iterable[str] = ()) -> tuple[str, ...]:
    """Where the user's XDG config/data/state/cache directories really are when moved off their dot-names
    (XDG_CONFIG_HOME=~/cfg, a16): hidden like a dot-directory wherever they point (the cache but for the
    tool caches of CACHE_TOOLS). Not HOME itself, a system
    directory, nor a directory holding (or inside) a workspace."""
    out = []
    for name in XDG_PRIVATE:
        value = os.environ.get(name, "").strip()
        if not value or not os.path.isabs(os.path.expanduser(value)):
            continue
        real = os.path.realpath(os.path.expanduser(value))
        if real in _NOT_HOMES or real == home or _under(home, real) or not os.path.isdir(real):
            continue
        if any(_under(w, real) or _under(real, w) for w in workspaces):
            continue
        out.append(real)
    return tuple(dict.fromkeys(out))


def hermes_root_of(hermes_home: str) -> str:
    """The directory holding every profile: HERMES_HOME minus a trailing profiles/<name>."""
    parent = os.path.dirname(hermes_home)
    return os.path.dirname(parent) if os.path.basename(parent) == "profiles" else hermes_home


def code_dirs() -> tuple[str, ...]:
    """Where hermes and its Python run from (readable even inside a hidden root: code, not credentials)."""
    import sys

    here = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    return tuple(dict.fromkeys(os.path.realpath(p) for p in (here, sys.prefix, sys.base_prefix) if p))


def _tool_secret(real: str, tree: str) -> bool:
    """Is `real`, inside tool tree `tree`, a tool's settings or credentials (approval/toolsecrets.py)?"""
    from hermes_agent.approval.toolsecrets import secret_below  # only for a path in a tool folder

    return secret_below(real, (tree,)) is not None


def _as_list(value: object) -> list:
    if value is None:
        return []
    return [value] if isinstance(value, str) else list(value) if isinstance(value, list | tuple) else []


def _show(path: str, home: str) -> str:
    return "~" + path[len(home):] if _under(path, home) and path != home else path
