"""Context compression: estimate prompt tokens, decide when to compact, and compact the middle of a
conversation into a structured summary — or, with no summarizer, clear old tool output and drop the
oldest turns — never separating a tool call from its results. Pure: imports messages/config/errors only."""

from __future__ import annotations

import functools
import json
import os
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from hermes_agent.config.settings import Settings
from hermes_agent.lazylog import get_logger
from hermes_agent.messages import SUMMARY_PREFIX, Message, cap_result, safe_loads

log = get_logger(__name__)

_SUMMARY_INTRO = (f"{SUMMARY_PREFIX} Earlier turns of this conversation were compacted to save space. "
                  "This is background for continuing the work, not a new request; the messages after it "
                  "are the most recent ones.")
FILES_LINE = "Files touched: "
TAIL_FLOOR = 8              # protect_last_n shrinks to this when nothing else is compressible
_MSG_OVERHEAD_CHARS = 16    # role and framing: about 4 tokens a message
_CLEAR_MIN_CHARS = 200      # tool outputs shorter than this are not worth clearing
_KEEP_RECENT_TOOL_OUTPUTS = 2
_MIN_CONTENT_CAP = 2000
_TRANSCRIPT_TOOL_CHARS = 2000
_TRANSCRIPT_TEXT_CHARS = 6000
_TRANSCRIPT_MAX_CHARS = 400_000
_FILES_LINE_CHARS = 1200

Method = Literal["summary", "truncate", "none"]
Summarize = Callable[[str], str]


@dataclass(frozen=True, slots=True)
class CompressionResult:
    """The compacted conversation; `method` "none" means nothing could be compressed."""

    messages: list[Message]
    summary: str | None
    dropped_count: int
    method: Method
    tokens_before: int = 0
    tokens_after: int = 0
    cleared_outputs: int = 0
    error: str | None = field(default=None)


# ---- estimates and trigger ---------------------------------------------------------------------

def message_chars(m: Message) -> int:
    """Characters one message contributes to a request (content, tool calls, framing)."""
    n = len(m.content or "") + _MSG_OVERHEAD_CHARS
    for tc in m.tool_calls:
        n += len(tc.name) + len(tc.arguments) + 24
    return n


def estimate_tokens(messages: Sequence[Message]) -> int:
    """Rough token count: characters / 4."""
    return (sum(message_chars(m) for m in messages) + 3) // 4


def prompt_tokens_now(last_prompt_tokens: int | None, messages: Sequence[Message]) -> int:
    """Tokens the next request carries: the API's prompt figure for the last reply plus an estimate
    of everything appended since (that reply and its tool results); chars/4 before the first reply.
    Never below the chars/4 estimate, so an endpoint reporting zero or partial usage cannot hide growth."""
    whole = estimate_tokens(messages)
    if not last_prompt_tokens:
        return whole
    last = max((i for i, m in enumerate(messages) if m.role == "assistant"), default=None)
    since = estimate_tokens(messages[last:]) if last is not None else 0
    return max(whole, last_prompt_tokens + since)


def should_compress(last_prompt_tokens: int | None, messages: Sequence[Message], context_length: int,
                    threshold: float = 0.5) -> bool:
    """True once the next request would reach `threshold` of the context window."""
    if context_length <= 0:
        return False
    return prompt_tokens_now(last_prompt_tokens, messages) >= int(context_length * threshold)


def compression_target(context_length: int, threshold: float = 0.5) -> int:
    """A size to compress down to: well under the trigger, so the next turns do not re-trigger it."""
    return max(1, int(context_length * threshold * 0.6))


# ---- boundaries --------------------------------------------------------------------------------

