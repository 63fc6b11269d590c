#!/usr/bin/env bash
# Install the real MCP servers the integration tests talk to: mcp-server-time (PyPI) into the venv and
# @modelcontextprotocol/server-everything and server-filesystem (npm) into $HERMES_CI_DIR/npm-mcp.
# Usage: install-mcp-servers.sh [ENVFILE] [VENV]. Idempotent; never fails CI (missing servers make tests skip).
# Writes $HERMES_CI_DIR/mcp.env with `export HERMES_TEST_MCP_EVERYTHING=...` for .ci/run to source.
set -u
VENV=${2:-${VENV:-.venv}}
CI_DIR=${HERMES_CI_DIR:-$(dirname "${1:-/tmp/hermes-ci/services.env}")}
ENV_FILE=$CI_DIR/mcp.env
NPM_DIR=$CI_DIR/npm-mcp
BIN=$NPM_DIR/node_modules/.bin/mcp-server-everything
FS_BIN=$NPM_DIR/node_modules/.bin/mcp-server-filesystem
mkdir -p "$CI_DIR"
: >"$ENV_FILE"

warn() { echo "install-mcp-servers: WARNING: $*" >&2; }

if "$VENV/bin/python" -c "import mcp, mcp_server_time" 2>/dev/null; then
  echo "install-mcp-servers: mcp + mcp-server-time already in $VENV"
elif ! "$VENV/bin/pip" install -q "mcp>=2.3,<3" mcp-server-time >"$CI_DIR/pip-mcp.log" 2>&1; then
  warn "pip install mcp-server-time failed (see $CI_DIR/pip-mcp.log); MCP tests will skip"
fi

if [ -x "$BIN" ] && [ -x "$FS_BIN" ]; then
  echo "install-mcp-servers: server-everything and server-filesystem already in $NPM_DIR"
elif ! command -v npm >/dev/null 2>&1; then
  warn "npm not found; server-everything tests will skip"
else
  mkdir -p "$NPM_DIR"
  [ -f "$NPM_DIR/package.json" ] || echo '{"private": true}' >"$NPM_DIR/package.json"
  if ! (cd "$NPM_DIR" && timeout 300 npm install --no-audit --no-fund @modelcontextprotocol/server-everything \
        @modelcontextprotocol/server-filesystem) \
      >"$NPM_DIR/npm.log" 2>&1; then
    warn "npm install @modelcontextprotocol/server-everything failed (see $NPM_DIR/npm.log); its tests will skip"
  fi
fi

if [ -x "$BIN" ]; then
  echo "export HERMES_TEST_MCP_EVERYTHING=$BIN" >>"$ENV_FILE"
  echo "install-mcp-servers: HERMES_TEST_MCP_EVERYTHING=$BIN"
fi
if [ -x "$FS_BIN" ]; then
  echo "export HERMES_TEST_MCP_FILESYSTEM=$FS_BIN" >>"$ENV_FILE"
fi
exit 0
