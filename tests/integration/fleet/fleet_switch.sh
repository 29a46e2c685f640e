#!/usr/bin/env bash
# The fleet bed with switches (docs/fleet.md, "The test bed"): 8 nodes on 4
# leaf switches of 2 (each leaf a bridge in a namespace of its own, joined
# to the spine's bridge, the head's, by one veth pair: its uplink), a real
# Slurm cluster with TopologyPlugin=topology/tree and the bed's
# topology.conf. On it `trainpath validate --tier screen --topology
# topology.conf --on-fail drain` under srun:
#   1. a slow uplink: TBF at 200 Mbit/s on both directions of leaf0's
#      uplink (u0 in the leaf, s0 on the spine): exit 1, the plan saying
#      the topology, leaf0's uplinks named (kind uplink, leaf leaf0: the
#      file's name), node0 and node1 behind it status uplink (cause
#      hardware, action service), the others passed, nothing drained (an
#      uplink is serviced, its nodes are not drained), every node idle;
#   2. a bad cable on node6 (leaf3): TBF at 200 Mbit/s on both directions
#      of its cable (v6 in the node, p6 in the leaf) and the cable's
#      carrier dropped for 0.1 s every 1.5 s during the run (`ip link set
#      p6 down; up` at the leaf's end: a real carrier change, which node6's
#      netdev counters see as carrier_changes on v6, the interface its
#      tests' traffic takes, so its tests' counters name `flap` on its own
#      link, as a failing transceiver or a loose cable does; errors such as
#      CRC cannot be made on a veth, a flap can): node6 named a cable (kind
#      cable, its counters "flap on v6: carrier_changes ..."), status cable,
#      action service, not drained; the others passed; every node idle.
# Each fault is planted alone, the other removed: with both at once, 3 of
# these 8 nodes are slow across the fabric (node0 and node1 to every node
# outside leaf0, node6 to every node), most pairs and most nodes' own
# medians are slow, and the fleet's median, the triage's reference, is the
# faults' (the simulator names both in 0 of 20 seeds at 8 nodes, 13 of 20
# at 9 nodes on 5 leaves; each alone 20 of 20: docs/fleet.md). With 2
# leaves a slow uplink of either would slow the same pairs, hence 4.
# The wall time of each run and of the whole test is printed.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/../slurm_lib.sh"
[ "$(id -u)" -eq 0 ] || skip_all "namespaces and slurmd need root"
export PATH=$PATH:/usr/sbin
for t in munged mungekey slurmctld slurmd srun sinfo scontrol nsenter unshare tc; do
    command -v $t >/dev/null || skip_all "$t missing"
done
T0=$(date +%s)
N=8
LEAVES=4
. "$(dirname "$0")/bed_lib.sh"
check "topology.conf: 4 leaves of 2 under the spine" test "$(tr '\n' ' ' <"$TOPO")" = \
    "SwitchName=leaf0 Nodes=node[0-1] SwitchName=leaf1 Nodes=node[2-3] SwitchName=leaf2 Nodes=node[4-5] SwitchName=leaf3 Nodes=node[6-7] SwitchName=spine Switches=leaf[0-3] "
check "... Slurm reads it (scontrol show topology: 5 switches)" \
    test "$(in_head timeout 10 scontrol show topology | grep -c '^SwitchName=')" -eq 5

export OMPI_MCA_btl=self,tcp OMPI_MCA_pml=ob1 OMPI_MCA_mtl=^psm,psm2,ofi
# the bed's bar and faults (fleet_bed.sh): 8 nodes on two cores
V="validate --only net --tier screen --seed 1 --min-effect 150 --topology $TOPO --on-fail drain"
# srun_validate NAME: the validation as a Slurm job step on every node
srun_validate() {
    local t0
    t0=$(date +%s)
    "$WORK/in_head" timeout 400 srun -N $N --immediate=20 --mpi=pmix "$TP" $V --out "$WORK/$1" \
        >"$WORK/$1.out" 2>&1
    RC=$?
    WALL=$(($(date +%s) - t0))
    sed 's/^/# /' "$WORK/$1.out" | grep -v "srun: error: node.: task" | head -20
}
drained() { in_head timeout 10 sinfo -h -N -t drain -o '%N' | sort -u | tr '\n' ' '; }
statuses() { # statuses NAME: every node's status in nodes.jsonl, in rank order
    /usr/bin/python3 -c "
import json, sys
print(' '.join(json.loads(l)['status'] for l in open(sys.argv[1])))" "$WORK/$1/nodes.jsonl"
}
named() { # named NAME: what was named, "kind:leaf-or-node" each
    json_run "$WORK/$1/fleet.json" "
print(' '.join('%s:%s' % (x['kind'], x.get('leaf', x.get('node'))) for x in r['triage']['named']))"
}
resume_all() { for x in $(drained); do in_head scontrol update NodeName=$x State=RESUME; done; }
shape() { # shape NS DEV: TBF at 200 Mbit/s on DEV's egress in namespace NS
    ip netns exec "$1" tc qdisc add dev "$2" root tbf rate 200mbit burst 64kb latency 400ms
}

