#!/usr/bin/env bash
# trainpath step over real local ranks: the phases of a step add up to the
# step; an injected delay shows up where it was injected; amplification is
# at least 1; the weights' hash is the same across runs with injected jitter
# (plain and exact) and across rank counts (exact); arrival-order summation
# diverges under jitter and says by how many ulps; checkpoints (sync and
# async) are counted as stalls; bad input exits 2.
. "$(dirname "$0")/../lib.sh"

D=$WORK/data; mkdir -p "$D"
small=(--steps 12 --batch 48 --sample-size 1K --grad-size 256K --compute-ms 2 --dir "$D")

J=$WORK/base.json
check "step -n 2 runs (exit 0)" run_rc 0 "$WORK/out" "$TP" step -n 2 "${small[@]}" --json "$J"
check "... valid document" valid_doc "$J"
check "... 12 steps x 2 ranks in every series; loss per step" \
    test "$(json_run "$J" "x=r['runs'][0]; print([len(x['series'][k]) for k in ('step','data_wait','compute','comm','comm_exposed','ckpt_stall')], len(x['series']['step'][0]), len(x['loss']))")" = "[12, 12, 12, 12, 12, 12] 2 12"
check "... the phases add up to the step (wait + compute + exposed comm + ckpt, within 0.3 ms)" \
    test "$(json_run "$J" "x=r['runs'][0]['series']; print(all(abs(x['step'][s][k] - x['data_wait'][s][k] - x['compute'][s][k] - x['comm_exposed'][s][k] - x['ckpt_stall'][s][k]) < 300000 for s in range(12) for k in range(2)))")" = True
check "... amplification >= 1, fractions in [0, 1]" \
    test "$(json_run "$J" "m=r['runs'][0]['summary']; print(m['amplification'] >= 1, all(0 <= m[k] <= 1 for k in ('exposed_comm_fraction','ckpt_overhead_fraction','data_wait_fraction','compute_fraction','comm_hidden_fraction')))")" = "True True"
check "... one bucket, released when the compute ends: nothing counted as overlapped" \
    test "$(json_run "$J" "x=r['runs'][0]; print(sum(map(sum, x['series']['comm_overlapped'])), x['summary']['comm_hidden_fraction'])")" = "0 0.0"
check "4 buckets overlapped with the compute" run_rc 0 "$WORK/out" "$TP" step -n 2 "${small[@]}" --buckets 4 -q --json "$WORK/b4.json"
check "... some comm time hidden, never more than the comm time" \
    test "$(json_run "$WORK/b4.json" "x=r['runs'][0]['series']; print(sum(map(sum, x['comm_overlapped'])) > 0, all(x['comm_overlapped'][s][k] <= x['comm'][s][k] for s in range(12) for k in range(2)))")" = "True True"
check "... the loss goes down" test "$(json_run "$J" "l=r['runs'][0]['loss']; print(l[-1] < l[0])")" = True
check "... the dataset was created in the folder" test -f "$D/trainpath-step/manifest.json"
check "a second run reuses the dataset" run_rc 0 "$WORK/out" "$TP" step -n 2 "${small[@]}" -q --json "$WORK/again.json"
check "... not created again, and the same weights" \
    test "$(json_get "$WORK/again.json" "r['dataset_created'], r['reproducibility']['weights_sha256']")" = "False $(json_get "$J" "r['reproducibility']['weights_sha256']")"

# an injected delay appears where it was injected, on the rank named
J=$WORK/delay.json
check "step with io delay on rank 1 and comm delay on rank 0" run_rc 0 "$WORK/out" \
    "$TP" step -n 2 "${small[@]}" --prefetch 1 --inject-delay io:const:15ms@1 --inject-delay comm:const:7ms@0 -q --json "$J"
check "... delay_io is 15 ms on rank 1 only, delay_comm 7 ms on rank 0 only (every step)" \
    test "$(json_run "$J" "x=r['runs'][0]['series']; print(all(s==[0,15000000] for s in x['delay_io']), all(s==[7000000,0] for s in x['delay_comm']))")" = "True True"
check "... rank 1 waits for data (mean > 8 ms), rank 0 does not (< 3 ms)" \
    test "$(json_run "$J" "w=r['runs'][0]['series']['data_wait'][1:]; print(sum(s[1] for s in w)/len(w) > 8e6, sum(s[0] for s in w)/len(w) < 3e6)")" = "True True"
