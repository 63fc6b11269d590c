"""The browser tools and vision_analyze through the real `hermes chat -q`: the scripted model drives a real
Chromium against pages served on 127.0.0.1 (form, JavaScript list, cookies), and the vision calls reach
the (scripted) vision model with the image attached."""

from __future__ import annotations

import base64
import json
import re
import struct
import subprocess
from pathlib import Path

import pytest

from tests.fixtures.browser_site import Site, png
from tests.helpers import model_config, run_hermes
from tests.integration.test_vision_chat import call, tool_results, vision_requests

pytest.importorskip("playwright", reason="the [browser] extra (playwright) is not installed")
from hermes_agent.terminal.sandbox.launcher import landlock_problem  # noqa: E402
from hermes_agent.tools.builtin._checks import chromium_path  # noqa: E402

CHROMIUM = chromium_path()
if CHROMIUM is None:
    pytest.skip("no Chromium on this machine (apt-get install chromium, or set HERMES_CHROMIUM)",
                allow_module_level=True)

ALLOW = "browser:\n  allow_private_urls: true\n"


def allow(site: Site, sandbox: str = "") -> str:
    """Private addresses allowed, and the site's port granted: the browser has a network namespace of its own
    (netwrap.py), where the host's 127.0.0.1 is reachable only on the ports `sandbox.loopback_ports` grants."""
    return ALLOW + f"sandbox:\n  loopback_ports: [{site.url.rsplit(':', 1)[1]}]\n{sandbox}"


def chat(*args: str, home: Path, timeout: float = 180) -> subprocess.CompletedProcess:
    """`hermes chat -q ...` with this machine's Chromium (run_hermes drops HERMES_* variables)."""
    return run_hermes("chat", "-q", *args, home=home, timeout=timeout, env={"HERMES_CHROMIUM": str(CHROMIUM)})


@pytest.fixture
def site():
    s = Site()
    yield s
    s.stop()


def ref_after(pattern: str, name: str, **arguments: object):
    """A step that calls `name` on the ref of the element matching `pattern` in the latest snapshot."""

    def step(body: dict) -> dict:
        snap = next(r["snapshot"] for r in reversed(tool_results(body)) if "snapshot" in r)
        match = re.search(pattern + r"[^\n]*\[ref=(e\d+)\]", snap)
        assert match, snap
        return call(name, ref=match.group(1), **arguments)

    return step


def chromium_processes(home: Path) -> list[int]:
    """Chromium processes started for this HERMES_HOME (they inherit its environment)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes()
            environ = (entry / "environ").read_bytes()
        except OSError:
            continue
        if b"chrom" in cmdline.split(b"\0")[0] and f"HERMES_HOME={home}".encode() in environ.split(b"\0"):
            found.append(int(entry.name))
    return found


@pytest.mark.parametrize("mechanism", ["auto", pytest.param("landlock", marks=pytest.mark.skipif(
    landlock_problem() is not None, reason="no Landlock"))])
def test_form_flow_type_click_result_page_and_back(scripted, hermes_home, site, mechanism):
    """Also under Landlock: Chromium then runs below a keeper (`sandbox_command`), which must let go of
    Playwright's pipes and take every Chromium process down when the browser closes."""
    model_config(hermes_home, scripted.url, extra=allow(site, f"  mechanism: {mechanism}\n"))
    scripted.add(call("browser_navigate", url=f"{site.url}/form"),
                 ref_after(r'textbox "Name"', "browser_type", text="Ada Lovelace"),
                 ref_after(r'button "Submit"', "browser_click"),
                 call("browser_snapshot"),
                 call("browser_back"),
                 {"content": "signed up"})
    out = chat("sign me up", "-t", "browser", home=hermes_home)
    assert out.returncode == 0, out.stderr
    assert "signed up" in out.stdout
    nav, typed, clicked, snap, back = tool_results(scripted.requests[-1]["body"])
    assert nav["success"] and nav["title"] == "Sign up" and nav["url"].endswith("/form")
    assert 'textbox "Name"' in nav["snapshot"] and nav["element_count"] >= 3
    assert typed == {"success": True, "typed": "Ada Lovelace", "element": typed["element"]}
    assert clicked["success"] is True
    assert "Hello, Ada Lovelace!" in snap["snapshot"] and "sign-up is complete" in snap["snapshot"]
    assert back["success"] and back["url"].endswith("/form")
    assert chromium_processes(hermes_home) == []  # the browser closed with the agent


