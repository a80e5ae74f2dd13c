#!/usr/bin/env bash
# W9 hit ratio beside libCacheSim (issue 33): writes W9's three traces with
# `kache-bench trace`, replays each through libCacheSim's FIFO, LRU, S3-FIFO,
# SIEVE and W-TinyLFU (PyPI `libcachesim`, in a virtualenv under
# .build/hit-ratio-venv) at cache sizes of 1 % and 10 % of the keys, runs
# `kache-bench run --workload W9 --runs 1`, and prints one table of both:
# Kache's tiers, kache-bench's own simulated baselines, and libCacheSim's.
#
#   scripts/hit-ratio.sh           # standard sizes: 1,000,000 requests per trace (a few minutes)
#   scripts/hit-ratio.sh --quick   # quick sizes: 50,000 requests per trace
#
# Objects are 1 KiB and a cache of n objects has n × 1,024 bytes, in
# libCacheSim as in kache-bench's simulators (which count objects).
set -euo pipefail
cd "$(dirname "$0")/.."

quick=()
case "${1:-}" in
    "") ;;
    --quick) quick=(--quick) ;;
    *) echo "usage: scripts/hit-ratio.sh [--quick]" >&2; exit 2 ;;
esac

source scripts/lib/ensure-deps.sh
ensure_deps
echo "hit-ratio.sh: building kache-bench (release)" >&2
swift build -c release --product kache-bench >&2
bench=.build/release/kache-bench

venv=.build/hit-ratio-venv
if [[ ! -x "$venv/bin/python" ]]; then
    echo "hit-ratio.sh: creating the virtualenv $venv" >&2
    python3 -m venv "$venv" || { echo "hit-ratio.sh: python3 -m venv failed; install python3-venv (apt-get update && apt-get install python3-venv)" >&2; exit 1; }
fi
if ! "$venv/bin/python" -c "import libcachesim" 2>/dev/null; then
    echo "hit-ratio.sh: installing libcachesim from PyPI into $venv" >&2
    timeout 600 "$venv/bin/pip" install --quiet libcachesim || { echo "hit-ratio.sh: pip install libcachesim failed (is PyPI reachable?)" >&2; exit 1; }
fi

work=$(mktemp -d "${TMPDIR:-/tmp}/hit-ratio.XXXXXX")
trap 'rm -rf "$work"' EXIT

for trace in a b c; do
    echo "hit-ratio.sh: writing trace ($trace)" >&2
    timeout 300 "$bench" trace "$trace" "${quick[@]}" --output "$work/$trace.csv"
done
echo "hit-ratio.sh: kache-bench run --workload W9 --runs 1${quick[*]:+ ${quick[*]}}" >&2
timeout 3600 "$bench" run --workload W9 --runs 1 "${quick[@]}" --quiet --json "$work/w9.json" > "$work/w9.txt"

echo "hit-ratio.sh: replaying the traces through libCacheSim" >&2
timeout 1800 "$venv/bin/python" - "$work" <<'PYTHON'
import json, re, sys
import libcachesim as lcs

work = sys.argv[1]
OBJECT = 1024
POLICIES = [("FIFO", lcs.FIFO), ("LRU", lcs.LRU), ("S3-FIFO", lcs.S3FIFO), ("SIEVE", lcs.Sieve), ("W-TinyLFU", lcs.WTinyLFU)]

def reader(trace):
    params = lcs.ReaderInitParam(has_header=True, delimiter=",")
    params.time_field, params.obj_id_field, params.obj_size_field, params.ttl_field = 1, 2, 3, 4
    return lcs.TraceReader(f"{work}/{trace}.csv", lcs.TraceType.CSV_TRACE, params)

def honours_ttl():
    """Whether this build of libCacheSim expires objects by a request's TTL."""
    cache = lcs.FIFO(cache_size=4 * OBJECT)
    cache.get(lcs.Request(obj_size=OBJECT, obj_id=1, clock_time=0, ttl=10))
    return not cache.get(lcs.Request(obj_size=OBJECT, obj_id=1, clock_time=20, ttl=10))

# kache-bench's W9 results: variant "(a) Zipf · memory tier · 1 % budget (1,000 values)".
report = json.load(open(f"{work}/w9.json"))
rows = {}
for result in report["results"]:
    match = re.match(r"\((\w)\) .* · (memory tier|disk budget) · (\d+) % budget \(([\d,]+) values\)", result["variant"])
    trace, tier, percent, capacity = match.group(1), match.group(2), int(match.group(3)), int(match.group(4).replace(",", ""))
    figure = next(f for f in result["figures"] if f["name"] == "hit ratio")
    row = rows.setdefault((trace, percent), {"capacity": capacity})
    row[tier] = figure["summary"]["median"]
    for comparison in figure["comparisons"]:
        row["ours " + comparison["baseline"]] = comparison["summary"]["median"]

for (trace, percent), row in rows.items():
    for name, policy in POLICIES:
        miss_ratio, _ = policy(cache_size=row["capacity"] * OBJECT).process_trace(reader(trace))
        row["lcs " + name] = 1 - miss_ratio

columns = [("Kache memory", "memory tier"), ("Kache disk", "disk budget"),
           ("FIFO", "ours FIFO"), ("FIFO lcs", "lcs FIFO"), ("LRU", "ours LRU"), ("LRU lcs", "lcs LRU"),
           ("S3-FIFO", "ours S3-FIFO"), ("S3-FIFO lcs", "lcs S3-FIFO"), ("earliest expiry", "ours earliest expiry"), ("SIEVE lcs", "lcs SIEVE"), ("W-TinyLFU lcs", "lcs W-TinyLFU")]
header = ["trace, cache size"] + [title for title, _ in columns]
lines = [header]
for (trace, percent), row in sorted(rows.items()):
    cells = [f"({trace}) {percent} % ({row['capacity']:,} objects)"]
    cells += [f"{row[key]:.3f}" if key in row else "–" for _, key in columns]
    lines.append(cells)
widths = [max(len(line[i]) for line in lines) for i in range(len(header))]
print("W9 hit ratio: Kache (kache-bench, --runs 1), kache-bench's simulated baselines, and libCacheSim (lcs) on the same traces")
for line in lines:
    print("  " + "  ".join(cell.ljust(width) for cell, width in zip(line, widths)).rstrip())
print(f"libcachesim {getattr(lcs, '__version__', '?')}; objects of {OBJECT} bytes, cache of n objects = n × {OBJECT} bytes")
gaps = [abs(row["ours " + name] - row["lcs " + name]) for row in rows.values() for name in ("FIFO", "LRU", "S3-FIFO") if "ours " + name in row]
print(f"largest gap between kache-bench's FIFO, LRU, S3-FIFO and libCacheSim's: {max(gaps):.4f}" if gaps else "no baselines to check")
if any(row["capacity"] < 100 for row in rows.values()):
    print("note: below 100 objects libCacheSim's W-TinyLFU hits nothing here (0.000); its window, 1 % of the cache, is then smaller than one object")
if not honours_ttl():
    print("note: this libCacheSim build ignores request TTLs (an object set with TTL 10 still hit at time 20),")
    print("      so its trace (c) figures are without expiry; kache-bench's own baselines expire objects.")
PYTHON

echo
echo "kache-bench's own table (kache-bench run --workload W9 --runs 1${quick[*]:+ ${quick[*]}}):"
cat "$work/w9.txt"
