#!/usr/bin/env bash
# validate across an allocation by a tier (the env launcher, 3 ranks on
# loopback): a node that never joins is named missing, one that stops
# answering outside the rounds is named lost with the stage it reached, and
# the others go on to the end; a run every rank of which is interrupted
# still leaves the fleet document and the verdicts, saying where it stopped. The test hook TP_FAULT_STALL=STAGE:RANK
# (docs/env.md) makes rank 2 stop answering as the stage begins: in its own
# tests ("local": nothing of it ever reaches rank 0) or in the gather of the
# results ("gather": its tests ran, its documents never arrive).
# --node-timeout 5s bounds the join and each stage's wait (longer than a
# pair's tests here, sanitizers included: rank 0 starts waiting once its
# own part is done, docs/fleet.md). --tier full goes on without a missing
# node the same way (the bed and validate_alloc run it).
# (A node lost in the rounds: tests/integration/fleet/fleet_bed.sh, a node
# killed and a node frozen, under the env launcher and srun.)
. "$(dirname "$0")/../lib.sh"

N=3
port=$(free_port)
# launch NAME STALL...: a rank of validate for each STALL (its TP_FAULT_STALL:
# the hook stalls only the rank it names), into $WORK/NAME, rank k's
# output in $WORK/NAMEk.out, the pids in pid[]
launch() {
    local name=$1 k=0 stall
    shift
    port=$(free_port)
    for stall in "$@"; do
        env TP_FAULT_STALL=$stall RANK=$k WORLD_SIZE=$# MASTER_ADDR=127.0.0.1 MASTER_PORT=$port \
            timeout 300 "$TP" validate --only net --tier screen --seed 1 --min-effect 900 \
            --node-timeout 5s --out "$WORK/$name" >"$WORK/$name$k.out" 2>&1 &
        pid[$k]=$!
        PIDS+=($!)
        k=$((k + 1))
    done
}
# run_stalled STAGE: every rank, rank 2 stalling in STAGE; rank 0's exit
# into rc0, the others' into rcs
run_stalled() {
    local stage=$1
    launch "$stage" "$stage:2" "$stage:2" "$stage:2"
    wait "${pid[0]}"; rc0=$?
    wait "${pid[1]}"; rcs="$?"
    # the stalled rank (timeout's child): its net server ends with it
    local stalled
    stalled=$(pgrep -P "${pid[2]}")
    kill -9 $stalled "${pid[2]}" 2>/dev/null; wait "${pid[2]}" 2>/dev/null
    for _ in $(seq 50); do [ -z "$(servers)" ] && break; sleep 0.1; done
    sed 's/^/# /' "$WORK/${stage}0.out" | head -12
}
# validate's net servers still running (each validate starts one)
servers() { pgrep -f "net serve --bind .* --key-file /proc/self/fd/" | tr '\n' ' '; }
verdict() { # verdict STAGE NODE FIELD
    /usr/bin/python3 -c "
import json, sys
print([json.loads(l) for l in open(sys.argv[1])][int(sys.argv[2])][sys.argv[3]])" \
        "$WORK/$1/nodes.jsonl" "$2" "$3"
}

for stage in local gather; do
    run_stalled $stage
    check "rank 2 stalled in $stage: rank 0 exits 1, rank 1 with it ($rc0 $rcs)" test "$rc0$rcs" = 11
    check "... rank 0 left it out, saying why" \
        grep -q "rank 2 on .* left out: .*did not answer on the control connection within 5.0 s" \
        "$WORK/${stage}0.out"
    check "... node 2 lost in $stage (timeout, drain), the wait said" test \
        "$(verdict $stage 2 status) $(verdict $stage 2 stage) $(verdict $stage 2 cause) $(verdict $stage 2 action)" \
        = "lost $stage timeout drain"
    check "... its verdict says why" eval "verdict $stage 2 says | grep -q 'within 5.0 s'"
    check "... the other two passed, validated to the end" test \
        "$(verdict $stage 0 status) $(verdict $stage 1 status)" = "pass pass"
    check "... fleet.json lists every node, node 2's result never arrived" test "$(json_run \
        "$WORK/$stage/fleet.json" "
