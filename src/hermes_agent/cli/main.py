"""`hermes` entry point: parse argv, load Settings once, run a subcommand. HermesErrors become one line."""

from __future__ import annotations

import os
import sys

from hermes_agent import __version__

TYPE_CHECKING = False  # not `from typing import ...`: `hermes --version` loads nothing it does not need
if TYPE_CHECKING:  # argparse and the subcommands load after `--version` has been answered
    import argparse

# subcommand -> module under hermes_agent.cli.commands exposing add_parser(subparsers) and run(args, settings)
SUBCOMMANDS: dict[str, str] = {
    "chat": "chat",
    "sessions": "sessions",
    "skills": "skills",
    "mcp": "mcp",
    "plugins": "plugins",
    "checkpoints": "checkpoints",
    "config": "config",
    "setup": "setup",
    "doctor": "doctor",
    "status": "status",
    "tools": "tools",
    "model": "model",
    "version": "version",
    "update": "update",
    "uninstall": "uninstall",
    "completion": "completion",
    "logs": "logs",
    "backup": "backup",
    "import": "backup_import",
    "profile": "profile",
    "insights": "insights",
    "auth": "auth",
    "cron": "cron",
    "api": "api",
    "acp": "acp",
    "batch": "batch",
    "dashboard": "dashboard",
    "gateway": "gateway",
    "pairing": "pairing",
}

# what `hermes --help` lists for each subcommand, so that top-level help imports no command module
# (tests/unit/cli/test_help_table.py keeps it equal to each module's own add_parser help)
SUMMARIES: dict[str, str] = {
    'chat': 'chat with the agent (interactive, or one-shot with -q)',
    'sessions': 'List, search, export and prune saved sessions',
    'skills': 'Manage skills: hub taps, install, audit, review proposals',
    'mcp': 'Manage MCP servers (tools from external processes or URLs)',
    'plugins': 'List, enable and disable plugins',
    'checkpoints': 'List, diff and restore file checkpoints',
    'config': 'show, edit, check and migrate config.yaml and .env',
    'setup': 'set up the model, API key and terminal backend (re-runnable)',
    'doctor': 'diagnose the installation, config, endpoint and tools',
    'status': 'model, endpoint, paths, toolsets and what is stored',
    'tools': 'list toolsets and tools; enable or disable toolsets per platform',
    'model': "show or choose the default model (from the endpoint's list)",
    'version': 'show version information',
    'update': 'upgrade hermes-agent with pip, then migrate config.yaml',
    'uninstall': 'uninstall hermes-agent (and delete HERMES_HOME unless kept)',
    'completion': 'print a shell completion script (bash, zsh or fish)',
    'logs': 'view and filter log files (agent.log, errors.log, ...)',
    'backup': 'back up the Hermes home to a zip file',
    'import': 'restore a Hermes backup zip into the Hermes home',
    'profile': 'separate Hermes homes: list, use, create, delete, show',
    'insights': 'usage insights: sessions, tools, tokens and cost by model',
    'auth': 'manage pooled provider credentials (auth.json, shared with Hermes)',
    'cron': 'Scheduled jobs: list, create, edit, pause, resume, run, remove, daemon',
    'api': 'Serve the agent as an OpenAI-compatible API (/v1/chat/completions)',
    'acp': 'Serve editors over the Agent Client Protocol (stdio)',
    'batch': 'Run a dataset of prompts as trajectories (local workers or Ray)',
    'dashboard': 'Start the web dashboard (sessions, cron, usage, config)',
    'gateway': 'Messaging gateway (Telegram, Discord, Slack, WhatsApp): run it, install it as a service, see its status',
    'pairing': 'Approve or revoke messaging users who asked to pair',
}


def add_model_flags(p: argparse.ArgumentParser, sub: bool = False) -> None:
    """Flags shared by `hermes` and `hermes chat` (a subparser must not reset the parent's values)."""
    import argparse

    d = {"default": argparse.SUPPRESS} if sub else {}
    p.add_argument("-m", "--model", help="model name for this run", **d)
    p.add_argument("--provider", help="provider profile (openrouter, openai, custom, ...)", **d)
    p.add_argument("--base-url", help="OpenAI-compatible base URL", **d)
    p.add_argument("-t", "--toolsets", help="comma-separated toolsets for this run, e.g. web,browser,vision,tts,moa,code_execution "
                        "(names: hermes tools list)", **d)
    p.add_argument("--yolo", action="store_true",
                   help="run flagged commands without asking (hard-line rules still apply; leaving the sandbox "
                        "still needs your yes for each call)", **d)
    p.add_argument("-r", "--resume", metavar="SESSION", help="resume a session by id or title", **d)
    p.add_argument("-C", "--config-set", action="append", metavar="KEY=VALUE",
                   help="override a config key for this run (repeatable)", **(d or {"default": []}))
    from hermes_agent.cli.run_flags import add_run_flags

    add_run_flags(p, d)


def _available(name: str) -> bool:
    import importlib.util

    return importlib.util.find_spec(f"hermes_agent.cli.commands.{SUBCOMMANDS[name]}") is not None


