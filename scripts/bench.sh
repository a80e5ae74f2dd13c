#!/usr/bin/env bash
# Builds kache-bench in release mode and runs it with the arguments given.
#
#   scripts/bench.sh run --workload W1,W2          # two workloads, async, 3 runs
#   scripts/bench.sh run --threads 1,2 --json bench.json
#   scripts/bench.sh run --help                     # every option
#
# Installs the system LZ4 library first if it is missing.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib/ensure-deps.sh
ensure_deps
swift build -c release --product kache-bench
exec .build/release/kache-bench "$@"
