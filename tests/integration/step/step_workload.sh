#!/usr/bin/env bash
# The user's own model: real PyTorch DDP jobs (Debian's torch, CPU, gloo,
# two processes; a small MLP and a small convolutional net) recorded by
# contrib/pytorch/trainpath_record.py, each file checked against the model
# it came from and against what DDP itself reports of its rebuilt buckets
# (_get_ddp_logging_data), then replayed by trainpath step
# --workload over real ranks: DDP's buckets byte for byte, the recorded
# times beside the replayed ones; a bad workload file exits 2 naming it.
# The recorder writes version 2 (version 1 on request): the checks read
# DDP's buckets from either (bk below: a layout's allreduces with their
# parameters, each readiness from the forward's end, as version 1 has it).
. "$(dirname "$0")/../lib.sh"

# bk(d): (steps, buckets) of a workload file of version 1 or 2: the steps'
# forward_ns, backward_ns, optimizer_ns, step_ns, and DDP's buckets in
# firing order, each with its bytes, parameters and ready_ns (from the
# forward's end); version 2's recorded steps must share one layout
BK="
def bk(d):
    if d['trainpath_workload'] == 1:
        return d['steps'], d['buckets']
    q, L, sl = d['ranks'][0], d['layouts'], d['steps']['layout']
    assert all(L[l] == L[sl[0]] for l in sl), 'the recorded steps made other collectives'
    steps = {k: q[k] for k in ('forward_ns', 'backward_ns', 'optimizer_ns', 'step_ns') if k in q}
    return steps, [dict(c, ready_ns=[q['ready_ns'][s][i] - q['forward_ns'][s] for s in range(len(sl))])
                   for i, c in enumerate(L[sl[0]]) if c['kind'] == 'allreduce']
"

/usr/bin/python3 -c "import torch.distributed as d; assert d.is_gloo_available()" 2>/dev/null ||
    skip_all "python3-torch with gloo is not installed (scripts/install-deps.sh installs it)"
D=$WORK/data; mkdir -p "$D"
W=$WORK/workload.json
check "a real DDP job (2 processes, gloo, 12 steps) records its workload" run_rc 0 "$WORK/ddp.out" \
    timeout 300 /usr/bin/python3 "$SRC/tests/integration/step/ddp_record.py" "$W" "$(free_port)" 12
echo "# the recorder wrote version $(json_get "$W" "d['trainpath_workload']")"
check "... 11 steps recorded (the first skipped: DDP rebuilds its buckets after it), 2 ranks, gloo" \
    test "$(json_run "$W" "$BK
st, b = bk(d)
print(d['recorded']['steps'], d['recorded']['skipped_steps'], d['recorded']['world_size'], d['recorded']['backend'], [len(v) for v in st.values()])")" = \
    "11 1 2 gloo [11, 11, 11, 11]"
check "... DDP's buckets hold every parameter once, their bytes the parameters' (3 buckets)" \
    test "$(json_run "$W" "$BK
ps = {p['name']: p['bytes'] for p in d['model']['parameters']}
b = bk(d)[1]
names = [n for x in b for n in x['parameters']]
print(len(b), sorted(names) == sorted(ps), all(x['bytes'] == sum(ps[n] for n in x['parameters']) for x in b))")" = \
    "3 True True"
check "... the last layer's bucket fires first; each bucket's readiness within the backward" \
    test "$(json_run "$W" "$BK
st, b = bk(d); bw = st['backward_ns']
print('6.weight' in b[0]['parameters'], '0.weight' in b[-1]['parameters'], all(0 < x['ready_ns'][s] <= bw[s] for x in b for s in range(len(bw))))")" = \
    "True True True"
check "... its buckets are DDP's own (the rebuilt bucket sizes DDP reports, in order), its parameters the model's" \
    test "$(json_run "$W" "$BK
k = json.load(open('${W%.json}.ddp.json'))
ps = d['model']['parameters']
print(k['has_rebuilt_buckets'], [b['bytes'] for b in bk(d)[1]] == k['bucket_sizes'], len(ps) == k['num_parameter_tensors'],
      d['model']['parameter_bytes'] == k['total_parameter_size_bytes'], sum(__import__('math').prod(p['shape']) for p in ps) == k['parameters'])")" = \
    "1 True True True True"
check "... the batch and the checkpoint (Adam: the weights and two moments, at least 3x the parameters)" \
    test "$(json_run "$W" "print(d['batch'], d['checkpoint']['bytes'] >= 3 * d['model']['parameter_bytes'])")" = \
    "{'samples_per_rank': 32, 'sample_bytes': 264} True"

C=$WORK/conv.json
check "a real DDP job of a small convolutional net (2 processes, gloo, 6 steps) records its workload" \
    run_rc 0 "$WORK/conv.out" timeout 300 /usr/bin/python3 "$SRC/tests/integration/step/ddp_record.py" "$C" "$(free_port)" 6 conv
