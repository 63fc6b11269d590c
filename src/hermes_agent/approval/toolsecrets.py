"""Settings and credentials that tools keep inside their own, readable, folders (issue 19 item 5, rt15 d05).

HOME is default-deny, but its tool trees (policy.HOME_TOOLS: ~/.pyenv, ~/.nvm, ~/.volta, ~/.local/share/uv,
~/.sdkman/candidates, ~/.rustup, go/pkg/mod, ...) are readable whole, and tools keep configuration that holds
tokens inside them: uv's `credentials/credentials.toml`, npm's global `<prefix>/etc/npmrc` under nvm or volta,
`pip.conf` of a pyenv prefix (`pip config --site`), maven's `conf/settings.xml` under sdkman, conda's
`.condarc`, bundler's `.bundle/config`, composer's `auth.json`, gem's `credentials`. Inside every tool tree an
entry whose *name* has the shape of a tool's settings or credentials (`secret_name`) is hidden, whatever tool
put it there — a directory of that name with everything below it:

- `PathPolicy.check_read` (file tools) refuses any path below a tool tree with such a component;
- the OS sandbox hides the ones `hidden_in_trees` finds (bwrap: a mount over each; Landlock: no read rule),
  by a walk of each tree that skips the library folders (site-packages, lib/pythonX.Y, include, share,
  rustlib, node_modules...: code, where tools do not write their settings) and stops at `DEPTH` levels; of a
  node_modules only npm's own folder is looked at (its `npmrc` is npm's built-in global config). Content
  stores (`STORE_TREES`: .m2/repository, .npm/_cacache...) are not walked, and a walk stops after `BUDGET`
  entries (`truncated()`; `hermes doctor` names those trees and what is hidden).

The user grants one back with `sandbox.readable_paths` (the file, or the whole tree). Stdlib only."""

from __future__ import annotations

import fnmatch
import os
import re
from collections.abc import Iterable

from hermes_agent.paths import is_under

# Names (lower-cased, globs) of settings and credential files and folders of tools; matched on every entry of a
# tool tree. Not `*token*`: Python's own token.py / tokenize.py live there; nor *.pem (certifi's public bundle).
TOOL_SECRET_NAMES: tuple[str, ...] = (
    "*npmrc", ".yarnrc", ".yarnrc.yml", "pip.conf", "pip.ini", ".pypirc", "settings.xml", "settings-security.xml",
    "gradle.properties", "credentials", "credentials.*", ".credentials*", "*.credentials", "credentials-*",
    ".netrc", "_netrc", ".git-credentials", "auth.json", "auth.toml", "auth.yml", "auth.yaml", ".authinfo*",
    "token", "token.json", "token.txt", "*.token", ".token*", "*_token", "tokens.json", "access_token*",
    ".condarc", "condarc", ".pgpass", ".vault-token", ".env", ".env.*", "secrets.json", "secrets.toml",
    "secrets.yaml", "secrets.yml", "*.keystore", "*.jks", "id_rsa*", "id_dsa*", "id_ecdsa*", "id_ed25519*", ".ssh",
    ".gnupg", ".docker", ".kube", "hosts.yml", "*.kdbx", "*.p12", "*.pfx",
)
# Entries named by their folder too (a file called `config` is ordinary; these ones hold tokens).
TOOL_SECRET_PATHS: tuple[str, ...] = (".bundle/config", ".docker/config.json", "composer/auth.json", ".gem/credentials",
                                      ".config/gh", ".cargo/credentials*")
# Library folders the walk does not enter (code, not settings): a tree stays cheap to plan (~1 ms for a pyenv
# of 130,000 files). `python*` under lib is the interpreter's standard library and site-packages.
SKIP_DIRS: frozenset[str] = frozenset({"site-packages", "dist-packages", "node_modules", "include", "share",
                                       "__pycache__", "man", "doc", "docs", "test", "tests", "rustlib", "src",
                                       ".git"})
# Content stores (files named by hash or by artifact coordinates, written by the tool itself): not walked, a
# .m2/repository or .npm/_cacache holds 100,000s of files (0.5 s a walk); the file tools still refuse by name.
STORE_TREES: tuple[str, ...] = (".npm/_cacache", ".m2/repository", ".gradle/caches", ".cargo/registry", ".cargo/git",
                                ".cache/go-build", ".cache/pip", ".cache/uv", ".cache/yarn", ".cache/pnpm",
                                ".cache/bazel", ".cache/ccache", ".cache/sccache", ".cache/ms-playwright",
                                ".cache/huggingface/hub", ".cache/huggingface/datasets", ".cache/torch", ".cache/mesa_shader_cache")
