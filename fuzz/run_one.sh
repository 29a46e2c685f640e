#!/usr/bin/env bash
# run_one.sh HARNESS CORPUS WORK SECONDS [libFuzzer flags ...]
#
# One short fuzzing run, as `meson test --suite fuzz` does it: WORK is made
# afresh; the committed corpus is copied into WORK/seeds and never written
# (libFuzzer writes what it finds into the first corpus folder, WORK/new);
# fuzz/dict/NAME.dict is used when there is one. Exit status 0 when nothing
# was found; otherwise libFuzzer's (crash, leak, undefined behaviour, a
# harness assertion, an input slower than -timeout, memory above
# -rss_limit_mb), with the log's end and each saved input printed. The
# inputs stay in WORK/artifacts (in the build folder) to replay with
#     HARNESS WORK/artifacts/crash-...
set -uo pipefail
[ $# -ge 4 ] || { echo "usage: $0 HARNESS CORPUS WORK SECONDS [flags]" >&2; exit 2; }
exe=$(realpath "$1") corpus=$2 work=$3 secs=$4
shift 4
name=$(basename "$exe")
name=${name#fuzz_}
dict=$(dirname "$0")/dict/$name.dict

rm -rf "$work"
mkdir -p "$work/seeds" "$work/new" "$work/artifacts" "$work/tmp" || exit 2
if [ -d "$corpus" ]; then
    cp -r "$corpus/." "$work/seeds/" || exit 2
fi
flags=(-max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1
       -artifact_prefix="$work/artifacts/")
[ -f "$dict" ] && flags+=(-dict="$dict")

# the harnesses' temp folders go under WORK, not /tmp; undefined behaviour
# is fatal (UBSan only warns by default, which libFuzzer would not notice);
# leaks are findings, but for libfyaml's own (lsan.supp)
export TMPDIR="$work/tmp"
export UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
export ASAN_OPTIONS=detect_leaks=1
export LSAN_OPTIONS=suppressions=$(cd "$(dirname "$0")" && pwd)/lsan.supp:print_suppressions=0
"$exe" "${flags[@]}" "$@" "$work/new" "$work/seeds" >"$work/fuzz.log" 2>&1
rc=$?

seeds=$(find "$work/seeds" -type f | wc -l)
found=$(find "$work/new" -type f | wc -l)
echo "fuzz_$name: exit $rc (limit ${secs}s); corpus: $seeds committed + $found new inputs"
grep -E '^stat::|^(#[0-9]+ *DONE)' "$work/fuzz.log" | sed 's/^/    /'
if [ "$rc" -ne 0 ]; then
    echo "---- end of $work/fuzz.log ----"
    tail -n 60 "$work/fuzz.log"
    for f in "$work"/artifacts/*; do
        [ -f "$f" ] || continue
        echo "---- saved input $f ($(stat -c %s "$f") bytes); replay: $exe $f ----"
        head -c 1024 "$f" | od -A d -c | head -n 40
    done
fi
exit "$rc"
