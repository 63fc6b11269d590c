"""Names bash runs by itself or that the terminal wrapper calls after the saved shell state is sourced: a
function (or alias) the confined side saves under one of them would run unjudged code in every later call.
Used by the wrapper (terminal/shell.py: removed after each restore) and the approval rules
(approval/rules/statecode.py: a state defining one is not what the shell itself saved). Pure data."""

from __future__ import annotations

BUILTINS = frozenset(
    (". : [ alias bg bind break builtin caller cd command compgen complete compopt continue declare dirs "
     "disown echo enable eval exec exit export false fc fg getopts hash help history jobs kill let local "
     "logout mapfile popd printf pushd pwd read readarray readonly return set shift shopt source suspend "
     "test times trap true type typeset ulimit umask unalias unset wait").split())
HOOKS = frozenset({"command_not_found_handle"})
RESERVED = BUILTINS | HOOKS
