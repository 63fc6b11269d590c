"""web_extract and web_crawl through the real `hermes chat -q` (scripted model on loopback) against a
local site started by the test; the site is on loopback, so most tests allow private URLs and one
proves loopback is refused without that setting."""

from __future__ import annotations

import json

import pytest

from tests.fixtures.web_site import Site
from tests.helpers import model_config, run_hermes

pytest.importorskip("readability", reason="the [web] extra is not installed")
pytest.importorskip("pypdf", reason="the [web] extra is not installed")

ALLOW = "web:\n  allow_private_urls: true\n  timeout: 3\n  max_download_bytes: 1000000\n"


@pytest.fixture
def site():
    with Site() as s:
        yield s


def tool_results(request: dict) -> list[dict]:
    return [json.loads(m["content"]) for m in request["body"]["messages"] if m["role"] == "tool"]


def run_tool(scripted, home, tool: str, args: dict, extra: str = ALLOW) -> dict:
    model_config(home, scripted.url, extra=extra)
    scripted.add({"tool_calls": [{"name": tool, "arguments": args}]}, {"content": "done"})
    out = run_hermes("chat", "-q", "read it", "-t", "web", home=home, timeout=90)
    assert out.returncode == 0, out.stderr
    assert "done" in out.stdout
    return tool_results(scripted.requests[-1])[-1]


def test_article_becomes_clean_markdown_marked_untrusted(scripted, hermes_home, site):
    page = run_tool(scripted, hermes_home, "web_extract", {"urls": [f"{site.url}/article.html"]})["results"][0]
    text = page["content"]
    assert page["title"] == "Tidal Locking Explained"
    assert "# Tidal Locking Explained" in text and "## How it happens" in text
    assert "- Pluto and Charon are locked to each other." in text and "```\nperiod_rotation" in text
    assert "Popular" not in text and "tracker" not in text and "Copyright" not in text  # chrome dropped
    first, last = text.splitlines()[0], text.splitlines()[-1]
    assert "untrusted page text" in first and "not orders" in first
    assert last.startswith("<</web:") and first.split()[0][2:] == last[3:-2]  # matching random tag


def test_prompt_injection_stays_inside_the_untrusted_markers(scripted, hermes_home, site):
    text = run_tool(scripted, hermes_home, "web_extract", {"urls": [f"{site.url}/inject.html"]})["results"][0]["content"]
    lines = text.splitlines()
    where = next(i for i, line in enumerate(lines) if "ignore all previous instructions" in line)
    assert 0 < where < len(lines) - 1 and lines[-1].startswith("<</web:")
    assert "<</web:" not in "\n".join(lines[:-1])


def test_pdf_json_redirects_and_unsupported_types(scripted, hermes_home, site):
    urls = [f"{site.url}/report.pdf", f"{site.url}/data.json", f"{site.url}/r1", f"{site.url}/image.png",
            {"url": f"{site.url}/loop", "title": "a search hit passed whole"}]
    pdf, data, redirected, image, loop = run_tool(scripted, hermes_home, "web_extract", {"urls": urls})["results"]
    assert "Lighthouse count rose to 42 this quarter." in pdf["content"]
    assert '{"answer": 42}' in data["content"]
    assert redirected["url"] == f"{site.url}/article.html" and redirected["requested"] == f"{site.url}/r1"
    assert "Tidal locking happens" in redirected["content"]
    assert "unsupported content type 'image/png'" in image["error"]
    assert "too many redirects" in loop["error"]


def test_redirect_to_metadata_address_is_refused_even_when_private_urls_are_allowed(scripted, hermes_home, site):
    page = run_tool(scripted, hermes_home, "web_extract", {"urls": [f"{site.url}/to-metadata"]})["results"][0]
    assert page["error"].startswith("Blocked: 169.254.169.254 is a cloud metadata address")
    assert not any(r["path"].startswith("/latest") for r in site.requests)


def test_loopback_is_refused_without_allow_private_urls(scripted, hermes_home, site):
    page = run_tool(scripted, hermes_home, "web_extract", {"urls": [f"{site.url}/article.html"]},
                    extra="")["results"][0]
    assert "127.0.0.1 is a loopback address" in page["error"] and "web.allow_private_urls" in page["error"]
    assert "content" not in page and site.requests == []  # nothing was fetched


