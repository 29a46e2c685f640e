#!/usr/bin/env bash
# Hardening, numbers (docs/reliability.md, "Adversarial input", classes 6
# and 9): a plan's numbers outside physical sense are refused with
# FILE:LINE:COL, the key, the value as typed and the range (exit 2, the
# --json document saying why); a plan with huge but legal values lists
# every candidate with finite numbers (one that cannot complete a run keeps
# its place, with a reason); durations and sizes take one grammar on the
# command line and in YAML (compound durations, fractional sizes) and give
# the same effective value in the result documents; bad ones are refused
# echoing the input as typed; --timeout 0 and --time 0 are refused by
# every command, --warmup 0 is allowed.
. "$(dirname "$0")/../lib.sh"

EX="$SRC/docs/examples/plan.yaml"

# ---- class 6: a plan's numbers out of range ----
# name | sed expression on the example plan | FILE:LINE:COL: KEY: message
cases=(
    "nodes of 20 digits|s/^  nodes: 128/  nodes: 99999999999999999999/|plan.yaml:33:10: cluster.nodes: '99999999999999999999' must be at least 1 and at most 1000000 nodes"
    "parameters 1e308|s/^  parameters: 7B/  parameters: 1e308/|plan.yaml:17:15: workload.parameters: '1e308' must be between 1 and 1e15"
    "oversubscription 1e300|s/^      oversubscription: 2/      oversubscription: 1e300/|plan.yaml:57:25: candidates\[0\].network.oversubscription: '1e300' must be between 1 and 1000"
    "a write bandwidth of 1e-300|s/^      write_bandwidth: 20GB\/s/      write_bandwidth: 1e-300/|plan.yaml:61:24: candidates\[0\].storage.write_bandwidth: '1e-300' must be between 1B/s and 1PB/s"
    "a gpu_hour of 1e300|s/^  gpu_hour: \\\$2.50/  gpu_hour: 1e300/|plan.yaml:44:13: prices.gpu_hour: '1e300' must be between \\\$0 and"
    "an mtbf of 1 ns|s/^  mtbf_per_node: 6000h/  mtbf_per_node: 1ns/|plan.yaml:40:18: cluster.mtbf_per_node: '1ns' must be between 1 min and 1000 y"
    "a seed of 20 digits|s/^  seed: 1/  seed: 99999999999999999999/|plan.yaml:104:9: simulate.seed: '99999999999999999999' is too large"
    "a sweep beyond any cluster|s/^  gpus: \[8, 32,/  gpus: [8, 99999999999999999999,/|plan.yaml:100:13: sweep.gpus\[1\]: '99999999999999999999' must be between 1 and 1024000000"
    "a compound duration out of order|s/^  restart: 10m/  restart: 30m1h/|plan.yaml:41:12: cluster.restart: cannot parse '30m1h' as a duration"
)
docs=()
for c in "${cases[@]}"; do
    IFS='|' read -r what expr pat <<<"$c"
    d="$WORK/bad-${what// /-}"
    mkdir -p "$d"
    sed "$expr" "$EX" >"$d/plan.yaml"
    if cmp -s "$EX" "$d/plan.yaml"; then
        not_ok "$what: the sed expression changed nothing"
        continue
    fi
    (cd "$d" && timeout 20 "$TP" plan plan.yaml --json out.json >out 2>&1)
    rc=$?
    if [ "$rc" -eq 2 ] && grep -qE -- "$pat" "$d/out"; then
        ok "$what: exit 2, $(head -c 110 "$d/out" | tr -d '\n')"
    else
        not_ok "$what: exit 2 and '$pat' (got exit $rc)"
        sed 's/^/#   /' "$d/out" | head -5
    fi
    docs+=("$d/out.json")
done
# every refused plan's --json document says why (one python for them all)
check "each refused plan's document: exit_code 2, the message, no results" python3 -c "
import json, sys
bad = []
for f in sys.argv[1:]:
    d = json.load(open(f))
    if not (d['status']['exit_code'] == 2 and 'plan.yaml:' in d['status']['message']
            and 'candidates' not in d.get('results', {})):
        bad.append(f)
