"""Replacing the content of an existing file with less or other content, by where a program WRITES (rt13 a45):
the write targets of a command resolved by structure, not by a per-tool spelling of "empty":

- a redirect onto one of the command's own inputs (`cat f > f`, `sort f > f`, `git show HEAD:f > f`,
  `jq . f > f`): the shell truncates the file before the program reads it;
- a positional output operand (`uniq IN OUT`: the second operand is written);
- a compressor that replaces its operands with the compressed file (`gzip f`, `xz f`, `zstd --rm f`);
- the write commands of a stream editor's script (`sed -n 'w f'`, `s/x/y/w f`) and an ed/ex script fed on stdin
  that deletes every line and writes (`ed -s f <<< $',d\\nw'`);
- a local copy spelled as a download (`curl -o f file:///dev/null`) and interpreter code that copies the null
  device over a named file or deletes it and creates it again (`copyFileSync('/dev/null', f)`,
  `p.unlink(); p.touch()`).
The caller (wipes.findings) decides one file (clobber.CLOBBER) or many (mass.MASS_REWRITE), and what counts as
project content (clobber.precious). Pure string work, except `check`: a copy or rename onto an EXISTING file
(`mv -f g.py f.py`, `cp new.cfg app.cfg`) is judged with the workspace reader (approval/scriptfiles.py), which says
whether the destination is there and differs from the source."""

from __future__ import annotations

import posixpath
from typing import TYPE_CHECKING

from hermes_agent.approval.rules.lazyre import lazy

if TYPE_CHECKING:
    from hermes_agent.approval.rules.unwrapped import Unwrapped

_NULL = frozenset({"/dev/null", "/dev/zero"})
_WRITES = (">", ">|", "&>")
_NOT_READERS = frozenset({"", ":", "true", "false", "echo", "printf", "yes", "touch", "mkdir", "test", "[", "tee"})
# compressor -> the options that keep the input (or do not compress); None: keeps it unless told to remove
_COMPRESSORS = {
    **{n: ("-k", "--keep", "-c", "--stdout", "--to-stdout", "-d", "--decompress", "--uncompress", "-t", "--test",
           "-l", "--list") for n in ("gzip", "pigz", "bzip2", "pbzip2", "xz", "lzma", "lzip", "plzip", "compress")},
    **{n: ("-c", "--stdout", "-d", "--decompress", "-t", "--test", "-l", "--list") for n in ("zstd", "lz4", "brotli")},
}
_REMOVES = frozenset({"--rm", "--remove", "-j"})  # zstd/lz4/brotli: remove the source after compressing it
_COMPRESSED = lazy(r"\.(?:gz|tgz|bz2|tbz2?|xz|txz|lzma|lz|zst|tzst|lz4|br|Z|zip|7z)\Z")
_COMPRESSOR_VALUED = frozenset({"-S", "--suffix", "-T", "--threads", "-o", "-b", "-B", "-M", "--memlimit", "-D"})
# sed: `[ADDR[,ADDR]][!]w FILE` and `s/a/b/FLAGSw FILE` (the file name runs to the end of the line)
_POSITIONAL_OUT = {"uniq": frozenset({"-f", "-s", "-w", "--skip-fields", "--skip-chars", "--check-chars"}),
                   "xxd": frozenset({"-c", "-g", "-l", "-s", "-o", "-n", "-cols", "-len", "-seek", "-name"})}
_SED_ADDR = r"(?:\d+|\$|/(?:[^/\\\n]|\\.)*/)(?:\s*,\s*(?:\d+|\$|/(?:[^/\\\n]|\\.)*/))?"
_SED_W = lazy(rf"(?:\A|[;\n{{}}])\s*(?:{_SED_ADDR})?\s*!?\s*[wW][ \t]+([^\n;}}]+)"
              r"|\bs(.)(?:(?!\2).|\\.)*\2(?:(?!\2).|\\.)*\2[gpiIme0-9]*w[ \t]+([^\n;}]+)")
_ED_WIPE = lazy(r"\A\s*(?:,|%|1\s*,\s*\$|g/\^?/)\s*[dc]\s*\Z")
_ED_WRITE = lazy(r"\A\s*(?:w|wq|x|W)(?:\s+\S+)?\s*\Z")
_CODE_NULL_COPY = lazy(r"""\b[\w.]+\(\s*(['"])(?:file://)?/dev/(?:null|zero)\1\s*,\s*(['"])([^'"]+)\2""")
_CODE_DELETES = lazy(r"\.unlink\(\s*\)|\bos\.(?:remove|unlink)\(|\bunlinkSync\(|\brmSync\(|\bFile\.delete\(|"
                     r"\bfile\.remove\(|\bos\.remove\(|\bunlink\(")
