"""HTML building for the dashboard: escaping (every value goes through `esc`; only `Safe` fragments built
here pass unescaped), the page layout with its one inline stylesheet, tables, pagers, forms. No I/O."""

from __future__ import annotations

import base64
import hashlib
import html
import json
from collections.abc import Iterable, Sequence
from datetime import datetime
from urllib.parse import urlencode

from hermes_agent.messages import safe_loads

NAV = (("/sessions", "Sessions"), ("/cron", "Cron"), ("/gateway", "Gateway"), ("/usage", "Usage"),
       ("/config", "Config"), ("/skills", "Skills"), ("/memory", "Memory"), ("/people", "People"))

CSS = """*{box-sizing:border-box}body{font:14px/1.45 system-ui,sans-serif;margin:0;color:#1b1f24;background:#f6f7f9}
header{background:#1f2933;color:#fff;padding:.5rem 1rem;display:flex;gap:1rem;align-items:center;flex-wrap:wrap}
header b{margin-right:1rem}header a{color:#cbd2d9;text-decoration:none}header a.on{color:#fff;font-weight:600}
main{padding:1rem;max-width:1200px;margin:auto}h1{font-size:1.3rem;margin:.2rem 0 1rem}
table{border-collapse:collapse;width:100%;background:#fff}th,td{text-align:left;padding:.3rem .5rem;
border-bottom:1px solid #e4e7eb;vertical-align:top}th{background:#eef1f4;font-weight:600}
td.n{text-align:right;font-variant-numeric:tabular-nums}pre{white-space:pre-wrap;word-break:break-word;
background:#fff;border:1px solid #e4e7eb;padding:.5rem;margin:.3rem 0;max-height:30rem;overflow:auto}
.msg{background:#fff;border:1px solid #e4e7eb;border-left:4px solid #9aa5b1;margin:.5rem 0;padding:.4rem .6rem}
.user{border-left-color:#3b82f6}.assistant{border-left-color:#10b981}.tool{border-left-color:#f59e0b}
.system{border-left-color:#8b5cf6}.meta{color:#616e7c;font-size:12px}.err{background:#fde8e8;
border:1px solid #f8b4b4;padding:.5rem;margin:.5rem 0}.ok{background:#def7ec;border:1px solid #84e1bc;
padding:.5rem;margin:.5rem 0}form.inline{display:inline}input,select,button{font:inherit;padding:.2rem .4rem}
input[type=text],input[type=search],input[type=password]{min-width:18rem}.pager{margin:.6rem 0}
.pager a{margin-right:.8rem}mark{background:#fde68a}code{background:#eef1f4;padding:0 .2rem}"""
CSS_HASH = "sha256-" + base64.b64encode(hashlib.sha256(CSS.encode()).digest()).decode()


class Safe(str):
    """HTML built here from escaped parts; passes through `esc` unchanged."""

    __slots__ = ()


def esc(value: object) -> str:
    """`value` as HTML text (a `Safe` fragment is already HTML)."""
    if isinstance(value, Safe):
        return value
    return html.escape("" if value is None else str(value), quote=True)


def join(parts: Iterable[object]) -> Safe:
    return Safe("".join(esc(p) for p in parts))


def link(href: str, text: object, **query: object) -> Safe:
    qs = {k: v for k, v in query.items() if v not in (None, "")}
    url = href + ("?" + urlencode(qs) if qs else "")
    return Safe(f'<a href="{esc(url)}">{esc(text)}</a>')


def pre(text: object) -> Safe:
    return Safe(f"<pre>{esc(text)}</pre>")


def when(ts: float | str | None) -> str:
    """A timestamp (epoch seconds or ISO text) as local `YYYY-MM-DD HH:MM`."""
    if ts in (None, ""):
        return "—"
    try:
        stamp = datetime.fromtimestamp(float(ts)) if not isinstance(ts, str) else datetime.fromisoformat(ts)
    except (ValueError, OverflowError, OSError):
        return str(ts)
    return stamp.astimezone().strftime("%Y-%m-%d %H:%M") if stamp.tzinfo else stamp.strftime("%Y-%m-%d %H:%M")


def num(n: float | int | None) -> str:
    return "—" if n is None else f"{n:,}"


def usd(x: float | None) -> str:
    return "—" if x is None else f"${x:,.4f}" if 0 < x < 0.01 else f"${x:,.2f}"


def pretty_json(text: str) -> str:
    """Indented JSON when `text` parses, else the text itself."""
    try:
        return json.dumps(safe_loads(text), indent=2, ensure_ascii=False)
    except (TypeError, ValueError):
        return text


def table(headers: Sequence[str], rows: Iterable[Sequence[object]], numeric: Iterable[int] = ()) -> Safe:
    """A table; cells are escaped unless `Safe`; columns listed in `numeric` align right."""
    nums = set(numeric)
    head = "".join(f"<th>{esc(h)}</th>" for h in headers)
    body = "".join("<tr>" + "".join(f'<td{" class=n" if i in nums else ""}>{esc(c)}</td>'
                                    for i, c in enumerate(row)) + "</tr>" for row in rows)
    return Safe(f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>")


def facts(rows: Iterable[Sequence[object]]) -> Safe:
    """A two-column label / value table without a header."""
    body = "".join(f"<tr><th>{esc(k)}</th><td>{esc(v)}</td></tr>" for k, v in rows)
    return Safe(f"<table><tbody>{body}</tbody></table>")


def pager(path: str, page: int, pages: int, **query: object) -> Safe:
    """Previous / next links keeping `query`; nothing when everything fits on one page."""
    if pages <= 1:
        return Safe("")
    prev = link(path, "← newer" if path == "/sessions" else "← previous", page=page - 1, **query) if page > 1 else ""
    nxt = link(path, "older →" if path == "/sessions" else "next →", page=page + 1, **query) if page < pages else ""
    return Safe(f'<div class="pager">{esc(prev)}{esc(nxt)}<span class="meta">page {page} of {pages}</span></div>')


def post_button(action: str, label: str, csrf: str, **fields: str) -> Safe:
    """A one-button POST form carrying the CSRF token."""
    hidden = "".join(f'<input type="hidden" name="{esc(k)}" value="{esc(v)}">' for k, v in fields.items())
    return Safe(f'<form class="inline" method="post" action="{esc(action)}">'
                f'<input type="hidden" name="csrf" value="{esc(csrf)}">{hidden}'
                f'<button type="submit">{esc(label)}</button></form>')


def notice(text: str | None, ok: bool = True) -> Safe:
    if not text:
        return Safe("")
    return Safe(f'<div class="{"ok" if ok else "err"}" role="status">{esc(text)}</div>')


def page(title: str, body: object, active: str = "") -> str:
    """A whole HTML document: header navigation, then `body`."""
    nav = "".join(f'<a href="{href}"{" class=on" if href == active else ""}>{label}</a>' for href, label in NAV)
    return (f'<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" '
            f'content="width=device-width,initial-scale=1"><title>{esc(title)} · Hermes</title>'
            f'<style>{CSS}</style></head><body><header><b>Hermes</b>{nav}</header>'
            f'<main><h1>{esc(title)}</h1>{esc(body)}</main></body></html>')
