#!/usr/bin/env bash
# trainpath validate --simulate: the fleet triage against model fleets. The
# plan is printed before the rounds (stages, rounds, the estimate); a slow
# node, a slow link and a collective-only fault among 1,024 nodes are named
# within the isolation bound and nothing else is; --budget picks the deepest
# tier that fits and refuses one no tier fits; the result document is valid
# and written for a refused run too, saying the noise model the figures
# were drawn from; the evict-or-localise decision is in the document and
# said, and flips with the restart and the spares (none without
# suspects); bad fleet files exit 2 naming FILE:LINE:COL and the key; the
# tier options are refused outside the simulator.
. "$(dirname "$0")/../lib.sh"

EX=$SRC/docs/examples/fleet.yaml
expect_bad() { # expect_bad DESC FILE-TEXT WANT-REGEX: refused, exit 2, the message
    printf "$2" >"$WORK/bad.yaml"
    run_rc 2 "$WORK/bad.out" "$TP" validate --simulate "$WORK/bad.yaml" && grep -Eq "$3" "$WORK/bad.out" ||
        { sed 's/^/#   /' "$WORK/bad.out"; return 1; }
}
J=$WORK/sim.json
check "validate --simulate docs/examples/fleet.yaml: exit 0 (every planted fault named)" \
    run_rc 0 "$WORK/out" "$TP" validate --simulate "$EX" --json "$J"
sed 's/^/# /' "$WORK/out"
check "... the plan first: the screen tier, its stages and the estimate" \
    grep -Eq "^plan: the screen tier for 1024 nodes \(1 never join\): gang 1, ring [23], groups 1, match 4 = [89] rounds, about .*; isolation at most 33 rounds more" "$WORK/out"
check "... the plan line before any named line" \
    test "$(grep -n '^plan:' "$WORK/out" | cut -d: -f1)" = 1
check "... node 17 named, node 600 (collectives only) named, a link named" \
    test "$(grep -c '^named: node 17: \|^named: node 600: \|^named: link [0-9]*-[0-9]*: ' "$WORK/out")" = 3
check "... a valid result document" valid_doc "$J"
check "... 3 of 3 planted named, none falsely, within the bound" \
    test "$(json_run "$J" "s = r['simulated']; print(s['true_named'], s['false_named'], s['rounds_to_name'] <= r['isolation_bound'])")" = "3 0 True"
check "... the node that never joined is missing, the one that died lost" \
    test "$(json_get "$J" "sorted((v['node'], v['status']) for v in r['nodes_detail'] if v['status'] in ('missing', 'lost'))")" = "[(8, 'lost'), (44, 'missing')]"
check "... a slow node's verdict: hardware, drain, with the evidence" \
    test "$(json_get "$J" "[(v['cause'], v['action'], v['evidence']['test'] != '') for v in r['nodes_detail'] if v['node'] == 17]")" = "[('hardware', 'drain', True)]"
# the noise model is echoed: fleet.yaml's Gaussian alone; fleet-noisy.yaml's
# spikes, congestion and drift (docs/fleet.md, "The noise model")
noise_of() { json_get "$1" "tuple(r['simulated']['noise_model'][k] for k in ('noise', 'test_noise', 'spikes', 'congestion', 'leaf_size', 'drift'))"; }
check "... its noise model echoed: no spikes, congestion or drift" test "$(noise_of "$J")" = \
    "(0.05, 0.0, {'rate': 0.0, 'size': 0.0}, {'rate': 0.0, 'size': 0.0}, 32, 0.0)"
"$TP" validate --simulate "$SRC/docs/examples/fleet-noisy.yaml" -q --json "$WORK/noisy.json" >"$WORK/out" 2>&1
rc=$?
check "docs/examples/fleet-noisy.yaml: run to the end (exit 0 or 1)" test "$rc" -le 1
check "... its noise model echoed" test "$(noise_of "$WORK/noisy.json")" = \
    "(0.08, 0.05, {'rate': 0.01, 'size': 0.5}, {'rate': 0.05, 'size': 0.1}, 32, 0.05)"
check "... a valid result document" valid_doc "$WORK/noisy.json"

# --min-effect: the naming threshold; past the planted faults (20-30 %)
# none is named, and the run says it missed them
check "--min-effect 50: exit 1, the 20-30 % faults missed" run_rc 1 "$WORK/out" "$TP" validate \
    --simulate "$EX" --min-effect 50 --json "$WORK/me.json"
