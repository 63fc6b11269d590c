"""Mass destruction of file contents: a command that empties or overwrites files with nothing useful
(truncate -s 0, `: >`, cp /dev/null, dd from /dev/zero, sed -i 'd', perl -pi -e '$_=q()', tee < /dev/null)
applied to many files at once (a glob, `$(git ls-files)`, a loop over such a list, find -exec, xargs).
One such edit of one named file is ordinary work; the same edit over a tree is not. Pure string work."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from hermes_agent.approval.rules.lazyre import lazy

if TYPE_CHECKING:
    from hermes_agent.approval.rules.canonical import Unwrapped

MASS_REWRITE = ("mass_rewrite", "empty or overwrite many files at once (truncate, `: >`, sed -i d... over a glob, "
                "git ls-files, find or xargs)", False)
_CONSTANT_WRITERS = frozenset({"", ":", "true", "false", "echo", "printf", "yes"})
_SED_WIPE = lazy(r"\A\s*(?:(?:1|0)\s*,\s*\$|%|/\^?\.?\*?/)?\s*c(?:\\|\s|\Z)|\A\s*(?:(?:\d+|\$|%|/\.\*?/|/\^/)\s*(?:,\s*(?:\d+|\$)\s*)?)?d\s*\Z|\A\s*(?:%|1,\$)?\s*s(.)\^?\.\*\$?\1[^\s]*\1g?\s*\Z",
                       re.S)
_PERL_WIPE = lazy(r"\$_\s*=\s*(?:q\s*[({/]\s*[)}/]|''|\"\"|\S{0,12};?\s*\Z)|\A\s*\Z|\As(.)\.\*\1[^\s]*\1\w*\s*\Z|undef\s*\$_", re.S)
_OUTPUT = lazy(r"(?:\A|/)(?:[^/]*\.(?:log|out|err|trace|tmp)(?:\.\d+)?|(?:logs?|tmp|out)/[^/]*)\Z")
_ZERO = lazy(r"\A(?:-s\s*|--size=?)0+[KMGkmg]?\Z")


SOURCE_DELETE = ("mass_rewrite", "delete every source file of a kind (rm *.py, find . -name '*.ts' -delete): the "
                 "project's own files, not build outputs", False)
_SOURCE_GLOB = lazy(r"(?:\A|/)(?:\*\*/)?\*\.(?:py|js|mjs|cjs|ts|tsx|jsx|go|rs|c|h|cc|cpp|cxx|hpp|java|kt|kts|scala|rb|php|"
                    r"swift|cs|fs|sh|bash|zsh|pl|pm|lua|r|sql|md|rst|json|ya?ml|toml|ini|cfg|html?|css|scss|vue|svelte|dart|"
                    r"exs?|erl|hs|ml|clj|tf|proto|gradle|ipynb)\Z", re.I)


def deletes_sources(u: Unwrapped) -> bool:
    """rm of a glob of source files, or find -delete of a -name pattern naming them (not *.pyc, *.o, *.log)."""
    if u.name not in ("rm", "unlink", "find"):
        return False
    from hermes_agent.approval.rules.targets import disposable

    if u.name in ("rm", "unlink"):
        return any(_SOURCE_GLOB.search(a) and not disposable(a.rsplit("/", 1)[0] if "/" in a else "")
                   for a in _operands(u.args))
    if u.name == "find" and "-delete" in u.args:
        start = next((a for a in u.args if not a.startswith(("-", "(", "!"))), ".")
        names = [u.args[k + 1] for k, a in enumerate(u.args[:-1]) if a in ("-name", "-iname")]
        return any(_SOURCE_GLOB.search(n) for n in names) and "-o" not in u.args and not disposable(start)
    return False


def many(arg: str) -> bool:
    """An operand that stands for many files: a glob, a command substitution's output, a backquoted list."""
    return any(ch in arg for ch in "*?[") or arg.startswith("$(") or "`" in arg


def _operands(args: list) -> list:
    return [a for a in args if not a.startswith("-")]


