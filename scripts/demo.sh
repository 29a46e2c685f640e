#!/usr/bin/env bash
# make demo: a server and a client on loopback, the net tests over kernel TCP
# and over libfabric (shm and tcp;ofi_rxm providers), collectives, the storage
# path (checkpoint, dataset, commit) and training steps in a scratch folder
# under /var/tmp, the scale model (the commented example plan, and a plan of
# this machine fed with the results just measured), result documents in
# results/demo/, and a summary. Later this grows into `trainpath validate`.
set -uo pipefail
TP=${1:-build/trainpath}
cd "$(dirname "$0")/.."
OUT=results/demo
mkdir -p "$OUT"
LOG=$(mktemp /tmp/trainpath-demo.XXXXXX)
"$TP" net serve --bind 127.0.0.1 --port 0 2>"$LOG" &
SERVER=$!
trap 'kill $SERVER 2>/dev/null; wait 2>/dev/null; rm -f "$LOG"' EXIT
PORT=""
for _ in $(seq 100); do
    PORT=$(sed -n 's/.*listening on .* port \([0-9]*\).*/\1/p' "$LOG" | head -1)
    [ -n "$PORT" ] && break
    sleep 0.1
done
[ -n "$PORT" ] || { echo "demo: the server did not start:"; cat "$LOG"; exit 1; }

ok=0 failed=0
run() { # run NAME ARGS...
    local name=$1; shift
    echo
    echo "== trainpath net $* (127.0.0.1:$PORT)"
    if "$TP" net "$@" 127.0.0.1 -p "$PORT" --json "$OUT/$name.json"; then
        ok=$((ok + 1))
    else
        failed=$((failed + 1))
    fi
}
run tcp-lat lat --sizes 8,4K,64K,1M --time 0.3 --check
run tcp-bw bw --sizes 64K,1M --time 0.5
run tcp-bibw bibw --sizes 1M --time 0.5
run tcp-loaded loaded --sizes 8 --streams 2 --load-size 1M --time 0.3
run shm-lat lat --provider shm --sizes 8,4K,64K,1M --time 0.3 --check
run shm-bw bw --provider shm --sizes 64K,1M --time 0.5
run rxm-lat lat --provider 'tcp;ofi_rxm' --sizes 8,4K,64K --time 0.3 --check
run rxm-rma-lat lat --provider 'tcp;ofi_rxm' --rma --sizes 8,4K,64K --time 0.3
run rxm-bw bw --provider 'tcp;ofi_rxm' --sizes 64K,1M --time 0.5
coll() { # coll NAME ARGS...
    local name=$1; shift
    echo
    echo "== trainpath coll $*"
    if "$TP" coll "$@" --json "$OUT/$name.json"; then ok=$((ok + 1)); else failed=$((failed + 1)); fi
}
coll coll-allreduce -n 2 --sizes 8-16M --time 100ms
coll coll-allgather -n 4 --op allgather --sizes 8-1M --time 50ms
coll coll-exact -n 3 --repro exact --repro-check --sizes 4K,64K --iters 5
io() { # io NAME ARGS...
    local name=$1; shift
    echo
    echo "== trainpath io $*"
    if "$TP" io "$@" --json "$OUT/$name.json"; then ok=$((ok + 1)); else failed=$((failed + 1)); fi
}
IODIR=$(mktemp -d /var/tmp/trainpath-demo-io.XXXXXX)
trap 'kill $SERVER 2>/dev/null; wait 2>/dev/null; rm -f "$LOG"; rm -rf "$IODIR"' EXIT
io io-info info "$IODIR"
io io-checkpoint checkpoint "$IODIR" --size 256M --shards 4 --repeat 3 --verify --drop-cache
io io-dataset dataset "$IODIR" --records 32768 --record-size 4K --epochs 2 --direct --during checkpoint --size 128M
io io-commit commit "$IODIR" --count 500
echo
echo "== trainpath step -n 2 --preset resnet50 --scale 0.05 --steps 40 --ckpt-every 20 --ckpt-async"
if "$TP" step -n 2 --preset resnet50 --scale 0.05 --steps 40 --ckpt-every 20 --ckpt-size 64M \
    --ckpt-async --dir "$IODIR" --json "$OUT/step-resnet50.json"; then
    ok=$((ok + 1))
else
    failed=$((failed + 1))
fi
echo
echo "== trainpath step -n 2 --reduce exact --verify-repro 3 --inject-delay compute:exp:2ms"
if "$TP" step -n 2 --steps 20 --reduce exact --verify-repro 3 --inject-delay compute:exp:2ms \
    --dir "$IODIR" --json "$OUT/step-repro.json"; then
    ok=$((ok + 1))
else
    failed=$((failed + 1))
fi
echo
echo "== trainpath plan docs/examples/plan.yaml"
if "$TP" plan docs/examples/plan.yaml --json "$OUT/plan-example.json"; then
    ok=$((ok + 1))
else
    failed=$((failed + 1))
fi
echo
# this machine as a plan: its figures from the results above, the workload
# the first step run's (resnet50 at scale 0.05, nominal compute 5 ms)
cat >"$OUT/plan-this-machine.yaml" <<'PLAN'
# written by scripts/demo.sh: this machine, fed with the demo's results
workload:
  name: resnet50-scale-0.05
  parameters: 1.28M
  gradient_bytes_per_parameter: 4
  samples_per_gpu: 256
  compute_time: 5ms
  checkpoint_bytes: 64M
  train_samples: 1M
cluster:
  nodes: 1
  gpus_per_node: 2
  intra_node:
    latency: {measured: coll-allreduce.json}
    bandwidth: {measured: coll-allreduce.json}
  mtbf_job: 24h
prices:
  gpu_hour: 1
candidates:
  - name: this-machine
    network:
      latency: {measured: tcp-lat.json}
      bandwidth: {measured: tcp-bw.json}
    storage:
      write_bandwidth: {measured: io-checkpoint.json}
      commit_latency: {measured: io-commit.json}
      async_checkpoint: true
PLAN
echo "== trainpath plan $OUT/plan-this-machine.yaml (measured inputs)"
if "$TP" plan "$OUT/plan-this-machine.yaml" --json "$OUT/plan-this-machine.json"; then
    ok=$((ok + 1))
else
    failed=$((failed + 1))
fi
echo
echo "== trainpath check --policy docs/examples/policy.yaml (this VM is not a GPU node: expect findings)"
"$TP" check facts --json "$OUT/check-facts.json"
"$TP" check --policy docs/examples/policy.yaml --json "$OUT/check.json"
code=$?
# Nagios codes: 0, 1 and 2 are verdicts on the node; 3 means the audit could not run
if [ "$code" -le 2 ]; then ok=$((ok + 1)); else failed=$((failed + 1)); fi
echo
echo "demo: $ok runs ok, $failed failed; result documents in $OUT/"
[ "$failed" -eq 0 ]
