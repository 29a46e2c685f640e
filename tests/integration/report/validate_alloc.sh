#!/usr/bin/env bash
# trainpath validate across an allocation, --tier full: under Open MPI's
# mpirun, 4 ranks on this host (each one "node"): every node runs its own
# tests, then the tier's rounds, its pairs stage every pair by the circle
# method (3 rounds, each node in one pair per round, every pair once; with
# --pairs-at-once 1 one pair at a time); rank 0 gathers the documents into
# one results folder with the fleet's judgement and a verdict per node.
# (The tiers naming a slow node and a slow link across network namespaces,
# and losing a node: tests/integration/fleet/fleet_bed.sh, fleet_lost.sh.)
. "$(dirname "$0")/../lib.sh"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_btl=self,tcp
export OMPI_MCA_mpi_yield_when_idle=1
scratch() { find /var/tmp -maxdepth 1 -name 'trainpath-validate.*' 2>/dev/null | sort; }

# ---- 1. mpirun -n 4 ----
if command -v mpirun >/dev/null; then
    D=$WORK/mpi
    before=$(scratch)
    # (Open MPI's own allocations are not ours to report under ASan)
    ASAN_OPTIONS=detect_leaks=0:abort_on_error=1 \
    timeout 300 mpirun --oversubscribe -n 4 "$TP" validate --only check,io,net --tier full \
        --pairs-at-once 1 --out "$D" \
        >"$WORK/mpi.out" 2>&1
    rc=$?
    sed 's/^/# /' "$WORK/mpi.out" | grep -v '^# ---\|^# *$' | head -30
    check "mpirun -n 4 validate: exit 0 or 1 (not a usage or system error)" test "$rc" -le 1
    check "... a folder per node" test "$(ls "$D/nodes" | wc -l)" -eq 4
    docs=0
    for f in "$D"/nodes/*/{check,io-commit,io-checkpoint}.json; do
        valid_doc "$f" >/dev/null && docs=$((docs + 1))
    done
    check "... each node's check, io-commit and io-checkpoint: 12 valid documents" test "$docs" -eq 12
    check "... fleet.json is a valid result document" valid_doc "$D/fleet.json"
    check "... the pairs stage by the circle method: 3 rounds, each node in one pair per round, every pair once" \
        test "$(json_run "$D/fleet.json" "
lat = [p for p in r['pairs'] if p['test'] == 'net-lat' and p['stage'] == 'pairs']
rounds = sorted({p['round'] for p in lat})
per_round = all(sorted(x for p in lat if p['round'] == k for x in (p['a'], p['b'])) ==
                sorted(n['label'] for n in r['nodes']) for k in rounds)
pairs = sorted(tuple(sorted((p['a'], p['b']))) for p in lat)
print(len(rounds) == 3, per_round, len(pairs) == 6 and len(set(pairs)) == 6, r['triage']['rounds']['pairs'])")" = "True True True 3"
    check "... before them the gang across all 4" test "$(json_run "$D/fleet.json" "
print(r['triage']['rounds']['gang'], [len(g['members']) for g in r['groups'] if g['stage'] == 'gang'][:1])")" = "1 [4]"
    check "... bandwidth both ways: 12 directed measurements, all passed" test "$(json_run "$D/fleet.json" "
bw = [p for p in r['pairs'] if p['test'] == 'net-bw' and p['stage'] == 'pairs']
print(len(bw), len({(p['a'], p['b']) for p in bw}), all(p['status'] == 'PASS' for p in r['pairs']))")" = "12 12 True"
    check "... every pair's documents in pairs/A--B/pairs-rROUND/" test "$(ls "$D"/pairs/*/pairs-r*/net-bw.json | wc -l)" -eq 12
    check "... a verdict line per node, each valid" eval \
        '[ "$(wc -l <"$D/nodes.jsonl")" -eq 4 ] && valid_doc --lines validate_node_line "$D/nodes.jsonl"'
    check "... fleet.jsonl: one line per node and test (16: check, io-commit, io-checkpoint, counters), and pair lines" test "$(/usr/bin/python3 -c "
import json, sys
lines = [json.loads(l) for l in open('$D/fleet.jsonl')]
print(sum('doc' in l for l in lines), sum('a' in l for l in lines) > 0)")" = "16 True"
    check "... and no temporary file left beside it" test -z "$(ls -A "$D" | grep '\.tmp\.')"
    "$TP" report fleet "$D/fleet.jsonl" >"$WORK/fleet.out" 2>&1
    check "... report fleet reads it (exit 0 or 1)" test $? -le 1
    check "... the exit code is 1 exactly when a test failed or the triage named a node or a link" \
        test "$(json_run "$D/fleet.json" "
t = r['triage']
print(int(r['failed_tests'] > 0 or len(t['named']) + t['counts']['lost'] + t['counts']['missing'] > 0))")" = "$rc"
    check "... report.html has the fleet, its matrices and the verdicts" eval \
        'grep -q "id=\"fleet\"" "$D/report.html" && test "$(grep -c "data-kind=\"matrix\"" "$D/report.html")" -eq 2 && grep -q "id=\"verdicts\"" "$D/report.html"'
    check "... the history holds every node's documents" test "$("$TP" report history run.ok \
        --db "$D/history.sqlite" --json - -q | /usr/bin/python3 -c 'import json,sys; print(len(json.load(sys.stdin)) >= 4)')" = True
    check "... no scratch folder left behind" test "$(scratch)" = "$before"
    run_rc 2 "$WORK/odd.out" env ASAN_OPTIONS=detect_leaks=0:abort_on_error=1 timeout 120 mpirun --oversubscribe -n 2 sh -c \
        'if [ "$OMPI_COMM_WORLD_RANK" = 1 ]; then p=standard; else p=quick; fi; exec "$0" validate --profile $p --only io --out "$1"' \
        "$TP" "$WORK/odd"
    check "ranks started with different profiles: exit 2" test $? -eq 0
    check "... naming the option" grep -q "profile" "$WORK/odd.out"
else
    not_ok "mpirun missing (openmpi-bin is in scripts/install-deps.sh)"
fi

finish
