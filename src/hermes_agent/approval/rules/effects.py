"""Which files a canonical command writes or deletes (redirections are handled by the scanner) and
which files a downloader saves. Pure string work."""

from __future__ import annotations

from hermes_agent.approval.rules.canonical import Unwrapped, basename

WRITE_OPS = frozenset({">", ">>", "&>", "&>>", ">|", "<>"})


def download_targets(u: Unwrapped, redirects: list) -> set:
    out = [t for op, t in redirects if op in WRITE_OPS]
    args = u.args
    for i, a in enumerate(args):
        if a in ("-o", "--output", "-O", "--output-document") and i + 1 < len(args) and not (u.name == "curl" and a == "-O"):
            out.append(args[i + 1])
        elif a.startswith(("--output=", "--output-document=")):
            out.append(a.split("=", 1)[1])
        elif "://" in a:
            out.append(a.split("?", 1)[0].rstrip("/").rsplit("/", 1)[-1])
    return {basename(x).lower() for x in out if x and x != "-"}


def arg_targets(u: Unwrapped) -> list:
    name, args = u.name, u.args
    operands = [a for a in args if not a.startswith("-")]
    if name == "tee" or name in ("rm", "unlink", "truncate", "shred", "srm", "sudoedit", "rmdir"):
        return operands
    if name == "mv":
        return operands
    if name in ("cp", "install", "ln", "rsync", "scp", "ditto", "rcp"):
        for i, a in enumerate(args):
            if a in ("-t", "--target-directory") and i + 1 < len(args):
                return [args[i + 1]]
            if a.startswith("--target-directory="):
                return [a.split("=", 1)[1]]
        return operands[-1:] if len(operands) >= 2 else []
    if u.inplace and name in ("sed", "gsed"):
        scripted = any(a in ("-e", "-f", "--expression", "--file") or a.startswith(("--expression=", "--file=")) for a in args)
        return operands if scripted else operands[1:]
    if u.inplace and u.code:
        return [a for a in operands if a != u.code[1]]
    if name == "dd":
        return [a[3:] for a in args if a.startswith("of=")]
    if name in ("curl", "wget"):
        flags = ("-o", "--output") if name == "curl" else ("-O", "--output-document")
        return [args[i + 1] for i, a in enumerate(args[:-1]) if a in flags] + [
            a.split("=", 1)[1] for a in args if a.startswith(flags[1] + "=")]
    return []
