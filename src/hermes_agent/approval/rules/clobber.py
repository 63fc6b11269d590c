"""Destroying the content of one existing project file, whatever the tool: an empty write redirected over it
(`: > f`, `> f`, `true > f`, `echo -n > f`, `cat /dev/null > f`), truncate -s 0, cp/mv/install/rsync from
/dev/null, dd from /dev/null or /dev/zero, tee fed /dev/null, sed -i with a script that deletes every line or
prints nothing, perl -i -n without print, and interpreter one-liners that open a file for writing and write
nothing (python open(f, 'w'), Path.write_text(''), fs.writeFileSync(f, ''), File.write(f, ''), awk
printf "" > f). Many files at once is mass.py's class. Logs, build outputs, scratch and /tmp files are
not project content: emptying them stays ordinary. Judged by shape: the rules read no file. Pure."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from hermes_agent.approval.rules.lazyre import lazy
from hermes_agent.approval.rules.mass import empties, many

if TYPE_CHECKING:
    from hermes_agent.approval.rules.unwrapped import Unwrapped

CLOBBER = ("clobber_file", "empty or wipe the content of a project file, or replace it (`: >`, truncate -s 0, "
                           "cp /dev/null, sed -i d, open(f, 'w'), cat f > f, gzip f...)", False)
_NULL = frozenset({"/dev/null", "/dev/zero"})
_SCRATCH = lazy(r"(?:\A|/)(?:tmp|temp|logs?|out|outputs?|build|dist|target|coverage|\.cache|node_modules|__pycache__|"
                r"\.pytest_cache|\.tox|\.venv|venv|results?)(?:/|\Z)|\.(?:log|out|tmp|temp|bak|swp|pid|lock|o|pyc|img|iso|raw|bin|qcow2|vhdx?|vmdk|dat)\Z|"
                r"(?:\A|/)(?:output|out|results?|logs?|scratch|empty|nohup|debug|trace)[^/]*\Z", re.I)
_PRINTF_CONV = lazy(r"%[sb]")
_ZERO_COUNT = lazy(r"\A-(?:[cn]|-bytes=|-lines=)?0+\Z")  # head -0, -n0, -c 0, --lines=0: nothing printed
# programs whose output comes from their standard input only, when given no file (base64 -d <<< '' > f)
_STDIN_FILTERS = frozenset({"cat", "tac", "base64", "base32", "basenc", "xxd", "sort", "uniq", "rev", "cut", "fold",
                            "fmt", "nl", "expand", "unexpand", "gunzip", "zcat", "iconv", "dos2unix", "unix2dos"})
_EX_WIPE = lazy(r"\A\s*(?:sil(?:ent)?!?\s+)?(?:(?:buf|arg|win|tab)do!?\s+)?(?:sil(?:ent)?!?\s+)?(?:(?:%|,|1\s*,\s*\$)\s*d|g/\^?/d)\b")
_SED_ALL = lazy(r"\A\s*(?:(?:1|0)\s*,\s*\$|/\^?\.?\*?/|/\^/|%)?\s*c(?:\\|\s|\Z)|\A\s*(?:(?:1|0)\s*,\s*\$|/\^?\.?\*?/|/\^/)?\s*d\s*\Z|\A\s*(?:1\s*,\s*\$|%)?\s*s(.)\^?\.\*\$?\1\1g?\s*\Z")
_CODE_WIPES = lazy(
    r"""(?<!,)(?<!, )\bopen\(\s*(['"])([^'"]+)\1\s*,\s*(['"])w[b+]?\3\s*\)\s*(?:[.:]close\(\)|\)|;|\Z|:\s*pass)"""
    r"""|\bPath\(\s*(['"])([^'"]+)\4\s*\)\s*\.write_(?:text|bytes)\(\s*b?(['"])\6\s*\)"""
    r"""|\bwriteFileSync\(\s*(['"])([^'"]+)\7\s*,\s*(['"])\9"""
    r"""|\bFile\.write\(\s*(['"])([^'"]+)\10\s*,\s*(['"])\12\s*\)"""
    r"""|\bos\.truncate\(\s*(['"])([^'"]+)\13\s*,\s*0\s*\)|\btruncateSync\(\s*(['"])([^'"]+)\15\s*(?:,\s*0\s*)?\)"""
    r"""|\bprintf\s*\(?\s*""\s*\)?\s*>\s*"([^"]+)\""""
    r"""|\bfile_put_contents\(\s*(['"])([^'"]+)\18\s*,\s*(['"])\20\s*\)"""
    r"""|(?<![\w.])(?:File\.)?truncate\s*\(?\s*(['"])([^'"]+)\21\s*,\s*0\s*\)?""")  # perl, ruby, php
# perl: open(F, ">", "f") / open(my $fh, '>f') / open F, ">", "f" - truncates at once; wipes when nothing is printed
_PERL_OPEN_W = lazy(r"""\bopen\s*\(?\s*(?:my\s+)?[$\w]+\s*,\s*(?:(['"])\+?>\1\s*,\s*(['"])([^'"]+)\2|(['"])\+?>\s*([^'">&][^'"]*)\4)""")
_PERL_WRITES = lazy(r"\b(?:print|printf|say|syswrite|write)\b")


def scratch(path: str) -> bool:
    """A path (or glob) naming logs, outputs, caches or scratch files, not project work."""
    return bool(_SCRATCH.search(path))


def precious(path: str) -> bool:
    """A named file whose content is project work (not a log, output, cache, scratch or /tmp file)."""
    if not path or any(ch in path for ch in "$`*?[") or path in ("-", "/dev/stdout", "/dev/stderr"):
        return False
    if path.startswith(("/tmp/", "/var/tmp/", "/dev/", "/proc/", "/run/", "/sys/")):
        return False
    return not _SCRATCH.search(path)


def _empty_writer(u: Unwrapped, redirects: list) -> bool:
    """A command whose standard output is empty (or a bare newline): `:`, true, echo -n, printf '' / printf %s '',
    cat /dev/null, cat < /dev/null."""
    name, args = u.name, u.args
    if name in ("", ":", "true", "false"):
        return True
    if name == "echo":
        return all(a == "" or (a.startswith("-") and set(a[1:]) <= set("neE")) for a in args)
    if name == "printf":
        return bool(args) and _PRINTF_CONV.sub("", args[0]) == "" and all(a == "" for a in args[1:])
    if name == "cat":
        if not args:
            return any(op == "<" and t in _NULL for op, t in redirects)
        return all(a in _NULL for a in args)
    if name in ("head", "tail"):
        return any(_ZERO_COUNT.match(a) for a in args) or \
            any(a in ("-c", "-n", "--bytes", "--lines") and _ZERO_COUNT.match("-" + b) for a, b in zip(args, args[1:], strict=False))
    if name in _STDIN_FILTERS and not [a for a in args if not a.startswith("-")] or name == "tr":
        return any(op in ("<<<", "<") and (t.strip() == "" or t in _NULL) for op, t in redirects)  # fed nothing
    return False


def _editor_targets(u: Unwrapped) -> list[str]:
    """Files an in-place editor leaves empty: sed -n without p/w, perl -i -n without print."""
    args = u.args
    flags = "".join(a[1:] for a in args if a.startswith("-") and not a.startswith("--"))
    ops = [a for a in args if not a.startswith("-")]
    if u.name in ("sed", "gsed") and u.inplace and ("n" in flags or "--quiet" in args or "--silent" in args):
        script, files = (ops[0], ops[1:]) if ops else ("", [])
        return files if not re.search(r"[pwPW]", script) else []
    if u.code and u.code[0] == "perl" and u.inplace and "n" in flags and "p" not in flags:
        return [a for a in ops if a != u.code[1]] if not re.search(r"\b(?:print|say|printf|syswrite)\b", u.code[1]) else []
    return []


def ex_targets(u: Unwrapped) -> list[str]:
    """ex/vi/vim run with a command that deletes every line (`ex -sc '%d|x' f`, `vim -c '1,$d|wq' f`)."""
    if u.name not in ("ex", "vi", "vim", "nvim", "view"):
        return []
    args, scripts, files, i = u.args, [], [], 0
    while i < len(args):
        a = args[i]
        if a in ("-c", "-sc", "--cmd") or (a.startswith("-") and a.endswith("c") and len(a) <= 4 and i + 1 < len(args)):
            scripts.append(args[i + 1] if i + 1 < len(args) else "")
            i += 2
            continue
        if a.startswith("+"):
            scripts.append(a[1:])
        elif not a.startswith("-"):
            files.append(a)
        i += 1
    return files if any(_EX_WIPE.match(sc) for sc in scripts) else []


_ARGV = lazy(r"\bsys\.argv\[(\d)\]|\bprocess\.argv\[(\d)\]|\$ARGV\[(\d)\]|(?<![\w$])ARGV\[(\d)\]")


def program(u: Unwrapped, redirects: list) -> tuple[str, str] | None:
    """The interpreter code `u` runs, as the file names it acts on read: `-c CODE ARGS` with `sys.argv[1]`
    (process.argv, $ARGV, ARGV) replaced by the argument it names, or the program fed on stdin
    (`python3 - ARGS <<'P' ... P`)."""
    if u.code:
        lang, code = u.code
        rest = u.args[u.args.index(code) + 1:] if code in u.args else []
    elif u.stdin_code:
        from hermes_agent.approval.rules.interp import language

        lang, code = language(u.name) or "", "\n".join(t for op, t in redirects if op in ("<<", "<<-", "<<<"))
        rest = u.args[u.args.index("-") + 1:] if "-" in u.args else [a for a in u.args if not a.startswith("-")]
        if not lang or not code:
            return None
    else:
        return None

    def arg(m: re.Match) -> str:
        k = next(int(g) - (1 if i < 2 else 0) for i, g in enumerate(m.groups()) if g is not None)
        return repr(rest[k]) if 0 <= k < len(rest) and "'" not in rest[k] else m.group(0)
    return lang, _ARGV.sub(arg, code) if rest else code


def _sed_all(args: list) -> bool:
    scripts = [args[k + 1] for k, a in enumerate(args[:-1]) if a in ("-e", "--expression")]
    ops = [a for a in args if not a.startswith("-")]
    scripts = scripts or ops[:1]
    return bool(scripts) and all(_SED_ALL.match(s) for s in scripts)


def clobbered(u: Unwrapped, redirects: list) -> list[str]:
    """The named project files `u` would leave empty (one or a few, not a glob: that is mass.py's)."""
    targets: list[str] = []
    if _empty_writer(u, redirects):
        targets += [t for op, t in redirects if op in (">", ">|", "&>")]
    emptied = empties(u)
    if emptied and u.name in ("sed", "gsed") and not _sed_all(u.args):
        emptied = None  # `sed -i 3d f` deletes a line: an edit (over many files it is mass.py's wipe)
    if emptied is not None and (u.name != "tee" or any(op == "<" and t in _NULL for op, t in redirects)):
        targets += emptied
    targets += _editor_targets(u) + ex_targets(u)
    code = program(u, redirects)
    if code:
        for m in _CODE_WIPES.finditer(code[1]):
            targets.append(next(g for g in (m.group(2), m.group(5), m.group(8), m.group(11), m.group(14), m.group(16),
                                            m.group(17), m.group(19), m.group(22)) if g))
    if code and code[0] == "perl" and not _PERL_WRITES.search(code[1]):
        targets += [m.group(3) or m.group(5) for m in _PERL_OPEN_W.finditer(code[1])]
    return [t for t in dict.fromkeys(targets) if not many(t) and precious(t)]


def empty_tee(sink_name: str, sink_args: list, upstream: list) -> list[str]:
    """`true | tee f`, `: | tee f`, `echo -n | tee f`, `printf '' | tee f`: tee (not -a) truncates its files and
    writes nothing into them. `upstream` are the pipeline's earlier stages (flows.Cmd: name, args, literal)."""
    if sink_name != "tee" or not upstream or any(a in ("-a", "--append") for a in sink_args):
        return []
    if not all(c.name in ("", ":", "true", "false") or (c.name in ("echo", "printf") and (c.literal or "").strip() == "")
               or (c.name == "cat" and c.args and all(a in _NULL for a in c.args)) for c in upstream):
        return []
    return [a for a in sink_args if not a.startswith("-") and not many(a) and precious(a)]
