#!/usr/bin/env bash
# CI step (from .ci/run, as root): the tests where being root could hide a failure (the sandbox, the terminal's
# local backends, MCP confinement, the file tools) as the normal user hermes-ci, HOME its own home. scripts/test-as-user
# makes the user if missing, copies this checkout to its home and builds its venv with Debian's Python (root's
# may sit under /root, 0700); only the extras these tests need. What needs root (the test sshd's key, dockerd's
# socket, root's Python) skips with the reason. Budget: 25 minutes including the venv (a loaded CI machine) (measured 318 s on a fresh clone and a new user, before the SELF tests joined) (CI is ~33 min without it);
# over budget fails CI like a failing test. Run alone: source the services' env files, then `bash .ci/user-slice.sh`.
set -uo pipefail
cd "$(dirname "$0")/.."
slice=(tests/contract/test_terminal_backends.py tests/integration/test_mcp_confinement.py
  tests/integration/test_file_policy.py tests/integration/test_file_tools_bounded.py
  tests/integration/test_sandbox_chat.py tests/integration/test_sandbox_secrets.py
  tests/integration/test_sandbox_kernel.py tests/integration/test_sandbox_home_allowlist.py
  tests/integration/test_sandbox_channels.py tests/integration/test_hostpath.py
  tests/integration/test_wrapped_pidns.py tests/integration/test_sandbox_replan_procs.py)
if [ "$(id -u)" != 0 ] || ! command -v useradd >/dev/null; then
  echo "warning: normal-user slice skipped: it needs root and useradd to make the user" >&2
  exit 0
fi
started=$SECONDS
HERMES_TEST_AS="${HERMES_CI_USER:-hermes-ci}" HERMES_TEST_EXTRAS=dev,mcp HERMES_TEST_WORKERS=2 \
  timeout -k 30 "${HERMES_CI_USER_BUDGET:-1500}" ./scripts/test -p no:randomly -rfEs "${slice[@]}"
rc=$?
[ "$rc" = 124 ] && echo "normal-user slice: over its budget of ${HERMES_CI_USER_BUDGET:-600} s" >&2
echo "normal-user slice: $((SECONDS - started)) s, exit $rc"
exit "$rc"