check "... nothing named, the threshold recorded" test "$(json_run "$WORK/me.json" \
    "print(len(r['named']), d['config']['min_effect'])")" = "0 0.5"
check "... and its document agrees: not ok, exit_code 1, saying what was missed" \
    test "$(json_get "$WORK/me.json" "d['status']['ok'], d['status']['exit_code'], d['status']['message']")" = \
    "False 1 3 of 3 planted faults missed, 0 named falsely"
check "... said after the verdicts" grep -q "^fail: 3 of 3 planted faults missed" "$WORK/out"
check "... report keeps its figures (a verdict's failure, measured to the end): recall 0, run.ok 0" \
    eval "'$TP' report prometheus '$WORK/me.json' --out '$WORK/me.prom' >/dev/null &&
        grep -q '^trainpath_simulate_recall{.*} 0$' '$WORK/me.prom' && grep -q '^trainpath_run_ok{.*} 0$' '$WORK/me.prom'"
# a fault planted twice on one node (or link) is one fault: refused, named
# (was "-1 named falsely", precision 2)
check "a node planted twice: exit 2, named" expect_bad x \
    'nodes: 8\nslow_nodes: [{node: 3, severity: 50%%}, {node: 3, severity: 40%%}]\n' \
    "slow_nodes: node 3 is planted twice \(entries 1 and 2\)"
check "a link planted twice, its ends swapped: exit 2, named" expect_bad x \
    'nodes: 8\nslow_links: [{a: 1, b: 2, severity: 50%%}, {a: 2, b: 1, severity: 40%%}]\n' \
    "slow_links: link 2-1 is planted twice \(entries 1 and 2\)"
# a fleet no node of which was judged: a failure, not a clean bill
printf 'nodes: 2\nmissing: [0, 1]\n' >"$WORK/gone.yaml"
printf 'nodes: 3\nmissing: [0]\ndies: [{node: 1, round: 1}, {node: 2, round: 1}]\n' >"$WORK/died.yaml"
for f in gone died; do
    check "$f.yaml (every node died or never joined): exit 1" \
        run_rc 1 "$WORK/out" "$TP" validate --simulate "$WORK/$f.yaml" --json "$WORK/$f.json"
    check "... the document says so" test "$(json_get "$WORK/$f.json" \
        "d['status']['ok'], d['status']['exit_code'], 'died or never joined' in d['status']['message']")" = "False 1 True"
done
check "--min-effect 0: exit 2" run_rc 2 "$WORK/out" "$TP" validate --simulate "$EX" --min-effect 0
check "... the range said" grep -q -- "--min-effect: '0' is out of range 1..900" "$WORK/out"

# a fabric (docs/fleet.md, "Switches and uplinks"): a slow uplink is named
# as leaf 5's uplinks, not as the 32 nodes behind it, which are serviced,
# not drained
printf 'nodes: 1024\nnoise: 8%%\ntest_noise: 5%%\nseed: 1\nfabric: {per_leaf: 32, spines: 4}\nslow_uplinks: [{leaf: 5, spine: 2, severity: 15%%}]\n' >"$WORK/fabric.yaml"
check "a slow uplink on a fabric: exit 0 (named, nothing else)" \
    run_rc 0 "$WORK/out" "$TP" validate --simulate "$WORK/fabric.yaml" --json "$WORK/fabric.json"
check "... named: the uplinks of leaf5, and only them" test "$(json_run "$WORK/fabric.json" \
    "print([(e['kind'], e['leaf']) for e in r['named']], r['simulated']['true_named'], r['simulated']['false_named'])")" = \
    "[('uplink', 'leaf5')] 1 0"
check "... the 32 nodes behind it: status uplink, action service, none drained" test "$(json_run "$WORK/fabric.json" \
    "v = [x for x in r['nodes_detail'] if 160 <= x['node'] < 192]; print(len(v), {x['status'] for x in v}, {x['action'] for x in v}, r['counts']['slow'])")" = \
    "32 {'uplink'} {'service'} 0"
check "... said" grep -q "^named: the uplinks of leaf5: its pairs across them" "$WORK/out"
check "... a valid result document" valid_doc "$WORK/fabric.json"
check "a slow switch past the fabric: exit 2, its place named" expect_bad x \
    'nodes: 64\nfabric: {per_leaf: 32, spines: 2}\nslow_switches: [{leaf: 2, severity: 15%%}]\n' \
    "slow_switches\[0\]: leaf 2: the fabric has leaves 0 to 1"

