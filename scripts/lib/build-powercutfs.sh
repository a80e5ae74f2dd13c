#!/usr/bin/env bash
# Builds the power-cut file system (Tests/PowerCut/) into OUT_DIR:
# `powercutfs` and `syncfs-preload.so`, each only when its source is newer.
#
#   scripts/lib/build-powercutfs.sh OUT_DIR
#
# Run by scripts/power-cut-test.sh, and by PowerCutTests when they start.
# Needs cc, pkg-config and libfuse3-dev (scripts/lib/ensure-deps.sh).
set -euo pipefail
cd "$(dirname "$0")/../.."
out="$1"
mkdir -p "$out"
if [ ! -x "$out/powercutfs" ] || [ Tests/PowerCut/powercutfs.c -nt "$out/powercutfs" ]; then
    # shellcheck disable=SC2046 # pkg-config prints one flag a word
    cc -O2 -Wall -Wno-format-truncation -o "$out/powercutfs" Tests/PowerCut/powercutfs.c $(pkg-config --cflags --libs fuse3)
fi
if [ ! -f "$out/syncfs-preload.so" ] || [ Tests/PowerCut/syncfs-preload.c -nt "$out/syncfs-preload.so" ]; then
    cc -O2 -Wall -shared -fPIC -o "$out/syncfs-preload.so" Tests/PowerCut/syncfs-preload.c -ldl
fi
