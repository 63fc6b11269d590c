#!/usr/bin/env bash
# Install the `openai` npm package for the API server test (tests/integration/test_api_server.py).
# Usage: install-openai-npm.sh [ENVFILE] [VENV]. Idempotent; never fails CI (without it that test skips).
# Writes $HERMES_CI_DIR/openai-npm.env with `export HERMES_TEST_OPENAI_NPM=<node_modules dir>`.
set -u
CI_DIR=${HERMES_CI_DIR:-$(dirname "${1:-/tmp/hermes-ci/services.env}")}
NPM_DIR=$CI_DIR/npm-openai
ENV_FILE=$CI_DIR/openai-npm.env
mkdir -p "$NPM_DIR"
: >"$ENV_FILE"
if [ ! -f "$NPM_DIR/node_modules/openai/package.json" ]; then
  if ! command -v npm >/dev/null 2>&1; then
    echo "install-openai-npm: WARNING: npm not found; the npm client test will skip" >&2
    exit 0
  fi
  [ -f "$NPM_DIR/package.json" ] || echo '{"private": true}' >"$NPM_DIR/package.json"
  if ! (cd "$NPM_DIR" && timeout 300 npm install --no-audit --no-fund openai) >"$NPM_DIR/npm.log" 2>&1; then
    echo "install-openai-npm: WARNING: npm install openai failed (see $NPM_DIR/npm.log); its test will skip" >&2
    exit 0
  fi
fi
echo "export HERMES_TEST_OPENAI_NPM=$NPM_DIR/node_modules" >>"$ENV_FILE"
echo "install-openai-npm: HERMES_TEST_OPENAI_NPM=$NPM_DIR/node_modules"
exit 0