# a rail-optimised fabric (8 rails: NIC r of each node to its group's
# rail-r leaf, leaf g * 8 + r): group 3's rail-5 leaf slow is named as
# leaf29 on rail 5 (3 * 8 + 5), its 32 nodes (96-127) serviced; node 600's
# rail-2 cable as a cable on rail 2
printf 'nodes: 1024\nnoise: 8%%\ntest_noise: 5%%\nseed: 1\nfabric: {per_leaf: 32, spines: 4, rails: 8}\nslow_switches: [{leaf: 3, rail: 5, severity: 15%%}]\nbad_cables: [{node: 600, rail: 2, severity: 15%%}]\n' >"$WORK/rail.yaml"
check "a slow leaf on one of 8 rails and a bad cable on another: exit 0 (both named, nothing else)" \
    run_rc 0 "$WORK/out" "$TP" validate --simulate "$WORK/rail.yaml" --json "$WORK/rail.json"
check "... named: leaf29 on rail 5, node 600's cable on rail 2, and only them" test "$(json_run "$WORK/rail.json" \
    "print(sorted((e['kind'], e.get('leaf', e.get('node')), e['rail']) for e in r['named']), r['simulated']['false_named'])")" = \
    "[('cable', 600, 2), ('switch', 'leaf29', 5)] 0"
check "... the 32 nodes behind it: status switch, action service" test "$(json_run "$WORK/rail.json" \
    "v = [x for x in r['nodes_detail'] if 96 <= x['node'] < 128]; print(len(v), {x['status'] for x in v}, {x['action'] for x in v})")" = \
    "32 {'switch'} {'service'}"
check "... said, with the rail" grep -q "^named: leaf switch leaf29 on rail 5 (its group's 8 rails halved down to it" "$WORK/out"
check "... a valid result document" valid_doc "$WORK/rail.json"
check "a rail past the fabric: exit 2, its place named" expect_bad x \
    'nodes: 64\nfabric: {per_leaf: 32, spines: 2, rails: 8}\nslow_switches: [{leaf: 1, rail: 8, severity: 15%%}]\n' \
    "bad.yaml:3:33: slow_switches\[0\]\.rail: rail 8: the fabric has rails 0 to 7"
check "rails: 0: exit 2, its place named" expect_bad x \
    'nodes: 64\nfabric: {per_leaf: 32, spines: 2, rails: 0}\n' \
    "bad.yaml:2:42: fabric\.rails: .*must be between 1 and 64"

# a clean fleet of 4096 nodes: nothing named, exit 0
printf 'nodes: 4096\nseed: 3\n' >"$WORK/clean.yaml"
check "a clean fleet of 4096: exit 0" run_rc 0 "$WORK/out" "$TP" validate --simulate "$WORK/clean.yaml" --json "$WORK/c.json"
check "... nothing named, every node passed" \
    test "$(json_get "$WORK/c.json" "len(r['named']), r['counts']['pass']")" = "0 4096"

# a link no round of the prolog tier crosses: missed, said so, exit 1
printf 'nodes: 64\nseed: 5\nslow_links: [{a: 3, b: 40, severity: 50%%}]\n' >"$WORK/hidden.yaml"
"$TP" validate --simulate "$WORK/hidden.yaml" --tier prolog --json "$WORK/h.json" >"$WORK/h.out" 2>&1
rc=$?
crossed=$(json_get "$WORK/h.json" "r['simulated']['planted'][0]['exercised']")
if [ "$crossed" = False ]; then
    check "a link the prolog tier does not cross: exit 1, missed" test "$rc" = 1
    check "... said: no round of the tier crossed it" grep -q "^missed: link 3-40 (50 % slower; no round of the tier crossed it)" "$WORK/h.out"
    check "... and not blamed on its ends" test "$(json_get "$WORK/h.json" "len(r['named'])")" = 0
else
    check "a link the prolog tier crosses (seed 5): named, exit 0" test "$rc" = 0
fi