def _parser_class() -> type[argparse.ArgumentParser]:
    """ArgumentParser whose help formatter is given the terminal's width: argparse's own asks
    shutil.get_terminal_size, and importing shutil (with bz2 and lzma) cost ~7 ms of every start."""
    if not _PARSER:
        import argparse
        import functools

        # argparse translates its own words ("options", "show this help message and exit", ...) on every parser
        # and argument, and each gettext call searches the locale folders for a catalogue again (29 searches for
        # `gateway run`'s parsers): each text is now looked up once per process, with the same result
        argparse._ = functools.lru_cache(maxsize=256)(argparse._)  # type: ignore[attr-defined]

        class Parser(argparse.ArgumentParser):
            def _get_formatter(self) -> argparse.HelpFormatter:
                return self.formatter_class(prog=self.prog, width=_columns() - 2)  # type: ignore[call-arg]

        _PARSER.append(Parser)
    return _PARSER[0]


_PARSER: list[type[argparse.ArgumentParser]] = []


def _columns() -> int:
    """shutil.get_terminal_size().columns without shutil: COLUMNS, else the terminal's, else 80."""
    try:
        columns = int(os.environ.get("COLUMNS", "0"))
    except ValueError:
        columns = 0
    if columns <= 0:
        try:
            columns = os.get_terminal_size(sys.__stdout__.fileno()).columns  # type: ignore[union-attr]
        except (AttributeError, ValueError, OSError):
            columns = 0
    return columns if columns > 0 else 80


def build_parser(only: str | None = None, summaries_only: bool = False) -> argparse.ArgumentParser:
    """The `hermes` parser with every subcommand's parser (`only`: just that one's; `summaries_only`: each
    subcommand by name and summary, no command module imported: enough for top-level --help and typos)."""
    import importlib

    parser = _parser_class()(prog="hermes", description="Hermes Agent: your self-improving AI agent")
    parser.add_argument("-V", "--version", action="version", version=f"hermes-agent {__version__}")
    parser.add_argument("-z", "--oneshot", metavar="PROMPT",
                        help="run one message and print only the final answer (like chat -q PROMPT -Q)")
    add_model_flags(parser)
    parser.add_argument("-p", "--profile", metavar="NAME", help="use the profile NAME for this run (hermes profile)")
    subs = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name, module in SUBCOMMANDS.items():
        if only is not None and name != only:
            continue
        if not _available(name):
            continue
        if summaries_only:
            subs.add_parser(name, help=SUMMARIES.get(name))
            continue
        importlib.import_module(f"hermes_agent.cli.commands.{module}").add_parser(subs)
    return parser


def overrides_from(args: argparse.Namespace) -> dict[str, object]:
    """CLI flags as dotted config overrides (highest precedence)."""
    from hermes_agent.cli.run_flags import overrides
    from hermes_agent.config.loader import parse_scalar

    out: dict[str, object] = {**overrides(args),"model.default": getattr(args, "model", None),
                              "model.provider": getattr(args, "provider", None),
                              "model.base_url": getattr(args, "base_url", None)}
    for item in getattr(args, "config_set", None) or []:
        key, sep, value = item.partition("=")
        if not sep:
            raise SystemExit(f"hermes: -C expects KEY=VALUE, got {item!r}")
        out[key.strip()] = parse_scalar(value)
    return out


def _subcommand_in(argv: list[str]) -> str | None:
    """The subcommand named in argv ("chat" when none and no --help), or None to build every parser (top-level
    help, typos, a prompt given to -z)."""
    if argv and argv[0] in SUBCOMMANDS:  # `hermes chat -q ...`: named first, no flag of hermes's own to skip (the
        return argv[0]  # parse below found the same with a throwaway parser: ~3 M instructions net)
    top = _parser_class()(add_help=False)
    add_model_flags(top)
    _, rest = top.parse_known_args(argv)
    first = next((a for a in rest if not a.startswith("-")), None)
    if first is None:
        return None if _asks_help(argv) else "chat"
    return first if first in SUBCOMMANDS else None


def _settings_for(module: object, args: argparse.Namespace):
    """Load Settings; doctor/config/status still run (without the user's file) when config.yaml is broken."""
    from hermes_agent.cli.run_flags import ignores_user_config
    from hermes_agent.config.loader import load_settings
    from hermes_agent.errors import ConfigError

    overrides, yolo = overrides_from(args), bool(getattr(args, "yolo", False))
    try:
        settings = load_settings(overrides, yolo=yolo, ignore_user_config=ignores_user_config(args))
    except ConfigError:
        if not getattr(module, "TOLERATES_BROKEN_CONFIG", False):
            raise
        settings = load_settings(overrides, yolo=yolo, ignore_user_config=True)
    _warn_env_file()
    return settings


def _warn_env_file() -> None:
    """One line on stderr when .env has lines that are not KEY=value (python-dotenv skips them silently)."""
    from hermes_agent import paths
    from hermes_agent.config.loader import env_file_problems

    bad = env_file_problems(paths.env_path())
    if bad:
        where = ", ".join(str(n) for n, _ in bad[:5]) + (", ..." if len(bad) > 5 else "")
        print(f"hermes: warning: {paths.env_path()}: line{'s' if len(bad) > 1 else ''} {where} not KEY=value, ignored "
              f"(`hermes config check` lists them)", file=sys.stderr)


