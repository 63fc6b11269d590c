"""Issue 19 (a44, a45): every write the unconfined process makes by name where the sandbox can write (the
workspace, the current directory) goes through the no-follow writers of hermes_agent/nofollow.py. This scan
fails on a new bare open(..., "w"/"a"/"x"/"+") / Path.open("w") / write_text / write_bytes anywhere in src/
unless the module is listed below with the reason its target is out of the sandbox's reach. And the writers
themselves refuse what the red team planted: a symlink to ~/.bashrc, a FIFO, a second hard link."""

from __future__ import annotations

import ast
import os
from pathlib import Path

import pytest

from hermes_agent.nofollow import NotRegularFile, append_nofollow, remove_nofollow, write_text_nofollow

SRC = Path(__file__).resolve().parents[2] / "src" / "hermes_agent"

# module -> why its bare writes land where no confined command can create or swap a name
EXCEPTIONS: dict[str, str] = {
    "skills/hub/store.py": "HERMES_HOME/skills/.hub (hidden from the sandbox)",
    "skills/bundled.py": "HERMES_HOME/skills lock file",
    "gateway/runner.py": "HERMES_HOME gateway state",
    "gateway/platforms/discord.py": "HERMES_HOME media cache",
    "gateway/platforms/slack.py": "HERMES_HOME media cache",
    "gateway/platforms/whatsapp.py": "HERMES_HOME media cache",
    "gateway/session.py": "a MEDIA file's private copy, created (x) in a fresh mkdtemp under HERMES_HOME/cache (hidden from the sandbox)",
    "terminal/sandbox/runner.py": "an os.pipe() fd hermes made (open(fd)), not a name",
    "terminal/runfile.py": "HERMES_HOME/run records",
    "tools/mcp/pintree.py": "a pinned server's copy, created (x) in a fresh mkdtemp under HERMES_HOME/mcp-pinned "
                            "(checked not sandbox-writable)",
    "terminal/sandbox/nsmount.py": "/proc/self/{setgroups,uid_map,gid_map} of the launcher's own user namespaces "
                                   "(the kernel's, written before any command runs)",
    "terminal/sandbox/netns.py": "os.open of /proc/thread-self/ns/net read-only (the scan reads its path as a mode)",
    "bootstrap/session.py": "HERMES_HOME unsaved-<id>.jsonl beside state.db (a full disk, issue 19 a06)",
    "dccache.py": "the package's own __pycache__ (hermes's code: read-only to the sandbox wherever it lies)",
    "terminal/modal.py": "the remote sandbox's own file API",
    "providers/scripted.py": "the test model server's log, a path the tester names",
    "providers/auth_store.py": "HERMES_HOME auth lock",
    "cron/jobs.py": "HERMES_HOME/cron lock",
    "media/images.py": "HERMES_HOME/cache/images",
    "media/speech.py": "HERMES_HOME/cache/audio",
    "storage/retention.py": "HERMES_HOME state",
    "storage/checkpoints.py": "HERMES_HOME/checkpoints and hermes's own mkdtemp directory",
    "storage/cpstage.py": "HERMES_HOME/checkpoints/store: loose objects and the index's stat cache",
    "cli/main.py": "os.devnull",
    "cli/commands/gateway_service.py": "HERMES_HOME service files and logs, the user's systemd unit",
    "cli/commands/cron.py": "HERMES_HOME/cron pid file",
    "cli/commands/profile.py": "HERMES_HOME root active_profile",
    "cli/commands/backup_import.py": "a mkstemp file inside HERMES_HOME during import",
    "tools/manifest.py": "the package's own builtin_manifest.json, written by a developer command",
    "tools/builtin/_webconvert.py": "HERMES_HOME/cache/web",
    "tools/builtin/browser.py": "HERMES_HOME/cache/screenshots",
    "tools/builtin/rl.py": "HERMES_HOME/rl run directories",
    "tools/builtin/_rlrollout.py": "HERMES_HOME/rl run directories",
    "approval/approvers.py": "/dev/tty, the user's terminal",
    "memory/store.py": "HERMES_HOME/memories lock file",
    "memory/ctxledger.py": "the Hermes root's cache/context_ledger.json and its lock (hidden from the sandbox)",
}
_MODE_CHARS = set("wax+")


def _bare_writes(tree: ast.AST) -> list[int]:
    lines = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        name = func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else ""
        if name in ("write_text", "write_bytes"):
            target = func.value if isinstance(func, ast.Attribute) else node.args[0] if node.args else None
            if not (isinstance(target, ast.Name) and target.id == "backend"):  # the file tools' guarded writer
                lines.append(node.lineno)
        elif name == "open":
            pos = 1 if isinstance(func, ast.Name) or (isinstance(func.value, ast.Name) and func.value.id in ("io", "builtins")) else 0
            mode = node.args[pos] if len(node.args) > pos else next((k.value for k in node.keywords if k.arg == "mode"), None)
            modes = [mode.body, mode.orelse] if isinstance(mode, ast.IfExp) else [mode]
            if any(isinstance(m, ast.Constant) and isinstance(m.value, str) and _MODE_CHARS & set(m.value)
                   for m in modes):
                lines.append(node.lineno)
    return lines


