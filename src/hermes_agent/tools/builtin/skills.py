"""Skills tools: skills_list and skill_view (progressive disclosure) and skill_manage (the agent's own skills).

Only the catalog is imported at module load; manage/review/guard load on first use (start-up stays cheap)."""

from __future__ import annotations

from pathlib import Path, PurePosixPath

from hermes_agent import paths
from hermes_agent.config.defaults import DEFAULT_CONFIG
from hermes_agent.config.settings import Settings
from hermes_agent.skills.catalog import SKILL_FILE, SkillCatalog, SkillInfo, catalog_from_settings
from hermes_agent.skills.fsutil import skill_files
from hermes_agent.tools.provenance import skill_persists
from hermes_agent.tools.registry import registry
from hermes_agent.tools.results import tool_error, tool_result

_MAX_VIEW_CHARS = 100_000


def _settings(kw: dict) -> Settings:
    ctx = kw.get("ctx")
    settings = getattr(ctx, "settings", None)
    return settings if isinstance(settings, Settings) else Settings(data=DEFAULT_CONFIG, home=paths.hermes_home())


def _not_found(catalog: SkillCatalog, name: str) -> str:
    import difflib

    close = difflib.get_close_matches(name, [s.name for s in catalog.visible()], n=3, cutoff=0.5)
    return tool_error(f"Skill {name!r} not found", did_you_mean=close) if close else \
        tool_error(f"Skill {name!r} not found; skills_list shows the available skills")


def skills_list(args: dict, **kw: object) -> str:
    """Skills with one-line descriptions, optionally one category (full descriptions then)."""
    catalog = catalog_from_settings(_settings(kw))
    category = str(args.get("category") or "").strip() or None
    skills = catalog.in_category(category)
    if category and not skills:
        return tool_error(f"No skills in category {category!r}", categories=sorted(catalog.categories()))
    rows = [{"name": s.name, "category": s.category or "general",
             "description": s.description if category else s.one_line()} for s in skills]
    return tool_result({"categories": catalog.categories(), "skills": rows, "count": len(rows)})


def _missing(info: SkillInfo, settings: Settings) -> dict:
    import shutil

    env = settings.env or {}
    out: dict = {}
    if missing_env := [v for v in info.required_env if not env.get(v)]:
        out["missing_env"] = missing_env
    if missing_cmd := [c for c in info.required_commands if shutil.which(c) is None]:
        out["missing_commands"] = missing_cmd
    return out


def _read_limited(path: Path) -> tuple[str, bool]:
    with open(path, encoding="utf-8", errors="replace") as fh:
        text = fh.read(_MAX_VIEW_CHARS + 1)
    return text[:_MAX_VIEW_CHARS], len(text) > _MAX_VIEW_CHARS


def _secret(kw: dict, path: Path) -> str | None:
    """The model-readable refusal when the path policy says `path` (resolved) holds secrets."""
    policy = getattr(kw.get("ctx"), "path_policy", None)
    verdict = policy.check_read(str(path)) if policy is not None else None
    return tool_error(f"Access denied: {verdict.reason}") if verdict and not verdict.allowed else None


def _view_file(info: SkillInfo, file_path: str, kw: dict) -> str:
    rel = PurePosixPath(file_path.strip())
    if rel.is_absolute() or ".." in rel.parts or not rel.parts:
        return tool_error("file_path must be relative to the skill directory, without '..'")
    target = info.dir / rel
    try:
        target.resolve().relative_to(info.dir.resolve())
    except ValueError:
        return tool_error("file_path escapes the skill directory")
    if not target.is_file():
        return tool_error(f"{file_path} not found in skill {info.name!r}", files=skill_files(info.dir))
    if refused := _secret(kw, target):
        return refused
    if b"\x00" in target.read_bytes()[:4096]:
        return tool_error(f"{file_path} is a binary file")
    text, truncated = _read_limited(target)
    return tool_result({"name": info.name, "file_path": rel.as_posix(), "content": text, "truncated": truncated})


