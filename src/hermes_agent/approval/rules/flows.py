"""Data flows between the commands of one text, as a Scanner mixin: files written (through cd and
symlinks), credentials read, secrets or files sent over the network, files written and then run,
and what one pipeline stage feeds the next (curl | sh, base64 -d | sh, env | curl)."""

from __future__ import annotations

import posixpath
from dataclasses import dataclass, field

from hermes_agent.approval.rules import clobber, gitdiscard, interp, replaces
from hermes_agent.approval.rules.canonical import SHELLS, Unwrapped, basename
from hermes_agent.approval.rules.effects import WRITE_OPS, arg_targets, decodes, download_targets
from hermes_agent.approval.rules.expand import ShellEnv, render_sub
from hermes_agent.approval.rules.exposure import (
    SENDERS,
    dumps_environment,
    metadata_host,
    read_sources,
    sensitive_upload,
    upload_sources,
)
from hermes_agent.approval.rules.lazyre import lazy
from hermes_agent.approval.rules.lexer import decode_ansi_c, printf_text
from hermes_agent.approval.rules.mass import EDIT_EVERYTHING, edits_in_place, lists_everything
from hermes_agent.approval.rules.planted import SED_SUBST, planted
from hermes_agent.approval.rules.targets import CREDENTIAL_READ, classify_path, classify_read, norm_path
from hermes_agent.approval.rules.unseen import UNSEEN, printed_known, substitution_known

DOWNLOADERS = frozenset({"curl", "wget", "fetch", "http", "https", "xh", "aria2c", "lwp-request", "lwp-download", "get",
                         "nc", "ncat", "netcat", "socat", "curlie", "httpie"})
SOURCES = frozenset({"source", ".", "eval"})
EXFILTRATION = ("exfiltration", "send secrets, the environment or files from outside the workspace over the network", False)
CLOUD_METADATA = ("cloud_metadata", "contact the cloud metadata service (instance credentials)", False)
_CHMOD_X = lazy(r"(?:[ugoa]*\+[rwxXst]*x[rwxXst]*|0?[0-7]?[1357][0-7]{2})\Z")
_EXTRACTORS = frozenset({"tar", "bsdtar", "unzip", "cpio", "busybox"})
_PATH_DIR = lazy(r"\A(?:~/(?:\.local/)?bin|/usr/(?:local/)?s?bin|/s?bin|/opt/[^/]+/bin)(?:/|\Z)")
_STDIN_OPS = frozenset({"<<", "<<-", "<<<"})
_ENV_TEMPLATE = lazy(r"(?:^|/)\.env\.(?:example|sample|template|dist|defaults)\Z")


BUNDLE_UPLOAD = ("exfiltration", "send an archive of a whole directory over the network (tar c . | curl -T -)", False)
_STDIN_SENDERS = frozenset({"nc", "ncat", "netcat", "socat", "telnet", "openssl"})


def archived(cmd: Cmd) -> list[str]:
    """The paths an archiver writing to stdout packs (tar c[z] PATHS, zip -r - PATHS)."""
    args = cmd.args[1:] if cmd.name == "tar" and cmd.args and not cmd.args[0].startswith("-") else cmd.args
    out, skip = [], False
    for a in args:
        if skip:
            skip = False
        elif a in ("-C", "--directory", "-f", "--file", "-X", "--exclude-from", "-T", "--files-from"):
            skip = True  # -C changes where relative paths are read: they stay relative here (the workspace case)
        elif not a.startswith("-") and a != "-":
            out.append(a)
    return out


def uploads_stdin(cmd: Cmd) -> bool:
    """A network client that sends what it reads on stdin (curl -T -, --data-binary @-, -F f=@-, nc host port)."""
    if cmd.name in _STDIN_SENDERS:
        return True
    args = cmd.args
    for i, a in enumerate(args):
        nxt = args[i + 1] if i + 1 < len(args) else ""
        if a in ("-T", "--upload-file") and nxt in ("-", "."):
            return True
        if a.startswith("-T") and a[2:] in ("-", "."):
            return True
        if a.endswith("@-") or (a in ("-d", "--data", "--data-binary", "--data-raw", "-F", "--form", "--post-file",
                                      "--body-file") and (nxt.endswith("@-") or nxt in ("-", "/dev/stdin"))):
            return True
    return False


