#!/usr/bin/env bash
# Start a throwaway sshd on 127.0.0.1 (default port 2222) for the ssh backend tests.
# Idempotent. Writes $HERMES_CI_DIR/sshd.env (HERMES_TEST_SSH_*) for `source`; never fails CI.
set -u
CI_DIR=${HERMES_CI_DIR:-/tmp/hermes-ci}
DIR=$CI_DIR/sshd
PORT=${HERMES_CI_SSH_PORT:-2222}
ENV_FILE=$CI_DIR/sshd.env
mkdir -p "$DIR"

warn() { echo "start-sshd: WARNING: $* (ssh backend tests will be skipped)" >&2; rm -f "$ENV_FILE"; exit 0; }

find_sshd() { command -v sshd 2>/dev/null || { [ -x /usr/sbin/sshd ] && echo /usr/sbin/sshd; }; }
if [ -z "$(find_sshd)" ]; then
  echo "start-sshd: installing openssh-server" >&2
  { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq openssh-server; } >"$DIR/apt.log" 2>&1 \
    || warn "apt-get install openssh-server failed (see $DIR/apt.log)"
fi
SSHD=$(find_sshd) || true
[ -n "$SSHD" ] || warn "no sshd binary"

[ -f "$DIR/host_key" ] || ssh-keygen -q -t ed25519 -N '' -f "$DIR/host_key" || warn "ssh-keygen failed"
[ -f "$DIR/client_key" ] || ssh-keygen -q -t ed25519 -N '' -f "$DIR/client_key" || warn "ssh-keygen failed"
cp "$DIR/client_key.pub" "$DIR/authorized_keys"
# A throwaway sshd gets a new host key on every clean checkout: forget what an earlier run left in the user's
# known_hosts for this address (the ssh backend checks that file after its own and would refuse the new key).
for kh in "$HOME/.ssh/known_hosts" "$(getent passwd "$(id -un)" | cut -d: -f6)/.ssh/known_hosts"; do
  [ -f "$kh" ] && ssh-keygen -q -R "[127.0.0.1]:$PORT" -f "$kh" >/dev/null 2>&1
done
chmod 600 "$DIR/host_key" "$DIR/client_key" "$DIR/authorized_keys"

cat >"$DIR/sshd_config" <<CFG
Port $PORT
ListenAddress 127.0.0.1
HostKey $DIR/host_key
AuthorizedKeysFile $DIR/authorized_keys
PermitRootLogin prohibit-password
PasswordAuthentication no
KbdInteractiveAuthentication no
UsePAM no
StrictModes no
PidFile $DIR/sshd.pid
MaxStartups 100:30:200
MaxSessions 100
CFG

probe() {
  ssh -p "$PORT" -i "$DIR/client_key" -o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null \
      -o BatchMode=yes -o ConnectTimeout=3 -o LogLevel=ERROR "$(id -un)@127.0.0.1" true >/dev/null 2>&1
}

if ! probe; then
  mkdir -p /run/sshd 2>/dev/null
  "$SSHD" -t -f "$DIR/sshd_config" || warn "sshd config check failed"
  nohup "$SSHD" -D -e -f "$DIR/sshd_config" >"$DIR/sshd.log" 2>&1 </dev/null &
  echo $! >"$DIR/sshd.child.pid"
  for _ in $(seq 1 50); do probe && break; sleep 0.1; done
  probe || warn "sshd did not accept a login (see $DIR/sshd.log)"
fi

cat >"$ENV_FILE" <<ENV
export HERMES_TEST_SSH_HOST=127.0.0.1
export HERMES_TEST_SSH_PORT=$PORT
export HERMES_TEST_SSH_USER=$(id -un)
export HERMES_TEST_SSH_KEY=$DIR/client_key
ENV
echo "start-sshd: sshd on 127.0.0.1:$PORT (pid $(cat "$DIR/sshd.pid" 2>/dev/null || cat "$DIR/sshd.child.pid")); env in $ENV_FILE" >&2
