"""Publish a local skill: into a tap directory (committed when it is a git repo), or to a GitHub
repository as a new branch plus a pull request through the REST API. The guard scans it first."""

from __future__ import annotations

import base64
import re
from pathlib import Path

from hermes_agent.skills.catalog import SkillInfo
from hermes_agent.skills.fsutil import copy_skill, skill_files
from hermes_agent.skills.guard import decide, scan_skill
from hermes_agent.skills.hub.core import SkillsHub
from hermes_agent.skills.hub.github import GitHubApi, GitHubAuth
from hermes_agent.skills.hub.model import HubError, SourceError
from hermes_agent.skills.taps import TapStore, git_head, run_git


def _local_skill(hub: SkillsHub, name: str, force: bool) -> SkillInfo:
    info = hub.catalog().get(name)
    if info is None:
        raise HubError(f"skill {name!r} not found")
    decision = decide(scan_skill(info.dir), "trusted", force=force)
    if not decision.allowed:
        raise HubError(f"refusing to publish {name!r}: {decision.reason}")
    return info


def publish_to_tap(hub: SkillsHub, name: str, to: str, *, force: bool = False) -> dict:
    """Copy a skill into a tap directory (a tap name or a path) and commit when it is a git repo."""
    info = _local_skill(hub, name, force)
    root = _publish_root(hub.taps, to)
    base = root / "skills" if (root / "skills").is_dir() else root
    dest = base / (info.category or "general") / name
    copy_skill(info.dir, dest)
    commit = None
    if (root / ".git").exists():
        rel = dest.relative_to(root).as_posix()
        run_git(["add", "--", rel], cwd=root)
        ident = [] if _has_git_identity(root) else ["-c", "user.name=hermes", "-c", "user.email=hermes@localhost"]
        run_git([*ident, "commit", "--quiet", "-m", f"Publish skill {name}", "--", rel], cwd=root)
        commit = git_head(root)
    hub.audit_log.append("PUBLISH", name, "local", "-", "n/a", str(root))
    return {"name": name, "path": str(dest), "commit": commit}


def publish_to_github(hub: SkillsHub, name: str, repo: str, *, path: str = "skills", force: bool = False) -> dict:
    """Branch `add-skill-<name>` off the default branch, upload the files, open a pull request."""
    if not re.fullmatch(r"[\w.-]+/[\w.-]+", repo):
        raise HubError(f"--repo must be owner/name, got {repo!r}")
    info = _local_skill(hub, name, force)
    api = GitHubApi(hub.config.github_api, GitHubAuth(hub.config.env), max(hub.config.timeout, 15.0))
    if not api.auth.token():
        raise HubError("publishing to GitHub needs a token: set GITHUB_TOKEN or run `gh auth login`")
    meta = api.get(f"repos/{repo}")
    base = str(meta.get("default_branch") or "main") if isinstance(meta, dict) else "main"
    ref = api.get(f"repos/{repo}/git/ref/heads/{base}")
    sha = ref.get("object", {}).get("sha") if isinstance(ref, dict) else None
    if not sha:
        raise HubError(f"cannot read the head of {repo}@{base}")
    branch = f"add-skill-{name}"
    try:
        api.call("POST", f"repos/{repo}/git/refs", body={"ref": f"refs/heads/{branch}", "sha": sha})
    except SourceError as exc:
        raise HubError(f"cannot create branch {branch} in {repo}: {exc}") from exc
    prefix = f"{path.strip('/')}/{name}".lstrip("/")
    for rel in skill_files(info.dir):
        _put_file(api, repo, branch, f"{prefix}/{rel}", (info.dir / rel).read_bytes(), f"Add {name} skill: {rel}")
    pr = api.call("POST", f"repos/{repo}/pulls", body={
        "title": f"Add skill: {name}", "head": branch, "base": base,
        "body": f"Submitting the `{name}` skill from hermes-agent.\n\nScanned by the skills guard before submission.",
    }).json()
    url = pr.get("html_url", "") if isinstance(pr, dict) else ""
    hub.audit_log.append("PUBLISH", name, "github", "-", "n/a", f"{repo}#{branch}")
    return {"name": name, "repo": repo, "branch": branch, "pull_request": url,
            "number": pr.get("number") if isinstance(pr, dict) else None}


def _put_file(api: GitHubApi, repo: str, branch: str, path: str, data: bytes, message: str) -> None:
    body = {"message": message, "content": base64.b64encode(data).decode("ascii"), "branch": branch}
    try:
        current = api.get(f"repos/{repo}/contents/{path}", {"ref": branch})
        if isinstance(current, dict) and current.get("sha"):
            body["sha"] = current["sha"]
    except SourceError:
        pass
    api.call("PUT", f"repos/{repo}/contents/{path}", body=body)


def _publish_root(taps: TapStore, to: str) -> Path:
    try:
        return taps.root(taps.get(to))
    except HubError:
        path = Path(to).expanduser()
        if path.is_dir():
            return path
        raise HubError(f"{to!r} is neither a configured tap nor an existing directory") from None


def _has_git_identity(root: Path) -> bool:
    try:
        return bool(run_git(["config", "user.email"], cwd=root))
    except HubError:
        return False