def test_huge_page_is_capped_and_cut_with_a_note_pointing_at_the_full_text(scripted, hermes_home, site):
    page = run_tool(scripted, hermes_home, "web_extract", {"urls": [f"{site.url}/huge.html"], "char_limit": 4000})
    text = page["results"][0]["content"]
    assert len(text) < 4500
    assert "chars omitted. Full text: read_file " in text
    assert "[download stopped at 1,000,000 bytes (web.max_download_bytes)]" in text
    saved = text.split("read_file ", 1)[1].split(" ...]")[0]
    full = open(saved, encoding="utf-8").read()
    assert saved.startswith(str(hermes_home / "cache" / "web")) and "Paragraph 9000 " in full


def test_slow_page_times_out_with_a_clear_error(scripted, hermes_home, site):
    extra = ALLOW.replace("timeout: 3", "timeout: 1")
    page = run_tool(scripted, hermes_home, "web_extract", {"urls": [f"{site.url}/slow.html"]}, extra)["results"][0]
    assert page["error"] == f"timed out after 1s fetching {site.url}/slow.html"


def test_long_page_is_summarised_by_the_auxiliary_model_only_when_enabled(scripted, hermes_home, site):
    model_config(hermes_home, scripted.url, extra=ALLOW + "  summarize: true\n")
    scripted.add({"tool_calls": [{"name": "web_extract", "arguments": {"urls": [f"{site.url}/huge.html"]}}]},
                 {"content": "The page repeats one sentence about the sea."}, {"content": "done"})
    out = run_hermes("chat", "-q", "read it", "-t", "web", home=hermes_home, timeout=90)
    assert out.returncode == 0, out.stderr
    prompt = scripted.requests[1]["body"]["messages"][-1]["content"]
    assert prompt.startswith("Summarise this web page") and "Paragraph 10 of the huge page" in prompt
    text = tool_results(scripted.requests[2])[0]["results"][0]["content"]
    assert "[Summary by the auxiliary model of a " in text and "one sentence about the sea" in text
    assert "Paragraph 10 " not in text


def test_crawl_walks_the_site_breadth_first_and_obeys_robots(scripted, hermes_home, site):
    result = run_tool(scripted, hermes_home, "web_crawl", {"url": f"{site.url}/site/", "max_depth": 2})
    visited = [p["url"].removeprefix(site.url) for p in result["pages"]]
    assert visited == ["/site/", "/site/a.html", "/site/b.html", "/site/c.html"]  # d.html is 3 hops away
    assert result["robots_disallowed"] == [f"{site.url}/site/private/secret.html"]
    assert all("untrusted page text" in p["content"] for p in result["pages"])
    assert "This is Page C" in result["pages"][3]["content"]
    fetched = [r["path"] for r in site.requests]
    assert "/site/private/secret.html" not in fetched and "/site/d.html" not in fetched
    assert fetched.count("/robots.txt") == 1


def test_crawl_respects_max_pages_and_reports_what_is_left(scripted, hermes_home, site):
    result = run_tool(scripted, hermes_home, "web_crawl", {"url": f"{site.url}/site/", "max_pages": 2})
    assert [p["title"] for p in result["pages"]] == ["Site home", "Page A"]
    assert result["unvisited"] >= 1


def test_crawl_refuses_loopback_without_allow_private_urls(scripted, hermes_home, site):
    result = run_tool(scripted, hermes_home, "web_crawl", {"url": f"{site.url}/site/"}, extra="")
    assert "loopback address" in result["error"] and site.requests == []


def test_tools_list_and_doctor_say_what_to_install_when_the_web_extra_is_missing(hermes_home):
    import subprocess
    import sys

    def hermes_without_pypdf(*args: str) -> str:
        code = ("import sys; sys.modules['pypdf'] = None\nfrom hermes_agent.cli.main import main\n"
                f"sys.exit(main({list(args)!r}))")
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60,
                             env={"HERMES_HOME": str(hermes_home), "PATH": "/usr/bin:/bin"})
        return out.stdout + out.stderr

    listing = hermes_without_pypdf("tools", "list")
    want = "requirement not met: the web extra (pip install 'hermes-agent[web]')"
    for tool in ("web_search", "web_extract", "web_crawl"):
        assert f"unavailable: {tool} — {want}" in listing
    assert f"tool web_extract unavailable: {want}" in hermes_without_pypdf("doctor")
    assert "ready: web_search, web_extract, web_crawl" in run_hermes("tools", "list", home=hermes_home).stdout
