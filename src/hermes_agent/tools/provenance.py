"""Provenance of a conversation: which tool results bring in content nobody vouches for (web and browser
pages, external MCP tools, network downloads), and which tool calls change what future sessions see
(memory, skills, cron jobs, config, plugins, context files). The approval gate asks before the second
kind once the first has happened (approval/gate.py: check_persist). Pure functions; regexes compiled
on first use."""

from __future__ import annotations

import functools
import os
import re
from collections.abc import Iterable

# Files loaded into the system prompt of later sessions (memory/context_files.py) and their cousins.
CONTEXT_FILES = ("AGENTS.md", "CLAUDE.md", ".hermes.md", "HERMES.md", "SOUL.md", ".cursorrules", ".windsurfrules")


def _hermes_home() -> str:
    from hermes_agent.paths import hermes_root

    return os.path.realpath(str(hermes_root()))


def path_persists(path: object, cwd: str | None = None, home: str | None = None) -> str | None:
    """What a write to `path` changes for future sessions (None: nothing they load)."""
    if not isinstance(path, str) or not path.strip():
        return None
    raw = os.path.expanduser(path.strip())
    real = os.path.realpath(raw if os.path.isabs(raw) else os.path.join(cwd or os.getcwd(), raw))
    name = os.path.basename(real)
    if name in CONTEXT_FILES:
        return f"the context file {name} (loaded into every future session's system prompt)"
    hh = home or _hermes_home()
    if real == hh or real.startswith(hh.rstrip("/") + "/"):
        rel = real[len(hh):].lstrip("/") or "."
        return f"the Hermes home ({rel}: config, memory, skills, plugins and cron jobs live there)"
    return None


@functools.cache
def _command_shapes() -> tuple[re.Pattern[str], re.Pattern[str], re.Pattern[str]]:
    names = "|".join(re.escape(n) for n in CONTEXT_FILES)
    target = re.compile(rf"(?:^|[\s/'\"=<>])(?:{names})(?=$|[\s'\";|&)>])|\$\{{?HERMES_HOME\b|~/\.hermes\b")
    saves = re.compile(r"\bhermes\s+(?:--?\S+(?:\s+[^-\s]\S*)?\s+)*(?:config\s+(?:set|edit|migrate)|"
                       r"plugins?\s+(?:install|enable)|skills?\s+(?:install|tap)|cron\s+(?:add|create|edit)|memory\b|"
                       r"mcp\s+add)")
    writes = re.compile(r">|\btee\b|\bsed\s+(?:-\w*\s+)*-i|\bperl\s+-\w*i|\b(?:cp|mv|ln|install|rsync|dd|truncate|"
                        r"rm|unlink|touch|patch|python\d?(?:\.\d+)?|node|ruby|perl|awk|ed|vi|vim|nano|curl|wget)\b|"
                        r"\bgit\s+(?:apply|checkout|restore|am|pull|merge|mv|stash)\b|\bopen\s*\(|\.write|write_text|"
                        r"write_bytes|shutil\.|os\.(?:rename|replace|symlink|link)|subprocess|appendFile|writeFile")
    return target, saves, writes


_SAVED_TEXT = {"write_file": ("content",), "patch": ("new_string", "patch", "diff"), "cronjob": ("prompt",)}
_STANDING_RUN = "standing order to run something"  # what context files and cron prompts are for


def written_instruction(tool: str, args: dict) -> str:
    """Why the text a call saves for later sessions — a context file's new text, a cron job's prompt — reads as an
    injected instruction (the intent scan: code from the network, secrets sent out, hidden from the user, safety
    off), "" when it does not. The second layer under provenance (rt13 a36: a tool description nobody flagged
    asked for it). Standing orders to run something are what such files hold, and are not judged."""
    keys = _SAVED_TEXT.get(tool)
    if not keys or not isinstance(args, dict):
        return ""
    if tool != "cronjob":
        from hermes_agent.tools.builtin.files import written_paths

        if not any(os.path.basename(p) in CONTEXT_FILES for p in written_paths(args)):
            return ""
    text = "\n".join(str(args[k]) for k in keys if isinstance(args.get(k), str))[:50_000]
    if not text.strip():
        return ""
    from hermes_agent import intent

    hits = [h for h in intent.scan(text) if h.kind != _STANDING_RUN]
    return f"the text it would save, which reads as an instruction ({hits[0].kind}: \"{hits[0].quote[:60]}\")" \
        if hits else ""


