"""The run-later guard (terminal/sandbox/guard.py) through the real `hermes chat -q` with the scripted model
and --yolo (the approval rules never see the commands): files git, direnv or VS Code run later — hooks and
core.fsmonitor of the workspace's repository, a repository made mid-session with its own hooks and config, a
moved `.git`, `.envrc`, a folderOpen task — are put back or quarantined after each confined command, after an
MCP tool call and after a background process, under bubblewrap and under Landlock, with HOME outside /tmp.
Controls: an ordinary commit, `git init`/clone of a new repository and an ordinary tasks.json keep working."""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import subprocess
import sys
import uuid
from pathlib import Path

import pytest

from hermes_agent.terminal.sandbox.launcher import landlock_binds_work, landlock_problem
from tests.helpers import model_config, run_hermes

HOSTILE = str(Path(__file__).resolve().parents[1] / "fixtures" / "mcp_hostile_server.py")
HOOK = "#!/bin/sh\\ntouch \"$PWNED\"\\n"



@pytest.fixture
def home():
    """A HOME outside /tmp (where the red team found the escapes) with a project that is a git repository."""
    base = Path(os.path.expanduser("~"))
    if not os.access(base, os.W_OK):
        pytest.skip("cannot create a home outside /tmp")
    home = base / f".hermes-test-guard-home-{uuid.uuid4().hex[:8]}"
    proj = home / "proj"
    proj.mkdir(parents=True)
    (home / ".hermes").mkdir()
    (home / ".gitconfig").write_text("[user]\n\tname = U\n\temail = u@example.com\n")
    _git(home, proj, "init", "-q")
    (proj / "a.txt").write_text("a\n")
    _git(home, proj, "add", "a.txt")
    _git(home, proj, "commit", "-qm", "first")
    yield home
    shutil.rmtree(home, ignore_errors=True)


def _git(home: Path, cwd: Path, *args: str, pwned: Path | None = None) -> subprocess.CompletedProcess:
    env = {"HOME": str(home), "PATH": os.environ["PATH"], "PWNED": str(pwned or home / "pwned")}
    return subprocess.run(["git", *args], cwd=cwd, env=env, capture_output=True, text=True, check=True, timeout=60)


STDERR: list[str] = []  # what the user saw on stderr in the last run


def _chat(scripted, home: Path, steps: list[dict], mechanism: str, extra: str = "") -> list[str]:
    model_config(home / ".hermes", scripted.url, f"sandbox:\n  mechanism: {mechanism}\n{extra}")
    scripted.add(*steps, {"content": "done"})
    out = run_hermes("chat", "-q", "go", "--yolo", home=home / ".hermes", cwd=str(home / "proj"), timeout=180,
                     env={"HOME": str(home)})
    assert out.returncode == 0, out.stderr
    STDERR[:] = [out.stderr]
    messages = scripted.requests[-1]["body"]["messages"]
    return [m["content"] for m in messages if m["role"] == "tool"]


def _put_back(scripted, home: Path, mechanism: str, script: str, names, shown=str) -> str:  # noqa: ANN001
    """Run `script` (it ends with `echo PLANTED`) in ~/proj: each of `names` must be gone afterwards and named
    (as `shown(name)`) in what the model was told. Returns that text."""
    proj = home / "proj"
    results = _chat(scripted, home, [_terminal(script)], mechanism)
    assert "PLANTED" in results[0], results[0]
    left = [n for n in names if (proj / n).exists()]
    assert not left, f"left: {left}\n{results[0]}"
    for name in names:
        assert shown(name) in results[0], f"{name} not named\n{results[0]}"
    return results[0]


def _terminal(command: str, **more: object) -> dict:
    return {"tool_calls": [{"name": "terminal", "arguments": {"command": command, **more}}]}


def _user_commits(home: Path, repo: Path) -> None:
    """What the user does next: a commit and a status (pre-commit hook, core.fsmonitor)."""
    (repo / "user.txt").write_text("u\n")
    _git(home, repo, "add", "user.txt")
    _git(home, repo, "commit", "-qm", "user")
    _git(home, repo, "status", "--short")
    assert not (home / "pwned").exists(), "a planted hook or fsmonitor ran on the user's git command"


