"""Folders sent off the machine whole, with the secrets inside them (rt13 a43): a container build context that
holds a `.env` the `.dockerignore` does not exclude, pushed to a registry (`docker build . && docker push`,
`docker buildx build --push .`), and a folder copied to a remote host (`rsync -a config/ u@host:`,
`scp -r deploy u@host:`). The names in the folder are looked up through the workspace reader (approval/
scriptfiles.py: no symlink followed), so only scan_files judges them; secret-looking names are targets.secret_file's.
"""

from __future__ import annotations

import fnmatch
import posixpath
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from hermes_agent.approval.rules.unwrapped import Unwrapped

CONTEXT_LEAK = ("exfiltration", "send a folder holding secret files ({what}) over the network (a registry push of "
                                "its build context, a remote copy)", False)
# what a folder's secrets are usually called (targets.secret_file judges each name; this is where to look)
CANDIDATES = (".env", ".env.local", ".env.production", ".env.prod", "credentials.json", "credentials.yml",
              "credentials.yaml", "secrets.json", "secrets.yml", "secrets.yaml", "secrets.env", "service-account.json",
              "id_rsa", "id_ed25519", "id_ecdsa", "deploy.pem", "key.pem", "server.key", "private.key", ".npmrc",
              ".pypirc", ".netrc", "auth.json", "token.json")
_BUILD_VALUED = frozenset({"-t", "--tag", "-f", "--file", "--build-arg", "--target", "--platform", "--label", "--network",
                           "--secret", "--ssh", "-o", "--output", "--cache-from", "--cache-to", "--iidfile",
                           "--progress", "--builder", "--add-host", "--shm-size", "-m", "--memory"})
# builds on a remote builder: the context folder is uploaded as it is (minus its ignore file)
_UPLOADING_BUILDS = frozenset({("gcloud", ("builds", "submit")), ("az", ("acr", "build")), ("fly", ("deploy",)),
                               ("flyctl", ("deploy",)), ("railway", ("up",)), ("vercel", ("deploy",))})
_IGNORE_FILES = (".dockerignore", ".gcloudignore", ".vercelignore")
_COPY_VALUED = frozenset({"-e", "--rsh", "-i", "-P", "-p", "-o", "-F", "-l", "-c", "-J", "--exclude", "--include",
                          "--filter", "--exclude-from", "--include-from", "--files-from", "--port"})


def _operands(args: list, valued: frozenset) -> list[str]:
    out, skip = [], False
    for a in args:
        if skip:
            skip = False
        elif a in valued:
            skip = True
        elif not a.startswith("-") or a == "-":
            out.append(a)
    return out


def sent_folders(u: Unwrapped) -> tuple[list[str], bool, bool]:
    """(folders whose files leave, honouring .dockerignore?, sent now?) for one command; `docker build` sends
    only when it pushes (`--push`), a later `docker push` in the same text sends the built image."""
    name, args = u.name, u.args
    if name in ("docker", "podman", "buildah", "nerdctl"):
        rest = args[1:] if args[:1] != ["buildx"] else args[2:]
        sub = args[1] if args[:1] == ["buildx"] and len(args) > 1 else (args[0] if args else "")
        if sub not in ("build", "image") or (sub == "image" and rest[:1] != ["build"]):
            return [], True, False
        ops = _operands(rest[1:] if sub == "image" else rest, _BUILD_VALUED)
        push = "--push" in args or any(a.startswith(("--output=type=registry", "type=registry")) for a in args)
        return ops[-1:] or ["."], True, push
    if (name, tuple(args[:2])) in _UPLOADING_BUILDS or (name, tuple(args[:1])) in _UPLOADING_BUILDS:
        ops = _operands(args[2 if (name, tuple(args[:2])) in _UPLOADING_BUILDS else 1:], _BUILD_VALUED)
        return ops[-1:] or ["."], True, True  # the folder is uploaded to a remote builder now
    if name in ("rsync", "scp", "sftp"):
        ops = _operands(args, _COPY_VALUED)
        if len(ops) >= 2 and _remote(ops[-1]):
            return [o for o in ops[:-1] if not _remote(o) and (o.endswith("/") or o in (".", "..") or
                                                               "." not in posixpath.basename(o))], False, True
    return [], False, False


def _remote(arg: str) -> bool:
    head = arg.split("/", 1)[0]
    return ":" in head and not arg.startswith(("/", "./", "../")) or arg.startswith(("rsync://", "sftp://", "scp://"))


def pushes(u: Unwrapped) -> bool:
    return u.name in ("docker", "podman", "buildah", "nerdctl") and (u.args[:1] == ["push"] or u.args[:2] == ["image", "push"])


def secret_inside(reader: object, folder: str, base: str | None, ignore_file: bool) -> str:
    """The first secret-looking file present in `folder` (and not excluded by its .dockerignore), or ""."""
    from hermes_agent.approval.rules.workfiles import UNREADABLE

    ignored = ""
    if ignore_file:
        for name in _IGNORE_FILES:
            got = reader(posixpath.join(folder, name), base)  # type: ignore[operator]
            ignored += got + "\n" if isinstance(got, str) else ""
    patterns = {ln.strip().lstrip("/").removeprefix("**/") for ln in ignored.splitlines() if ln.strip()}
    for name in CANDIDATES:
        if any(fnmatch.fnmatchcase(name, p.rstrip("/")) for p in patterns if not p.startswith(("#", "!"))):
            continue
        got = reader(posixpath.join(folder, name), base)  # type: ignore[operator]
        if got is not None and got is not UNREADABLE:
            return posixpath.join(folder, name)
    return ""


def check(scanner: object, u: Unwrapped, env: object) -> None:
    """Scanner hook (with a workspace reader): a secret-holding folder leaving now, or built and later pushed."""
    base = getattr(env, "cwd", None)
    state: dict = scanner.__dict__.setdefault("_secret_builds", {})
    if pushes(u) and state:
        what = next(iter(state.values()))
        scanner.add(CONTEXT_LEAK[0], CONTEXT_LEAK[1].format(what=what), CONTEXT_LEAK[2])  # type: ignore[attr-defined]
        return
    folders, ignore_file, now = sent_folders(u)
    for folder in folders:
        found = secret_inside(scanner.reader, folder, base, ignore_file)  # type: ignore[attr-defined]
        if found and now:
            scanner.add(CONTEXT_LEAK[0], CONTEXT_LEAK[1].format(what=found), CONTEXT_LEAK[2])  # type: ignore[attr-defined]
        elif found:
            state[folder] = found