print('# %d documents, %d wrong %s' % (len(sys.argv) - 1, len(bad), bad))
sys.exit(1 if bad or len(sys.argv) != ${#cases[@]} + 1 else 0)" "${docs[@]}"

# ---- class 6: huge but legal values: every candidate, finite numbers ----
sed -e 's/^  nodes: 128/  nodes: 1000000/' -e 's/^  gpus_per_node: 8/  gpus_per_node: 1024/' \
    -e 's/^  parameters: 7B/  parameters: 1e15/' -e 's/^  train_samples: 1T/  train_samples: 1e18/' \
    -e 's/^      oversubscription: 2/      oversubscription: 1000/' \
    -e 's/^  mtbf_per_node: 6000h/  mtbf_per_node: 1000y/' \
    -e 's/^      write_bandwidth: 20GB\/s/      write_bandwidth: 1B\/s/' \
    -e 's/^  gpu_hour: \$2.50/  gpu_hour: 10000/' -e 's/^  steps: 1000/  steps: 50/' \
    "$EX" >"$WORK/huge.yaml"
check "huge but legal plan: exit 0" run_rc 0 "$WORK/huge.out" \
    "$TP" plan "$WORK/huge.yaml" --json "$WORK/huge.json"
check "... all 3 candidates ranked and listed, numbers finite" json_run "$WORK/huge.json" "
import math, sys
def finite(x):
    if isinstance(x, dict): return all(finite(v) for v in x.values())
    if isinstance(x, list): return all(finite(v) for v in x)
    return not isinstance(x, float) or math.isfinite(x)
c = r['candidates']
ok = len(c) == 3 and len(r['ranking']) == 3 and all(len(s['candidates']) == 3 for s in r['sweep'])
ok = ok and finite(d) and sorted(x['rank'] for x in c) == [1, 2, 3]
# the one whose run cannot complete stays, last, with its reason
ok = ok and c[-1]['name'] == 'tcp-100g-nfs' and 'never completes' in c[-1].get('reason', '')
ok = ok and all('reason' not in x and x['cost']['total']['value'] > 0 for x in c[:2])
print('# ranking', r['ranking'], [x.get('reason', '')[:60] for x in c])
sys.exit(not ok)"
check "... the table says so, no inf or nan" bash -c \
    "grep -q 'tcp-100g-nfs cannot be evaluated at 1024000000 GPUs' '$WORK/huge.out' && ! grep -qiE 'inf|nan' '$WORK/huge.out'"

# the job never completes at any candidate: still every candidate, with reasons
sed -e 's/^  nodes: 128/  nodes: 1000000/' -e 's/^  mtbf_per_node: 6000h/  mtbf_per_node: 1min/' \
    -e 's/^  restart: 10m/  restart: 1w/' -e 's/^  steps: 1000/  steps: 10/' "$EX" >"$WORK/never.yaml"
check "a plan no candidate can complete: exit 0" run_rc 0 "$WORK/never.out" \
    "$TP" plan "$WORK/never.yaml" --json "$WORK/never.json"
check "... every candidate with its reason" bash -c "
    python3 -c \"import json,sys; r=json.load(open('$WORK/never.json'))['results']
sys.exit(not (len(r['candidates']) == 3 and all('never completes' in c['reason'] for c in r['candidates'])))\" &&
    grep -q 'no candidate completes a training run' '$WORK/never.out'"

# plan interval: the same limits as the plan file's keys
check "plan interval --mtbf 1ns: exit 2, echoed with its range" bash -c \
    "'$TP' plan interval --checkpoint-cost 5m --mtbf 1ns >'$WORK/i.out' 2>&1; [ \$? -eq 2 ] && grep -q \"mtbf: '1ns' must be between 1 min and 1000 y\" '$WORK/i.out'"
check "plan interval at the limits: exit 0" run_rc 0 "$WORK/il.out" \
    "$TP" plan interval --checkpoint-cost 1w --mtbf 1min --restart 1w --json "$WORK/il.json" -q
check "plan --gpus of 20 digits: exit 2" bash -c \
    "'$TP' plan '$EX' --gpus 99999999999999999999 >'$WORK/g.out' 2>&1; [ \$? -eq 2 ] && grep -q \"gpus: '99999999999999999999' is out of range 1..1024000000\" '$WORK/g.out'"

# ---- class 9: one grammar on the command line and in YAML ----
# plan interval (CLI) and a plan file (YAML) with the same spellings
check "CLI: plan interval --checkpoint-cost 1m30s --mtbf 1h30m --restart 500µs" run_rc 0 \
    "$WORK/ci.out" "$TP" plan interval --checkpoint-cost 1m30s --mtbf 1h30m --restart 500µs \
    --json "$WORK/ci.json" -q
sed -e 's/^  mtbf_per_node: 6000h/  mtbf_job: 1h30m/' -e 's/^  restart: 10m/  restart: 500µs/' \
    -e 's/^  compute_time: 1.7s /  compute_time: 1m30s/' \
    -e 's/^  # checkpoint_bytes defaults.*/  checkpoint_bytes: 1.5M/' \
    -e 's/^  amortization: 4y /  amortization: 2w/' -e 's/^  steps: 1000/  steps: 10/' \
    "$EX" >"$WORK/g.yaml"
check "YAML: the same spellings in a plan file" run_rc 0 "$WORK/gy.out" \
    "$TP" plan "$WORK/g.yaml" --json "$WORK/gy.json" -q
check "CLI: io checkpoint --size 1.5M --timeout 2h15m30s" run_rc 0 "$WORK/io.out" \
    "$TP" io checkpoint "$WORK" --size 1.5M --timeout 2h15m30s --repeat 1 -q --json "$WORK/io.json"
check "... the same effective values in both documents" python3 -c "
import json, sys
ci = json.load(open('$WORK/ci.json'))['config']
gy = json.load(open('$WORK/gy.json'))['config']
io = json.load(open('$WORK/io.json'))['config']
pairs = [('1m30s', ci['checkpoint_cost_s'], gy['workload']['compute_s'], 90),
         ('1h30m', ci['mtbf_s'], gy['cluster']['mtbf_job_s'], 5400),
         ('500µs', ci['restart_s'], gy['cluster']['restart_s'], 0.0005),
         ('1.5M', io['size_bytes'], gy['workload']['checkpoint_bytes'], 1572864),
         ('2w', gy['prices']['amortization_s'], 14 * 86400, 1209600),
         ('2h15m30s', io['timeout_ns'] / 1e9, 8130, 8130)]
bad = [p for p in pairs if not (abs(p[1] - p[3]) <= 1e-12 * p[3] and abs(p[2] - p[3]) <= 1e-12 * p[3])]
print('# ' + ', '.join('%s = %r and %r' % p[:3] for p in pairs))
sys.exit(1 if bad else 0)"

# bad spellings refused, echoing the input as typed (exit 2, before any work)
cases=(
    "--mtbf: cannot parse '1h30' as a duration|plan interval --checkpoint-cost 5m --mtbf 1h30"
    "--mtbf: '1h1h': give each unit once, largest first|plan interval --checkpoint-cost 5m --mtbf 1h1h"
    "--mtbf: '600y' is too large|plan interval --checkpoint-cost 5m --mtbf 600y"
    "--size: '1.3K' is not a whole number of bytes|io checkpoint $WORK --size 1.3K"
    "--size: '1.5GB' is ambiguous|io checkpoint $WORK --size 1.5GB"
    "--timeout: '0' is below 1 ms|io checkpoint $WORK --size 1M --timeout 0"
    "--timeout: '0' is below 1 ms|coll -n 2 --sizes 8 --timeout 0"
    "--timeout: '0' is below 1 ms|net lat 127.0.0.1 --timeout 0"
    "--time: '0' is below 1 ms|net lat 127.0.0.1 --time 0"
    "--time: '0' is below 1 ms|coll -n 2 --sizes 8 --time 0"
    "--time: '0' is below 1 ms|io commit $WORK --time 0"
    "--iters: '99999999999999999999' is out of range|net lat 127.0.0.1 --iters 99999999999999999999"
)
for c in "${cases[@]}"; do
    IFS='|' read -r pat args <<<"$c"
    # shellcheck disable=SC2086
    timeout 20 "$TP" $args >"$WORK/out" 2>&1
    rc=$?
    if [ "$rc" -eq 2 ] && grep -qF -- "$pat" "$WORK/out"; then
        ok "trainpath $args -> exit 2, '$pat'"
    else
        not_ok "trainpath $args -> exit 2, '$pat' (got exit $rc)"
        sed 's/^/#   /' "$WORK/out" | head -5
    fi
done

# --warmup 0 means no warm-up, in coll and in net alike
check "coll --warmup 0: exit 0" run_rc 0 "$WORK/cw.out" \
    "$TP" coll -n 2 --sizes 8 --iters 2 --warmup 0 -q --json "$WORK/cw.json"
check "... recorded as 0" json_run "$WORK/cw.json" "import sys; sys.exit(d['config']['warmup'] != 0)"
if start_server srv -- --bind 127.0.0.1; then
    check "net lat --warmup 0: exit 0" run_rc 0 "$WORK/nw.out" \
        "$TP" net lat 127.0.0.1 -p "$PORT" --sizes 8 --iters 20 --warmup 0 --json "$WORK/nw.json"
    check "... recorded as 0 iterations and 0 s" json_run "$WORK/nw.json" \
        "import sys; c=d['config']; sys.exit(not (c['warmup_iterations'] == 0 and c['warmup_s'] == 0))"
else
    not_ok "net serve did not start"
fi
# one schema check for every document that should be valid (python is slow to start)
check "the documents of huge, never-completing and limit runs are valid" valid_doc \
    "$WORK/huge.json" "$WORK/never.json" "$WORK/il.json" "$WORK/ci.json" "$WORK/gy.json" \
    "$WORK/io.json" "$WORK/cw.json" "${docs[@]}"
finish
