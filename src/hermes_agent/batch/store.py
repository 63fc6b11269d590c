"""A run's files under data/<run_name>/: batch_<n>.jsonl written one finished prompt at a time (fsynced, so a
killed run loses at most what was in flight), failures.jsonl, and at the end trajectories.jsonl (one line
per prompt, in dataset order) and statistics.json. Resume is by prompt content: a prompt whose key is in a
batch file is done."""

from __future__ import annotations

import hashlib
import json
import logging
from dataclasses import dataclass
from pathlib import Path

from hermes_agent.nofollow import append_nofollow, read_regular_text, write_text_nofollow

log = logging.getLogger(__name__)


def prompt_key(prompt: str) -> str:
    return hashlib.sha256(prompt.strip().encode("utf-8")).hexdigest()[:16]


@dataclass(frozen=True, slots=True)
class Prompt:
    index: int
    text: str
    key: str


def load_dataset(path: Path) -> list[Prompt]:
    """JSONL rows with a "prompt" field (or plain strings); a duplicated prompt is kept once."""
    out: list[Prompt] = []
    seen: set[str] = set()
    with open(path, encoding="utf-8") as fh:
        for line_no, line in enumerate(fh, 1):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
            except ValueError:
                raise ValueError(f"{path}:{line_no}: not JSON") from None
            text = row if isinstance(row, str) else row.get("prompt") if isinstance(row, dict) else None
            if not isinstance(text, str) or not text.strip():
                raise ValueError(f"{path}:{line_no}: no \"prompt\" field")
            key = prompt_key(text)
            if key not in seen:
                seen.add(key)
                out.append(Prompt(len(out), text, key))
    return out


class RunStore:
    def __init__(self, root: Path, home: Path | None = None) -> None:
        self.root = root
        root.mkdir(parents=True, exist_ok=True)
        self.home = home  # the taint ledger's (memory/taintledger.py); None: nothing is marked
        self.untrusted: dict[str, str] = {}  # file name -> the untrusted content one of its entries took in

    def done(self) -> dict[str, dict]:
        """key -> entry of every prompt already written (a torn last line from a kill is ignored)."""
        out: dict[str, dict] = {}
        for path in sorted(self.root.glob("batch_*.jsonl")):
            for line in read_regular_text(path).splitlines():
                try:
                    entry = json.loads(line)
                except ValueError:
                    continue
                out.setdefault(entry.get("prompt_key", ""), entry)
        out.pop("", None)
        return out

    def append(self, name: str, entry: dict, untrusted: str = "") -> None:
        """Add one entry; a file holding an entry that took in untrusted content (`untrusted`) is marked in the
        taint ledger after each write to it, so a session that reads it later is tainted (provenance of hops)."""
        append_nofollow(self.root / name, json.dumps(entry, ensure_ascii=False) + "\n", sync=True)
        if untrusted:
            self.untrusted.setdefault(name, untrusted)
        self._mark(name)

    def _inherit_marks(self) -> None:
        if self.home is None or self.untrusted:
            return
        from hermes_agent.memory import taintledger

        for path in sorted(self.root.glob("batch_*.jsonl")):
            source = taintledger.file_source(self.home, str(path), path.stat())
            if source:
                self.untrusted[path.name] = source
                return

    def _mark(self, name: str) -> None:
        source = self.untrusted.get(name) or (next(iter(self.untrusted.values()), "")
                                              if name == "trajectories.jsonl" else "")
        if not source or self.home is None:
            return
        from hermes_agent.memory import taintledger

        try:
            taintledger.mark_files(self.home, [str(self.root / name)], f"a batch run's output ({source})")
        except OSError:
            log.warning("could not mark %s as holding untrusted content", self.root / name, exc_info=True)

    def finish(self, prompts: list[Prompt], stats: dict) -> int:
        """Write trajectories.jsonl (dataset order, each prompt once) and statistics.json; returns the lines."""
        done = self.done()
        lines = [json.dumps(done[p.key], ensure_ascii=False) + "\n" for p in prompts if p.key in done]
        write_text_nofollow(self.root / "trajectories.jsonl", "".join(lines))  # under ./data: no link followed
        self._inherit_marks()  # entries a killed earlier run wrote keep their mark in the ledger
        self._mark("trajectories.jsonl")
        write_text_nofollow(self.root / "statistics.json", json.dumps(stats, indent=2))
        return len(lines)
