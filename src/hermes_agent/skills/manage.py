"""skill_manage actions (create, patch, edit, delete, write_file, remove_file) with the seeds' constraints.

Every action is planned as a Change and validated first; nothing invalid is written. In review mode
`propose` the Change becomes a proposal instead of going live."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from hermes_agent.skills.catalog import SKILL_FILE, SkillCatalog
from hermes_agent.skills.changes import Change, FileChange, apply_change, read_text
from hermes_agent.skills.frontmatter import check_document, name_problem
from hermes_agent.skills.fsutil import is_within, skill_files
from hermes_agent.skills.guard import scan_text
from hermes_agent.skills.patching import PatchError, apply_patch
from hermes_agent.skills.review import Proposal, ProposalStore

ACTIONS = ("create", "patch", "edit", "delete", "write_file", "remove_file")
SUPPORT_DIRS = ("references", "templates", "scripts", "assets")
MAX_SKILL_MD_CHARS = 100_000
MAX_FILE_BYTES = 1024 * 1024
MAX_FILES = 50


class SkillError(ValueError):
    """An action was refused; the message (and `extra`) tell the model how to fix the call."""

    def __init__(self, message: str, **extra: object) -> None:
        super().__init__(message)
        self.extra = extra


@dataclass(frozen=True, slots=True)
class _Target:
    """A skill being changed: its path relative to the skills dir and its current files (overlay)."""

    name: str
    skill_rel: str
    files: dict[str, str | None]
    live_rels: tuple[str, ...]
    pending: Proposal | None

    def read(self, rel: str, skill_dir: Path) -> str | None:
        if rel in self.files:
            return self.files[rel]
        if self.pending is not None and self.pending.remove_dir:
            return None
        return read_text(skill_dir / rel)

    def rels(self) -> set[str]:
        live = set() if self.pending is not None and self.pending.remove_dir else set(self.live_rels)
        return {r for r in live | set(self.files) if self.files.get(r, "") is not None}


class SkillManager:
    """Runs skill_manage actions against the writable skills dir (external dirs are read-only)."""

    def __init__(self, skills_dir: Path, *, review: str = "auto", extra_roots: tuple[Path, ...] = (),
                 guard: bool = False):
        self.skills_dir = Path(skills_dir)
        self.review = review
        self.guard = guard
        self.extra_roots = extra_roots
        self.proposals = ProposalStore(self.skills_dir)

    @property
    def proposing(self) -> bool:
        return self.review == "propose"

    def run(self, action: str, name: str, **params: object) -> dict:
        """Validate, plan and commit one action; SkillError explains any refusal."""
        if action not in ACTIONS:
            raise SkillError(f"unknown action {action!r}; use one of: {', '.join(ACTIONS)}")
        if (p := name_problem(name)) is not None:
            raise SkillError(f"invalid skill {p}")
        change = getattr(self, f"_plan_{action}")(name, **params)
        return self._commit(change)

    def _commit(self, change: Change) -> dict:
        warnings = [f.as_dict() for fc in change.files if fc.content
                    for f in scan_text(fc.content, fc.rel) if f.severity in ("high", "critical")]
        critical = [w for w in warnings if w.get("severity") == "critical"]
        if critical:  # hidden payloads, reverse shells, "turn approvals off": never saved, guard or not
            raise SkillError("the skills guard refused this content: it would run hidden code or weaken "
                             "the user's safety settings", findings=critical)
        if warnings and self.guard:
            raise SkillError("the skills guard refused this content (skills.guard_agent_created is on)",
                             findings=warnings)
        result = self._commit_unchecked(change)
        if warnings:
            result["guard_warnings"] = warnings
        return result

    def _commit_unchecked(self, change: Change) -> dict:
        skill_path = self.skills_dir / change.skill_rel
        if self.proposing:
            prop = self.proposals.propose(change)
            if prop is None:
                return {"success": True, "action": change.action, "name": change.name,
                        "message": "Pending proposal for this skill discarded (the skill was never live)."}
            return {"success": True, "proposed": True, "proposal_id": prop.id, "action": change.action,
                    "name": change.name, "message": "Saved as a proposal, NOT live yet: the user reviews it "
                    "with `hermes skills review`. Further changes to this skill merge into it."}
        apply_change(self.skills_dir, change)
        return {"success": True, "action": change.action, "name": change.name, "path": str(skill_path)}

    def _catalog(self) -> SkillCatalog:
        return SkillCatalog([self.skills_dir, *self.extra_roots])

    def _target(self, name: str, *, must_exist: bool = True) -> _Target | None:
        pending = self.proposals.pending_for(name) if self.proposing else None
        info = self._catalog().get(name)
        if info is not None and not is_within(info.path, self.skills_dir):
            raise SkillError(f"skill {name!r} lives in read-only external dir {info.root}; copy it with "
                             "create to change it")
        if info is None and pending is None:
            if must_exist:
                raise SkillError(f"skill {name!r} not found; skills_list shows what exists")
            return None
        rel = info.dir.relative_to(self.skills_dir).as_posix() if info else pending.skill_rel
        live = tuple(skill_files(self.skills_dir / rel)) if info else ()
        target = _Target(name, rel, dict(pending.files) if pending else {}, live, pending)
        if target.read(SKILL_FILE, self.skills_dir / rel) is None:
            if must_exist:
                raise SkillError(f"skill {name!r} is pending deletion")
            return None
        return target

    def _plan_create(self, name: str, content: object = None, category: object = None, **_: object) -> Change:
        if category is not None and category != "" and (p := name_problem(category)) is not None:
            raise SkillError(f"invalid category: {p.replace('name', 'category', 1)}")
        # A same-named skill in a read-only external dir may be shadowed by a local copy.
        local = SkillCatalog([self.skills_dir]).get(name)
        pending = self.proposals.pending_for(name) if self.proposing else None
        live = local is not None and not (pending is not None and pending.remove_dir)
        proposed = pending is not None and bool(pending.files.get(SKILL_FILE))
        if live or proposed:
            raise SkillError(f"skill {name!r} already exists; use patch or edit to change it")
        text = _skill_md(content, name)
        rel = f"{category}/{name}" if category else name
        if (self.skills_dir / rel).exists() and not self.proposing:
            raise SkillError(f"directory {rel} already exists in the skills dir; pick another name")
        return Change("create", name, rel, (FileChange(SKILL_FILE, text),))

    def _plan_edit(self, name: str, content: object = None, **_: object) -> Change:
        target = self._target(name)
        return Change("edit", name, target.skill_rel, (FileChange(SKILL_FILE, _skill_md(content, name)),))

    def _plan_patch(self, name: str, old_string: object = None, new_string: object = None,
                    file_path: object = None, replace_all: object = False, **_: object) -> Change:
        target = self._target(name)
        rel = SKILL_FILE if file_path in (None, "", SKILL_FILE) else self._support_rel(target, file_path)
        if not isinstance(old_string, str) or not isinstance(new_string, str):
            raise SkillError("patch needs old_string and new_string (strings)")
        current = target.read(rel, self.skills_dir / target.skill_rel)
        if current is None:
            raise SkillError(f"{rel} does not exist in skill {name!r}")
        try:
            outcome = apply_patch(current, old_string, new_string, replace_all=bool(replace_all))
        except PatchError as exc:
            raise SkillError(str(exc), **{k: v for k, v in exc.extra.items() if v is not None}) from exc
        text = _skill_md(outcome.text, name) if rel == SKILL_FILE else _support_text(outcome.text)
        return Change("patch", name, target.skill_rel, (FileChange(rel, text),))

    def _plan_delete(self, name: str, **_: object) -> Change:
        target = self._target(name)
        return Change("delete", name, target.skill_rel, (), remove_dir=True)

    def _plan_write_file(self, name: str, file_path: object = None, file_content: object = None,
                         **_: object) -> Change:
        target = self._target(name)
        rel = self._support_rel(target, file_path)
        if not isinstance(file_content, str):
            raise SkillError("write_file needs file_content (a string)")
        if rel not in target.rels() and len(target.rels()) >= MAX_FILES:
            raise SkillError(f"skill {name!r} already has {MAX_FILES} files, the limit")
        return Change("write_file", name, target.skill_rel, (FileChange(rel, _support_text(file_content)),))

    def _plan_remove_file(self, name: str, file_path: object = None, **_: object) -> Change:
        target = self._target(name)
        rel = self._support_rel(target, file_path)
        if rel not in target.rels():
            present = sorted(r for r in target.rels() if r != SKILL_FILE)
            raise SkillError(f"{rel} does not exist in skill {name!r}", files=present)
        return Change("remove_file", name, target.skill_rel, (FileChange(rel, None),))

    def _support_rel(self, target: _Target, file_path: object) -> str:
        rel = check_support_path(file_path)
        skill_dir = self.skills_dir / target.skill_rel
        probe = skill_dir
        for part in PurePosixPath(rel).parts:
            probe = probe / part
            if probe.is_symlink():
                raise SkillError(f"file_path {rel!r} goes through a symlink; refused")
        if skill_dir.exists() and not is_within(skill_dir / rel, skill_dir):
            raise SkillError(f"file_path {rel!r} escapes the skill directory")
        return rel


def check_support_path(file_path: object) -> str:
    """Normalised relative path of a supporting file, or SkillError (traversal, absolute, wrong folder)."""
    if not isinstance(file_path, str) or not file_path.strip():
        raise SkillError(f"file_path is required, e.g. references/notes.md (folders: {', '.join(SUPPORT_DIRS)})")
    raw = file_path.strip()
    if "\x00" in raw or "\\" in raw:
        raise SkillError("file_path must be a plain POSIX path (no backslashes or NUL)")
    pure = PurePosixPath(raw)
    if pure.is_absolute() or (len(raw) > 1 and raw[1] == ":"):
        raise SkillError("file_path must be relative to the skill directory, e.g. references/notes.md")
    if any(part in ("..", ".") for part in raw.split("/")):
        raise SkillError("file_path must not contain '..' or '.' segments (path traversal is blocked)")
    parts = pure.parts
    if len(parts) < 2 or parts[0] not in SUPPORT_DIRS:
        raise SkillError(f"supporting files must live under {', '.join(d + '/' for d in SUPPORT_DIRS)} "
                         "(use edit or patch for SKILL.md)")
    return pure.as_posix()


def _skill_md(content: object, name: str) -> str:
    if not isinstance(content, str) or not content.strip():
        raise SkillError("content is required: the full SKILL.md text with YAML frontmatter")
    if len(content) > MAX_SKILL_MD_CHARS:
        raise SkillError(f"SKILL.md is {len(content)} characters; the limit is {MAX_SKILL_MD_CHARS}. Move detail "
                         "into references/ files with write_file")
    _, problems = check_document(content, expected_name=name)
    if problems:
        raise SkillError("invalid SKILL.md: " + "; ".join(problems) + " (nothing was written)",
                         example="---\nname: " + name + "\ndescription: One line on when to use it\n---\n# Title\n")
    return content


def _support_text(text: str) -> str:
    size = len(text.encode("utf-8"))
    if size > MAX_FILE_BYTES:
        raise SkillError(f"file is {size} bytes; the limit for a supporting file is {MAX_FILE_BYTES}")
    return text
