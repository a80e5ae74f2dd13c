#!/usr/bin/env bash
# Starts, stops or describes a throw-away Redis Cluster on 127.0.0.1 for the
# KacheRedis tests, demos and kache-bench --tier redis.
#
#   scripts/redis-cluster.sh start [--state DIR] [--replicas 0|1] [--owner-pid PID]
#   scripts/redis-cluster.sh status [--state DIR]
#   scripts/redis-cluster.sh stop [--state DIR]
#
# start: 3 masters (plus 3 replicas with --replicas 1, the default) from Debian's
# redis-server, on free ports, each with its data in DIR (default: a new temporary
# directory). Prints `KACHE_REDIS_STATE=DIR` and `KACHE_REDIS_SEEDS=host:port,...`.
# DIR/ports and DIR/pids list the nodes. --owner-pid: a watcher stops the cluster
# as soon as that process is gone, so a test run that crashes leaves no server.
# stop: ends exactly the servers listed in DIR/pids (by pid) and removes DIR.
# Every wait is bounded; nothing listens beyond 127.0.0.1.
set -euo pipefail

command="${1:-}"
shift || true
state="${KACHE_REDIS_STATE:-}"
replicas=1
owner=""
while [ $# -gt 0 ]; do
    case "$1" in
        --state) state="$2"; shift 2 ;;
        --replicas) replicas="$2"; shift 2 ;;
        --owner-pid) owner="$2"; shift 2 ;;
        *) echo "redis-cluster.sh: unknown option $1" >&2; exit 2 ;;
    esac
done

# Running, and not a zombie waiting for its parent to reap it.
alive() { kill -0 "$1" 2>/dev/null && ! grep -q '^[0-9]* ([^)]*) Z' "/proc/$1/stat" 2>/dev/null; }

