#!/usr/bin/env bash
# trainpath workload import of a trace of 2 GB, the size a real
# multi-node job's trace reaches: a real one (HolisticTraceAnalysis's NCCL
# DDP trace, tests/fixtures/traces/) repeated by gen_trace.py, streamed
# through a pipe as standard input ('-': no 2 GB on the disk), and the
# import's peak memory (its maximum resident set, from the kernel's
# rusage of the child) held to the bound: 256 MiB. Then the same, gzipped,
# at 200 MB. The result is checked against the source: every copy's steps,
# the collectives of a step the source's. Not a speed test (bench/
# wlimport-vs-json.sh measures that); in the sanitizer build the trace is
# 200 MB (ASan's shadow memory would be measured too).
. "$(dirname "$0")/../lib.sh"

GEN=$SRC/tests/integration/wlimport/gen_trace.py
FIX=$SRC/tests/fixtures/traces/hta_nccl_ddp_ws2_r0.json.gz
BYTES=2000e6
[ "$SANITIZED" = 1 ] && BYTES=200e6
W=$WORK/big.json

# run the import on standard input fed by the generator; print "rc maxrss_KiB"
import_piped() { # OUT GEN-ARGS...
    local out=$1; shift
    python3 "$GEN" "$@" 2>"$WORK/gen.err" | python3 -c '
import resource, subprocess, sys
rc = subprocess.run(sys.argv[2:], stdin=sys.stdin, stdout=open(sys.argv[1], "w"),
                    stderr=subprocess.STDOUT).returncode
print(rc, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)' \
        "$WORK/import.out" "$TP" workload import --out "$out" --samples 32 --sample-bytes 1024 -
}

read -r rc kib < <(import_piped "$W" "$FIX" "$BYTES")
echo "# $(cat "$WORK/gen.err"); import exit $rc, peak $((kib / 1024)) MiB"
sed 's/^/# import: /' "$WORK/import.out" | head -5
check "a trace of $BYTES bytes on standard input imports (exit 0)" test "$rc" = 0
check "... within 256 MiB of memory (peak $((kib / 1024)) MiB)" test "$kib" -le $((256 * 1024))
copies=$(sed -n 's/^gen_trace: \([0-9]*\) copies.*/\1/p' "$WORK/gen.err")
check "... every copy's steps ($copies copies), each the source's collectives, the SHA-256 of the stream" \
    test "$(python3 -c "
import gzip, json, sys
src = json.load(gzip.open('$FIX'))
steps = [e for e in src['traceEvents'] if str(e.get('name', '')).startswith('ProfilerStep#') and e.get('cat') != 'gpu_user_annotation']
d = json.load(open('$W'))
f = d['imported']['files'][0]
print(d['recorded']['steps'] == len(steps) * int(sys.argv[1]), len(d['layouts']) == 1,
      len(f['sha256']) == 64, f['path'])" "$copies")" = "True True True -"

read -r rc kib < <(import_piped "$WORK/gz.json" "$FIX" 200e6 --gzip)
check "the same gzipped (200 MB of JSON) on standard input imports within 256 MiB (peak $((kib / 1024)) MiB)" \
    test "$rc $((kib <= 256 * 1024))" = "0 1"
finish
