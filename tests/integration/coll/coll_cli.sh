#!/usr/bin/env bash
# trainpath coll from the command line: the result document, every
# collective through the CLI, the two-level schedule, and bad input refused
# (exit 2, the option named) before any rank starts.
. "$(dirname "$0")/../lib.sh"

J=$WORK/ar.json
run_rc 0 "$WORK/ar.out" timeout 120 "$TP" coll -n 2 --op allreduce --sizes 8,1M,16M --dtype f32 --iters 10 --json "$J"
check "coll -n 2 allreduce 8,1M,16M runs" test $? -eq 0
check "... the document is valid" valid_doc "$J"
check "... status ok" test "$(json_get "$J" "d['status']['ok']")" = True
check "... three sizes, as asked" test "$(json_get "$J" "[x['size_bytes'] for x in r['sizes']]")" = "[8, 1048576, 16777216]"
check "... no wrong element" test "$(json_get "$J" "sum(x['wrong'] for x in r['sizes'])")" = 0
check "... busbw = algbw for 2 ranks (factor 2(n-1)/n)" test "$(json_get "$J" "all(abs(x['busbw']['value']-x['algbw']['value'])<1e-6*x['algbw']['value']+1e-9 for x in r['sizes'])")" = True
check "... time stats with p50/p99/max/mean, ns" test "$(json_get "$J" "all(k in e['time'] for k in ('p50','p99','max','mean')) and e['time']['unit']")" = ns
check "... the algorithm chosen is recorded" test "$(json_get "$J" "all(x['algo'] in ('ring','rabenseifner','recdoubling','dbtree','binomial') for x in r['sizes'])")" = True
check "... arrival skew reported" test "$(json_get "$J" "'p99' in e['arrival_skew']")" = True
check "... alpha-beta fit stored, alpha and beta never negative" test "$(json_get "$J" "len(r['fit'])>=1 and all(f['alpha']['unit']=='ns' and f['beta']['unit']=='ns/B' and f['alpha']['value'] >= 0 and f['beta']['value'] >= 0 for f in r['fit'])")" = True
check "... table printed with #wrong column" grep -q "#wrong" "$WORK/ar.out"
check "... provenance names the channels" test "$(json_get "$J" "d['provenance']['comm']['channels']['shm']")" = 1

J3=$WORK/ar3.json
run_rc 0 "$WORK/ar3.out" timeout 120 "$TP" coll -n 3 --sizes 1K,64K --iters 5 --json "$J3"
check "3 ranks: busbw = algbw * 4/3" test "$(json_get "$J3" "all(abs(x['busbw']['value']-x['algbw']['value']*4/3)<1e-6*x['busbw']['value'] for x in r['sizes'])")" = True

for op in reduce-scatter allgather broadcast reduce alltoall sendrecv; do
    Jo=$WORK/$op.json
    run_rc 0 "$WORK/$op.out" timeout 120 "$TP" coll -n 3 --op "$op" --sizes 8-64K --iters 3 --root 1 --dtype bf16 --json "$Jo"
    check "coll -n 3 --op $op bf16: runs, 0 wrong" test $? -eq 0 -a "$(json_get "$Jo" "sum(x['wrong'] for x in r['sizes'])")" = 0
done
run_rc 0 "$WORK/fab.out" timeout 120 "$TP" coll -n 3 --intra fabric --sizes 8,1M --iters 5 --json "$WORK/fab.json"
check "--intra fabric: tcp between local ranks" test "$(json_get "$WORK/fab.json" "d['provenance']['comm']['channels']")" = "{'shm': 0, 'tcp': 2, 'ofi': 0}"
run_rc 0 "$WORK/hier.out" env TP_COLL_HOST_SPLIT=2 timeout 120 "$TP" coll -n 4 --sizes 8,1M --iters 5 --json "$WORK/hier.json"
check "two hosts of two ranks (test hook): auto picks hier, 0 wrong" test "$(json_get "$WORK/hier.json" "[x['algo'] for x in r['sizes']], sum(x['wrong'] for x in r['sizes'])")" = "['hier', 'hier'] 0"
run_rc 0 "$WORK/hier3.out" env TP_COLL_HOST_SPLIT=2 timeout 120 "$TP" coll -n 3 --sizes 8,1M --iters 5 --timeout 10s --json "$WORK/hier3.json"
check "uneven hosts (two ranks, one rank): every rank makes the same choice, 0 wrong" test "$(json_get "$WORK/hier3.json" "[x['algo'] for x in r['sizes']], sum(x['wrong'] for x in r['sizes'])")" = "['hier', 'hier'] 0"
check "... shm within a host, tcp across" test "$(json_get "$WORK/hier.json" "d['provenance']['comm']['channels']")" = "{'shm': 1, 'tcp': 2, 'ofi': 0}"

# --shm-stores: which receives write with streaming stores, per size on rank 0
streamed() { # streamed NAME ARGS...: "size:streamed_bytes ..." and the wrong count
    local name=$1; shift
    run_rc 0 "$WORK/$name.out" timeout 120 "$TP" coll --sizes 4K,16K,1M --iters 3 "$@" --json "$WORK/$name.json" &&
        json_get "$WORK/$name.json" "' '.join('%d:%d' % (x['size_bytes'], x['streamed_bytes']) for x in r['sizes']), sum(x['wrong'] for x in r['sizes']), d['config']['shm_stores']"
}
check "--shm-stores auto (default), 2 ranks: the reduced half each rank forwards, from 8 KiB" \
    test "$(streamed st-auto -n 2)" = "4096:0 16384:8192 1048576:524288 0 auto"
