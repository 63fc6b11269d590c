#!/usr/bin/env bash
# Start a private dockerd (own socket/data-root/exec-root, no bridge, no iptables) and build the
# busybox test image hermes-sandbox:test from scratch. Idempotent. Writes $HERMES_CI_DIR/dockerd.env
# (DOCKER_HOST, HERMES_TEST_DOCKER_IMAGE) for `source`; never fails CI — docker tests then skip.
set -u
CI_DIR=${HERMES_CI_DIR:-/tmp/hermes-ci}
DIR=$CI_DIR/dockerd
ENV_FILE=$CI_DIR/dockerd.env
IMAGE=${HERMES_CI_DOCKER_IMAGE:-hermes-sandbox:test}
# Socket and exec-root live under a short path: unix socket paths (containerd's too) max out at 107 bytes.
RUN_DIR=${HERMES_CI_DOCKER_RUN:-/tmp/hermes-dockerd-$(id -u)}
SOCK=$RUN_DIR/docker.sock
mkdir -p "$DIR" "$RUN_DIR"

warn() { echo "start-dockerd: WARNING: $* (docker backend tests will be skipped)" >&2; rm -f "$ENV_FILE"; exit 0; }

static_busybox() {  # a busybox that runs in an empty image: present and not dynamically linked
  local bb; bb=$(command -v busybox 2>/dev/null || echo /bin/busybox)
  [ -x "$bb" ] && ! ldd "$bb" >/dev/null 2>&1 && echo "$bb"
}
need=""
command -v dockerd >/dev/null 2>&1 || need="docker.io"
[ -n "$(static_busybox)" ] || need="$need busybox-static"
if [ -n "$need" ]; then
  echo "start-dockerd: installing $need" >&2
  # shellcheck disable=SC2086
  { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $need; } \
    >"$DIR/apt.log" 2>&1 || warn "apt-get install $need failed (see $DIR/apt.log)"
fi
BUSYBOX=$(static_busybox)
command -v dockerd >/dev/null 2>&1 || warn "no dockerd binary"
export DOCKER_HOST=unix://$SOCK

if ! docker info >/dev/null 2>&1; then
  rm -f "$SOCK"
  nohup dockerd --host "$DOCKER_HOST" --data-root "$DIR/root" --exec-root "$RUN_DIR/exec" \
    --pidfile "$DIR/dockerd.pid" --bridge=none --iptables=false --ip-masq=false \
    >"$DIR/dockerd.log" 2>&1 </dev/null &
  child=$!
  for _ in $(seq 1 60); do docker info >/dev/null 2>&1 && break; kill -0 "$child" 2>/dev/null || break; sleep 0.5; done
  if ! docker info >/dev/null 2>&1; then
    kill "$child" 2>/dev/null; sleep 0.5
    # A dockerd that died early can leave its data-root bind-mounted.
    kill -0 "$child" 2>/dev/null || umount "$DIR/root" 2>/dev/null
    warn "dockerd did not come up (see $DIR/dockerd.log)"
  fi
fi

if ! docker image inspect "$IMAGE" >/dev/null 2>&1; then
  # Static busybox only: the image has sh, not bash (the docker backend detects this and uses sh).
  ctx=$DIR/build
  rm -rf "$ctx" && mkdir -p "$ctx"
  [ -n "$BUSYBOX" ] || warn "no static busybox (package busybox-static)"
  cp "$(readlink -f "$BUSYBOX")" "$ctx/busybox" || warn "cannot copy $BUSYBOX"
  cat >"$ctx/Dockerfile" <<'DF'
FROM scratch
COPY busybox /bin/busybox
RUN ["/bin/busybox", "sh", "-c", "/bin/busybox --install -s /bin && mkdir -p /tmp /root /workspace && chmod 1777 /tmp"]
ENV PATH=/usr/local/bin:/usr/bin:/bin HOME=/root
WORKDIR /root
DF
  DOCKER_BUILDKIT=0 docker build -q --network none -t "$IMAGE" "$ctx" >"$DIR/build.log" 2>&1 \
    || warn "image build failed (see $DIR/build.log)"
fi

cat >"$ENV_FILE" <<ENV
export DOCKER_HOST=$DOCKER_HOST
export HERMES_TEST_DOCKER_IMAGE=$IMAGE
ENV
echo "start-dockerd: dockerd at $DOCKER_HOST (pid $(cat "$DIR/dockerd.pid" 2>/dev/null)); image $IMAGE; env in $ENV_FILE" >&2
