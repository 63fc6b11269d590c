"""Every place hermes starts a program OUTSIDE the sandbox takes it from the one resolver
(paths.trusted_which / host_program), or is on the list below with the reason it may not (issue 19:
`~/bin/git -> ~/proj/.tools/git` ran unconfined). A new spawn or `shutil.which` / `paths.which` anywhere in src/ fails here
until it is routed through the resolver or justified in SPAWNS."""

from __future__ import annotations

import ast
from pathlib import Path

SRC = Path(__file__).resolve().parents[3] / "src" / "hermes_agent"
_SUBPROCESS = {"Popen", "run", "call", "check_call", "check_output", "getoutput", "getstatusoutput"}
_OS = {"system", "popen", "posix_spawn", "posix_spawnp", "execv", "execve", "execvp", "execvpe", "execl",
       "execle", "execlp", "execlpe", "spawnv", "spawnve", "spawnvp", "spawnvpe", "spawnl", "spawnlp"}
_WHAT = {"subprocess": _SUBPROCESS, "os": _OS, "asyncio": {"create_subprocess_exec", "create_subprocess_shell"},
         "pty": {"spawn"}, "shutil": {"which"},
         # paths.which: shutil.which without importing shutil (the resolver's own lookup), tracked the same way
         "paths": {"which"}, "hermes_agent.paths": {"which"}}

SY = "sys.executable (absolute; -P/-I keep the cwd off its sys.path)"
CONFINED = "the program runs inside the sandbox: looked up with the user's PATH on purpose"
# (file, function, call) -> why it does not take its program from paths.trusted_which
SPAWNS = {
    ("terminal/sandbox/gitobjects.py", "_git", "subprocess.run"): "git from paths.host_program, cwd /, no config "
        "and no user repository: verify what the sandbox wrote in git's object store",
    ("cli/commands/config.py", "_edit", "subprocess.call"): "editor resolved by paths.trusted_which",
    ("cli/commands/gateway_service.py", "_systemctl", "subprocess.run"): "systemctl from paths.trusted_which",
    ("cli/commands/gateway_service.py", "_pid_control", "subprocess.Popen"): SY,
    ("cli/commands/update.py", "_run", "subprocess.call"): SY,
    ("cli/commands/uninstall.py", "run", "subprocess.call"): SY,
    ("dashboard/ops.py", "_start_run", "asyncio.create_subprocess_exec"): SY,
    ("gitsafe.py", "_filter_drivers", "subprocess.run"): "git from paths.host_program",
    ("gitsafe.py", "run_git", "subprocess.run"): "git_argv: git from paths.host_program",
    ("storage/checkpoints.py", "_git", "subprocess.run"): "gitsafe.git_argv: paths.host_program",
    ("media/speech.py", "_offline", "subprocess.run"): "piper/espeak from paths.trusted_which",
    ("media/speech.py", "to_voice", "subprocess.run"): "voice_encoder(): paths.trusted_which",
    ("media/transcribe.py", "_local", "subprocess.run"): "the user's own configured shell command (stt.local."
                                                         "command), /bin/sh with the trusted PATH",
    ("skills/hub/github.py", "_resolve", "subprocess.run"): "gh from paths.trusted_which",
    ("terminal/docker.py", "docker_problem", "subprocess.run"): "docker from paths.trusted_which",
    ("terminal/docker.py", "_prepare", "subprocess.run"): "self._docker: paths.trusted_which",
    ("terminal/docker.py", "close", "subprocess.run"): "self._docker: paths.trusted_which",
    ("terminal/ssh.py", "_prepare", "subprocess.run"): "self._ssh: paths.trusted_which",
    ("terminal/ssh.py", "close", "subprocess.run"): "self._ssh: paths.trusted_which",
    ("terminal/singularity.py", "_bash", "subprocess.run"): "singularity_binary: paths.trusted_which",
    ("terminal/remote.py", "_run_raw", "subprocess.run"): "_client_argv: docker/ssh/singularity, resolved",
    ("terminal/remote.py", "execute", "subprocess.Popen"): "_client_argv: docker/ssh/singularity, resolved",
    ("terminal/remote.py", "spawn", "subprocess.Popen"): "_client_argv: docker/ssh/singularity, resolved",
    ("terminal/sandbox/launcher.py", "_probe", "subprocess.run"): SY,
    ("terminal/sandbox/launcher.py", "_relay", "subprocess.Popen"): SY,
    ("terminal/sandbox/launcher.py", "_start_once", "subprocess.Popen"): "bwrap_argv (paths.trusted_which) or "
                                                                          "sys.executable (Landlock)",
    ("terminal/sandbox/netns.py", "start", "subprocess.Popen"): "slirp4netns: paths.trusted_which",
    ("terminal/sandbox/netns.py", "_block", "subprocess.run"): "unshare: paths.trusted_which",
    ("terminal/sandbox/bwrap.py", "bwrap_problem", "subprocess.run"): "bwrap_binary: paths.trusted_which",
    ("storage/checkpoints.py", "_init_store", "subprocess.run"): "gitsafe.git_argv: paths.host_program",
    ("terminal/sandbox/netwrap.py", "main", "subprocess.Popen"): "bwrap argv the launcher resolved",
    ("terminal/sandbox/server.py", "spawn", "subprocess.Popen"): CONFINED,
    ("terminal/sandbox/server.py", "exec_main", "os.execvp"): CONFINED,
    ("terminal/sandbox/server.py", "join_main", "os.execvp"): CONFINED,
    ("terminal/sandbox/readable.py", "program_paths", "shutil.which"): "plans what a confined MCP server reads",
    ("terminal/local.py", "_bash", "shutil.which"): "the shell of the confined terminal",
    ("tools/builtin/_browser_confine.py", "exec_confined", "os.execve"): CONFINED,
    ("tools/builtin/_browser_confine.py", "exec_confined", "shutil.which"): CONFINED,
    ("tools/builtin/_checks.py", "chromium_path", "paths.which"): "the browser runs confined",
    ("tools/builtin/_rlrollout.py", "drive", "subprocess.run"): SY,
    ("tools/builtin/rl.py", "start_training", "subprocess.Popen"): SY,
    ("tools/builtin/_search.py", "find_rg", "shutil.which"): "rg runs confined (backend.confine) when the "
                                                               "sandbox is on",
    ("tools/builtin/_search.py", "stream_process", "subprocess.Popen"): "rg, confined (backend.confine)",
    ("tools/builtin/execute_code.py", "run_script", "shutil.which"): CONFINED,
    ("tools/builtin/skills.py", "_missing", "shutil.which"): "a check only: nothing is run",
    ("tools/mcp/config.py", "missing_command", "shutil.which"): "the MCP stdio server runs confined (an "
    "existence check only: an unconfined one is resolved by confine._outside with paths.trusted_which)",
    ("tools/mcp/stdio.py", "spawn", "asyncio.create_subprocess_exec"): "argv from wrapped.sandbox_launch: the "
    "confined server behind its sandbox, or an unconfined one resolved by confine._outside",
}


