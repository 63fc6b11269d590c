"""Which files a canonical command writes or deletes (redirections are handled by the scanner) and
which files a downloader saves. Pure string work."""

from __future__ import annotations

from hermes_agent.approval.rules.canonical import Unwrapped, basename

WRITE_OPS = frozenset({">", ">>", "&>", "&>>", ">|", "<>"})
_DECOMPRESS = frozenset({"uudecode", "gunzip", "zcat", "bzcat", "xzcat", "unxz", "unzstd", "zstdcat", "tr", "rev", "lzcat"})


def decodes(name: str, args: list) -> bool:
    """True when the command turns encoded or compressed input into something else (base64 -d, xxd -r...)."""
    short = [a for a in args if a.startswith("-") and not a.startswith("--")]
    if name in ("base64", "base32", "basenc", "gbase64"):
        return any("d" in a or "D" in a for a in short) or "--decode" in args
    if name == "xxd":
        return any("r" in a for a in short) or "-revert" in args
    if name == "openssl":
        return "-d" in args or "-base64" in args or "-a" in args or args[:1] == ["base64"]
    if name in ("gzip", "bzip2", "xz", "zstd", "brotli", "lz4"):
        return "--decompress" in args or any("d" in a for a in short)
    return name in _DECOMPRESS


def download_targets(u: Unwrapped, redirects: list) -> set:
    out = [t for op, t in redirects if op in WRITE_OPS]
    args = u.args
    for i, a in enumerate(args):
        if a in ("-o", "--output", "-O", "--output-document") and i + 1 < len(args) and not (u.name == "curl" and a == "-O"):
            out.append(args[i + 1])
        elif a[:1] == "-" and a[1:2] not in ("-", "") and a[-1] in "oO" and i + 1 < len(args) and \
                not (u.name == "curl" and a[-1] == "O"):  # clustered flags: curl -fsSLo x, wget -qO x
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
        target = operands[-1] if len(operands) >= 2 else ""
        if name != "ln" and target.startswith(("~", "$HOME")) and "." not in target.rstrip("/").rsplit("/", 1)[-1]:
            # a directory in HOME (~/.ipython/profile_default/startup, ~/.config/autostart): DIR/NAME of each source too
            return [target, *(target.rstrip("/") + "/" + s.rstrip("/").rsplit("/", 1)[-1] for s in operands[:-1])]
        return operands[-1:] if len(operands) >= 2 else []
    if u.inplace and name in ("sed", "gsed"):
        scripted = any(a in ("-e", "-f", "--expression", "--file") or a.startswith(("--expression=", "--file=")) for a in args)
        return operands if scripted else operands[1:]
    if u.inplace and u.code:
        return [a for a in operands if a != u.code[1]]
    if name in ("ed", "red", "ex", "vim", "vi", "nvim") and any(a in ("-s", "-es", "-Es", "-c") or a.startswith(("-s", "-e")) for a in args):
        skip = {i + 1 for i, a in enumerate(args) if a in ("-c", "--cmd")}
        return [a for i, a in enumerate(args) if i not in skip and not a.startswith(("-", "+"))]
    if name in ("awk", "gawk") and any(a == "inplace" or a == "-i" for a in args):
        return operands[2:] if args.count("-i") and len(operands) > 2 else operands[1:]
    if name == "ssh-keygen" and not any(a in ("-l", "-y", "-R", "-F", "-H", "-L", "-Q", "-e", "-i", "-B") for a in args):
        return [args[i + 1] for i, a in enumerate(args[:-1]) if a == "-f"]
    if name == "sponge" or (name == "yq" and any(a in ("-i", "--inplace") for a in args)):
        return operands[-1:]
    extracting = any(a in ("--extract", "--get") or (a.startswith("-") and not a.startswith("--") and "x" in a)
                     for a in args) or bool(args and not args[0].startswith("-") and "x" in args[0])
    if name == "tar" and extracting:
        return [args[i + 1] for i, a in enumerate(args[:-1]) if a in ("-C", "--directory")] + [
            a.split("=", 1)[1] for a in args if a.startswith("--directory=")]
    if name == "unzip":
        return [args[i + 1] for i, a in enumerate(args[:-1]) if a == "-d"]
    if name == "dd":
        return [a[3:] for a in args if a.startswith("of=")]
    if name in ("curl", "wget"):
        flags = ("-o", "--output") if name == "curl" else ("-O", "--output-document")
        return [args[i + 1] for i, a in enumerate(args[:-1]) if a in flags] + [
            a.split("=", 1)[1] for a in args if a.startswith(flags[1] + "=")]
    return []
