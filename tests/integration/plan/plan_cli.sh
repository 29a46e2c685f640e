#!/usr/bin/env bash
# trainpath plan interval: Young's and Daly's checkpoint intervals and the
# waste at each, as text and as a result document; trainpath plan FILE on the
# commented example: three candidates ranked, the words, the sweep and the
# break-even; bad plans and bad measured inputs exit 2 naming the place.
. "$(dirname "$0")/../lib.sh"

J=$WORK/interval.json
check "plan interval --checkpoint-cost 5m --mtbf 24h" run_rc 0 "$WORK/out" \
    "$TP" plan interval --checkpoint-cost 5m --mtbf 24h --json "$J"
check "... says every 7001 s (Daly), 7200 s (Young)" grep -q "checkpoint every 7001 s (Daly; Young: 7200 s)" "$WORK/out"
check "... valid document with both intervals and wastes" valid_doc "$J"
check "... Young exactly sqrt(2 x 300 x 86400) = 7200 s; Daly's waste the smaller" \
    test "$(json_get "$J" "r['young']['interval']['value'], r['daly']['waste_fraction'] <= r['young']['waste_fraction']")" = "7200.0 True"
check "a restart cost raises the waste" run_rc 0 "$WORK/out2" \
    "$TP" plan interval --checkpoint-cost 5m --mtbf 24h --restart 10m --json "$WORK/r.json"
check "... above the run without" \
    test "$(json_run "$WORK/r.json" "a=r['daly']['waste_fraction']; print(a > $(json_get "$J" "r['daly']['waste_fraction']"))")" = True
check "no --checkpoint-cost: exit 2" run_rc 2 "$WORK/out" "$TP" plan interval --mtbf 24h
check "... naming it" grep -q "\-\-checkpoint-cost: needed" "$WORK/out"
check "--mtbf 0: exit 2" run_rc 2 "$WORK/out" "$TP" plan interval --checkpoint-cost 5m --mtbf 0
check "--mtbf junk: exit 2" run_rc 2 "$WORK/out" "$TP" plan interval --checkpoint-cost 5m --mtbf soon

EX=$SRC/docs/examples/plan.yaml
P=$WORK/plan.json
check "plan docs/examples/plan.yaml" run_rc 0 "$WORK/plan.out" "$TP" plan "$EX" --json "$P"
sed 's/^/# /' "$WORK/plan.out"
check "... a valid result document" valid_doc "$P"
check "... three candidates ranked by cost per run, 1 2 3" \
    test "$(json_get "$P" "[c['rank'] for c in r['candidates']] == [1, 2, 3] and all(a['cost']['total']['value'] <= b['cost']['total']['value'] for a, b in zip(r['candidates'], r['candidates'][1:]))")" = True
check "... at 1024 GPUs on 128 nodes" test "$(json_get "$P" "r['gpus'], r['nodes']")" = "1024.0 128.0"
check "... TCP-100G's step mostly exposed communication, said in words" \
    grep -Eq "^- at 1024 GPUs the step of tcp-100g-nfs is [4-9][0-9] % exposed communication; .* cuts it to [0-9] %" "$WORK/plan.out"
check "... the step: slowest rank + exposed comm + rare stall + data stall" \
    test "$(json_run "$P" "import math
print(all(math.isclose(c['step']['value'], c['compute_slowest']['value'] + c['comm_exposed']['value'] + c['rare_event']['value'] + c['data_stall']['value'], rel_tol=1e-9) for c in r['candidates']))")" = True
check "... the sweep: six scales, each with every candidate" \
    test "$(json_get "$P" "[s['gpus'] for s in r['sweep']] == [8, 32, 128, 512, 1024, 4096] and all(len(s['candidates']) == 3 for s in r['sweep'])")" = True
check "... a break-even scale where the cheap network stops being cheapest" \
    test "$(json_get "$P" "any(b['than'] == 'tcp-100g-nfs' and b['from_gpus'] > 8 for b in r['break_even'])")" = True
check "... 1000 simulated steps per candidate, their mean near the model's" \
    test "$(json_get "$P" "all(len(c['simulation']['series']) == 1000 and abs(c['simulation']['mean']['value'] / c['step']['value'] - 1) < 0.02 for c in r['candidates'])")" = True
check "--gpus 64 evaluates there" run_rc 0 "$WORK/out" "$TP" plan "$EX" --gpus 64 -q --json "$WORK/g.json"
check "... 64 GPUs, 8 nodes" test "$(json_get "$WORK/g.json" "r['gpus'], r['nodes']")" = "64.0 8.0"

