"""ApprovalSubject (layer 2, pure data): what the approval gate judges for one tool call. The tool that
owns the arguments builds it (registry trait `approval_subject`), so the gate needs no tool names."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class ApprovalSubject:
    """`command`: shell text as the backend would run it (approval "command"); `paths`: every path the
    call would modify (approval "writes"; with `command` too when a running background process may run the
    new content: judged as if run now, tools/builtin/_bgwrites.py); `origin`: who runs an external tool, e.g. "MCP server 'gh'"."""

    command: str = ""
    paths: tuple[str, ...] = ()
    origin: str = ""
    uncontained: str = ""  # why a command would run outside the OS sandbox (the model asked, with a reason)


def heredoc(runner: str, text: str, tag: str = "HERMES_CODE") -> str:
    """`text` fed to `runner` (`python3 -`) as a quoted heredoc, the shape the rules judge as that language's code.
    The end word is one no line of `text` is, so no line of it can end the heredoc early and be read as shell."""
    lines = set(text.splitlines())
    while tag in lines:
        tag += "_"
    return f"{runner} <<'{tag}'\n{text.rstrip()}\n{tag}\n"
