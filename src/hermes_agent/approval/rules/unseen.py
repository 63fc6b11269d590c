"""Code whose text the command does not show (issue 19 item 11): a shell, `source`/`eval` or an interpreter
given as its program the output of another program or the text of a file by an indirect way - `./gen | sh`,
`sed -n 's/^run: //p' notes.md | bash`, `bash <(./x)`, `bash <(cat x.sh)`, `. /dev/stdin <<< "$(cat x)"` - or
told to run the lines of its input (`awk '{system($0)}' f`, `perl -ne 'system($_)'`, `xargs -I{} sh -c '{}'`,
`while read l; do eval "$l"; done`). What runs cannot be inspected, so it is asked about.
Readable, so judged by what they print: echo/printf/heredocs and files written earlier in the same text (their
text is scanned), the shell-setup tools (`source <(kubectl completion bash)`, dynamic.setup_output), and
downloads/decoders (findings of their own: remote_exec, decoded_exec). Running a file by its name (`bash x.sh`,
`bash < x.sh`) is not this case: workfiles reads the file. Pure."""

from __future__ import annotations

from typing import TYPE_CHECKING

from hermes_agent.approval.rules.canonical import SHELLS, basename
from hermes_agent.approval.rules.dynamic import built_at_run_time, setup_output
from hermes_agent.approval.rules.lazyre import lazy
from hermes_agent.approval.rules.lexer import QSUB, QVAR, SUB, VAR

if TYPE_CHECKING:
    from hermes_agent.approval.rules.expand import ShellEnv
    from hermes_agent.approval.rules.flows import Cmd

UNSEEN = ("unseen_code", "run code this command does not show (another program's output or a file's text fed to a "
                         "shell or interpreter): what runs cannot be inspected", False)
# interpreter code that runs its input records as commands: awk system($0) / print | "sh", perl system($_) / `$_`
_RUNS_INPUT = lazy(r"(?:\bsystem|\bexec|popen|\bqx)\s*\(?\s*(?:\$[0-9_]|\$F\b|\$line\b|line\b|l\b)|`\s*\$_\s*`"
                   r"|\bprint\b[^|;}]*\|\s*\"(?:ba|da|z|k)?sh\""
                   # or a file's text: execSync(fs.readFileSync(f)), os.system(open(f).read()), system(File.read(f)) (code that
                   # runs its stdin is canonical._RUNS_STDIN's: what the pipe feeds is judged)
                   r"|(?:system|exec\w*|popen|spawn\w*|check_output|getoutput|shell_exec)\s*\((?:[^()]|\([^()]*\))*?"
                   r"(?:readFileSync\s*\(\s*(?!0\b)|read_text\s*\(|open\s*\([^()]*\)\s*\.\s*read\s*\(|File\.read|file_get_contents)")
# a shell payload that is the input itself: xargs -I{} sh -c '{}' (unwrap puts `*` for the replace string),
# sh -c "$1"/"$@" fed by xargs
_INPUT_PAYLOAD = lazy(r"\s*['\"]?(?:\{\}|\*|\$(?:[1@*]|\{[1@*]\})|%)['\"]?\s*\Z")


def printed_known(c: Cmd, env: ShellEnv) -> bool:
    """True when what pipeline stage `c` prints is known or judged elsewhere."""
    if c.literal is not None or c.downloads or c.decodes or c.secret:
        return True
    if c.name == "cat":
        files = [a for a in c.args if not a.startswith("-")]
        return all(basename(a).lower() in env.files or basename(a).lower() in env.downloaded for a in files)
    return setup_output(" ".join([c.name, *c.args]))


def substitution_known(inner: str, env: ShellEnv) -> bool:
    """True when a `$(...)`/`<(...)` whose output was not resolved to text is still readable: a shell-setup tool,
    or `cat` of a file written or downloaded earlier in the text (judged by flows.scripts)."""
    words = inner.split()
    if words[:1] == ["cat"] and len(words) >= 2:
        return all(basename(a).lower() in env.files or basename(a).lower() in env.downloaded
                   for a in words[1:] if not a.startswith("-"))
    return setup_output(inner)


def runs_input(code: str) -> bool:
    """Interpreter code that hands each input record to a shell (awk system($0), perl system($_))."""
    return bool(_RUNS_INPUT.search(code))


def unknown_start(w, text: str, env: ShellEnv) -> bool:  # noqa: ANN001 - lexer.Word
    """A payload (`eval "$l"`, `sh -c "$CMD x"`) whose command word is an expansion the text does not fix."""
    return w.text.lstrip()[:1] in (VAR, QVAR, SUB, QSUB) and built_at_run_time(w, text, env)


def input_payload(payload: str, chain: list) -> bool:
    """A shell payload that is the line xargs (or parallel) hands it: the file's lines run as commands."""
    if payload.startswith("set -- ") and "\n" in payload:  # canonical._shell's prelude for the positional parameters
        payload = payload.split("\n", 1)[1]
    return bool(chain) and ("xargs" in chain or "parallel" in chain) and bool(_INPUT_PAYLOAD.match(payload))


def input_script(name: str, args: list, chain: list, payloads: list) -> bool:
    """`xargs sh -c` (no script: xargs's first input word is it) and `parallel` with no command or `:::: FILE`
    (each input line is a command)."""
    if "xargs" not in chain:
        return False
    if name == "::::" or name == ":::":
        return True
    return name in SHELLS and not payloads and any(a[:1] == "-" and "c" in a[1:] for a in args)
