"""Full-text search over messages: user text -> safe FTS5 query (words or trigram), best sessions first.

Every user term is quoted, so FTS5 syntax in the input can never raise. CJK text goes to the
trigram index; CJK terms under 3 characters (below trigram reach) fall back to LIKE.
"""

from __future__ import annotations

import re
import sqlite3
from dataclasses import dataclass
from operator import itemgetter

from hermes_agent import lazyre
from hermes_agent.messages import safe_loads
from hermes_agent.storage.layout import FTS_TOOL_PREFIX, HIGH_WATER, PROGRESS, TIME_INDEX
from hermes_agent.storage.records import SESSION_COLUMNS, SessionInfo
from hermes_agent.storage.summaries import SearchHit, Snippet

_TOKEN = lazyre.compile(r'"([^"]*)"?|(\S+)')
_CJK = lazyre.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uac00-\ud7af\uff66-\uff9f]")
_WORDS = "messages_fts"
_TRIGRAM = "messages_fts_trigram"
# bm25 costs ~3 us per matching row, so a word found in 20,000 messages would take 60 ms to rank.
# Only the newest _WINDOW matches are ranked (idf still counts every row): recent, relevant, fast.
_WINDOW = 2500
# Without selective filters the index ranks alone (no row read per match), the newest matches a window at a
# time: _PER_ASKED per session asked for (300 for 10) holds many times the sessions wanted, so a common word
# costs ~1 ms to rank (~3.5 us a row: the largest part of a search) instead of ~2 ms for a fixed 1,000
# (bench/bench_home.py); older windows follow if needed. 200 would save ~6% of a search's instructions but change
# ~12% of the sessions found (the ranking universe shrinks), so it stays 300.
_PER_ASKED = 30
_FAST_MIN = 100
# Ranked matches whose sessions are looked up at a time: first as many as can be shown (limit x PER_SESSION), then
# twice that, up to _BATCH. Each lookup reads a messages row (~3 us, mostly a page from the OS): starting at 100
# cost ~11% of a search. Sessions and their order are as with 100; a session found shows its hits among those
# looked up (about 16% fewer second and third snippets on the 90-day home).
_BATCH = 100
_LIKE_WINDOW = 300  # unranked LIKE scans need only enough rows to fill the sessions asked for
_ROUNDS = 4
_OPEN, _CLOSE = "\x02", "\x03"
PER_SESSION = 3
# A hit shows its session's title, source and times, never its system prompt (tens of KB each to read and decode).
_HIT_COLUMNS = SESSION_COLUMNS.replace("system_prompt", "NULL AS system_prompt")


@dataclass(frozen=True, slots=True)
class _Term:
    text: str
    prefix: bool = False
    or_before: bool = False


@dataclass(frozen=True, slots=True)
class ParsedQuery:
    """A query ready for SQL: FTS expressions (all terms / any term), the index, LIKE-only terms."""

    table: str
    match_all: str | None
    match_any: str | None
    like_terms: tuple[str, ...]
    terms: tuple[str, ...]
    prefixes: tuple[bool, ...] = ()  # per term: matched as a word start (`word*`)


@dataclass(frozen=True, slots=True)
class Filters:
    """Restrictions applied to every candidate hit."""

    source: str | None = None
    since: float | None = None
    until: float | None = None
    exclude_session: str | None = None
    exclude_sources: tuple[str, ...] = ()


def _terms(text: str) -> list[_Term]:
    out: list[_Term] = []
    pending_or = False
    for m in _TOKEN.finditer(text):
        phrase, bare = m.group(1), m.group(2)
        if bare in ("OR", "|"):
            pending_or = bool(out)
            continue
        if bare in ("AND", "NOT", "&"):
            continue
        word = phrase if phrase is not None else bare.rstrip("*")
        if not re.search(r"[^\W_]", word or ""):
            continue
        out.append(_Term(word.strip(), prefix=phrase is None and bare.endswith("*"), or_before=pending_or))
        pending_or = False
    return out


def _quote(term: _Term, allow_prefix: bool) -> str:
    return '"' + term.text.replace('"', '""') + '"' + ("*" if allow_prefix and term.prefix else "")


def _join(terms: list[_Term], allow_prefix: bool, any_: bool) -> str | None:
    if not terms:
        return None
    parts = [_quote(terms[0], allow_prefix)]
    for t in terms[1:]:
        parts.append(("OR " if any_ or t.or_before else "") + _quote(t, allow_prefix))
    return " ".join(parts)


