#!/usr/bin/env bash
# compare.sh OLD NEW: the differences between two captures of capture.sh
# (files only in one, and a unified diff of each file in both); exit 0 when
# they are the same, 1 when anything differs, 2 on usage.
set -uo pipefail
[ $# -eq 2 ] && [ -d "$1" ] && [ -d "$2" ] || { echo "usage: $0 OLD NEW (two capture folders)" >&2; exit 2; }
if diff -ru "$1" "$2"; then
    echo "same: $(find "$1" -type f | wc -l) files"
    exit 0
fi
echo "DIFFERENT: $1 and $2" >&2
exit 1