def test_javascript_list_images_and_both_vision_tools(scripted, hermes_home, site):
    model_config(hermes_home, scripted.url, extra=allow(site))
    scripted.add(call("browser_navigate", url=f"{site.url}/list"),
                 call("browser_get_images"),
                 call("browser_vision", question="What colour is the square?"),
                 {"content": "The square is red."},  # the vision model's answer about the screenshot
                 call("vision_analyze", image_url=f"{site.url}/red.png", question="Which colour?"),
                 {"content": "Solid red."},
                 {"content": "done"})
    out = chat("look", "-t", "browser,vision", home=hermes_home)
    assert out.returncode == 0, out.stderr
    nav, images, vision, analyzed = tool_results(scripted.requests[-1]["body"])
    assert "Planet Mercury" in nav["snapshot"] and "Planet Earth" in nav["snapshot"]  # rendered by JavaScript
    assert images["count"] == 1 and images["images"][0]["alt"] == "A red square"
    assert vision["analysis"] == "The square is red." and Path(vision["screenshot_path"]).is_file()
    assert analyzed == {"success": True, "analysis": "Solid red."}
    sent = vision_requests(scripted)
    assert len(sent) == 2
    images_sent = []
    for body, question in zip(sent, ("What colour is the square?", "Which colour?"), strict=True):
        parts = body["messages"][0]["content"]
        assert any(p["type"] == "text" and question in p["text"] for p in parts)
        image = next(p["image_url"]["url"] for p in parts if p["type"] == "image_url")
        assert image.startswith("data:image/png;base64,")
        images_sent.append(base64.b64decode(image.split(",", 1)[1]))
    screenshot, square = images_sent
    assert struct.unpack(">II", screenshot[16:24]) == (1280, 800)  # the viewport, as a PNG
    assert square == png()  # the file the page served, unchanged (small enough not to be resized)
    assert chromium_processes(hermes_home) == []


def test_loopback_is_refused_without_allow_private_urls(scripted, hermes_home, site):
    model_config(hermes_home, scripted.url)
    scripted.add(call("browser_navigate", url=f"{site.url}/form"),
                 call("vision_analyze", image_url=f"{site.url}/red.png", question="?"),
                 call("browser_navigate", url="http://169.254.169.254/latest/meta-data/"), {"content": "no"})
    out = chat("open it", "-t", "browser,vision", home=hermes_home)
    assert out.returncode == 0, out.stderr
    page, image, metadata = tool_results(scripted.requests[-1]["body"])
    assert page["success"] is False and "private or internal address" in page["error"]
    assert image["success"] is False and "private or internal address" in image["error"]
    assert metadata["success"] is False and "cloud metadata" in metadata["error"]
    assert vision_requests(scripted) == []  # nothing reached the vision model


def test_allowed_private_urls_still_reach_the_hosts_loopback_only_on_granted_ports(scripted, hermes_home, site):
    """The confined browser has a network namespace of its own (netwrap.py): `allow_private_urls` lets the
    address guard pass a loopback page, but the host's 127.0.0.1 answers only on granted ports; the error
    says how to grant one. Playwright's connection to Chromium (a pipe, not a port) is unaffected."""
    other = Site()  # not granted
    try:
        model_config(hermes_home, scripted.url, extra=allow(site))
        scripted.add(call("browser_navigate", url=f"{other.url}/form"), call("browser_navigate", url=f"{site.url}/form"),
                     {"content": "done"})
        out = chat("go", "-t", "browser", home=hermes_home)
    finally:
        other.stop()
    assert out.returncode == 0, out.stderr
    refused, granted = tool_results(scripted.requests[-1]["body"])
    port = other.url.rsplit(":", 1)[1]
    assert refused["success"] is False and f"sandbox.loopback_ports: [{port}]" in refused["error"], refused
    assert granted["success"] is True and "Name" in granted["snapshot"], granted