_CODE_CREATES = lazy(r"\.touch\(|\bopen\([^)]*['\"]w|\bwriteFileSync\(|\bclose\(|\bfile\.create\(|\bwrite_text\(")
_CODE_EMPTY_WRITE = lazy(r"""\bwriteLines\(\s*character\(0\)\s*,\s*(?:con\s*=\s*)?(['"])([^'"]+)\1""")
_CODE_PATH_OBJ = lazy(r"""\bPath\(\s*(['"])([^'"]+)\1\s*\)""")
_CODE_DELETED = lazy(r"""\b(?:remove|unlink|unlinkSync|rmSync|delete)\(\s*(['"])([^'"]+)\1""")


def replaced(u: Unwrapped, redirects: list) -> list[str]:
    """The files whose content `u` replaces with less or other content (unfiltered: the caller weighs them)."""
    targets = _onto_inputs(u, redirects) + _from_nothing_or_itself(u, redirects) + _compressed(u)
    targets += _ed_script(u, redirects)
    if u.code:
        targets += _code(u.code[1])
    return list(dict.fromkeys(targets))


def _same(a: str, b: str) -> bool:
    return a.removeprefix("./") == b.removeprefix("./")


def _onto_inputs(u: Unwrapped, redirects: list) -> list[str]:
    """`cat f > f`, `sort < f > f`, `git show HEAD:f > f`: the output is one of the inputs, truncated first."""
    if u.name in _NOT_READERS:
        return []
    ins = [a for a in u.args if not a.startswith("-")] + [t for op, t in redirects if op == "<"]
    ins += [a.split(":", 1)[1] for a in u.args if ":" in a and not a.startswith("-")]  # REV:PATH (git show)
    return [t for op, t in redirects if op in _WRITES and any(_same(t, a) for a in ins)]


def reads_written(upstream: list, written: list) -> list[str]:
    """`cat f | sort > f`: a later stage's output (flows.Cmd.written: lower-case base names) is a file an earlier
    stage reads (flows.Cmd: name, args)."""
    ins = [a for c in upstream if c.name not in _NOT_READERS for a in c.args if not a.startswith("-")]
    names = {posixpath.basename(a.split(":", 1)[-1]).lower() for a in ins}
    return [t for t in written if t in names]


def _outputs(u: Unwrapped) -> list[tuple[str, list[str]]]:
    """Files a program writes that are named in its arguments rather than by a redirect, each with the inputs
    its content comes from: `uniq IN OUT`, `sed 'w OUT' IN...`, `curl -o OUT file://IN`."""
    args = u.args
    if u.name in _POSITIONAL_OUT:  # `uniq IN OUT`, `xxd IN OUT`: the second operand is written
        valued = _POSITIONAL_OUT[u.name]
        ops = [a for k, a in enumerate(args) if (not a.startswith("-") or a == "-") and (k == 0 or args[k - 1] not in valued)]
        return [(ops[1], ops[:1])] if len(ops) >= 2 else []
    if u.name == "dd":  # `dd if=f of=f` truncates f before it is read (without conv=notrunc)
        outs = [a[3:] for a in args if a.startswith("of=")]
        return [(t, [a[3:] for a in args if a.startswith("if=")]) for t in outs if not any("notrunc" in a for a in args)]
    if u.name in ("sed", "gsed"):
        script_flags = ("-e", "--expression", "-f", "--file")
        scripts = [args[k + 1] for k, a in enumerate(args[:-1]) if a in script_flags]
        ops = [a for k, a in enumerate(args) if not a.startswith("-") and (k == 0 or args[k - 1] not in script_flags)]
        if not scripts and ops:
            scripts, ops = ops[:1], ops[1:]
        outs = [(m.group(1) or m.group(3) or "").strip() for s in scripts for m in _SED_W.finditer(s)]
        return [(t, ops) for t in outs if t]
    if u.name in ("curl", "wget"):
        ins = [a[len("file://"):] for a in args if a.startswith("file://")]
        flags = ("-o", "--output", "-O", "--output-document")  # also bundled: `curl -so F`, `-sSLo F`
        outs = [args[k + 1] for k, a in enumerate(args[:-1])
                if a in flags or (a[:1] == "-" and a[1:2] != "-" and a[-1:] in "oO" and len(a) > 2)] + \
            [a.split("=", 1)[1] for a in args if a.startswith(("--output=", "--output-document="))]
        return [(t, ins) for t in outs] if ins else []
    return []


def _from_nothing_or_itself(u: Unwrapped, redirects: list) -> list[str]:
    """An output named in the arguments that gets nothing (its inputs are the null device, or stdin redirected
    from it) or is one of its own inputs (truncated before it is read)."""
    out = []
    for target, ins in _outputs(u):
        empty = all(a in _NULL for a in ins) if ins else any(op == "<" and t in _NULL for op, t in redirects)
        if empty or any(_same(target, a) for a in ins):
            out.append(target)
    return out