# --budget: the deepest tier that fits
check "--budget 10m for 1024 nodes: exit 0" run_rc 0 "$WORK/out" "$TP" validate --simulate "$EX" --budget 10m -q --json "$WORK/b.json"
check "... picks screen (full needs hours)" test "$(json_get "$WORK/b.json" "r['tier'], d['config']['tier']")" = "screen screen"
# the prolog tier has no groups pass: a fault only collectives show is
# beyond it without a baseline of the gang, and the run says so (exit 1)
check "--budget 190s: the prolog tier, exit 1" run_rc 1 "$WORK/out" "$TP" validate --simulate "$EX" --budget 190s
check "... said first" test "$(head -1 "$WORK/out" | cut -c1-45)" = "--budget 3.2 min: the prolog tier fits (about"
check "... the collective-only fault missed, said" grep -q "^missed: node 600 (20 % slower)" "$WORK/out"
check "--budget 20s: exit 2, naming what the prolog tier needs" \
    run_rc 2 "$WORK/out" "$TP" validate --simulate "$EX" --budget 20s --json "$WORK/fail.json"
check "... the message" grep -q "the prolog tier needs .* for 1023 nodes" "$WORK/out"
check "... a failed result document" test "$(json_get "$WORK/fail.json" "d['status']['ok'], d['status']['exit_code']")" = "False 2"
check "... valid" valid_doc "$WORK/fail.json"
printf 'nodes: 512\nseed: 3\n' >"$WORK/clean512.yaml"
check "--tier full for 512: exit 0" \
    run_rc 0 "$WORK/out" "$TP" validate --simulate "$WORK/clean512.yaml" --tier full -q --json "$WORK/full.json"
check "... the full tier's rounds: the gang, the groups, 511 of pairs" \
    test "$(json_get "$WORK/full.json" "r['rounds']['gang'], r['rounds']['groups'], r['rounds']['pairs']")" = "1 1 511"
check "--json - : the document alone on stdout" \
    bash -c '"$1" validate --simulate "$2" --json - 2>/dev/null | python3 -c "import json,sys; d=json.load(sys.stdin); assert d[\"command\"] == \"validate simulate\""' _ "$TP" "$EX"

# evict or localise (docs/fleet.md): the decision when the screen ends
# with suspects, in the document and said after the verdicts; it flips
# with the restart and the spares; none without suspects
check "the example's decision: isolate, said after the verdicts" \
    test "$(json_get "$J" "r['decision']['choice'], r['decision']['rounds_left_bound'], r['decision']['round_s_measured']")" = "isolate 33 True"
"$TP" validate --simulate "$EX" >"$WORK/out" 2>&1
check "... said: a decision: line after the verdicts: line" \
    test "$(grep -n -E '^(verdicts|decision): ' "$WORK/out" | cut -d: -f2 | tr '\n' ' ')" = "verdicts decision "
evict_fleet() { # evict_fleet NAME EXTRA-KEYS: a 256-node fleet, one slow node
    printf "nodes: 256\nseed: 2\nslow_nodes: [{node: 17, severity: 25%%}]\n$2" >"$WORK/$1.yaml"
    run_rc 0 "$WORK/$1.out" "$TP" validate --simulate "$WORK/$1.yaml" --json "$WORK/$1.json"
}
choice_of() { json_get "$WORK/$1.json" "r['decision']['choice'], r['decision']['spares'], r['decision']['restart_s']"; }
check "a 1 min restart, 64 spares: exit 0" evict_fleet ev1 'restart: 1m\nspare_nodes: 64\n'
check "... evict" test "$(choice_of ev1)" = "evict 64 60.0"
check "... said" grep -q "^decision: evict: evicting the [0-9]* suspect nodes now loses about .* a spare for each" "$WORK/ev1.out"
check "... a valid result document" valid_doc "$WORK/ev1.json"
check "a 10 min restart, 64 spares: exit 0" evict_fleet ev2 'restart: 10m\nspare_nodes: 64\n'
check "... isolate" test "$(choice_of ev2)" = "isolate 64 600.0"
check "a 1 min restart, no spare, the evicted away 2 days: exit 0" evict_fleet ev3 'restart: 1m\nevict_return: 2d\n'
check "... isolate" test "$(choice_of ev3)" = "isolate 0 60.0"
check "... said: the sound suspects with no spare" grep -q "sound ones with no spare, away 2.0 d" "$WORK/ev3.out"
printf 'nodes: 256\nnoise: 0.1%%\n' >"$WORK/quiet.yaml"
check "no suspects (a quiet clean fleet): exit 0" \
    run_rc 0 "$WORK/quiet.out" "$TP" validate --simulate "$WORK/quiet.yaml" --json "$WORK/quiet.json"
check "... no isolation round, decision null" \
    test "$(json_get "$WORK/quiet.json" "r['rounds_isolation'], r['decision']")" = "0 None"
