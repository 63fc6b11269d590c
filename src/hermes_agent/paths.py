"""Every on-disk location under HERMES_HOME, and the PATH directories hermes may take its own programs from.
Functions only: nothing is created at import."""

from __future__ import annotations

import os
from pathlib import Path

# The directory holding the hermes_agent package (put first on sys.path of hermes's own helper processes)
SRC_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PROFILE_NAME = r"[a-z0-9][a-z0-9_-]{0,63}"
# Directories that hold dependencies, environments, caches and build output, not what a user writes by hand: the
# sandbox guard's per-command watch does not descend them (terminal/sandbox/views.py) and the dirty guard never
# keeps copies from them (storage/handkept.py). Version-control internals too.
GENERATED_DIRS = frozenset({"node_modules", ".venv", "venv", "__pycache__", ".tox", ".nox", ".mypy_cache",
                            ".pytest_cache", ".ruff_cache", "target", "dist", "build", ".cache", "site-packages",
                            ".git", ".hg", ".svn"})


def hermes_home() -> Path:
    """$HERMES_HOME, else the sticky profile of ~/.hermes/active_profile, else ~/.hermes (not created here)."""
    raw = os.environ.get("HERMES_HOME", "").strip()
    if raw:
        return Path(raw).expanduser()
    root = Path.home() / ".hermes"
    try:
        name = (root / "active_profile").read_text(encoding="utf-8").strip()
    except OSError:
        return root
    if name and name != "default" and (root / "profiles" / name).is_dir():
        return root / "profiles" / name
    return root


def hermes_root() -> Path:
    """The directory that holds every profile: ~/.hermes, or $HERMES_HOME (minus profiles/<name>)."""
    raw = os.environ.get("HERMES_HOME", "").strip()
    if not raw:
        return Path.home() / ".hermes"
    home = Path(raw).expanduser()
    return profile_root(home) or home


def profile_root(home: Path) -> Path | None:
    """The root a profile home (<root>/profiles/<name>) belongs to; None for a home that is no profile."""
    return home.parent.parent if home.parent.name == "profiles" else None


def auth_files(home: Path) -> list[Path]:
    """The credential stores (auth.json) a run in `home` reads and that exist: its own, then its profile root's."""
    root = profile_root(home)
    return [f for f in (home / "auth.json", root / "auth.json" if root else None) if f is not None and f.exists()]


def ensure_home() -> Path:
    """Create HERMES_HOME (mode 0700) if missing and return it."""
    home = hermes_home()
    home.mkdir(parents=True, exist_ok=True, mode=0o700)
    return home


def config_path() -> Path:
    return hermes_home() / "config.yaml"


def env_path() -> Path:
    return hermes_home() / ".env"


def state_db_path() -> Path:
    return hermes_home() / "state.db"


def memories_dir() -> Path:
    return hermes_home() / "memories"


def skills_dir() -> Path:
    return hermes_home() / "skills"


def plugins_dir() -> Path:
    return hermes_home() / "plugins"


def checkpoints_dir() -> Path:
    return hermes_home() / "checkpoints"


def logs_dir() -> Path:
    return hermes_home() / "logs"


def cron_dir() -> Path:
    return hermes_home() / "cron"


def gateway_dir() -> Path:
    return hermes_home() / "gateway"


def gateway_state_path() -> Path:
    """What a running gateway reports (pid, platforms, sessions) for `gateway status` and the dashboard."""
    return gateway_dir() / "gateway_state.json"


def soul_path() -> Path:
    return hermes_home() / "SOUL.md"


def backups_dir() -> Path:
    """Where `hermes backup` writes by default: inside the Hermes home (hidden from confined work like the
    keys it copies), where Hermes keeps its own pre-update backups."""
    return hermes_home() / "backups"


