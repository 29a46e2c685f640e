#!/usr/bin/env bash
# trainpath report from the command line, on documents measured here: the
# history across runs (add, history, baseline), the threshold gate's Nagios
# codes, the diff with a planted regression and with no change, fleet
# outliers with a planted slow node, the Prometheus textfile, and bad input.
. "$(dirname "$0")/../lib.sh"

DB=$WORK/h.sqlite
# three coll runs: two plain, one with a planted delay per rank. The delay
# is set against the noise of this run, not a quiet machine's: at least
# 400 us, and 4 times the worse p99 at 4 KiB of the plain runs, so that on a
# loaded machine (or under the sanitizers) the regression stands out of the
# plain runs' own tail as it does on a quiet one.
for i in 1 2; do
    "$TP" coll -n 2 --sizes 4K,64K --time 50ms --json "$WORK/c$i.json" -q >/dev/null 2>&1
done
DELAY_US=$(/usr/bin/python3 - "$WORK/c1.json" "$WORK/c2.json" <<'PY'
import json, sys
p99 = 0
for f in sys.argv[1:]:
    try:
        for e in json.load(open(f))["results"]["sizes"]:
            if e["size_bytes"] == 4096:
                p99 = max(p99, e["time"]["p99"])
    except (OSError, ValueError, KeyError):
        pass
print(max(400, int(4 * p99 / 1e3) + 1))
PY
)
echo "# planted delay: up to ${DELAY_US} us per rank and iteration"
"$TP" coll -n 2 --sizes 4K,64K --time 50ms --inject-delay "${DELAY_US}us" --json "$WORK/slow.json" -q >/dev/null 2>&1
check "three coll documents measured" valid_doc "$WORK/c1.json" "$WORK/c2.json" "$WORK/slow.json"

# history across runs
check "report add: three documents into a new history" run_rc 0 "$WORK/add.out" \
    "$TP" report add "$WORK/c1.json" "$WORK/c2.json" "$WORK/slow.json" --db "$DB"
check "... says 3 of 3 added" grep -q "3 of 3 documents added" "$WORK/add.out"
check "report add again: nothing added twice" run_rc 0 "$WORK/add2.out" "$TP" report add "$WORK/c1.json" --db "$DB"
check "... 0 of 1" grep -q "0 of 1 documents added" "$WORK/add2.out"
check "report history coll.time.p50 --label size=4096: three points, oldest first" run_rc 0 "$WORK/hist.out" \
    "$TP" report history coll.time.p50 --label size=4096 --db "$DB" --json "$WORK/hist.json"
check "... three points in time order" test "$(/usr/bin/python3 -c "
import json; d = json.load(open('$WORK/hist.json'))
t = [p['started_utc'] for p in d]; print(len(d), t == sorted(t))")" = "3 True"
check "report baseline: a trimmed-mean rule per key" run_rc 0 "$WORK/base.out" \
    "$TP" report baseline --db "$DB" --json "$WORK/base.json"
check "... coll.busbw per size and configuration: 2 plain runs, 1 delayed (plain mean below 5)" test "$(/usr/bin/python3 -c "
import json; d = json.load(open('$WORK/base.json'))
b = [x for x in d if x['metric'] == 'coll.busbw']; print(sorted(x['samples'] for x in b), all(x['rule'].startswith('mean') for x in b))")" = "[1, 1, 2, 2] True"

# the gate: Nagios codes
cat >"$WORK/ok.yaml" <<'YAML'
thresholds:
  - metric: coll.wrong
    max: 0
  - metric: run.ok
    min: 1
YAML
check "gate: every threshold met: exit 0" run_rc 0 "$WORK/g.out" "$TP" report gate "$WORK/ok.yaml" "$WORK/c1.json"
cat >"$WORK/warn.yaml" <<'YAML'
thresholds:
  - metric: coll.busbw
    min: 1000TB/s
    severity: warning
YAML
check "gate: a warning threshold missed: exit 1" run_rc 1 "$WORK/g.out" "$TP" report gate "$WORK/warn.yaml" "$WORK/c1.json"
cat >"$WORK/crit.yaml" <<'YAML'
thresholds:
  - metric: coll.time.p50
    labels: {size: "4096"}
    max: 1ns
YAML
check "gate: a critical threshold missed: exit 2" run_rc 2 "$WORK/g.out" "$TP" report gate "$WORK/crit.yaml" "$WORK/c1.json"
check "... naming the key, the value and the limit" grep -q "coll.time.p50{.*size=4096.*}.*1 ns" "$WORK/g.out"
cat >"$WORK/missing.yaml" <<'YAML'
thresholds:
  - metric: net.lat.latency.p99
    max: 1ms