def skill_view(args: dict, **kw: object) -> str:
    """Full SKILL.md (plus supporting file list and unmet prerequisites), or one supporting file."""
    from hermes_agent.skills.review import ProposalStore

    settings = _settings(kw)
    catalog = catalog_from_settings(settings)
    name = str(args.get("name") or "").strip()
    info = catalog.get(name)
    if info is None:
        pending = ProposalStore(catalog.skills_dir).pending_for(name)
        if pending is not None and pending.files.get(SKILL_FILE):
            return tool_result({"name": name, "status": f"proposed, not live (proposal {pending.id})",
                                "content": pending.files[SKILL_FILE]})
        return _not_found(catalog, name)
    if args.get("file_path"):
        return _view_file(info, str(args["file_path"]), kw)
    if refused := _secret(kw, info.path):
        return refused
    text, truncated = _read_limited(info.path)
    out = {"name": info.name, "category": info.category or "general", "content": text,
           "files": [f for f in skill_files(info.dir) if f != SKILL_FILE]}
    if truncated:
        out["truncated"] = True
    if settings.cfg.skills.review == "propose" and (p := ProposalStore(catalog.skills_dir).pending_for(name)):
        out["pending_proposal"] = p.id
    out.update(_missing(info, settings))
    catalog.used(info)
    return tool_result(out)


def skill_manage(args: dict, **kw: object) -> str:
    """Run one skill_manage action; refusals come back as error JSON the model can act on."""
    from hermes_agent.skills.manage import SkillError, SkillManager

    settings = _settings(kw)
    from hermes_agent.skills.catalog import skill_roots

    external = tuple(skill_roots(Path(settings.home) / "skills", settings.cfg.skills.external_dirs)[1:])
    manager = SkillManager(Path(settings.home) / "skills", review=settings.cfg.skills.review,
                           extra_roots=external, guard=settings.cfg.skills.guard_agent_created)
    params = {k: v for k, v in args.items() if k not in ("action", "name") and v is not None}
    try:
        result = manager.run(str(args.get("action") or ""), str(args.get("name") or ""), **params)
    except SkillError as exc:
        return tool_error(str(exc), **exc.extra)
    if result.get("action") == "create" and not result.get("proposed"):
        result["message"] = "Skill saved. skill_view works now; the index lists it from the next session."
    return tool_result(result)


_S = {"type": "string"}
ACTIONS = ("create", "patch", "edit", "delete", "write_file", "remove_file")  # == skills.manage.ACTIONS

SKILLS_LIST_SCHEMA = {
    "name": "skills_list",
    "description": "List skills (optionally of one category).",
    "parameters": {"type": "object", "properties": {"category": _S}},
}

SKILL_VIEW_SCHEMA = {
    "name": "skill_view",
    "description": "Load a skill's SKILL.md (with its supporting files and unmet prerequisites), or one "
                   "supporting file via file_path.",
    "parameters": {"type": "object", "properties": {
        "name": _S, "file_path": {"type": "string", "description": "e.g. references/api.md"}},
        "required": ["name"]},
}

SKILL_MANAGE_SCHEMA = {
    "name": "skill_manage",
    "description": (
        "Save and maintain skills (procedures for later sessions): after a hard task succeeds, a reusable fix, "
        "or a workflow the user will repeat. Patch a skill that proved wrong or stale at once; prefer patch "
        "(old_string matches once unless replace_all) over edit (full rewrite, skill_view first). "
        "SKILL.md = '---\\nname: <name>\\ndescription: <when to use, one line>\\n---' then concise steps, "
        "pitfalls, commands; no secrets."),
    "parameters": {"type": "object", "properties": {
        "action": {"type": "string", "enum": list(ACTIONS)},
        "name": {"type": "string", "description": "a-z0-9._-"},
        "content": {"type": "string", "description": "full SKILL.md"},
        "category": _S,
        "old_string": _S, "new_string": _S, "replace_all": {"type": "boolean"},
        "file_path": {"type": "string", "description": "in references/, templates/, scripts/ or assets/"}, "file_content": _S},
        "required": ["action", "name"]},
}

registry.register("skills_list", "skills", SKILLS_LIST_SCHEMA, skills_list, emoji="📚", parallel_safe=True)
registry.register("skill_view", "skills", SKILL_VIEW_SCHEMA, skill_view, emoji="📚", parallel_safe=True)
registry.register("skill_manage", "skills", SKILL_MANAGE_SCHEMA, skill_manage, emoji="📚", persists=skill_persists)
