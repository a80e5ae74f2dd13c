#!/usr/bin/env bash
# Starts, stops or describes a throw-away Redis Cluster on 127.0.0.1 for the
# KacheRedis tests, demos and kache-bench --tier redis.
#
#   scripts/redis-cluster.sh start [--state DIR] [--replicas 0|1] [--owner-pid PID]
#                                  [--password PW] [--tls CERTS]
#   scripts/redis-cluster.sh status [--state DIR]
#   scripts/redis-cluster.sh stop [--state DIR]
#   scripts/redis-cluster.sh certs CERTS [--san SAN] [--ca CA_DIR]
#
# start: 3 masters (plus 3 replicas with --replicas 1, the default) from Debian's
# redis-server, on free ports, each with its data in DIR (default: a new temporary
# directory). Prints `KACHE_REDIS_STATE=DIR` and `KACHE_REDIS_SEEDS=host:port,...`.
# DIR/ports and DIR/pids list the nodes. --owner-pid: a watcher stops the cluster
# as soon as that process is gone, so a test run that crashes leaves no server.
# --password: every node requires it (requirepass) for the default user, and
# replicas sync with it (masterauth); it goes to the servers in a config file
# and to redis-cli in REDISCLI_AUTH, never on a command line.
# --tls: nodes serve TLS only (port 0, tls-port, tls-cluster and tls-replication
# yes) with CERTS/ca.crt, CERTS/server.crt and CERTS/server.key; when
# CERTS/client.crt and CERTS/client.key exist, nodes require a client
# certificate (tls-auth-clients yes) and redis-cli presents that one.
# stop: ends exactly the servers listed in DIR/pids (by pid) and removes DIR.
# certs: makes a CA (or signs with CA_DIR's), a server certificate for SAN
# (default DNS:localhost,IP:127.0.0.1) and a client certificate, in CERTS.
# Every wait is bounded; nothing listens beyond 127.0.0.1.
set -euo pipefail

command="${1:-}"
shift || true
state="${KACHE_REDIS_STATE:-}"
replicas=1
owner=""
password=""
tls=""
certs=""
san="DNS:localhost,IP:127.0.0.1"
signing_ca=""
if [ "$command" = certs ]; then
    certs="${1:-}"
    shift || true
fi
while [ $# -gt 0 ]; do
    case "$1" in
        --state) state="$2"; shift 2 ;;
        --replicas) replicas="$2"; shift 2 ;;
        --owner-pid) owner="$2"; shift 2 ;;
        --password) password="$2"; shift 2 ;;
        --tls) tls="$(cd "$2" && pwd)"; shift 2 ;;
        --san) san="$2"; shift 2 ;;
        --ca) signing_ca="$2"; shift 2 ;;
        *) echo "redis-cluster.sh: unknown option $1" >&2; exit 2 ;;
    esac
done

# `cli SECONDS ARGS…`: redis-cli, bounded in time, with the cluster's TLS and
# password as recorded in DIR at start.
cli() {
    local limit="$1" args=()
    shift
    if [ -f "$state/tls" ]; then
        local dir
        dir="$(cat "$state/tls")"
        args+=(--tls --cacert "$dir/ca.crt")
        [ -f "$dir/client.crt" ] && args+=(--cert "$dir/client.crt" --key "$dir/client.key")
    fi
    if [ -f "$state/password" ]; then
        REDISCLI_AUTH="$(cat "$state/password")" timeout "$limit" redis-cli "${args[@]}" "$@"
    else
        timeout "$limit" redis-cli "${args[@]}" "$@"
    fi
}