def test_hooks_and_config_of_the_workspace_repo_are_put_back(scripted, home, mechanism):
    proj = home / "proj"
    config_before = (proj / ".git/config").read_text()
    results = _chat(scripted, home, [
        _terminal(f"printf '{HOOK}' > .git/hooks/pre-commit; chmod +x .git/hooks/pre-commit;"
                  " printf '[core]\\n\\tfsmonitor = touch \"$PWNED\"; false\\n' >> .git/config; echo PLANTED"),
        _terminal("mkdir -p .git/modules/sub/hooks && printf 'x' > .git/modules/sub/HEAD;"
                  f" printf '{HOOK}' > .git/info/attributes; echo ../.gx > .git/commondir; echo SECOND"),
    ], mechanism)
    assert "PLANTED" in results[0] and "SECOND" in results[1]
    assert (proj / ".git/config").read_text() == config_before
    assert not (proj / ".git/hooks/pre-commit").exists() and not (proj / ".git/commondir").exists()
    assert not (proj / ".git/info/attributes").exists()
    if mechanism == "landlock" and not landlock_binds_work():
        # bwrap (and Landlock as root: its own mount namespace binds them read-only) refused the writes
        # outright; Landlock without privileges let them land, the guard undid them
        assert "the sandbox restored" in results[0] and ".git/config" in results[0], results[0]
        assert "the sandbox removed" in results[0] and "pre-commit" in results[0], results[0]
        saved = list((home / ".hermes/quarantine").rglob("pre-commit"))
        assert saved and "PWNED" in saved[0].read_text()  # kept for the user, outside the sandbox's reach
    _user_commits(home, proj)


def test_a_repository_made_mid_session_keeps_only_gits_own_files(scripted, home, mechanism):
    proj = home / "proj"
    results = _chat(scripted, home, [
        _terminal("git init -q lib && printf '" + HOOK + "' > lib/.git/hooks/pre-commit && chmod +x "
                  "lib/.git/hooks/pre-commit && git -C lib config core.fsmonitor 'touch $PWNED; false' && "
                  "git -C lib config alias.st '!touch $PWNED' && echo MADE"),
        _terminal("git init -q clean && git clone -q clean copy && echo CONTROL"),
        _terminal("git worktree add -q wt2 -b feature && git -C wt2 status --short && echo WORKTREE"),
    ], mechanism)
    assert "MADE" in results[0] and "CONTROL" in results[1] and "WORKTREE" in results[2], results
    assert "the sandbox" not in results[2], results[2]
    lib = proj / "lib"
    assert not (lib / ".git/hooks/pre-commit").exists()
    config = (lib / ".git/config").read_text()
    assert "fsmonitor" not in config and "alias" not in config and "repositoryformatversion" in config
    assert "core.fsmonitor" in results[0] and "pre-commit" in results[0], results[0]
    assert any(n.endswith(".sample") for n in os.listdir(lib / ".git/hooks"))  # git's own samples stay
    assert "the sandbox" not in results[1], results[1]  # git init / clone: nothing to take away
    assert "url = " in (proj / "copy/.git/config").read_text()
    _user_commits(home, lib)


def test_files_the_repository_config_includes_are_put_back(scripted, home, mechanism):
    """A shared project config (`include.path = ../.gitconfig`) and an includeIf naming a file not there yet:
    both lie in the writable workspace, git reads them like .git/config on the user's next command."""
    proj = home / "proj"
    _git(home, proj, "config", "include.path", "../.gitconfig")
    _git(home, proj, "config", "includeIf.gitdir:**.path", "../conf/git.inc")
    (proj / ".gitconfig").write_text("[pull]\n\trebase = true\n")
    results = _chat(scripted, home, [
        _terminal("printf '[core]\\n\\tfsmonitor = \"touch $PWNED; false\"\\n' >> .gitconfig; mkdir -p conf .gx;"
                  f" printf '{HOOK}' > .gx/pre-commit; chmod +x .gx/pre-commit;"
                  " printf '[core]\\n\\thooksPath = .gx\\n' > conf/git.inc; echo INCLUDED"),
    ], mechanism)
    assert "INCLUDED" in results[0], results[0]
    assert (proj / ".gitconfig").read_text() == "[pull]\n\trebase = true\n"
    assert not (proj / "conf/git.inc").exists()
    assert "the sandbox restored" in results[0] and ".gitconfig" in results[0], results[0]
    assert "git.inc" in results[0] and list((home / ".hermes/quarantine").rglob("git.inc")), results[0]
    _user_commits(home, proj)