def bundles(cmd: Cmd) -> bool:
    """An archiver writing a directory tree to stdout (tar c ., zip -r - ., git archive, cpio -o)."""
    args = cmd.args
    if cmd.name == "tar":
        first = args[0] if args else ""
        creates = any(a in ("-c", "--create") or (a.startswith("-") and not a.startswith("--") and "c" in a[1:])
                      for a in args) or (first[:1] != "-" and "c" in first)
        to_file = any(a.startswith(("--file=",)) or (a.startswith("-") and not a.startswith("--") and "f" in a[1:]
                                                     and args[args.index(a) + 1:args.index(a) + 2] != ["-"])
                      for a in args) or (first[:1] != "-" and "f" in first and args[1:2] != ["-"])
        return creates and not to_file
    if cmd.name in ("zip", "7z", "7za"):
        return "-" in args
    if cmd.name == "git":
        return args[:1] == ["archive"] and not any(a.startswith(("-o", "--output")) for a in args)
    return cmd.name in ("cpio", "pax") and any(a in ("-o", "-w") or a.startswith("-o") for a in args)


@dataclass(slots=True)
class Cmd:
    """What the pipeline checks need to know about one canonical command."""

    name: str
    args: list
    stdin_code: bool = False
    lang: str | None = None
    downloads: bool = False
    decodes: bool = False
    literal: str | None = None  # what echo/printf/cat<<EOF writes to stdout
    here: str | None = None  # here-string / heredoc fed to stdin
    secret: bool = False  # prints credentials or the environment
    sends: bool = False  # talks to the network
    written: list = field(default_factory=list)  # files its stdout is redirected into
    edits: bool = False  # an in-place editor fed its file names by xargs
    via_xargs: bool = False  # run by xargs/parallel: its stdin is not what a pipe feeds




