#!/usr/bin/env bash
# --repro exact: allreduce sums that are bitwise the same whatever the rank
# count, algorithm, chunking and timing. Inputs (--repro-check): each
# element is the sum of the same 840 random floats, shared among the ranks;
# the sweep also checks the result against an independent exact sum
# (#wrong). Plain mode is shown to differ across rank counts, so the
# comparison can fail.
. "$(dirname "$0")/../lib.sh"

sha() { json_get "$1" "r['sizes'][0]['result_sha256']"; }
wrong() { json_get "$1" "sum(x['wrong'] for x in r['sizes'])"; }
sha_wrong() { json_get "$1" "r['sizes'][0]['result_sha256'], sum(x['wrong'] for x in r['sizes'])"; }

for dt in f32 f64 bf16 f16; do
    ref="" same=1 bad=0 runs=0
    for nr in 2 3 4 8; do
        for algo in ring rabenseifner dbtree binomial; do
            # the full cross product for f32; two rank counts for the others
            [ "$dt" != f32 ] && [ "$nr" -gt 3 ] && continue
            J=$WORK/x-$dt-$nr-$algo.json
            if ! run_rc 0 "$WORK/x.out" timeout 120 "$TP" coll -n "$nr" --repro exact --repro-check \
                --dtype "$dt" --sizes 6K --iters 2 --warmup 1 --algo "$algo" --chunk 1K -q --json "$J"; then
                bad=$((bad + 1)); continue
            fi
            runs=$((runs + 1))
            read -r s w <<<"$(sha_wrong "$J")"
            [ -z "$ref" ] && ref=$s
            [ "$s" = "$ref" ] || { same=0; echo "# $dt n=$nr $algo: $s != $ref"; }
            [ "$w" = 0 ] || { bad=$((bad + 1)); echo "# $dt n=$nr $algo: $w wrong elements"; }
        done
    done
    check "exact $dt: $runs runs over rank counts and algorithms give one SHA-256, all correctly rounded" \
        test "$same" -eq 1 -a "$bad" -eq 0 -a "$runs" -gt 1
done

# 20 runs (8 under the sanitizers) with random delays before every
# iteration, random algorithm and chunk
ref="" same=1 bad=0
algos=(ring rabenseifner dbtree binomial)
chunks=(64 1K 4K 256K)
delayed=20
[ "$SANITIZED" = 1 ] && delayed=8
for i in $(seq "$delayed"); do
    a=${algos[$((RANDOM % 4))]} c=${chunks[$((RANDOM % 4))]}
    J=$WORK/d$i.json
    if ! run_rc 0 "$WORK/d.out" timeout 120 "$TP" coll -n 3 --repro exact --repro-check --sizes 6K \
        --iters 3 --warmup 0 --inject-delay 2ms --algo "$a" --chunk "$c" -q --json "$J"; then
        bad=$((bad + 1)); continue
    fi
    s=$(sha "$J"); [ -z "$ref" ] && ref=$s
    [ "$s" = "$ref" ] || { same=0; echo "# run $i ($a, chunk $c): $s"; }
done
check "exact: $delayed runs with random delays, algorithms and chunks: one SHA-256" test "$same" -eq 1 -a "$bad" -eq 0
check "... the delays show as arrival skew" test "$(json_get "$WORK/d1.json" "r['sizes'][0]['arrival_skew']['max'] > 1e5")" = True
run_rc 0 "$WORK/h.out" env TP_COLL_HOST_SPLIT=2 timeout 120 "$TP" coll -n 4 --repro exact --repro-check --sizes 6K --iters 2 -q --json "$WORK/h.json"
check "exact: the two-level schedule (two hosts, test hook) gives it too" test "$(sha "$WORK/h.json")" = "$(sha "$WORK/x-f32-2-ring.json")"
run_rc 0 "$WORK/avg.out" timeout 120 "$TP" coll -n 3 --repro exact --redop avg --dtype bf16 --sizes 8-64K --iters 2 -q --json "$WORK/avg.json"
check "exact avg bf16: rounded once, 0 wrong" test "$(wrong "$WORK/avg.json")" = 0

# plain mode: deterministic for one configuration, not across rank counts
for nr in 2 3; do
    run_rc 0 "$WORK/p$nr.out" timeout 120 "$TP" coll -n "$nr" --repro-check --sizes 6K --iters 2 --algo ring -q --json "$WORK/p$nr.json"
done
run_rc 0 "$WORK/p3b.out" timeout 120 "$TP" coll -n 3 --repro-check --sizes 6K --iters 2 --algo ring --inject-delay 2ms -q --json "$WORK/p3b.json"
check "plain: the same configuration twice (with delays) gives the same bits" test "$(sha "$WORK/p3.json")" = "$(sha "$WORK/p3b.json")"
check "plain: 2 and 3 ranks differ (the check can fail)" test "$(sha "$WORK/p2.json")" != "$(sha "$WORK/p3.json")"
check "plain: and differ from the exact sum" test "$(sha "$WORK/p2.json")" != "$(sha "$WORK/x-f32-2-ring.json")"
finish
