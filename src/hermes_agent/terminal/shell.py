"""The shell wrapper every backend runs: spawn-per-call `sh -c`, with cwd and exported variables
kept in a per-backend state directory (re-sourced before the command, saved by an EXIT trap)."""

from __future__ import annotations

import os
import shlex
from dataclasses import dataclass

from hermes_agent.shellnames import RESERVED

CWD_MARKER = "__HERMES_CWD__="
TIMEOUT_EXIT = 124
INTERRUPT_EXIT = 130


@dataclass(frozen=True, slots=True)
class ScriptSpec:
    """What one wrapper script should do. `shell` re-runs the body for remote backends;
    `setsid` says whether the remote side has setsid (own process group for the command)."""

    command: str
    state_dir: str
    call_id: str
    initial_cwd: str | None = None
    workdir: str | None = None
    stdin: bool = False
    shell: str = "sh"
    setsid: bool = True
    output_limit: int = 2_000_000
    host_renames: bool = False  # the caller renames env.<call_id> to env itself (saves a `mv` process)
    source_rc: bool = True  # source ~/.bashrc once, on the first call, into the saved state
    save_state: bool = True  # False for background processes: they read the state, never write it
    fd_state: bool = False  # local backend: state comes in on fd 3 and goes back on fd 4 (no state_dir)
    cwd_fd: int | None = None  # fd_state: start in the directory this fd holds (not initial_cwd), then close it


STATE_IN_FD, STATE_OUT_FD = 3, 4
_REFUSED = "hermes: the saved shell state redefines a shell builtin read-only; start a new session"


def _state_guard(bash: bool) -> str:
    """Shell run right after the saved state (the confined side's text) is sourced, in the same brace group as
    the whole body (parsed before the state runs: its aliases cannot touch it): removes functions and aliases
    named like builtins or bash hooks (shellnames.py), and clears the traps bash would run on its own. `unset` is a POSIX special
    builtin, found before functions only in posix mode: that mode is entered by an assignment (no command
    lookup) and left at once; a state that prevents any step (a read-only function or POSIXLY_CORRECT)
    stops the call before the command runs (a failed assignment aborts the group; ${x:?} exits)."""
    names = " ".join(shlex.quote(n) for n in sorted(RESERVED))
    refuse = "${__hermes_refused:?" + _REFUSED + "}"
    if not bash:  # POSIX sh: special builtins (unset) always come before functions
        return f"unset -f {names} 2>/dev/null"
    return (f"POSIXLY_CORRECT=y; unset -f {names} || {refuse}; unset POSIXLY_CORRECT; "
            f"case :$SHELLOPTS: in *:posix:*) {refuse};; esac; "
            f"builtin unalias {names} 2>/dev/null; builtin trap - DEBUG RETURN ERR; builtin set +T")


def _group(lines: list[str]) -> str:
    """The body as one brace group: bash parses all of it before the saved state runs."""
    return "{\n" + "\n".join(lines) + "\n}\n"


def build_fd_body(spec: ScriptSpec) -> str:
    """The local backend's body: no state directory. The saved state (`export -p`, functions, aliases)
    arrives on fd 3 (empty on the first call: ~/.bashrc is sourced instead); at exit the cwd, a NUL, then
    the new state are written to fd 4. Both are anonymous files the unconfined side opened."""
    q = shlex.quote
    bash = spec.shell.endswith("bash")
    dump = "export -p; declare -f; alias -p" if bash else "export -p"
    fallback = f"cd -- {q(spec.initial_cwd)} 2>/dev/null" if spec.initial_cwd else ":"
    if spec.cwd_fd is not None:  # a directory pinned by the caller: no path for anyone to swap
        fallback = f"cd -P -- /dev/fd/{spec.cwd_fd}; exec {spec.cwd_fd}<&-"
    lines = [
        f'if [ -s /dev/fd/{STATE_IN_FD} ]; then . /dev/fd/{STATE_IN_FD} >/dev/null 2>&1; {_state_guard(bash)}; '
        f"else {_first_call_rc(spec)}; fi; exec {STATE_IN_FD}<&-",
        f"__hermes_save() {{ __rc=$?; {{ printf '%s\\0' \"${{__hermes_keep:-$PWD}}\"; {dump}; }} "
        f">&{STATE_OUT_FD} 2>/dev/null; exit $__rc; }}",
        ("trap __hermes_save EXIT" if spec.save_state else f"exec {STATE_OUT_FD}>&-")
        + ("; shopt -s expand_aliases" if bash else ""),
        fallback,
    ]
    if spec.workdir:
        wd = q(spec.workdir)
        lines.append(f'__hermes_keep=$PWD; cd -- {wd} || {{ echo "workdir not found: "{wd}; exit 1; }}')
    lines.append(f"eval {q(spec.command)}")
    return _group(lines)


