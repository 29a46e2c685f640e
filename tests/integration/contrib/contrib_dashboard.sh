#!/usr/bin/env bash
# contrib/grafana's dashboard and contrib/prometheus' rules against what
# trainpath really writes: every metric their queries name must be one that
# `validate --prometheus` (on a host, and across an allocation: the fleet's
# rows) or the check DaemonSet's command writes, or that node_exporter's
# textfile collector exports about those files. A misspelt or renamed
# metric is an empty panel or an alert that never fires, never an error,
# so only this catches it; the checker is shown to catch one.
#
# The DaemonSet's command (contrib/kubernetes/check-daemonset.yaml) runs
# as the manifest has it (tests/integration/contrib/k8s_pod.py; INTERVAL_S
# 1 s instead of 300, its folders in $WORK) until it has replaced its file
# twice; the file is then read by the real node_exporter beside the file
# validate writes into the same folder on rank 0's node: node_exporter must
# read both whole, and the DaemonSet's label source="daemonset" is what
# keeps the two files' samples of the same node's audit apart (without it
# node_exporter drops one, said here too). The rules' own unit tests
# (contrib/prometheus/trainpath-rules.test.yml) run under promtool.
. "$(dirname "$0")/../lib.sh"
/usr/bin/python3 -c 'import yaml' 2>/dev/null || skip_all "python3-yaml missing (scripts/install-deps.sh)"
C=$SRC/contrib
D=$C/grafana/trainpath-dashboard.json
RULES=$C/prometheus/trainpath-rules.yml
RTEST=$C/prometheus/trainpath-rules.test.yml
NAMES=$SRC/tests/integration/contrib/promql_names.py

check "the dashboard is JSON: a title, a uid, panels with unique ids, each on the datasource variable" \
    /usr/bin/python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
ps = [p for p in d["panels"]] + [c for p in d["panels"] for c in p.get("panels", [])]
ids = [p["id"] for p in ps]
assert d["title"] and d["uid"] and len(ids) == len(set(ids)), ids
for p in ps:
    if p["type"] != "row":
        assert p["datasource"]["uid"] == "${datasource}" and p["targets"], p["title"]' "$D"
check "the rules and their tests parse as YAML" /usr/bin/python3 -c '
import sys, yaml
r = yaml.safe_load(open(sys.argv[1])); t = yaml.safe_load(open(sys.argv[2]))
assert r["groups"][0]["rules"] and t["tests"]' "$RULES" "$RTEST"

# ---- what trainpath writes ----
t0=$(date +%s)
"$TP" validate --profile quick --out "$WORK/v" --prometheus "$WORK/host.prom" -q >"$WORK/v.out" 2>&1
rc=$?
check "validate --profile quick --prometheus: ran (exit $rc: 0, or 1 for the audit's findings)" \
    test "$rc" -le 1 -a -s "$WORK/host.prom"

# the DaemonSet's pod's textfile folder (k8s_pod.py's for the volume
# "textfile") is the node's, where rank 0's validate writes too
TF=$WORK/ds/vol/textfile
mkdir -p "$TF"
# across an allocation (2 ranks on loopback, the env launcher): the fleet's
# rows, and each node's audit (check) labelled with its node
head -c 32 /dev/urandom | base64 >"$WORK/key" && chmod 600 "$WORK/key"
port=$(free_port)
for r in 0 1; do
    env RANK=$r WORLD_SIZE=2 MASTER_ADDR=127.0.0.1 MASTER_PORT=$port timeout 120 "$TP" validate \
        --only check,net --tier prolog --min-effect 900 --key-file "$WORK/key" --out "$WORK/alloc" \
        --prometheus "$TF/trainpath_validate.prom" -q >"$WORK/alloc$r.out" 2>&1 &
    apid[$r]=$!
    PIDS+=($!)
done
wait "${apid[0]}"; arc=$?; wait "${apid[1]}"
check "validate across 2 ranks (env launcher) --prometheus: ran (exit $arc) with the fleet's rows" \
    eval '[ "$arc" -le 1 ] && grep -q "^trainpath_fleet_nodes 2" "$TF/trainpath_validate.prom"'
[ "$arc" -le 1 ] || sed 's/^/#   /' "$WORK/alloc0.out" | tail -5
# the DaemonSet's node: the one validate's rows name first (rank 0's), so
# that both files hold that node's audit
NODE=$(grep -o 'host="[^"]*"' "$TF/trainpath_validate.prom" | head -1 | cut -d'"' -f2)
/usr/bin/python3 "$SRC/tests/integration/contrib/k8s_pod.py" pod "$C/kubernetes/check-daemonset.yaml" \
    DaemonSet 0 --node "$NODE" --ip 127.0.0.1 --root "$WORK/ds" --trainpath "$TP" --set INTERVAL_S=1