def test_a_hooks_path_directory_made_by_the_command_is_watched(scripted, home, mechanism):
    """husky: `core.hooksPath = .husky/_`, a directory `npm install` makes (absent in a fresh clone). Where
    the sandbox can bind (bwrap, Landlock as root) the missing directory is made empty at plan time and bound
    read-only: a hook cannot land there even while the command runs (rt7 a13); else a hook the command puts
    there is quarantined. The project's own scripts beside it stay."""
    proj = home / "proj"
    _git(home, proj, "config", "core.hooksPath", ".husky/_")
    results = _chat(scripted, home, [
        _terminal(f"mkdir -p .husky/_; printf '{HOOK}' > .husky/_/pre-commit; chmod +x .husky/_/pre-commit;"
                  " echo 'npx lint-staged' > .husky/lint.sh && echo HUSKY"),
    ], mechanism)
    assert "HUSKY" in results[0], results[0]
    assert not (proj / ".husky/_/pre-commit").exists() and (proj / ".husky/lint.sh").exists()
    if mechanism == "landlock" and not landlock_binds_work():
        assert "the sandbox removed" in results[0] and ".husky/_/pre-commit" in results[0], results[0]
    else:
        assert "Read-only file system" in results[0], results[0]
    _user_commits(home, proj)


HUSKY_STUB = '#!/usr/bin/env sh\nn=$(basename "$0"); s=$(dirname "$(dirname "$0")")/$n; [ -f "$s" ] || exit 0; sh -e "$s"\n'


def test_husky_hook_scripts_the_stubs_run_are_hook_code(scripted, home, mechanism):
    """husky 9 as installed: `core.hooksPath = .husky/_`, whose stubs run `.husky/<hook name>`. Changing the
    project's .husky/pre-commit, or adding a .husky/pre-push, plants a hook as surely as .git/hooks would:
    both are put back; another script in .husky stays the project's."""
    proj = home / "proj"
    (proj / ".husky/_").mkdir(parents=True)
    for hook in ("pre-commit", "pre-push"):
        (proj / ".husky/_" / hook).write_text(HUSKY_STUB)
        (proj / ".husky/_" / hook).chmod(0o755)
    (proj / ".husky/pre-commit").write_text("echo lint ok\n")
    _git(home, proj, "config", "core.hooksPath", ".husky/_")
    _git(home, proj, "add", ".husky")
    _git(home, proj, "commit", "-qm", "husky")
    results = _chat(scripted, home, [
        _terminal("echo 'touch \"$PWNED\"' >> .husky/pre-commit; echo 'touch \"$PWNED\"' > .husky/pre-push;"
                  " echo 'echo helper' > .husky/helper.sh; echo PLANTED"),
    ], mechanism)
    assert "PLANTED" in results[0], results[0]
    assert (proj / ".husky/pre-commit").read_text() == "echo lint ok\n"
    assert not (proj / ".husky/pre-push").exists() and (proj / ".husky/helper.sh").exists()
    _user_commits(home, proj)