def test_no_bare_writes_outside_the_listed_hermes_home_internals():
    found: dict[str, list[int]] = {}
    for path in sorted(SRC.rglob("*.py")):
        rel = path.relative_to(SRC).as_posix()
        hits = _bare_writes(ast.parse(path.read_text(encoding="utf-8")))
        if hits and rel not in EXCEPTIONS:
            found[rel] = hits
    assert not found, f"bare writes by name (use hermes_agent.nofollow, or list the module with a reason): {found}"
    stale = [m for m in EXCEPTIONS if not _bare_writes(ast.parse((SRC / m).read_text(encoding="utf-8")))]
    assert not stale, f"listed but no longer writing bare: {stale}"


def test_the_workspace_writers_are_scanned():
    for module in ("core/trajectory.py", "cli/worktree.py", "cli/slash_conv.py", "cli/commands/sessions.py",
                   "batch/store.py"):
        assert module not in EXCEPTIONS
        assert "nofollow" in (SRC / module).read_text(encoding="utf-8")


def test_append_refuses_a_planted_symlink_fifo_and_hard_link(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    rc = tmp_path / "bashrc"
    rc.write_text("# rc\n")
    Path("trajectory_samples.jsonl").symlink_to(rc)
    with pytest.raises(PermissionError):
        append_nofollow("trajectory_samples.jsonl", "PWNED\n")
    Path("sub").symlink_to(tmp_path / "elsewhere")
    with pytest.raises(PermissionError):
        append_nofollow("sub/x.jsonl", "PWNED\n")
    os.mkfifo("fifo")
    with pytest.raises(NotRegularFile):
        append_nofollow("fifo", "PWNED\n")
    os.link(rc, "hard")
    with pytest.raises(PermissionError):
        append_nofollow("hard", "PWNED\n")
    assert rc.read_text() == "# rc\n" and not (tmp_path / "elsewhere").exists()
    append_nofollow("data/ok.jsonl", "one\n")
    append_nofollow("data/ok.jsonl", b"two\n")
    assert Path("data/ok.jsonl").read_text() == "one\ntwo\n"


def test_write_text_replaces_a_symlink_instead_of_following_it(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    rc = tmp_path / "bashrc"
    rc.write_text("# rc\n")
    Path("conv.json").symlink_to(rc)
    write_text_nofollow("conv.json", "{}\n")
    assert rc.read_text() == "# rc\n"
    assert not Path("conv.json").is_symlink() and Path("conv.json").read_text() == "{}\n"


# Issue 19 class 1 (rt13 a17): removing, renaming, chmod-ing or copying over by a path string in a tree the
# sandbox can change follows a directory swapped for a symlink (~/.ssh). Outside these modules every such call
# must act relative to a no-follow dirfd (dir_fd=...: nofollow.remove_nofollow/write_at, guardfix, hardlinks).
DELETERS: dict[str, str] = {
    'atomicfile.py': 'temp+replace for HERMES_HOME state files (config, cron, pairing, delivery, verdicts)',
    'batch/worker.py': "a batch run's own mkdtemp work directory",
    'bootstrap/session.py': 'HERMES_HOME unsaved-<id>.jsonl',
    'cli/commands/backup.py': 'the backup archive the user names (outside any sandbox run)',
    'cli/commands/backup_import.py': 'a mkstemp file inside HERMES_HOME during import',
    'cli/commands/cron.py': 'HERMES_HOME/cron pid file',
    'cli/commands/gateway_service.py': "HERMES_HOME service files, the user's systemd unit",
    'cli/commands/profile.py': 'HERMES_HOME profiles',
    'cli/commands/uninstall.py': "HERMES_HOME itself, on the user's command",
    'cli/fast_prompt.py': 'HERMES_HOME prompt cache',
    'cli/logs.py': 'HERMES_HOME/logs rotation',
    'config/team.py': 'HERMES_HOME team config',
    'dccache.py': "the package's own __pycache__",
    'tools/manifest.py': "the package's own __pycache__ (the builtin sources' checksum by their stats)",
    'gateway/pairing.py': 'HERMES_HOME pairing store',
    'gateway/platforms/slack.py': 'HERMES_HOME media cache',
    'gateway/runner.py': 'HERMES_HOME gateway state',
    'gateway/session.py': 'a fresh mkdtemp under HERMES_HOME/cache',
    'gateway/voice.py': 'a fresh mkdtemp of the voice reply',
    'memory/ctxledger.py': "the Hermes root's cache/context_ledger.json",
    'memory/store.py': 'HERMES_HOME/memories',
    'providers/auth_store.py': 'HERMES_HOME auth.json',
    'skills/bundled.py': 'HERMES_HOME/skills',
    'skills/changes.py': 'HERMES_HOME/skills (review copies)',
    'skills/fsutil.py': 'HERMES_HOME/skills',
    'skills/hub/core.py': 'HERMES_HOME/skills/.hub and installed skills',
    'skills/hub/lifecycle.py': 'HERMES_HOME/skills',
    'skills/review.py': 'HERMES_HOME/skills proposals',
    'skills/taps.py': 'HERMES_HOME/skills tap caches',
    'storage/checkpoint_import.py': 'HERMES_HOME/checkpoints (old repositories moved into the store)',
    'storage/cpstage.py': 'HERMES_HOME/checkpoints/store loose objects (the work tree is read by open_nofollow)',
    'storage/db.py': 'HERMES_HOME state.db side files',
    'storage/retention.py': 'HERMES_HOME state',
    'storage/routing.py': 'HERMES_HOME routing state',
    'terminal/local.py': "the backend's own mkdtemp state directory",
    'terminal/localfiles.py': 'the local backend unguarded (no path policy: no sandbox runs); guarded writes '
                              'go through tools/builtin/_pathguard.py',
    'terminal/runfile.py': 'HERMES_HOME/run records',
    'terminal/sandbox/hardlinks.py': 'os.utime on an fd it created O_EXCL in a no-follow dirfd',
    'terminal/sandbox/metaguard.py': 'chmod of /proc/self/fd/N: an fd opened without following links',
    'terminal/ssh.py': "the backend's own mkdtemp ControlPath directory",
    'tools/builtin/_browser_confine.py': 'HERMES_HOME browser wrapper',
    'tools/builtin/_rlrollout.py': 'HERMES_HOME/rl run directories',
    'tools/builtin/text_to_speech.py': 'HERMES_HOME/cache/audio',
    'tools/mcp/confine.py': 'a fresh mkdtemp of a confined MCP server',
    'tools/mcp/pintree.py': "a pinned server's copy in a fresh mkdtemp under HERMES_HOME/mcp-pinned",
}
_OS_CALLS = {"remove", "unlink", "rmdir", "removedirs", "rename", "renames", "replace", "chmod", "lchmod", "chown",
             "lchown", "utime", "truncate", "link", "symlink"}
_SHUTIL_CALLS = {"rmtree", "move", "copy", "copy2", "copyfile", "copytree", "copymode", "copystat"}
_PATH_CALLS = {"unlink", "rmdir", "chmod", "lchmod", "touch", "symlink_to", "hardlink_to", "rename"}


def _path_actions(tree: ast.AST) -> list[int]:
    lines = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call) or not isinstance(node.func, ast.Attribute):
            continue
        if any(k.arg in ("dir_fd", "src_dir_fd") for k in node.keywords):
            continue
        func = node.func
        base = func.value.id if isinstance(func.value, ast.Name) else None
        if (base == "os" and func.attr in _OS_CALLS) or (base == "shutil" and func.attr in _SHUTIL_CALLS) or (
                base not in ("os", "shutil") and (func.attr in _PATH_CALLS or (
                    func.attr == "replace" and len(node.args) == 1 and not node.keywords))):  # Path.replace(x)
            lines.append(node.lineno)
    return lines


def test_no_path_string_deleters_outside_the_listed_modules():
    found: dict[str, list[int]] = {}
    for path in sorted(SRC.rglob("*.py")):
        rel = path.relative_to(SRC).as_posix()
        hits = _path_actions(ast.parse(path.read_text(encoding="utf-8")))
        if hits and rel not in DELETERS:
            found[rel] = hits
    assert not found, f"remove/rename/chmod/copy by a path string (act on a no-follow dirfd, see " \
                      f"hermes_agent.nofollow, or list the module with a reason): {found}"
    stale = [m for m in DELETERS if not _path_actions(ast.parse((SRC / m).read_text(encoding="utf-8")))]
    assert not stale, f"listed but no longer acting by path: {stale}"


def test_remove_refuses_a_swapped_in_link_and_cleans_only_below_the_stop(tmp_path):
    ssh = tmp_path / "ssh"
    ssh.mkdir()
    (ssh / "id_rsa").write_text("key")
    ws = tmp_path / "ws"
    (ws / "a" / "b").mkdir(parents=True)
    (ws / "a" / "b" / "f").write_text("x")
    (ws / "sub").symlink_to(ssh)
    with pytest.raises(PermissionError):
        remove_nofollow(str(ws / "sub" / "id_rsa"), stop=str(ws))
    assert (ssh / "id_rsa").read_text() == "key"
    assert remove_nofollow(str(ws / "a" / "b" / "f"), stop=str(ws))
    assert not (ws / "a").exists() and ws.is_dir()
    assert not remove_nofollow(str(ws / "gone"), stop=str(ws))
