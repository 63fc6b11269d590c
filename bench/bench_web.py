"""Benchmark: web_extract per page on a local server: time (median), raw HTML size and tokens (chars/4),
tokens the model gets (content chars/4) and the ratio. Built-in pages imitate a news article, a docs page
and a Q&A thread (heavy chrome, inline scripts and styles); --pages DIR adds saved real pages (*.html).

Run: .venv/bin/python bench/bench_web.py [--runs 5] [--pages DIR --max-pages 5]"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import threading
import time
from functools import partial
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

_CHROME_CSS = "<style>" + "".join(f".c{i}{{margin:{i}px;padding:{i}px;color:#{i:06x}}}" for i in range(400)) + "</style>"
_SCRIPT = "<script>" + "window.dataLayer=window.dataLayer||[];" * 200 + "</script>"
_NAV = "<nav><ul>" + "".join(f'<li><a href="/section/{i}">Section {i}</a></li>' for i in range(60)) + "</ul></nav>"
_FOOT = "<footer>" + "".join(f'<a href="/legal/{i}">Legal link {i}</a> ' for i in range(40)) + "</footer>"
_PARA = ("The committee met on Tuesday to review the harbour expansion plan, which would add two deep-water "
         "berths and a rail spur by 2029. Residents raised concerns about night-time noise and traffic. ")


def _page(title: str, main: str) -> str:
    jsonld = '<script type="application/ld+json">' + json.dumps({"headline": title, "x": "y" * 2000}) + "</script>"
    side = "<aside>" + "".join(f'<div class="card"><a href="/r/{i}">Related story {i}</a><p>teaser</p></div>'
                               for i in range(30)) + "</aside>"
    return (f"<!doctype html><html><head><title>{title}</title>{_CHROME_CSS}{jsonld}{_SCRIPT}</head><body>{_NAV}"
            f"<div class='layout'>{side}<main><article><h1>{title}</h1>{main}</article></main></div>{_FOOT}{_SCRIPT}"
            "</body></html>")


class _Quiet(SimpleHTTPRequestHandler):
    def log_message(self, *args: object) -> None:
        pass


def builtin_pages() -> dict[str, str]:
    article = "".join(f"<p>{_PARA * 3}</p>" + (f"<h2>Part {i}</h2>" if i % 4 == 3 else "") for i in range(24))
    docs = "".join(f"<h2>function_{i}()</h2><p>Returns the value of setting {i}. {_PARA}</p>"
                   f"<pre><code>result = function_{i}(x, y={i})\nprint(result)</code></pre>"
                   "<table><tr><th>arg</th><th>meaning</th></tr><tr><td>x</td><td>input</td></tr></table>"
                   for i in range(30))
    qa = "".join(f"<div class='answer'><div class='votes'>{i * 3}</div><p>{_PARA * 2}</p><ul>"
                 + "".join(f"<li class='comment'>comment {j}: that works for me too</li>" for j in range(5))
                 + "</ul></div>" for i in range(15))
    return {"news-article.html": _page("Harbour expansion approved", article),
            "api-docs.html": _page("Settings API reference", docs),
            "qa-thread.html": _page("How do I configure the harbour API?", qa)}


def measure(base: str, names: list[str], runs: int) -> list[tuple[str, float, int]]:
    from hermes_agent.config.settings import Settings
    from hermes_agent.tools.context import ToolContext
    from hermes_agent.tools.registry import discover_builtin_tools, registry

    discover_builtin_tools()
    with tempfile.TemporaryDirectory() as home:
        ctx = ToolContext(settings=Settings(data={"web": {"allow_private_urls": True}}, home=Path(home)))
        rows = []
        for name in names:
            times, content = [], ""
            for _ in range(runs):
                t0 = time.perf_counter()
                out = json.loads(registry.dispatch("web_extract", {"urls": [f"{base}/{name}"]}, ctx=ctx))
                times.append((time.perf_counter() - t0) * 1000)
                page = out["results"][0]
                content = page.get("content") or page.get("error", "")
            rows.append((name, statistics.median(times), len(content)))
        return rows


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--pages", help="a directory of saved .html pages to add")
    ap.add_argument("--max-pages", type=int, default=5)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as root:
        for name, html in builtin_pages().items():
            Path(root, name).write_text(html, encoding="utf-8")
        names = sorted(builtin_pages())
        if args.pages:
            for src in sorted(Path(args.pages).rglob("*.html"))[: args.max_pages]:
                Path(root, src.name).write_bytes(src.read_bytes())
                names.append(src.name)
        handler = partial(_Quiet, directory=root)
        server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        threading.Thread(target=server.serve_forever, daemon=True).start()
        try:
            rows = measure(f"http://127.0.0.1:{server.server_address[1]}", names, args.runs)
        finally:
            server.shutdown()
        print(f"{'page':<34} {'html KB':>8} {'html tok':>9} {'out tok':>8} {'ratio':>6} {'ms p50':>7}")
        for name, ms, out_chars in rows:
            size = Path(root, name).stat().st_size
            ratio = size / max(out_chars, 1)
            print(f"{name[:34]:<34} {size / 1024:>8.1f} {size // 4:>9,} {out_chars // 4:>8,} {ratio:>5.1f}x {ms:>7.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
