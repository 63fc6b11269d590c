"""Start-up budget (issue 24): modules imported, regular expressions compiled and dataclasses built by
`hermes --version`, `hermes --help` and by `hermes chat -q` up to its first model request, each against bench/budgets.json.
Counts, not clocks: the same code gives the same figures on any machine. A change that needs more raises
the budget on purpose, in the same commit, saying why."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
BUDGETS = json.loads((ROOT / "bench" / "budgets.json").read_text(encoding="utf-8"))
KEYS = ("modules", "regexes", "dataclasses")


def _counts(what: str, home: Path, seeding: bool = False) -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "OPENROUTER_", "HERMES_"))}
    env["HERMES_HOME"] = str(home)
    proc = subprocess.run([sys.executable, str(ROOT / "bench" / "startup_counts.py"), what], capture_output=True,
                          text=True, env=env, timeout=60, stdin=subprocess.DEVNULL)
    if seeding and what == "keptprompt":  # this first run keeps the banner and leaves before counting
        assert proc.returncode == 3, proc.stderr[-2000:]
        return {}
    assert proc.returncode == 0, proc.stderr[-2000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize("what", ["version", "help", "chat", "prompt", "keptprompt"])
def test_start_up_stays_within_its_budget(what: str, hermes_home: Path) -> None:
    # the model URL is never reached: the count is taken as the first request's connection starts
    (hermes_home / "config.yaml").write_text("model:\n  provider: custom\n  default: budget-model\n"
                                             "  base_url: http://127.0.0.1:9/v1\n  api_key: k\n", encoding="utf-8")
    if what in ("chat", "prompt", "keptprompt"):
        _counts(what, hermes_home, seeding=True)  # a first run seeds the bundled skills and caches config.yaml as JSON; the
        # budget is for every run after
    got = _counts(what, hermes_home)
    budget = BUDGETS[what]
    print(f"{what}: " + ", ".join(f"{k} {got[k]} (budget {budget[k]})" for k in KEYS))
    over = [f"{k}: {got[k]} > {budget[k]}" for k in KEYS if got[k] > budget[k]]
    assert not over, (f"`hermes {what}` start-up grew ({'; '.join(over)}). Import the new thing where it is first "
                      f"used, compile its regexes with hermes_agent.lazyre, or raise bench/budgets.json on "
                      f"purpose. hermes modules now: {got['hermes_module_names']}")


def test_chat_builds_every_dataclass_with_the_cached_methods(hermes_home: Path) -> None:
    # dccache.install() comes before the parser imports the command module and its settings' dataclasses: a
    # dataclass built before it compiles its methods from source on every start (issue 24, speed13: ~5 M
    # instructions to the first request when the settings' two came first)
    (hermes_home / "config.yaml").write_text("model:\n  provider: custom\n  default: budget-model\n"
                                             "  base_url: http://127.0.0.1:9/v1\n  api_key: k\n", encoding="utf-8")
    got = _counts("chat", hermes_home)
    assert got["dataclasses"] > 0 and got["dataclasses_before_cache"] == 0, got


def test_memories_are_judged_once_not_on_every_start(hermes_home: Path) -> None:
    # a home with memories (memory/verdicts.py): the scan, directives and intent rules (~70 regexes, ~370 M
    # instructions) ran on every start; after the first run judged the entries, their verdict is reused
    (hermes_home / "config.yaml").write_text("model:\n  provider: custom\n  default: budget-model\n"
                                             "  base_url: http://127.0.0.1:9/v1\n  api_key: k\n", encoding="utf-8")
    (hermes_home / "memories").mkdir()
    (hermes_home / "memories" / "MEMORY.md").write_text(
        "The user prefers concise answers.\n§\nTests run with `pytest -q`.\n§\nThe user uses Debian.", encoding="utf-8")
    (hermes_home / "memories" / "USER.md").write_text("Name: Alex.\n§\nLikes short summaries.", encoding="utf-8")
    first = _counts("chat", hermes_home)  # judges the entries (and seeds the caches)
    assert "hermes_agent.intent" in first["hermes_module_names"]
    got = _counts("chat", hermes_home)
    budget = BUDGETS["chat_memories"]
    print("chat_memories: " + ", ".join(f"{k} {got[k]} (budget {budget[k]})" for k in KEYS))
    assert [k for k in KEYS if got[k] > budget[k]] == [], got
    assert not {"hermes_agent.intent", "hermes_agent.intent_chain", "hermes_agent.memory.directives"} & \
        set(got["hermes_module_names"])


def test_gateway_polls_before_loading_http_client_or_the_session_store(hermes_home: Path) -> None:
    # `hermes gateway run` up to its first Bot API call: our Telegram client is HTTP/1.1 on a socket (no
    # http.client, email), the chat -> session index (storage, sqlite3) is made after the first poll
    (hermes_home / "config.yaml").write_text("model:\n  provider: custom\n  default: budget-model\n"
                                             "  base_url: http://127.0.0.1:9/v1\n  api_key: k\nplatforms:\n  telegram:\n"
                                             "    extra:\n      base_url: http://127.0.0.1:9/bot\n", encoding="utf-8")
    _counts("gateway", hermes_home)  # the first run caches config.yaml as JSON
    got = _counts("gateway", hermes_home)
    budget = BUDGETS["gateway"]
    print("gateway: " + ", ".join(f"{k} {got[k]} (budget {budget[k]})" for k in KEYS))
    assert [k for k in KEYS if got[k] > budget[k]] == [], got
    assert "http.client" not in got["heavy_imported"] and "email" not in got["heavy_imported"]
    assert [m for m in got["hermes_module_names"] if m.startswith("hermes_agent.storage")] == []


def test_gateway_on_telegrams_own_api_is_counted_up_to_its_first_lookup(hermes_home: Path) -> None:
    # the home as a user has it (no platforms section: Telegram at api.telegram.org over https): the count is taken
    # at the first Bot API call's name lookup, so it ends offline too (it waited for DNS forever before speed15)
    (hermes_home / "config.yaml").write_text("model:\n  provider: custom\n  default: budget-model\n"
                                             "  base_url: http://127.0.0.1:9/v1\n  api_key: k\n", encoding="utf-8")
    _counts("gateway", hermes_home)  # the first run caches config.yaml as JSON
    got = _counts("gateway", hermes_home)
    budget = BUDGETS["gateway_default"]
    print("gateway_default: " + ", ".join(f"{k} {got[k]} (budget {budget[k]})" for k in KEYS))
    assert [k for k in KEYS if got[k] > budget[k]] == [], got
    assert "http.client" not in got["heavy_imported"] and "email" not in got["heavy_imported"]


def test_version_imports_nothing_of_the_agent(hermes_home: Path) -> None:
    got = _counts("version", hermes_home)
    assert got["hermes_module_names"] == ["hermes_agent", "hermes_agent.cli", "hermes_agent.cli.main"]


def test_help_imports_no_command_module(hermes_home: Path) -> None:
    # the top-level help lists every subcommand from main.SUMMARIES: no command module, storage, skills or cron
    got = _counts("help", hermes_home)
    assert got["hermes_module_names"] == ["hermes_agent", "hermes_agent.cli", "hermes_agent.cli.commands",
                                          "hermes_agent.cli.main", "hermes_agent.cli.run_flags", "hermes_agent.errors"]


def test_chat_sends_its_first_request_without_importing_a_tool_module(hermes_home: Path) -> None:
    # the builtin tools come from tools/builtin_manifest.json; a tool's module loads when the model calls it
    (hermes_home / "config.yaml").write_text("model:\n  provider: custom\n  default: budget-model\n"
                                             "  base_url: http://127.0.0.1:9/v1\n  api_key: k\n", encoding="utf-8")
    got = _counts("chat", hermes_home)
    tool_modules = [m for m in got["hermes_module_names"] if m.startswith("hermes_agent.tools.builtin.")
                    and not m.rsplit(".", 1)[1].startswith("_")]
    assert tool_modules == []
    assert "hermes_agent.tools.manifest" in got["hermes_module_names"]


def test_chat_to_a_plain_http_endpoint_loads_no_tls_and_no_email_package(hermes_home: Path) -> None:
    # the provider speaks HTTP/1.1 on a socket (providers/http11.py): http.client pulled email (~9 ms) and ssl
    # (~7 ms) into every run; ssl now loads only for an https endpoint
    (hermes_home / "config.yaml").write_text("model:\n  provider: custom\n  default: budget-model\n"
                                             "  base_url: http://127.0.0.1:9/v1\n  api_key: k\n", encoding="utf-8")
    got = _counts("chat", hermes_home)
    assert got["heavy_imported"] == []



def test_the_interactive_prompt_shows_before_anything_of_the_agent_loads(hermes_home: Path) -> None:
    # the banner and the early prompt symbol come right after settings: no agent, provider, tool, sandbox, store,
    # approval rule or line editor before it (issue 24: interactive prompt ready)
    (hermes_home / "config.yaml").write_text("model:\n  provider: custom\n  default: budget-model\n"
                                             "  base_url: http://127.0.0.1:9/v1\n  api_key: k\n", encoding="utf-8")
    _counts("prompt", hermes_home)  # the first run caches config.yaml as JSON
    got = _counts("prompt", hermes_home)
    heavy = ("bootstrap", "core", "providers", "tools", "terminal", "storage", "approval", "memory", "skills", "events")
    loaded = [m for m in got["hermes_module_names"] if m.split(".")[1:2] and m.split(".")[1] in heavy]
    assert loaded == [], loaded
    assert "hermes_agent.cli.banner" in got["hermes_module_names"]
    assert got["heavy_imported"] == []  # prompt_toolkit, asyncio, http.client, ssl: none yet


def test_a_kept_banner_shows_the_prompt_before_argparse_and_the_settings(hermes_home: Path) -> None:
    # a plain `hermes` on a terminal whose last run kept its banner (cli/fast_prompt.py): the prompt and the first
    # line's editor come before argparse, the settings and their schema (issue 24: prompt ready <= 0.15 s)
    (hermes_home / "config.yaml").write_text("model:\n  provider: custom\n  default: budget-model\n"
                                             "  base_url: http://127.0.0.1:9/v1\n  api_key: k\n", encoding="utf-8")
    _counts("keptprompt", hermes_home, seeding=True)
    got = _counts("keptprompt", hermes_home)
    assert got["hermes_module_names"] == ["hermes_agent", "hermes_agent.cli", "hermes_agent.cli.early_line",
                                          "hermes_agent.cli.fast_prompt", "hermes_agent.cli.main"]
