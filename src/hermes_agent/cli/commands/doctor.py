"""`hermes doctor`: Python and dependencies, config validity, .env permissions, endpoint reachability,
terminal backend, each tool's availability (with the reason), plugin failures and the session database.
Exit 2 when config.yaml does not load (as every other command), else 1 if anything is broken."""

from __future__ import annotations

import argparse

from hermes_agent.config.settings import Settings

# Doctor must run when config.yaml is broken: it re-reads the file itself (main.py honours this flag).
TOLERATES_BROKEN_CONFIG = True
_MARKS = {"ok": "✓", "info": "·", "warn": "!", "fail": "✗"}


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    """Register `hermes doctor`."""
    p = subparsers.add_parser("doctor", help="diagnose the installation, config, endpoint and tools")
    p.add_argument("--offline", action="store_true", help="do not contact the model endpoint")
    p.add_argument("--timeout", type=_seconds, default=5.0, help="seconds to wait for the endpoint (default 5)")


def _seconds(text: str) -> float:
    """argparse type: a wait of more than 0 and at most an hour."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"invalid number of seconds {text!r}") from None
    if not 0 < value <= 3600:
        raise argparse.ArgumentTypeError(f"{text} is not between 0 and 3600 seconds")
    return value


def run(args: argparse.Namespace, settings: Settings) -> int:
    """Print every finding; exit code 2 when the config does not load, 1 when another check failed."""
    from hermes_agent.cli import doctor_checks as dc

    print(f"Hermes doctor — home {settings.home}")
    findings = [*dc.check_python(), *dc.check_dependencies()]
    config_findings, loaded = dc.check_config(settings)
    findings += config_findings
    findings += dc.check_env_file()
    if loaded is None:
        findings.append(dc.Finding("info", "model endpoint not checked: config.yaml must load first"))
    else:
        settings = loaded
        findings += dc.check_endpoint(settings, timeout=float(getattr(args, "timeout", 5.0)),
                                      offline=bool(getattr(args, "offline", False)))
    findings += dc.check_backend(settings)
    findings += dc.check_sandbox(settings)
    findings += dc.check_mcp(settings)
    findings += dc.check_tools(settings)
    findings += dc.check_database()
    findings += dc.check_database_size(settings)
    findings += dc.check_a2a_tasks_size(settings)
    for f in findings:
        print(f"  {_MARKS[f.level]} {f.text}")
    fails = sum(f.level == "fail" for f in findings)
    warns = sum(f.level == "warn" for f in findings)
    if fails:
        print(f"{fails} problem(s), {warns} warning(s). Fix the ✗ lines above.")
        return 2 if loaded is None and any(f.level == "fail" for f in config_findings) else 1
    print(f"All good{f' ({warns} warning(s))' if warns else ''}.")
    return 0