def parse_query(text: str) -> ParsedQuery | None:
    """Turn free text into a ParsedQuery; None when it holds nothing searchable."""
    terms = _terms(text)
    if not terms:
        return None
    raw = tuple(t.text for t in terms)
    if not any(_CJK.search(t) for t in raw):
        return ParsedQuery(_WORDS, _join(terms, True, False), _join(terms, True, True), (), raw,
                           tuple(t.prefix for t in terms))
    long_terms = [t for t in terms if len(t.text) >= 3]
    short = tuple(t.text for t in terms if len(t.text) < 3)
    any_expr = _join(long_terms, False, True) if not short else None
    return ParsedQuery(_TRIGRAM, _join(long_terms, False, False), any_expr, short, raw)


_FEW_SESSIONS = 200


def _filter_sql(f: Filters, conn: sqlite3.Connection | None = None) -> tuple[str, list[object]]:
    # A source with few sessions: IN (subquery), one small ephemeral index instead of a sessions lookup per hit; a
    # source with many (cli: 18,000 on the 90-day home), a lookup per hit: building that index cost 5-8 ms a search.
    sql, params = [], []
    by_source = "m.session_id IN (SELECT id FROM sessions WHERE source = ?)"
    if f.source is not None and conn is not None and conn.execute(
            "SELECT count(*) FROM (SELECT 1 FROM sessions WHERE source = ? LIMIT ?)",
            (f.source, _FEW_SESSIONS)).fetchone()[0] >= _FEW_SESSIONS:
        by_source = "EXISTS (SELECT 1 FROM sessions s WHERE s.id = m.session_id AND s.source = ?)"
    for clause, value in ((by_source, f.source),
                          ("m.timestamp >= ?", f.since), ("m.timestamp < ?", f.until),
                          ("m.session_id != ?", f.exclude_session)):
        if value is not None:
            sql.append(clause)
            params.append(value)
    if f.exclude_sources:  # rarely selective: a correlated lookup beats building the excluded set
        marks = ",".join("?" * len(f.exclude_sources))
        sql.append(f"(SELECT source FROM sessions WHERE id = m.session_id) NOT IN ({marks})")
        params.extend(f.exclude_sources)
    return "".join(" AND " + s for s in sql), params


def like_pattern(term: str) -> str:
    """LIKE pattern matching `term` anywhere, with wildcards escaped (used with ESCAPE '\\')."""
    return "%" + term.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"


def _candidates(conn: sqlite3.Connection, q: ParsedQuery, expr: str | None, f: Filters,
                skip: list[str]) -> list[sqlite3.Row]:
    """Up to _WINDOW newest matching messages passing selective filters (outside sessions in `skip`), best
    score first."""
    where, params = _filter_sql(f, conn)
    if skip:
        where += f" AND m.session_id NOT IN ({','.join('?' * len(skip))})"
        params += skip
    where += "".join(" AND m.content LIKE ? ESCAPE '\\'" for _ in q.like_terms)
    params += [like_pattern(t) for t in q.like_terms]
    if expr is None:  # short CJK terms only: a scan, newest first
        sql = f"SELECT m.id, m.session_id, 0.0 AS score FROM messages m WHERE 1 {where} ORDER BY m.id DESC LIMIT ?"
        return conn.execute(sql, [*params, _LIKE_WINDOW]).fetchall()
    rank = f"bm25({q.table})"
    sql = (f"SELECT m.id, m.session_id, {rank} AS score FROM {q.table} "
           f"JOIN messages m ON m.id = {q.table}.rowid WHERE {q.table} MATCH ?{where} ORDER BY {q.table}.rowid DESC LIMIT ?")
    return sorted(conn.execute(sql, [expr, *params, _WINDOW]).fetchall(), key=lambda r: r[2])


def _selective(f: Filters) -> bool:
    """Filters that may reject most matches (so the window must be taken after them, in SQL)."""
    return f.source is not None or f.since is not None or f.until is not None