YAML
check "gate: a threshold with no matching row fails (a test that did not run): exit 2" \
    run_rc 2 "$WORK/g.out" "$TP" report gate "$WORK/missing.yaml" "$WORK/c1.json"
printf 'thresholds:\n  - metric: coll.busbw\n    mni: 1GB/s\n' >"$WORK/bad.yaml"
check "gate: a bad thresholds file: exit 3 (unknown)" run_rc 3 "$WORK/g.out" "$TP" report gate "$WORK/bad.yaml" "$WORK/c1.json"
check "... naming file:line:column and the key" grep -q "bad.yaml:3:5: thresholds\[0\].mni" "$WORK/g.out"

# the diff: no change, and a planted regression
check "diff of a document with itself: exit 0, no regression" run_rc 0 "$WORK/d0.out" \
    "$TP" report diff "$WORK/c1.json" "$WORK/c1.json" --json "$WORK/d0.json"
check "... 0 regressions" test "$(json_get "$WORK/d0.json" "d['regressions']")" = 0
check "diff against the run with the planted delay: exit 1" run_rc 1 "$WORK/d1.out" \
    "$TP" report diff "$WORK/c1.json" "$WORK/slow.json" --json "$WORK/d1.json"
check "... coll.time.p50 at 4 KiB a significant regression, by how much said" test "$(json_run "$WORK/d1.json" "
r = [x for x in d['rows'] if x['key'].startswith('coll.time.p50{') and 'size=4096' in x['key']][0]
print(r['verdict'], r['p'] < 0.01, r['relative'] > 0.02, '%' in r['says'])")" = "regression True True True"
check "diff with one missing document: exit 2" run_rc 2 "$WORK/out" "$TP" report diff "$WORK/c1.json" "$WORK/none.json"

# fleet: 16 hosts from one document, one made slow
/usr/bin/python3 - "$WORK/c1.json" "$WORK/fleet.jsonl" "$WORK/even.jsonl" <<'PY'
import json, random, sys
doc = json.load(open(sys.argv[1]))
bw = [e for e in doc["results"]["sizes"] if e["size_bytes"] == 65536][0]["busbw"]["value"]
rnd = random.Random(7)
with open(sys.argv[2], "w") as f, open(sys.argv[3], "w") as g:
    for h in range(16):
        v = bw * (1 + rnd.uniform(-0.02, 0.02))
        line = {"host": f"node{h:02d}", "metric": "coll.busbw{op=allreduce,size=65536}",
                "value": v, "unit": "B/s", "better": "higher"}
        g.write(json.dumps(line) + "\n")
        if h == 11:
            line["value"] = v * 0.5
        f.write(json.dumps(line) + "\n")
PY
check "fleet: a planted slow node among 16: exit 1" run_rc 1 "$WORK/f.out" "$TP" report fleet "$WORK/fleet.jsonl" --json "$WORK/f.json"
check "... node11, and only node11" test "$(json_run "$WORK/f.json" "
print(sorted(o['host'] for m in d['metrics'] for o in m['outliers']))")" = "['node11']"
check "fleet: the same hosts without it: exit 0" run_rc 0 "$WORK/f.out" "$TP" report fleet "$WORK/even.jsonl"

# Prometheus textfile
check "report prometheus" run_rc 0 "$WORK/p.out" "$TP" report prometheus --out "$WORK/tp.prom" "$WORK/c1.json" --host node1
check "... node_exporter textfile lines: HELP, TYPE gauge, samples with the host label" /usr/bin/python3 -c "
import re, sys
lines = open('$WORK/tp.prom').read().splitlines()
types = [l for l in lines if l.startswith('# TYPE ')]
samples = [l for l in lines if l and not l.startswith('#')]
ok = types and all(l.endswith(' gauge') for l in types) and samples and all(
    re.match(r'^trainpath_[a-z0-9_]+\{[^}]*host=\"node1\"[^}]*\} [-+0-9.eE]+$', l) for l in samples)
sys.exit(0 if ok else 1)"

check "report html on a folder of documents" run_rc 0 "$WORK/h.out" "$TP" report html --out "$WORK/r.html" "$WORK"
check "... the busbw plot there" grep -q 'data-kind="busbw"' "$WORK/r.html"
check "report history on a file that is not a history: exit 2" run_rc 2 "$WORK/out" \
    "$TP" report history coll.busbw --db "$WORK/c1.json"
check "report with an unknown subcommand: exit 2" run_rc 2 "$WORK/out" "$TP" report frobnicate
finish
