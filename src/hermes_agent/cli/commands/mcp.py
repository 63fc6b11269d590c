"""`hermes mcp list|add|remove|test`: manage `mcp_servers:` in config.yaml and check a server."""

from __future__ import annotations

import argparse
import json
import logging
import sys
import time
from pathlib import Path

from hermes_agent import lazyre, paths
from hermes_agent.config.edit import edit_config, section
from hermes_agent.config.settings import Settings
from hermes_agent.errors import ConfigError

_SERVER_NAME = lazyre.compile(r"^[A-Za-z0-9][A-Za-z0-9_-]{0,40}$")


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    """Register `hermes mcp ...`."""
    p = subparsers.add_parser("mcp", help="Manage MCP servers (tools from external processes or URLs)")
    sub = p.add_subparsers(dest="mcp_command", metavar="ACTION")
    sub.add_parser("list", help="Configured MCP servers")
    add = sub.add_parser("add", help="Add a server: --command for stdio, --url for streamable HTTP")
    add.add_argument("name", help="server name (letters, digits, - and _)")
    how = add.add_mutually_exclusive_group(required=True)
    how.add_argument("--command", dest="stdio_command", metavar="CMD", help="program to start (stdio transport)")
    how.add_argument("--url", help="streamable HTTP endpoint, e.g. http://127.0.0.1:8000/mcp")
    add.add_argument("--arg", action="append", default=[], metavar="ARG", help="argument for --command (repeatable)")
    add.add_argument("--env", action="append", default=[], metavar="K=V", help="environment variable (repeatable)")
    add.add_argument("--cwd", help="working directory for --command")
    add.add_argument("--header", action="append", default=[], metavar="K=V", help="HTTP header (repeatable)")
    add.add_argument("--timeout", type=float, help="seconds per tool call (default 60)")
    add.add_argument("--connect-timeout", type=float, help="seconds to connect (default 30)")
    add.add_argument("--disabled", action="store_true", help="add it switched off")
    add.add_argument("--trusted", action=argparse.BooleanOptionalAction, default=None,
                     help="vouch for what it says (tool descriptions, results): writes that later sessions read "
                          "(memory, skills, context files) are then not asked about (asked on a terminal if omitted)")
    add.add_argument("--force", action="store_true", help="replace a server of the same name")
    rm = sub.add_parser("remove", help="Remove a server from config.yaml")
    rm.add_argument("name")
    test = sub.add_parser("test", help="Connect to a server and list its tools with timings")
    test.add_argument("name")
    test.add_argument("--call", metavar="TOOL", help="also call this tool (its MCP name)")
    test.add_argument("--args", default="{}", metavar="JSON", help="arguments for --call")


def run(args: argparse.Namespace, settings: Settings) -> int:
    """Run one `hermes mcp` action; problems become one line on stderr."""
    action = getattr(args, "mcp_command", None) or "list"
    try:
        return _ACTIONS[action](args, settings)
    except ConfigError as exc:
        print(f"hermes mcp: {exc}", file=sys.stderr)
        return 1


def _config_file(settings: Settings) -> Path:
    return Path(settings.config_file) if settings.config_file else paths.config_path()


def _pairs(items: list[str], what: str) -> dict[str, str]:
    out = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise ConfigError(f"{what} expects KEY=VALUE, got {item!r}")
        out[key.strip()] = value
    return out


def _list(args: argparse.Namespace, settings: Settings) -> int:
    from hermes_agent.tools.mcp.config import parse_servers

    servers, errors = parse_servers(settings.cfg.mcp_servers, settings.env)
    if not servers and not errors:
        print("No MCP servers configured. Add one with: hermes mcp add NAME --command CMD | --url URL")
        return 0
    width = max(len(n) for n in [*(s.name for s in servers), *errors])
    for s in servers:
        state = "enabled " if s.enabled else "disabled"
        print(f"{s.name:<{width}}  {state}  {s.transport:<5}  {s.target}  (timeout {s.timeout:g}s)")
    for name, err in errors.items():
        print(f"{name:<{width}}  invalid   {err}")
    return 0


def _entry(args: argparse.Namespace) -> dict:
    entry: dict = {}
    if args.stdio_command:
        entry["command"] = args.stdio_command
        if args.arg:
            entry["args"] = list(args.arg)
        if args.env:
            entry["env"] = _pairs(args.env, "--env")
        if args.cwd:
            entry["cwd"] = args.cwd
    else:
        entry["url"] = args.url
        if args.header:
            entry["headers"] = _pairs(args.header, "--header")
    for key, value in (("timeout", args.timeout), ("connect_timeout", args.connect_timeout)):
        if value is not None:
            entry[key] = int(value) if float(value).is_integer() else value
    if args.disabled:
        entry["enabled"] = False
    if args.trusted:
        entry["trusted"] = True
    return entry