def _ranked_fast(conn: sqlite3.Connection, q: ParsedQuery, expr: str, f: Filters,
                 limit: int) -> dict[str, tuple[float, list[int]]]:
    """The index alone ranks the newest matches, a window at a time (no row lookups); sessions are then looked up
    best score first, a batch at a time, until `limit` sessions are found; older, larger windows follow if needed."""
    groups: dict[str, tuple[float, list[int]]] = {}
    where, params = _filter_sql(f)
    window = max(_FAST_MIN, limit * _PER_ASKED)
    before = None
    for _ in range(_ROUNDS):
        older = f" AND {q.table}.rowid < ?" if before is not None else ""
        hits = conn.execute(f"SELECT id, score FROM (SELECT {q.table}.rowid AS id, bm25({q.table}) AS score "
                            f"FROM {q.table} WHERE {q.table} MATCH ?{older} ORDER BY {q.table}.rowid DESC "
                            "LIMIT ?) ORDER BY score",
                            [expr, *([before] if before is not None else []), window]).fetchall()
        if not hits:
            break
        before = min(map(itemgetter(0), hits))
        i, size = 0, limit * PER_SESSION  # as many hits as can be shown usually name enough sessions
        while i < len(hits):
            batch, i, size = hits[i:i + size], i + size, min(size * 2, _BATCH)
            owner = dict(conn.execute(f"SELECT m.id, m.session_id FROM messages m WHERE m.id IN "
                                      f"({','.join('?' * len(batch))}){where}", [h[0] for h in batch] + params))
            _group_into(groups, [(h[0], owner[h[0]], h[1]) for h in batch if h[0] in owner], limit)
            if len(groups) >= limit:
                return groups
        if len(hits) < window:
            break
        window *= 2  # one busy session filled it: older windows grow, four reach back 15x the first
    return groups


def _group_into(groups: dict[str, tuple[float, list[int]]], rows: list, limit: int) -> None:
    """Add rows to session id -> (best score, up to PER_SESSION message ids), keeping at most `limit` sessions."""
    for mid, sid, score in rows:
        if sid not in groups:
            if len(groups) >= limit:
                continue
            groups[sid] = (-float(score), [])
        ids = groups[sid][1]
        if len(ids) < PER_SESSION:
            ids.append(mid)


_PROBE = 5_000  # messages in a date filter's range listed (time index) to bound the ids a search reads: ~0.4 ms


def _id_range(conn: sqlite3.Connection, f: Filters) -> tuple[int, int] | None:
    """The lowest and highest id of the messages in the filter's time range when it holds at most _PROBE of them
    (listed through the time index), so the index search reads only that stretch of ids instead of rejecting
    every newer match one row at a time ("since 1 day" with a common word: 38 -> 2.6 ms on the 90-day home).
    None without a date filter, for a range too big to list, or before the file has the index (a big file gets
    it from the background prune)."""
    cond = [c for c, v in (("timestamp >= ?", f.since), ("timestamp < ?", f.until)) if v is not None]
    if not cond:
        return None
    try:
        n, lo, hi = conn.execute(f"SELECT count(*), min(id), max(id) FROM (SELECT id FROM messages INDEXED BY "
                                 f"{TIME_INDEX} WHERE {' AND '.join(cond)} LIMIT ?)",
                                 [v for v in (f.since, f.until) if v is not None] + [_PROBE + 1]).fetchone()
    except sqlite3.OperationalError:  # no such index yet
        return None
    if n > _PROBE:
        return None
    return (int(lo), int(hi)) if n else (1, 0)


def _ranked_filtered(conn: sqlite3.Connection, q: ParsedQuery, expr: str, f: Filters,
                     limit: int) -> dict[str, tuple[float, list[int]]]:
    """With a selective filter (source, dates): the newest matches that pass it, a window at a time as in
    _ranked_fast, each window ranked by bm25 (computed only for the rows the window keeps). One window of 2,500
    made a common word with `since` read every match the filter rejected before the window filled (40 ms)."""
    groups: dict[str, tuple[float, list[int]]] = {}
    where, params = _filter_sql(f, conn)
    if (ids := _id_range(conn, f)) is not None:  # a date filter's few messages: only their ids are read
        where, params = f"{where} AND {q.table}.rowid BETWEEN ? AND ?", [*params, *ids]
    window, before = max(_FAST_MIN, limit * _PER_ASKED), None
    for _ in range(_ROUNDS):
        older = f" AND {q.table}.rowid < ?" if before is not None else ""
        rows = conn.execute(f"SELECT m.id, m.session_id, bm25({q.table}) FROM {q.table} JOIN messages m ON m.id = "
                            f"{q.table}.rowid WHERE {q.table} MATCH ?{older}{where} ORDER BY {q.table}.rowid DESC "
                            "LIMIT ?", [expr, *([before] if before is not None else []), *params, window]).fetchall()
        if not rows:
            break
        before = min(map(itemgetter(0), rows))
        _group_into(groups, sorted(rows, key=itemgetter(2)), limit)
        if len(groups) >= limit or len(rows) < window:
            break
        window *= 2
    return groups


