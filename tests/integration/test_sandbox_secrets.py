"""What confined work may read and write, attacked end to end through `hermes chat -q` and the scripted
model: default-deny of the Hermes home root and HOME's dot-entries, git hooks planted through a moved
.git / gitdir file / core.hooksPath, start-up files when the workspace is HOME, and the read_file
symlink race. Under bubblewrap and Landlock, with HOME outside /tmp (not under any writable root) and
HOME under /tmp, as root and as an unprivileged user (setpriv to uid 65534) where the machine allows."""

from __future__ import annotations

import contextlib
import functools
import json
import os
import pwd
import shutil
import subprocess
import sys
import tempfile
import threading
import zipfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.helpers import HERMES

SECRETS = {
    ".hermes/.env": "DEFAULTENV-SECRET-1a",
    ".hermes/auth.json": '{"k": "AUTHJSON-SECRET-2b"}',
    ".hermes/profiles/other/.env": "OTHERPROFILE-SECRET-3c",
    ".hermes/profiles/work/.env": "WORKPROFILE-SECRET-4d",
    ".config/git/credentials": "https://u:GITCRED-SECRET-5e@github.com",
    ".cargo/credentials.toml": "[registry]\ntoken = \"CARGO-SECRET-6f\"",
    ".docker/config.json": '{"auths": {"x": {"auth": "DOCKER-SECRET-7a"}}}',
    ".netrc": "machine x login u password NETRC-SECRET-8b",
    ".foo-secret": "RANDOMDOT-SECRET-9c",
    ".ssh/id_rsa": "-----BEGIN OPENSSH PRIVATE KEY-----\nSSHKEY-SECRET-0d\n",
}
MARKERS = [v.split("-SECRET")[0].split('"')[-1].split(":")[-1].split()[-1] + "-SECRET" for v in SECRETS.values()]
UNPRIV = 65534


def _mechanisms() -> list:
    from hermes_agent.terminal.sandbox.bwrap import bwrap_problem
    from hermes_agent.terminal.sandbox.landlock import abi_version

    return [pytest.param("bwrap", marks=pytest.mark.skipif(bwrap_problem() is not None, reason="no bwrap")),
            pytest.param("landlock", marks=pytest.mark.skipif(abi_version() < 1, reason="no Landlock"))]


def _user_python() -> list[str]:
    """How uid 65534 runs hermes: a system python3 of the same version with hermes's packages on the path
    (the venv's interpreter may live under root's 0700 HOME)."""
    import sysconfig

    py = f"/usr/bin/python{sys.version_info.major}.{sys.version_info.minor}"
    path = os.pathsep.join([*os.environ.get("PYTHONPATH", "").split(os.pathsep), sysconfig.get_paths()["purelib"]])
    return ["env", f"PYTHONPATH={path}", py]


def _can_drop_privileges() -> bool:
    if os.geteuid() != 0 or not shutil.which("setpriv"):
        return False
    # through sh: setpriv's own exec still holds root's capabilities, a child's does not
    probe = subprocess.run(["setpriv", f"--reuid={UNPRIV}", f"--regid={UNPRIV}", "--clear-groups", "sh", "-c",
                            '"$@" -c "import hermes_agent.cli.main"', "sh", *_user_python()],
                           capture_output=True, check=False, cwd="/")
    return probe.returncode == 0


# SELF: hermes runs as whoever runs the suite (root in CI; the normal user under HERMES_TEST_AS, where these tests
# would otherwise all skip); "user": root drops to uid 65534 for the run (needs root)
SELF = "root" if os.geteuid() == 0 else "self"
USERS = [pytest.param(SELF),
         pytest.param("user", marks=pytest.mark.skipif(not _can_drop_privileges(), reason="cannot drop to uid 65534"))]


@pytest.fixture(params=["outside-tmp", "under-tmp"])
def home_root(request, tmp_path):
    """A directory to build HOME in: outside /tmp and every writable root (/root or /home), or /tmp."""
    if request.param == "under-tmp":
        yield tmp_path
        return
    base = "/root" if os.access("/root", os.W_OK) else os.path.expanduser("~")
    path = Path(tempfile.mkdtemp(prefix="sbxs-home-", dir=base))
    yield path
    shutil.rmtree(path, ignore_errors=True)