def build_body(spec: ScriptSpec) -> str:
    """POSIX-sh text (bash or busybox ash) that restores state, runs the command, saves state on exit."""
    if spec.fd_state:
        return build_fd_body(spec)
    q = shlex.quote
    fallback = f"cd -- {q(spec.initial_cwd)} 2>/dev/null" if spec.initial_cwd else ":"
    tmp = f'"$__hs/env.{spec.call_id}"'
    rename = "" if spec.host_renames else f' && mv -f {tmp} "$__hs/env"'
    bash = spec.shell.endswith("bash")
    read_cwd = '$(< "$__hs/cwd")' if bash else '$(cat "$__hs/cwd")'
    # bash also keeps functions and aliases (pyenv/nvm define functions); ash can only list exports.
    dump = "{ export -p; declare -f; alias -p; }" if bash else "export -p"
    lines = [
        f"__hs={q(spec.state_dir)}",
        f'if [ -r "$__hs/env" ]; then . "$__hs/env" >/dev/null 2>&1; {_state_guard(bash)}; '
        f"else {_first_call_rc(spec)}; fi",
        # Defined after the restore: the saved functions include an older copy of this one.
        f"__hermes_save() {{ __rc=$?; {dump} > {tmp} 2>/dev/null{rename}; "
        'printf "%s" "${__hermes_keep:-$PWD}" > "$__hs/cwd"; exit $__rc; }',
        ("trap __hermes_save EXIT" if spec.save_state else ":") + ("; shopt -s expand_aliases" if bash else ""),
        f'if [ -r "$__hs/cwd" ]; then cd -- "{read_cwd}" 2>/dev/null || {fallback}; '
        f"else {fallback}; fi",
    ]
    if spec.workdir:
        wd = q(spec.workdir)
        lines.append(f'__hermes_keep=$PWD; cd -- {wd} || {{ echo "workdir not found: "{wd}; exit 1; }}')
    lines.append(f"eval {q(spec.command)}")
    return _group(lines)


def _first_call_rc(spec: ScriptSpec) -> str:
    """Shell that sources the user's ~/.bashrc when no state exists yet (PATH of pyenv, nvm...)."""
    if not (spec.source_rc and spec.shell.endswith("bash")):
        return ":"
    return '[ -r "$HOME/.bashrc" ] && . "$HOME/.bashrc" >/dev/null 2>&1 </dev/null; :'


def shell_argv(shell: str) -> list[str]:
    """argv prefix running a body with `shell`; bash gets --norc (it would otherwise read ~/.bashrc
    on every call when started under sshd)."""
    return [shell, "--norc", "-c"] if shell.endswith("bash") else [shell, "-c"]


def build_remote_script(spec: ScriptSpec) -> str:
    """Outer script for client-reached shells: runs the body as a job in its own session with
    output captured to a remote file (background children never hold the client's pipe),
    records the job's pid for `kill_script`, then prints output and the new cwd."""
    out = f'"$__hs/out.{spec.call_id}"'
    launcher = "setsid " if spec.setsid else ""
    stdin = "<&3 3<&-" if spec.stdin else "</dev/null"
    return "\n".join([
        f"__hs={shlex.quote(spec.state_dir)}",
        '[ -d "$__hs" ] || mkdir -p "$__hs"',
        "exec 3<&0",
        f"{launcher}{' '.join(shell_argv(spec.shell))} {shlex.quote(build_body(spec))} > {out} 2>&1 {stdin} &",
        "__p=$!",
        f'echo "$$ $__p" > "$__hs/pid.{spec.call_id}"; echo "$__p" >> "$__hs/jobs"',
        'wait "$__p"; __rc=$?',
        _emit_output(out, spec.output_limit),
        f'rm -f "$__hs/pid.{spec.call_id}"',
        f'printf "\\n{CWD_MARKER}%s\\n" "$(cat "$__hs/cwd" 2>/dev/null)" >&2',
        "exit $__rc",
    ]) + "\n"