def hermes_secret_copy(name: str) -> bool:
    """A file name Hermes (0.19's `hermes backup` default, ~/hermes-backup-<ts>.zip) gives a copy of the
    Hermes home, keys included, when it writes one into HOME: hidden from confined work by what it is."""
    return name.startswith("hermes-backup-") and name.lower().endswith(".zip")


def install_hint(extra: str) -> str:
    """The command that adds an optional extra to THIS installation (the index's `hermes-agent` is upstream)."""
    import json
    import sys
    from importlib import metadata
    from urllib.parse import unquote, urlparse

    try:
        info = json.loads(metadata.distribution("hermes-agent").read_text("direct_url.json") or "{}")
    except (metadata.PackageNotFoundError, ValueError):
        info = {}
    url = str(info.get("url", ""))
    if not url.startswith("file://"):
        return f"reinstall hermes-agent from its source checkout with the [{extra}] extra"
    editable = "-e " if (info.get("dir_info") or {}).get("editable") else ""
    return f"{sys.executable} -P -m pip install {editable}'{unquote(urlparse(url).path)}[{extra}]'"


def python_module(module: str, *args: str) -> list[str]:
    """The argv that runs `python -m module args` with this interpreter, never importing from its working
    directory (`-P`): hermes starts its own helpers from wherever the user (or a workspace) is, and a `yaml.py`,
    `dotenv.py` or `pip/` there must not run unconfined."""
    import sys

    return [sys.executable, "-P", "-m", module, *args]


def media_cache(kind: str, scope: str = "local") -> Path:
    """Where media of a session's scope go: cache/<kind>/<scope> (kind: documents, images, audio), or under the
    legacy image_cache / audio_cache directory when a Hermes home already has one. A session's sandbox reads only
    its own scope (approval/policy.py MEDIA_DIRS): a chat's files stay out of other chats and cron jobs."""
    home = hermes_home()
    legacy = home / {"images": "image_cache", "audio": "audio_cache"}.get(kind, f"{kind}_cache")
    return (legacy if legacy.is_dir() else home / "cache" / kind) / (scope or "local")


def media_scope_of(key: str, kind: str = "chat") -> str:
    """The media scope of a chat (kind "chat", its gateway session key) or a cron job (kind "cron", its id): a
    stable name that says nothing of what it stands for ("chat-" + 16 hex of a SHA-256)."""
    import hashlib

    return f"{kind}-" + hashlib.sha256(key.encode("utf-8", "surrogatepass")).hexdigest()[:16]


def pid_alive(pid: int) -> bool:
    """Whether process `pid` exists (pid files: the gateway, dashboards, rollout drivers); a zombie child of
    this process counts as gone (it is reaped here)."""
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    except (OSError, ValueError):
        return False
    try:
        return os.waitpid(pid, os.WNOHANG) == (0, 0)
    except ChildProcessError:  # not our child: it exists
        return True


# -- where hermes takes the programs it runs outside the sandbox from ------------------------------------
# The programs hermes itself runs outside the sandbox (bwrap, slirp4netns, unshare, git, docker, ssh, espeak,
# an editor...) come only from PATH directories the sandbox cannot write (red-team round 7 a33: with a project's
# venv activated, `.venv/bin` first on PATH, a confined command dropped `bwrap`, `slirp4netns` and `git` wrappers
# there, and the next session started them unconfined, as the user).
#
# Untrusted PATH entries: relative ones, the working directory hermes started in and everything below it, and
# every root a sandbox lets commands write (`distrust_writable`, called as its plan is made, in
# terminal/sandbox/spec.py: the workspaces, granted paths, the session's temporary directory, /tmp itself with
# `sandbox.shared_tmp`). `harden_program_path()` (the CLI, after parsing its arguments) keeps the user's PATH
# whole for the commands inside the sandbox (`user_path()`) and gives hermes's own environment, so every
# `subprocess` call by bare name, the trusted one.

_USER_PATH: list[str] = []  # the PATH hermes was started with (set by harden_program_path)
_UNTRUSTED: set[str] = set()


