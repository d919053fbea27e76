#!/usr/bin/env bash
# The container test (npm run test:container): builds the image from the Dockerfile with a Docker
# daemon of its own, runs it hardened against this machine's PostgreSQL and Redis and signs in
# through it (test/container/image-test.js), then runs a host-network copy of docker-compose.yml
# (test/container/compose-test.js).
#
# The daemon: Debian's docker.io, installed when missing, with its own data root, socket and
# exec root, no bridge network and no iptables rules; every build and container uses the host's
# network and listens on 127.0.0.1 only, since this machine may send traffic to loopback only.
# No container registry is reachable, so the base images are stand-ins built here
# (scripts/container/standin-*.Dockerfile). The daemon's data root is kept under $CACHE between
# runs (stand-ins, build cache); without it the first run builds everything. The daemon is stopped
# by its PID on exit, whatever happens.
#
# A machine where no daemon can start (no root, no sudo, no cgroups) FAILS this test: it never
# passes without having run the image.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
# shellcheck source=scripts/pinned-node.sh
. scripts/pinned-node.sh
CACHE=${SVC_AUTH_CONTAINER_CACHE:-/var/cache/svc-auth-container-test}
RUNDIR=/run/svc-auth-container-test
started=$(date +%s)

log() { echo "container-test: $*" >&2; }
fail() {
  echo "container-test: FAILED: $*" >&2
  exit 1
}
# Running, not a zombie waiting for this shell to reap it.
alive() { [ -r "/proc/$1/stat" ] && ! grep -q '^[0-9]* (.*) Z' "/proc/$1/stat"; }
as_root() { if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo -n "$@"; fi; }

if [ "$(id -u)" -ne 0 ] && ! sudo -n true 2>/dev/null; then
  fail "starting a Docker daemon needs root (or password-less sudo); this machine gives neither, so the image was NOT tested"
fi

