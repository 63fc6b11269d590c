"""Persist "always" approvals: append to command_allowlist in config.yaml through the shared
round-trip editor (comments and indentation kept, atomic replace)."""

from __future__ import annotations

from pathlib import Path

from hermes_agent.errors import ConfigError
from hermes_agent.lazylog import get_logger

log = get_logger(__name__)


def add_to_allowlist(config_path: Path, entries: list[str]) -> bool:
    """Append `entries` (pattern keys, each saved as Hermes's descriptions when they cover it exactly;
    those not already present) to command_allowlist; False when the file is unusable."""
    saved = list(dict.fromkeys(s for e in entries for s in hermes_entries_for(e)))

    def mutate(data: dict) -> None:
        from ruamel.yaml.comments import CommentedSeq

        current = data.get("command_allowlist")
        if not isinstance(current, list):
            current = data["command_allowlist"] = CommentedSeq()
        current.extend(e for e in saved if e not in current)

    from hermes_agent.config.edit import edit_config

    try:
        edit_config(config_path, mutate)
    except (ConfigError, OSError) as exc:
        log.warning("cannot update %s: %s", config_path, exc)
        return False
    return True


# Hermes's command_allowlist holds the descriptions of its dangerous-command patterns; each names the
# pattern keys of ours that cover the same commands. Hermes's hardline-like entries (format filesystem,
# kill all processes, fork bomb) have no counterpart: those stay blocked here whatever the allowlist.
_SENSITIVE_RC = ("credential_write", "ssh_write", "shell_rc_write")
HERMES_DESCRIPTION_KEYS: dict[str, tuple[str, ...]] = {
    "recursive delete": ("recursive_delete",),
    "recursive delete (long flag)": ("recursive_delete",),
    "delete in root path": ("recursive_delete", "system_file_write"),
    "world/other-writable permissions": ("world_writable",),
    "recursive world/other-writable (long flag)": ("world_writable", "recursive_perm_system"),
    "recursive chown to root": ("chown_root",),
    "recursive chown to root (long flag)": ("chown_root",),
    "disk copy": ("block_device_write",),
    "write to block device": ("device_write", "block_device_write"),
    "SQL DROP": ("sql_drop",),
    "SQL DELETE without WHERE": ("sql_delete_all",),
    "SQL TRUNCATE": ("sql_truncate",),
    "overwrite system config": ("system_file_write",),
    "stop/restart system service": ("service_control",),
    "stop/restart hermes launchd service (kills running agents)": ("service_control",),
    "force kill processes": ("force_kill", "kill_by_name"),
    "force kill processes (killall -KILL)": ("force_kill", "kill_by_name"),
    "force kill processes (killall -s KILL)": ("force_kill", "kill_by_name"),
    "kill processes by regex (killall -r)": ("kill_by_name",),
    "kill hermes/gateway process (self-termination)": ("kill_by_name",),
    "kill process via pgrep/pidof expansion (self-termination)": ("kill_pgrep",),
    "kill process via backtick pgrep/pidof expansion (self-termination)": ("kill_pgrep",),
    "pipe remote content to shell": ("remote_pipe_shell",),
    "execute remote script via process substitution": ("remote_pipe_shell",),
    "execute remote content via command substitution": ("remote_pipe_shell",),
    "pipe decoded content to shell (possible command obfuscation)": ("decoded_pipe_shell",),
    "pipe xxd-decoded content to shell (possible command obfuscation)": ("decoded_pipe_shell",),
    "pipe tr-transformed output to shell (possible command obfuscation)": ("decoded_pipe_shell",),
    "pipe openssl-decoded content to shell (possible command obfuscation)": ("decoded_pipe_shell",),
    "overwrite system file via tee": ("system_file_write",),
    "overwrite system file via redirection": ("system_file_write",),
    "copy/move file into system config path": ("system_file_write",),
    "in-place edit of system config": ("system_file_write",),
    "in-place edit of system config (long flag)": ("system_file_write",),
    "overwrite project env/config via tee": ("env_file_write",),
    "overwrite project env/config via redirection": ("env_file_write",),
    "overwrite project env/config file": ("env_file_write",),
    "copy/move file into sensitive credential/SSH/shell-rc path": _SENSITIVE_RC,
    "in-place edit of sensitive credential/SSH/shell-rc path": _SENSITIVE_RC,
    "in-place edit of sensitive credential/SSH/shell-rc path (long flag)": _SENSITIVE_RC,
    "in-place edit of sensitive credential/SSH/shell-rc path (perl/ruby)": _SENSITIVE_RC,
    "in-place edit of Hermes config/env": ("hermes_config_write",),
    "in-place edit of Hermes config/env (long flag)": ("hermes_config_write",),
    "in-place edit of Hermes config/env (perl/ruby)": ("hermes_config_write",),
    "xargs with rm": ("xargs_rm",),
    "find -exec/-execdir rm": ("find_exec_rm",),
    "find -delete": ("find_delete",),
    "stop/restart hermes gateway (kills running agents)": ("hermes_gateway_control",),
    "hermes update (restarts gateway, kills running agents)": ("hermes_update",),
    "docker compose restart/stop/kill/down (container lifecycle)": ("docker_compose_down",),
    "docker restart/stop/kill (container lifecycle)": ("docker_stop",),
    "shell execution via heredoc": ("heredoc_shell",),
    "git reset --hard (destroys uncommitted changes)": ("git_reset_hard",),
    "git force push (rewrites remote history)": ("git_force_push",),
    "git force push short flag (rewrites remote history)": ("git_force_push",),
    "git clean with force (deletes untracked files)": ("git_clean",),
    "git branch force delete": ("git_branch_force_delete",),
    "git branch force delete (long flags)": ("git_branch_force_delete",),
    "git branch force delete (long flags, force-first)": ("git_branch_force_delete",),
    "chmod +x followed by immediate execution": ("chmod_exec",),
    "sudo with privilege flag (stdin/askpass/shell/list)": ("root_shell",),
    "sudo with combined-flag privilege escalation": ("root_shell",),
}


def hermes_approves(entries: list[str], key: str, command: str) -> bool:
    """Does one of Hermes's description entries approve our finding `key` in `command`? Only where Hermes's own
    pattern for that description matches the command (hermes_shapes.SHAPES; a description with no shape there
    covers exactly our key): "delete in root path" approves `rm -rf /srv/x`, not `rm -rf src`. A command no
    description matches is approved when every description covering exactly `key` is listed (what an "always"
    here saves: hermes_entries_for)."""
    from hermes_agent.approval.hermes_shapes import SHAPES, shown

    listed = {e.strip() for e in entries}
    text = shown(command)
    covering = [d for d, keys in HERMES_DESCRIPTION_KEYS.items() if key in keys]
    hits = [d for d in covering if (shape := SHAPES.get(d)) is None or shape.search(text)]
    if hits:
        return any(d in listed for d in hits)
    exact = [d for d in covering if HERMES_DESCRIPTION_KEYS[d] == (key,)]
    return bool(exact) and all(d in listed for d in exact)


def hermes_entries_for(key: str) -> list[str]:
    """What to save for an "always" approval of `key`: Hermes's descriptions that cover exactly this key
    (so the released Hermes honours the approval too), else our key."""
    return [d for d, keys in HERMES_DESCRIPTION_KEYS.items() if keys == (key,)] or [key]
