"""The shell wrapper every backend runs: spawn-per-call `sh -c`, with cwd and exported variables
kept in a per-backend state directory (re-sourced before the command, saved by an EXIT trap)."""

from __future__ import annotations

import os
import re
import shlex
from dataclasses import dataclass

CWD_MARKER = "__HERMES_CWD__="
PGID_MARKER = "__HERMES_PGID__="
TIMEOUT_EXIT = 124
INTERRUPT_EXIT = 130

# Variables that carry credentials of the agent itself; commands never see them unless passed through.
_SECRET_RE = re.compile(r"(API_KEY|_TOKEN|_SECRET|PASSWORD|ACCESS_KEY)$|^(HERMES_|OPENROUTER_|ANTHROPIC_)")
_SAFE_HERMES = {"HERMES_HOME"}


@dataclass(frozen=True, slots=True)
class ScriptSpec:
    """What one wrapper script should do."""

    command: str
    state_dir: str
    call_id: str
    initial_cwd: str | None = None
    workdir: str | None = None
    stdin: bool = False
    job_control: bool = False
    emit_output: bool = False
    output_limit: int = 2_000_000


def scrub_env(environ: dict[str, str], passthrough: list[str] | tuple[str, ...] = ()) -> dict[str, str]:
    """A copy of `environ` without the agent's own secrets (API keys, tokens), except `passthrough`."""
    keep = set(passthrough) | _SAFE_HERMES
    return {k: v for k, v in environ.items() if k in keep or not _SECRET_RE.search(k)}


def build_script(spec: ScriptSpec) -> str:
    """The POSIX-sh text (works in bash and busybox ash) that runs `spec.command` once."""
    q = shlex.quote
    hs = q(spec.state_dir)
    out = f'"$__hs/out.{spec.call_id}"'
    lines = [f"__hs={hs}", '[ -d "$__hs" ] || mkdir -p "$__hs"']
    lines.append(
        "__hermes_save() { __rc=$?; "
        f'export -p > "$__hs/env.{spec.call_id}" 2>/dev/null && mv -f "$__hs/env.{spec.call_id}" "$__hs/env"; '
        'printf "%s" "${__hermes_keep:-$PWD}" > "$__hs/cwd"; exit $__rc; }'
    )
    body = [
        "trap __hermes_save EXIT",
        '[ -r "$__hs/env" ] && . "$__hs/env" >/dev/null 2>&1',
    ]
    fallback = f"cd -- {q(spec.initial_cwd)} 2>/dev/null" if spec.initial_cwd else ":"
    body.append(f'if [ -r "$__hs/cwd" ]; then cd -- "$(cat "$__hs/cwd")" 2>/dev/null || {fallback}; '
                f"else {fallback}; fi")
    if spec.workdir:
        wd = q(spec.workdir)
        body.append(f'__hermes_keep=$PWD; cd -- {wd} || {{ echo "workdir not found: "{wd}; exit 1; }}')
    body.append(f"eval {q(spec.command)}")
    stdin = "<&0" if spec.stdin else "</dev/null"
    sub = "(\n" + "\n".join(body) + "\n)"
    if spec.job_control:
        # A job of its own: the subshell leads a process group the backend can kill remotely.
        lines.append("set -m")
        lines.append(f"{sub} > {out} 2>&1 {stdin} &")
        lines.append("__p=$!")
        lines.append(f'printf "{PGID_MARKER}%s\\n" "$__p" >&2')
        lines.append('wait "$__p"; __rc=$?')
    elif spec.emit_output:
        lines.append(f"{sub} > {out} 2>&1 {stdin}; __rc=$?")
    else:
        lines.append(f"{sub} 2>&1 {stdin}; __rc=$?")
    if spec.emit_output or spec.job_control:
        lines.append(_emit_output(out, spec.output_limit))
    lines.append(f'printf "\\n{CWD_MARKER}%s\\n" "$(cat "$__hs/cwd" 2>/dev/null)" >&2')
    lines.append("exit $__rc")
    return "\n".join(lines) + "\n"


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


def kill_script(state_dir: str, pgid: int, call_id: str, output_limit: int = 2_000_000) -> str:
    """Shell that kills a remote process group and prints what it had written so far."""
    out = f'"$__hs/out.{call_id}"'
    return (
        f"__hs={shlex.quote(state_dir)}\n"
        f"kill -TERM -- -{int(pgid)} 2>/dev/null; sleep 0.2; kill -KILL -- -{int(pgid)} 2>/dev/null\n"
        + _emit_output(out, output_limit) + "\n"
    )


def split_meta(stderr_text: str) -> tuple[str | None, int | None, str]:
    """(cwd, pgid, other stderr) from the wrapper's stderr."""
    cwd: str | None = None
    pgid: int | None = None
    rest: list[str] = []
    for line in stderr_text.splitlines():
        if line.startswith(CWD_MARKER):
            cwd = line[len(CWD_MARKER):] or cwd
        elif line.startswith(PGID_MARKER):
            try:
                pgid = int(line[len(PGID_MARKER):])
            except ValueError:
                pass
        elif line.strip() and not _is_job_noise(line):
            rest.append(line)
    return cwd, pgid, "\n".join(rest)


def _is_job_noise(line: str) -> bool:
    """Job-control status lines ("[1]+  Done ...") that `set -m` prints about our own subshell."""
    return bool(re.match(r"^\[\d+\][+-]?\s", line))


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