print([(n['status'], n['arrived']) for n in r['nodes']], r['triage']['counts']['lost'])")" \
        = "[('pass', True), ('pass', True), ('lost', False)] 1"
    check "... every verdict line valid, fleet.json valid" eval \
        "valid_doc --lines validate_node_line '$WORK/$stage/nodes.jsonl' && valid_doc '$WORK/$stage/fleet.json'"
    check "... fleet.json's status agrees with rank 0's exit 1: not ok, check, saying the named" \
        test "$(json_get "$WORK/$stage/fleet.json" \
        "d['status']['ok'], d['status']['code'], d['status']['exit_code'], '1 named' in d['status']['message']")" \
        = "False check 1 True"
done
# a node that never joins: rank 2 is never started
port=$(free_port)
for k in 0 1; do
    env RANK=$k WORLD_SIZE=$N MASTER_ADDR=127.0.0.1 MASTER_PORT=$port timeout 300 "$TP" validate \
        --only net --tier screen --seed 1 --min-effect 900 --node-timeout 5s --out "$WORK/join" \
        >"$WORK/join$k.out" 2>&1 &
    pid[$k]=$!
    PIDS+=($!)
done
wait "${pid[0]}"; rc0=$?
wait "${pid[1]}"; rcs=$?
sed 's/^/# /' "$WORK/join0.out" | head -8
check "rank 2 never started: rank 0 exits 1, rank 1 with it ($rc0 $rcs)" test "$rc0$rcs" = 11
check "... rank 0 says it went on without it" \
    grep -q "rank(s) 2 did not join rank 0 on .* within 5.0 s: left out" "$WORK/join0.out"
check "... node 2 missing, at the join (timeout, rerun), named rank2" test \
    "$(verdict join 2 status) $(verdict join 2 stage) $(verdict join 2 cause) $(verdict join 2 action) $(verdict join 2 label)" \
    = "missing join timeout rerun rank2"
check "... its verdict says why" eval "verdict join 2 says | grep -q 'did not join rank 0 within 5.0 s'"
check "... the other two passed" test "$(verdict join 0 status) $(verdict join 1 status)" = "pass pass"
check "... fleet.json lists all 3, rank2's result never arrived" test "$(json_run \
    "$WORK/join/fleet.json" "print([n['arrived'] for n in r['nodes']], r['nodes'][2]['label'])")" \
    = "[True, True, False] rank2"
check "... every verdict line valid" valid_doc --lines validate_node_line "$WORK/join/nodes.jsonl"

# rank 0 lost mid-run: it stops answering as round 2 begins
# (TP_FAULT_STALL=rounds.2:0); rank 1, its deputy, has round 1 from it
# and writes the fleet document in its place, rank 0 named lost there
launch lead rounds.2:0 rounds.2:0 rounds.2:0
wait "${pid[1]}"; rc1=$?
wait "${pid[2]}"; rc2=$?
kill -9 $(pgrep -P "${pid[0]}") "${pid[0]}" 2>/dev/null; wait "${pid[0]}" 2>/dev/null
# its net server ends with it (after the session a pair test of round 2
# may have open with it)
for _ in $(seq 300); do [ -z "$(servers)" ] && break; sleep 0.1; done
sed 's/^/# /' "$WORK/lead1.out" | grep -v "^#  \|^# connection\|^# counters\|^# server" | head -12
check "rank 0 lost in round 2: ranks 1 and 2 exit 1 ($rc1 $rc2)" test "$rc1$rc2" = 11
check "... rank 1, its deputy, says it writes the fleet document" \
    grep -q "rank 0 lost: rank 1, its deputy, writes the fleet document" "$WORK/lead1.out"
check "... rank 2 does not" eval "! grep -q 'its deputy, writes' '$WORK/lead2.out'"
check "... fleet.json valid, saying where it stopped and whose it is" test "$(json_run \
    "$WORK/lead/fleet.json" "print(r['partial'].startswith('the run stopped in round 2'), 'deputy' in r['partial'])")" \
    = "True True"
check "... round 1 recorded (rank 0's record, replayed), node 0 lost in the rounds" test \
    "$(json_run "$WORK/lead/fleet.json" "print(r['rounds'])") $(verdict lead 0 status) $(verdict lead 0 stage)" \
    = "1 lost rounds"
check "... every verdict line valid, fleet.json valid" eval \
    "valid_doc --lines validate_node_line '$WORK/lead/nodes.jsonl' && valid_doc '$WORK/lead/fleet.json'"

