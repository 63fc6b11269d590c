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


# programs whose output is lines of their input files (so a target holding a line none of them has loses it)
_LINE_COPIERS = frozenset({"cat", "tac", "head", "tail", "cut", "sort", "uniq", "rev", "fold", "nl", "expand",
                           "unexpand", "grep", "egrep", "fgrep", "rg", "awk", "gawk", "sed", "paste", "comm", "join"})
_DECODERS = frozenset({"base64", "base32", "basenc"})
_DATA_EXT = {"jq": (".json", ".jsonl", ".ndjson", ".geojson", ".har", ".ipynb"),
             "yq": (".yaml", ".yml", ".json", ".toml", ".xml", ".properties", ".csv", ".tsv")}
_COPIER_VALUED = frozenset({"-n", "-c", "-f", "-d", "-k", "-t", "-o", "-s", "-w", "-e", "-m", "-A", "-B", "-C",
                            "-F", "--lines", "--bytes", "--fields", "--delimiter", "--key", "--field-separator"})
_SHRED_VALUED = frozenset({"-n", "--iterations", "-s", "--size", "--random-source"})


def fixed_writes(u: Unwrapped, redirects: list) -> list[tuple[str, str, list[str]]]:
    """(target, how its new content is made, sources) for each file `u` overwrites with content it does not
    author: "lines" (a filter's output: lines of the source files), "decoded" (a decoder's output of the
    sources), "blob" (a committed version, `git show REV:P`), "data" (jq/yq output, JSON or YAML), "random"
    (shred). Content fed on stdin from the command text (`cat > f <<EOF`, `echo x > f`) is the command's own
    writing, not listed; so is a filter fed by a pipe (its input is another command's)."""
    outs = [t for op, t in redirects if op in _WRITES]
    name, args = u.name, u.args
    if name == "shred":
        if any(a in ("-u", "--remove") or a.startswith("--remove=") or (a[:1] == "-" and a[1:2] != "-" and "u" in a)
               for a in args):
            return []  # overwritten then deleted: a removal, the rm rules' (the file kept full of noise is this class)
        ops = [a for k, a in enumerate(args) if not a.startswith("-") and (k == 0 or args[k - 1] not in _SHRED_VALUED)]
        return [(t, "random", []) for t in ops]
    if not outs:
        return []
    if name in _DATA_EXT:  # `jq -n '{}' > f.py`: JSON cannot be the content of a source file
        return [(t, "data", []) for t in outs if not t.lower().endswith(_DATA_EXT[name])]
    if name == "git" and args[:1] in (["show"], ["cat-file"]):
        return [(t, "blob", [a]) for t in outs for a in args[1:] if ":" in a and not a.startswith("-")][:len(outs)]
    if name in _LINE_COPIERS or name in _DECODERS:
        valued = _COPIER_VALUED - {"-d"} if name in _DECODERS else _COPIER_VALUED | ({"-v"} if "awk" in name else set())
        srcs = [a for k, a in enumerate(args) if not a.startswith("-") and (k == 0 or args[k - 1] not in valued)]
        if name in ("grep", "egrep", "fgrep", "rg", "awk", "gawk", "sed") and srcs:
            srcs = srcs[1:]  # the pattern or program comes first
        srcs += [t for op, t in redirects if op == "<"]
        if not srcs or any(s in _NULL or s == "-" for s in srcs):
            return []  # stdin (a pipe, a heredoc: the command's own text); /dev/null is clobber.py's
        if name in _DECODERS and not any(a in ("-d", "--decode", "-D") for a in args):
            return []  # encoding: the output is new text of another kind (a .b64 file)
        return [(t, "decoded" if name in _DECODERS else "lines", srcs) for t in outs]
    return []


def _keeps(how: str, now: str, sources: list, reader: object, base: str | None) -> bool:
    """Could the new content be the target's content `now`? Lines: every line of `now` is a line of a source
    (a rerun of the same filter: `sort a > sorted.txt`); decoded: a source decodes to `now`."""
    from hermes_agent.approval.rules.workfiles import UNREADABLE

    texts = [reader(s, base) for s in sources]  # type: ignore[operator]
    texts = [t for t in texts if isinstance(t, str) and t is not UNREADABLE]
    if len(texts) < len(sources):
        return True  # a source that is not there or not readable: nothing to judge by
    if how == "lines":
        have = {ln.strip() for t in texts for ln in t.splitlines()}
        return all(ln.strip() in have for ln in now.splitlines())
    if how == "decoded":
        import base64
        import binascii

        for t in texts:
            try:
                if base64.b64decode("".join(t.split()), validate=False).decode("utf-8", "replace") == now:
                    return True
            except (binascii.Error, ValueError):
                continue
        return False
    return False


def _fixed(scanner: object, u: Unwrapped, env: object, redirects: list) -> None:
    """A redirect (or shred) over an existing project file holding text, with content the command does not
    write itself and that cannot be what the file holds (rt14b c02: `cat README.md > f.py`, `jq -n > f.py`)."""
    from hermes_agent.approval.rules import clobber
    from hermes_agent.approval.rules.workfiles import UNREADABLE

    base = getattr(env, "cwd", None)
    for target, how, sources in fixed_writes(u, redirects):
        if not clobber.precious(target) or any(_same(target, s.split(":", 1)[-1]) for s in sources):
            continue  # onto its own input: _onto_inputs' (found without reading)
        now = scanner.reader(target, base)  # type: ignore[attr-defined]
        if not isinstance(now, str) or now is UNREADABLE or not now.strip():
            continue  # not there (a new file), empty, or not inspectable
        if how in ("lines", "decoded") and _keeps(how, now, sources, scanner.reader, base):  # type: ignore[attr-defined]
            continue
        what = {"random": "random bytes", "data": f"{u.name} output", "blob": "a committed version of another file"}
        scanner.add(clobber.CLOBBER[0], f"{clobber.CLOBBER[1]}: {u.name} writes "  # type: ignore[attr-defined]
                    f"{what.get(how, ', '.join(sources[:2]))} over the existing {target}", clobber.CLOBBER[2])
        return


def check(scanner: object, u: Unwrapped, env: object, redirects: list = ()) -> None:  # type: ignore[assignment]
    """Scanner hook (with a workspace reader): a copy or rename onto an existing project file with other content,
    and a redirect of content the command does not write itself over one (`_fixed`)."""
    from hermes_agent.approval.rules import clobber
    from hermes_agent.approval.rules.workfiles import UNREADABLE

    _fixed(scanner, u, env, list(redirects))
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
