"""A job's `script` as Hermes runs it, but inside the OS sandbox: a file under HERMES_HOME/scripts/ (a path
outside it is refused), `.sh`/`.bash` run with bash, anything else with python3 (upstream's `interpreter`
field, `bash` or `python`, wins), cwd the scripts directory, writes allowed only in the job's workdir (else
terminal.cwd), timeout HERMES_CRON_SCRIPT_TIMEOUT, else cron.script_timeout_seconds, else 3600 s.
Success = exit 0 and stdout; a failure reports the exit code, stderr and stdout as Hermes does."""

from __future__ import annotations

import shlex
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from hermes_agent.config.settings import Settings
from hermes_agent.messages import safe_loads

if TYPE_CHECKING:
    from hermes_agent.terminal.base import TerminalBackend

# (settings, workspace, cwd=...) -> a sandboxed local shell that the caller closes: bootstrap.stores.script_backend
ScriptBackend = Callable[..., "TerminalBackend"]

DEFAULT_SCRIPT_TIMEOUT = 3600.0
_ERR_MARK = "\x1ehermes-cron-stderr\x1e"
SCRIPT_BLOCKED_NOTE = ("[sandbox: the OS sandbox blocked this: a cron script writes only in the job's workdir "
                       "(else terminal.cwd) and temp dirs; credentials are hidden]")


def resolve_script(home: Path, script: str) -> tuple[Path | None, str]:
    """(path, "") for a script inside HERMES_HOME/scripts, else (None, the reason)."""
    scripts = (home / "scripts").resolve()
    raw = Path(str(script)).expanduser()
    path = (raw if raw.is_absolute() else scripts / raw).resolve()
    if not path.is_relative_to(scripts):
        return None, f"Blocked: script path resolves outside the scripts directory ({scripts}): {script!r}"
    if not path.exists():
        return None, f"Script not found: {path}"
    if not path.is_file():
        return None, f"Script path is not a file: {path}"
    return path, ""


def script_timeout(settings: Settings) -> float:
    """Seconds a script may run (Hermes's knobs, in its order)."""
    for raw in (settings.env.get("HERMES_CRON_SCRIPT_TIMEOUT"), settings.cfg.cron.get("script_timeout_seconds")):
        try:
            value = float(str(raw).strip()) if raw not in (None, "") else 0.0
        except ValueError:
            continue
        if value > 0:
            return value
    return DEFAULT_SCRIPT_TIMEOUT


def _interpreter(job: dict, path: Path) -> str:
    chosen = str(job.get("interpreter") or "").strip().lower()
    if chosen in ("bash", "sh", "shell"):
        return "bash"
    if chosen.startswith("python"):
        return "python3"
    return "bash" if path.suffix.lower() in (".sh", ".bash") else "python3"


def _command(interpreter: str, path: Path) -> str:
    """stdout to the result, stderr kept apart (after a marker) so success delivers stdout only."""
    err = '"${TMPDIR:-/tmp}/hermes-cron-err.$$"'
    return (f"{interpreter} {shlex.quote(str(path))} 2>{err}; __rc=$?; "
            f"printf '{_ERR_MARK}'; cat {err} 2>/dev/null; rm -f {err}; exit $__rc")


def run_script(job: dict, settings: Settings, script_backend: ScriptBackend) -> tuple[bool, str]:
    """Run the job's script in the sandbox `script_backend` makes (the host's: bootstrap.stores.script_backend);
    (ok, stdout) or (False, what went wrong)."""
    path, problem = resolve_script(settings.home, str(job.get("script") or ""))
    if path is None:
        return False, problem
    workdir = str(job.get("workdir") or "").strip()
    workspace = workdir if workdir and Path(workdir).is_dir() else None
    timeout = script_timeout(settings)
    try:
        backend = script_backend(settings, workspace, cwd=str(path.parent))
    except Exception as exc:  # a frontend boundary: a sandbox that cannot start is the run's failure
        return False, f"Script execution failed: {exc}"
    try:
        result = backend.execute(_command(_interpreter(job, path), path), cwd=str(path.parent), timeout=timeout)
    finally:
        backend.close()
    from hermes_agent.terminal.sandbox.spec import BLOCKED_NOTE

    text = result.output.replace(BLOCKED_NOTE, SCRIPT_BLOCKED_NOTE)  # the model's hint does not apply here
    out, _, err = text.partition(_ERR_MARK)
    out, err = out.strip(), err.strip()
    if result.timed_out:
        return False, f"Script timed out after {timeout:g}s: {path}"
    if result.exit_code != 0:
        parts = [f"Script exited with code {result.exit_code}"]
        parts += [f"stderr:\n{err}"] if err else []
        parts += [f"stdout:\n{out}"] if out else []
        return False, "\n".join(parts)
    return True, out


def wake_gate(output: str) -> bool:
    """False when the script's last non-empty line is JSON with `"wakeAgent": false` (nothing to report)."""
    lines = [line for line in (output or "").splitlines() if line.strip()]
    if not lines:
        return True
    try:
        gate = safe_loads(lines[-1].strip())
    except ValueError:
        return True
    return not (isinstance(gate, dict) and gate.get("wakeAgent", True) is False)
