"""The Skills Hub: sources behind one SkillSource seam, the guarded install pipeline, lock and audit."""

from __future__ import annotations

from hermes_agent.skills.hub.core import InstalledSkill, InstallResult, SkillsHub
from hermes_agent.skills.hub.model import HubError, SkillBundle, SkillMeta, SkillSource, SourceError
from hermes_agent.skills.hub.router import HubConfig

__all__ = ["HubConfig", "HubError", "InstallResult", "InstalledSkill", "SkillBundle", "SkillMeta", "SkillSource",
           "SkillsHub", "SourceError"]
