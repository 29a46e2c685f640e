#!/usr/bin/env bash
# make check: build twice (optimised, and with AddressSanitizer +
# UndefinedBehaviorSanitizer), run every test in the first and the unit and
# integration tests in the second, then print the one summary line CI reads:
# "N passed, N failed".
set -uo pipefail
BUILD=${1:-build}
ASAN=${2:-build-asan}
cd "$(dirname "$0")/.."

fail_setup() { echo "check: $1" >&2; echo "0 passed, 1 failed"; exit 1; }

[ -f "$BUILD/build.ninja" ] || meson setup "$BUILD" --buildtype=debugoptimized >/dev/null || fail_setup "meson setup $BUILD failed"
ninja -C "$BUILD" || fail_setup "build failed"
[ -f "$ASAN/build.ninja" ] || meson setup "$ASAN" --buildtype=debug -Db_sanitize=address,undefined -Db_lundef=false >/dev/null || fail_setup "meson setup $ASAN failed"
ninja -C "$ASAN" || fail_setup "sanitizer build failed"

# UBSan findings fail the test; LeakSanitizer is on for our unit tests.
export UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1

meson test -C "$BUILD" --print-errorlogs --num-processes 1
meson test -C "$ASAN" --print-errorlogs --num-processes 1 --suite unit --suite integration

/usr/bin/python3 - "$BUILD" "$ASAN" <<'PY'
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