check "... nothing said" test "$(grep -c '^decision:' "$WORK/quiet.out")" = 0
check "a negative MTBF: exit 2, FILE:LINE:COL and the key" \
    expect_bad x 'nodes: 8\nmtbf_per_node: -5h\n' "bad.yaml:2:16: mtbf_per_node: '-5h' must be between 1 min and 1000 y"
check "spares not a whole number: exit 2, named" \
    expect_bad x 'nodes: 8\nspare_nodes: 2.5\n' "bad.yaml:2:14: spare_nodes: '2.5' is not a whole number"

# bad input: exit 2, named
check "a node past the fleet: FILE:2:21: slow_nodes[0].node" \
    expect_bad x 'nodes: 8\nslow_nodes: [{node: 8, severity: 20%%}]\n' "bad.yaml:2:21: slow_nodes\[0\].node: node 8: the fleet has nodes 0 to 7"
check "an unknown key: the nearest named" \
    expect_bad x 'nodes: 8\nslow_node: []\n' "bad.yaml:2:1: slow_node: unknown key \(did you mean slow_nodes"
check "no nodes: required" expect_bad x 'noise: 5%%\n' "bad.yaml:1:1: nodes: required"
check "a spike rate past 100 %: FILE:2:16: spikes.rate" expect_bad x \
    'nodes: 8\nspikes: {rate: 150%%, size: 50%%}\n' "bad.yaml:2:16: spikes.rate: '150%' must be between 0 and 100%"
check "a missing file: exit 2, named" run_rc 2 "$WORK/out" "$TP" validate --simulate "$WORK/nope.yaml"
check "... named" grep -q "nope.yaml" "$WORK/out"
check "--tier deep: exit 2, the tiers listed" run_rc 2 "$WORK/out" "$TP" validate --simulate "$EX" --tier deep
check "... listed" grep -q "tiers: prolog, screen, full" "$WORK/out"
check "--tier and --budget together: exit 2" run_rc 2 "$WORK/out" "$TP" validate --simulate "$EX" --tier full --budget 1h
# the same options on a real run: refused before anything runs
check "validate --tier deep (a real run): exit 2" run_rc 2 "$WORK/out" "$TP" validate --tier deep --out "$WORK/r1"
check "... naming the tiers" grep -q -- "--tier deep: prolog, screen or full" "$WORK/out"
check "... nothing ran" test ! -e "$WORK/r1/check.json"
check "validate --tier full --budget 1h: exit 2" run_rc 2 "$WORK/out" "$TP" validate --tier full --budget 1h
check "validate --on-fail drain outside Slurm: exit 2" run_rc 2 "$WORK/out" env -u SLURM_JOB_ID "$TP" validate --on-fail drain
check "... saying why" grep -q "not under Slurm (SLURM_JOB_ID is not set)" "$WORK/out"
check "validate --on-fail reboot: exit 2" run_rc 2 "$WORK/out" "$TP" validate --on-fail reboot
check "... naming the actions" grep -q -- "--on-fail reboot: none or drain" "$WORK/out"
# a budget below the prolog tier's estimate: known once the group is
# formed (its size), refused by every rank alike, with the minimum
port=$(free_port)
for r in 0 1; do
    env RANK=$r WORLD_SIZE=2 MASTER_ADDR=127.0.0.1 MASTER_PORT=$port timeout 60 "$TP" validate \
        --budget 2s --out "$WORK/b2" >"$WORK/budget.$r" 2>&1 &
    bpid[$r]=$!
done
wait "${bpid[0]}"; brc0=$?; wait "${bpid[1]}"; brc1=$?
check "an allocation of 2 with --budget 2s: both ranks exit 2" test "$brc0$brc1" = 22
check "... saying the minimum" grep -Eq -- "--budget 2.00 s: the prolog tier needs .* (s|min) for 2 nodes" "$WORK/budget.0"
check "... nothing measured" test ! -e "$WORK/b2/fleet.json"
check "--simulate with --profile: exit 2" run_rc 2 "$WORK/out" "$TP" validate --simulate "$EX" --profile quick
check "--matchings 0: exit 2" run_rc 2 "$WORK/out" "$TP" validate --simulate "$EX" --matchings 0
check "--help lists --simulate, --tier, --budget" \
    bash -c '"$1" validate --help | grep -q -- "--simulate FLEET" && "$1" validate --help | grep -q -- "--budget DUR"' _ "$TP"
finish