check "... the DaemonSet's pod writes into that folder" grep -qF "$TF/" "$WORK/ds/pod.sh"
run=(sh)
grep -q '^mount ' "$WORK/ds/pod.sh" && run=(unshare --mount sh)
"${run[@]}" "$WORK/ds/pod.sh" >"$WORK/ds.out" 2>&1 &
dspid=$!
PIDS+=($dspid)
first=""
for _ in $(seq 600); do
    [ -s "$TF/trainpath_check.prom" ] && first=$(stat -c %Y.%i "$TF/trainpath_check.prom") && break
    sleep 0.1
done
second=""
for _ in $(seq 600); do
    [ -n "$first" ] || break
    second=$(stat -c %Y.%i "$TF/trainpath_check.prom")
    [ "$second" != "$first" ] && break
    sleep 0.1
done
kill "$dspid" 2>/dev/null; wait "$dspid" 2>/dev/null
sed 's/^/# DaemonSet: /' "$WORK/ds.out" | head -3
check "the DaemonSet's command: $TF/trainpath_check.prom written, then replaced (a new inode)" \
    test -n "$first" -a -n "$second" -a "$first" != "$second"
check "... every sample labelled host=\"$NODE\" and source=\"daemonset\"" eval '
    samples=$(grep -vc "^#" "$TF/trainpath_check.prom")
    [ "$samples" -gt 3 ] && [ "$(grep -v "^#" "$TF/trainpath_check.prom" | grep -F "host=\"$NODE\"" | grep -cF "source=\"daemonset\"")" = "$samples" ]'
check "... the audit's verdict and every rule's" eval \
    'grep -q "^trainpath_check_nagios{" "$TF/trainpath_check.prom" && grep -q "^trainpath_check_rule_pass{.*rule=" "$TF/trainpath_check.prom"'
check "... no temporary file left in the textfile folder" \
    test "$(ls -A "$TF" | tr '\n' ' ')" = "trainpath_check.prom trainpath_validate.prom "
echo "# written in $(( $(date +%s) - t0 )) s"
if command -v promtool >/dev/null; then
    for f in "$WORK/host.prom" "$TF/trainpath_validate.prom" "$TF/trainpath_check.prom"; do
        check "promtool check metrics: ${f#"$WORK"/}" eval 'promtool check metrics <"$f" >"$WORK/pt.out" 2>&1 ||
            { sed "s/^/#   /" "$WORK/pt.out"; false; }'
    done
else
    ok "# SKIP promtool missing (Debian's prometheus; scripts/install-deps.sh)"
fi

# ---- node_exporter reads the folder as a node's would ----
# node_exporter DIR: scrape its textfile collector once; the page into
# $WORK/scrape, its log into $WORK/ne.log
node_exporter() {
    local p ne
    p=$(free_port) || return 1
    prometheus-node-exporter --collector.disable-defaults --collector.textfile \
        --collector.textfile.directory="$1" --web.listen-address=127.0.0.1:$p >"$WORK/ne.log" 2>&1 &
    ne=$!
    PIDS+=($ne)
    /usr/bin/python3 -c '
import sys, time, urllib.request
for _ in range(100):
    try:
        sys.stdout.write(urllib.request.urlopen("http://127.0.0.1:%s/metrics" % sys.argv[1], timeout=5).read().decode())
        break
    except OSError:
        time.sleep(0.1)' "$p" >"$WORK/scrape"
    sleep 0.2
    kill "$ne"; wait "$ne" 2>/dev/null
    [ -s "$WORK/scrape" ]
}
if command -v prometheus-node-exporter >/dev/null; then
    check "node_exporter scrapes the folder (validate's file and the DaemonSet's)" node_exporter "$TF"
    check "... read both whole (node_textfile_scrape_error 0, both files' mtimes)" eval '
        grep -q "^node_textfile_scrape_error 0" "$WORK/scrape" &&
        [ "$(grep -c "^node_textfile_mtime_seconds{file=.*trainpath_\(check\|validate\)\.prom\"}" "$WORK/scrape")" = 2 ]'
    check "... exports both: the fleet's rows and the DaemonSet's audit" eval \
        'grep -q "^trainpath_fleet_nodes" "$WORK/scrape" && grep -q "^trainpath_check_nagios{host=\"$NODE\",source=\"daemonset\"}" "$WORK/scrape"'
    check "... dropped no sample as a duplicate" eval '! grep -q "collected before" "$WORK/ne.log" ||
        { grep -o "collected metric [^{]*" "$WORK/ne.log" | head -3 | sed "s/^/#   /"; false; }'
    grep -o '^node_textfile_[a-z_]*' "$WORK/scrape" | sort -u >"$WORK/exporter.names"
    # the same two files without the DaemonSet's label: the same node's
    # audit twice, and node_exporter keeps one (the reason for the label)
    mkdir -p "$WORK/nolabel"
    cp "$TF/trainpath_validate.prom" "$WORK/nolabel/"
    sed 's/source="daemonset",//; s/{source="daemonset"}//' "$TF/trainpath_check.prom" >"$WORK/nolabel/trainpath_check.prom"
    node_exporter "$WORK/nolabel"
    check "... without source=\"daemonset\": node_exporter drops the node's audit from one file" \
        grep -q "trainpath_check_nagios.*was collected before with the same name and label values" "$WORK/ne.log"
else
    ok "# SKIP prometheus-node-exporter missing (scripts/install-deps.sh)"
    # what its textfile collector exports about the files (node_exporter 1.5)
    printf 'node_textfile_mtime_seconds\nnode_textfile_scrape_error\n' >"$WORK/exporter.names"
fi

# ---- the names ----
cat "$WORK/host.prom" "$TF/trainpath_validate.prom" "$TF/trainpath_check.prom" |
    grep -oE '^[a-zA-Z_:][a-zA-Z0-9_:]*' | sort -u >"$WORK/written"
cat "$WORK/exporter.names" >>"$WORK/written"
echo "# $(wc -l <"$WORK/written") metric names written"
check "every metric the dashboard, the rules and the rules' tests query is written" eval \
    '/usr/bin/python3 "$NAMES" check "$WORK/written" "$D" "$RULES" "$RTEST" >"$WORK/names.out" 2>&1; rc=$?
     sed "s/^/#   /" "$WORK/names.out"; [ $rc = 0 ]'
check "... the dashboard covers every part: net, coll, io, step, sdc, check, fleet, counters, run.ok" \
    /usr/bin/python3 -B -c '
import json, sys
sys.path.insert(0, sys.argv[2])
from promql_names import names, dashboard_exprs
seen = set().union(*(names(e) for _, e in dashboard_exprs(json.load(open(sys.argv[1])))))
miss = [p for p in ("net_", "coll_", "io_checkpoint", "io_commit", "step_", "sdc_", "check_", "fleet_",
                    "counters_", "run_ok") if not any(n.startswith("trainpath_" + p) for n in seen)]
assert not miss, miss' "$D" "$SRC/tests/integration/contrib"
# the checker catches a misspelt metric (one letter off, in the dashboard;
# one in a rule)
sed '0,/trainpath_coll_busbw_bytes_per_second/s//trainpath_coll_busbw_byte_per_second/' "$D" >"$WORK/bad.json"
/usr/bin/python3 "$NAMES" check "$WORK/written" "$WORK/bad.json" "$RULES" >"$WORK/bad.out" 2>&1
brc=$?
check "a misspelt metric in the dashboard is caught, and named (exit $brc)" eval \
    '[ $brc = 1 ] && grep -q ": trainpath_coll_busbw_byte_per_second$" "$WORK/bad.out"'
sed 's/expr: trainpath_check_nagios == 2/expr: trainpath_check_nagio == 2/' "$RULES" >"$WORK/bad.yml"
/usr/bin/python3 "$NAMES" check "$WORK/written" "$D" "$WORK/bad.yml" >"$WORK/bad.out" 2>&1
brc=$?
check "a misspelt metric in a rule is caught, and named (exit $brc)" eval \
    '[ $brc = 1 ] && grep -q "^rule TrainpathCheckCritical: trainpath_check_nagio$" "$WORK/bad.out"'

if command -v promtool >/dev/null; then
    check "promtool check rules: the rules are valid PromQL" eval \
        'promtool check rules "$RULES" >"$WORK/pt.out" 2>&1 || { sed "s/^/#   /" "$WORK/pt.out"; false; }'
    check "promtool test rules: each rule fires when it should, with its labels and words" eval \
        '(cd "$C/prometheus" && promtool test rules "$(basename "$RTEST")") >"$WORK/pt.out" 2>&1 ||
         { sed "s/^/#   /" "$WORK/pt.out" | head -30; false; }'
else
    ok "# SKIP promtool missing (Debian's prometheus; scripts/install-deps.sh)"
fi
finish