make_certs() {
    [ -n "$certs" ] || { echo "usage: $0 certs CERTS [--san SAN] [--ca CA_DIR]" >&2; exit 2; }
    command -v openssl >/dev/null || { echo "redis-cluster.sh: openssl is not installed (apt-get install openssl)" >&2; exit 1; }
    mkdir -p "$certs"
    local key=(-newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes)
    if [ -n "$signing_ca" ]; then
        cp "$signing_ca/ca.crt" "$signing_ca/ca.key" "$certs/"
    else
        openssl req -x509 -new "${key[@]}" -keyout "$certs/ca.key" -out "$certs/ca.crt" -days 2 \
            -subj "/CN=Kache test CA $(od -An -N4 -tx4 /dev/urandom | tr -d ' ')" 2>/dev/null
    fi
    local name
    for name in server client; do
        openssl req -new "${key[@]}" -keyout "$certs/$name.key" -out "$certs/$name.csr" -subj "/CN=kache-redis-$name" 2>/dev/null
        local extensions="basicConstraints=CA:FALSE"
        [ "$name" = server ] && extensions="$extensions
subjectAltName=$san"
        openssl x509 -req -in "$certs/$name.csr" -CA "$certs/ca.crt" -CAkey "$certs/ca.key" -CAcreateserial \
            -out "$certs/$name.crt" -days 2 -extfile <(printf '%s\n' "$extensions") 2>/dev/null
        rm -f "$certs/$name.csr"
    done
    chmod 600 "$certs"/*.key
}

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
    # What the nodes share beyond the defaults: a password, TLS. In a file, so
    # that the password shows in no process list.
    (umask 077; : > "$state/secure.conf")
    if [ -n "$password" ]; then
        case "$password" in *'"'* | *'\'* | *$'\n'*) echo "redis-cluster.sh: --password may hold no quote, backslash or newline" >&2; exit 2 ;; esac
        (umask 077; printf '%s' "$password" > "$state/password")
        printf 'requirepass "%s"\nmasterauth "%s"\n' "$password" "$password" >> "$state/secure.conf"
    fi
    if [ -n "$tls" ]; then
        for file in ca.crt server.crt server.key; do
            [ -f "$tls/$file" ] || { echo "redis-cluster.sh: --tls $tls has no $file" >&2; exit 1; }
        done
        echo "$tls" > "$state/tls"
        client_auth=no
        [ -f "$tls/client.crt" ] && client_auth=yes
        printf '%s\n' "tls-cert-file $tls/server.crt" "tls-key-file $tls/server.key" "tls-ca-cert-file $tls/ca.crt" \
            "tls-cluster yes" "tls-replication yes" "tls-auth-clients $client_auth" >> "$state/secure.conf"
    fi
    for i in $(seq 0 $((count - 1))); do
        port=$((base + i))
        mkdir -p "$state/$port"
        listen=(--port "$port")
        [ -n "$tls" ] && listen=(--port 0 --tls-port "$port")
        redis-server "$state/secure.conf" "${listen[@]}" --bind 127.0.0.1 --protected-mode yes \
            --cluster-enabled yes --cluster-config-file "$state/$port/nodes.conf" \
            --cluster-node-timeout 1000 --cluster-replica-validity-factor 0 \
            --save "" --appendonly no --dir "$state/$port" \
            --daemonize yes --pidfile "$state/$port/redis.pid" --logfile "$state/$port/redis.log"
        echo "$port" >> "$state/ports"
    done
    for port in $(cat "$state/ports"); do
        for _ in $(seq 1 100); do
            [ -s "$state/$port/redis.pid" ] && cli 2 -h 127.0.0.1 -p "$port" ping 2>/dev/null | grep -q PONG && break
            sleep 0.05
        done
        cat "$state/$port/redis.pid" >> "$state/pids"
    done
    trap 'stop_cluster' ERR
    nodes="$(sed 's/^/127.0.0.1:/' "$state/ports" | tr '\n' ' ')"
    # shellcheck disable=SC2086
    cli 60 --cluster create $nodes --cluster-replicas "$replicas" --cluster-yes > "$state/create.log" 2>&1
    for port in $(cat "$state/ports"); do
        for i in $(seq 1 200); do
            cli 2 -h 127.0.0.1 -p "$port" cluster info 2>/dev/null | grep -q 'cluster_state:ok' && break
            [ "$i" = 200 ] && { echo "redis-cluster.sh: node $port never reported cluster_state:ok" >&2; false; }
            sleep 0.05
        done
    done
    if [ "$replicas" = 1 ]; then
        # Replicas report in once the sync is done; failover tests need them ready.
        for i in $(seq 1 200); do
            up=$(cli 2 -h 127.0.0.1 -p "$base" cluster nodes 2>/dev/null | grep -c 'slave.*connected' || true)
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
    cli 5 -h 127.0.0.1 -p "$port" cluster info | grep -E 'cluster_state|cluster_known_nodes|cluster_size'
    cli 5 -h 127.0.0.1 -p "$port" cluster nodes | awk '{print $2, $3, $9}'
    ;;
stop)
    stop_cluster
    ;;
certs)
    make_certs
    ;;
*)
    echo "usage: $0 start|status|stop [--state DIR] [--replicas 0|1] [--owner-pid PID] [--password PW] [--tls CERTS]; $0 certs CERTS [--san SAN] [--ca CA_DIR]" >&2
    exit 2
    ;;
esac