class FlowChecks:
    """Mixin for Scanner: needs add(), text() and the ShellEnv of the text being scanned."""

    def add(self, key: str, description: str, hardline: bool = False) -> None:
        raise NotImplementedError

    def text(self, text: str, depth: int = 0, conservative: bool = False, env: ShellEnv | None = None) -> set[str]:
        raise NotImplementedError

    def sockets_and_shells(self, cmds: list) -> None:
        raise NotImplementedError

    def pipe_taint(self, sink: Cmd, upstream: list, env: ShellEnv) -> None:
        raise NotImplementedError

    @staticmethod
    def path(p: str, env: ShellEnv) -> str:
        """`p` as seen from the directory cd'd into earlier, through symlinks made earlier."""
        if env.cwd and p and not p.startswith(("/", "~", "$", "-")):
            p = norm_path(posixpath.join(env.cwd, p))
        for link, target in env.links.items():
            if p == link or p.startswith(link + "/"):
                return target + p[len(link):]
        return p

    def writes(self, u: Unwrapped, redirects: list, env: ShellEnv) -> None:
        targets = [t for op, t in redirects if op in WRITE_OPS or (op == ">&" and not t.isdigit() and t != "-")]
        for op, t in redirects:
            if op in ("<", "<&", "<>") and t.startswith(("/dev/tcp/", "/dev/udp/")):
                targets.append(t)
        copied = arg_targets(u)
        if u.name in ("cp", "install") and copied:
            sources = [a for a in u.args if not a.startswith("-") and a != copied[0]]
            if sources and all(_ENV_TEMPLATE.search(s) for s in sources) and not copied[0].startswith(("/", "~")):
                copied = []  # a .env made from the project's own template, inside the workspace
        targets.extend(copied)
        for t in targets:  # before a link made by this command is followed: `ln -sf /dev/null ~/.bash_history`
            cls = classify_path(self.path(t, env))
            if cls:
                self.add(*cls)
        if u.name == "ln" and any(a.startswith("-") and "s" in a.lstrip("-")[:3] or a == "--symbolic" for a in u.args):
            operands = [a for a in u.args if not a.startswith("-")]
            if len(operands) == 2:
                env.links[self.path(operands[1], env)] = self.path(operands[0], env)

    def exposure(self, u: Unwrapped, cmd: Cmd, redirects: list, sub_traits: dict, env: ShellEnv) -> None:
        """Credentials read, secrets sent and metadata addresses contacted by one command."""
        inputs = [t for op, t in redirects if op in ("<", "<>")]
        for p in [*read_sources(u), *inputs]:
            if classify_read(self.path(p, env)):
                self.add(*CREDENTIAL_READ)
                cmd.secret = True
        cmd.secret = cmd.secret or dumps_environment(u)
        cmd.sends = u.name in SENDERS
        if cmd.sends:
            if any(sensitive_upload(self.path(p, env)) for p in [*upload_sources(u), *inputs] if p != "-"):
                self.add(*EXFILTRATION)
            if any("@secret" in t for t in sub_traits.values()):
                self.add(*EXFILTRATION)
        if (cmd.sends or u.name in DOWNLOADERS) and any(metadata_host(a) for a in u.args):
            self.add(*CLOUD_METADATA)
        if any(metadata_host(t) for _, t in redirects if t.startswith(("/dev/tcp/", "/dev/udp/"))):
            self.add(*CLOUD_METADATA)

    def chmod_exec(self, u: Unwrapped, env: ShellEnv) -> None:
        if u.name == "chmod":
            operands = [a for a in u.args if not a.startswith("-")]
            if len(operands) >= 2 and _CHMOD_X.match(operands[0]):
                env.chmodded.update(basename(p).lower() for p in operands[1:])
        elif env.chmodded and basename(u.raw_name).lower() in env.chmodded:
            self.add("chmod_exec", "chmod +x followed by running the file")
        elif env.chmodded and u.name in SHELLS and u.args and basename(u.args[-1]).lower() in env.chmodded:
            self.add("chmod_exec", "chmod +x followed by running the file")

    def scripts(self, u: Unwrapped, cmd: Cmd, redirects: list, env: ShellEnv, depth: int) -> None:
        """Files written or downloaded earlier in the same text and then run: check what they contain."""
        if cmd.downloads:
            env.downloaded.update(download_targets(u, redirects))
            return
        cmd.written = [basename(t).lower() for op, t in redirects if op in WRITE_OPS]
        if cmd.literal is not None and not cmd.decodes:
            for op, t in redirects:
                for lang, text in planted(t, cmd.literal) if op in WRITE_OPS else ():
                    self.feed(Cmd(u.name, [], lang=None if lang == "sh" else lang), text, depth, env)
        self._remember_writes(u, cmd, redirects, env)
        if not (env.downloaded or env.files):
            if self.__dict__.get("_sed_edits"):
                self._written_runs(u, env, depth)
            return
        lang = interp.language(u.name)
        ran = {basename(u.raw_name).lower()}
        if u.name in SHELLS or u.name in SOURCES or lang:
            ran.update(basename(a).lower() for a in u.args[:1] if not a.startswith("-"))
        if ran & env.downloaded:
            self.add("remote_exec", "run a script just downloaded (curl -o x && sh x)")
        exe = norm_path(self.path(u.raw_name, env)) if "/" in u.raw_name else ""
        if exe and any(d != "dir:." and exe.startswith(d[4:] + "/") for d in env.downloaded if d.startswith("dir:")):
            self.add("remote_exec", "run a program just extracted from a download")
        for name in ran & env.files.keys():
            content = env.files.pop(name)
            if content is None:
                self.add("decoded_exec", "run a file that holds decoded content (base64 -d > x.sh; sh x.sh)")
            else:
                self.feed(Cmd(u.name, u.args, lang=lang), content, depth, env)
        self._written_runs(u, env, depth)

    def _remember_writes(self, u: Unwrapped, cmd: Cmd, redirects: list, env: ShellEnv) -> None:
        """What the text put into files so far: echo/printf/heredoc/decoded text (`>>` appends), carried along by
        cp/mv, and the replacement text of a `sed -i s///` on such a file (its new recipe or line)."""
        if cmd.literal is not None or cmd.decodes:
            content = cmd.literal if not cmd.decodes else (interp.try_decode(cmd.here) if cmd.here else None)
            if content is not None and u.name == "echo" and not any(a in ("-n", "-ne", "-en") for a in u.args):
                content += "\n"
            for op, t in redirects:
                name = basename(t).lower()
                if op not in WRITE_OPS:
                    continue
                before = env.files.get(name)
                appended = op in (">>", "&>>") and isinstance(before, str) and content is not None
                env.files[name] = before + content if appended else content  # type: ignore[operator]
        if u.code and u.code[0] != "sql":
            for name, body in interp.written_files(*u.code).items():
                env.files[basename(name).lower()] = body
        operands = [a for a in u.args if not a.startswith("-")]
        if u.name in ("cp", "mv", "install") and len(operands) == 2 and basename(operands[0]).lower() in env.files:
            source = basename(operands[0]).lower()
            env.files[basename(operands[1]).lower()] = env.files[source] if u.name != "mv" else env.files.pop(source)
        elif u.name in ("cp", "mv", "install") and len(operands) == 2:  # the copy runs what the source holds
            self.__dict__.setdefault("_copied", {})[basename(operands[1]).lower()] = self.path(operands[0], env)
        elif u.name in ("sed", "gsed") and u.inplace:
            new = [m.group(2) for a in u.args for m in SED_SUBST.finditer(a) if m.group(2).strip()]
            edits: dict = self.__dict__.setdefault("_sed_edits", {})
            for name in (basename(a).lower() for a in arg_targets(u)) if new else ():
                edits.setdefault(name, []).extend(new)

    def _written_runs(self, u: Unwrapped, env: ShellEnv, depth: int) -> None:
        """A file the text wrote earlier that this command runs by another way than naming it as a script
        (`make -f M clean`, `just`, `task`, `npm run`, `python -m`): judged by the part of it that runs, the
        way workfiles reads such files from the workspace (rt12 a29)."""
        from hermes_agent.approval.rules import workfiles

        edits: dict = self.__dict__.get("_sed_edits", {})
        for kind, path, picks in workfiles.runs(u):
            name = basename(path).lower()
            for piece in edits.pop(name, ()) if kind != "tests" else ():  # the text a sed -i put in, as it runs
                lang = kind if kind in ("python", "perl", "ruby", "node", "php", "lua") else None
                piece = piece.replace("\\n", "\n").replace("\\t", "")
                for _, text in (planted("package.json", piece) if kind == "npm" else ()) or [("sh", piece)]:
                    self.feed(Cmd(u.name, [], lang=lang), text, depth, env)
            if name not in env.files or kind == "tests":
                continue
            content = env.files[name]
            if content is None:
                self.add("decoded_exec", f"run {path}, a file this command filled with decoded content")
                continue
            for lang, piece in workfiles.texts(kind, content, picks):
                self.feed(Cmd(u.name, [], lang=None if lang == "sh" else lang), piece, depth, env)

    def _extracted(self, sink: Cmd, env: ShellEnv) -> None:
        """curl ... | tar x -C DIR: what lands in DIR came from the network; into a PATH directory it will run."""
        args = sink.args
        target = next((args[i + 1] for i, a in enumerate(args[:-1]) if a in ("-C", "--directory", "-d")), None)
        target = target or next((a.split("=", 1)[1] for a in args if a.startswith("--directory=")), ".")
        where = norm_path(self.path(target, env))
        if _PATH_DIR.search(where):
            self.add("remote_exec", "install programs downloaded from the network into a PATH directory")
        env.downloaded.add("dir:" + where.rstrip("/"))

    def describe(self, u: Unwrapped) -> Cmd:
        name, args = u.name, u.args
        cmd = Cmd(name, args, stdin_code=u.stdin_code, downloads=name in DOWNLOADERS)
        if u.code is None and u.stdin_code and name not in SHELLS:
            cmd.lang = interp.language(name)
        elif u.code is not None:
            cmd.lang = u.code[0]
        cmd.decodes = decodes(name, args)
        cmd.via_xargs = "xargs" in u.chain
        cmd.edits = cmd.via_xargs and edits_in_place(u)
        if name == "echo":
            cmd.literal = " ".join(a for a in args if a not in ("-n", "-e", "-E", "-ne", "-en"))
            if any(a in ("-e", "-ne", "-en") for a in args):
                cmd.literal = decode_ansi_c(cmd.literal)
        elif name == "printf" and args:
            cmd.literal = printf_text(args)
        return cmd

    def stdin_feeds(self, u: Unwrapped, cmd: Cmd, raw: list, resolved: list, sub_traits: dict, depth: int,
                    env: ShellEnv) -> None:
        for (op, w), (_, text) in zip(raw, resolved, strict=False):
            written = env.files.get(basename(text).lower()) if op == "<" and text else None
            fetched = op == "<" and bool(text) and basename(text).lower() in env.downloaded
            if op not in _STDIN_OPS and not (op == "<" and (written or fetched or any(k == "<(" for k, _ in w.subs))):
                continue
            if op != "<":
                cmd.here = text
            if u.name == "cat" and op != "<":
                cmd.literal = text
            if not cmd.stdin_code:
                continue
            if op in ("<<", "<<-") and u.name in SHELLS:
                self.add("heredoc_shell", "shell commands run from a heredoc")
            self.check_sources(sub_traits.get(id(w)), "redirection into an interpreter")
            if fetched:  # curl -o x.py ...; python3 - < x.py
                self.add("remote_exec", "run a script just downloaded (curl -o x && sh < x)")
            if cmd.lang != "sql":  # sh < <(./gen), sh <<< "$(./gen)": unseen.py
                self.unseen_subs(w, sub_traits.get(id(w)), cmd, depth, env)
            if op != "<":
                self.feed(cmd, text, depth, env)
            elif written:  # printf ... > x.sh; sh < x.sh
                self.feed(cmd, written, depth, env)
            else:  # bash < <(echo CMD): what the substitution prints, when the text fixes it, is the program
                for kind, inner in w.subs:
                    printed = render_sub(inner, env) if kind == "<(" else "$("
                    if printed != "$(" + " ".join(inner.split()) + ")":
                        self.feed(cmd, printed, depth, env)

    def unseen_subs(self, w, sources: set | None, sink: Cmd, depth: int, env: ShellEnv) -> None:  # noqa: ANN001
        """Substitutions in a program's text (`bash <(X)`, `sh <<< "$(X)"`) whose output the text does not fix:
        `cat` of a file written earlier runs that file's text; a download or decoder has its own finding;
        anything else is code nobody can read (unseen.py)."""
        if sources and ("@download" in sources or "@decode" in sources or sources & DOWNLOADERS):
            return
        for _kind, inner in w.subs:
            if not inner.split() or render_sub(inner, env) != "$(" + " ".join(inner.split()) + ")":
                continue  # echo/printf: its printed text is the program, scanned by the caller
            if not substitution_known(inner, env):
                self.add(*UNSEEN)
                continue
            for name in (basename(a).lower() for a in inner.split()[1:] if inner.split()[0] == "cat"):
                if isinstance(env.files.get(name), str):
                    self.feed(sink, env.files[name], depth, env)
                elif name in env.downloaded:
                    self.add("remote_exec", "run a script just downloaded (curl -o x && bash <(cat x))")

    def check_sources(self, sources: set | None, how: str) -> None:
        if not sources:
            return
        if "@download" in sources or sources & DOWNLOADERS:
            self.add("remote_exec", f"run remote content via {how} (e.g. bash <(curl ...), $(curl ...))")
        if "@decode" in sources:
            self.add("decoded_exec", f"run decoded content via {how} (base64 -d, xxd -r, openssl...)")

    def feed(self, sink: Cmd, text: str, depth: int, env: ShellEnv) -> None:
        if sink.name == "expect":  # expect <<EOF spawn ...; send "...": its spawns and sends are shell text
            from hermes_agent.approval.rules.runners import DETACHED, expect_script

            detached, texts = expect_script(text)
            self.add(*DETACHED) if detached else None
            for piece in texts:
                self.text(piece, depth + 1, env=env.child())
            return
        if sink.lang:
            interp.scan_code(self, sink.lang, text, depth + 1)
        else:
            self.text(text, depth + 1, env=env.child())

    def pipeline(self, cmds: list, env: ShellEnv, depth: int) -> None:
        if len(cmds) > 1:
            self.sockets_and_shells(cmds)
        for idx, (simple, sink) in enumerate(cmds):
            if sink is None or not simple.pipe_in:
                continue
            upstream = [c for _, c in cmds[:idx] if c is not None]
            if sink.sends and any(c.secret for c in upstream):
                self.add(*EXFILTRATION)
            if sink.sends and uploads_stdin(sink) and any(bundles(c) for c in upstream):
                self.add(*BUNDLE_UPLOAD)
            if sink.sends and any(bundles(c) and any(sensitive_upload(self.path(p, env)) for p in archived(c)) for c in upstream):
                self.add(*EXFILTRATION)  # tar cz ~ | ssh host 'cat > h.tgz': the home (keys included) leaves
            self.pipe_taint(sink, upstream, env)
            if sink.edits and any(lists_everything(c.name, c.args) for c in upstream):
                self.add(*EDIT_EVERYTHING)
            if clobber.empty_tee(sink.name, sink.args, upstream) or \
                    any(clobber.precious(t) for t in replaces.reads_written(upstream, sink.written)):
                self.add(*clobber.CLOBBER)  # `cat f | sort > f`: f is truncated before it is read (rt13 a45)
            if gitdiscard.reverts_diff(sink, upstream) or gitdiscard.extracts_committed(sink, upstream):
                self.add(*gitdiscard.DISCARD)
            if sink.name == "tee" and any(c.downloads for c in upstream):  # curl ... | tee x.sh: x.sh is downloaded
                env.downloaded.update(basename(a).lower() for a in sink.args if not a.startswith("-"))
            elif sink.name == "tee" and upstream and upstream[-1].literal is not None:  # printf ... | tee x.sh
                env.files.update((basename(a).lower(), upstream[-1].literal) for a in sink.args if not a.startswith("-"))
            if sink.name in _EXTRACTORS and any(c.downloads for c in upstream):
                self._extracted(sink, env)
            if sink.decodes and sink.written:
                literal = next((c.literal for c in reversed(upstream) if c.literal), None)
                decoded = interp.try_decode(literal) if literal else None
                for name in sink.written:
                    env.files[name] = decoded
            if not sink.stdin_code:
                continue
            if upstream and sink.lang != "sql" and not sink.via_xargs and not printed_known(upstream[-1], env):  # ./gen | sh, sed -n .. | bash
                self.add(*UNSEEN)
            if any(c.downloads for c in upstream):
                self.add("remote_pipe_shell", "pipe remote content to a shell or interpreter (curl | sh)")
            if any(c.decodes for c in upstream):
                self.add("decoded_pipe_shell", "pipe decoded content to a shell (base64 -d | sh)")
                for c in upstream:
                    decoded = interp.try_decode(c.literal) if c.literal else None
                    if decoded:
                        self.feed(sink, decoded, depth, env)
            for c in upstream:
                if c.literal and not c.decodes:
                    self.feed(sink, c.literal, depth, env)
                elif c.name == "cat":  # printf ... > x.sh; cat x.sh | sh
                    for text in filter(None, (env.files.get(basename(a).lower()) for a in c.args if a != "-")):
                        self.feed(sink, text, depth, env)
