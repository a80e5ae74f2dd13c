#!/usr/bin/env bash
# The long form of the power-cut test: kills the crash harness with SIGKILL and
# cuts the power of the file system under it (powercutfs, Tests/PowerCut/) N
# times (default 1,000) at random moments, remounting, reopening and checking
# the cache directory after every cut (Tests/KacheReliabilityTests/Crash/).
#
#   scripts/power-cut-test.sh [CUTS] [SEED]
#
# The test suite runs the same test with 12 cuts. SEED (each run prints its
# own) repeats a campaign's operations, durabilities, cut delays and torn
# pages; where each cut lands still depends on timing. The figures line
# printed at the end is what docs/RELIABILITY.md records. Needs /dev/fuse;
# installs fuse3 and libfuse3-dev when missing. KACHE_SCRATCH_PATH picks the
# build folder.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib/ensure-deps.sh
ensure_deps

cuts="${1:-1000}"
seed="${2:-$(date +%s)}"
scratch="${KACHE_SCRATCH_PATH:-.build}"
report="$(mktemp)"
trap 'rm -f "$report"' EXIT

swift build --scratch-path "$scratch" --build-tests >&2
scripts/lib/build-powercutfs.sh "$(swift build --scratch-path "$scratch" --show-bin-path)/powercut"
KACHE_POWER_CUTS="$cuts" KACHE_POWER_CUT_SEED="$seed" KACHE_POWER_CUT_REPORT="$report" \
    swift test --scratch-path "$scratch" --skip-build --filter 'KacheReliabilityTests.PowerCutTests' >&2
cat "$report"
