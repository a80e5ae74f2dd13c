#!/usr/bin/env bash
# The long form of the crash test: kills the crash harness with SIGKILL N times
# (default 1,000) at random moments, reopening and checking the cache directory
# after every kill (Tests/KacheReliabilityTests/Crash/).
#
#   scripts/crash-test.sh [KILLS] [SEED]
#
# The test suite runs the same test with 50 kills. SEED (each run prints its
# own) repeats a campaign's operations and kill delays; where each kill lands
# still depends on timing. The figures line printed at the end is what
# docs/RELIABILITY.md records. KACHE_SCRATCH_PATH picks the build folder.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib/ensure-deps.sh
ensure_deps

kills="${1:-1000}"
seed="${2:-$(date +%s)}"
scratch="${KACHE_SCRATCH_PATH:-.build}"
report="$(mktemp)"
trap 'rm -f "$report"' EXIT

swift build --scratch-path "$scratch" --build-tests >&2
KACHE_CRASH_KILLS="$kills" KACHE_CRASH_SEED="$seed" KACHE_CRASH_REPORT="$report" \
    swift test --scratch-path "$scratch" --skip-build --filter 'KacheReliabilityTests.CrashTests' >&2
cat "$report"
