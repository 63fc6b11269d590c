"""The browser's pure parts: the private-address rule (with a fixed resolver), snapshot compaction,
element refs, image shrinking, and the schema patching that drops mentions of absent tools."""

from __future__ import annotations

import io

import pytest

from hermes_agent.tools.builtin import _images
from hermes_agent.tools.builtin._snapshot import capped, compact, element_count, normalise_ref
from hermes_agent.tools.builtin._urlguard import allow_private, url_problem
from hermes_agent.tools.dispatch import without_absent_tools
from tests.fixtures.browser_site import png

DNS = {"intranet.example": ["10.1.2.3"], "public.example": ["93.184.215.14"],
       "sneaky.example": ["93.184.215.14", "127.0.0.1"], "meta.example": ["169.254.169.254"]}


def resolver(host: str) -> list[str]:
    return DNS.get(host, [])


@pytest.mark.parametrize("url", ["http://127.0.0.1:8080/", "http://localhost.invalid.:1/", "http://[::1]/",
                                 "http://192.168.1.10/", "http://100.64.0.1/", "http://intranet.example/",
                                 "http://sneaky.example/", "http://[::ffff:10.0.0.1]/"])
def test_private_addresses_are_refused_unless_allowed(url):
    if "localhost.invalid" in url:
        DNS["localhost.invalid"] = ["127.0.0.1"]
    problem = url_problem(url, False, resolver)
    assert problem and "private or internal address" in problem
    assert url_problem(url, True, resolver) is None


@pytest.mark.parametrize("url", ["http://169.254.169.254/latest/", "http://metadata.google.internal/",
                                 "http://meta.example/", "http://[::ffff:169.254.169.254]/", "http://169.254.1.1/"])
def test_metadata_endpoints_are_refused_always(url):
    assert "cloud metadata" in (url_problem(url, True, resolver) or "")


def test_public_urls_pass_and_other_schemes_do_not():
    assert url_problem("https://public.example/a?b=1", False, resolver) is None
    assert "only http and https" in (url_problem("file:///etc/passwd", True, resolver) or "")
    assert "only http and https" in (url_problem("javascript:alert(1)", True, resolver) or "")
    assert "no host" in (url_problem("http:///x", True, resolver) or "")


def test_allow_private_env_wins_over_config():
    assert allow_private({}, False, True) is True
    assert allow_private({"HERMES_ALLOW_PRIVATE_URLS": "false"}, True) is False
    assert allow_private({"HERMES_ALLOW_PRIVATE_URLS": "yes"}, False) is True
    assert allow_private({}, False, "no") is False


SNAP = """- generic [active] [ref=e1]:
  - heading "Sign up" [level=1] [ref=e2]
  - generic [ref=e3]:
    - generic [ref=e4]:
      - text: Name
      - textbox "Name" [ref=e5]
    - button "Submit" [ref=e6] [cursor=pointer]
  - generic [ref=e7]: plain text stays
  - list [ref=e8]:
    - listitem [ref=e9]: alpha"""


def test_compact_lifts_children_of_wrappers_and_keeps_refs_on_what_can_be_acted_on():
    snap = SNAP + """
  - navigation [ref=e10]:
    - link "Home" [ref=e11] [cursor=pointer]:
      - /url: /home
    - generic [ref=e12] [cursor=pointer]:
      - text: A clickable card"""
    assert compact(snap) == """- heading "Sign up" [level=1]
- text: Name
- textbox "Name" [ref=e5]
- button "Submit" [ref=e6]
- generic: plain text stays
- listitem: alpha
- navigation:
  - link "Home" [ref=e11]
  - generic [ref=e12]:
    - text: A clickable card"""
    assert element_count(compact(snap)) == 4 and element_count(snap) == 12


def test_capped_cuts_at_a_line_and_says_how_much():
    text = "\n".join(f"- listitem [ref=e{i}]: item {i}" for i in range(2000))
    out = capped(text, 1000)
    assert len(out) < 1100 and out.splitlines()[-1].startswith("[... ") and "more characters" in out
    assert capped("short") == "short"


@pytest.mark.parametrize("given, expected", [("e12", "e12"), ("@e12", "e12"), ("[ref=e3]", "e3"), ("ref=e3", "e3"),
                                             ("f1e4", "f1e4"), ("12", None), ("button", None), (None, None)])
def test_refs_in_the_shapes_models_send(given, expected):
    assert normalise_ref(given) == expected


def test_images_are_sniffed_and_large_ones_shrunk():
    pytest.importorskip("PIL", reason="Pillow (browser/vision extra) is not installed")
    from PIL import Image

    small = png()
    assert _images.shrink(small) == (small, "image/png")
    big = io.BytesIO()
    Image.new("RGB", (4000, 1000), (0, 128, 255)).save(big, "PNG")
    data, mime = _images.shrink(big.getvalue())
    assert mime == "image/jpeg" and Image.open(io.BytesIO(data)).size == (2048, 512)
    with pytest.raises(_images.ImageError, match="not an image"):
        _images.shrink(b"<html>nope</html>")


def definition(name: str, description: str) -> dict:
    return {"type": "function", "function": {"name": name, "description": description, "parameters": {}}}


def test_descriptions_drop_sentences_naming_absent_tools():
    defs = [definition("browser_snapshot", "The page as a tree. Use browser_vision for layout. Refresh it often."),
            definition("browser_get_images", "vision_analyze lists nothing. Use vision_analyze on one."),
            definition("todo", "Track work. Keep a patch of notes.")]
    out = {d["function"]["name"]: d["function"]["description"] for d in without_absent_tools(defs)}
    assert out["browser_snapshot"] == "The page as a tree. Refresh it often."
    assert out["browser_get_images"] == "vision_analyze lists nothing."  # the first sentence always stays
    assert out["todo"] == "Track work. Keep a patch of notes."  # plain words that are also tool names stay
    kept = without_absent_tools([definition("browser_snapshot", "A. Use browser_vision."),
                                 definition("browser_vision", "B.")])
    assert kept[0]["function"]["description"] == "A. Use browser_vision."