def split_protected(messages: Sequence[Message], protect_first_n: int,
                    protect_last_n: int) -> tuple[list[Message], list[Message], list[Message], list[Message]]:
    """(system, head, middle, tail): leading system messages, the first N and last N others verbatim.
    Boundaries move so an assistant tool-call message always stays with all of its tool results."""
    n_sys = 0
    while n_sys < len(messages) and messages[n_sys].role == "system":
        n_sys += 1
    system, body = list(messages[:n_sys]), list(messages[n_sys:])
    h = min(max(protect_first_n, 0), len(body))
    while h < len(body) and body[h].role == "tool":  # head keeps the results of its last call
        h += 1
    t = max(h, len(body) - max(protect_last_n, 0))
    while h < t < len(body) and body[t].role == "tool":  # tail starts at the call, not mid-results
        t -= 1
    return system, body[:h], body[h:t], body[t:]


def _groups(messages: Sequence[Message]) -> list[list[Message]]:
    """Messages grouped so each assistant tool-call message travels with the tool results after it."""
    out: list[list[Message]] = []
    for m in messages:
        if m.role == "tool" and out and (out[-1][0].tool_calls or out[-1][0].role == "tool"):
            out[-1].append(m)
        else:
            out.append([m])
    return out


# ---- truncation helpers ------------------------------------------------------------------------

def cleared_marker(n_chars: int) -> str:
    """What an old tool result becomes: still a JSON object, as every tool message the model reads."""
    return json.dumps({"cleared": f"old tool output cleared: {n_chars:,} chars"})


def _clear(m: Message) -> Message:
    return m.with_content(cleared_marker(len(m.content or "")))


def _clearable(m: Message) -> bool:
    return m.role == "tool" and len(m.content or "") > _CLEAR_MIN_CHARS


def truncate_tool_outputs(messages: Sequence[Message], keep_last: int) -> list[Message]:
    """Replace the content of every tool result except the last `keep_last` with a short marker."""
    tool_idx = [i for i, m in enumerate(messages) if m.role == "tool"]
    older = set(tool_idx[:max(len(tool_idx) - max(keep_last, 0), 0)])
    return [_clear(m) if i in older and _clearable(m) else m for i, m in enumerate(messages)]


def _cut_middle(text: str, limit: int) -> str:
    if len(text) <= limit:
        return text
    head = limit * 2 // 3
    tail = limit - head
    return f"{text[:head]}\n[... {len(text) - limit:,} chars cut ...]\n{text[-tail:]}"