# --- Packages: the daemon, debootstrap for the stand-in base, and Compose (Debian's is v1.29).
missing=()
[ -x /usr/sbin/dockerd ] && [ -x /usr/bin/docker ] || missing+=(docker.io)
command -v debootstrap >/dev/null 2>&1 || missing+=(debootstrap)
command -v docker-compose >/dev/null 2>&1 || missing+=(docker-compose)
if [ ${#missing[@]} -gt 0 ]; then
  log "installing ${missing[*]} from Debian"
  # The package's init script would start a daemon with the default bridge and iptables rules:
  # policy-rc.d forbids starting services during the install (kept if the machine has one).
  own_policy=0
  if [ ! -e /usr/sbin/policy-rc.d ]; then
    printf '#!/bin/sh\nexit 101\n' | as_root tee /usr/sbin/policy-rc.d >/dev/null
    as_root chmod +x /usr/sbin/policy-rc.d
    own_policy=1
  fi
  as_root apt-get update -qq
  as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null ||
    fail "could not install ${missing[*]}"
  [ "$own_policy" -eq 0 ] || as_root rm -f /usr/sbin/policy-rc.d
fi
# Debian's client, the daemon's own version: a newer client without buildx cannot use BuildKit.
DOCKER=/usr/bin/docker
export DOCKER

# --- One run at a time: the cached data root belongs to one daemon.
as_root mkdir -p "$CACHE" "$RUNDIR"
exec 9>"$CACHE/lock"
flock -w 900 9 || fail "another container test holds $CACHE/lock"

# A daemon that a killed run left behind (its pidfile, its data root) is stopped first.
if [ -s "$RUNDIR/docker.pid" ]; then
  old=$(cat "$RUNDIR/docker.pid")
  if [ -r "/proc/$old/cmdline" ] && tr '\0' ' ' <"/proc/$old/cmdline" | grep -q -- "--data-root $CACHE/docker"; then
    log "stopping the daemon (pid $old) that an earlier run left"
    as_root kill "$old" || true
    for _ in $(seq 1 100); do alive "$old" || break; sleep 0.1; done
  fi
fi

export DOCKER_HOST=unix://$RUNDIR/docker.sock
export DOCKER_BUILDKIT=1
# The daemon's own client configuration: no credential helpers or proxies of the machine's user.
DOCKER_CONFIG=$(mktemp -d)
export DOCKER_CONFIG
dockerd_pid=""

start_daemon() {
  as_root rm -f "$RUNDIR/docker.pid"
  as_root /usr/sbin/dockerd --bridge=none --iptables=false --ip6tables=false --ip-masq=false \
    --data-root "$CACHE/docker" --exec-root "$RUNDIR/exec" -H "$DOCKER_HOST" \
    --pidfile "$RUNDIR/docker.pid" >>"$RUNDIR/dockerd.log" 2>&1 &
  local launcher=$!
  for _ in $(seq 1 300); do
    if "$DOCKER" version >/dev/null 2>&1 && [ -s "$RUNDIR/docker.pid" ]; then
      # The daemon's own PID (with sudo, $! is sudo's).
      dockerd_pid=$(cat "$RUNDIR/docker.pid")
      return 0
    fi
    kill -0 "$launcher" 2>/dev/null || break
    sleep 0.1
  done
  tail -20 "$RUNDIR/dockerd.log" >&2
  fail "the Docker daemon did not start (log above: $RUNDIR/dockerd.log), so the image was NOT tested"
}

stop_daemon() {
  [ -n "$dockerd_pid" ] || return 0
  # Containers first: a daemon stopped with running containers leaves their shims behind.
  local ids
  ids=$("$DOCKER" ps -aq 2>/dev/null || true)
  [ -z "$ids" ] || "$DOCKER" rm -f $ids >/dev/null 2>&1 || true
  as_root kill "$dockerd_pid" 2>/dev/null || true
  for _ in $(seq 1 150); do alive "$dockerd_pid" || break; sleep 0.1; done
  if alive "$dockerd_pid"; then as_root kill -9 "$dockerd_pid" 2>/dev/null || true; fi
  wait 2>/dev/null || true
  dockerd_pid=""
  # The daemon bind-mounts its network namespace here and leaves the mount behind.
  as_root umount "$RUNDIR/exec/netns/default" 2>/dev/null || true
}

cleanup() {
  local rc=$?
  stop_daemon
  rm -rf "$DOCKER_CONFIG"
  if [ "$rc" -eq 0 ]; then
    log "passed in $(($(date +%s) - started)) s; the daemon is stopped"
  else
    log "FAILED (exit $rc) after $(($(date +%s) - started)) s; the daemon is stopped (log: $RUNDIR/dockerd.log)"
  fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

: >"$RUNDIR/dockerd.log"
start_daemon
log "daemon pid $dockerd_pid: $("$DOCKER" version --format '{{.Server.Version}}'), data root $CACHE/docker, no bridge, no iptables"
# Whatever a killed run left in the cached data root.
leftover=$("$DOCKER" ps -aq)
[ -z "$leftover" ] || "$DOCKER" rm -f $leftover >/dev/null
"$DOCKER" volume prune -f >/dev/null

cat >&2 <<'EOF'
container-test: ********************************************************************************
container-test: * STAND-IN BASE IMAGES. No container registry is reachable from this machine:    *
container-test: * node:24-bookworm-slim, postgres, redis and mailpit are stand-ins built here    *
container-test: * from Debian bookworm packages, the lockfile's Node.js 24 binary and npm, tagged *
container-test: * with the digests the Dockerfile and docker-compose.yml pin. This tests the      *
container-test: * Dockerfile, the image and the compose file, NOT the official base images.     *
container-test: ********************************************************************************
EOF
# shellcheck source=scripts/container/standins.sh
. scripts/container/standins.sh
ensure_standins

log "building svc-auth:local from the Dockerfile"
build_started=$(date +%s)
# The CA bundle that lets this machine's npm through its TLS-intercepting proxy, as the build
# secret npm_ca (docs/operations.md, "Building behind a proxy").
ca=${NODE_EXTRA_CA_CERTS:-/etc/ssl/certs/ca-certificates.crt}
secret=()
[ -s "$ca" ] && secret=(--secret "id=npm_ca,src=$ca")
"$DOCKER" build --network host --progress plain "${secret[@]}" -t svc-auth:local "$ROOT" >"$RUNDIR/build.log" 2>&1 || {
  tail -40 "$RUNDIR/build.log" >&2
  fail "docker build failed (log: $RUNDIR/build.log)"
}
log "built in $(($(date +%s) - build_started)) s"

node test/container/image-test.js
node test/container/compose-test.js
# Only the latest image and its build cache are worth keeping between runs.
"$DOCKER" image prune -f >/dev/null
"$DOCKER" builder prune -f --filter until=72h >/dev/null 2>&1 || true