def _collect(conn: sqlite3.Connection, q: ParsedQuery, filters: Filters,
             limit: int) -> tuple[str | None, dict[str, tuple[float, list[int]]]]:
    """Best sessions for the query; when one busy session fills the window, look again past it."""
    expr = q.match_all
    if expr and not q.like_terms:
        ranked = _ranked_filtered if _selective(filters) else _ranked_fast
        groups = ranked(conn, q, expr, filters, limit)
        if not groups and q.match_any and q.match_any != q.match_all:
            expr = q.match_any  # no message holds every word: rank messages holding any of them
            groups = ranked(conn, q, expr, filters, limit)
        return expr, dict(sorted(groups.items(), key=lambda kv: -kv[1][0]))
    rows = _candidates(conn, q, expr, filters, [])
    if not rows and q.match_any and q.match_any != q.match_all:
        expr = q.match_any
        rows = _candidates(conn, q, expr, filters, [])
    groups = {}
    for _ in range(_ROUNDS):
        _group_into(groups, rows, limit)
        if len(groups) >= limit or len(rows) < (_WINDOW if expr else _LIKE_WINDOW):
            break
        rows = _candidates(conn, q, expr, filters, list(groups))
    return expr, dict(sorted(groups.items(), key=lambda kv: -kv[1][0]))


def text_snippet(content: str, terms: tuple[str, ...], width: int = 40) -> str:
    """Window of `content` around the first hit of any term, hits wrapped in ** markers."""
    low = content.lower()
    hits = [i for t in terms if (i := low.find(t.lower())) >= 0]
    pos = min(hits) if hits else 0
    start, end = max(0, pos - width), min(len(content), pos + width + 20)
    piece = content[start:end]
    for t in sorted(terms, key=len, reverse=True):
        piece = re.sub(re.escape(t), lambda m: f"**{m.group(0)}**", piece, flags=re.IGNORECASE)
    return ("…" if start else "") + " ".join(piece.split()) + ("…" if end < len(content) else "")


def _snippets(conn: sqlite3.Connection, q: ParsedQuery, expr: str | None, ids: list[int]) -> dict[int, Snippet]:
    marks = ",".join("?" * len(ids))
    if expr is None:
        rows = conn.execute(f"SELECT id, role, timestamp, content AS snip FROM messages WHERE id IN ({marks})",
                            ids).fetchall()
        return {r["id"]: Snippet(r["id"], r["role"], r["timestamp"], text_snippet(r["snip"] or "", q.terms))
                for r in rows}
    out: dict[int, Snippet] = {}
    if q.table == _WORDS:  # words: cut from the stored text here, the index is asked only when that misses
        rows = conn.execute(f"SELECT id, role, timestamp, tool_name, CASE WHEN role = 'tool' THEN "
                            f"substr(content, 1, {FTS_TOOL_PREFIX}) ELSE content END AS content, tool_calls "
                            f"FROM messages WHERE id IN ({marks})", ids).fetchall()
        pattern = _hit_pattern(q)
        anchors = tuple({t.split()[0].lower() for t in q.terms if t.split()})
        for r in rows:
            text = _word_snippet(r, pattern, anchors)
            if text is not None:
                out[r["id"]] = Snippet(r["id"], r["role"], r["timestamp"], text)
        ids = [i for i in ids if i not in out]
        if not ids:
            return out
        marks = ",".join("?" * len(ids))
    tokens = 32 if q.table == _TRIGRAM else 16
    rows = conn.execute(
        f"SELECT m.id, m.role, m.timestamp, m.tool_name, m.content, m.tool_calls, "
        f"snippet({q.table}, -1, '{_OPEN}', '{_CLOSE}', '…', {tokens}) AS snip FROM {q.table} "
        f"JOIN messages m ON m.id = {q.table}.rowid "
        f"WHERE {q.table} MATCH ? AND {q.table}.rowid IN ({marks})", [expr, *ids]).fetchall()
    return out | {r["id"]: Snippet(r["id"], r["role"], r["timestamp"], _pick(r, q.terms)) for r in rows}