def empties(u: Unwrapped) -> list | None:
    """The files a command empties or overwrites with constant content, or None if it does not."""
    name, args = u.name, u.args
    if name == "truncate":
        joined = [a + b for a, b in zip(args, [*args[1:], ""], strict=False) if a in ("-s", "--size")]
        refs = [b for a, b in zip(args, [*args[1:], ""], strict=False) if a in ("-r", "--reference")]
        refs += [a.split("=", 1)[1] for a in args if a.startswith("--reference=")] + [a[2:] for a in args if a[:2] == "-r" and a[2:]]
        if any(_ZERO.match(a) for a in [*args, *joined]) or any(r in ("/dev/null", "/dev/zero") for r in refs):
            valued = ("-s", "--size", "-r", "--reference")  # truncate --reference=/dev/null F: size 0
            return [a for k, a in enumerate(args) if not a.startswith("-") and (k == 0 or args[k - 1] not in valued)]
        return None
    if name == "cp" and _operands(args)[:1] == ["/dev/null"]:
        return _operands(args)[1:]
    if name in ("install", "ginstall", "mv", "rsync", "ln") and "/dev/null" in args:  # install -m644 /dev/null F
        return [a for a in _operands(args) if a not in ("/dev/null", "/dev/zero") and not a.isdigit()]
    if name == "dd" and (any(a in ("if=/dev/zero", "if=/dev/null", "if=/dev/urandom", "if=/dev/random") for a in args)
                         or ("count=0" in args and not any("notrunc" in a for a in args))):  # dd of=F count=0
        return [a[3:] for a in args if a.startswith("of=") and not a.startswith("of=/dev/")]
    if name in ("sed", "gsed") and u.inplace:
        scripts = [args[k + 1] for k, a in enumerate(args[:-1]) if a in ("-e", "--expression")]
        ops = _operands(args)
        if not scripts and ops:
            scripts, ops = [ops[0]], ops[1:]
        quiet = any(a in ("-n", "--quiet", "--silent") or a[:1] == "-" and a[1:2] != "-" and "n" in a[1:] and "e" not in a
                    for a in args)  # sed -i -n '1p': only what it prints stays
        return ops if scripts and (quiet or all(_SED_WIPE.match(s) for s in scripts)) else None
    if u.inplace and u.code and u.code[0] in ("perl", "ruby"):
        return [a for a in _operands(args) if a != u.code[1]] if _PERL_WIPE.search(u.code[1]) else None
    if name == "tee" and "-a" not in args and "--append" not in args:
        return _operands(args)
    return None


_EVERYTHING = frozenset({"*", "./*", "**", "**/*", "./**/*", ".", "./"})
_ALL_LISTING = lazy(r"\A\$\((?:git ls-files(?: -z)?|find \S+(?: -type f)?|rg --files|fd(?: -t f| --type f)?|ls -A|ls)\)\Z")
_FILTERS = frozenset({"-name", "-iname", "-path", "-ipath", "-regex", "-iregex", "-e", "--extension", "-g", "--glob", "-t", "--type"})
EDIT_EVERYTHING = ("mass_rewrite", "edit every file in place (sed -i/perl -pi over all files: binaries and .git included)", False)


def edits_in_place(u: Unwrapped) -> bool:
    return (u.inplace and (u.name in ("sed", "gsed") or bool(u.code))) or (u.name in ("awk", "gawk") and "inplace" in u.args)


def everything(u: Unwrapped) -> bool:
    """An in-place edit whose files are all files: `*`, `**/*`, find without a name filter, `$(git ls-files)`."""
    if not edits_in_place(u):
        return False
    ops = [a for a in u.args if not a.startswith("-")]
    joined = " ".join(ops)
    subst = joined[joined.find("$("):] if "$(" in joined else ""
    return any(o in _EVERYTHING for o in ops) or bool(subst and _ALL_LISTING.match(subst)) \
        or ("find" in u.chain and any(o in ("./*", "~/*", "/*", "*") for o in ops))


def lists_everything(name: str, args: list) -> bool:
    """git ls-files / find / fd / rg --files with no pattern: every file of the tree (a pipe into xargs sed -i)."""
    if name == "git":
        return args[:1] == ["ls-files"] and all(a.startswith("-") for a in args[1:])
    if name in ("find", "fd", "fdfind"):
        starts = [a for a in args if not a.startswith("-") and a not in ("f", "d")]
        return not any(a in _FILTERS for a in args) and starts in ([], ["."], ["./"], ["~"], ["/"])
    if name == "rg":
        return "--files" in args and not any(a in _FILTERS for a in args)
    return False


def mass_rewrite(u: Unwrapped, redirects: list) -> bool:
    """True when `u` empties or overwrites many files (see module doc)."""
    if u.name in _CONSTANT_WRITERS or (u.name == "head" and any(a in ("-c0", "-c", "-n0") for a in u.args)) \
            or (u.name == "cat" and _operands(u.args) == ["/dev/null"]):
        if any(op in (">", ">|", "&>") and many(t) for op, t in redirects):
            return True
    targets = empties(u)
    if targets is None or (targets and all(_OUTPUT.search(t) for t in targets)):
        return False  # emptying logs and run outputs (truncate -s 0 logs/*.log) is not emptying the project
    if u.name == "tee" and not ("find" in u.chain or "xargs" in u.chain or any(many(t) for t in targets)):
        return False
    return "find" in u.chain or "xargs" in u.chain or any(many(t) for t in targets)
