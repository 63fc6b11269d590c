#!/usr/bin/env bash
# Install the released Hermes (hermes-agent==0.19.0 from PyPI) into its own venv, $HERMES_CI_DIR/hermes-ref,
# for the tests that check both programs share one ~/.hermes (tests/integration/test_hermes_interop.py).
# Usage: install-hermes-ref.sh [ENVFILE] [VENV]. Idempotent; never fails CI (a missing Hermes makes those tests skip).
# Writes $HERMES_CI_DIR/hermes-ref.env with `export HERMES_REF_BIN=...` for .ci/run to source.
set -u
CI_DIR=${HERMES_CI_DIR:-$(dirname "${1:-/tmp/hermes-ci/services.env}")}
REF=$CI_DIR/hermes-ref
ENV_FILE=$CI_DIR/hermes-ref.env
mkdir -p "$CI_DIR"
: >"$ENV_FILE"

if [ -x "$REF/bin/hermes" ] && "$REF/bin/pip" show hermes-agent 2>/dev/null | grep -q "^Version: 0.19.0$"; then
  echo "install-hermes-ref: hermes-agent 0.19.0 already in $REF"
else
  rm -rf "$REF"
  if ! { python3 -m venv "$REF" && timeout 600 "$REF/bin/pip" install -q "hermes-agent==0.19.0"; } \
      >"$CI_DIR/pip-hermes-ref.log" 2>&1; then
    echo "install-hermes-ref: WARNING: pip install hermes-agent==0.19.0 failed (see $CI_DIR/pip-hermes-ref.log);" \
         "Hermes interop tests will skip" >&2
  fi
fi

if [ -x "$REF/bin/hermes" ]; then
  echo "export HERMES_REF_BIN=$REF/bin/hermes" >>"$ENV_FILE"
  echo "install-hermes-ref: HERMES_REF_BIN=$REF/bin/hermes"
fi
exit 0
