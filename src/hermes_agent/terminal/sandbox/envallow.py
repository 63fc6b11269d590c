"""The environment of a confined command, by allowlist: a fixed set of harmless variables (locale,
terminal, the user's identity, toolchain locations) plus `terminal.env_passthrough`. Everything else is
dropped whatever its name (GITHUB_PAT, a cloud key named like nothing), and so are the variables that
lead out of the sandbox (TMUX, STY, SSH_AUTH_SOCK, GPG_AGENT_INFO, DBUS_SESSION_BUS_ADDRESS, DISPLAY,
WAYLAND_DISPLAY, DOCKER_HOST, XDG_RUNTIME_DIR): they are simply not on the list."""

from __future__ import annotations

from collections.abc import Iterable, Mapping

ALLOWED: tuple[str, ...] = (
    # who and where
    "PATH", "HOME", "USER", "LOGNAME", "SHELL", "PWD", "HOSTNAME", "TZ", "HERMES_HOME",
    # locale and terminal
    "LANG", "LANGUAGE", "LC_ALL", "LC_COLLATE", "LC_CTYPE", "LC_MESSAGES", "LC_MONETARY", "LC_NUMERIC", "LC_TIME",
    "LC_ADDRESS", "LC_IDENTIFICATION", "LC_MEASUREMENT", "LC_NAME", "LC_PAPER", "LC_TELEPHONE",  # glibc's own
    "TERM", "COLORTERM", "COLUMNS", "LINES", "NO_COLOR", "FORCE_COLOR", "CLICOLOR",
    "EDITOR", "VISUAL", "PAGER", "LESS", "MANPATH", "INFOPATH",
    # XDG base directories (not XDG_RUNTIME_DIR: the user's sockets live there)
    "XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_CACHE_HOME", "XDG_STATE_HOME", "XDG_CONFIG_DIRS", "XDG_DATA_DIRS",
    # toolchain locations
    "VIRTUAL_ENV", "CONDA_PREFIX", "CONDA_DEFAULT_ENV", "CONDA_EXE", "PYENV_ROOT", "PYENV_VERSION", "PYENV_REHASH_TIMEOUT",
    "PYTHONIOENCODING", "PYTHONUTF8", "PIPX_HOME", "PIPX_BIN_DIR", "UV_CACHE_DIR", "POETRY_HOME",
    "GOPATH", "GOROOT", "GOBIN", "GOCACHE", "GOMODCACHE", "GOFLAGS", "CARGO_HOME", "RUSTUP_HOME",
    "NVM_DIR", "NVM_BIN", "NVM_INC", "NODE_PATH", "PNPM_HOME", "BUN_INSTALL", "DENO_INSTALL", "VOLTA_HOME",
    "JAVA_HOME", "SDKMAN_DIR", "GRADLE_USER_HOME", "MAVEN_HOME", "M2_HOME", "ANDROID_HOME", "ANDROID_SDK_ROOT",
    "GEM_HOME", "GEM_PATH", "RBENV_ROOT", "DOTNET_ROOT", "CC", "CXX", "PKG_CONFIG_PATH", "LD_LIBRARY_PATH",
    # certificates (paths)
    "SSL_CERT_FILE", "SSL_CERT_DIR", "REQUESTS_CA_BUNDLE", "CURL_CA_BUNDLE", "NODE_EXTRA_CA_CERTS",
)


def is_allowed(name: str) -> bool:
    """Exact names only: a prefix such as LC_ would pass any LC_TOKEN (a15)."""
    return name in _ALLOWED_SET


_ALLOWED_SET = frozenset(ALLOWED)


def allowed_env(environ: Mapping[str, str], passthrough: Iterable[str] = ()) -> dict[str, str]:
    """The variables of `environ` a confined command gets: the allowlist plus `passthrough`."""
    extra = set(passthrough)
    return {k: v for k, v in environ.items() if k in extra or is_allowed(k)}


def describe(environ: Mapping[str, str], passthrough: Iterable[str] = ()) -> tuple[list[str], list[str]]:
    """(names passed, names dropped) for `hermes doctor`."""
    kept = allowed_env(environ, passthrough)
    return sorted(kept), sorted(k for k in environ if k not in kept)
