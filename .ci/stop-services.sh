#!/usr/bin/env bash
# Stop the sshd and dockerd that .ci/start-sshd.sh / .ci/start-dockerd.sh started (by recorded PID).
set -u
CI_DIR=${HERMES_CI_DIR:-/tmp/hermes-ci}
for pidfile in "$CI_DIR/sshd/sshd.pid" "$CI_DIR/dockerd/dockerd.pid"; do
  [ -s "$pidfile" ] || continue
  pid=$(cat "$pidfile")
  if kill "$pid" 2>/dev/null; then
    for _ in $(seq 1 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.2; done
    echo "stop-services: stopped pid $pid ($pidfile)" >&2
  fi
  rm -f "$pidfile"
done
rm -f "$CI_DIR/sshd.env" "$CI_DIR/dockerd.env"