def is_under(path: str, root: str) -> bool:
    """`path` is `root` or lies below it (both absolute, normalised)."""
    return path == root or path.startswith(root.rstrip("/") + "/")


def too_broad(d: str, hermes_home: str) -> bool:
    """Is directory `d` (real, absolute) too broad to be a workspace nobody chose by standing there: `/`, a
    top-level directory, HOME or a directory above it, or one in the Hermes home? Hermes's `terminal.cwd: ~`
    and `cron create --workdir /` only say where its tools start (rt12 a21, a37)."""
    home = os.path.realpath(os.path.expanduser("~"))
    hermes = os.path.realpath(hermes_home)
    return d.rstrip("/").count("/") <= 1 or is_under(home, d) or is_under(d, hermes) or is_under(hermes, d)


def work_root(raw_cwd: str, hermes_home: str, chosen: bool = False) -> str:
    """Where a session works, from `terminal.cwd`: that directory, unless the config file names one
    `too_broad` and hermes was started elsewhere (not `chosen` by a flag or by hermes itself for a cron job,
    batch task or editor session): then where hermes started, which is what the user chose by standing there."""
    root = os.path.abspath(os.path.expanduser(raw_cwd))
    try:
        here = os.path.realpath(os.getcwd())
    except OSError:
        return root
    if chosen or os.path.realpath(root) == here or not too_broad(os.path.realpath(root), hermes_home):
        return root
    return here


def trusted_path(path: str | None = None) -> str:
    """`path` (default: the user's PATH) without the entries the sandbox could write."""
    raw = user_path() if path is None else path
    roots = {os.path.realpath(r) for r in (*_UNTRUSTED, "/dev/shm")}
    kept = []
    for entry in raw.split(os.pathsep):
        if not os.path.isabs(entry):
            continue
        real = os.path.realpath(entry)
        if not any(is_under(real, root) for root in roots) and real not in kept:
            kept.append(entry)
    return os.pathsep.join(kept)


def user_path() -> str:
    """The PATH the user started hermes with: what commands inside the sandbox get."""
    return _USER_PATH[0] if _USER_PATH else os.environ.get("PATH", os.defpath)


def user_environ() -> dict[str, str]:
    """os.environ with the user's PATH: the environment confined programs start from."""
    env = dict(os.environ)
    env["PATH"] = user_path()
    return env


def distrust_writable(*roots: str) -> None:
    """Directories the sandbox may write: never a place hermes takes a program from."""
    added = {os.path.realpath(os.path.abspath(r)) for r in roots if r} - _UNTRUSTED
    if added:
        _UNTRUSTED.update(added)
        if _USER_PATH:
            os.environ["PATH"] = trusted_path()


def harden_program_path() -> None:
    """Keep the user's PATH for the commands; hermes's own PATH is the trusted part of it."""
    if not _USER_PATH:
        _USER_PATH.append(os.environ.get("PATH", os.defpath))
    try:
        distrust_writable(os.getcwd())
    except OSError:
        pass
    os.environ["PATH"] = trusted_path()


_RESOLVED: dict[tuple, str | None] = {}


def _links_on_the_way(path: str) -> tuple[list[str], str | None]:
    """Resolve `path` component by component: every symbolic link met (each named where it lies, in a
    directory already resolved) and the real path it ends at (None: a loop, or more than 40 links)."""
    import collections

    parts = collections.deque(p for p in path.split("/") if p)
    cur, links = "/", []
    while parts:
        part = parts.popleft()
        if part == ".":
            continue
        if part == "..":
            cur = os.path.dirname(cur)
            continue
        step = os.path.join(cur, part)
        try:
            target = os.readlink(step)
        except OSError:  # not a link (or missing): the next component
            cur = step
            continue
        links.append(step)
        if len(links) > 40:
            return links, None
        cur = "/" if target.startswith("/") else cur
        parts.extendleft(reversed([p for p in target.split("/") if p]))
    return links, cur