def _ask_trust(args: argparse.Namespace) -> None:
    """On a terminal, `--trusted` omitted: ask once whether the user vouches for the server (default no)."""
    if args.trusted is not None or not sys.stdin.isatty():
        return
    answer = input(f"Do you vouch for everything MCP server {args.name!r} says (its tool descriptions and results)? "
                   "If not, memory, skill and context-file writes in sessions that offer its tools ask you first. "
                   "[y/N] ")
    args.trusted = answer.strip().lower() in ("y", "yes")


def _add(args: argparse.Namespace, settings: Settings) -> int:
    from hermes_agent.tools.mcp.config import parse_server

    if not _SERVER_NAME.match(args.name):
        raise ConfigError(f"invalid server name {args.name!r}: use letters, digits, - and _")
    _ask_trust(args)
    entry = _entry(args)
    try:
        parse_server(args.name, entry)
    except ValueError as exc:
        raise ConfigError(f"{args.name}: {exc}") from None

    def mutate(data: dict) -> None:
        servers = section(data, "mcp_servers")
        if args.name in servers and not args.force:
            raise ConfigError(f"server {args.name!r} already exists (use --force to replace it)")
        servers[args.name] = entry

    path = _config_file(settings)
    edit_config(path, mutate)
    print(f"Added MCP server {args.name!r} to {path}. Check it with: hermes mcp test {args.name}")
    if not entry.get("trusted"):
        print(f"Untrusted: its tool descriptions and results count as untrusted content, so writes that later sessions "
              f"read need your yes (mcp_servers.{args.name}.trusted: true, or `hermes mcp add --trusted`, if you vouch "
              "for it).")
    return 0


def _remove(args: argparse.Namespace, settings: Settings) -> int:
    def mutate(data: dict) -> None:
        servers = data.get("mcp_servers")
        if not isinstance(servers, dict) or args.name not in servers:
            raise ConfigError(f"no MCP server named {args.name!r} in config.yaml")
        del servers[args.name]
        if not servers:  # an empty map left behind can dump as invalid YAML next to comments
            del data["mcp_servers"]

    path = _config_file(settings)
    edit_config(path, mutate)
    print(f"Removed MCP server {args.name!r} from {path}")
    return 0


def _test(args: argparse.Namespace, settings: Settings) -> int:
    from hermes_agent.tools.mcp.config import parse_server, tool_name
    from hermes_agent.tools.mcp.manager import McpManager, confiner
    from hermes_agent.tools.registry import ToolRegistry

    raw = settings.cfg.mcp_servers.get(args.name)
    if raw is None:
        raise ConfigError(f"no MCP server named {args.name!r} in config.yaml")
    try:
        cfg = parse_server(args.name, {**raw, "enabled": True}, settings.env)
        call_args = json.loads(args.args)
    except ValueError as exc:
        raise ConfigError(f"{args.name}: {exc}") from None
    reg = ToolRegistry()  # a private registry: testing never touches the agent's tools
    logging.getLogger("hermes_agent.tools.mcp").setLevel(logging.ERROR)  # the FAILED line says it once
    confine = confiner(settings)
    manager = McpManager([cfg], registry=reg, log_dir=Path(settings.home) / "logs" / "mcp", confine=confine)
    print(f"Connecting to {args.name} ({cfg.transport}: {cfg.target}) ...")
    if cfg.transport == "stdio":
        print(f"  {confine(cfg).describe()}")
    from hermes_agent.tools.mcp.confine import trust_line

    print(f"  {trust_line(cfg)}")
    t0 = time.perf_counter()
    try:
        ok = manager.start().wait_ready(cfg.connect_timeout + 5)
        status = manager.status().get(args.name)
        if not ok or status is None:
            why = (status.last_error if status else "") or manager.config_errors.get("*", "") or "timed out"
            print(f"FAILED after {(time.perf_counter() - t0) * 1000:.0f} ms: {why}", file=sys.stderr)
            return 1
        print(f"connected in {status.connect_ms:.0f} ms, tools listed in {status.list_ms:.0f} ms: "
              f"{len(status.tools)} tools")
        for entry in sorted(reg.entries(), key=lambda e: e.name):
            print(f"  {entry.name:<48} {entry.description[:70]}")
        if args.call:
            t1 = time.perf_counter()
            result = reg.dispatch(tool_name(args.name, args.call), call_args)
            print(f"call {args.call} ({(time.perf_counter() - t1) * 1000:.0f} ms): {result[:500]}")
        return 0
    finally:
        manager.shutdown()


_ACTIONS = {"list": _list, "add": _add, "remove": _remove, "test": _test}
