"""web_search against local HTTP fakes of each keyed search API (request shape, auth, parsed hits), the
backend choice, and the keyless ddgs backend's error when the search engines cannot be reached."""

from __future__ import annotations

import json

import pytest

from hermes_agent.config.settings import Settings
from hermes_agent.tools.context import ToolContext
from hermes_agent.tools.registry import discover_builtin_tools, registry
from tests.fixtures.web_site import Site, query_of
from tests.helpers import model_config, run_hermes

pytest.importorskip("ddgs", reason="the [web] extra is not installed")


@pytest.fixture
def site():
    with Site() as s:
        yield s


def search(env: dict, web: dict | None = None, **args: object) -> dict:
    discover_builtin_tools()
    ctx = ToolContext(settings=Settings(data={"web": web or {}}, env=env))
    return json.loads(registry.dispatch("web_search", {"query": "tidal locking", **args}, ctx=ctx))


def hit(result: dict) -> dict:
    assert result["success"] is True, result
    assert len(result["data"]["web"]) == 1
    return result["data"]["web"][0]


def test_brave(site):
    env = {"BRAVE_SEARCH_API_KEY": "bk-1", "BRAVE_BASE_URL": f"{site.url}/brave"}
    got = hit(search(env, {"backend": "brave-free"}, limit=3))
    assert got == {"title": "Brave hit", "url": "https://a.example/1", "description": "from brave"}
    req = site.requests[0]
    assert req["method"] == "GET" and req["path"].startswith("/brave/res/v1/web/search?")
    assert query_of(req) == {"q": "tidal locking", "count": "3"}
    assert req["headers"]["x-subscription-token"] == "bk-1"


def test_tavily(site):
    env = {"TAVILY_API_KEY": "tvly-2", "TAVILY_BASE_URL": f"{site.url}/tavily"}
    assert hit(search(env, {"search_backend": "tavily"}))["description"] == "from tavily"
    req = site.requests[0]
    assert (req["method"], req["path"]) == ("POST", "/tavily/search")
    assert req["headers"]["authorization"] == "Bearer tvly-2"
    assert req["json"] == {"query": "tidal locking", "max_results": 5}


def test_exa(site):
    env = {"EXA_API_KEY": "exa-3", "EXA_BASE_URL": f"{site.url}/exa"}
    assert hit(search(env, {"backend": "exa"}, limit=2)) == {
        "title": "Exa hit", "url": "https://a.example/3", "description": "from exa"}
    req = site.requests[0]
    assert (req["method"], req["path"], req["headers"]["x-api-key"]) == ("POST", "/exa/search", "exa-3")
    assert req["json"] == {"query": "tidal locking", "numResults": 2, "contents": {"highlights": True}}


def test_firecrawl(site):
    env = {"FIRECRAWL_API_KEY": "fc-4", "FIRECRAWL_API_URL": f"{site.url}/firecrawl"}
    assert hit(search(env, {"backend": "firecrawl"}))["title"] == "Firecrawl hit"
    req = site.requests[0]
    assert (req["method"], req["path"], req["headers"]["authorization"]) == ("POST", "/firecrawl/v2/search", "Bearer fc-4")
    assert req["json"] == {"query": "tidal locking", "limit": 5}


def test_searxng_by_url_best_score_first(site):
    result = search({"SEARXNG_URL": f"{site.url}/searx"}, {"backend": "searxng"}, limit=2)
    assert [h["title"] for h in result["data"]["web"]] == ["SearXNG hit", "low"]
    req = site.requests[0]
    assert query_of(req) == {"q": "tidal locking", "format": "json", "pageno": "1"}


def test_first_backend_with_a_key_is_used_when_none_is_configured(site):
    env = {"SEARXNG_URL": f"{site.url}/searx", "TAVILY_API_KEY": "t", "TAVILY_BASE_URL": f"{site.url}/tavily"}
    assert search(env)["data"]["web"][0]["title"] == "Tavily hit"  # Hermes's order: tavily before searxng


def test_configured_backend_without_its_key_says_what_to_set():
    result = search({}, {"backend": "brave"})
    assert result == {"error": "web search backend 'brave' needs BRAVE_SEARCH_API_KEY "
                               "(set it with `hermes config set BRAVE_SEARCH_API_KEY ...`)", "success": False}
    assert "known: tavily, exa, firecrawl, searxng, brave, ddgs" in search({}, {"backend": "bing"})["error"]


def test_api_error_status_is_reported(site):
    env = {"BRAVE_SEARCH_API_KEY": "k", "BRAVE_BASE_URL": f"{site.url}/nothing-here"}
    assert search(env, {"backend": "brave"})["error"].startswith("brave search failed: HTTP 404")


def test_ddgs_unreachable_gives_a_clear_error_through_the_cli(scripted, hermes_home):
    model_config(hermes_home, scripted.url)
    scripted.add({"tool_calls": [{"name": "web_search", "arguments": {"query": "hermes agent"}}]},
                 {"content": "no luck"})
    # ddgs's own HTTP client (primp) honours DDGS_PROXY: a closed loopback port makes every engine unreachable
    out = run_hermes("chat", "-q", "search", "-t", "web", home=hermes_home, env={"DDGS_PROXY": "http://127.0.0.1:9"},
                     timeout=120)
    assert out.returncode == 0, out.stderr
    tool = [m for m in scripted.requests[1]["body"]["messages"] if m["role"] == "tool"][0]
    error = json.loads(tool["content"])["error"]
    assert error.startswith("DuckDuckGo search (ddgs) failed: ")
    assert "set web.search_backend to brave, tavily, exa, firecrawl or searxng" in error


def test_schemas_are_at_most_half_of_hermes():
    discover_builtin_tools()
    size = {n: len(json.dumps(registry.get(n).definition()["function"], separators=(",", ":")))
            for n in ("web_search", "web_extract")}
    assert size["web_search"] <= 735 // 2 and size["web_extract"] <= 1062 // 2, size  # Hermes 0.19: 735, 1062