def trusted_program(path: str) -> bool:
    """Whether `path` (absolute), every link met on the way to it and what it ends at lie where no sandbox
    of this process can write: `~/bin/git -> ~/proj/.tools/git` (the workspace) is not; nor is a link in the
    workspace on the way to /usr/bin/git, which a command could point elsewhere (red-team round 8 hp1)."""
    roots = {os.path.realpath(r) for r in (*_UNTRUSTED, "/dev/shm")}
    links, real = _links_on_the_way(os.path.abspath(path))
    if real is None:
        return False
    return not any(is_under(p, root) for p in (*links, real) for root in roots)


def harden_sys_path() -> None:
    """Take the working directory (`''`, `python -m` puts it first), relative entries and everything below
    the working directory off hermes's own sys.path: a module a command writes in the workspace (`yaml.py`
    next to the user's `PYTHONPATH=src`) is never what hermes imports next (what it imported before this ran
    is the run-later guard's: guardscan watches PYTHONPATH directories). hermes_agent itself is imported already."""
    import sys

    try:
        cwd = os.path.realpath(os.getcwd())
    except OSError:
        cwd = ""
    # hermes's own installation stays, wherever it lies (a project's .venv, a source checkout: the sandbox
    # keeps them read-only, approval/policy.code_dirs)
    own = {os.path.realpath(p) for p in (sys.prefix, sys.exec_prefix, sys.base_prefix,
                                         os.path.dirname(os.path.dirname(os.path.abspath(__file__))))}

    def kept(entry: str) -> bool:
        if not entry or not os.path.isabs(entry):
            return False
        real = os.path.realpath(entry)
        return not (cwd and is_under(real, cwd)) or any(is_under(real, o) for o in own if o != "/")

    sys.path[:] = [e for e in sys.path if kept(e)]


def trusted_which(name: str) -> str | None:
    """The one resolver of programs hermes runs OUTSIDE the sandbox (git, ssh, docker, bwrap, an editor, a
    speech engine...): `name` on the trusted PATH (a name with a `/`: that path) whose whole chain of links
    passes `trusted_program`; a program that fails is passed over for the next PATH entry. Commands the model
    runs are looked up inside the sandbox with the user's PATH (`user_path`): they run confined."""
    key = (name, os.environ.get("PATH", ""), len(_UNTRUSTED))
    if key in _RESOLVED:  # passed only with no link on its way where a sandbox writes: it cannot move since
        return _RESOLVED[key]
    if "/" in name:
        found = os.path.abspath(os.path.expanduser(name))
        result = found if os.access(found, os.X_OK) and os.path.isfile(found) and trusted_program(found) else None
    else:
        result = None
        for entry in trusted_path().split(os.pathsep):
            found = which(name, path=entry)
            if found and trusted_program(found):
                result = found
                break
    if result is not None:
        _RESOLVED[key] = result
    return result


def which(name: str, path: str | None = None) -> str | None:
    """shutil.which for a bare program name (no `/`) on POSIX: the first `path` entry (default $PATH) holding an
    executable non-directory `name`; an empty entry is skipped (shutil.which would look in the current directory).
    Here because shutil loads bz2 and lzma, ~3 ms of every `chat -q` start."""
    for entry in (os.environ.get("PATH", os.defpath) if path is None else path).split(os.pathsep):
        if entry:
            found = os.path.join(entry, name)
            if os.path.exists(found) and os.access(found, os.X_OK) and not os.path.isdir(found):
                return found
    return None


def host_program(name: str) -> str:
    """`trusted_which(name)`, or FileNotFoundError (an OSError, as subprocess raises for a missing program)
    saying there is none where the sandbox cannot write."""
    found = trusted_which(name)
    if found is None:
        raise FileNotFoundError(2, f"no `{name}` outside the places the sandbox can write (PATH, links)", name)
    return found
