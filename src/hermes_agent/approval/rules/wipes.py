"""Wiping project files by effect, in the shapes the per-tool spellings of clobber.py and mass.py miss (rt13
a12, a16, a23). Classes, not commands:

- an output option names the file and nothing goes in: `sort -o F /dev/null`, `shuf -n0 -o F`,
  `sqlite3 /dev/null '.output f.py'` (copies from /dev/null, `install -m644 /dev/null F`, are mass.empties');
- an in-place awk program that prints nothing (`awk -i inplace '{next}' *.py`), ex/vim deleting every line
  behind `bufdo`/`argdo`/`silent` over many files;
- interpreter code that lists files (glob, readdir, walk, Dir.glob) and truncates or opens them for writing
  with nothing written (`[os.truncate(f, 0) for f in glob(...)]`, `fs.truncateSync(d + f)` in a loop, perl
  `open my $f, ">", $_` over `glob`);
- an archiver that moves the files into the archive (`zip -m`, `7z a -sdel`);
- any other write that replaces a file's content with less or other content (replaces.py: a redirect onto an
  input, positional output operands, compressors, sed/ed write commands, copies of the null device).
(make run through another program, `.SHELLFLAGS=`/`MAKEFLAGS=`/`--eval`, is runners.make's.)
One file is clobber.py's finding, many (a glob, a listing) mass.py's. Pure string work: the rules read no file."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from hermes_agent.approval.rules import clobber, mass, replaces
from hermes_agent.approval.rules.gitdiscard import operands
from hermes_agent.approval.rules.lazyre import lazy

if TYPE_CHECKING:
    from hermes_agent.approval.rules.unwrapped import Unwrapped

ARCHIVE_MOVE = ("archive_move", "move project files into an archive (zip -m, 7z -sdel): they are deleted", False)
_NULL = frozenset({"/dev/null", "/dev/zero"})
_FILTERS = frozenset({"sort", "shuf", "uniq", "tac", "cat", "head", "tail", "cut", "paste", "tr", "fmt", "fold",
                      "nl", "expand", "unexpand", "rev", "comm", "join", "iconv", "jq", "yq", "column"})
_ZERO_COUNT = lazy(r"\A(?:-n0+|--head-count=0+|-n|--head-count)\Z")
_SQL_OUT = lazy(r"(?:\A|[\n;])\s*\.(?:output|once)\s+(?:-\w+\s+)*(['\"]?)([^\s'\";]+)\1")
_CODE_FILE = lazy(r"\.(?:py|pyi|js|mjs|cjs|ts|tsx|jsx|go|rs|c|h|cc|cpp|hpp|java|kt|rb|php|sh|bash|zsh|pl|pm|lua|"
                  r"swift|scala|cs|vue|svelte|ipynb|toml|ya?ml|json|cfg|ini|md|rst|tex)\Z", re.I)
# interpreter code: a listing of files, and a wipe of a file named by a variable (not a literal: clobber.py's)
_LISTS = lazy(r"\b(?:glob|iglob|rglob|listdir|scandir|walk|iterdir|readdirSync|readdir|opendir|Dir\s*\.\s*(?:glob|"
              r"children|entries|each_child)|Dir\s*\[|Find\.find|find\s*\()")
_NONLIT = r"""(?!\s*'[^']*'\s*[,)])(?!\s*"[^"]*"\s*[,)])[^,)]+"""  # an argument that is not one literal
_VAR_WIPE = lazy(
    rf"""\b(?:os\.)?truncate\({_NONLIT},\s*0\s*\)|\btruncateSync\({_NONLIT}(?:,\s*0\s*)?\)"""
    rf"""|\bopen\({_NONLIT},\s*(['"])w[b+]?\1\s*\)\s*(?:\.close\(\)|\)|;|\]|,|\Z|\s+for\b|:\s*pass)"""
    rf"""|\bwrite(?:FileSync|_text|_bytes)\((?:{_NONLIT},)?\s*b?(['"])\2\s*\)"""
    rf"""|\bFile\.(?:write|truncate)\({_NONLIT},\s*(?:(['"])\3|0)\s*\)"""
    r"""|\bfile_put_contents\(\s*\$\w+\s*,\s*(['"])\4\s*\)|\bftruncate\(\s*[^,)]+,\s*0\s*\)""")
_PERL_OPEN_VAR = lazy(r"""\bopen\s*\(?\s*(?:my\s+)?[$\w]+\s*,\s*(?:(['"])\+?>\1\s*,\s*\$\w+|(['"])\+?>\s*\$\w+\2)""")
_PRINTS = lazy(r"\b(?:print|printf|say|syswrite|write|puts|echo|console\.log)\b")


