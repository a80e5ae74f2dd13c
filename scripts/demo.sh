#!/usr/bin/env bash
source "$(dirname "$0")/lib/ensure-deps.sh"; ensure_deps
# The main job of the README: a quick run of every standard workload into
# ./kache-demo (a cache directory that is kept), then `kache inspect` on it.
#
#   scripts/demo.sh
#
# Installs the system LZ4 library first if it is missing, and builds both
# executables in release mode.
set -euo pipefail
cd "$(dirname "$0")/.."
# One product per command: given twice, `--product` builds only the last.
swift build -c release --product kache-bench
swift build -c release --product kache
rm -rf ./kache-demo
.build/release/kache-bench run --quick --dir ./kache-demo
echo
.build/release/kache inspect ./kache-demo