# workload.from: the user's own model, recorded from a real PyTorch DDP job
# (tests/fixtures/workload/ddp-mlp.json, written by step/ddp_record.py)
FX=$SRC/tests/fixtures/workload/ddp-mlp.json
{ printf 'workload:\n  from: %s\n  train_samples: 10M\n' "$FX"; sed -n '/^cluster:/,$p' "$EX"; } >"$WORK/from.yaml"
check "a plan whose workload comes from a recorded workload file" run_rc 0 "$WORK/from.out" \
    "$TP" plan "$WORK/from.yaml" --json "$WORK/from.json"
check "... a valid result document" valid_doc "$WORK/from.json"
check "... the recorded model: its parameters, gradient bytes per parameter, batch, sample and checkpoint" \
    test "$(json_run "$WORK/from.json" "
import math
w = d['config']['workload']; f = json.load(open('$FX'))
params = sum(math.prod(p['shape']) for p in f['model']['parameters'])
print(w['parameters'] == params, abs(w['gradient_bytes_per_parameter'] * params - sum(b['bytes'] for b in f['buckets'])) < 1,
      w['samples_per_gpu'] == f['batch']['samples_per_rank'], w['dataset_bytes_per_sample'] == f['batch']['sample_bytes'],
      w['checkpoint_bytes'] == f['checkpoint']['bytes'], w['from']['compute_distribution'])")" = "True True True True True True"
check "... the compute the mean of the recorded steps' forward + backward + optimizer" test "$(json_run "$WORK/from.json" "
f = json.load(open('$FX'))['steps']
m = sum(a + b + c for a, b, c in zip(f['forward_ns'], f['backward_ns'], f['optimizer_ns'])) / len(f['forward_ns']) / 1e9
print(abs(d['config']['workload']['compute_s'] - m) < 1e-9 * m)")" = True
check "... the overlap: the share of each bucket's allreduce that ran before the backward ended" \
    test "$(json_run "$WORK/from.json" "
f = json.load(open('$FX')); bw = f['steps']['backward_ns']
hid = sum(min(b['allreduce_ns'][s], max(bw[s] - b['ready_ns'][s], 0)) for b in f['buckets'] for s in range(len(bw)))
tot = sum(sum(b['allreduce_ns']) for b in f['buckets'])
print(abs(d['config']['workload']['overlap'] - hid / tot) < 1e-9, 0 < hid / tot < 1)")" = "True True"
{ printf 'workload:\n  from: %s\n  train_samples: 10M\n  samples_per_gpu: 64\n' "$FX"; sed -n '/^cluster:/,$p' "$EX"; } >"$WORK/from2.yaml"
check "... a key written in the plan wins over the recording" run_rc 0 "$WORK/from2.out" \
    "$TP" plan "$WORK/from2.yaml" --json "$WORK/from2.json"
check "... (samples_per_gpu 64)" test "$(json_get "$WORK/from2.json" "d['config']['workload']['samples_per_gpu']")" = 64.0
{ printf 'workload:\n  from: nowhere.json\n  train_samples: 10M\n'; sed -n '/^cluster:/,$p' "$EX"; } >"$WORK/from3.yaml"
check "... a workload file that is not there: exit 2, line:column, key and file named" run_rc 2 "$WORK/from3.out" \
    "$TP" plan "$WORK/from3.yaml"
check "... (the message)" grep_q "from3.yaml:2:3: workload.from: --workload $WORK/nowhere.json: cannot read" "$WORK/from3.out"

# bad plans: exit 2, the file:line:column and key path named, a failed document
bad() { # bad NAME SED-EXPR WANT-REGEX
    sed -e "$2" "$EX" >"$WORK/$1.yaml"
    run_rc 2 "$WORK/$1.out" "$TP" plan "$WORK/$1.yaml" --json "$WORK/$1.json" &&
        grep -Eq "$3" "$WORK/$1.out" ||
        { echo "# wanted /$3/ in:"; sed 's/^/#   /' "$WORK/$1.out"; return 1; }
}
check "a typo in a key: named with line:column and a suggestion" \
    bad typo 's/  compute_time: 1.7s/  compute_tme: 1.7s/' "typo.yaml:21:3: workload.compute_tme: unknown key \(did you mean compute_time\?"
check "... and a failed result document saying why" \
    test "$(json_get "$WORK/typo.json" "d['status']['ok'], d['status']['exit_code'], 'compute_tme' in d['status']['message']")" = "False 2 True"
