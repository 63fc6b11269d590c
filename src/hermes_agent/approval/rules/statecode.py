"""Is the session's saved shell state only what the shell itself saves? The wrapper's EXIT trap writes
`export -p; declare -f; alias -p` to the state channel, but the command can write there too (or instead):
`printf '%s\0rm -rf ~/x\n' "$PWD" >&4` makes every later call run `rm -rf ~/x` when it restores the state,
whatever that call's text. So the state's top level is walked over the rules' own tokens (quotes, heredocs
and substitutions as bash reads them): function definitions `NAME () { ... }` (their bodies skipped by the
braces bash itself would close them with), and lines of `declare`/`typeset`/`export`/`alias` with plain words
(no substitution, no redirection; an exported array's `( ... )`) that name no function the state defined.
Anything else is code of the state's own: the gate asks before any later command runs with it. Pure."""

from __future__ import annotations

from functools import lru_cache

from hermes_agent.approval.rules.lexer import lex

_DEFINERS = frozenset({"declare", "typeset", "export", "alias"})
_STATE_LIMIT = 8 * 2**20


@lru_cache(maxsize=4)
def foreign_code(state: str) -> str:
    """'' when `state` only defines variables, functions and aliases; else what runs besides (for the user)."""
    if "\0" in state or len(state) > _STATE_LIMIT:
        return "bytes the shell does not write"
    tokens, error = lex(state)
    if error:
        return "text the shell does not write (unbalanced quotes or brackets)"
    defined: set[str] = set()
    i, n = 0, len(tokens)
    while i < n:
        tok = tokens[i]
        if tok == "\n":
            i += 1
        elif isinstance(tok, str) or tok.subs:
            return f"`{_shown(tokens[i:i + 8])}`"
        elif tokens[i + 1:i + 3] == ["(", ")"]:
            defined.add(tok.text)
            i = _body_end(tokens, i + 3)
            if i < 0:
                return f"the function `{tok.text}` as the shell does not write it"
        elif tok.text in _DEFINERS and tok.text not in defined:
            i = _definer_end(tokens, i + 1)
            if i < 0:
                return "a definition line with more than definitions in it"
        else:
            return f"`{_shown(tokens[i:i + 8])}`"
    return ""


def _body_end(tokens: list, i: int) -> int:
    """Index after the `}` that closes the body opening at or after `i` (-1 when it does not close). A brace
    counts only where bash reads a command word: first in the text or after an operator."""
    while i < len(tokens) and tokens[i] == "\n":
        i += 1
    if i >= len(tokens) or isinstance(tokens[i], str) or tokens[i].text != "{" or tokens[i].quoted:
        return -1
    depth = 0
    for k in range(i, len(tokens)):
        tok, before = tokens[k], tokens[k - 1] if k > i else "\n"
        if isinstance(tok, str) or tok.quoted or not isinstance(before, str):
            continue
        depth += {"{": 1, "}": -1}.get(tok.text, 0)
        if depth == 0:
            return k + 1
    return -1


def _definer_end(tokens: list, i: int) -> int:
    """Index after a definer line's plain words (an array's parentheses allowed after `NAME=`); -1 otherwise."""
    array = False
    while i < len(tokens) and tokens[i] != "\n":
        tok = tokens[i]
        if tok == "(" and not array and not isinstance(tokens[i - 1], str) and tokens[i - 1].text.endswith("="):
            array = True
        elif tok == ")" and array:
            array = False
        elif isinstance(tok, str) or tok.subs:
            return -1
        i += 1
    return -1 if array else i


def _shown(tokens: list) -> str:
    text = " ".join(t if isinstance(t, str) else t.text for t in tokens).replace("\n", " ")
    return "".join(c if c.isprintable() else "?" for c in text)[:80].strip()