check "... rank 0's comm time holds its 7 ms" \
    test "$(json_get "$J" "all(s[0] >= 7000000 for s in r['runs'][0]['series']['comm'])")" = True
check "... the job's step is the slowest rank's: amplification >= 1" \
    test "$(json_get "$J" "r['runs'][0]['summary']['amplification'] >= 1")" = True

# reproducibility under injected jitter
J=$WORK/plain.json
check "plain: 3 runs with random comm, io and compute delays" run_rc 0 "$WORK/out" \
    "$TP" step -n 3 "${small[@]}" --verify-repro 3 --inject-delay comm:exp:1ms --inject-delay compute:exp:1ms --inject-delay io:spike:4ms:0.3 --json "$J"
check "... bitwise identical weights" \
    test "$(json_run "$J" "p=r['reproducibility']; print(p['identical'], p['distinct_hashes'], len(set(x['weights_sha256'] for x in r['runs'])))")" = "True 1 1"
check "... the runs' timings did differ" \
    test "$(json_get "$J" "len(set(round(x['step_time']['mean']) for x in r['runs']))")" = 3
for k in 1 2 3 4; do
    check "exact, $k rank(s), 2 runs with jitter" run_rc 0 "$WORK/out" \
        "$TP" step -n $k "${small[@]}" --reduce exact --verify-repro 2 --inject-delay compute:exp:1ms -q --json "$WORK/exact$k.json"
done
# the model's gradient by the wide path (the test hook fails the fast
# path's fit for every element): the same bits
check "exact, 3 ranks, the wide path forced (TP_FAULT_EXACT_WIDE)" run_rc 0 "$WORK/out" \
    env TP_FAULT_EXACT_WIDE=1 "$TP" step -n 3 "${small[@]}" --reduce exact -q --json "$WORK/exactw3.json"
check "exact: one hash for 1, 2, 3 and 4 ranks, and by the wide path for 3" \
    test "$(for k in 1 2 3 4 w3; do json_get "$WORK/exact$k.json" "r['reproducibility']['weights_sha256']"; done | sort -u | wc -l)" = 1
check "... each run's own repeats identical" \
    test "$(for k in 1 2 3 4; do json_get "$WORK/exact$k.json" "r['reproducibility']['identical']"; done | sort -u)" = True
J=$WORK/arrival.json
check "arrival: 3 runs whose ranks finish in different orders (exit 0: divergence is the finding)" \
    run_rc 0 "$WORK/out" "$TP" step -n 3 "${small[@]}" --reduce arrival --verify-repro 3 --inject-delay compute:exp:3ms --json "$J"
check "... the weights diverge, by a reported number of ulps" \
    test "$(json_run "$J" "p=r['reproducibility']; print(p['identical'], p['distinct_hashes'] > 1, p['max_ulps'] > 0, p['verdict'])")" = "False True True diverged, as arrival-order summation does"
check "... the summary line says so" grep -q "reproducibility (arrival, 3 runs): diverged" "$WORK/out"
check "arrival with no jitter and one rank: nothing to reorder, identical" run_rc 0 "$WORK/out" \
    "$TP" step -n 1 "${small[@]}" --reduce arrival --verify-repro 2 -q --json "$WORK/arr1.json"
check "... identical" test "$(json_get "$WORK/arr1.json" "r['reproducibility']['identical']")" = True

# checkpoints: a stall every K steps, sync and async
for mode in "" --ckpt-async; do
    J=$WORK/ckpt$mode.json
    check "checkpoint every 4 steps $mode" run_rc 0 "$WORK/out" \
        "$TP" step -n 2 "${small[@]}" --ckpt-every 4 --ckpt-size 16M $mode -q --json "$J"
    check "... stalls exactly at steps 4, 8, 12 (sync: the commit; async: the snapshot copy)" \
        test "$(json_run "$J" "x=r['runs'][0]['series']['ckpt_stall']; print([s for s in range(12) if max(x[s]) > 200000], r['runs'][0]['summary']['ckpt_overhead_fraction'] > 0)")" = "[3, 7, 11] True"
    check "... no checkpoint left behind" test -z "$(ls -A "$D/trainpath-step" | grep ckpt)"
done