port_free() { ! (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

# A base port where base..base+n-1 and their cluster-bus ports (+10000) are all free,
# below the ephemeral range so that outgoing connections never take them.
pick_ports() {
    local n="$1" tries base ok i
    for tries in $(seq 1 200); do
        base=$(( 7100 + (RANDOM % 1200) * 10 ))
        ok=1
        for i in $(seq 0 $((n - 1))); do
            if ! port_free $((base + i)) || ! port_free $((base + i + 10000)); then ok=0; break; fi
        done
        if [ "$ok" = 1 ]; then echo "$base"; return 0; fi
    done
    echo "redis-cluster.sh: no free ports found" >&2
    return 1
}

stop_cluster() {
    [ -n "$state" ] && [ -f "$state/pids" ] || { echo "redis-cluster.sh: no cluster at ${state:-(no --state)}" >&2; return 0; }
    local pid
    while read -r pid; do
        [ -n "$pid" ] && kill "$pid" 2>/dev/null || true
    done < "$state/pids"
    for _ in $(seq 1 50); do
        local alive=0
        while read -r pid; do
            [ -n "$pid" ] && alive "$pid" && alive=1
        done < "$state/pids"
        [ "$alive" = 0 ] && break
        sleep 0.1
    done
    while read -r pid; do
        [ -n "$pid" ] && kill -9 "$pid" 2>/dev/null || true
    done < "$state/pids"
    if [ -f "$state/watcher" ]; then
        local watcher
        watcher="$(cat "$state/watcher")"
        [ "$watcher" != "$$" ] && kill "$watcher" 2>/dev/null || true
    fi
    rm -rf "$state"
}

case "$command" in
start)
    # Close every descriptor inherited beyond stdin/out/err, so that neither the
    # daemonized servers nor the watcher hold one open for the caller: some
    # callers (Foundation's Process) wait for such a descriptor to close.
    for fd in /proc/$$/fd/*; do
        fd="${fd##*/}"
        [ "$fd" -gt 2 ] 2>/dev/null && eval "exec $fd>&-" 2>/dev/null || true
    done
    command -v redis-server >/dev/null || { echo "redis-cluster.sh: redis-server is not installed (apt-get install redis-server redis-tools)" >&2; exit 1; }
    [ -n "$state" ] || state="$(mktemp -d "${TMPDIR:-/tmp}/kache-redis.XXXXXX")"
    mkdir -p "$state"
    count=$(( replicas == 1 ? 6 : 3 ))
    base="$(pick_ports "$count")"
    : > "$state/pids"
    : > "$state/ports"
    for i in $(seq 0 $((count - 1))); do
        port=$((base + i))
        mkdir -p "$state/$port"
        redis-server --port "$port" --bind 127.0.0.1 --protected-mode yes \
            --cluster-enabled yes --cluster-config-file "$state/$port/nodes.conf" \
            --cluster-node-timeout 1000 --cluster-replica-validity-factor 0 \
            --save "" --appendonly no --dir "$state/$port" \
            --daemonize yes --pidfile "$state/$port/redis.pid" --logfile "$state/$port/redis.log"
        echo "$port" >> "$state/ports"
    done
    for port in $(cat "$state/ports"); do
        for _ in $(seq 1 100); do
            [ -s "$state/$port/redis.pid" ] && timeout 2 redis-cli -h 127.0.0.1 -p "$port" ping >/dev/null 2>&1 && break
            sleep 0.05
        done
        cat "$state/$port/redis.pid" >> "$state/pids"
    done
    trap 'stop_cluster' ERR
    nodes="$(sed 's/^/127.0.0.1:/' "$state/ports" | tr '\n' ' ')"
    # shellcheck disable=SC2086
    timeout 60 redis-cli --cluster create $nodes --cluster-replicas "$replicas" --cluster-yes > "$state/create.log" 2>&1
    for port in $(cat "$state/ports"); do
        for i in $(seq 1 200); do
            timeout 2 redis-cli -h 127.0.0.1 -p "$port" cluster info 2>/dev/null | grep -q 'cluster_state:ok' && break
            [ "$i" = 200 ] && { echo "redis-cluster.sh: node $port never reported cluster_state:ok" >&2; false; }
            sleep 0.05
        done
    done
    if [ "$replicas" = 1 ]; then
        # Replicas report in once the sync is done; failover tests need them ready.
        for i in $(seq 1 200); do
            up=$(timeout 2 redis-cli -h 127.0.0.1 -p "$base" cluster nodes 2>/dev/null | grep -c 'slave.*connected' || true)
            [ "$up" -ge 3 ] && break
            sleep 0.05
        done
    fi
    trap - ERR
    if [ -n "$owner" ]; then
        (
            trap '' HUP
            while kill -0 "$owner" 2>/dev/null && [ -d "$state" ]; do sleep 1; done
            [ -d "$state" ] && KACHE_REDIS_STATE="$state" bash "$0" stop >/dev/null 2>&1
        ) </dev/null >/dev/null 2>&1 &
        echo $! > "$state/watcher"
    fi
    echo "KACHE_REDIS_STATE=$state"
    echo "KACHE_REDIS_SEEDS=$(head -n 3 "$state/ports" | sed 's/^/127.0.0.1:/' | paste -sd, -)"
    ;;
status)
    [ -n "$state" ] && [ -f "$state/ports" ] || { echo "no cluster"; exit 1; }
    port="$(head -n 1 "$state/ports")"
    timeout 5 redis-cli -h 127.0.0.1 -p "$port" cluster info | grep -E 'cluster_state|cluster_known_nodes|cluster_size'
    timeout 5 redis-cli -h 127.0.0.1 -p "$port" cluster nodes | awk '{print $2, $3, $9}'
    ;;
stop)
    stop_cluster
    ;;
*)
    echo "usage: $0 start|status|stop [--state DIR] [--replicas 0|1] [--owner-pid PID]" >&2
    exit 2
    ;;
esac
