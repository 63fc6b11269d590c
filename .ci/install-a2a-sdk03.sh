#!/usr/bin/env bash
# A venv with a2a-sdk 0.3.x, whose client drives the A2A server's v0.3 dialect (tests/integration/test_a2a_tasks.py).
# Usage: install-a2a-sdk03.sh [ENVFILE] [VENV]. Idempotent; never fails CI (without it that test skips).
# Writes $HERMES_CI_DIR/a2a-sdk03.env with `export HERMES_TEST_A2A_SDK03_PYTHON=<its python>`.
set -u
CI_DIR=${HERMES_CI_DIR:-$(dirname "${1:-/tmp/hermes-ci/services.env}")}
SDK_VENV=$CI_DIR/a2a-sdk03
ENV_FILE=$CI_DIR/a2a-sdk03.env
mkdir -p "$CI_DIR"
: >"$ENV_FILE"
if ! "$SDK_VENV/bin/python" -c "import a2a.client, httpx" >/dev/null 2>&1; then
  rm -rf "$SDK_VENV"
  if ! { python3 -m venv "$SDK_VENV" && timeout 600 "$SDK_VENV/bin/pip" install -q "a2a-sdk>=0.3,<0.4" httpx; } \
      >"$CI_DIR/pip-a2a-sdk03.log" 2>&1; then
    echo "install-a2a-sdk03: WARNING: pip install a2a-sdk<0.4 failed (see $CI_DIR/pip-a2a-sdk03.log); its test will skip" >&2
    exit 0
  fi
fi
echo "export HERMES_TEST_A2A_SDK03_PYTHON=$SDK_VENV/bin/python" >>"$ENV_FILE"
echo "install-a2a-sdk03: HERMES_TEST_A2A_SDK03_PYTHON=$SDK_VENV/bin/python ($("$SDK_VENV/bin/pip" show a2a-sdk 2>/dev/null | grep ^Version))"
exit 0
