#!/usr/bin/env bash
# Starts (or stops) a 3-master Redis Cluster on loopback from Debian's redis-server, for the
# cluster run of the e2e suites. Prints the node list for REDIS_CLUSTER_NODES.
#   scripts/redis-cluster.sh start [BASE_PORT]   -> 127.0.0.1:P,127.0.0.1:P+1,127.0.0.1:P+2
#   scripts/redis-cluster.sh stop  [BASE_PORT]
# With REDIS_CLUSTER_PASSWORD set, every node requires it (clients and the nodes among themselves).
set -euo pipefail
cmd=${1:-start}
base=${2:-7101}
dir=${TMPDIR:-/tmp}/svc-auth-redis-cluster-$base
ports=("$base" "$((base + 1))" "$((base + 2))")
auth=()
if [ -n "${REDIS_CLUSTER_PASSWORD:-}" ]; then
  auth=(--requirepass "$REDIS_CLUSTER_PASSWORD" --masterauth "$REDIS_CLUSTER_PASSWORD")
  # redis-cli reads it from the environment, so it never shows in a process list.
  export REDISCLI_AUTH="$REDIS_CLUSTER_PASSWORD"
fi

case "$cmd" in
  start)
    "$0" stop "$base" >/dev/null 2>&1 || true
    mkdir -p "$dir"
    for p in "${ports[@]}"; do
      mkdir -p "$dir/$p"
      redis-server --port "$p" --bind 127.0.0.1 --cluster-enabled yes --cluster-config-file "$dir/$p/nodes.conf" \
        --cluster-node-timeout 2000 --save "" --appendonly no --dir "$dir/$p" --daemonize yes --logfile "$dir/$p/redis.log" "${auth[@]}"
    done
    for p in "${ports[@]}"; do
      for _ in $(seq 1 50); do redis-cli -p "$p" ping >/dev/null 2>&1 && break; sleep 0.1; done
    done
    redis-cli --cluster create "${ports[@]/#/127.0.0.1:}" --cluster-replicas 0 --cluster-yes >/dev/null
    for _ in $(seq 1 100); do
      redis-cli -p "$base" cluster info | grep -q 'cluster_state:ok' && break
      sleep 0.1
    done
    redis-cli -p "$base" cluster info | grep -q 'cluster_state:ok' || { echo "redis-cluster: not ok" >&2; exit 1; }
    echo "127.0.0.1:${ports[0]},127.0.0.1:${ports[1]},127.0.0.1:${ports[2]}"
    ;;
  stop)
    for p in "${ports[@]}"; do redis-cli -p "$p" shutdown nosave >/dev/null 2>&1 || true; done
    rm -rf "$dir"
    ;;
  *)
    echo "usage: $0 start|stop [BASE_PORT]" >&2
    exit 2
    ;;
esac