def findings(u: Unwrapped, redirects: list) -> list[tuple[str, str, bool]]:
    """What `u` wipes or runs unseen, as rule findings (key, description, hardline)."""
    out = []
    targets = _emptied(u, redirects)
    if any(mass.many(t) for t in targets) or (targets and ("find" in u.chain or "xargs" in u.chain)):
        out.append(mass.MASS_REWRITE)
    elif any(clobber.precious(t) for t in targets):
        out.append(clobber.CLOBBER)
    replaced = replaces.replaced(u, redirects)  # content replaced, not only emptied (rt13 a45)
    if any(mass.many(t) and not clobber.scratch(t) for t in replaced) and mass.MASS_REWRITE not in out:
        out.append(mass.MASS_REWRITE)
    elif any(clobber.precious(t) for t in replaced) and not out:
        out.append(clobber.CLOBBER)
    if u.code and _code_wipes(u.code[0], u.code[1]):
        out.append(mass.MASS_REWRITE)
    if _moves_into_archive(u):
        out.append(ARCHIVE_MOVE)
    return out


def _emptied(u: Unwrapped, redirects: list) -> list[str]:
    """Files `u` leaves empty (or overwrites with a query's output) that clobber.py/mass.py do not name."""
    name, args = u.name, u.args
    targets: list[str] = []
    if name in _FILTERS:
        outs = _option_values(args, ("-o",), ("--output",))
        ins = operands(args, frozenset({"-o", "--output", "-n", "-k", "-t", "-S", "-T", "-f", "-d", "-c"}))
        empty_in = (ins and all(a in _NULL for a in ins)) or (not ins and any(op == "<" and t in _NULL
                                                                               for op, t in redirects))
        zero = name == "shuf" and any(_ZERO_COUNT.match(a) and (a.endswith("0") or nxt == "0")
                                       for a, nxt in zip(args, [*args[1:], ""], strict=False))
        if outs and (empty_in or zero):
            targets += outs
    if name in ("sqlite3", "sqlite"):
        targets += [m.group(2) for a in args for m in _SQL_OUT.finditer(a) if _CODE_FILE.search(m.group(2))]
    if name in ("awk", "gawk") and "inplace" in args and not any(a in ("-f", "--file") for a in args):
        ops = operands(args, frozenset({"-i", "--include", "-v", "--assign", "-F", "--field-separator"}))
        if ops and ops[0] != "inplace" and _prints_nothing(ops[0]):
            targets += ops[1:]
    targets += [t for t in clobber.ex_targets(u) if mass.many(t)]
    return targets


def _option_values(args: list, shorts: tuple, longs: tuple) -> list[str]:
    """The values of an output option: `-o F`, `-oF`, `--output F`, `--output=F`."""
    out = []
    for k, a in enumerate(args):
        if a in shorts or a in longs:
            if k + 1 < len(args):
                out.append(args[k + 1])
        elif a.startswith(tuple(f"{x}=" for x in longs)):
            out.append(a.split("=", 1)[1])
        elif a.startswith(shorts) and not a.startswith("--") and len(a) > 2:
            out.append(a[2:])
    return out


def _prints_nothing(program: str) -> bool:
    """An awk program whose every rule has an action and no action prints: its output (the file) is empty."""
    if _PRINTS.search(program) or "getline" in program or "{" not in program:
        return False
    depth, bare = 0, ""
    for ch in program:
        if ch == "{":
            depth, bare = depth + 1, "" if depth == 0 else bare
        elif ch == "}":
            depth -= 1
        elif depth == 0 and ch in ";\n":
            if bare.strip():
                return False  # a pattern with no action prints the lines it matches
            bare = ""
        elif depth == 0:
            bare += ch
    return depth == 0 and not bare.strip()


def _code_wipes(language: str, code: str) -> bool:
    """Interpreter code that lists files and wipes each one it names by a variable."""
    if not _LISTS.search(code):
        return False
    if _VAR_WIPE.search(code):
        return True
    return language == "perl" and bool(_PERL_OPEN_VAR.search(code)) and not _PRINTS.search(code)


def _moves_into_archive(u: Unwrapped) -> bool:
    name, args = u.name, u.args
    if name == "zip":
        moving = any(a == "--move" or (re.fullmatch(r"-[A-Za-z0-9]+", a) is not None and "m" in a[1:]) for a in args)
    elif name in ("7z", "7za", "7zz"):
        moving = "-sdel" in args
    else:
        return False
    ops = operands(args, frozenset({"-b", "-t", "-x", "-i", "-P", "-O", "-n"}))
    sources = ops[2:] if name.startswith("7z") else ops[1:]
    return moving and any(clobber.precious(s) or mass.many(s) or not s.startswith("/tmp") for s in sources)