def _hit_pattern(q: ParsedQuery) -> re.Pattern[str]:
    """The query's terms as whole words (a prefix term as a word start), case-insensitive."""
    terms = sorted(zip(q.terms, q.prefixes, strict=True), key=lambda tp: len(tp[0]), reverse=True)  # longest first
    alts = [_edge(term[0], r"(?<!\w)") + r"\W+".join(re.escape(w) for w in term.split())
            + ("" if prefix else _edge(term[-1], r"(?!\w)")) for term, prefix in terms]
    return re.compile("|".join(alts), re.IGNORECASE)


def _edge(char: str, lookaround: str) -> str:
    """A word boundary next to a word character is `\\b` (a fifth of a lookaround's compile time); next to any
    other character, the lookaround itself."""
    return r"\b" if char.isalnum() or char == "_" else lookaround


def _search_from_anchor(pattern: re.Pattern[str], content: str, anchors: tuple[str, ...]) -> re.Match[str] | None:
    """pattern.search(content), started at the first place a term's first word occurs (found by str.find, in C):
    a regex with a lookbehind tried at every character of an 8 KB tool output costs more than the rest of the
    snippet. None when no anchor occurs (the index then cuts the snippet)."""
    low = content.lower()
    if len(low) != len(content):  # a character lowered to two: positions no longer line up
        return pattern.search(content)
    found = [i for a in anchors if (i := low.find(a)) >= 0]
    return pattern.search(content, min(found)) if found else None


def _word_snippet(row: sqlite3.Row, pattern: re.Pattern[str], anchors: tuple[str, ...],
                  width: int = 40) -> str | None:
    """A window of the message around its first whole-word hit, hits in **; None when no term is found
    as a word (the index then cuts the snippet: its tokenizer folds accents, which a regex does not)."""
    content = row["content"] or ""
    if row["role"] == "tool":
        content = content[:FTS_TOOL_PREFIX]  # what the index holds of a tool output
    m = _search_from_anchor(pattern, content, anchors)
    if m is None and row["tool_calls"]:
        content = _calls_text(row["tool_calls"])
        m = pattern.search(content)
    if m is None:
        return None
    start, end = max(0, m.start() - width), min(len(content), m.end() + width + 20)
    while start > 0 and content[start - 1].isalnum() and start < m.start():
        start += 1  # not from the middle of a word
    while end < len(content) and content[end].isalnum() and end > m.end():
        end -= 1
    piece = pattern.sub(lambda h: f"{_OPEN}{h.group(0)}{_CLOSE}", content[start:end])
    text = " ".join(piece.split()).replace(_OPEN, "**").replace(_CLOSE, "**")
    return ("…" if start else "") + text + ("…" if end < len(content) else "")


def _calls_text(raw: str) -> str:
    """Tool calls as `name {arguments}` (Hermes's JSON objects, read loosely)."""
    try:
        calls = safe_loads(raw)
    except ValueError:
        return raw
    fns = [c.get("function") or c for c in calls if isinstance(c, dict)]
    return "; ".join(f"{f.get('name', '')} {f.get('arguments', '')}" for f in fns)


def _pick(row: sqlite3.Row, terms: tuple[str, ...]) -> str:
    """The snippet around the hit: the indexed text is content, tool name and tool-call JSON joined."""
    if row["tool_calls"] and _OPEN in (row["snip"] or "") and not (row["content"] or "").strip():
        return text_snippet(_calls_text(row["tool_calls"]), terms)
    text = " ".join((row["snip"] or "").replace('\\"', '"').replace("\\n", " ").split())
    name = row["tool_name"]
    if name and text.endswith(" " + name):  # the tool name the index appends to a tool result's content
        text = text[: -len(name) - 1]
    if name and not (row["content"] or "").strip():
        text = f"[{name}] {text}"
    # Private markers inside SQL, so ** already present in a message is not mistaken for a hit.
    return " ".join(text.split()).replace(_OPEN, "**").replace(_CLOSE, "**")


# ---- messages the background index rebuild has not reached ----------------------------------------

SCAN_IDS = 5_000  # not-yet-indexed message ids scanned per search (the newest of them), while the index is rebuilt


def unindexed(conn: sqlite3.Connection) -> tuple[int, int] | None:
    """(P, H) while a rebuild is under way: messages with ids in (P, H] are not in the index yet (the triggers
    skip them; upstream's rebuild uses the same keys and predicate)."""
    try:
        meta = dict(conn.execute("SELECT key, value FROM state_meta WHERE key IN (?, ?)",
                                 (HIGH_WATER, PROGRESS)).fetchall())
    except sqlite3.OperationalError:  # no state_meta
        return None
    try:
        high, done = int(meta.get(HIGH_WATER, "")), int(meta.get(PROGRESS) or 0)
    except ValueError:
        return None
    return (done, high) if high > done else None


