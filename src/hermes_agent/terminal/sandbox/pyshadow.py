"""What the user's Pythons import, for the run-later guard's PYTHONPATH rule (guardpy.shadowed; red-team
round 11 a21): a module a confined command leaves in a PYTHONPATH directory of the user stands in for the
real one at the user's next `python3`, `python -m pytest`, `pytest`, hermes. Judged by hermes's own
site-packages alone, a hermes in a lean venv (pipx-like) let `src/_pytest/`, `requests.py`, `six.py`,
`yaml/` stay. The names counted here are those the USER's interpreters can import:

- the standard library (sys.stdlib_module_names, and the listing of each interpreter's own lib/pythonX.Y
  and lib-dynload: another version's stdlib differs);
- every interpreter on the user's PATH (paths.user_path): `python*` there, and the interpreter named by the
  shebang of the Python tools there (pytest, pip, tox, ipython... a pipx venv's console script leads to its
  venv); each one's venv (pyvenv.cfg beside bin/) and base prefix: lib/python*/site-packages and
  dist-packages, Debian's /usr/local/lib/python3*/dist-packages and /usr/lib/python3/dist-packages; a pyenv
  shims directory means every pyenv version;
- the user's site (~/.local/lib/python*/site-packages);
- the workspace venvs (the guard's scan): what is installed there; an editable install (`pip install -e .`,
  hatch, poetry) puts a `.pth` or a finder there, never the project's own name, so its package and new
  modules in src/ are not counted;
- the import names of widely used distributions (POPULAR): a module standing in for one is a latent shadow
  for the user's next `pip install requests`, whether or not it is installed today.

Listings only: no interpreter is started (hermes never runs what the sandbox could have changed), files are
opened non-blocking and read only when regular. Stdlib only."""

from __future__ import annotations

import glob
import os
import re
import stat as st
import sys
from collections.abc import Iterable

# import names of the most used distributions (PyPI download ranks, test runners and their plugins)
POPULAR = frozenset((
    "requests", "urllib3", "six", "yaml", "_yaml", "certifi", "idna", "charset_normalizer", "chardet", "setuptools",
    "pkg_resources", "pip", "wheel", "packaging", "pyparsing", "_pytest", "pytest", "pluggy", "iniconfig",
    "py", "attr", "attrs", "typing_extensions", "dateutil", "pytz", "tzdata", "click", "jinja2", "markupsafe",
    "rich", "pygments", "httpx", "httpcore", "h11", "anyio", "sniffio", "pydantic", "pydantic_core", "boto3",
    "botocore", "s3transfer", "jmespath", "cryptography", "cffi", "pycparser", "toml", "tomli", "tomli_w",
    "numpy", "pandas", "scipy", "sklearn", "matplotlib", "PIL", "tqdm", "psutil", "lxml", "bs4", "aiohttp",
    "multidict", "yarl", "frozenlist", "aiosignal", "async_timeout", "filelock", "platformdirs",
    "virtualenv", "distlib", "wrapt", "jsonschema", "pyasn1", "rsa", "oauthlib", "google", "grpc",
    "docutils", "coverage", "mock", "tox", "nox", "black", "isort", "flake8", "mypy", "pylint", "sqlalchemy",
    "flask", "django", "werkzeug", "itsdangerous", "fastapi", "starlette", "uvicorn", "gunicorn", "redis",
    "psycopg2", "pymysql", "pymongo", "torch", "tensorflow", "transformers", "openai", "anthropic", "ruamel",
    "dotenv", "jwt", "websocket", "websockets", "nacl", "paramiko", "fabric", "invoke", "decorator",
    "more_itertools", "importlib_metadata", "importlib_resources", "zipp", "exceptiongroup", "xdist",
    "pytest_cov", "pytest_asyncio", "hypothesis", "sortedcontainers", "ipython", "IPython", "traitlets",
    "jupyter_core", "tornado", "zmq", "simplejson", "ujson", "orjson", "msgpack", "protobuf", "grpcio",
    "greenlet", "gevent", "regex", "markdown", "markdown_it", "mdurl", "sphinx", "babel", "docker",
    "kubernetes", "google_auth", "cachetools", "pyasn1_modules", "tenacity", "backoff", "structlog",
    "loguru", "colorama", "termcolor", "tabulate", "prompt_toolkit", "wcwidth", "pexpect", "ptyprocess",
    "shellingham", "typer", "pathspec", "editables", "hatchling", "poetry", "pdm", "flit_core", "trove_classifiers",
))
_TOOLS_RE = None  # lazily: names on PATH whose shebang names an interpreter worth listing
_CACHE: dict[tuple, frozenset[str]] = {}


