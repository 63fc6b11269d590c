"""`hermes dashboard` as a real process on a home filled by real `hermes chat -q` turns (scripted model server)
and `hermes cron create`, driven by headless Debian Chromium through playwright: sign-in, search, a
conversation with its tool call, pausing a job, running it, a refused and a saved config edit, escaping."""

from __future__ import annotations

import http.client
import json
import os
import shutil
import subprocess
import time
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path

import pytest

from hermes_agent.providers.scripted import ScriptedServer
from tests.helpers import HERMES, model_config, run_hermes

pytest.importorskip("aiohttp")
sync_api = pytest.importorskip("playwright.sync_api")
CHROMIUM = os.environ.get("HERMES_CHROMIUM") or shutil.which("chromium")
pytestmark = [pytest.mark.skipif(not CHROMIUM, reason="chromium is not installed (CI: .ci/install-chromium.sh)"),
              pytest.mark.xdist_group("dashboard")]  # one dashboard and browser per module, on one worker
ARGS = ["--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking",
        "--disable-component-update", "--disable-sync"]
PAYLOAD = "<script>document.title='PWNED'</script><img src=x onerror=\"document.title='PWNED'\"> marmoset"
PAGES = ("/sessions", "/sessions?q=quokka", "/cron", "/gateway", "/usage", "/config", "/skills", "/memory")


@dataclass
class Site:
    url: str  # the printed sign-in URL with the token
    base: str
    home: Path
    browser: object
    scripted: ScriptedServer


def _env(home: Path) -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "OPENROUTER_", "HERMES_", "DASHBOARD_"))}
    return {**env, "HERMES_HOME": str(home)}