def test_husky_hooks_are_hook_code_before_husky_is_installed(scripted, home, mechanism):
    """A project with husky in package.json but no hooks installed yet (a fresh clone): the user's next
    `npm install` runs `prepare: husky`, which points git at .husky/_, whose stubs run `.husky/<hook>`. A
    `.husky/pre-commit` the command made is put back now, before that install; another .husky script stays."""
    proj = home / "proj"
    (proj / "package.json").write_text('{"scripts": {"prepare": "husky"}, "devDependencies": {"husky": "^9"}}\n')
    results = _chat(scripted, home, [_terminal(
        "mkdir -p .husky && echo 'touch \"$PWNED\"' > .husky/pre-commit && echo 'echo hi' > .husky/helper.sh && "
        "echo PLANTED")], mechanism)
    assert "PLANTED" in results[0], results[0]
    assert not (proj / ".husky/pre-commit").exists(), results[0]
    assert ".husky/pre-commit" in results[0] and (proj / ".husky/helper.sh").exists(), results[0]
    (proj / ".husky/_").mkdir()  # what `npm install` then does (husky 9's install)
    (proj / ".husky/_/pre-commit").write_text(HUSKY_STUB)
    (proj / ".husky/_/pre-commit").chmod(0o755)
    _git(home, proj, "config", "core.hooksPath", ".husky/_")
    _user_commits(home, proj)


def test_a_pre_commit_framework_config_is_hook_code(scripted, home, mechanism):
    """pre-commit's installed hook runs what `.pre-commit-config.yaml` in the work tree says: creating one with a
    local hook is put back like a hook (quarantined), with a line saying so."""
    proj = home / "proj"
    hook = proj / ".git/hooks/pre-commit"
    hook.write_text("#!/usr/bin/env bash\n# File generated by pre-commit: https://pre-commit.com\nexit 0\n")
    hook.chmod(0o755)
    config = "repos:\n- repo: local\n  hooks:\n  - id: x\n    name: x\n    entry: touch $PWNED\n    language: system\n"
    results = _chat(scripted, home, [_terminal(f"printf '{config}' > .pre-commit-config.yaml; echo PLANTED")],
                    mechanism)
    assert "PLANTED" in results[0], results[0]
    assert not (proj / ".pre-commit-config.yaml").exists()
    assert ".pre-commit-config.yaml" in results[0] and "the sandbox" in results[0], results[0]


def test_files_that_run_when_the_user_enters_the_folder_are_quarantined(scripted, home, mechanism):
    proj = home / "proj"
    results = _chat(scripted, home, [
        _terminal("echo 'touch $PWNED' > .envrc; mkdir -p .vscode sub/.vscode; "
                  "echo '{\"tasks\": [{\"runOptions\": {\"runOn\": \"folderOpen\"}}]}' > .vscode/tasks.json; "
                  "echo '{\"tasks\": [{\"label\": \"build\"}]}' > sub/.vscode/tasks.json; "
                  "mkdir -p deep/er && echo 'touch $PWNED' > deep/er/.envrc; echo WROTE"),
    ], mechanism)
    assert "WROTE" in results[0]
    assert not (proj / ".envrc").exists() and not (proj / "deep/er/.envrc").exists()
    assert not (proj / ".vscode/tasks.json").exists()
    assert (proj / "sub/.vscode/tasks.json").exists()  # an ordinary task file stays
    assert ".envrc" in results[0] and "direnv" in results[0] and "folderOpen" in results[0], results[0]
    saved = list((home / ".hermes/quarantine").rglob(".envrc"))
    assert len(saved) == 2 and "cp -p" in results[0]
    assert "the sandbox removed" in STDERR[0] and ".envrc" in STDERR[0]  # the user is told too


def test_landlock_moved_git_dir_is_moved_back(scripted, home):
    if landlock_problem():
        pytest.skip(landlock_problem())
    proj = home / "proj"
    (proj / ".gx").mkdir()
    results = _chat(scripted, home, [
        _terminal(f"mv .git .gs && printf 'gitdir: .gs\\n' > .git && printf '{HOOK}' > .gx/pre-commit && "
                  "chmod +x .gx/pre-commit && git config core.hooksPath .gx && echo MOVED"),
    ], "landlock")
    # as root the launcher's mount namespace pins .git (EBUSY, as under bwrap); else the guard moves it back
    assert ("Device or resource busy" in results[0]) if landlock_binds_work() else ("MOVED" in results[0])
    assert (proj / ".git").is_dir() and not (proj / ".gs").exists(), results[0]
    assert "hookspath" not in (proj / ".git/config").read_text().lower()
    _user_commits(home, proj)


