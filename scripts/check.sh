#!/usr/bin/env bash
# make check: build twice (optimised, with the GPU path where CUDA is
# installed, and with AddressSanitizer + UndefinedBehaviorSanitizer, without
# it), run every unit and integration test under the sanitizers, and in the
# optimised build the 'slow' suite (timing and accuracy, and what runs once:
# the Debian package, the man pages, completion, contrib/) and the
# 'both' suite (the GPU path's unit test, the
# layer check on the GPU path's objects and the whole main job, again in the
# GPU-path build: tests/meson.build, tests/integration/meson.build); then build the libFuzzer harnesses
# (clang, the third folder) and run each a few seconds on its committed
# corpus (fuzz/); then print the one summary line CI reads: "N passed, N
# failed".
set -uo pipefail
BUILD=${1:-build}
ASAN=${2:-build-asan}
FUZZ=${3:-build-fuzz}
cd "$(dirname "$0")/.."

fail_setup() { echo "check: $1" >&2; echo "0 passed, 1 failed"; exit 1; }

[ -f "$BUILD/build.ninja" ] || meson setup "$BUILD" --buildtype=debugoptimized >/dev/null || fail_setup "meson setup $BUILD failed"
ninja -C "$BUILD" || fail_setup "build failed"
# The sanitizer build is also the build without the GPU path (-Dgpu=disabled):
# the first one has it wherever the CUDA toolkit is installed, so the 'both'
# suite (gpu, validate, gpu_cli, validate_quick, fleet_sdc, structure) runs
# both with the path built (refusing without a device) and without.
[ -f "$ASAN/build.ninja" ] || meson setup "$ASAN" --buildtype=debug -Db_sanitize=address,undefined -Db_lundef=false -Dgpu=disabled >/dev/null || fail_setup "meson setup $ASAN failed"
ninja -C "$ASAN" || fail_setup "sanitizer build failed"

# UBSan findings fail the test; LeakSanitizer is on for our unit tests.
export UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1

# Two tests at a time: those marked is_parallel (tests/meson.build,
# tests/integration/meson.build: it_shared) share the machine with one
# other; every other test runs alone.
meson test -C "$BUILD" --print-errorlogs --num-processes 2 --suite slow --suite both
meson test -C "$ASAN" --print-errorlogs --num-processes 2 --suite unit --suite integration --no-suite slow

# The fuzz suite: only the library and the harnesses are built (target
# fuzzers), so the tests are run without meson's rebuild of everything. A
# missing clang fails here, loudly: scripts/install-deps.sh installs it.
fuzz_ok=1
if ! command -v clang >/dev/null; then
    echo "check: clang is missing: the fuzz suite cannot be built (scripts/install-deps.sh installs clang and libclang-rt-14-dev)" >&2
    fuzz_ok=0
elif ! { [ -f "$FUZZ/build.ninja" ] || CC=clang meson setup "$FUZZ" -Dfuzz=true -Dgpu=disabled \
        -Db_sanitize=address,undefined -Db_lundef=false --buildtype=debugoptimized >/dev/null; }; then
    echo "check: meson setup $FUZZ failed" >&2
    fuzz_ok=0
elif ! meson compile -C "$FUZZ" fuzzers; then
    echo "check: fuzz build failed" >&2
    fuzz_ok=0
else
    meson test -C "$FUZZ" --print-errorlogs --num-processes 2 --no-rebuild --suite fuzz
fi
# a fuzz part that could not run counts as one failure
[ "$fuzz_ok" -eq 1 ] || rm -f "$FUZZ/meson-logs/testlog.json"

/usr/bin/python3 - "$BUILD" "$ASAN" "$FUZZ" <<'PY'
import json, sys
passed = failed = skipped = 0
for d in sys.argv[1:]:
    try:
        lines = open(f"{d}/meson-logs/testlog.json").read().splitlines()
    except OSError:
        failed += 1
        continue
    for line in lines:
        r = json.loads(line)
        if r["result"] in ("OK", "EXPECTEDFAIL"):
            passed += 1
        elif r["result"] == "SKIP":
            skipped += 1
        else:
            failed += 1
            print(f"FAILED: {d}: {r['name']} ({r['result']})")
            # the TAP lines that failed, with the diagnostics printed before them
            lines = (r.get("stdout") or "").splitlines()
            for i, l in enumerate(lines):
                if l.startswith("not ok"):
                    j = i
                    while j > 0 and i - j < 12 and lines[j - 1].startswith("#"):
                        j -= 1
                    for d2 in lines[j:i + 1]:
                        print("   ", d2)
print(f"{passed} passed, {failed} failed" + (f", {skipped} skipped" if skipped else ""))
sys.exit(1 if failed else 0)
PY