def _seed(home: Path, scripted: ScriptedServer) -> None:
    """Two real chat sessions (one with a tool call, one with HTML in it), a cron job, memory, a skill, and
    the state file a running gateway writes."""
    model_config(home, scripted.url, "# keep this comment\n")
    scripted.add({"tool_calls": [{"name": "todo", "arguments": {"todos": [
        {"id": "1", "content": "feed the quokka", "status": "in_progress"}]}}]},
        {"content": "Planned the quokka feeding."})
    assert run_hermes("chat", "-q", "plan the quokka feeding", home=home).returncode == 0
    scripted.add({"content": "echo: <b>bold</b> marmoset"})
    assert run_hermes("chat", "-q", PAYLOAD, home=home).returncode == 0
    assert run_hermes("cron", "create", "every 1h", "water the plants", "--name", "plants", home=home).returncode == 0
    (home / "memories").mkdir(exist_ok=True)
    (home / "memories" / "MEMORY.md").write_text("The user keeps quokkas.\n§\nTests run with pytest.", encoding="utf-8")
    (home / "skills" / "demo").mkdir(parents=True)
    (home / "skills" / "demo" / "SKILL.md").write_text(
        "---\nname: demo\ndescription: A demo skill for the dashboard.\n---\n# Demo\nStep one: <look>.\n",
        encoding="utf-8")
    (home / "gateway").mkdir()
    (home / "gateway" / "gateway_state.json").write_text(json.dumps({
        "pid": os.getpid(), "running": True, "started_at": time.time() - 60, "updated_at": time.time(),
        "platforms": {"telegram": {"connected": True, "bot": "hermes_bot", "unanswered": 0,
                                   "last_error": "getUpdates timed out once"}}, "sessions": 3, "busy": 1}))


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    scripted = ScriptedServer().start()
    home = tmp_path_factory.mktemp("dashboard") / "home"
    home.mkdir()
    _seed(home, scripted)
    proc = subprocess.Popen([HERMES, "dashboard", "--port", "0", "--no-open"], env=_env(home),
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    line = proc.stdout.readline()
    assert "listening on http://127.0.0.1:" in line, line
    url = line.split("listening on ", 1)[1].strip()
    pw = sync_api.sync_playwright().start()
    browser = pw.chromium.launch(executable_path=CHROMIUM, args=ARGS)
    yield Site(url, url.split("/?", 1)[0], home, browser, scripted)
    browser.close()
    pw.stop()
    proc.terminate()
    proc.wait(timeout=20)
    scripted.stop()


@pytest.fixture
def page(site):
    """A fresh browser context (no cookies) signed in through the printed URL."""
    context = site.browser.new_context()
    tab = context.new_page()
    tab.goto(site.url)
    yield tab
    context.close()


def _status(url: str, data: bytes | None = None, headers: dict | None = None) -> tuple[int, str]:
    req = urllib.request.Request(url, data=data, headers=headers or {})
    try:
        with urllib.request.urlopen(req, timeout=10) as resp:
            return resp.status, resp.read().decode()
    except urllib.error.HTTPError as err:
        return err.code, err.read().decode()


def test_without_the_token_every_page_asks_to_sign_in(site):
    for path in PAGES:
        code, body = _status(site.base + path)
        assert code == 401 and "Sign in" in body and "quokka" not in body, path
    assert _status(site.base + "/sessions?token=wrong")[0] == 401
    assert _status(site.base + "/cron/x/pause", b"csrf=x", {"Origin": site.base})[0] == 401


def test_login_form_takes_the_token_and_sets_a_strict_httponly_cookie(site):
    context = site.browser.new_context()
    tab = context.new_page()
    tab.goto(site.base + "/sessions")
    assert tab.locator("h1").inner_text() == "Sign in"
    tab.fill("input[name=token]", "not-the-token")
    tab.click("button")
    assert "not the one this dashboard printed" in tab.content()
    tab.fill("input[name=token]", site.url.split("token=", 1)[1])
    tab.click("button")
    assert tab.locator("h1").inner_text() == "Sessions"
    cookie = next(c for c in context.cookies() if c["name"] == "hermes_dashboard")
    assert cookie["httpOnly"] and cookie["sameSite"] == "Strict"
    context.close()


def test_sessions_list_and_full_text_search(page, site):
    assert page.url == site.base + "/sessions"  # the token left the address bar
    rows = page.locator("tbody tr")
    assert rows.count() == 2
    assert "cli" in rows.first.inner_text() and "scripted-model" in rows.first.inner_text()
    page.fill("input[name=q]", "quokka")
    page.click("text=Search")
    assert "1 session(s) match" in page.inner_text("main")
    assert page.locator("mark").first.inner_text().lower() == "quokka"
    page.fill("input[name=q]", "nothingmatchesthis")
    page.click("text=Search")
    assert "No session matches" in page.inner_text("main")


def test_conversation_shows_the_tool_call_and_its_result(page):
    page.click("a:has-text('plan the quokka feeding')")
    text = page.inner_text("main")
    assert "tool call todo" in text and '"content": "feed the quokka"' in text
    assert "tool result: todo" in text and "Planned the quokka feeding." in text
    assert page.locator(".msg.tool").count() == 1


def test_html_in_a_session_renders_as_text(page):
    page.goto(page.url.split("/sessions")[0] + "/sessions?q=marmoset")
    page.click("tbody a")
    assert page.title() != "PWNED"
    main = page.locator("main")
    assert "<script>document.title='PWNED'</script>" in main.inner_text()
    assert "echo: <b>bold</b> marmoset" in main.inner_text()
    assert main.locator("script, img, pre b").count() == 0
    assert page.locator("script").count() == 0


def _jobs(home: Path) -> list[dict]:
    return json.loads((home / "cron" / "jobs.json").read_text(encoding="utf-8"))["jobs"]


def test_pausing_and_resuming_a_job_in_the_browser_changes_jobs_json(page, site):
    page.click("text=Cron")
    assert "plants" in page.inner_text("tbody") and _jobs(site.home)[0]["enabled"] is True
    page.click("button:has-text('Pause')")
    assert "paused" in page.locator("[role=status]").inner_text()
    job = _jobs(site.home)[0]
    assert job["enabled"] is False and job["state"] == "paused"
    page.click("button:has-text('Resume')")
    assert _jobs(site.home)[0]["enabled"] is True and _jobs(site.home)[0]["state"] == "scheduled"


def test_run_now_runs_the_job_and_shows_its_output(page, site):
    site.scripted.add({"content": "The plants are watered."})
    page.click("text=Cron")
    page.click("button:has-text('Run now')")
    assert "started" in page.locator("[role=status]").inner_text()
    deadline = time.time() + 60
    while _jobs(site.home)[0]["last_status"] is None and time.time() < deadline:  # recorded after the output
        time.sleep(0.2)
    assert _jobs(site.home)[0]["last_status"] == "ok"
    page.reload()
    assert "ok" in page.locator("tbody tr").first.inner_text()
    page.click("summary:has-text('Last output of plants')")
    assert "The plants are watered." in page.inner_text("details")


def test_config_edit_refuses_a_bad_value_and_writes_a_good_one(page, site):
    cfg = site.home / "config.yaml"
    before = cfg.read_text(encoding="utf-8")
    page.click("text=Config")
    assert "****" in page.inner_text("main") and "test-key" not in page.content()  # model.api_key masked
    page.click("a[href='/config?key=agent.max_turns']")  # a key's link fills the form with its value
    assert page.input_value("input[name=key]") == "agent.max_turns" and page.input_value("input[name=value]") == "90"
    page.fill("input[name=value]", "lots")
    page.click("button:has-text('Save')")
    assert "agent.max_turns must be an integer >= 1, got 'lots'" in page.locator(".err").inner_text()
    assert cfg.read_text(encoding="utf-8") == before
    page.fill("input[name=key]", "agent.max_turnz")
    page.fill("input[name=value]", "5")
    page.click("button:has-text('Save')")
    assert "did you mean agent.max_turns" in page.locator(".err").inner_text()
    page.fill("input[name=key]", "agent.max_turns")
    page.fill("input[name=value]", "42")
    page.click("button:has-text('Save')")
    assert "Saved agent.max_turns." in page.locator("[role=status]").inner_text()
    after = cfg.read_text(encoding="utf-8")
    assert "max_turns: 42" in after and "# keep this comment" in after
    assert run_hermes("config", "get", "agent.max_turns", home=site.home).stdout.strip() == "42"


def test_gateway_usage_skills_and_memory_pages(page, site):
    page.click("text=Gateway")
    text = page.inner_text("main")
    assert "running" in text and "telegram" in text and "@hermes_bot" in text and "getUpdates timed out" in text
    page.click("text=Usage")
    daily = page.locator("table").nth(1).inner_text()
    assert time.strftime("%Y-%m-%d") in daily
    page.click("text=Skills")
    page.click("a:has-text('demo')")
    assert "Step one: <look>." in page.inner_text("pre")
    page.click("text=Memory")
    assert "The user keeps quokkas." in page.inner_text("main")


def test_posts_need_the_form_token_and_our_origin(site, page):
    cookie = next(c for c in page.context.cookies() if c["name"] == "hermes_dashboard")
    head = {"Cookie": f"hermes_dashboard={cookie['value']}", "Content-Type": "application/x-www-form-urlencoded"}
    job_id = _jobs(site.home)[0]["id"]
    assert _status(f"{site.base}/cron/{job_id}/pause", b"csrf=wrong", {**head, "Origin": site.base})[0] == 403
    page.click("text=Cron")
    csrf = page.locator("input[name=csrf]").first.get_attribute("value")
    body = f"csrf={csrf}".encode()
    assert _status(f"{site.base}/cron/{job_id}/pause", body, {**head, "Origin": "http://evil.example"})[0] == 403
    assert _status(f"{site.base}/cron/{job_id}/pause", body, head)[0] == 403  # no Origin at all
    assert _jobs(site.home)[0]["enabled"] is True


def test_pages_are_light_and_scriptless(page, site):
    """Each page under 64 KB and without a script; HERMES_DASHBOARD_SHOTS=DIR saves a screenshot of each."""
    shots = os.environ.get("HERMES_DASHBOARD_SHOTS")
    page.goto(site.base + "/sessions?q=quokka")
    conversation = page.locator("tbody a").first.get_attribute("href")
    for path in (*PAGES, conversation):
        resp = page.goto(site.base + path)
        assert resp.status == 200, path
        assert len(resp.body()) < 64 * 1024 and page.locator("script").count() == 0, path
        assert "script-src" not in resp.headers["content-security-policy"]  # default-src 'none' covers it
        if shots:
            print(f"{path}: {len(resp.body())} bytes")
            name = "conversation" if path == conversation else path.strip("/").replace("?q=", "-search-")
            page.set_viewport_size({"width": 1000, "height": 600})
            page.screenshot(path=str(Path(shots) / f"{name}.png"))


def test_non_loopback_host_needs_a_configured_token(hermes_home):
    out = run_hermes("dashboard", "--host", "0.0.0.0", "--no-open", home=hermes_home)
    assert out.returncode == 2 and "refusing to listen on 0.0.0.0 without DASHBOARD_TOKEN" in out.stderr
    short = run_hermes("dashboard", "--host", "0.0.0.0", "--no-open", home=hermes_home,
                       env={"DASHBOARD_TOKEN": "short"})
    assert short.returncode == 2 and "at least 16 characters" in short.stderr


def test_a_fixed_token_allows_any_host_and_is_the_one_printed(hermes_home):
    token = "fixed-token-0123456789"
    proc = subprocess.Popen([HERMES, "dashboard", "--host", "0.0.0.0", "--port", "0", "--no-open"],
                            env={**_env(hermes_home), "DASHBOARD_TOKEN": token}, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True)
    try:
        line = proc.stdout.readline()
        assert line.startswith("hermes dashboard: listening on http://127.0.0.1:") and line.strip().endswith(
            f"/?token={token}"), line
        base = line.split("listening on ", 1)[1].split("/?", 1)[0]
        assert _status(base + "/sessions")[0] == 401
        conn = http.client.HTTPConnection(base.removeprefix("http://"), timeout=10)
        conn.request("GET", f"//evil.example/x?token={token}&page=2")
        resp = conn.getresponse()
        assert resp.status == 303 and resp.getheader("Location") == "/evil.example/x?page=2"
        assert "HttpOnly" in resp.getheader("Set-Cookie") and "SameSite=Strict" in resp.getheader("Set-Cookie")
    finally:
        proc.terminate()
        proc.wait(timeout=20)