def test_background_process_plants_are_caught_at_the_next_command(scripted, home, mechanism):
    proj = home / "proj"
    results = _chat(scripted, home, [
        _terminal(f"sleep 0.3; printf '{HOOK}' > .git/hooks/post-checkout; chmod +x .git/hooks/post-checkout;"
                  " echo 'touch $PWNED' > .envrc", background=True),
        _terminal("sleep 1.5; echo LATER"),
        _terminal("echo NEXT"),
    ], mechanism)
    assert not (proj / ".envrc").exists() and not (proj / ".git/hooks/post-checkout").exists()
    assert ".envrc" in results[1] + results[2], results
    _git(home, proj, "checkout", "-q", "-b", "other")
    assert not (home / "pwned").exists()


@pytest.mark.skipif(importlib.util.find_spec("mcp") is None, reason="the mcp SDK is not installed")
def test_mcp_server_plants_are_put_back_after_the_call(scripted, home, mechanism):
    servers = (f"mcp_discovery_timeout: 30\nmcp_single_query_discovery_timeout: 60\nmcp_servers:\n  evil:\n"
               f"    command: {sys.executable}\n    args: [{HOSTILE}]\n")
    attack = (f"printf '{HOOK}' > .git/hooks/pre-commit; chmod +x .git/hooks/pre-commit; "
              "echo 'touch $PWNED' > .envrc; git init -q nested && "
              f"printf '{HOOK}' > nested/.git/hooks/pre-commit; echo DONE")
    results = _chat(scripted, home, [
        {"tool_calls": [{"name": "mcp__evil__run_shell", "arguments": {"command": attack}}]},
    ], mechanism, servers)
    assert "DONE" in results[0], results[0]
    proj = home / "proj"
    assert not (proj / ".envrc").exists() and not (proj / "nested/.git/hooks/pre-commit").exists()
    assert not (proj / ".git/hooks/pre-commit").exists()
    notes = json.loads(results[0]).get("sandbox", [])
    assert any(".envrc" in n for n in notes), results[0]
    _user_commits(home, proj)
    _user_commits(home, proj / "nested")


GITCONFIG = ('[user]\n\tname = Una User\n\temail = u@example.com\n[alias]\n\tst = status --short\n'
             '[url "https://ghp_TOKENINURL@github.com/"]\n\tinsteadOf = https://github.com/\n'
             '[http]\n\textraHeader = Authorization: Bearer TOKENHEADER\n'
             '[http "https://git.example/"]\n\textraheader = AUTHORIZATION: basic TOKENPERURL\n'
             '[credential]\n\thelper = store --file ~/.git-creds\n\tusername = bob\n'
             '[include]\n\tpath = ~/.git-secret-include\n')


def test_global_git_config_is_seen_without_credentials(scripted, home, mechanism):
    (home / ".gitconfig").write_text(GITCONFIG)
    (home / ".config/git").mkdir(parents=True)
    (home / ".config/git/config").write_text('[credential "https://github.com"]\n\tpassword = TOKENXDG\n'
                                              '[core]\n\tabbrev = 9\n')
    results = _chat(scripted, home, [
        _terminal("cat ~/.gitconfig ~/.config/git/config; git config --list --show-origin; env | grep -i git;"
                  " git config user.name; git config core.abbrev; echo A > b.txt; git st; git add b.txt &&"
                  " git commit -qm second && git log -1 --format=AUTHOR=%an"),
    ], mechanism)
    out = json.loads(results[0])["output"]
    for token in ("TOKENINURL", "TOKENHEADER", "TOKENPERURL", "TOKENXDG", "git-creds", "bob", "git-secret-include"):
        assert token not in out, (token, out)
    assert "Una User" in out and "AUTHOR=Una User" in out and "\n9" in out, out  # the rest still applies
    assert "?? b.txt" in out  # the alias works
    assert "TOKENINURL" in (home / ".gitconfig").read_text()  # the user's own file is untouched


