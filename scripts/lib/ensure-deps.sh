# Sourced by the scripts: makes sure the system packages the build needs are there.
ensure_deps() {
    export PATH="/opt/swift/usr/bin:$PATH"
    if ! command -v pkg-config >/dev/null 2>&1 || ! pkg-config --exists liblz4; then
        echo "Installing liblz4-dev and pkg-config…" >&2
        local sudo=""
        [ "$(id -u)" = 0 ] || sudo="sudo"
        $sudo apt-get update -qq
        DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq liblz4-dev pkg-config >/dev/null
    fi
    # kache-bench measures RocksDB and SQLite beside W1 and W8, through the
    # system-library targets CRocksDB and CSQLite, which pkg-config finds.
    local peers=""
    pkg-config --exists rocksdb || peers="$peers librocksdb-dev"
    pkg-config --exists sqlite3 || peers="$peers libsqlite3-dev"
    if [ -n "$peers" ]; then
        echo "Installing$peers…" >&2
        local sudo=""
        [ "$(id -u)" = 0 ] || sudo="sudo"
        $sudo apt-get update -qq
        # shellcheck disable=SC2086 # one word per package
        DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq $peers >/dev/null
    fi
    # KacheRedis's tests and kache-bench --tier redis start a throw-away Redis
    # Cluster (scripts/redis-cluster.sh) from Debian's redis-server.
    if ! command -v redis-server >/dev/null 2>&1 || ! command -v redis-cli >/dev/null 2>&1; then
        echo "Installing redis-server and redis-tools…" >&2
        local sudo=""
        [ "$(id -u)" = 0 ] || sudo="sudo"
        $sudo apt-get update -qq
        DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq redis-server redis-tools >/dev/null
    fi
    # KacheRedis's TLS tests and kache-bench --redis-tls make their CA and
    # certificates with openssl (scripts/redis-cluster.sh certs).
    if ! command -v openssl >/dev/null 2>&1; then
        echo "Installing openssl…" >&2
        local sudo=""
        [ "$(id -u)" = 0 ] || sudo="sudo"
        $sudo apt-get update -qq
        DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq openssl >/dev/null
    fi
    # The power-cut tests mount powercutfs (Tests/PowerCut/), built on libfuse3
    # and mounted with fusermount3; without them those tests skip.
    if ! command -v fusermount3 >/dev/null 2>&1 || ! pkg-config --exists fuse3; then
        echo "Installing fuse3 and libfuse3-dev…" >&2
        local sudo=""
        [ "$(id -u)" = 0 ] || sudo="sudo"
        $sudo apt-get update -qq
        DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq fuse3 libfuse3-dev >/dev/null
    fi
}