def build_background_script(spec: ScriptSpec) -> str:
    """Outer script for a background process on a client-reached shell: the body runs in its own
    session with the client's stdin, its output streams straight back; pid recorded for kill_script."""
    return "\n".join([
        f"__hs={shlex.quote(spec.state_dir)}",
        '[ -d "$__hs" ] || mkdir -p "$__hs"',
        "exec 3<&0",
        f"{'setsid ' if spec.setsid else ''}{' '.join(shell_argv(spec.shell))} "
        f"{shlex.quote(build_body(spec))} 2>&1 <&3 3<&- &",
        "__p=$!",
        f'echo "$$ $__p" > "$__hs/pid.{spec.call_id}"',
        'wait "$__p"; __rc=$?',
        f'rm -f "$__hs/pid.{spec.call_id}"',
        "exit $__rc",
    ]) + "\n"


def _emit_output(out: str, limit: int) -> str:
    """Shell that prints the captured output, keeping head and tail when it exceeds `limit` bytes."""
    half = max(limit // 2, 1)
    return (
        f"__sz=$(wc -c < {out} 2>/dev/null || echo 0); __sz=$((__sz + 0))\n"
        f"if [ \"$__sz\" -gt {limit} ]; then head -c {half} {out}; "
        f'printf "\\n[... %s bytes omitted ...]\\n" "$((__sz - {2 * half}))"; tail -c {half} {out}; '
        f"else cat {out} 2>/dev/null; fi\n"
        f"rm -f {out}"
    )


def kill_script(state_dir: str, call_id: str, output_limit: int = 2_000_000) -> str:
    """Shell that kills a remote call (its process group and every descendant, for shells
    started without setsid) and prints what it had written so far."""
    out = f'"$__hs/out.{call_id}"'
    return "\n".join([
        f"__hs={shlex.quote(state_dir)}",
        # A call stopped just after it began may not have recorded its pid yet: give it 2 s.
        f'__i=0; while [ ! -s "$__hs/pid.{call_id}" ] && [ $__i -lt 20 ]; do sleep 0.1; __i=$((__i + 1)); done',
        # The waiting wrapper dies first so that it cannot print (and delete) the output itself.
        f'read -r __w __p < "$__hs/pid.{call_id}" 2>/dev/null && kill -KILL "$__w" 2>/dev/null',
        '__desc() { for __s in /proc/[0-9]*/stat; do read -r __a __b __c __pp __r < "$__s" 2>/dev/null '
        '|| continue; [ "$__pp" = "$1" ] && { echo "$__a"; __desc "$__a"; }; done; }',
        'if [ -n "$__p" ]; then __all="$__p $(__desc "$__p")"; kill -TERM -"$__p" 2>/dev/null; '
        "kill -TERM $__all 2>/dev/null; sleep 0.2; "
        'kill -KILL -"$__p" 2>/dev/null; kill -KILL $__all 2>/dev/null; fi',
        _emit_output(out, output_limit),
        f'rm -f "$__hs/pid.{call_id}"',
    ]) + "\n"


def cleanup_script(state_dir: str) -> str:
    """Shell that kills what earlier calls left running (their process groups) and removes the state."""
    hs = shlex.quote(state_dir)
    return (f'for __p in $(cat {hs}/jobs 2>/dev/null); do kill -KILL -"$__p" 2>/dev/null; done; '
            f"rm -rf {hs}")


def split_meta(stderr_text: str) -> tuple[str | None, str]:
    """(cwd, other stderr) from the remote wrapper's stderr."""
    cwd: str | None = None
    rest: list[str] = []
    for line in stderr_text.splitlines():
        if line.startswith(CWD_MARKER):
            cwd = line[len(CWD_MARKER):] or cwd
        elif line.strip():
            rest.append(line)
    return cwd, "\n".join(rest)


def cap_bytes(data: bytes, limit: int, total: int | None = None) -> bytes:
    """Keep head and tail of `data` when it exceeds `limit`, with an omitted-bytes marker."""
    size = len(data) if total is None else total
    if size <= limit:
        return data
    half = limit // 2
    marker = f"\n[... {size - 2 * half} bytes omitted ...]\n".encode()
    return data[:half] + marker + data[-half:]


def new_call_id() -> str:
    """A short random token naming one call's temp files."""
    return os.urandom(6).hex()