def _match(node: ast.AST) -> str:
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.attr in _WHAT.get(node.value.id, ()):
        return f"{node.value.id}.{node.attr}"
    return ""


def _sites() -> dict[tuple[str, str, str], list[ast.AST]]:
    """(file, enclosing function, module.name) -> the calls (or bare references, a function passed on) of every
    spawn or `which` in src/."""
    out: dict[tuple[str, str, str], list[ast.AST]] = {}
    for path in sorted(SRC.rglob("*.py")):
        rel = path.relative_to(SRC).as_posix()
        stack: list[str] = []

        def visit(node: ast.AST, rel: str = rel, stack: list[str] = stack) -> None:
            named = isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
            if named:
                stack.append(node.name)
            where = stack[-1] if stack else "<module>"
            if isinstance(node, ast.Call):
                if _match(node.func):
                    out.setdefault((rel, where, _match(node.func)), []).append(node)
                for arg in (*node.args, *(k.value for k in node.keywords)):  # run(subprocess.Popen, argv, ...)
                    if _match(arg):
                        out.setdefault((rel, where, _match(arg)), []).append(arg)
            if isinstance(node, ast.ImportFrom) and node.module in _WHAT:
                for alias in node.names:
                    assert alias.name not in _WHAT[node.module], f"{rel}: `from {node.module} import {alias.name}`" \
                        " hides a spawn from this check: use the module attribute"
            for child in ast.iter_child_nodes(node):
                visit(child)
            if named:
                stack.pop()

        visit(ast.parse(path.read_text(encoding="utf-8")))
    return out


def test_every_host_spawn_takes_its_program_from_the_resolver_or_says_why_not() -> None:
    unlisted = sorted(set(_sites()) - set(SPAWNS))
    assert not unlisted, ("programs started outside the sandbox must come from paths.trusted_which (or "
                          f"host_program); route these through it, or justify them in SPAWNS: {unlisted}")


def test_the_list_of_spawns_is_not_stale() -> None:
    gone = sorted(set(SPAWNS) - set(_sites()))
    assert not gone, f"no longer in src/ (take them off SPAWNS): {gone}"


def _bare(arg: ast.AST | None) -> str:
    """A program named by a bare word at the spawn: looked up on PATH when it runs, not by the resolver."""
    if isinstance(arg, ast.List) and arg.elts:
        arg = arg.elts[0]
    if isinstance(arg, ast.Constant) and isinstance(arg.value, str) and not arg.value.startswith("/"):
        return arg.value
    return ""


def test_no_spawn_names_a_bare_program_and_which_serves_only_confined_programs() -> None:
    bare, unbounded = [], []
    for (rel, func, what), nodes in _sites().items():
        why = SPAWNS.get((rel, func, what), "")
        for node in nodes:
            if not isinstance(node, ast.Call):
                continue
            if what == "shutil.which":
                if rel != "paths.py" and why != CONFINED and not any(w in why for w in ("confined", "check only")):
                    unbounded.append((rel, func))
            elif what not in ("os.system", "asyncio.create_subprocess_shell") and (name := _bare(
                    node.args[0] if node.args else None)):
                bare.append((rel, func, name))
    assert not bare, f"a program by bare name is looked up on PATH at spawn time: use paths.host_program: {bare}"
    assert not unbounded, f"shutil.which for a program hermes runs unconfined: use paths.trusted_which: {unbounded}"
