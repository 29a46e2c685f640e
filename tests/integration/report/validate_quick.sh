#!/usr/bin/env bash
# trainpath validate --profile quick end to end: every test of the profile
# runs and writes its document into one results folder, with the history
# database and the HTML report; a second run into the same history makes a
# trend; the exit code follows the verdicts; --only picks groups.
. "$(dirname "$0")/../lib.sh"

V1=$WORK/v1
scratch() { find /var/tmp -maxdepth 1 -name 'trainpath-validate.*' 2>/dev/null | sort; }
before=$(scratch)
t0=$(date +%s)
"$TP" validate --profile quick --out "$V1" --prometheus "$WORK/tp.prom" >"$WORK/v1.out" 2>&1
rc=$?
echo "# validate --profile quick: exit $rc in $(( $(date +%s) - t0 )) s"
sed 's/^/# /' "$WORK/v1.out"
check "validate ran (exit 0 or 1, not 2)" test "$rc" -le 1
# the two audits: the node's (check) and, last, the counters of the tests
# (counters: CTR-ERRORS and LINK-FLAP over this run's documents)
audits=$(/usr/bin/python3 -c "
import json, sys
print(sum(json.load(open(f))['results']['nagios']['code'] >= 1 for f in sys.argv[1:]))" "$V1/check.json" "$V1/counters.json")
check "... every test but the audits passed, and those that found nothing ($audits found something)" \
    test "$(grep -cE '^ok ' "$WORK/v1.out")" -eq $((10 - audits))
check "... the exit code is 1 exactly when an audit found a critical finding" test "$(/usr/bin/python3 -c "
import json, sys
print(int(any(json.load(open(f))['results']['nagios']['code'] == 2 for f in sys.argv[1:])))" "$V1/check.json" "$V1/counters.json")" = "$rc"
check "... counters ran last, over this run's documents, the two rules alone" test "$(json_run "$V1/counters.json" "
print(d['config']['only'], [x['id'] for x in r['findings']], r['facts']['counter_causes'] is not None)")" = \
    "CTR-ERRORS,LINK-FLAP ['CTR-ERRORS', 'LINK-FLAP'] True"
check "... its CTR-ERRORS fails exactly when a test's counters name the cause errors" test "$(/usr/bin/python3 -c "
import json, sys
docs = [json.load(open(f)) for f in sys.argv[2:]]
errs = any(x['cause'] == 'errors' for d in docs for k in ('counters', 'peer_counters')
           for x in d['results'].get(k, {}).get('causes', []))
st = {x['id']: x['status'] for x in json.load(open(sys.argv[1]))['results']['findings']}
print((st['CTR-ERRORS'] == 'FAIL') == errs)" "$V1/counters.json" "$V1"/net-*.json "$V1"/coll-*.json "$V1"/io-*.json "$V1/step.json")" = True
for d in check net-lat net-bw coll-allreduce io-commit io-checkpoint step sdc plan counters; do
    check "... $d.json: a valid result document" valid_doc "$V1/$d.json"
done
# each test's line names the causes its document's counters name, and
# only those (loopback TCP may or may not retransmit: whichever it did)
for d in net-lat net-bw coll-allreduce io-commit step; do
    want=$(json_run "$V1/$d.json" "
c = [x['cause'] for x in r.get('counters', {}).get('causes', [])]
c += [\"server's \" + x['cause'] for x in r.get('peer_counters', {}).get('causes', [])]
print(' (counters: ' + ', '.join(c) + ')' if c else '')")
    line=$(grep -E "^ok +$d " "$WORK/v1.out")
    check "... $d's line names its counters' causes ('${want:- none}')" \
        test "${line%%"$want"}" != "$line" -o -z "$want" -a "${line#*(counters:}" = "$line"
done
check "... the history holds the ten runs" test "$("$TP" report history run.ok --db "$V1/history.sqlite" --json - -q | /usr/bin/python3 -c 'import json,sys; print(len(json.load(sys.stdin)))')" = 10
check "... report.html with the verdicts and the plots" eval 'grep -q "id=\"verdicts\"" "$V1/report.html" && grep -q "data-kind=\"busbw\"" "$V1/report.html" && grep -q "data-kind=\"step\"" "$V1/report.html"'
check "... --prometheus: a textfile with the step time and the busbw" eval 'grep -q "^trainpath_step_time_mean_seconds{" "$WORK/tp.prom" && grep -q "^trainpath_coll_busbw_bytes_per_second{" "$WORK/tp.prom"'
check "... every sample labelled with this host, as report prometheus labels it" test "$(/usr/bin/python3 -c "
import json, sys
host = json.load(open(sys.argv[2]))['provenance']['host']
s = [l for l in open(sys.argv[1]) if l.strip() and not l.startswith('#')]
print(len(s) > 0 and all('host=\"%s\"' % host in l for l in s))" "$WORK/tp.prom" "$V1/step.json")" = True
check "... no scratch folder left behind" test "$(scratch)" = "$before"

"$TP" validate --profile quick --out "$WORK/v2" --db "$V1/history.sqlite" -q
check "a second run into the same history: the step time has two points" test "$("$TP" report history step.time.mean --db "$V1/history.sqlite" --json - -q | /usr/bin/python3 -c 'import json,sys; print(len(json.load(sys.stdin)))')" = 2
"$TP" validate --only io,step --out "$WORK/only" >"$WORK/only.out" 2>&1
check "--only io,step: exit 0, three tests" test $? -eq 0 -a "$(grep -cE '^ok ' "$WORK/only.out")" -eq 3
check "... and only their documents" test "$(cd "$WORK/only" && ls *.json | tr '\n' ' ')" = "io-checkpoint.json io-commit.json step.json "
"$TP" validate --only coll --trace --out "$WORK/tr" >"$WORK/tr.out" 2>&1
check "--only coll --trace: exit 0; the collective's timeline beside its document (quick: allreduce)" test $? -eq 0 -a \
    "$(cd "$WORK/tr" && ls *.trace.json | tr '\n' ' ')" = "coll-allreduce.trace.json "
check "... each a Chrome trace with both ranks' iterations" test "$(/usr/bin/python3 -c "
import json, sys
print(all(sorted({e['pid'] for e in json.load(open(f))['traceEvents'] if e['ph'] == 'X'}) == [0, 1] for f in sys.argv[1:]))" "$WORK"/tr/*.trace.json)" = True
check "--only plan without net, coll and io: exit 2" run_rc 2 "$WORK/out" "$TP" validate --only plan,io --out "$WORK/v4"
check "... saying what plan needs" grep -q "plan is fed by the net, coll and io results" "$WORK/out"
check "--only disk: exit 2, naming it" eval 'run_rc 2 "$WORK/out" "$TP" validate --only io,disk --out "$WORK/v5" && grep -q "'"'"'disk'"'"' is not a group" "$WORK/out"'
check "--pairs-at-once 0: exit 2" run_rc 2 "$WORK/out" "$TP" validate --pairs-at-once 0 --out "$WORK/v6"
check "--profile nonsense: exit 2" run_rc 2 "$WORK/out" "$TP" validate --profile nonsense --out "$WORK/v3"
check "... named" grep -q "profile nonsense" "$WORK/out"
check "... and no scratch folder left behind" test "$(scratch)" = "$before"
finish
