#!/usr/bin/env bash
# Runs the test suite. Installs the system LZ4 library first if it is missing.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib/ensure-deps.sh
ensure_deps
swift build --build-tests "$@"
swift test --skip-build "$@"
