#!/usr/bin/env bash
# trainpath plan interval: Young's and Daly's checkpoint intervals and the
# waste at each, as text and as a result document; bad input exits 2.
. "$(dirname "$0")/../lib.sh"

J=$WORK/interval.json
check "plan interval --checkpoint-cost 5m --mtbf 24h" run_rc 0 "$WORK/out" \
    "$TP" plan interval --checkpoint-cost 5m --mtbf 24h --json "$J"
check "... says every 7001 s (Daly), 7200 s (Young)" grep -q "checkpoint every 7001 s (Daly; Young: 7200 s)" "$WORK/out"
check "... valid document with both intervals and wastes" valid_doc "$J"
check "... Young exactly sqrt(2 x 300 x 86400) = 7200 s; Daly's waste the smaller" \
    test "$(json_get "$J" "r['young']['interval']['value'], r['daly']['waste_fraction'] <= r['young']['waste_fraction']")" = "7200.0 True"
check "a restart cost raises the waste" run_rc 0 "$WORK/out2" \
    "$TP" plan interval --checkpoint-cost 5m --mtbf 24h --restart 10m --json "$WORK/r.json"
check "... above the run without" \
    test "$(json_run "$WORK/r.json" "a=r['daly']['waste_fraction']; print(a > $(json_get "$J" "r['daly']['waste_fraction']"))")" = True
check "no --checkpoint-cost: exit 2" run_rc 2 "$WORK/out" "$TP" plan interval --mtbf 24h
check "... naming it" grep -q "\-\-checkpoint-cost: needed" "$WORK/out"
check "--mtbf 0: exit 2" run_rc 2 "$WORK/out" "$TP" plan interval --checkpoint-cost 5m --mtbf 0
check "--mtbf junk: exit 2" run_rc 2 "$WORK/out" "$TP" plan interval --checkpoint-cost 5m --mtbf soon
check "a plan file: not built yet, exit 2, says so" run_rc 2 "$WORK/out" "$TP" plan docs/examples/plan.yaml
check "... says so" grep -q "plan files are not built yet" "$WORK/out"
finish