def _shrink(messages: list[Message], target: int) -> tuple[list[Message], int]:
    """Last resort when protected turns alone exceed `target`: clear older tool outputs anywhere,
    then cap long contents. Returns (messages, outputs cleared)."""
    out = list(messages)
    total = sum(message_chars(m) for m in out)
    cleared = 0
    tool_idx = [i for i, m in enumerate(out) if _clearable(m)]
    for i in tool_idx[:max(len(tool_idx) - _KEEP_RECENT_TOOL_OUTPUTS, 0)]:
        if total <= target * 4:
            return out, cleared
        new = _clear(out[i])
        total += message_chars(new) - message_chars(out[i])
        out[i], cleared = new, cleared + 1
    if total > target * 4:
        fixed = sum(message_chars(m) for m in out if m.role == "system")
        cap = max(_MIN_CONTENT_CAP, (target * 4 - fixed) // max(1, len(out)))
        out = [m if m.role == "system" or len(m.content or "") <= cap
               else m.with_content(cap_result(m.content or "", cap) if m.role == "tool"
                                   else _cut_middle(m.content or "", cap)) for m in out]
    return out, cleared


# ---- summary -----------------------------------------------------------------------------------

@functools.cache
def _template() -> str:
    return (Path(__file__).parent / "prompts" / "compression.md").read_text(encoding="utf-8")


def _render(m: Message) -> str:
    if m.role == "tool":
        return f"TOOL RESULT ({m.name or 'tool'}):\n{_cut_middle(m.content or '', _TRANSCRIPT_TOOL_CHARS)}"
    text = f"{m.role.upper()}:\n{_cut_middle(m.content or '', _TRANSCRIPT_TEXT_CHARS)}".rstrip()
    for tc in m.tool_calls:
        text += f"\n-> called {tc.name}({_cut_middle(tc.arguments, 500)})"
    return text


def build_summary_prompt(middle: Sequence[Message], budget_tokens: int = 2000) -> str:
    """The summarizer prompt (core/prompts/compression.md) filled with a transcript of `middle`."""
    transcript = _cut_middle("\n\n".join(_render(m) for m in middle), _TRANSCRIPT_MAX_CHARS)
    return _template().replace("{{BUDGET}}", str(budget_tokens)).replace("{{TRANSCRIPT}}", transcript)


def _summarize(middle: list[Message], summarize: Summarize, budget: int) -> tuple[str | None, str | None]:
    """(summary, error): any failure of the injected summarizer falls back, never propagates."""
    try:
        text = summarize(build_summary_prompt(middle, budget))
    except Exception as exc:  # a failed summary must not end the run: truncation takes over
        log.warning("context summary failed; falling back to truncation", exc_info=True)
        return None, f"{type(exc).__name__}: {exc}"
    text = (text or "").strip() if isinstance(text, str) else ""
    if text.startswith(SUMMARY_PREFIX):
        text = text[len(SUMMARY_PREFIX):].strip()
    if not text:
        return None, "the summarizer returned no text"
    if _garbage(text):
        return None, "the summarizer returned no usable text"
    return _cut_middle(text, budget * 4 * 2), None


def _garbage(text: str) -> bool:
    """True for an answer that cannot stand in for a conversation: a handful of words, or mostly
    symbols (a broken stream, a repeated token, binary noise)."""
    words = [w for w in text.split() if any(ch.isalnum() for ch in w)]
    if len(words) < 4:
        return True
    letters = sum(1 for ch in text if ch.isalnum())
    return letters < len(text) * 0.3 or len(set(words)) < 3


def summary_message(summary: str, todo_text: str | None = None) -> Message:
    """The user-role message that stands in for the compacted turns."""
    body = f"{_SUMMARY_INTRO}\n\n{summary}"
    if todo_text:
        body += f"\n\n{todo_text}"
    return Message(role="user", content=body)


def _noted_files(m: Message) -> list[str]:
    """Files an earlier compaction note listed, so the list survives compacting the note itself."""
    if m.role != "user" or not (m.content or "").startswith(SUMMARY_PREFIX):
        return []
    for line in (m.content or "").splitlines():
        if line.startswith(FILES_LINE):
            return _parse_files(line)
    return []


def _parse_files(line: str) -> list[str]:
    body = line[len(FILES_LINE):]
    base = ""
    if body.startswith("(under ") and "): " in body:
        base, body = body[len("(under "):].split("): ", 1)
    body = body.split(" (+", 1)[0]
    names = [f.strip() for f in body.split(", ") if f.strip() and f.strip() != "…"]
    return [f"{base.rstrip('/')}/{n}" if base else n for n in names]


def files_line(files: Sequence[str], limit: int = _FILES_LINE_CHARS) -> str:
    """The files touched on one line of at most about `limit` characters: paths under a common directory
    written relative to it, the first few and as many of the latest as fit, and how many were left out."""
    files = list(dict.fromkeys(files))
    base = ""
    if len(files) > 1 and all(f.startswith("/") for f in files):
        base = os.path.commonpath(files)
        base = "" if base == "/" or base in files else base
    names = [f[len(base) + 1:] if base else f for f in files]
    first, rest = names[:3], names[3:]
    latest: list[str] = []
    used = sum(len(n) + 2 for n in first) + len(base) + 40
    for n in reversed(rest):
        if used + len(n) + 2 > limit:
            break
        latest.insert(0, n)
        used += len(n) + 2
    left_out = len(rest) - len(latest)
    shown = first + (["…"] if left_out else []) + latest
    head = f"{FILES_LINE}(under {base}): " if base else FILES_LINE
    return head + ", ".join(shown) + (f" (+{left_out} more)" if left_out else "")


def fallback_summary(dropped: Sequence[Message]) -> str:
    """A deterministic summary of removed turns: user asks, tools used, files referenced."""
    asks = [_cut_middle((m.content or "").strip(), 300) for m in dropped
            if m.role == "user" and m.content and not m.content.startswith(SUMMARY_PREFIX)]
    tools = Counter(tc.name for m in dropped for tc in m.tool_calls)
    files: dict[str, None] = dict.fromkeys(f for m in dropped for f in _noted_files(m))
    for m in dropped:
        for tc in m.tool_calls:
            try:
                args = safe_loads(tc.arguments or "{}")
            except ValueError:
                continue
            for key in ("path", "file_path", "filename"):
                if isinstance(args, dict) and isinstance(args.get(key), str):
                    files[args[key]] = None
    lines = [f"No model summary was available: {len(dropped)} earlier messages were removed to fit "
             "the context window."]
    if asks:
        lines += ["User messages in the removed part:", *(f"- {a}" for a in asks[-8:])]
    if tools:
        lines.append("Tools called there: " + ", ".join(f"{n} x{c}" for n, c in tools.most_common()))
    if files:
        lines.append(files_line(list(files)))
    lines.append("Re-read files or re-run commands if you need their current contents.")
    return "\n".join(lines)


# ---- compress ----------------------------------------------------------------------------------

def _truncate_middle_turns(middle: list[Message],
                           budget_chars: int) -> tuple[list[Message], list[Message], int]:
    """Clear every tool output in the middle, then drop its oldest groups until it fits
    `budget_chars`. Returns (kept, dropped, outputs cleared)."""
    cleared = sum(1 for m in middle if _clearable(m))
    groups = _groups([_clear(m) if _clearable(m) else m for m in middle])
    size = sum(message_chars(m) for g in groups for m in g)
    dropped: list[Message] = []
    while groups and size > budget_chars:
        g = groups.pop(0)
        dropped.extend(g)
        size -= sum(message_chars(m) for m in g)
    return [m for g in groups for m in g], dropped, cleared


def _keep_task(head: list[Message], middle: list[Message]) -> tuple[list[Message], list[Message]]:
    """The task (the first user message) always stays verbatim, even with protect_first_n 0."""
    if any(m.role == "user" for m in head):
        return head, middle
    i = next((i for i, m in enumerate(middle) if m.role == "user"), None)
    if i is None or (middle[i].content or "").startswith(SUMMARY_PREFIX):
        return head, middle
    return [*head, middle[i]], middle[:i] + middle[i + 1:]


def describe(res: CompressionResult) -> str:
    """One line telling the user what compaction did and, without a model summary, what it dropped."""
    line = f"compressed context: {res.tokens_before} → {res.tokens_after} tokens ({res.method})"
    if res.method == "truncate":
        why = f"summary failed ({res.error})" if res.error else "no summarizer"
        line += (f"; {why}: dropped {res.dropped_count} earlier messages, cleared {res.cleared_outputs} tool "
                 "outputs; kept the system prompt, the task, the latest turns and the list of files touched")
    elif res.method == "summary":
        line += f"; {res.dropped_count} earlier messages summarised"
    return line


def compress(messages: Sequence[Message], summarize: Summarize | None, *, protect_first_n: int = 3,
             protect_last_n: int = 20, todo_text: str | None = None, target_tokens: int | None = None,
             summary_budget_tokens: int = 2000) -> CompressionResult:
    """Compact the middle of `messages` to fit `target_tokens` (default: half the current estimate).
    With `summarize` (prompt -> text) the middle becomes a structured summary; without it, or if it
    fails, old tool outputs are cleared and the oldest middle turns dropped with a deterministic note."""
    msgs = list(messages)
    before = estimate_tokens(msgs)
    target = target_tokens if target_tokens is not None else max(1, before // 2)
    system, head, middle, tail = split_protected(msgs, protect_first_n, protect_last_n)
    if not middle and protect_last_n > TAIL_FLOOR:
        system, head, middle, tail = split_protected(msgs, protect_first_n, TAIL_FLOOR)
    head, middle = _keep_task(head, middle)
    error = None
    if middle and summarize is not None:
        summary, error = _summarize(middle, summarize, summary_budget_tokens)
        if summary is not None:
            out, cleared = _shrink([*system, *head, summary_message(summary, todo_text), *tail], target)
            if estimate_tokens(out) < before:
                return CompressionResult(out, summary, len(middle), "summary", before,
                                         estimate_tokens(out), cleared, None)
    fixed = sum(message_chars(m) for m in (*system, *head, *tail)) + 2000  # room for the note
    kept, dropped, cleared = _truncate_middle_turns(middle, target * 4 - fixed)
    note = fallback_summary(dropped) if dropped else None
    if note is None and todo_text and cleared:  # the todo results may be among the cleared outputs
        note_text: str | None = "Old tool outputs were cleared to save space."
    else:
        note_text = note
    inserted = [summary_message(note_text, todo_text)] if note_text else []
    out, cleared_more = _shrink([*system, *head, *inserted, *kept, *tail], target)
    after = estimate_tokens(out)
    if after >= before:  # e.g. the note would outweigh the few tiny turns it replaces
        return CompressionResult(msgs, None, 0, "none", before, before, 0, error)
    return CompressionResult(out, note, len(dropped), "truncate", before, after,
                             cleared + cleared_more, error)


# ---- the loop's compactor ----------------------------------------------------------------------

class AutoCompactor:
    """The agent loop's `compact(messages, last_prompt_tokens, force)` callable, configured from the
    `compression:` settings. Returns the compacted list, or None when nothing should change."""

    def __init__(self, settings: Settings, summarize: Summarize | None = None, *,
                 todo_text: Callable[[], str | None] | None = None,
                 on_result: Callable[[CompressionResult], None] | None = None) -> None:
        c = settings.cfg.compression
        self.enabled = c.enabled
        self.threshold = c.threshold
        self.protect_first_n = c.protect_first_n
        self.protect_last_n = c.protect_last_n
        self.context_length = settings.model.context_length
        self.summarize, self.todo_text, self.on_result = summarize, todo_text, on_result
        self._rearm_at = 0  # anti-thrashing: after a compaction that stayed big, wait for real growth
        self._sizes: tuple[int, Message | None, int, int] = (0, None, 0, -1)  # count, last, chars, chars before the
        # last assistant message (-1: none yet)

    def __call__(self, messages: list[Message], last_prompt_tokens: int | None,
                 force: bool = False) -> list[Message] | None:
        trigger = int(self.context_length * self.threshold)
        tokens = self._tokens_now(last_prompt_tokens, messages)
        if not force and (not self.enabled or tokens < max(trigger, self._rearm_at)):
            return None
        target = compression_target(self.context_length, self.threshold)
        if force:  # the endpoint refused the request: the configured window may be wrong, so halve
            target = min(target, max(1, estimate_tokens(messages) // 2))
        budget = max(2000, min(self.context_length // 20, 10_000))
        todo = self.todo_text() if self.todo_text else None
        res = compress(messages, self.summarize, protect_first_n=self.protect_first_n,
                       protect_last_n=self.protect_last_n, todo_text=todo, target_tokens=target,
                       summary_budget_tokens=budget)
        if self.on_result is not None:
            self.on_result(res)
        if res.method == "none":
            self._rearm_at = int(tokens * 1.1)
            return None
        self._rearm_at = int(res.tokens_after * 1.1) if res.tokens_after >= trigger else 0
        return res.messages

    def _tokens_now(self, last_prompt_tokens: int | None, messages: list[Message]) -> int:
        """prompt_tokens_now, measuring only the messages appended since the last call (each turn's check is
        then as cheap at message 500 as at message 5); a conversation changed otherwise is measured anew."""
        count, last, chars, to_reply = self._sizes
        if not (0 < count <= len(messages) and messages[count - 1] is last):
            count, chars, to_reply = 0, 0, -1
        for m in messages[count:]:
            if m.role == "assistant":
                to_reply = chars
            chars += message_chars(m)
        self._sizes = (len(messages), messages[-1] if messages else None, chars, to_reply)
        whole = (chars + 3) // 4
        if not last_prompt_tokens:
            return whole
        since = (chars - to_reply + 3) // 4 if to_reply >= 0 else 0
        return max(whole, last_prompt_tokens + since)