def importable(venvs: Iterable[str] = (), extra_sites: Iterable[str] = ()) -> frozenset[str]:
    """Top-level names the user's Pythons import (see the module doc), with `extra_sites` (hermes's own
    site-packages) and the workspace `venvs`. Cached per process by the PATH, HOME and the venvs' state."""
    from hermes_agent import paths

    venvs = tuple(sorted(venvs))
    key = (paths.user_path(), os.path.expanduser("~"), tuple(extra_sites),
           tuple((v, _mtime(sp)) for v in venvs for sp in _sites_of(v)))
    got = _CACHE.get(key)
    if got is None:
        names = set(sys.stdlib_module_names) | POPULAR
        sites: set[str] = set(extra_sites)
        for prefix in _prefixes(paths.user_path()):
            sites.update(_sites_of(prefix))
            names.update(_stdlib_of(prefix))
        sites.update(glob.glob(os.path.join(os.path.expanduser("~"), ".local/lib/python3*/site-packages")))
        for site in sites:
            names.update(_listing(site))
        for v in venvs:
            for site in _sites_of(v):
                names.update(_listing(site))
        got = _CACHE[key] = frozenset(n for n in names if n.isidentifier())
    return got


def _mtime(path: str) -> int:
    try:
        return os.stat(path).st_mtime_ns
    except OSError:
        return 0


def _sites_of(prefix: str) -> list[str]:
    out = glob.glob(os.path.join(prefix, "lib", "python3*", "site-packages"))
    out += glob.glob(os.path.join(prefix, "lib", "python3*", "dist-packages"))
    out += glob.glob(os.path.join(prefix, "local", "lib", "python3*", "dist-packages"))
    out += glob.glob(os.path.join(prefix, "lib", "python3", "dist-packages"))
    return out


def _stdlib_of(prefix: str) -> set[str]:
    names: set[str] = set()
    for lib in glob.glob(os.path.join(prefix, "lib", "python3.*")):
        names.update(_listing(lib))
        names.update(_listing(os.path.join(lib, "lib-dynload")))
    return names - {"site-packages", "dist-packages", "lib-dynload"}


def _listing(d: str) -> set[str]:
    """Top-level module names in a directory of sys.path (`x.py`, `x/`, `x.cpython-311-...so`)."""
    try:
        entries = os.listdir(d)
    except OSError:
        return set()
    return {n.split(".", 1)[0] for n in entries
            if not n.endswith((".dist-info", ".egg-info", ".pth", ".egg-link")) and not n.startswith("__")}


def _read(path: str, limit: int) -> bytes | None:
    """A regular file's first `limit` bytes, opened without blocking (a FIFO never hangs the guard)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError:
        return None
    try:
        if not st.S_ISREG(os.fstat(fd).st_mode):
            return None
        return os.read(fd, limit)
    except OSError:
        return None
    finally:
        os.close(fd)


def _prefixes(user_path: str) -> set[str]:
    """The installation prefixes (and venvs) of the interpreters the user's PATH starts."""
    global _TOOLS_RE
    if _TOOLS_RE is None:
        _TOOLS_RE = re.compile(r"(python[0-9.]*|pytest|py\.test|pip[0-9.]*|ipython[0-9]*|tox|nox|hatch|pdm|"
                               r"poetry|jupyter[-a-z]*|flask|django-admin|celery|gunicorn|uvicorn|pre-commit)")
    out: set[str] = set()
    for d in filter(None, user_path.split(os.pathsep)):
        if os.path.basename(d) == "shims" and os.path.isdir(os.path.join(os.path.dirname(d), "versions")):
            out.update(glob.glob(os.path.join(os.path.dirname(d), "versions", "*")))  # pyenv: every version
            continue
        try:
            names = [n for n in os.listdir(d) if _TOOLS_RE.fullmatch(n)]
        except OSError:
            continue
        for name in names:
            path = os.path.join(d, name)
            interps = [path] if name.startswith("python") else _shebang(path)
            for interp in interps:
                out.update(_prefix_pair(interp))
    return out


def _shebang(path: str) -> list[str]:
    """The interpreter a script's `#!` line names (`#!/usr/bin/env python3` is looked up by the caller's
    PATH listing already)."""
    head = _read(path, 256) or b""
    if not head.startswith(b"#!"):
        return []
    words = head[2:].split(b"\n", 1)[0].decode("utf-8", "replace").split()
    return [words[0]] if words and words[0].startswith("/") and "python" in os.path.basename(words[0]) else []


def _prefix_pair(interp: str) -> set[str]:
    """The prefix of `interp` as named (a venv's bin/python: the venv) and as it resolves (the base)."""
    out = set()
    for p in (interp, os.path.realpath(interp)):
        prefix = os.path.dirname(os.path.dirname(p))
        if prefix and prefix != "/":
            out.add(prefix)
    return out