def unscanned(conn: sqlite3.Connection) -> int:
    """Messages a search can miss right now: not indexed yet and older than the ids it scans instead."""
    span = unindexed(conn)
    if span is None or span[1] - span[0] <= SCAN_IDS:
        return 0
    return int(conn.execute("SELECT COUNT(*) FROM messages WHERE id > ? AND id <= ?",
                            (span[0], span[1] - SCAN_IDS)).fetchone()[0])


def _term_patterns(q: ParsedQuery) -> list[re.Pattern[str]]:
    """One whole-word pattern per term (words index); CJK terms match anywhere, as the trigram index does."""
    if q.table != _WORDS:
        return [re.compile(re.escape(t), re.IGNORECASE) for t in q.terms]
    return [_hit_pattern(ParsedQuery(q.table, None, None, (), (t,), (p,))) for t, p in zip(q.terms, q.prefixes,
                                                                                         strict=True)]


def _scan_unindexed(conn: sqlite3.Connection, q: ParsedQuery, f: Filters, span: tuple[int, int],
                    groups: dict[str, tuple[float, list[int]]], limit: int) -> dict[int, Snippet]:
    """Fill `groups` up to `limit` sessions from messages the rebuild has not indexed yet: the newest SCAN_IDS
    ids of the pending range, newest first, holding every term (LIKE narrows, the term patterns decide). They
    rank after the indexed hits. Returns their snippets."""
    done, high = span
    where, params = _filter_sql(f)
    likes = "".join(" AND (m.content LIKE ? ESCAPE '\\' OR m.tool_calls LIKE ? ESCAPE '\\')" for _ in q.terms)
    rows = conn.execute(
        f"SELECT m.id, m.session_id, m.role, m.timestamp, m.tool_calls, CASE WHEN m.role = 'tool' THEN "
        f"substr(m.content, 1, {FTS_TOOL_PREFIX}) ELSE m.content END AS content FROM messages m "
        f"WHERE m.id > ? AND m.id <= ?{likes}{where} ORDER BY m.id DESC",
        [max(done, high - SCAN_IDS), high, *[like_pattern(t) for t in q.terms for _ in (0, 1)], *params])
    patterns, found = _term_patterns(q), {}
    every = _hit_pattern(q) if q.table == _WORDS else None
    anchors = tuple({t.split()[0].lower() for t in q.terms if t.split()})
    for r in rows:
        sid = r["session_id"]
        if sid not in groups and len(groups) >= limit:
            break
        if sid in groups and len(groups[sid][1]) >= PER_SESSION:
            continue
        text = f"{r['content'] or ''}\n{_calls_text(r['tool_calls']) if r['tool_calls'] else ''}"
        if not all(p.search(text) for p in patterns):
            continue
        cut = _word_snippet(r, every, anchors) if every is not None else None
        groups.setdefault(sid, (0.0, []))[1].append(r["id"])
        found[r["id"]] = Snippet(r["id"], r["role"], r["timestamp"], cut or text_snippet(text, q.terms))
    return found


def search(conn: sqlite3.Connection, text: str, filters: Filters, limit: int = 10) -> list[SearchHit]:
    """Sessions whose messages match `text`, best first, each with up to 3 snippets. While the index is being
    rebuilt, the newest messages it has not reached yet are scanned too (`unscanned` counts the rest)."""
    q = parse_query(text)
    if q is None or limit <= 0:
        return []
    expr, groups = _collect(conn, q, filters, limit)
    scanned: dict[int, Snippet] = {}
    if len(groups) < limit and (span := unindexed(conn)) is not None:
        scanned = _scan_unindexed(conn, q, filters, span, groups, limit)
    if not groups:
        return []
    ids = [i for _, ids in groups.values() for i in ids if i not in scanned]
    snippets = (_snippets(conn, q, expr, ids) if ids else {}) | scanned
    marks = ",".join("?" * len(groups))
    sessions = {r[0]: SessionInfo.from_values(r) for r in conn.execute(
        f"SELECT {_HIT_COLUMNS} FROM sessions WHERE id IN ({marks})", list(groups))}
    return [SearchHit(sessions[sid], score, tuple(snippets[i] for i in ids if i in snippets))
            for sid, (score, ids) in groups.items() if sid in sessions]
