"""Text for the user's terminal: what the model, a tool or a web page wrote must not drive it. Escape
sequences (OSC 52 clipboard writes, OSC 0/2 titles, OSC 8 links, CSI clears and cursor moves, DCS...), other
C0/C1 controls, a lone carriage return and bidi overrides are shown as visible text (`^[]52;c;...^G`) instead
of being interpreted. Colour codes hermes adds itself are kept by naming them (`keep`)."""

from __future__ import annotations

from collections.abc import Collection

from hermes_agent import lazyre

# An escape sequence (CSI, OSC/DCS/APC/PM/SOS up to its terminator, or ESC + one char), a C1 control, any
# other C0 control but tab and newline, DEL, a lone CR, and the bidi embedding/override/isolate controls.
_CONTROL = lazyre.compile(
    r"\x1b\[[0-?]*[ -/]*[@-~]?"
    r"|\x1b[\]PX^_][^\x07\x1b\x9c]*(?:\x07|\x1b\\|\x9c)?"
    r"|\x1b[\s\S]?"
    r"|[\x00-\x08\x0b-\x1f\x7f-\x9f]"
    r"|[\u202a-\u202e\u2066-\u2069]")


def _shown(ch: str) -> str:
    code = ord(ch)
    if code < 0x20:
        return "^" + chr(code + 0x40)
    if code == 0x7F:
        return "^?"
    return f"<U+{code:04X}>"


def visible(text: str, keep: Collection[str] = ()) -> str:
    """`text` with every terminal control made visible; sequences listed in `keep` (exact strings such as
    hermes's own "\\x1b[1m") pass unchanged. CRLF becomes LF; tab and newline stay."""
    if not text:
        return text
    text = text.replace("\r\n", "\n")

    def show(match) -> str:  # noqa: ANN001 - re.Match
        seq = match.group(0)
        return seq if seq in keep else "".join(_shown(c) if c < " " or "\x7f" <= c <= "\x9f" or
                                               "\u202a" <= c <= "\u202e" or "\u2066" <= c <= "\u2069" else c
                                               for c in seq)

    return _CONTROL.sub(show, text)


def one_line(text: str) -> str:
    """`text` (a path, or a note naming one) as one terminal line: controls visible, newline and tab too (a
    directory named `x\nhermes: ...` cannot forge a line of hermes's own)."""
    return visible(text).replace("\n", "^J").replace("\t", "^I")