check "... which is valid" valid_doc "$WORK/typo.json"
check "zero nodes" bad zero 's/  nodes: 128/  nodes: 0/' "zero.yaml:[0-9]+:10: cluster.nodes: .*at least 1"
check "a negative bandwidth" bad neg 's/write_bandwidth: 20GB\/s/write_bandwidth: -20GB\/s/' \
    "neg.yaml:[0-9]+:[0-9]+: candidates\[0\].storage.write_bandwidth: "
check "an unknown algorithm" bad algo 's/topology: fat-tree/algorithm: butterfly/' \
    "algo.yaml:[0-9]+:[0-9]+: candidates\[0\].network.algorithm: .*butterfly"
check "a YAML syntax error" bad syntax 's/gpus: \[8, 32/gpus: [8, 32:/' "syntax.yaml:[0-9]+:[0-9]+: "

# measured inputs that cannot serve: the plan's place and the file named
"$TP" plan interval --checkpoint-cost 1s --mtbf 1h --json "$WORK/interval-doc.json" >/dev/null
sed -e "s|    latency: 3us |    latency: {measured: $WORK/interval-doc.json} |" "$EX" >"$WORK/kind.yaml"
check "a measured file of the wrong kind" run_rc 2 "$WORK/kind.out" "$TP" plan "$WORK/kind.yaml"
check "... names the key, the file and the kinds it takes" grep -q \
    "kind.yaml:[0-9]*:[0-9]*: cluster.intra_node.latency: measured file $WORK/interval-doc.json is a 'plan interval' result; intra_node.latency takes a 'net lat' or 'coll' result" "$WORK/kind.out"
sed -e "s|    latency: 3us |    latency: {measured: nowhere.json} |" "$EX" >"$WORK/missing.yaml"
check "a measured file that does not exist" run_rc 2 "$WORK/missing.out" "$TP" plan "$WORK/missing.yaml"
check "... named, relative to the plan's folder" grep -q "measured file $WORK/nowhere.json" "$WORK/missing.out"
sed -e "s|    latency: 3us |    latency: {measured: typo.json} |" "$EX" >"$WORK/failed.yaml"
check "a measured file from a failed run" run_rc 2 "$WORK/failed.out" "$TP" plan "$WORK/failed.yaml"
check "... says so, with its reason" grep -q "typo.json: is the result of a failed run (.*compute_tme" "$WORK/failed.out"
# the storage figures from io results: commit latency from io commit, read
# bandwidth from io dataset (the other inputs: plan_predict.sh)
mkdir -p "$WORK/io"
"$TP" io commit --dir "$WORK/io" --count 50 --json "$WORK/io-commit.json" -q
"$TP" io dataset --dir "$WORK/io" --records 2048 --record-size 4K --epochs 1 \
    --json "$WORK/io-dataset.json" -q
sed -e "s|      commit_latency: 50ms |      commit_latency: {measured: io-commit.json} |" \
    -e "s|      read_bandwidth: 20GB/s |      read_bandwidth: {measured: io-dataset.json} |" \
    "$EX" >"$WORK/io.yaml"
check "plan with io commit and io dataset inputs" run_rc 0 "$WORK/io.out" \
    "$TP" plan "$WORK/io.yaml" -q --json "$WORK/io.json"
check "... both read and described" test "$(json_run "$WORK/io.json" "
i = {x['where'].split(': ')[-1]: x for x in d['config']['inputs']}
c = i['candidates[0].storage.commit_latency']; r = i['candidates[0].storage.read_bandwidth']
print(c['command'], r['command'], c['value'] > 0, r['value'] > 0, 'commit (write + fdatasync)' in c['source'])")" \
    = "io commit io dataset True True True"
check "... the figures in the candidate" test "$(json_run "$WORK/io.json" "
i = {x['where'].split(': ')[-1]: x['value'] for x in d['config']['inputs']}
c = [x for x in d['config']['candidates'] if x['name'] == 'tcp-100g-nfs'][0]['storage']
print(c['commit_latency_s'] == i['candidates[0].storage.commit_latency'], c['read_Bps'] == i['candidates[0].storage.read_bandwidth'])")" = "True True"
check "no plan file: exit 2" run_rc 2 "$WORK/out" "$TP" plan
check "a plan file that does not exist: exit 2" run_rc 2 "$WORK/out" "$TP" plan "$WORK/none.yaml"
finish
