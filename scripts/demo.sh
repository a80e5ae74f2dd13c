#!/usr/bin/env bash
source "$(dirname "$0")/lib/ensure-deps.sh"; ensure_deps
# The main job of the README: a quick run of every standard workload into
# ./kache-demo (a cache directory that is kept), W2 and W3 on one and two
# threads, its charts drawn into ./kache-demo-charts (SVG, beside the run's
# JSON), then `kache inspect` on the cache directory.
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
rm -rf ./kache-demo ./kache-demo-charts
mkdir -p ./kache-demo-charts
.build/release/kache-bench run --quick --threads 1,2 --dir ./kache-demo \
    --json ./kache-demo-charts/run.json --charts ./kache-demo-charts
echo
.build/release/kache inspect ./kache-demo
echo
echo "The run's charts (open them in a browser): $(pwd)/kache-demo-charts/*.svg"
echo "Its figures as JSON: $(pwd)/kache-demo-charts/run.json"
