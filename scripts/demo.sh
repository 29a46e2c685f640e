#!/usr/bin/env bash
# make demo: the main job on this host, `trainpath validate --profile quick`
# (the node audit, net over loopback, an allreduce sweep, the storage path,
# training steps and the plan of this machine), into results/demo/ with the
# history database and the HTML report; then the commented example plan.
# A node audit with findings is a verdict, not a failed demo: the demo fails
# only when a test could not run.
set -uo pipefail
TP=${1:-build/trainpath}
cd "$(dirname "$0")/.."
OUT=results/demo
rm -rf "$OUT"
mkdir -p "$OUT"

"$TP" validate --profile quick --out "$OUT"
rc=$?
echo
"$TP" plan docs/examples/plan.yaml --json "$OUT/plan-example.json" || rc=2
echo
case $rc in
0) echo "demo: every test passed; open $OUT/report.html" ;;
1) # exit 1: a test failed, or the audit found a critical finding: which?
   if /usr/bin/python3 - "$OUT" <<'PY'
import glob, json, sys
out = sys.argv[1]
docs = {p: json.load(open(p)) for p in glob.glob(out + "/*.json") if not p.endswith("plan-example.json")}
ran = all(d.get("status", {}).get("ok") for d in docs.values()) and len(docs) >= 8
crit = json.load(open(out + "/check.json"))["results"]["nagios"]["code"] == 2
sys.exit(0 if ran and crit else 1)
PY
   then
       echo "demo: every test ran; the node audit has critical findings (this host is not a tuned GPU node); open $OUT/report.html"
       rc=0
   else
       echo "demo: a test failed (see its .log in $OUT/); open $OUT/report.html"
   fi ;;
*) echo "demo: failed (exit $rc)" ;;
esac
exit $rc