check "... its buckets are DDP's own, every parameter once, its parameters the model's (several buckets)" \
    test "$(json_run "$C" "$BK
k = json.load(open('${C%.json}.ddp.json'))
ps = d['model']['parameters']
b = bk(d)[1]
names = [n for x in b for n in x['parameters']]
print(k['has_rebuilt_buckets'], len(b) > 1, [x['bytes'] for x in b] == k['bucket_sizes'],
      sorted(names) == sorted(p['name'] for p in ps), sum(__import__('math').prod(p['shape']) for p in ps) == k['parameters'],
      [len(p['shape']) for p in ps][:2])")" = \
    "1 True True True True [4, 1]"
check "... step -n 2 replays it, DDP's buckets byte for byte" \
    test "$(run_rc 0 "$WORK/conv-replay.out" "$TP" step -n 2 --workload "$C" --steps 3 --no-io -q --json "$WORK/conv-replay.json" &&
        json_run "$WORK/conv-replay.json" "$BK
print(r['workload']['replayed']['bucket_bytes'] == [b['bytes'] for b in bk(json.load(open('$C')))[1]])")" = True

J=$WORK/replay.json
check "step -n 2 --workload replays it (6 steps)" run_rc 0 "$WORK/replay.out" \
    "$TP" step -n 2 --workload "$W" --steps 6 --dir "$D" --json "$J"
check "... a valid document" valid_doc "$J"
check "... DDP's buckets, byte for byte, in firing order; the gradient their sum" \
    test "$(json_run "$J" "$BK
b = bk(json.load(open('$W')))[1]
print(r['workload']['replayed']['bucket_bytes'] == [x['bytes'] for x in b], d['config']['buckets'], d['config']['grad_bytes'] == sum(x['bytes'] for x in b))")" = \
    "True 3 True"
check "... the recorded batch, sample size and checkpoint; the file named with its hash" \
    test "$(json_get "$J" "d['config']['batch'], d['config']['sample_bytes'], d['config']['ckpt_bytes'] == json.load(open('$W'))['checkpoint']['bytes'], d['config']['workload']['source'], len(d['config']['workload']['sha256'])")" = \
    "64 264 True pytorch-ddp 64"
check "... recorded and replayed medians side by side, with their ratios" \
    test "$(json_run "$J" "w = r['workload']; print(all(w[k][m]['value'] > 0 for k, m in (('recorded', 'compute_p50'), ('recorded', 'step_p50'), ('replayed', 'compute_p50'), ('replayed', 'step_p50'))), all(v > 0 for v in w['replayed_over_recorded'].values()))")" = \
    "True True"
check "... the compute is the recorded one (each step replays a recorded step): within 0.5x-3x of it" \
    test "$(json_get "$J" "0.5 < r['workload']['replayed_over_recorded']['compute'] < 3")" = True

bad() { local pat=$1; shift
    if run_rc 2 "$WORK/out" "$TP" step -n 2 --dir "$D" "$@" && grep -q -- "$pat" "$WORK/out"; then ok "bad input: $*"
    else echo "# wanted /$pat/"; sed 's/^/#   /' "$WORK/out" | head -3; not_ok "bad input: $*"; fi; }
# (version 1's refusals on its fixture, a recording of this same job)
V1=$SRC/tests/fixtures/workload/ddp-mlp.json
/usr/bin/python3 -c "import json,sys; d=json.load(open(sys.argv[1])); d['buckets'][1]['bytes']='1M'; json.dump(d, open(sys.argv[2], 'w'))" "$V1" "$WORK/b1.json"
/usr/bin/python3 -c "import json,sys; d=json.load(open(sys.argv[1])); d['trainpath_workload']=3; json.dump(d, open(sys.argv[2], 'w'))" "$V1" "$WORK/v3.json"
/usr/bin/python3 -c "import json,sys; d=json.load(open(sys.argv[1])); d['trainpath_workload']=2; json.dump(d, open(sys.argv[2], 'w'))" "$V1" "$WORK/v2.json"
/usr/bin/python3 -c "import json,sys; d=json.load(open(sys.argv[1])); d['buckets'][0]['ready_ns'].pop(); json.dump(d, open(sys.argv[2], 'w'))" "$V1" "$WORK/short.json"
bad "\-\-workload $WORK/none.json: .*No such file" --workload "$WORK/none.json"
bad "\-\-workload $WORK/b1.json: buckets\[1\].bytes: must be a whole number" --workload "$WORK/b1.json"
bad "\-\-workload $WORK/v3.json: trainpath_workload: must be 1 or 2" --workload "$WORK/v3.json"
bad "\-\-workload $WORK/v2.json: layouts: must be a list of 1 to 100000 layouts" --workload "$WORK/v2.json"
bad "buckets\[0\].ready_ns: must have one duration per recorded step" --workload "$WORK/short.json"
bad "\-\-preset with \-\-workload: the workload's model sets it" --workload "$W" --preset resnet50
bad "\-\-buckets with \-\-workload" --workload "$W" --buckets 4
finish
