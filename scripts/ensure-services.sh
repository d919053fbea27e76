#!/usr/bin/env bash
# Makes sure PostgreSQL (127.0.0.1:5432, user postgres, trust auth) and Redis (127.0.0.1:6379)
# answer, starting them, or installing them from Debian packages, when they do not.
# With --with-chromium it also makes sure /usr/bin/chromium exists (browser tests).
# Usage: bash scripts/ensure-services.sh [--with-chromium]
set -euo pipefail

with_chromium=0
for arg in "$@"; do
  case "$arg" in
    --with-chromium) with_chromium=1 ;;
    *) echo "ensure-services: unknown argument $arg" >&2; exit 2 ;;
  esac
done

log() { echo "ensure-services: $*" >&2; }
as_root() { if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi; }

apt_updated=0
apt_install() {
  if [ "$apt_updated" -eq 0 ]; then as_root apt-get update -qq; apt_updated=1; fi
  as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$@" >/dev/null
}

wait_for() { # name, command...: up to 30 s
  local name=$1; shift
  for _ in $(seq 1 60); do
    if "$@" >/dev/null 2>&1; then echo "$name: reachable" >&2; return 0; fi
    sleep 0.5
  done
  echo "$name: not reachable after 30 s" >&2; return 1
}

pg_up() { command -v pg_isready >/dev/null 2>&1 && pg_isready -q -h 127.0.0.1 -p 5432; }
redis_up() { [ "$(redis-cli -h 127.0.0.1 -p 6379 ping 2>/dev/null)" = "PONG" ]; }

# --- PostgreSQL
if ! pg_up; then
  fresh=0
  if ! compgen -G '/usr/lib/postgresql/*/bin/postgres' >/dev/null || ! command -v pg_ctlcluster >/dev/null 2>&1; then
    log "installing postgresql"; apt_install postgresql; fresh=1
  fi
  version=$(find /etc/postgresql -mindepth 2 -maxdepth 2 -name main -printf '%h\n' 2>/dev/null | xargs -r -n1 basename | sort -V | tail -1)
  if [ -z "$version" ]; then log "no PostgreSQL cluster 'main' under /etc/postgresql"; exit 1; fi
  if [ "$fresh" -eq 1 ]; then
    # Only a cluster this script just installed is changed: the postgres user is trusted on
    # loopback, ahead of the packaged rules (the first matching line of pg_hba.conf wins).
    hba=/etc/postgresql/$version/main/pg_hba.conf
    rules=$(printf '%s\n' \
      '# Added by svc-auth scripts/ensure-services.sh for local development:' \
      'host all postgres 127.0.0.1/32 trust' \
      'host all postgres ::1/128 trust')
    packaged=$(as_root cat "$hba") # read fully before tee truncates the file
    printf '%s\n%s\n' "$rules" "$packaged" | as_root tee "$hba" >/dev/null
  fi
  # The package may have started the cluster already; a reload then picks up pg_hba.conf.
  if as_root pg_ctlcluster "$version" main status >/dev/null 2>&1; then
    as_root pg_ctlcluster "$version" main reload || true
  else
    log "starting postgresql $version"
    as_root pg_ctlcluster --skip-systemctl-redirect "$version" main start || true
  fi
fi
wait_for postgres pg_up

# --- Redis
if ! command -v redis-server >/dev/null 2>&1 || ! command -v redis-cli >/dev/null 2>&1; then
  log "installing redis"; apt_install redis-server
fi
if ! redis_up; then
  log "starting redis"
  redis-server --daemonize yes --bind 127.0.0.1 -::1 --port 6379 --save "" --appendonly no >/dev/null
fi
wait_for redis redis_up

# --- Chromium (browser tests only)
if [ "$with_chromium" -eq 1 ]; then
  if [ ! -x /usr/bin/chromium ]; then log "installing chromium"; apt_install chromium; fi
  [ -x /usr/bin/chromium ] || { log "chromium: /usr/bin/chromium still missing"; exit 1; }
  echo "chromium: present" >&2
fi