# (1 MiB: the ring; each rank forwards the outputs of its first reduce-scatter
# step and of the last, and of its first allgather step: 3 x 1/3 MiB)
check "... 3 ranks: every forwarded receive of 8 KiB or more" \
    test "$(streamed st-auto3 -n 3 --algo ring)" = "4096:0 16384:0 1048576:1048576 0 auto"
check "... reduce-scatter: nothing is forwarded, nothing streams" \
    test "$(streamed st-rs -n 2 --op reduce-scatter)" = "4096:0 16384:0 1048576:0 0 auto"
check "... --intra fabric: no shared memory, nothing streams" \
    test "$(streamed st-fab -n 2 --intra fabric)" = "4096:0 16384:0 1048576:0 0 auto"
check "--shm-stores cached: none" test "$(streamed st-cached -n 2 --shm-stores cached)" = "4096:0 16384:0 1048576:0 0 cached"
check "--shm-stores stream, 3 ranks, bf16: every size streams, from 4 KiB; 0 wrong" test "$(streamed st-stream \
    -n 3 --shm-stores stream --dtype bf16 | sed -E 's/[0-9]+:[1-9][0-9]*/y/g')" = "y y y 0 stream"

# --trace: every timed iteration of every rank, on rank 0's clock
T=$WORK/coll.trace.json
check "--trace: coll -n 3 --sizes 8,64K,1M --iters 5 writes the timeline" run_rc 0 "$WORK/tr.out" \
    timeout 120 "$TP" coll -n 3 --sizes 8,64K,1M --iters 5 --trace "$T" --json "$WORK/tr.json"
check "... a process per rank, the backend's thread; 5 spans per rank and size" test "$(json_run "$T" "
import collections
X = [e for e in d['traceEvents'] if e['ph'] == 'X']
names = sorted({(e['pid'], e['args']['name']) for e in d['traceEvents'] if e['name'] == 'thread_name'})
print(names, sorted(set(collections.Counter((e['pid'], e['args']['size_bytes']) for e in X).values())))")" = \
    "[(0, 'trainpath'), (1, 'trainpath'), (2, 'trainpath')] [5]"
check "... per size, the mean over iterations of the slowest rank's span is the document's time.mean" \
    test "$(json_run "$T" "
doc = json.load(open('$WORK/tr.json'))['results']['sizes']
X = [e for e in d['traceEvents'] if e['ph'] == 'X']
ok = []
for s in doc:
    it = {}
    for e in X:
        if e['args']['size_bytes'] == s['size_bytes']:
            i = e['args']['iteration']
            it[i] = max(it.get(i, 0), e['dur'] * 1000)
    ok.append(abs(sum(it.values()) / len(it) - s['time']['mean']) <= 2)
print(ok)")" = "[True, True, True]"
check "... each iteration's spans overlap on every rank within the clocks' uncertainty" test "$(json_run "$T" "
unc = max(x['uncertainty_ns'] for x in d['otherData']['ranks']) / 1000
X = [e for e in d['traceEvents'] if e['ph'] == 'X']
by = {}
for e in X:
    by.setdefault((e['args']['size_bytes'], e['args']['iteration']), []).append(e)
print(all(len(v) == 3 and max(e['ts'] for e in v) <= min(e['ts'] + e['dur'] for e in v) + 2 * unc + 1 for v in by.values()))")" = True
check "... the document names it" test "$(json_get "$WORK/tr.json" "d['config']['trace'] == '$T'")" = True

# bad input: exit 2, named, and quick (no rank started)
bad() { # bad DESC PATTERN ARGS...
    local desc=$1 pat=$2; shift 2
    local t0=$(date +%s%N)
    run_rc 2 "$WORK/bad.out" timeout 20 "$TP" coll -n 2 "$@"
    local rc=$?
    local ms=$(( ($(date +%s%N) - t0) / 1000000 ))
    if [ $rc -eq 0 ] && grep -q -- "$pat" "$WORK/bad.out"; then ok "refused: $desc"; else not_ok "refused: $desc"; sed 's/^/#   /' "$WORK/bad.out"; fi
}
bad "--op bogus" "--op bogus" --op bogus
bad "--dtype f8" "--dtype f8" --dtype f8
bad "--redop xor" "--redop xor" --redop xor
bad "--algo bruck for allreduce" "--algo bruck" --algo bruck
bad "--repro exact with i32" "--repro exact" --repro exact --dtype i32
bad "--repro exact with allgather" "--repro exact" --repro exact --op allgather
bad "--repro exact with max" "--redop max" --repro exact --redop max
bad "--sizes junk" "--sizes" --sizes 12Q
bad "-n 0" "--ranks" -n 0
bad "--transport rdma" "--transport rdma" --transport rdma
bad "--provider bogus" "provider 'bogus'" --provider bogus
bad "--intra nvlink" "--intra nvlink" --intra nvlink
bad "--shm-stores nt" "--shm-stores nt: auto, cached or stream" --shm-stores nt
bad "--trace in a folder that is not there" "--trace /proc/nope/t.json: folder /proc/nope is not writable" \
    --trace /proc/nope/t.json
bad "--backend mpi without mpirun" "mpirun or srun" --backend mpi --sizes 8
bad "--timeout 0" "--timeout" --timeout 0
bad "stray argument" "unexpected argument" extra
check "a failed run still writes a valid document" bash -c "'$TP' coll -n 2 --backend mpi --sizes 8 --json '$WORK/f.json' >/dev/null 2>&1; /usr/bin/python3 '$SRC/tests/integration/validate.py' '$SCHEMA' '$WORK/f.json'"
check "... saying why" test "$(json_get "$WORK/f.json" "d['status']['ok'], d['status']['exit_code']")" = "False 2"
finish
