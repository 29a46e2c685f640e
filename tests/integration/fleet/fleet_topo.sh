#!/usr/bin/env bash
# validate --topology FILE on an allocation (docs/fleet.md, "Switches and
# uplinks"): the file is read before any node joins (a bad one: exit 2,
# its line and column, nothing run); every rank finds its node in it by
# its Slurm name, rank 0 says so in the plan and the tier runs to the end
# with the leaves known; a node the file does not have fails every rank
# alike (exit 2, naming it, nothing measured). Three ranks of the env
# launcher on loopback, each with its own SLURMD_NODENAME. What the
# topology changes in the judgement is the simulator's to show
# (fleet_sim, test_triage): on loopback no switch can be slow.
. "$(dirname "$0")/../lib.sh"

printf 'SwitchName=leaf0 Nodes=n[0-1]\nSwitchName=leaf1 Nodes=n2\nSwitchName=spine Switches=leaf[0-1]\n' \
    >"$WORK/topology.conf"
printf 'SwitchName=leaf0 Nodes=n[0-1]\nSwitchName=spine Switches=leaf[0-2]\n' >"$WORK/bad.conf"
printf 'SwitchName=leaf0 Nodes=n[0-1]\nSwitchName=spine Switches=leaf0\n' >"$WORK/short.conf"

check "--topology with a switch never defined: exit 2" \
    run_rc 2 "$WORK/out" "$TP" validate --only check -q --topology "$WORK/bad.conf" --out "$WORK/r0"
check "... its line and column, and the switch" grep -Eq -- "--topology: .*bad.conf:2:[0-9]+: .*switch leaf1 is never defined" "$WORK/out"
check "... nothing ran" test ! -e "$WORK/r0/check.json"
check "--topology with --simulate: exit 2" \
    run_rc 2 "$WORK/out" "$TP" validate --simulate "$SRC/docs/examples/fleet.yaml" --topology "$WORK/topology.conf"

# run3 FILE OUT: three ranks, each its own SLURMD_NODENAME; their exit codes in $WORK/rcs
run3() {
    local port r
    port=$(free_port)
    for r in 0 1 2; do
        env RANK=$r WORLD_SIZE=3 MASTER_ADDR=127.0.0.1 MASTER_PORT=$port SLURMD_NODENAME=n$r \
            timeout 240 "$TP" validate --only net --tier prolog --seed 1 --min-effect 900 \
            --topology "$1" --out "$2" "${@:3}" >"$WORK/rank.$r" 2>&1 &
        pid[$r]=$!
    done
    : >"$WORK/rcs"
    for r in 0 1 2; do
        wait "${pid[$r]}"
        printf '%s' $? >>"$WORK/rcs"
    done
}
run3 "$WORK/topology.conf" "$WORK/t" --plan "$SRC/docs/examples/plan.yaml" --spare-nodes 4
check "three ranks with a topology of two leaves: every rank exits 0" test "$(cat "$WORK/rcs")" = 000
check "... rank 0's plan says the topology and that every node is in it" \
    grep -q "^plan: the topology .*topology.conf: 2 leaf switches, 1 above them; every node found in it" "$WORK/rank.0"
check "... the tier ran: a verdict line a node, each passed" \
    test "$(python3 -c "import json, sys; print(sorted(json.loads(l)['status'] for l in open(sys.argv[1])))" "$WORK/t/nodes.jsonl")" = "['pass', 'pass', 'pass']"
check "... nothing named" test "$(json_get "$WORK/t/fleet.json" "len(r['triage']['named'])")" = 0
check "... the plan says the job --plan gave (its GPUs a node, MTBF, restart) and the spares" \
    grep -q "^plan: suspects after the screen weighed, isolate or evict, for the job of .*plan.yaml: 8 GPUs a node, a node's MTBF 250.0 d, a restart 10.0 min; 4 spare nodes" "$WORK/rank.0"
check "... nothing to decide: no suspects" test "$(json_get "$WORK/t/fleet.json" "r['triage']['decision']")" = None
# the rounds' control: rank 0 sends each node its part and takes its
# figure back (docs/fleet.md, "Bytes per round"): a few hundred bytes a
# node a round, not every node's figures to every node
check "... the rounds' control on rank 0's wire: 4 rounds, under 400 bytes a node a round each way" \
    test "$(json_get "$WORK/t/fleet.json" "(lambda k: (k['rounds'], k['nodes'], 0 < k['bytes_sent_per_round'] < 400 * 2, 0 < k['bytes_received_per_round'] < 400 * 2))(r['triage']['control'])")" \
    = "(4, 3, True, True)"
check "--plan a bad plan file: exit 2, its line and column, nothing run" \
    run_rc 2 "$WORK/out" "$TP" validate --only check -q --plan "$WORK/bad.conf" --out "$WORK/r1"
check "... saying where" grep -Eq -- "--plan: .*bad.conf:[0-9]+:[0-9]+: " "$WORK/out"
run3 "$WORK/short.conf" "$WORK/s"
check "a node the topology does not have: every rank exits 2" test "$(cat "$WORK/rcs")" = 222
check "... naming it" grep -q -- "--topology .*short.conf: node n2 (rank 2) is not in it" "$WORK/rank.0"
check "... nothing measured" test ! -e "$WORK/s/fleet.json"
finish
