#!/usr/bin/env bash
# Builds the DocC documentation of the library targets Kache, KacheHTTP and
# KacheRedis (their catalogues are Sources/<Target>/<Target>.docc), of the
# two service-lifecycle targets (their symbols alone; Kache's catalogue has the
# article) and of the three metrics targets (their symbols alone), one archive
# each, and fails on any DocC warning or on a public symbol without a doc comment.
#
#   scripts/docs.sh [OUTPUT_DIR]        (default: .build/docs)
#
# Writes OUTPUT_DIR/<Target>.doccarchive, ready for static hosting: serve the
# archive's folder (`python3 -m http.server -d .build/docs/Kache.doccarchive`)
# and open /documentation/kache. The targets are built first if they are not
# (swift-docc-plugin asks SwiftPM for their symbol graphs); on top of an
# existing debug build the whole script takes about a minute.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib/ensure-deps.sh
ensure_deps

targets=(Kache KacheHTTP KacheRedis KacheServiceLifecycle KacheRedisServiceLifecycle KacheMetrics KacheHTTPMetrics KacheRedisMetrics)
output="${1:-.build/docs}"
mkdir -p "$output"
output="$(cd "$output" && pwd)"

log="$(mktemp)"
stamp="$(mktemp)"
trap 'rm -f "$log" "$stamp"' EXIT

target_options=()
for target in "${targets[@]}"; do target_options+=(--target "$target"); done

# --warnings-as-errors is DocC's: an unresolved or ambiguous link, a bad
# Topics group or a parameter the signature lacks fails the build.
status=0
swift package --allow-writing-to-directory "$output" generate-documentation \
    "${target_options[@]}" --output-path "$output" \
    --disable-indexing --warnings-as-errors 2>&1 | tee "$log" || status=$?
if [ "$status" -ne 0 ]; then
    echo "docs.sh: DocC failed (exit $status); see the diagnostics above." >&2
    exit "$status"
fi

# DocC does not warn about a public symbol that has no doc comment: check the
# symbol graphs. A symbol counts as documented only by a comment of its own
# (not one inherited from a protocol of another module); symbols the compiler
# synthesizes (no source location) are left out.
# The plugin extracts the targets' symbol graphs side by side and its
# lines interleave (a folder's line once came out as "arget symbol graph…"),
# so the folders are found where it puts them rather than read from its log:
# <triple>/extracted-symbols/<package>/<target>, beside the build's bin folder.
symbols="$(dirname "$(swift build --show-bin-path)")/extracted-symbols"
folders=()
for target in "${targets[@]}"; do
    graph="$(find "$symbols" -mindepth 3 -maxdepth 3 -path "*/$target/$target.symbols.json" -newer "$stamp" -print -quit 2>/dev/null || true)"
    folder="$(dirname "${graph:-.}")"
    if [ -z "$graph" ]; then
        echo "docs.sh: no symbol graphs of $target from this run under $symbols." >&2
        exit 1
    fi
    folders+=("$folder")
done
python3 - "$PWD/Sources" "${folders[@]}" <<'EOF'
import glob, json, os, sys
from urllib.parse import unquote, urlparse

sources, folders = os.path.realpath(sys.argv[1]) + os.sep, sys.argv[2:]
missing = []
for folder in folders:
    for path in sorted(glob.glob(os.path.join(folder, "*.symbols.json"))):
        graph = json.load(open(path))
        module = graph["module"]["name"]
        for symbol in graph["symbols"]:
            if symbol.get("accessLevel") not in ("public", "open"):
                continue
            location = symbol.get("location")
            file = os.path.realpath(unquote(urlparse(location["uri"]).path)) if location else ""
            if not file.startswith(sources):
                continue
            comment = symbol.get("docComment") or {}
            own = comment.get("module", module) == module
            if own and any(line["text"].strip() for line in comment.get("lines", [])):
                continue
            line = location["position"]["line"] + 1
            name = ".".join(symbol["pathComponents"])
            missing.append(f"{os.path.relpath(file)}:{line}: {name} ({symbol['kind']['displayName']})")
if missing:
    print(f"docs.sh: {len(missing)} public symbols have no doc comment:", file=sys.stderr)
    for entry in missing:
        print(f"  {entry}", file=sys.stderr)
    sys.exit(1)
EOF

echo "docs.sh: ${targets[*]} documented without a warning, in $output"
