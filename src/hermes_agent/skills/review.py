"""Review mode: agent-made skill changes wait under skills/.proposals/<id>/ until applied or rejected.

One pending proposal per skill; later changes to the same skill merge into it. Each proposal dir
holds proposal.json (operations + base hashes), files/ (resulting contents) and diff.patch."""

from __future__ import annotations

import json
import secrets
import shutil
import time
from dataclasses import dataclass
from pathlib import Path

from hermes_agent.skills.changes import Change, FileChange, apply_change, diff_change, read_text, sha256_text
from hermes_agent.skills.fsutil import atomic_write, content_hash

PROPOSALS_DIR = ".proposals"


class ReviewError(ValueError):
    """A proposal cannot be found or applied (missing id, live files changed since it was made)."""


@dataclass(frozen=True, slots=True)
class Proposal:
    """A pending change: resulting files (None = delete) and the live hashes it was based on."""

    id: str
    name: str
    skill_rel: str
    actions: tuple[str, ...]
    created: float
    remove_dir: bool
    files: dict[str, str | None]
    base: dict[str, str | None]
    base_dir: str | None
    path: Path

    def diff(self, skills_dir: Path) -> str:
        """Unified diff from the current live skill to the proposed result."""
        return diff_change(skills_dir, self.skill_rel, self.files, self.remove_dir)

    def as_change(self) -> Change:
        files = tuple(FileChange(rel, text) for rel, text in sorted(self.files.items()))
        return Change("apply", self.name, self.skill_rel, files, self.remove_dir)


class ProposalStore:
    """Proposals of one skills dir."""

    def __init__(self, skills_dir: Path) -> None:
        self.skills_dir = Path(skills_dir)
        self.root = self.skills_dir / PROPOSALS_DIR

    def list(self) -> list[Proposal]:
        """Pending proposals, oldest first."""
        if not self.root.is_dir():
            return []
        out = [p for d in sorted(self.root.iterdir()) if (p := self._load(d)) is not None]
        return sorted(out, key=lambda p: (p.created, p.id))

    def get(self, proposal_id: str) -> Proposal:
        """The proposal with this id (a unique prefix is enough)."""
        matches = [p for p in self.list() if p.id == proposal_id]
        matches = matches or [p for p in self.list() if p.id.startswith(proposal_id)]
        if len(matches) != 1:
            known = ", ".join(p.id for p in self.list()) or "none"
            raise ReviewError(f"no single proposal matches {proposal_id!r} (pending: {known})")
        return matches[0]

    def pending_for(self, name: str) -> Proposal | None:
        """The pending proposal for skill `name`, if any."""
        return next((p for p in self.list() if p.name == name), None)

    def propose(self, change: Change) -> Proposal | None:
        """Record `change` (merged into the skill's pending proposal); None when it cancels the proposal."""
        current = self.pending_for(change.name)
        skill_dir = self.skills_dir / change.skill_rel
        live = skill_dir.joinpath("SKILL.md").is_file()
        if change.remove_dir and not change.files and not live:
            if current is not None:
                shutil.rmtree(current.path)
            return None
        files = dict(current.files) if current else {}
        base = dict(current.base) if current else {}
        remove_dir = bool(current and current.remove_dir) or change.remove_dir
        if change.remove_dir:
            files = {}
        for fc in change.files:
            base.setdefault(fc.rel, sha256_text(read_text(skill_dir / fc.rel)))
            files[fc.rel] = fc.content
        base_dir = current.base_dir if current else (content_hash(skill_dir) if skill_dir.is_dir() else None)
        pid = current.id if current else f"{time.strftime('%Y%m%d-%H%M%S')}-{change.name}-{secrets.token_hex(2)}"
        actions = (*(current.actions if current else ()), change.action)
        return self._write(pid, change, actions, remove_dir, files, base, base_dir)

    def apply(self, proposal_id: str, *, force: bool = False) -> Proposal:
        """Make a proposal live; ReviewError when the live skill changed since (unless force)."""
        prop = self.get(proposal_id)
        conflicts = self.conflicts(prop)
        if conflicts and not force:
            raise ReviewError(f"live files changed since proposal {prop.id} was made: {', '.join(conflicts)}")
        apply_change(self.skills_dir, prop.as_change())
        shutil.rmtree(prop.path)
        return prop

    def reject(self, proposal_id: str) -> Proposal:
        """Discard a proposal; the live skill is untouched."""
        prop = self.get(proposal_id)
        shutil.rmtree(prop.path)
        return prop

    def conflicts(self, prop: Proposal) -> list[str]:
        """Paths whose live content no longer matches what the proposal was based on."""
        skill_dir = self.skills_dir / prop.skill_rel
        if prop.remove_dir:
            now = content_hash(skill_dir) if skill_dir.is_dir() else None
            return [prop.skill_rel] if now != prop.base_dir else []
        return [rel for rel, h in prop.base.items() if sha256_text(read_text(skill_dir / rel)) != h]

    def _write(self, pid: str, change: Change, actions: tuple[str, ...], remove_dir: bool,
               files: dict[str, str | None], base: dict[str, str | None], base_dir: str | None) -> Proposal:
        pdir = self.root / pid
        if (pdir / "files").exists():
            shutil.rmtree(pdir / "files")
        for rel, text in files.items():
            if text is not None:
                atomic_write(pdir / "files" / rel, text)
        meta = {"id": pid, "name": change.name, "skill_rel": change.skill_rel, "actions": list(actions),
                "created": time.time(), "remove_dir": remove_dir, "base_dir": base_dir,
                "files": {rel: {"delete": text is None, "base": base.get(rel)} for rel, text in files.items()}}
        prop = Proposal(pid, change.name, change.skill_rel, actions, meta["created"], remove_dir, files, base,
                        base_dir, pdir)
        atomic_write(pdir / "diff.patch", prop.diff(self.skills_dir))
        atomic_write(pdir / "proposal.json", json.dumps(meta, indent=2))
        return prop

    @staticmethod
    def _load(pdir: Path) -> Proposal | None:
        try:
            meta = json.loads((pdir / "proposal.json").read_text(encoding="utf-8"))
            files = {rel: None if info.get("delete") else (pdir / "files" / rel).read_text(encoding="utf-8")
                     for rel, info in meta.get("files", {}).items()}
            base = {rel: info.get("base") for rel, info in meta.get("files", {}).items()}
            return Proposal(meta["id"], meta["name"], meta["skill_rel"], tuple(meta.get("actions", ())),
                            float(meta.get("created", 0)), bool(meta.get("remove_dir")), files, base,
                            meta.get("base_dir"), pdir)
        except (OSError, ValueError, KeyError):
            return None
