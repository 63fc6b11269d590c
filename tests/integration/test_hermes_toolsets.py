"""Every toolset name Hermes 0.19 has resolves here, to the tools this hermes has (the rest named once)."""

from __future__ import annotations

import pytest

from tests.helpers import model_config, run_hermes

HERMES_TOOLSETS = [
    "web", "search", "x_search", "vision", "video", "image_gen", "video_gen", "computer_use", "terminal", "skills",
    "browser", "cronjob", "file", "tts", "todo", "memory", "context_engine", "session_search", "project",
    "clarify", "code_execution", "delegation", "homeassistant", "kanban", "discord", "discord_admin", "yuanbao",
    "feishu_doc", "feishu_drive", "spotify", "debugging", "safe", "coding", "hermes-acp", "hermes-api-server",
    "hermes-cli", "hermes-cron", "hermes-telegram", "hermes-discord", "hermes-whatsapp", "hermes-slack",
    "hermes-signal", "hermes-bluebubbles", "hermes-homeassistant", "hermes-email", "hermes-mattermost",
    "hermes-matrix", "hermes-dingtalk", "hermes-feishu", "hermes-weixin", "hermes-qqbot", "hermes-wecom",
    "hermes-wecom-callback", "hermes-yuanbao", "hermes-sms", "hermes-webhook", "hermes-gateway",
]


def test_tools_list_shows_every_hermes_toolset_and_which_are_partial(hermes_home):
    out = run_hermes("tools", "list", home=hermes_home)
    assert out.returncode == 0, out.stderr
    listed = {ln[4:].split()[0] for ln in out.stdout.splitlines() if ln[:3] in ("[x]", "[~]", "[ ]")}
    assert len(HERMES_TOOLSETS) == 57 and set(HERMES_TOOLSETS) <= listed
    coding = next(ln for ln in out.stdout.splitlines() if ln[4:].startswith("coding "))
    assert "(partial: " in coding and " of 33 tools here)" in coding  # how many depends on the extras installed
    assert "(none of its tools here yet)" in next(ln for ln in out.stdout.splitlines() if " spotify " in ln)


def test_coding_toolset_gives_the_tools_we_have_and_names_the_rest_once(scripted, hermes_home):
    model_config(hermes_home, scripted.url)
    scripted.add({"content": "ok"})
    out = run_hermes("chat", "-q", "hi", "-t", "coding,safe", home=hermes_home)
    assert out.returncode == 0, out.stderr
    sent = sorted(t["function"]["name"] for t in scripted.requests[0]["body"]["tools"])
    sent = [n for n in sent if not n.startswith("browser_")]  # there when Chromium is (test_browser_chat.py)
    # process is offered once terminal has been called (it manages terminal's background processes)
    assert sent == sorted(["terminal", "read_file", "write_file", "patch", "search_files", "skills_list",
                           "skill_view", "skill_manage", "todo", "memory", "session_search", "clarify",
                           "delegate_task", "web_search", "web_extract", "web_crawl", "execute_code",
                           "vision_analyze"])
    missing = [ln for ln in out.stderr.splitlines() if "not in this hermes" in ln]
    assert len(missing) == 1, out.stderr
    assert missing[0].startswith("· toolset coding: not in this hermes, left out: read_terminal, ")
    assert missing[0].count("browser_cdp") == 1  # named once, though coding and safe both list it
    assert "web_search" not in missing[0] and "vision_analyze" not in missing[0] and "image_generate" not in missing[0]


@pytest.mark.parametrize("name", ["image_gen", "spotify"])
def test_a_toolset_with_none_of_its_tools_here_says_so(scripted, hermes_home, name):
    model_config(hermes_home, scripted.url)
    scripted.add({"content": "ok"})
    out = run_hermes("chat", "-q", "hi", "-t", name, home=hermes_home)
    assert out.returncode == 0, out.stderr
    assert sum(f"toolset {name!r} has no usable tool here" in ln for ln in out.stderr.splitlines()) == 1
    assert "not in this hermes" not in out.stderr and "tools" not in scripted.requests[0]["body"]


def test_default_toolset_runs_without_a_missing_tools_warning(scripted, hermes_home):
    model_config(hermes_home, scripted.url)
    scripted.add({"content": "ok"})
    out = run_hermes("chat", "-q", "hi", home=hermes_home)
    assert out.returncode == 0 and "not in this hermes" not in out.stderr, out.stderr
