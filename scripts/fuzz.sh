#!/usr/bin/env bash
# Fuzzes the entry-file and manifest decoders with libFuzzer.
#
#   scripts/fuzz.sh [SECONDS] [TARGET...]
#
# SECONDS is the time per target (default 60); TARGETs are entry-file and/or
# manifest (default both, one after the other). The Kache module is built with
# -sanitize=fuzzer,address into .build-fuzz/, each target in Fuzz/<Target>/ is
# linked against it together with
# Tests/KacheReliabilityTests/Fuzzing/DecoderProperties.swift, and run on a
# working corpus seeded from Fuzz/corpus/<target>/ and Fuzz/regressions/<target>/.
#
# A crash (a trap, an ASan report, a broken property) is copied into
# Fuzz/regressions/<target>/, which FuzzRegressionTests replays on every test
# run, and the script exits 1. The last lines print executions and time per
# target, the figures docs/RELIABILITY.md records.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib/ensure-deps.sh
ensure_deps

seconds="${1:-60}"
shift || true
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(entry-file manifest)

scratch=.build-fuzz
build="$scratch/debug"
echo "Building the Kache module with the fuzzer and address sanitizers into $scratch…" >&2
# One flag: given as two, the later -sanitize would replace the earlier and drop the coverage instrumentation.
swift build --scratch-path "$scratch" --target Kache -Xswiftc -sanitize=fuzzer,address >&2

# Every object of the Kache module and of the modules it depends on (the only
# ones this scratch path builds).
objects=()
while IFS= read -r -d '' object; do objects+=("$object"); done \
    < <(find -L "$build" -path '*.build/*' -name '*.o' -not -path '*/Modules/*' -print0)
checkouts="$scratch/checkouts"
# The decoders' package-level declarations (KacheStorage) are visible only to
# modules compiled with this package's name, which SwiftPM derives from the folder.
package_name="$(grep -o 'package-name","[^"]*' "$scratch/debug.yaml" | grep -v '","swift_' | head -1 | cut -d'"' -f3)"

# Fuzz/<Target>/<Target>FuzzTarget.swift for a target name like entry-file.
source_of() {
    local camel
    camel="$(echo "$1" | awk -F- '{ for (i = 1; i <= NF; i++) printf "%s", toupper(substr($i, 1, 1)) substr($i, 2) }')"
    echo "Fuzz/$camel/${camel}FuzzTarget.swift"
}

summary=()
status=0
for target in "${targets[@]}"; do
    source="$(source_of "$target")"
    [ -f "$source" ] || { echo "fuzz.sh: no target $target ($source)" >&2; exit 2; }
    binary="$scratch/bin/fuzz-$target"
    # Artifacts of earlier runs are already in Fuzz/regressions/; count only this run's.
    rm -rf "$scratch/artifacts/$target"
    mkdir -p "$scratch/bin" "$scratch/corpus/$target" "$scratch/artifacts/$target"
    echo "Linking $binary…" >&2
    # The linker warns about every sanitizer symbol it can't export; keep its chatter in a log.
    if ! swiftc -sanitize=fuzzer,address -parse-as-library -g -module-name FuzzTarget -package-name "$package_name" \
        -I "$build/Modules" -I Sources/CLZ4 -I "$checkouts/swift-system/Sources/CSystem/include" \
        -Xcc -fmodule-map-file="$build/CKacheSystem.build/module.modulemap" \
        "$source" Tests/KacheReliabilityTests/Fuzzing/DecoderProperties.swift \
        "${objects[@]}" -llz4 -o "$binary" >"$scratch/link-$target.log" 2>&1; then
        grep -v "Cannot export local symbol" "$scratch/link-$target.log" >&2
        exit 2
    fi
    cp -n Fuzz/corpus/"$target"/* Fuzz/regressions/"$target"/* "$scratch/corpus/$target/" 2>/dev/null || true
    log="$scratch/fuzz-$target.log"
    echo "Fuzzing $target for ${seconds}s (log: $log)…" >&2
    set +e
    "$binary" "$scratch/corpus/$target" -max_total_time="$seconds" -max_len=16384 -rss_limit_mb=2048 \
        -timeout=10 -print_final_stats=1 -artifact_prefix="$scratch/artifacts/$target/" >"$log" 2>&1
    code=$?
    set -e
    runs="$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$' | tail -1)"
    rate="$(grep -o 'stat::average_exec_per_sec: *[0-9]*' "$log" | grep -o '[0-9]*$' | tail -1)"
    found=0
    for artifact in "$scratch/artifacts/$target"/*; do
        [ -f "$artifact" ] || continue
        found=$((found + 1))
        # Keep each finding once, whatever name it was given when it was first kept.
        known=0
        for kept in Fuzz/regressions/"$target"/*; do
            [ -f "$kept" ] && cmp -s "$artifact" "$kept" && known=1
        done
        [ $known = 1 ] || cp "$artifact" "Fuzz/regressions/$target/"
    done
    if [ $code -ne 0 ] || [ $found -gt 0 ]; then
        status=1
        tail -40 "$log" >&2
    fi
    summary+=("$target: ${runs:-?} executions in ${seconds}s (${rate:-?}/s), corpus $(ls "$scratch/corpus/$target" | wc -l) inputs, findings $found, exit $code")
done
printf '%s\n' "${summary[@]}"
exit $status
