#!/usr/bin/env bash
# torchrun/Kubernetes-style launch: RANK, WORLD_SIZE, MASTER_ADDR,
# MASTER_PORT (and LOCAL_RANK) set per process, no launcher; the ranks meet
# at MASTER_ADDR:MASTER_PORT. Also: ranks started with different options
# all exit 2 naming the option.
. "$(dirname "$0")/../lib.sh"

port=$(free_port)
launch() { # launch NAME WORLD ARGS...: start WORLD ranks, wait for all, set RCS
    local name=$1 world=$2; shift 2
    local pids=()
    for r in $(seq 0 $((world - 1))); do
        env RANK=$r WORLD_SIZE=$world LOCAL_RANK=$r LOCAL_WORLD_SIZE=$world MASTER_ADDR=127.0.0.1 MASTER_PORT=$port \
            timeout 120 "$TP" coll "$@" >"$WORK/$name.$r.out" 2>&1 &
        pids+=($!)
    done
    RCS=""
    for p in "${pids[@]}"; do wait "$p"; RCS="$RCS$?"; done
    port=$(free_port)
}

# the full matrix (test_coll auto takes the ranks from the environment)
pids=()
for r in 0 1 2; do
    env RANK=$r WORLD_SIZE=3 MASTER_ADDR=127.0.0.1 MASTER_PORT=$port timeout 300 "${TEST_COLL:?}" auto >"$WORK/tc.$r.out" 2>&1 &
    pids+=($!)
done
RCS=""; for p in "${pids[@]}"; do wait "$p"; RCS="$RCS$?"; done
port=$(free_port)
check "env launch, 3 ranks: every collective x algorithm x dtype x redop (and exact) correct" test "$RCS" = 000 -a "$(grep -c '^ok' "$WORK/tc.0.out")" -gt 300

launch env3 3 --sizes 8,64K,1M --iters 5 --json "$WORK/env3.json"
check "3 ranks from the environment: all exit 0" test "$RCS" = 000
check "... rank 0 wrote the document: 3 ranks, 0 wrong" test "$(json_get "$WORK/env3.json" "d['config']['ranks'], d['config']['launcher'], sum(x['wrong'] for x in r['sizes'])")" = "3 env 0"
# two "hosts" (each rank in its own UTS namespace, so its own host name):
# each host's first rank reads its counters, rank 0 gathers them
if [ "$(id -u)" -eq 0 ] && unshare -u true 2>/dev/null; then
    pids=()
    for r in 0 1; do
        env RANK=$r WORLD_SIZE=2 MASTER_ADDR=127.0.0.1 MASTER_PORT=$port timeout 120 \
            unshare -u sh -c "hostname tphost$r && exec \"\$0\" \"\$@\"" "$TP" coll --sizes 8,64K \
            --iters 5 --json "$WORK/hosts2.json" >"$WORK/hosts2.$r.out" 2>&1 &
        pids+=($!)
    done
    RCS=""; for p in "${pids[@]}"; do wait "$p"; RCS="$RCS$?"; done
    port=$(free_port)
    check "two hosts: both exit 0, the document valid" eval 'test "$RCS" = 00 && valid_doc "$WORK/hosts2.json"'
    check "... rank 0's host's counters in results.counters, the other's in nodes_counters" \
        test "$(json_get "$WORK/hosts2.json" "r['counters']['counters_read'] > 0,
            [(x['host'], x['rank'], x['counters']['counters_read'] > 0) for x in r['nodes_counters']]")" \
        = "True [('tphost1', 1, True)]"
    check "... and the table prints them" grep -q "^counters on tphost1 (rank 1): " "$WORK/hosts2.0.out"
fi
launch env1host 2 --sizes 8 --iters 3 --json "$WORK/env1host.json"
check "one host: no nodes_counters (rank 0 read the host's)" test "$(json_get "$WORK/env1host.json" "'counters' in r, 'nodes_counters' in r")" = "True False"
for op in reduce-scatter allgather alltoall; do
    launch "env-$op" 2 --op "$op" --sizes 8-16K --iters 3 --json "$WORK/env-$op.json"
    check "env launch, $op: 0 wrong" test "$RCS" = 00 -a "$(json_get "$WORK/env-$op.json" "sum(x['wrong'] for x in r['sizes'])")" = 0
done

# rank 1's clock runs 5 s ahead (test hook): arrival skew is measured on
# rank 0's clock through the offsets estimated at bootstrap, so it stays small
pids=()
for r in 0 1; do
    env RANK=$r WORLD_SIZE=2 MASTER_ADDR=127.0.0.1 MASTER_PORT=$port TP_CLOCK_SKEW_NS=$((r * 5000000000)) \
        timeout 60 "$TP" coll --sizes 8,64K --iters 50 --json "$WORK/skew.$r.json" >"$WORK/skew.$r.out" 2>&1 &
    pids+=($!)
done
RCS=""; for p in "${pids[@]}"; do wait "$p"; RCS="$RCS$?"; done
port=$(free_port)
check "a rank whose clock is 5 s off: the run works" test "$RCS" = 00
check "... and its arrival skew is corrected by the clock offset (p50 < 1 ms)" test "$(json_get "$WORK/skew.0.json" "max(x['arrival_skew']['p50'] for x in r['sizes']) < 1e6")" = True

# rank 1 started with other sizes
pids=()
for r in 0 1; do
    sizes=8; [ $r -eq 1 ] && sizes=16
    env RANK=$r WORLD_SIZE=2 MASTER_ADDR=127.0.0.1 MASTER_PORT=$port timeout 60 "$TP" coll --sizes $sizes --iters 2 >"$WORK/odd.$r.out" 2>&1 &
    pids+=($!)
done
RCS=""; for p in "${pids[@]}"; do wait "$p"; RCS="$RCS$?"; done
check "ranks started with different --sizes: both exit 2" test "$RCS" = 22
check "... both name the option" test "$(cat "$WORK"/odd.*.out | grep -c -- '--sizes')" -ge 2
finish
