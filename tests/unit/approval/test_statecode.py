"""statecode.foreign_code over states as bash itself writes them (nothing found) and over code a command wrote
into the state channel (found), including texts where a naive line reader and bash disagree."""

from __future__ import annotations

import subprocess

import pytest

from hermes_agent.approval.rules.statecode import foreign_code

_DEFINE = r"""
pyenv() { local command=${1:-}; case "$command" in a|b) eval "$(pyenv "sh-$command" "$@")" ;; *) command pyenv "$command" "$@" ;; esac; }
g() { { echo x; }; echo "}"; cat <<EOF
}
not top level
EOF
x=$(echo "}")
}
sub() ( echo sub )
A=(1 "2 3"); export A; export -f g; alias ll='ls -l'; export Q='a"b$c
d'; :
"""


def _dump() -> str:
    body = _DEFINE + "\nexport -p; declare -f; alias -p"
    return subprocess.run(["bash", "--norc", "-c", body], capture_output=True, text=True, check=True).stdout


def test_a_state_the_shell_wrote_is_only_definitions():
    state = _dump()
    assert "pyenv ()" in state and "declare -ax A=" in state and "not top level" in state
    assert foreign_code(state) == ""


@pytest.mark.parametrize(("planted", "shown"), [
    ("rm -rf notes/raw\n", "rm -rf notes/raw"),
    ("trap 'rm -rf x' DEBUG\n", "trap"),
    ('declare -x A="$(rm -rf x)"\n', "definition line"),
    ("declare -x A=1; rm x\n", "definition line"),
    ("declare () \n{ \n    rm -rf x\n}\ndeclare -fx declare\n", "declare -fx declare"),
    # bash closes f at the indented `}` after the heredoc, then runs the echo at top level
    ("f () \n{ \n    cat <<E\n}\ng () \n{ \nE\n    }\n    echo TOP\n}\n", "echo TOP"),
    ("f () \n{ \n    echo '\n}\ng () \n{ \n    x'\n    }\n    echo TOP\n}\n", "echo TOP"),
    ("x\0y", "bytes"),
])
def test_code_planted_in_the_state_is_found(planted, shown):
    found = foreign_code(_dump() + planted)
    assert shown in found, found
