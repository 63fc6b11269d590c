#!/usr/bin/env bash
# Install Debian's chromium for the browser tools and the dashboard's browser tests (never `playwright install`:
# no browser download at run time). Usage: install-chromium.sh [ENVFILE] [VENV]. Idempotent; never fails CI.
# Writes $HERMES_CI_DIR/chromium.env with `export HERMES_CHROMIUM=<path>`.
set -u
CI_DIR=${HERMES_CI_DIR:-$(dirname "${1:-/tmp/hermes-ci/services.env}")}
ENV_FILE=$CI_DIR/chromium.env
mkdir -p "$CI_DIR"
: >"$ENV_FILE"
if ! command -v chromium >/dev/null 2>&1 && command -v apt-get >/dev/null 2>&1; then
  { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium fonts-dejavu-core; } >/dev/null 2>&1 \
    || echo "install-chromium: WARNING: apt-get install chromium failed; browser tests will skip" >&2
fi
if command -v chromium >/dev/null 2>&1; then
  echo "export HERMES_CHROMIUM=$(command -v chromium)" >"$ENV_FILE"
fi
exit 0