BUDGET = 20_000  # entries looked at per tree; past it the rest of that tree is not looked at (`truncated`)
_TRUNCATED: set[str] = set()
DEPTH = 9  # levels below a tool tree's root (volta's tools/image/node/<v>/lib/node_modules/npm/npmrc is at 8)


def secret_name(name: str, parent: str = "") -> bool:
    """Does an entry called `name` (in the folder called `parent`) look like a tool's settings or credentials?"""
    global _NAMES, _PATHS
    if _NAMES is None or _PATHS is None:
        _NAMES = re.compile("|".join(fnmatch.translate(p) for p in TOOL_SECRET_NAMES))
        _PATHS = re.compile("|".join(fnmatch.translate(p) for p in TOOL_SECRET_PATHS))
    low = name.lower()
    return bool(_NAMES.match(low) or _PATHS.match(f"{parent.lower()}/{low}"))


_NAMES: re.Pattern[str] | None = None
_PATHS: re.Pattern[str] | None = None


def _walked(name: str) -> bool:
    """Does the walk enter a folder of this name (see SKIP_DIRS)?"""
    return name not in SKIP_DIRS and not name.startswith("python")


def secret_below(real: str, trees: Iterable[str]) -> str | None:
    """The tool tree of `trees` that `real` lies in when a component of `real` below that tree has a secret
    name (`secret_name`) where the walk of `hidden_in_trees` looks; else None. For the file tools: the same
    entries as the sandbox hides."""
    for tree in trees:
        if real != tree and is_under(real, tree):
            parts = real[len(tree.rstrip("/")) + 1:].split("/")
            for i, part in enumerate(parts[:DEPTH]):
                if secret_name(part, parts[i - 1] if i else os.path.basename(tree)):
                    return tree
                if not _walked(part):  # of a node_modules, npm's own entries only (as the walk)
                    if part == "node_modules" and parts[i + 1:i + 2] == ["npm"] and len(parts) > i + 2:
                        return tree if secret_name(parts[i + 2], "npm") else None
                    break
    return None


def hidden_in_trees(trees: Iterable[str], grants: Iterable[str] = ()) -> list[str]:
    """Entries with a secret name in each existing tool tree (see module doc), but for those the user granted
    (`grants`: the entry, a folder above it, or the tree). Symlinks are left alone: their target has its own rule."""
    granted = [g for g in grants if g]
    out: list[str] = []
    for tree in dict.fromkeys(trees):
        if any(is_under(tree, g) for g in granted) or tree.endswith(tuple("/" + t for t in STORE_TREES)) \
                or not os.path.isdir(tree):
            continue
        stack, left = [(tree, 0)], BUDGET
        while stack:
            if left <= 0:
                _TRUNCATED.add(tree)
                break
            current, depth = stack.pop()
            if depth < 0:  # node_modules/npm: its own entries only
                out += [os.path.join(current, n) for n in _names(current) if secret_name(n, "npm")
                        and not os.path.islink(os.path.join(current, n))
                        and not any(is_under(os.path.join(current, n), g) for g in granted)]
                continue
            try:
                entries = list(os.scandir(current))
            except OSError:
                continue
            left -= len(entries)
            parent = os.path.basename(current)
            for entry in entries:
                try:
                    is_dir = entry.is_dir(follow_symlinks=False)
                    is_link = entry.is_symlink()
                except OSError:
                    continue
                if is_link:
                    continue
                if secret_name(entry.name, parent):
                    if not any(is_under(entry.path, g) for g in granted):
                        out.append(entry.path)
                elif is_dir and depth + 1 < DEPTH and _walked(entry.name):
                    stack.append((entry.path, depth + 1))
                elif is_dir and entry.name == "node_modules":
                    stack.append((os.path.join(entry.path, "npm"), -1))
    return out


def _names(path: str) -> list[str]:
    try:
        return os.listdir(path)
    except OSError:
        return []


def truncated() -> list[str]:
    """Tool trees this process did not walk to the end (for `hermes doctor`: their deeper files are not hidden)."""
    return sorted(_TRUNCATED)
