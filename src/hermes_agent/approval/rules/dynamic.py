"""Command names built at run time: a command word made of expansions whose values this text does not fix
(`${x[0]}${x[1]}`, `$(cat name)`, `$c` after `read c`, a nameref, `eval "$v"`) cannot be read, so it is a
finding of its own whatever its arguments. Constants assigned earlier in the same text (`py=python3; $py`),
echo/printf substitutions the evaluator resolved, positional parameters of a function body, a computed directory
before a literal program name (`"$VIRTUAL_ENV/bin/python"`), `$(which NAME)` and the output of the usual shell-setup tools (`eval "$(ssh-agent -s)"`, `eval "$(pyenv init -)"`) are readable. Pure."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from hermes_agent.approval.rules.lazyre import lazy
from hermes_agent.approval.rules.lexer import END, QSUB, QVAR, SUB, VAR

if TYPE_CHECKING:
    from hermes_agent.approval.rules.expand import ShellEnv
    from hermes_agent.approval.rules.lexer import Word

BUILT = ("dynamic_command", "command name built at run time from values this command does not fix: what runs "
                            "cannot be inspected", False)
_MARK = lazy(f"([{VAR}{QVAR}{SUB}{QSUB}])([^{END}]*){END}")
_PARAM = lazy(r"([#!]?)(\w+|[@*#?$!-])(.*)\Z", re.S)
_PLAIN = lazy(r"[\w@%+=:,./~-]+\Z")
_POSITIONAL = frozenset("0123456789@*#")
# tools whose output is shell text meant for eval (environment setup), with the arguments that ask for it
_SETUP = {"ssh-agent": None, "dircolors": None, "keychain": None, "gpg-agent": None, "register-python-argcomplete": None,
          "minikube": frozenset({"docker-env", "podman-env", "completion"}), "docker-machine": frozenset({"env"}),
          "devbox": frozenset({"shellenv"}), "nix": frozenset({"print-dev-env"}),
          **{n: frozenset({"init", "init-path", "-", "env", "hook", "shellenv", "activate", "export", "shell.bash",
                           "shell.zsh", "shell.fish", "completion", "completions", "--eval", "path",
                           "generate-shell-completion"})
             for n in ("pyenv", "rbenv", "nodenv", "goenv", "jenv", "plenv", "direnv", "conda", "micromamba", "brew",
                       "opam", "starship", "zoxide", "fnm", "mise", "rtx", "atuin", "thefuck", "luarocks", "kubectl",
                       "helm", "gh", "npm", "pip", "pip3", "poetry", "rustup", "uv", "just", "fzf",
                       "pdm", "hatch", "asdf", "nvm", "sdk", "volta", "oh-my-posh")}}


def setup_output(inner: str) -> bool:
    """True when `inner` (a substitution's text) is a shell-setup tool's output for eval, or `which NAME`."""
    words = inner.split()
    if not words:
        return False
    name = words[0].rsplit("/", 1)[-1]
    if name in ("which", "command", "type") and len(words) >= 2 and words[-1][:1] not in ("$", "`"):
        return True  # $(which python): the program of that name
    if name not in _SETUP:
        return False
    allowed = _SETUP[name]
    return allowed is None or any(w in allowed for w in words[1:])


def _known(name: str, env: ShellEnv) -> bool:
    value = env.get(name)
    return value is not None and "\x00" not in value and bool(_PLAIN.match(value) or value == "")


def built_at_run_time(word: Word | None, resolved: str, env: ShellEnv) -> bool:
    """True when the command word `word` (which expanded to `resolved`) holds an expansion whose value is not
    fixed by this text."""
    if word is None or not any(ch in word.text for ch in (VAR, QVAR, SUB, QSUB)):
        return False
    tail = word.text.rsplit(END, 1)[-1]
    if "/" in tail and tail.rsplit("/", 1)[1]:
        return False  # "$VIRTUAL_ENV/bin/python", "$(go env GOPATH)/bin/tool": only the directory is computed
    for m in _MARK.finditer(word.text):
        kind, body = m.groups()
        if kind in (SUB, QSUB):
            inner = word.subs[int(body)][1] if body.isdigit() and int(body) < len(word.subs) else ""
            if not setup_output(inner) and ("$(" in resolved or "`" in resolved or not _PLAIN.match(resolved or "-")):
                return True
            continue
        p = _PARAM.match(body)
        if p is None or p.group(1) == "!" or p.group(3).startswith("["):
            return True  # ${!x} indirection, ${x[0]} arrays: not evaluated here
        name = p.group(2)
        if name in _POSITIONAL:
            continue  # a function's or sh -c's arguments: set where known (calls), empty at the top level
        if not _known(name, env):
            return True
    return False