def described_by_untrusted(names: Iterable[str], reg: object) -> str:
    """Who the untrusted tool descriptions among `names` come from ("" if none): an MCP server not marked trusted
    wrote its tools' descriptions, titles, enums and defaults, and the model reads them all, in the request's tool
    list or in a tool_search result (rt13 a36, a60). Whatever they say, they are untrusted content."""
    servers: dict[str, None] = {}
    for name in names:
        entry = reg.get(name)  # type: ignore[attr-defined]
        if entry is not None and entry.toolset.startswith("mcp-") and entry.brings_untrusted({}):
            servers[entry.toolset.removeprefix("mcp-")] = None
    if len(servers) == 1:
        server = next(iter(servers))
        return (f"the tool descriptions of MCP server {server!r}, which is not marked trusted; "
                f"set mcp_servers.{server}.trusted: true in config.yaml if you vouch for it")
    if servers:
        return (f"the tool descriptions of MCP servers {', '.join(map(repr, sorted(servers)))}, which are not marked "
                "trusted; set mcp_servers.NAME.trusted: true in config.yaml for each you vouch for")
    return ""


def command_persists(text: object, home: str | None = None) -> str | None:
    """What a shell command or a script would change for future sessions, where the text shows it: a
    `hermes` subcommand that saves, or a write shape together with a context file or the Hermes home."""
    if not isinstance(text, str) or not text.strip():
        return None
    target, saves, writes = _command_shapes()
    saved = saves.search(text)
    if saved:
        return f"`{saved.group(0)}` (read by future sessions)"
    hh = home or _hermes_home()
    hit = target.search(text)
    if not (hit or hh in text) or not writes.search(text):
        return None
    what = hit.group(0).strip(" /'\"=<>") if hit else hh
    return f"{what} (read by future sessions)"


@functools.cache
def _network_fetch() -> re.Pattern[str]:
    return re.compile(r"\b(?:curl|wget|aria2c|lynx|w3m|links|http|https|xh|fetch|yt-dlp|scp|sftp|rsync|ftp|"
                      r"nc|ncat|socat|telnet|gh|hub)\b(?![=/])|\bgit\s+(?:clone|pull|fetch|submodule)\b|"
                      r"\b(?:pip\d?|uv\s+pip|npm|pnpm|yarn|cargo|go)\s+(?:download|view|info|show)\b|"
                      r"https?://|urllib|requests\.|httpx|aiohttp|socket\.|urlopen|fetch\s*\(")


def fetches_network(text: object) -> bool:
    """Does this command or script text bring content in from the network (downloads, pages, clones)?"""
    return isinstance(text, str) and bool(_network_fetch().search(text))


# -- the `persists` trait of the built-in tools ---------------------------------------------------

USER_PROFILE = "the user profile (USER.md)"


def memory_persists(args: dict) -> str | None:
    if args.get("action") not in ("add", "replace", "remove"):
        return None
    return USER_PROFILE if args.get("target") == "user" else "persistent memory (MEMORY.md)"


def skill_persists(args: dict) -> str | None:
    return f"the skill {str(args.get('name') or '?')!r} (its description enters every future system prompt)"


def cron_persists(args: dict) -> str | None:
    action = str(args.get("action") or "")
    return None if action in ("list", "") else f"a scheduled cron job ({action})"


# A team member's own cron jobs: the cronjob tool lets them touch only jobs they made, which run as them.
OWN_CRON_JOBS = frozenset(f"a scheduled cron job ({a})" for a in ("create", "update", "pause", "resume", "run",
                                                                   "remove"))


def terminal_persists(args: dict) -> str | None:
    return command_persists(args.get("command"))


def code_persists(args: dict) -> str | None:
    return command_persists(args.get("code"))


def terminal_fetches(args: dict) -> bool:
    return fetches_network(args.get("command"))


def code_fetches(args: dict) -> bool:
    return fetches_network(args.get("code"))