# ---- 1. a slow uplink: leaf0's, both ways ----
shape tplf0.$$ u0 && shape $BR s0
check "leaf0's uplink shaped both ways (TBF on u0 and s0)" test $? -eq 0
srun_validate uplink
echo "# the switched bed, a slow uplink, screen tier: $WALL s; named $(named uplink); statuses $(statuses uplink)"
check "srun validate --topology, a slow uplink: exit 1" test "$RC" -eq 1
check "... the plan says the topology" grep -q "^plan: the topology .*topology.conf: 4 leaf switches, 1 above them; every node found in it" "$WORK/uplink.out"
check "... leaf0's uplinks named, nothing else" test "$(named uplink)" = "uplink:leaf0"
check "... node0 and node1 behind them status uplink, the others passed" test "$(statuses uplink)" = \
    "uplink uplink pass pass pass pass pass pass"
check "... their verdicts: hardware, service, the component leaf0" test "$(/usr/bin/python3 -c "
import json, sys
o = [json.loads(l) for l in open(sys.argv[1])][:2]
print(all(v['cause'] == 'hardware' and v['action'] == 'service' and
          v['evidence']['component'] == {'kind': 'uplink', 'leaf': 'leaf0'} for v in o))" "$WORK/uplink/nodes.jsonl")" = True
check "... nothing drained, every node idle" test "$(drained)|$(idle)" = "|$N"
check "... no action taken (fleet.json)" test "$(json_get "$WORK/uplink/fleet.json" "len(r['actions'])")" = 0
check "... fleet.json and the verdict lines valid" eval \
    'valid_doc "$WORK/uplink/fleet.json" && valid_doc --lines validate_node_line "$WORK/uplink/nodes.jsonl"'
resume_all
ip netns exec tplf0.$$ tc qdisc del dev u0 root && ip netns exec $BR tc qdisc del dev s0 root
check "the uplink's shaping removed" test $? -eq 0

# ---- 2. a bad cable: node6's, slow and flapping ----
shape tpbn6.$$ v6 && shape tplf3.$$ p6
check "node6's cable shaped both ways (TBF on v6 and p6)" test $? -eq 0
c0=$(ip netns exec tpbn6.$$ cat /sys/class/net/v6/carrier_changes)
# the flaps, at the leaf's end of the cable, until the run is over
(while :; do
    sleep 1.5
    ip -n tplf3.$$ link set p6 down
    sleep 0.1
    ip -n tplf3.$$ link set p6 up
done) &
FLAP=$!
PIDS+=($FLAP)
srun_validate cable
kill $FLAP
wait $FLAP 2>/dev/null
ip -n tplf3.$$ link set p6 up
c1=$(ip netns exec tpbn6.$$ cat /sys/class/net/v6/carrier_changes)
echo "# the switched bed, a bad cable, screen tier: $WALL s (v6 carrier_changes +$((c1 - c0))); named $(named cable); statuses $(statuses cable)"
check "srun validate --topology, a bad cable: exit 1" test "$RC" -eq 1
check "... node6 named, as its cable" test "$(named cable)" = "cable:6"
check "... its counters cited: a flap on v6" eval \
    'json_get "$WORK/cable/fleet.json" "r[\"triage\"][\"named\"][0][\"counters\"]" | grep -q "flap on v6: carrier_changes +"'
check "... node6 status cable, the others passed" test "$(statuses cable)" = \
    "pass pass pass pass pass pass cable pass"
check "... its verdict: hardware, service, its counters in its words" test "$(/usr/bin/python3 -c "
import json, sys
v = [json.loads(l) for l in open(sys.argv[1])][6]
print(v['cause'], v['action'], 'its counters name the link (flap on v6' in v['says'])" "$WORK/cable/nodes.jsonl")" = \
    "hardware service True"
check "... nothing drained, every node idle" test "$(drained)|$(idle)" = "|$N"
check "... fleet.json and the verdict lines valid" eval \
    'valid_doc "$WORK/cable/fleet.json" && valid_doc --lines validate_node_line "$WORK/cable/nodes.jsonl"'
resume_all

echo "# the switched bed, the whole test: $(($(date +%s) - T0)) s"
# stop the daemons gently, so slurmctld reaps its own helpers
kill -TERM "${PIDS[@]}" 2>/dev/null
for _ in $(seq 30); do kill -0 "${PIDS[@]}" 2>/dev/null || break; sleep 0.1; done
finish