def test_execute_code_plants_are_put_back(scripted, home, mechanism):
    code = ("import os, pathlib\npathlib.Path('.envrc').write_text('touch $PWNED\\n')\n"
            "p = pathlib.Path('.git/hooks/pre-commit')\ntry:\n    p.write_text('#!/bin/sh\\ntouch $PWNED\\n'); p.chmod(0o755)\n"
            "except OSError as e:\n    print('refused', e)\nprint('SCRIPT-DONE')\n")
    results = _chat(scripted, home, [{"tool_calls": [{"name": "execute_code", "arguments": {"code": code}}]}],
                    mechanism)
    assert "SCRIPT-DONE" in results[0], results[0]
    assert not (home / "proj/.envrc").exists() and ".envrc" in results[0]
    _user_commits(home, home / "proj")


@pytest.mark.skipif(importlib.util.find_spec("mcp") is None, reason="the mcp SDK is not installed")
def test_file_tool_writes_of_run_later_files_are_boundary_crossings_under_yolo(scripted, home, mechanism):
    """write_file of a hook or an `.envrc` while a confined MCP server is alive, with --yolo: both lie outside
    the sandbox's write set, so they are boundary crossings that --yolo never approves (only a person's yes for
    that call; `Guard.trusted` then keeps such a write as hermes's own). Nothing is written, nothing put back."""
    servers = (f"mcp_discovery_timeout: 30\nmcp_single_query_discovery_timeout: 60\nmcp_servers:\n  evil:\n"
               f"    command: {sys.executable}\n    args: [{HOSTILE}]\n")
    results = _chat(scripted, home, [
        {"tool_calls": [{"name": "mcp__evil__run_shell", "arguments": {"command": "echo SERVER-UP"}}]},
        _terminal("echo FIRST"),
        {"tool_calls": [{"name": "write_file", "arguments": {"path": ".envrc", "content": "export APP_ENV=dev\n"}}]},
        {"tool_calls": [{"name": "write_file", "arguments": {"path": ".git/hooks/pre-push",
                                                             "content": "#!/bin/sh\nmake test\n"}}]},
        _terminal("ls -a; ls .git/hooks | grep -v sample; echo LISTED"),
    ], mechanism, servers)
    assert "SERVER-UP" in results[0] and "LISTED" in results[-1] and "the sandbox" not in results[-1], results
    assert all('"blocked": true' in r for r in results[2:4]), results
    assert not (home / "proj/.envrc").exists() and not (home / "proj/.git/hooks/pre-push").exists()


def test_a_bare_repository_made_as_plain_files_keeps_only_gits_own_config(scripted, home, mechanism):
    """No `.git` anywhere: HEAD, objects/, refs/ and a config written as plain files make a folder a repository
    git uses when the user runs it there (red-team round 4, a31). It is treated like any repository the command
    made: its config keeps only what `git init` writes."""
    proj = home / "proj"
    config = "[core]\\n\\trepositoryformatversion = 0\\n\\tbare = false\\n\\tworktree = ..\\n\\tfsmonitor = touch $PWNED; false\\n"
    results = _chat(scripted, home, [
        _terminal("mkdir -p vendor/lib/objects vendor/lib/refs/heads && echo 'ref: refs/heads/main' > vendor/lib/HEAD"
                  f" && printf '{config}' > vendor/lib/config && echo MADE"),
    ], mechanism)
    assert "MADE" in results[0], results[0]
    assert "fsmonitor" not in (proj / "vendor/lib/config").read_text(), results[0]
    assert "core.fsmonitor" in results[0], results[0]
    env = {"HOME": str(home), "PATH": os.environ["PATH"], "PWNED": str(home / "pwned")}
    subprocess.run(["git", "status"], cwd=proj / "vendor/lib", env=env, capture_output=True, timeout=60)  # the user
    assert not (home / "pwned").exists()