def apply_profile(argv: list[str]) -> list[str]:
    """Hermes's `-p/--profile NAME` (before the subcommand): set HERMES_HOME for this run; argv without it."""
    out, i = [], 0
    while i < len(argv):
        arg = argv[i]
        if arg in ("-p", "--profile") or arg.startswith("--profile="):
            name = arg.partition("=")[2] if "=" in arg else (argv[i + 1] if i + 1 < len(argv) else "")
            i += 1 if "=" in arg else 2
            from hermes_agent.cli.commands.profile import profile_home

            home = profile_home(name)
            if not home.is_dir():
                raise ValueError(f"no profile {name!r} (create it with: hermes profile create {name})")
            os.environ["HERMES_HOME"] = str(home)
            continue
        if arg == "--" or (not arg.startswith("-") and arg in SUBCOMMANDS):
            return out + argv[i:]
        out.append(arg)
        i += 1
    return out


def _asks_help(argv: list[str]) -> bool:
    return any(a in ("-h", "--help") for a in argv)


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if "-p" in argv or any(a.startswith("--profile") for a in argv):
        try:
            argv = apply_profile(argv)
        except ValueError as exc:
            print(f"hermes: {exc}", file=sys.stderr)
            return 2
    if argv[:1] in (["--version"], ["-V"]):
        print(f"hermes-agent {__version__}")
        return 0
    if argv:
        return _main(argv)
    from hermes_agent.cli import fast_prompt

    fast_prompt.show(argv)  # a plain `hermes` on a terminal: the last banner and the prompt now (issue 24)
    try:
        return _main(argv)
    finally:
        fast_prompt.abandon()  # (the REPL took the prompt, unless hermes ends before it)


def _main(argv: list[str]) -> int:
    from hermes_agent.cli.run_flags import continue_before_subcommand

    argv = continue_before_subcommand(argv, SUBCOMMANDS)
    if not _asks_help(argv):  # (help exits while parsing: it builds no dataclass worth the cache's load)
        from hermes_agent import dccache

        # dataclasses' generated methods compiled once, not on every start (issue 24); before the parser is
        # built: its command module imports the settings' dataclasses (~5 M instructions to the first request)
        dccache.install()
    only = _subcommand_in(argv)
    parser = build_parser(only, summaries_only=only is None and _asks_help(argv))
    args = parser.parse_args(argv)
    from hermes_agent import paths

    paths.harden_program_path()  # programs hermes runs unconfined never come from where the sandbox can write (a33)
    paths.harden_sys_path()  # nor the modules it imports later (issue 19)
    from hermes_agent.errors import ConfigError, HermesError, UsageError

    command = args.command or "chat"
    import importlib

    try:
        try:
            module = importlib.import_module(f"hermes_agent.cli.commands.{SUBCOMMANDS[command]}")
            settings = _settings_for(module, args)
            if not getattr(module, "SETS_UP_LOGGING", False):  # `chat` does, after the interactive prompt shows
                setup_logging()
            return int(module.run(args, settings) or 0)
        except BaseException:
            if not argv:  # the error's line replaces a prompt drawn before the settings loaded
                from hermes_agent.cli import fast_prompt

                fast_prompt.abandon()
            raise
    except ConfigError as exc:
        print(f"hermes: config error: {exc}", file=sys.stderr)
        return 2
    except UsageError as exc:
        print(f"hermes: {exc}", file=sys.stderr)
        return 2
    except HermesError as exc:
        print(f"hermes: error: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("\nhermes: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:  # `hermes ... | head`
        sys.stdout = open(os.devnull, "w")  # noqa: SIM115 - keep interpreter shutdown from writing again
        return 141
    except Exception as exc:  # a bug: one line for the user, the traceback in errors.log (HERMES_DEBUG=1 shows it)
        if os.environ.get("HERMES_DEBUG"):
            raise
        return _internal_error(exc)


def setup_logging() -> None:
    from hermes_agent.cli.logs import setup_logging as setup

    setup()


def _internal_error(exc: Exception) -> int:
    import logging

    from hermes_agent import paths

    setup_logging()  # (idempotent) a failure before the command set logging up still reaches errors.log
    logging.getLogger("hermes.crash").error("unhandled error in `hermes %s`", " ".join(sys.argv[1:2]), exc_info=exc)
    first = (str(exc).strip().splitlines() or [""])[0][:200]
    print(f"hermes: internal error: {type(exc).__name__}: {first} (traceback in {paths.logs_dir() / 'errors.log'}; "
          "HERMES_DEBUG=1 prints it)", file=sys.stderr)
    return 1


if __name__ == "__main__":
    raise SystemExit(main())


def acp_main() -> int:
    """`hermes-acp` (the entry point Hermes installs for editors): `hermes acp`."""
    return main(["acp", *sys.argv[1:]])