class World:
    """A user's HOME with secrets, tools and a git workspace; runs hermes as `user`."""

    def __init__(self, root: Path, scripted, mechanism: str, user: str) -> None:
        if user == "user":  # somewhere uid 65534 can reach: /home, or /tmp itself (not pytest's 0700 dir)
            root = Path(tempfile.mkdtemp(prefix="sbxs-home-", dir="/home" if str(root).startswith("/root") else "/tmp"))
            self.cleanup = root
        else:
            self.cleanup = None
        self.home = root / "home"
        self.ws = self.home / "proj"
        self.scripted = scripted
        self.user = user
        self.mechanism = mechanism
        for rel, text in SECRETS.items():
            p = self.home / rel
            p.parent.mkdir(parents=True, exist_ok=True)
            p.write_text(text + "\n")
        (self.home / ".gitconfig").write_text("[user]\n\tname = GITCONFIG-VISIBLE\n\temail = u@example.com\n")
        (self.home / ".config/git/config").write_text("[color]\n\tui = auto\n")
        tool = self.home / ".local/bin/mytool"
        tool.parent.mkdir(parents=True)
        tool.write_text("#!/bin/sh\necho LOCALBIN-TOOL-OK\n")
        tool.chmod(0o755)
        (self.home / ".local/lib/python3.11/site-packages").mkdir(parents=True)
        (self.home / ".bashrc").write_text("# rc\n")
        (self.home / "notes").mkdir()
        self.ws.mkdir()
        (self.ws / "README.md").write_text("project\n")
        for name in ("work", "other"):
            prof = self.home / ".hermes/profiles" / name
            prof.mkdir(parents=True, exist_ok=True)
        self.config(self.home / ".hermes/profiles/work")
        self.config(self.home / ".hermes")
        self.git("init", "-q")
        self.git("add", "-A")
        self.git("commit", "-qm", "init")
        if user == "user":
            subprocess.run(["chown", "-R", f"{UNPRIV}:{UNPRIV}", str(root)], check=True)
            os.chmod(root, 0o755)

    def config(self, where: Path, extra: str = "") -> None:
        (where / "config.yaml").write_text(
            f"model:\n  provider: custom\n  default: scripted-model\n  base_url: {self.scripted.url}\n"
            f"  api_key: test-key\nagent:\n  retry_base_delay: 0.01\n"
            f"sandbox:\n  mechanism: {self.mechanism}\n{extra}")

    def env(self) -> dict[str, str]:
        keep = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "OPENROUTER_", "HERMES_", "GIT_"))}
        user = self.user if self.user != "self" else pwd.getpwuid(os.geteuid()).pw_name
        return {**keep, "HOME": str(self.home), "USER": user, "HERMES_HOME": str(self.home / ".hermes")}

    def git(self, *args: str, cwd: Path | None = None) -> subprocess.CompletedProcess:
        env = {**self.env(), "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@x", "GIT_COMMITTER_NAME": "t",
               "GIT_COMMITTER_EMAIL": "t@x"}
        return subprocess.run([*self._as_user(), "git", *args], cwd=cwd or self.ws, env=env, capture_output=True,
                              text=True, check=False)

    ready = False

    def _as_user(self) -> list[str]:
        if self.user != "user" or not self.ready:
            return []
        return ["setpriv", f"--reuid={UNPRIV}", f"--regid={UNPRIV}", "--clear-groups"]

    def hermes(self, *args: str, cwd: Path | None = None, timeout: float = 180,
               env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
        self.ready = True
        prog = [*_user_python(), "-c", "import sys; from hermes_agent.cli.main import main; sys.argv[0] = 'hermes'; "
                 "sys.exit(main())"] if self.user == "user" else [HERMES]
        return subprocess.run([*self._as_user(), *prog, *args], cwd=cwd or self.ws, env={**self.env(), **(env or {})},
                              capture_output=True, text=True, timeout=timeout, check=False)

    def model_saw(self) -> str:
        return json.dumps([r["body"] for r in self.scripted.requests])

    def tool_results(self) -> str:
        last = self.scripted.requests[-1]["body"]["messages"] if self.scripted.requests else []
        return "\n".join(str(m.get("content"))[:1500] for m in last if m.get("role") == "tool")


@pytest.fixture(params=_mechanisms())
def mechanism(request):
    return request.param


@functools.cache
@contextlib.contextmanager
def world_as(user: str, root: Path, scripted, mechanism: str, ready: bool = False) -> Iterator[World]:  # noqa: ANN001
    """A World for `user` ("root" or "user") under `mechanism`, removed afterwards; skipped where uid 65534
    cannot start bwrap. `ready`: the copy for the unprivileged user is made now, not at the first run."""
    if user == "user" and mechanism == "bwrap" and not _bwrap_as_user():
        pytest.skip(f"uid {UNPRIV} cannot start bwrap here")
    w = World(root, scripted, mechanism, user)
    w.ready = ready
    try:
        yield w
    finally:
        if w.cleanup:
            shutil.rmtree(w.cleanup, ignore_errors=True)


def _bwrap_as_user() -> bool:
    """Can uid 65534 start hermes's Python inside bwrap (it may live under root's 0700 HOME)?"""
    probe = ["setpriv", f"--reuid={UNPRIV}", f"--regid={UNPRIV}", "--clear-groups", "sh", "-c", '"$@"', "sh", "bwrap",
             "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--", _user_python()[-1], "-c", "pass"]
    return subprocess.run(probe, capture_output=True, check=False).returncode == 0


@pytest.fixture(params=USERS)
def world(request, home_root, scripted, mechanism):
    with world_as(request.param, home_root, scripted, mechanism, ready=True) as w:
        yield w


def _calls(*calls: tuple[str, dict]) -> list[dict]:
    return [{"tool_calls": [{"id": f"c{i}", "name": n, "arguments": a}]} for i, (n, a) in enumerate(calls)] + \
        [{"content": "done"}]


def _assert_no_secret(world: World, out: subprocess.CompletedProcess) -> None:
    seen = world.model_saw() + out.stdout + out.stderr
    leaked = [m for m in MARKERS if m in seen]
    assert not leaked, f"secrets reached the model or the screen: {leaked}"
    assert "Traceback" not in out.stderr


def test_private_files_stay_hidden_and_tools_keep_working(world):
    """Another profile's .env, the default profile's .env with `-p work`, git/cargo/docker credentials,
    .netrc and a random dot-file: unreadable by commands and file tools. Controls: ~/.gitconfig,
    ~/.config/git/config and a tool in ~/.local/bin."""
    paths = " ".join(f"~/{rel}" for rel in SECRETS)
    world.scripted.add(*_calls(
        ("terminal", {"command": f"cat {paths} 2>&1; grep -rh SECRET ~/.hermes ~/.c* ~/.d* 2>&1 | head"}),
        ("terminal", {"command": "python3 -c \"import os,glob;[print(open(p).read()) for p in "
                                 "glob.glob(os.path.expanduser('~/.*'))+glob.glob(os.path.expanduser('~/.*/*')) "
                                 "if os.path.isfile(p)]\" 2>&1 | tail -40"}),
        *(("read_file", {"path": f"~/{rel}"}) for rel in SECRETS),
        ("search_files", {"pattern": "SECRET", "path": "~"}),
        ("terminal", {"command": "cat ~/.gitconfig ~/.config/git/config; git config --global --list; "
                                 "~/.local/bin/mytool"}),
    ))
    out = world.hermes("-p", "work", "chat", "-q", "look around")
    _assert_no_secret(world, out)
    seen = world.model_saw()
    # bwrap binds a credential-free copy over each file; Landlock hides them and git reads the copy
    # through GIT_CONFIG_GLOBAL (terminal/README.md, gitglobal.py)
    assert "GITCONFIG-VISIBLE" in seen and ("ui = auto" in seen or "color.ui=auto" in seen), world.tool_results()
    assert "LOCALBIN-TOOL-OK" in seen, "a tool in ~/.local/bin must run"
    assert "sandbox.readable_paths" in seen, "read_file's refusal must say how to allow a path"


def test_readable_paths_grants_one_more_dot_directory(world):
    """The README's answer to 'my tool needs one more path': sandbox.readable_paths."""
    (world.home / ".mytool").mkdir()
    (world.home / ".mytool/settings").write_text("MYTOOL-SETTING-OK\n")
    world.config(world.home / ".hermes/profiles/work", "  readable_paths: ['~/.mytool']\n")
    if world.user == "user":
        subprocess.run(["chown", "-R", f"{UNPRIV}:{UNPRIV}", str(world.home)], check=True)
    world.scripted.add(*_calls(("terminal", {"command": "cat ~/.mytool/settings ~/.foo-secret 2>&1"})))
    out = world.hermes("-p", "work", "chat", "-q", "read my tool's settings")
    _assert_no_secret(world, out)
    assert "MYTOOL-SETTING-OK" in world.model_saw()


HOOK = "#!/bin/sh\ntouch \"$HOME/PWNED-$(basename $0)\"\n"


def test_git_hooks_cannot_be_planted_through_a_moved_git_dir(world):
    """A hook in .git/hooks, core.hooksPath into the workspace, mv .git .gs + `gitdir: .gs` + hooksPath,
    and a repository created mid-session: the user's next `git commit` runs none of the planted hooks.
    Control: the model's own git commit in the workspace works."""
    hook = HOOK.replace("\n", "\\n")
    world.scripted.add(*_calls(
        ("terminal", {"command": f"printf '{hook}' > .git/hooks/pre-commit; chmod +x .git/hooks/pre-commit; "
                                 "git config core.hooksPath .githooks"}),
        ("terminal", {"command": "mv .git .gs; printf 'gitdir: .gs\\n' > .git; "
                                 "git --git-dir=.gs config core.hooksPath hooks2; mkdir -p hooks2; "
                                 f"printf '{hook}' > hooks2/pre-commit; chmod +x hooks2/pre-commit"}),
        ("terminal", {"command": "echo change >> README.md && git add README.md && "
                                 "git -c user.name=m -c user.email=m@x commit -qm model-commit && git log --oneline"}),
    ))
    out = world.hermes("chat", "-q", "set up the repo")
    assert "Traceback" not in out.stderr
    assert "model-commit" in world.git("log", "--oneline").stdout, "the model's own commit must work"
    world.git("commit", "-q", "--allow-empty", "-m", "user commit")
    assert "user commit" in world.git("log", "--oneline").stdout
    fresh = world.home / "fresh"
    fresh.mkdir()
    if world.user == "user":
        os.chown(fresh, UNPRIV, UNPRIV)
    world.scripted.add(*_calls(
        ("terminal", {"command": "git init -q && echo hi > a && git add a && "
                                 "git -c user.name=m -c user.email=m@x commit -qm first && echo REPO-MADE"}),
        ("terminal", {"command": f"printf '{hook}' > .git/hooks/pre-commit; chmod +x .git/hooks/pre-commit; "
                                 f"git config core.hooksPath .; printf '{hook}' > pre-commit; chmod +x pre-commit"}),
    ))
    out = world.hermes("chat", "-q", "make a repo", cwd=fresh)
    assert "REPO-MADE" in world.model_saw()
    world.git("commit", "-q", "--allow-empty", "-m", "user commit 2", cwd=fresh)
    planted = sorted(p.name for p in world.home.glob("PWNED-*"))
    assert not planted, f"a planted hook ran on the user's commit: {planted}"


def test_workspace_home_keeps_startup_files(world):
    """Workspace = HOME: a .pth in ~/.local/lib/python3.11/site-packages, ~/.bashrc, a user systemd unit,
    a new ~/.profile: all refused; hermes says once that the workspace is HOME. Control: a file in an
    ordinary folder of HOME is written."""
    script = ("import os, pathlib\nh = pathlib.Path.home()\n"
              "for rel, text in [('.local/lib/python3.11/site-packages/evil.pth', 'import os'),\n"
              "                  ('.config/systemd/user/evil.service', '[Service]'), ('.profile', 'touch ~/PWNED')]:\n"
              "    try:\n        (h / rel).parent.mkdir(parents=True, exist_ok=True); (h / rel).write_text(text)\n"
              "    except OSError as e: print('refused', rel, e)\n"
              "try:\n    open(h / '.bashrc', 'a').write('touch ~/PWNED')\nexcept OSError as e: print('refused rc', e)\n")
    world.scripted.add(*_calls(
        ("write_file", {"path": "~/notes/tidy.py", "content": script}),
        ("terminal", {"command": "python3 ~/notes/tidy.py"}),
        ("write_file", {"path": "~/.local/lib/python3.11/site-packages/evil2.pth", "content": "import os\n"}),
        ("terminal", {"command": "echo ok > ~/notes/todo.txt"}),
    ))
    out = world.hermes("chat", "-q", "tidy my home", cwd=world.home)
    _assert_no_secret(world, out)
    site = world.home / ".local/lib/python3.11/site-packages"
    assert not list(site.glob("*.pth")), "a .pth file was planted in the user's site-packages"
    assert (world.home / ".bashrc").read_text() == "# rc\n"
    assert not (world.home / ".config/systemd").exists() and not (world.home / ".profile").exists()
    assert (world.home / "notes/todo.txt").read_text() == "ok\n", "ordinary files in HOME must stay writable"
    assert (out.stdout + out.stderr).count("workspace is your home directory") == 1


def test_workspace_home_keeps_the_users_path_directories(world):
    """Workspace = HOME (red-team round 11 a03): the directories on the user's PATH inside HOME (~/go/bin,
    ~/scripts) stay read-only, so no `git` is planted where the user's next shell finds it; hermes takes them
    off its own PATH, but the sandbox plan reads the PATH the user started it with."""
    dirs = [world.home / "go" / "bin", world.home / "scripts"]
    (world.home / "notes").mkdir(exist_ok=True)
    for d in dirs:
        d.mkdir(parents=True)
        (d / "tool").write_text("#!/bin/sh\necho TOOL-OK\n")
        (d / "tool").chmod(0o755)
    if world.user == "user":
        subprocess.run(["chown", "-R", f"{UNPRIV}:{UNPRIV}", str(world.home / "go"), str(world.home / "scripts"),
                        str(world.home / "notes")],
                       check=True)
    plant = "; ".join(f"printf '#!/bin/sh\\necho PLANTED\\n' > {d}/git; echo x >> {d}/tool" for d in dirs)
    world.scripted.add(*_calls(("terminal", {"command": f"{plant}; tool; echo ok > ~/notes/todo.txt"})))
    path = os.pathsep.join([*map(str, dirs), "/usr/local/bin", "/usr/bin", "/bin"])
    out = world.hermes("chat", "-q", "set up git", cwd=world.home, env={"PATH": path})
    _assert_no_secret(world, out)
    for d in dirs:
        assert not (d / "git").exists() and (d / "tool").read_text() == "#!/bin/sh\necho TOOL-OK\n", d
    assert "TOOL-OK" in world.tool_results()  # the user's own programs still run
    assert (world.home / "notes" / "todo.txt").read_text() == "ok\n", world.tool_results()


def test_read_file_never_follows_a_swapped_symlink(world, tmp_path):
    """A thread swaps a file (and a directory on its path) for a symlink to ~/.ssh while read_file runs
    160 times: no read returns the key."""
    (world.ws / "d").mkdir()
    (world.ws / "d/id_rsa").write_text("decoy\n")
    (world.ws / "f").write_text("decoy\n")
    stop = threading.Event()

    def swap() -> None:
        ssh = world.home / ".ssh"
        while not stop.is_set():
            for name, target, real in (("f", ssh / "id_rsa", None), ("d", ssh, "dir")):
                tmp = world.ws / f".{name}.tmp"
                try:
                    os.symlink(target, tmp)
                    os.replace(tmp, world.ws / name)
                    os.unlink(world.ws / name)
                    if real:
                        (world.ws / name).mkdir()
                        (world.ws / name / "id_rsa").write_text("decoy\n")
                    else:
                        (world.ws / name).write_text("decoy\n")
                except OSError:
                    pass

    steps = [{"tool_calls": [{"id": f"r{i}-{j}", "name": "read_file", "arguments": {"path": p}}
                             for j, p in enumerate(["f", "d/id_rsa"] * 10)]} for i in range(8)]
    world.scripted.add(*steps, {"content": "done"})
    thread = threading.Thread(target=swap, daemon=True)
    thread.start()
    try:
        out = world.hermes("chat", "-q", "read these")
    finally:
        stop.set()
        thread.join()
    _assert_no_secret(world, out)
    assert world.model_saw().count("decoy") >= 10, "the race must have been exercised (reads that succeeded)"


def _wheel(path: Path) -> Path:
    whl = path / "demo_pkg-1.0-py3-none-any.whl"
    with zipfile.ZipFile(whl, "w") as z:
        z.writestr("demo_pkg.py", "VALUE = 'WHEEL-INSTALLED-OK'\n")
        z.writestr("demo_pkg-1.0.dist-info/METADATA", "Metadata-Version: 2.1\nName: demo-pkg\nVersion: 1.0\n")
        z.writestr("demo_pkg-1.0.dist-info/WHEEL", "Wheel-Version: 1.0\nGenerator: t\nRoot-Is-Purelib: true\n"
                                                  "Tag: py3-none-any\n")
        z.writestr("demo_pkg-1.0.dist-info/RECORD", "")
    return whl


def test_pip_into_a_workspace_venv_works(world):
    whl = _wheel(world.ws)
    if world.user == "user":
        os.chown(whl, UNPRIV, UNPRIV)
    world.scripted.add(*_calls(("terminal", {
        "command": f"python3 -m venv .venv 2>&1 && .venv/bin/pip install -q --no-index --no-deps {whl.name} 2>&1; "
                   ".venv/bin/python -c 'import demo_pkg; print(demo_pkg.VALUE)'", "timeout": 150})))
    out = world.hermes("chat", "-q", "install the wheel")
    assert "WHEEL-INSTALLED-OK" in world.model_saw(), (world.tool_results(), out.stderr[-500:])