def _compressed(u: Unwrapped) -> list[str]:
    """`gzip f`, `xz f`, `zstd --rm f`: the file is replaced by f.gz/f.xz/f.zst (its content gone from f)."""
    keeps = _COMPRESSORS.get(u.name)
    if keeps is None or any(a == "-" for a in u.args):
        return []
    shorts = "".join(a[1:] for a in u.args if a.startswith("-") and not a.startswith("--"))
    if any(a in keeps for a in u.args) or any(k[1] in shorts for k in keeps if len(k) == 2):
        return []
    if u.name in ("zstd", "lz4", "brotli") and not any(a in _REMOVES for a in u.args):
        return []
    ops = [a for k, a in enumerate(u.args) if not a.startswith("-") and (k == 0 or u.args[k - 1] not in _COMPRESSOR_VALUED)]
    return [a for a in ops if not _COMPRESSED.search(a) and a.strip(":+")]  # parallel gzip ::: FILES


def _ed_script(u: Unwrapped, redirects: list) -> list[str]:
    """ed/ex fed a script on stdin that deletes (or changes) every line and then writes the file."""
    if u.name not in ("ed", "red", "ex", "vi", "vim", "nvim"):
        return []
    script = "\n".join(t for op, t in redirects if op in ("<<", "<<<", "<<-"))
    lines = [ln for part in script.split("\n") for ln in part.split("|")]
    wipe = next((k for k, ln in enumerate(lines) if _ED_WIPE.match(ln)), None)
    if wipe is None or not any(_ED_WRITE.match(ln) for ln in lines[wipe + 1:]):
        return []
    return [a for a in u.args if not a.startswith(("-", "+"))]


def _code(code: str) -> list[str]:
    """Interpreter code that copies the null device over a named file, or deletes a named file and creates it."""
    out = [m.group(3) for m in _CODE_NULL_COPY.finditer(code)] + [m.group(2) for m in _CODE_EMPTY_WRITE.finditer(code)]
    if _CODE_DELETES.search(code) and _CODE_CREATES.search(code):  # deleted, then created again (empty)
        out += [m.group(2) for m in _CODE_PATH_OBJ.finditer(code)]
        out += [m.group(2) for m in _CODE_DELETED.finditer(code) if code.count(m.group(2)) > 1]
    return [t for t in out if not t.startswith("/dev/")]


_NO_CLOBBER = frozenset({"-n", "--no-clobber", "-i", "--interactive", "-b", "-u", "--update", "--update=none",
                         "--update=older", "-t", "--target-directory", "-T"})
_COPY_VALUED = frozenset({"-S", "--suffix", "-m", "--mode", "-o", "--owner", "-g", "--group", "--reflink",
                          "--sparse", "--preserve", "--no-preserve", "--context"})


def overwrites(u: Unwrapped) -> tuple[str, str] | None:
    """(source, destination) of `cp|mv|install SRC DST` (`ln -f`) with no no-clobber, interactive or backup
    option: DST, when it is an existing file, has its content replaced by SRC's."""
    if u.name not in ("cp", "mv", "install", "ln"):
        return None
    flags = "".join(a[1:] for a in u.args if a.startswith("-") and not a.startswith("--"))
    if any(a in _NO_CLOBBER or a.startswith("--backup") for a in u.args) or set(flags) & set("nibu"):
        return None
    if u.name == "ln" and "f" not in flags and "--force" not in u.args:
        return None
    ops = [a for k, a in enumerate(u.args) if not a.startswith("-") and (k == 0 or u.args[k - 1] not in _COPY_VALUED)]
    return (ops[0], ops[1]) if len(ops) == 2 and not ops[1].endswith("/") else None


def check(scanner: object, u: Unwrapped, env: object) -> None:
    """Scanner hook (with a workspace reader): a copy or rename onto an existing project file with other content."""
    from hermes_agent.approval.rules import clobber
    from hermes_agent.approval.rules.workfiles import UNREADABLE

    pair = overwrites(u)
    if pair is None or not clobber.precious(pair[1]) or pair[0] in _NULL:
        return
    base = getattr(env, "cwd", None)
    now = scanner.reader(pair[1], base)  # type: ignore[attr-defined]
    if not isinstance(now, str) or now is UNREADABLE:
        return  # not there (a new file), a directory (moved into it), or not inspectable
    if scanner.reader(pair[0], base) != now:  # type: ignore[attr-defined]
        scanner.add(clobber.CLOBBER[0], f"{clobber.CLOBBER[1]}: {u.name} over the existing {pair[1]}",  # type: ignore[attr-defined]
                    clobber.CLOBBER[2])
