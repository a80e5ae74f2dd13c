#!/usr/bin/env bash
# Runs the race stress tests under ThreadSanitizer and AddressSanitizer.
#
#   scripts/sanitize.sh [thread|address]...     (default: both)
#
# Each sanitizer builds the package once into its own scratch path
# (.build-sanitize-<name>/, so the plain build is untouched), then runs
# RaceStressTests (many threads on the same keys, Pools and Queues), the
# engine's ConcurrencyTests and EntryIndexTests (Pools against their reference
# models while other threads read the same shards) and AsyncAPITests (many
# tasks, the I/O pool, cancellation, Queue loops). A report from either sanitizer fails the run.
# KACHE_RACE_SECONDS sets how long each stress run lasts (default 2).
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib/ensure-deps.sh
ensure_deps

sanitizers=("$@")
[ ${#sanitizers[@]} -gt 0 ] || sanitizers=(thread address)
filter='KacheReliabilityTests\.RaceStressTests|KacheTests\.ConcurrencyTests|KacheTests\.EntryIndexTests|KacheTests\.AsyncAPITests'

# Stop at the first report, and make it fail the test process.
export TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1 ${TSAN_OPTIONS:-}"
# Leak checking is off: the Swift runtime keeps its metadata caches for the life of
# the process, which LeakSanitizer reports at exit; memory errors are what we look for.
export ASAN_OPTIONS="halt_on_error=1 detect_leaks=0 ${ASAN_OPTIONS:-}"

for sanitizer in "${sanitizers[@]}"; do
    case "$sanitizer" in
        thread | address) ;;
        *) echo "sanitize.sh: unknown sanitizer $sanitizer (thread or address)" >&2; exit 2 ;;
    esac
    scratch=".build-sanitize-$sanitizer"
    start=$(date +%s)
    echo "Building with --sanitize=$sanitizer into $scratch…" >&2
    swift build --scratch-path "$scratch" --build-tests --sanitize="$sanitizer" >&2
    built=$(date +%s)
    swift test --scratch-path "$scratch" --skip-build --sanitize="$sanitizer" --filter "$filter"
    echo "sanitize=$sanitizer: build $((built - start)) s, tests $(($(date +%s) - built)) s" >&2
done
