#!/usr/bin/env bash
# trainpath coll over libfabric (--transport ofi), for each provider this
# host offers (tcp;ofi_rxm and shm; one fi_info does not list is skipped):
# every algorithm and collective bit-exact, --repro exact equal to the TCP
# transport's result, the provider in the provenance, a bad provider
# refused (exit 2, named), and a rank killed mid-run ending the run
# (exit 1, a rank named) within the timeout.
. "$(dirname "$0")/../lib.sh"

command -v fi_info >/dev/null || skip_all "fi_info not installed"
PROVS=()
for p in 'tcp;ofi_rxm' shm; do
    if fi_info -p "$p" -t FI_EP_RDM >/dev/null 2>&1; then PROVS+=("$p"); else echo "# provider $p not offered here: skipped"; fi
done
[ ${#PROVS[@]} -gt 0 ] || skip_all "no libfabric provider among tcp;ofi_rxm, shm"

wrong() { json_get "$1" "sum(x['wrong'] for x in r['sizes'])"; }
shas() { json_get "$1" "[x.get('result_sha256') for x in r['sizes']]"; }
same_shas() { # same_shas GOT WANT: equal, and not missing; shows both when not
    [ "$1" = "$2" ] && [[ "$1" != *None* ]] && [ "$1" != "[]" ] && return 0
    echo "# got:  $1"; echo "# want: $2"; return 1
}

# the reference: the exact result over kernel TCP (--chunk 1M: 256 KiB of
# floats are 3 MiB of 48-byte fixed-point elements, so the reducing messages
# come in several pieces, cut at element boundaries)
# (under the sanitizers 100 KiB is the largest: 1.2 MB in two pieces)
REPRO_SIZES=8,100K,256K BIG=3M
[ "$SANITIZED" = 1 ] && REPRO_SIZES=8,100K BIG=1M
REPRO=(--repro exact --repro-check --sizes "$REPRO_SIZES" --chunk 1M --iters 2)
run_rc 0 "$WORK/ref.out" timeout 300 "$TP" coll -n 3 --intra fabric --transport tcp "${REPRO[@]}" --json "$WORK/ref.json"
check "tcp reference for --repro exact runs" test $? -eq 0
REF=$(shas "$WORK/ref.json")

i=0
for p in "${PROVS[@]}"; do
    i=$((i + 1))
    F=(--intra fabric --transport ofi --provider "$p")
    for algo in ring rabenseifner recdoubling dbtree binomial; do
        J=$WORK/ar-$i-$algo.json
        run_rc 0 "$WORK/ar.out" timeout 120 "$TP" coll -n 3 "${F[@]}" --algo "$algo" --sizes 8,4K,64K,$BIG --iters 3 --json "$J"
        check "$p: allreduce --algo $algo, 3 ranks: runs, 0 wrong" test $? -eq 0 -a "$(wrong "$J")" = 0
    done
    J=$WORK/ar-$i-ring.json
    check "$p: provenance records the provider" test "$(json_get "$J" "d['provenance']['comm']['fabric']['provider']")" = "$p"
    check "... and an ofi channel to each peer" test "$(json_get "$J" "d['provenance']['comm']['channels']")" = "{'shm': 0, 'tcp': 0, 'ofi': 2}"
    for op in reduce-scatter allgather broadcast reduce alltoall sendrecv; do
        J=$WORK/$op-$i.json
        run_rc 0 "$WORK/op.out" timeout 120 "$TP" coll -n 3 "${F[@]}" --op "$op" --root 1 --dtype bf16 --sizes 8,4K,64K,$BIG --iters 3 --json "$J"
        check "$p: --op $op, 3 ranks: runs, 0 wrong" test $? -eq 0 -a "$(wrong "$J")" = 0
    done
    for nr in 2 5; do # (not $n: lib.sh counts the tests in it)
        J=$WORK/n$nr-$i.json
        run_rc 0 "$WORK/n.out" timeout 300 "$TP" coll -n "$nr" "${F[@]}" --sizes 8,64K,1M --iters 3 --json "$J"
        check "$p: allreduce, $nr ranks: runs, 0 wrong" test $? -eq 0 -a "$(wrong "$J")" = 0
    done
    J=$WORK/repro-$i.json
    run_rc 0 "$WORK/repro.out" timeout 300 "$TP" coll -n 3 "${F[@]}" "${REPRO[@]}" --json "$J"
    check "$p: --repro exact runs" test $? -eq 0
    got=$(shas "$J")
    check "... result_sha256 equals the tcp transport's" same_shas "$got" "$REF"

    # a rank killed mid-run: the others stop, naming a rank
    "$TP" coll -n 3 "${F[@]}" --sizes 4M --iters 20000 --warmup 1 --timeout 10s --json "$WORK/kill-$i.json" >"$WORK/kill-$i.out" 2>&1 &
    CPID=$!
    PIDS+=("$CPID")
    for _ in $(seq 100); do [ "$(pgrep -P "$CPID" | wc -l)" -ge 2 ] && grep -q "trainpath coll" "$WORK/kill-$i.out" && break; sleep 0.1; done
    sleep 0.5
    victim=$(pgrep -P "$CPID" | tail -1)
    t0=$(date +%s)
    kill -9 "$victim"
    wait "$CPID"; rc=$?
    dt=$(( $(date +%s) - t0 ))
    check "$p: rank killed with SIGKILL: the run exits 1" test "$rc" -eq 1
    # a peer lost on this host is found by its pid (the channel's liveness
    # check), at once; one lost without a reset and not found so would be
    # found by the 10 s idle deadline; 5 s more for the teardown and
    # whole-second rounding
    check "... within the timeout (${dt}s <= 10s + 5s)" test "$dt" -le 15
    check "... naming a rank and its host" grep_q "rank [0-9]+ on $(hostname)" "$WORK/kill-$i.out"
    check "... the document is valid and says why" bash -c "/usr/bin/python3 '$SRC/tests/integration/validate.py' '$SCHEMA' '$WORK/kill-$i.json' && grep -q '\"ok\": false' '$WORK/kill-$i.json'"
done

run_rc 2 "$WORK/bad.out" timeout 20 "$TP" coll -n 2 --transport ofi --provider no-such-provider --sizes 8
check "a bad provider name exits 2" test $? -eq 0
check "... naming it" grep_q "provider 'no-such-provider'" "$WORK/bad.out"

# libfabric is loaded on first use (src/fabric/ofi_lib.c): where it cannot
# be (here a file of that name that is no library, found first through
# LD_LIBRARY_PATH), an ofi run says so and exits 2, and a run of the kernel
# transports does not notice
mkdir -p "$WORK/nofab" && : >"$WORK/nofab/libfabric.so.1"
run_rc 2 "$WORK/nofab.out" env LD_LIBRARY_PATH="$WORK/nofab" timeout 20 "$TP" coll -n 2 \
    --intra fabric --transport ofi --provider "${PROVS[0]}" --sizes 8 --json "$WORK/nofab.json"
check "libfabric that cannot be loaded: an ofi run exits 2" test $? -eq 0
check "... saying libfabric could not be loaded, and why" grep_q "libfabric could not be loaded: .*libfabric.so.1" "$WORK/nofab.out"
check "... with a valid document saying so" bash -c "/usr/bin/python3 '$SRC/tests/integration/validate.py' '$SCHEMA' '$WORK/nofab.json' && grep -q 'libfabric could not be loaded' '$WORK/nofab.json'"
run_rc 0 "$WORK/nofab-tcp.out" env LD_LIBRARY_PATH="$WORK/nofab" timeout 60 "$TP" coll -n 2 --intra fabric --sizes 8
check "... while a tcp run in the same environment works" test $? -eq 0
finish
