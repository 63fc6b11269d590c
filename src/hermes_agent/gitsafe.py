"""Running git from the unconfined hermes process (worktrees, checkpoints, skill taps). The repository may be
the sandbox's workspace, so nothing git reads from it may run code outside: hooks, fsmonitor, filter drivers,
pagers, editors, external diff, ssh/askpass/credential helpers and the ext:: transport are switched off on the
command line (which wins over every config file), the environment's GIT_* variables are dropped and - unless
the caller needs the user's own settings - the system and global config files are not read at all."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Mapping, Sequence
from pathlib import Path

from hermes_agent import paths

# Command-line config: highest precedence, so a repository's .git/config (or an include) cannot undo it.
SAFE_CONFIG: tuple[str, ...] = (
    "core.hooksPath=/dev/null", "core.fsmonitor=false", "core.untrackedCache=false", "protocol.ext.allow=never",
    "core.sshCommand=ssh", "core.pager=cat", "core.editor=true", "sequence.editor=true", "core.askPass=",
    "credential.helper=", "diff.external=", "core.alternateRefsCommand=", "commit.gpgSign=false",
    "tag.gpgSign=false", "gpg.program=false", "uploadpack.packObjectsHook=", "submodule.recurse=false",
)
# Kept when the caller asks for the user's own config (skill taps: a private tap needs its credentials).
_USER_OWNED = ("core.sshCommand=ssh", "core.askPass=", "credential.helper=")


def safe_env(base: Mapping[str, str] | None = None, *, user_config: bool = False) -> dict[str, str]:
    """`base` (default os.environ) without any GIT_* variable (GIT_DIR, GIT_SSH_COMMAND, GIT_EXEC_PATH,
    GIT_CONFIG_PARAMETERS...), non-interactive; system and global config ignored unless `user_config`."""
    env = {k: v for k, v in (os.environ if base is None else base).items() if not k.startswith("GIT_")}
    env.update(GIT_TERMINAL_PROMPT="0", GIT_ASKPASS="true", SSH_ASKPASS="true", GIT_ATTR_NOSYSTEM="1")
    env.pop("SSH_ASKPASS_REQUIRE", None)
    if not user_config:
        env.update(GIT_CONFIG_NOSYSTEM="1", GIT_CONFIG_GLOBAL=os.devnull)
    return env


def _filter_drivers(prefix: Sequence[str], cwd: str | Path | None, env: Mapping[str, str]) -> list[str]:
    """`-c filter.NAME.{clean,smudge,process}=` for every filter driver the repository's config defines
    (reading config runs nothing): an empty value switches the driver off."""
    try:
        proc = subprocess.run([paths.host_program("git"), *prefix, "config", "--get-regexp", r"^filter\..*\.(clean|smudge|process)$"],
                              cwd=cwd, env=dict(env), capture_output=True, text=True, timeout=10, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return []
    out: list[str] = []
    for line in proc.stdout.splitlines():
        key = line.split(" ", 1)[0]
        name = key[len("filter."):key.rfind(".")]
        if name and "\n" not in name:
            for kind in ("clean", "smudge", "process"):
                out += ["-c", f"filter.{name}.{kind}="]
    return out


def git_argv(args: Sequence[str], *, cwd: str | Path | None = None, prefix: Sequence[str] = (),
             env: Mapping[str, str] | None = None, user_config: bool = False) -> list[str]:
    """The full argv: git, `prefix` (--git-dir=..., --work-tree=...), the safe config, the repository's
    filter drivers switched off, then `args`."""
    flags = [part for item in SAFE_CONFIG if not (user_config and item in _USER_OWNED) for part in ("-c", item)]
    return [paths.host_program("git"), *prefix, *flags, *_filter_drivers(prefix, cwd, env or safe_env()), *args]


def run_git(args: Sequence[str], *, cwd: str | Path | None = None, prefix: Sequence[str] = (),
            env: Mapping[str, str] | None = None, user_config: bool = False, timeout: float = 30,
            text: bool = True, input: str | bytes | None = None) -> subprocess.CompletedProcess:
    """git with `git_argv` in `safe_env` (plus `env`, which must not reopen what safe_env closed)."""
    full_env = {**safe_env(user_config=user_config), **{k: v for k, v in (env or {}).items()
                                                         if k.startswith(("GIT_INDEX_FILE", "GIT_AUTHOR_",
                                                                          "GIT_COMMITTER_")) or not k.startswith("GIT_")}}
    return subprocess.run(git_argv(args, cwd=cwd, prefix=prefix, env=full_env, user_config=user_config), cwd=cwd, env=full_env,
                          capture_output=True, text=text, input=input, timeout=timeout, check=False)