# the deputy lost, then rank 0: 4 ranks, rank 1 (the meeting's deputy,
# told every node's record) stops answering as round 1 begins, so rank 2
# becomes the deputy in round 2 (its part carries every node's record and
# rank 0's whole log: it makes its triage then); rank 0 stops as round 3
# begins; rank 2 writes the fleet document, rounds 1 and 2 in it
launch second rounds.3:0 rounds.1:1 rounds.3:0 rounds.3:0
wait "${pid[2]}"; rc2=$?
wait "${pid[3]}"; rc3=$?
for k in 0 1; do kill -9 $(pgrep -P "${pid[$k]}") "${pid[$k]}" 2>/dev/null; wait "${pid[$k]}" 2>/dev/null; done
for _ in $(seq 300); do [ -z "$(servers)" ] && break; sleep 0.1; done
sed 's/^/# /' "$WORK/second2.out" | grep -v "^#  \|^# connection\|^# counters\|^# server" | head -12
check "the deputy lost in round 1, rank 0 in round 3: ranks 2 and 3 exit 1 ($rc2 $rc3)" \
    test "$rc2$rc3" = 11
check "... rank 2, the deputy after rank 1, writes the fleet document" \
    grep -q "rank 0 lost: rank 2, its deputy, writes the fleet document" "$WORK/second2.out"
check "... rank 3 does not" eval "! grep -q 'its deputy, writes' '$WORK/second3.out'"
check "... rounds 1 and 2 recorded (rank 0's whole log, replayed), node 1 lost in round 1 (gang), node 0 in the rounds" \
    test "$(json_run "$WORK/second/fleet.json" "print(r['rounds'], r['partial'].startswith('the run stopped in round 3'))") $(verdict second 0 status) $(verdict second 0 stage) $(verdict second 1 status) $(verdict second 1 stage)" \
    = "2 True lost rounds lost gang"
check "... its labels every node's (the records rank 0 sent it)" test "$(json_run \
    "$WORK/second/fleet.json" "print(sorted(n['label'].split('#')[-1] for n in r['nodes']))")" \
    = "['0', '1', '2', '3']"
check "... every verdict line valid, fleet.json valid" eval \
    "valid_doc --lines validate_node_line '$WORK/second/nodes.jsonl' && valid_doc '$WORK/second/fleet.json'"

# every rank sent SIGTERM mid-run (as Slurm does at a job's time limit):
# rank 0 still writes the fleet document and the verdict lines, each node
# not validated to the end saying where the run stopped
port=$(free_port)
for k in 0 1 2; do
    env RANK=$k WORLD_SIZE=$N MASTER_ADDR=127.0.0.1 MASTER_PORT=$port timeout 300 "$TP" validate \
        --only net --tier screen --seed 1 --min-effect 900 --out "$WORK/term" >"$WORK/term$k.out" 2>&1 &
    pid[$k]=$!
    PIDS+=($!)
done
for _ in $(seq 300); do grep -q "^plan:" "$WORK/term0.out" && break; sleep 0.1; done
sleep 3
for k in 0 1 2; do kill -TERM $(pgrep -P "${pid[$k]}"); done
wait "${pid[0]}"; rc0=$?
wait "${pid[1]}" "${pid[2]}"
sed 's/^/# /' "$WORK/term0.out" | head -10
check "every rank sent SIGTERM mid-run: rank 0 exits 143" test "$rc0" = 143
check "... fleet.json written all the same, its status the interrupt, partial saying where" test "$(json_run \
    "$WORK/term/fleet.json" "print(d['status']['ok'], d['status']['exit_code'], r['partial'].startswith('the run stopped in'))")" \
    = "False 143 True"
check "... every node's verdict: not validated to the end (harness, rerun)" test "$(/usr/bin/python3 -c "
import json, sys
print({(o['status'], o['cause'], o['action'], 'not validated to the end' in o['says']) for o in map(json.loads, open(sys.argv[1]))})" \
    "$WORK/term/nodes.jsonl")" = "{('error', 'harness', 'rerun', True)}"
check "... both valid" eval "valid_doc '$WORK/term/fleet.json' && valid_doc --lines validate_node_line '$WORK/term/nodes.jsonl'"

check "lost in its own tests: in no test of the tier" test "$(verdict local 2 tests)" = 0
check "no net server of validate's left running, the killed one's included" test -z "$(servers)"
check "lost in the gather: its tests of the tier ran (completed > 0)" \
    test "$(json_run "$WORK/gather/fleet.json" "print(r['nodes'][2]['completed'] > 0)")" = True
check "... the pairs the others measured with it are in fleet.json" test "$(json_run \
    "$WORK/gather/fleet.json" "print(any(p['a'].endswith('#2') or p['b'].endswith('#2') for p in r['pairs']))")" = True
finish