def test_redirect_to_a_private_address_is_blocked_even_when_public_pages_are_allowed(scripted, hermes_home, site):
    model_config(hermes_home, scripted.url, extra=allow(site))
    scripted.add(call("browser_navigate", url=f"{site.url}/redirect?to=http://169.254.169.254/"), {"content": "x"})
    out = chat("go", "-t", "browser", home=hermes_home)
    assert out.returncode == 0, out.stderr
    (result,) = tool_results(scripted.requests[-1]["body"])
    assert result["success"] is False and "cloud metadata" in result["error"]


def test_schemas_name_only_tools_the_run_offers(scripted, hermes_home, site):
    model_config(hermes_home, scripted.url, extra=allow(site))
    for _ in range(2):
        scripted.add(call("browser_navigate", url=f"{site.url}/form"), {"content": "done"})
    assert chat("hi", "-t", "browser", home=hermes_home).returncode == 0
    assert chat("hi", "-t", "browser,vision", home=hermes_home).returncode == 0
    first = [t["function"]["name"] for t in scripted.requests[0]["body"]["tools"]]
    assert [n for n in first if n.startswith("browser_")] == ["browser_navigate"]  # the rest once a page is open
    alone, with_vision = ({t["function"]["name"]: t["function"]["description"] for t in r["body"]["tools"]}
                          for r in (scripted.requests[1], scripted.requests[3]))
    assert "vision_analyze" not in alone and "vision_analyze" not in alone["browser_get_images"]
    assert "vision_analyze" in with_vision["browser_get_images"]
    assert "web_extract" not in alone["browser_navigate"]  # no web toolset in this run
    assert "browser_vision" in alone["browser_snapshot"]
    ours = {t["function"]["name"]: len(json.dumps(t, separators=(",", ":"))) for t in scripted.requests[3]["body"]["tools"]}
    del ours["browser_close"]  # not one of Hermes 0.19's tools
    ours.pop("web_search", None)  # Hermes's browser toolset lists it too; measured with the web tools
    assert len(ours) == 10 and sum(ours.values()) <= 6068 // 2, ours  # Hermes: 6068 bytes for these ten


def test_without_chromium_the_tools_say_what_to_install(hermes_home):
    out = run_hermes("tools", "list", home=hermes_home, env={"HERMES_CHROMIUM": "/nonexistent/chromium"})
    assert out.returncode == 0, out.stderr
    line = next(ln for ln in out.stdout.splitlines() if "browser_navigate" in ln and "unavailable" in ln)
    assert "apt-get install chromium" in line and "HERMES_CHROMIUM" in line


def test_subagents_get_isolated_browsers(scripted, hermes_home, site):
    """Two subagents (two task_ids) run side by side: each sets a cookie, then reads what the site sees;
    neither sees the other's cookie, and the parent's own page is left alone."""

    def router(body: dict) -> dict:  # every request, in whatever order the agents send them
        first = next(m["content"] for m in body["messages"] if m["role"] == "user")
        done = tool_results(body)
        if first.startswith("browse as "):
            who = first.split()[-1]
            steps = [call("browser_navigate", url=f"{site.url}/set?who={who}"),
                     call("browser_navigate", url=f"{site.url}/whoami"),
                     {"content": json.dumps(done[1:])}]
            return steps[min(len(done), 2)]
        if not done:
            return {"tool_calls": [{"name": "delegate_task", "arguments": {"tasks": [
                {"goal": "browse as alice", "toolsets": ["browser"]},
                {"goal": "browse as bob", "toolsets": ["browser"]}]}}]}
        return {"content": "both done"}

    scripted.default = router
    model_config(hermes_home, scripted.url, extra=allow(site))
    out = chat("go", "-t", "browser,delegation", home=hermes_home)
    assert out.returncode == 0, out.stderr
    (rows,) = tool_results(scripted.requests[-1]["body"])  # delegate_task's result
    seen = {}
    for row in rows["results"]:
        whoami = json.loads(row["summary"])[0]
        seen[row["goal"].split()[-1]] = whoami["snapshot"]
    assert "who=alice" in seen["alice"] and "bob" not in seen["alice"]
    assert "who=bob" in seen["bob"] and "alice" not in seen["bob"]
    assert chromium_processes(hermes_home) == []

