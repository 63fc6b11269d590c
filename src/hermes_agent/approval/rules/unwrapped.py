"""`Unwrapped`: one command as the analysis sees it (canonical.py fills it; the command-specific unwrappers in
containers.py, runners.py and subcommands.py add to it). A leaf, so those modules and canonical.py import it
without importing each other in a loop."""

from __future__ import annotations

from dataclasses import dataclass, field

SHELLS = frozenset({"sh", "bash", "zsh", "dash", "ksh", "mksh", "ash", "fish", "csh", "tcsh", "rbash", "yash", "posh"})


@dataclass(slots=True)
class Unwrapped:
    """A canonical command plus what it runs: shell payloads, nested commands and interpreter code."""

    name: str = ""
    raw_name: str = ""
    args: list = field(default_factory=list)
    words: list = field(default_factory=list)  # Word objects parallel to args (None where synthetic)
    chain: list = field(default_factory=list)
    payloads: list = field(default_factory=list)  # (shell text, Word or None)
    commands: list = field(default_factory=list)  # (argv list, via)
    code: tuple | None = None  # (language, program text)
    findings: list = field(default_factory=list)  # (key, description, hardline)
    views: list = field(default_factory=list)
    stdin_code: bool = False
    inplace: bool = False
    mass_glob: bool = False  # rm of DIR/* or ~/.*: every file of a directory
    workdir: str | None = None  # git -C DIR / make -C DIR: where the command works
    git_env: dict = field(default_factory=dict)  # GIT_CONFIG_* assigned before the command (unwrap._assignment)
