"""Browser tools benchmark: cold start (Playwright + Chromium launch + first page), warm navigations,
a new task's first page (new context), snapshot time, and what a page costs the model: the snapshot's
size in tokens (chars/4) against the page's HTML. With agent-browser on PATH (Hermes's browser backend,
npm `agent-browser`), its `snapshot -c` of the same page is measured too.

Usage: .venv/bin/python bench/bench_browser.py [--page FILE.html] [--runs 5]
Without --page, a typical article page is generated (navigation, article, sidebar, form, footer, inline
CSS and scripts). Pages are served on 127.0.0.1; the tools run through handle_function_call."""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from functools import partial
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from threading import Thread


def typical_page() -> str:
    nav = "".join(f'<li><a href="/section/{i}">Section {i}</a></li>' for i in range(30))
    sentence = 'Some article text with a <a href="/x">link</a> and detail. ' * 6
    paras = "".join(f"<h2>Heading {i}</h2><p>{sentence}</p>" for i in range(12))
    side = "".join(f'<li><a href="/related/{i}"><img src="/t{i}.png" alt="thumb {i}">Related story {i}</a></li>'
                   for i in range(15))
    css = "<style>" + "".join(f".c{i}{{margin:{i}px;padding:{i}px;color:#{i:06x}}}" for i in range(400)) + "</style>"
    script = "<script>" + "".join(f"window.v{i}=function(a){{return a*{i}+1}};" for i in range(300)) + "</script>"
    form = ('<form action="/search"><label>Search <input name="q"></label><select name="s"><option>All</option>'
            '<option>News</option></select><button>Go</button></form>')
    return (f"<!doctype html><html><head><title>A typical article</title>{css}</head><body>"
            f"<header><div class='logo'><div><div><a href='/'>Site</a></div></div></div>{form}</header>"
            f"<nav><ul>{nav}</ul></nav><main><article><h1>The article</h1>{paras}</article></main>"
            f"<aside><ul>{side}</ul></aside><footer><p>© Example</p><ul>{nav}</ul></footer>{script}</body></html>")


class _Quiet(SimpleHTTPRequestHandler):
    def log_message(self, *args: object) -> None:
        return


def serve(directory: Path) -> ThreadingHTTPServer:
    handler = partial(_Quiet, directory=str(directory))
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    Thread(target=httpd.serve_forever, daemon=True).start()
    return httpd


def timed(fn, *args, **kw) -> tuple[float, dict]:  # type: ignore[no-untyped-def]
    started = time.perf_counter()
    out = json.loads(fn(*args, **kw))
    return (time.perf_counter() - started) * 1000, out


def agent_browser(url: str, exe: str | None) -> tuple[int, float] | None:
    """(characters, ms) of agent-browser's compact snapshot of `url`, driving the same Chromium (None when
    it is not installed or fails). `npm install agent-browser` ships the native binary in its bin/."""
    exe = exe or shutil.which("agent-browser")
    chromium = shutil.which("chromium")
    if exe is None or chromium is None:
        return None
    env = {**os.environ, "AGENT_BROWSER_EXECUTABLE_PATH": chromium, "AGENT_BROWSER_ARGS": "--no-sandbox",
           "AGENT_BROWSER_SESSION": "bench"}
    try:
        subprocess.run([exe, "open", url], capture_output=True, timeout=120, check=True, env=env)
        started = time.perf_counter()
        snap = subprocess.run([exe, "snapshot", "-c"], capture_output=True, text=True, timeout=120, check=True,
                              env=env)
        took = (time.perf_counter() - started) * 1000
        subprocess.run([exe, "close"], capture_output=True, timeout=60, env=env)
    except (subprocess.SubprocessError, OSError):
        return None
    return len(snap.stdout), took


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--page", type=Path)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--agent-browser", help="path of the agent-browser binary (default: on PATH)")
    args = ap.parse_args(argv)

    from hermes_agent.config.settings import Settings
    from hermes_agent.tools.builtin._browser_pool import POOL
    from hermes_agent.tools.context import ToolContext
    from hermes_agent.tools.dispatch import handle_function_call
    from hermes_agent.tools.registry import discover_builtin_tools

    discover_builtin_tools()
    root = Path(tempfile.mkdtemp(prefix="bench-browser-"))
    html = args.page.read_text(encoding="utf-8", errors="replace") if args.page else typical_page()
    (root / "page.html").write_text(html, encoding="utf-8")
    httpd = serve(root)
    url = f"http://127.0.0.1:{httpd.server_address[1]}/page.html"
    settings = Settings(data={"browser": {"allow_private_urls": True}}, home=root)
    contexts = [ToolContext(settings=settings, task_id=f"bench-{i}") for i in range(2)]

    def run(ctx: ToolContext, name: str, **a: object) -> str:
        return handle_function_call(name, a, ctx.task_id, ctx=ctx)

    cold, nav = timed(run, contexts[0], "browser_navigate", url=url)
    if not nav.get("success"):
        print(f"navigation failed: {nav}", file=sys.stderr)
        return 1
    warm = [timed(run, contexts[0], "browser_navigate", url=url)[0] for _ in range(args.runs)]
    snaps = [timed(run, contexts[0], "browser_snapshot")[0] for _ in range(args.runs)]
    new_task, _ = timed(run, contexts[1], "browser_navigate", url=url)
    full = json.loads(run(contexts[0], "browser_snapshot", full=True))["snapshot"]
    started = time.perf_counter()
    POOL.shutdown()
    stop = (time.perf_counter() - started) * 1000
    compact = nav["snapshot"]
    print(f"page: {args.page or 'generated typical article'}")
    print(f"cold first navigate (Playwright + Chromium launch + page + snapshot): {cold:.0f} ms")
    print(f"warm navigate, same task: median {statistics.median(warm):.0f} ms ({args.runs} runs)")
    print(f"first navigate of a second task (new context): {new_task:.0f} ms")
    print(f"browser_snapshot: median {statistics.median(snaps):.0f} ms; browser shutdown {stop:.0f} ms")
    print(f"HTML: {len(html)} chars = {len(html) // 4} tokens")
    print(f"snapshot (compact, sent by navigate/snapshot): {len(compact)} chars = {len(compact) // 4} tokens, "
          f"{nav['element_count']} refs ({len(compact) / len(html):.1%} of the HTML)")
    print(f"snapshot (full=true, capped at 15000): {len(full)} chars = {len(full) // 4} tokens")
    theirs = agent_browser(url, args.agent_browser)
    print("agent-browser (Hermes's backend) snapshot -c: " + (
        f"{theirs[0]} chars = {theirs[0] // 4} tokens ({theirs[1]:.0f} ms)" if theirs
        else "not measured (agent-browser not found; npm install agent-browser, then --agent-browser PATH)"))
    httpd.shutdown()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
