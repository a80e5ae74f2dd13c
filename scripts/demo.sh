#!/usr/bin/env bash
source "$(dirname "$0")/lib/ensure-deps.sh"; ensure_deps
# The main job of the README: a quick run of every standard workload into
# ./kache-demo (a cache directory that is kept), W2 and W3 on one and two
# threads, its charts drawn into ./kache-demo-charts (SVG, beside the run's
# JSON), then `kache inspect` on the cache directory. Last, a small cache
# as an app would leave it (./kache-demo-app: API responses, a Pool of
# avatars and a Queue of uploads, on the real clock), made and inspected
# with the `kache` command.
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
rm -rf ./kache-demo ./kache-demo-charts ./kache-demo-app
mkdir -p ./kache-demo-charts
.build/release/kache-bench run --quick --threads 1,2 --dir ./kache-demo \
    --json ./kache-demo-charts/run.json --charts ./kache-demo-charts
echo
.build/release/kache inspect ./kache-demo
echo
kache=.build/release/kache
app=./kache-demo-app
"$kache" init "$app"
printf '{"id":42,"name":"Ada Lovelace","role":"admin"}' | "$kache" set "$app" "https://api.example.com/v1/users/42" --ttl 1h
printf '{"items":[1,2,3],"next":null}' | "$kache" set "$app" "https://api.example.com/v1/feed?page=1" --ttl 5m
# `yes` ends on SIGPIPE when `head` has enough, which pipefail would count as a failure.
{ yes '<p>These terms apply to every use of the service.</p>' || true; } | head -c 20000 |
    "$kache" set "$app" "https://example.com/terms.html" --ttl 7d
for user in 7 42 99; do
    head -c 3000 /dev/urandom | "$kache" set "$app" "avatars/$user.png" --pool avatars --capacity 100 --ttl 1d
done
for upload in 1 2; do
    printf '{"upload":%d,"file":"photo-%d.jpg"}' "$upload" "$upload" | "$kache" push "$app" --queue uploads --capacity 50 --ttl 15m
done
echo
"$kache" inspect "$app"
echo
echo "The run's charts (open them in a browser): $(pwd)/kache-demo-charts/*.svg"
echo "Its figures as JSON: $(pwd)/kache-demo-charts/run.json"