# without a dataset (--no-io) the checkpoints still get their folder; the
# gradient's channels and buffers are warmed up before the timed steps, so
# step 0's comm is a step's, not their first use (about 70 ms at 10 MB)
check "10 MB of gradient in one bucket, no dataset (--no-io), checkpoints into a fresh folder" \
    run_rc 0 "$WORK/out" "$TP" step -n 2 --steps 12 --grad-size 10M --compute-ms 2 --no-io \
    --ckpt-every 4 --ckpt-size 4M --dir "$WORK/fresh" -q --json "$WORK/warm.json"
check "... step 0's comm within 10 times the other steps' median and 5 ms" \
    test "$(json_run "$WORK/warm.json" "import statistics as st; c=r['runs'][0]['series']['comm']; m=st.median(x for s in c[1:] for x in s); print(max(c[0]) <= 10 * m + 5e6, max(c[0]), m)" | cut -d' ' -f1)" = True
check "... no dataset was written" test ! -e "$WORK/fresh/trainpath-step/manifest.json"

# a preset, scaled down
check "preset resnet50 at scale 0.02" run_rc 0 "$WORK/out" \
    "$TP" step -n 2 --preset resnet50 --scale 0.02 --steps 5 --dir "$D" -q --json "$WORK/preset.json"
check "... its shape: 2.05 MB of gradient, 2240 B samples, batch 2 x 256" \
    test "$(json_run "$WORK/preset.json" "c=d['config']; print(c['preset'], c['grad_bytes'], c['sample_bytes'], c['batch'])")" = "resnet50 2048000 2240 512"

# bad input: exit 2, naming it
# --trace: the first run's timeline, checked against the run's own document
T=$WORK/trace.json
check "--trace: 3 ranks, 4 buckets, async checkpoints, injected delays, two runs: exit 0" \
    run_rc 0 "$WORK/out" "$TP" step -n 3 --steps 6 --batch 48 --sample-size 1K --grad-size 1M \
    --compute-ms 2 --dir "$D" --buckets 4 --ckpt-every 3 --ckpt-async --verify-repro 2 \
    --inject-delay comm:const:1ms --inject-delay io:const:2ms@1 --trace "$T" --json "$WORK/tr.json"
check "... the Chrome trace: every rank, thread and step of the first run, the same durations as the document, the buckets aligned across ranks" \
    /usr/bin/python3 "$SRC/tests/integration/step/trace_check.py" "$T" "$WORK/tr.json" 4 3
check "... the injected io delay on rank 1's loader only, one per step" test "$(json_run "$T" \
    "import collections; print(sorted(collections.Counter((e['pid'], e['tid']) for e in d['traceEvents'] if e['name'] == 'injected io delay').items()))" 2>&1)" = "[((1, 2), 6)]"
check "... the document names the trace" test "$(json_get "$WORK/tr.json" "d['config']['trace'] == '$T'")" = True

bad() { local pat=$1; shift
    if run_rc 2 "$WORK/out" "$TP" step "$@" && grep -q -- "$pat" "$WORK/out"; then ok "bad input: $*"
    else echo "# wanted /$pat/"; sed 's/^/#   /' "$WORK/out" | head -3; not_ok "bad input: $*"; fi; }
bad "\-\-steps" --steps 0 --dir "$D"
bad "\-\-inject-delay comm:sometimes:1ms: 'sometimes' is not const, exp or spike" --inject-delay comm:sometimes:1ms --dir "$D"
bad "\-\-inject-delay disk:const:1ms: 'disk' is not comm, io or compute" --inject-delay disk:const:1ms --dir "$D"
bad "a spike needs a probability" --inject-delay io:spike:1ms:2 --dir "$D"
bad "\-\-reduce fast: plain, exact or arrival" --reduce fast --dir "$D"
bad "\-\-preset gpt5: unknown" --preset gpt5 --dir "$D"
bad "\-\-scale" --preset resnet50 --scale 2 --dir "$D"
bad "\-\-ckpt-async: needs --ckpt-every" --ckpt-async --dir "$D"
bad "a record of 64 features needs at least" --sample-size 64 --dim 64 --dir "$D"
bad "the run needs about .* available" --grad-size 200G --dir "$D"
bad "\-\-dir /proc/nope" --dir /proc/nope
bad "\-\-algo bogus" --algo bogus --dir "$D"
bad "\-\-trace /proc/nope/t.json: folder /proc/nope is not writable" --trace /proc/nope/t.json --dir "$D"
bad "\-\-trace $WORK: names a folder, not a file" --trace "$WORK" --dir "$D"
finish
