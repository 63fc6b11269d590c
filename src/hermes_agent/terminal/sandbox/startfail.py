"""A wrapped program (an MCP stdio server, the browser, a search) that the sandbox did not start: how to tell,
and the one policy for it (start it once more, once). Kept apart from wrapped.py so that the callers pay for no
sandbox imports until a start fails."""

from __future__ import annotations

# What a wrapped program's stderr starts with when the sandbox did not start it (bwrap: a mount point the plan
# named vanished; hermes sandbox: its network namespace not ready in time): the program never ran, so the caller
# (an MCP server's connection, the browser pool, search_files) may plan and start it once more.
START_FAILED = ("hermes sandbox: ", "bwrap: ")


def start_refused(text: str) -> str | None:
    """The last line of `text` (a wrapped program's stderr, or an error quoting it) in which the sandbox says it
    did not start the program: a START_FAILED marker at the line's start, after Playwright's `[pid=N][err] ` or
    after "said: " (an MCP server's last words); None when there is none."""
    for line in reversed(text.splitlines()):
        for marker in START_FAILED:
            at = line.find(marker)
            if at == 0 or (at > 0 and line[:at].endswith(("] ", "said: "))):
                return line[at:]
    return None


class OneMoreStart:
    """The one policy for a wrapped program the sandbox did not start (it never ran, so starting it again is
    safe): start it once more, and only once; any other failure, or a second refusal, is the caller's error."""

    def __init__(self) -> None:
        self.used = False

    def wanted(self, said: str) -> bool:
        """True the first time `said` (see start_refused) shows the sandbox refused to start the program."""
        if self.used or start_refused(said) is None:
            return False
        self.used = True
        return True
