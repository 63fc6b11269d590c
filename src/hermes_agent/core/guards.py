"""Loop guard: notices a model repeating the same tool call with the same arguments."""

from __future__ import annotations

import json
from dataclasses import dataclass, field

from hermes_agent.messages import ToolCall, safe_loads


def _key(call: ToolCall) -> str:
    try:
        args = json.dumps(safe_loads(call.arguments or "{}"), sort_keys=True)
    except ValueError:
        args = call.arguments
    return f"{call.name}\x00{args}"


@dataclass(slots=True)
class RepeatGuard:
    """Counts consecutive identical calls; warns at `warn_after`, stops at `hard_limit`."""

    warn_after: int = 3
    hard_limit: int = 6
    _last: str | None = None
    _count: int = 0
    history: list[str] = field(default_factory=list)

    def observe(self, call: ToolCall) -> int:
        """Record a call; return how many times in a row it has now been made."""
        key = _key(call)
        self._count = self._count + 1 if key == self._last else 1
        self._last = key
        return self._count

    def warning(self, call: ToolCall, count: int) -> str | None:
        if count < self.warn_after:
            return None
        return (f"You have called {call.name} with identical arguments {count} times in a row; the result "
                f"will not change. Use the result you have, try a different approach, or answer the user.")

    def should_stop(self, count: int) -> bool:
        return count >= self.hard_limit


def with_warning(result: str, warning: str) -> str:
    """Attach a warning to a JSON result without breaking its JSON shape."""
    try:
        data = safe_loads(result)
    except ValueError:
        return f"{result}\n[warning] {warning}"
    if isinstance(data, dict):
        data["warning"] = warning
        return json.dumps(data, ensure_ascii=False)
    return json.dumps({"result": data, "warning": warning}, ensure_ascii=False)
