#!/usr/bin/env bash
# bench/fleet-scale.sh [TRAINPATH_BINARY]: fleet triage against the all-pairs
# sweep that validate (and the peers' all-pairs runs) do today, side by side
# per fleet size: the rounds each plans, their estimated wall time at the
# same per-test durations (3 s a pair test, 5 s a group test, 0.2 s between
# rounds), the ratio, and what the screen tier found in the simulator (a
# slow node and a slow link planted) with the CPU time the simulation took.
# Then the same sizes on a noisy fabric (docs/fleet.md, "Measured"): 32
# nodes a leaf, up to 8 spines, 8 % per-sample and 5 % run-to-run noise,
# spikes, congestion and drift at their realistic values, a 15 % slow node
# and a 15 % slow uplink planted, SCALE_SEEDS seeds a size (default 5): the
# rounds, the simulated wall time, precision and recall, the CPU time;
# then 1,024 to 16,384 of them on a rail-optimised fabric of 8 rails, the
# uplink on rail seed mod 8 (docs/fleet.md, "Rails").
# Not a test: it prints tables.
set -uo pipefail
TP=${1:-build/trainpath}
[ -x "$TP" ] || { echo "fleet-scale: no binary $TP (make build)" >&2; exit 2; }
W=$(mktemp -d /tmp/tp-fleet-bench.XXXXXX)
trap 'rm -rf "$W"' EXIT
printf '| nodes | screen rounds (+ isolation bound) | screen est. | all pairs rounds | all pairs est. | all pairs / screen | named (planted 2) | isolation rounds | simulator CPU s |\n'
printf '|---|---|---|---|---|---|---|---|---|\n'
for n in 64 256 1024 4096 16384 65536; do
    printf 'nodes: %d\nseed: 11\nslow_nodes: [{node: %d, severity: 25%%}]\nslow_links: [{severity: 30%%}]\n' \
        "$n" $((n / 3)) >"$W/f.yaml"
    /usr/bin/time -f '%U %S' -o "$W/time" "$TP" validate --simulate "$W/f.yaml" -q --json "$W/s.json"
    cpu=$(awk '{print $1 + $2}' "$W/time")
    python3 - "$W/s.json" "$n" "$cpu" <<'PY'
import json, math, sys
d = json.load(open(sys.argv[1])); r = d["results"]; n = int(sys.argv[2]); cpu = float(sys.argv[3])
pair, group, gap = 3.0, 5.0, 0.2
planned = r["rounds_total"] - r["rounds_isolation"]
# the screen tier: its gang and groups rounds are group tests, the rest pairs
screen = (r["rounds"]["gang"] + r["rounds"]["groups"]) * (group + gap) + \
         (r["rounds"]["ring"] + r["rounds"]["match"]) * (pair + gap) + r["isolation_bound"] * (group + gap)
allp_rounds = n - 1 if n % 2 == 0 else n
allp = allp_rounds * (pair + gap)
fmt = lambda s: f"{s / 3600:.1f} h" if s >= 3600 else f"{s / 60:.1f} min" if s >= 60 else f"{s:.0f} s"
s = r["simulated"]
print(f"| {n} | {planned} (+{r['isolation_bound']}) | {fmt(screen)} | {allp_rounds} | {fmt(allp)} | "
      f"{allp / screen:.0f}x | {s['true_named']} of 2, {s['false_named']} false | {r['rounds_isolation']} | {cpu:.2f} |")
PY
done
SEEDS=${SCALE_SEEDS:-5}
noisy() { # noisy RAILS SIZES...: the table of a noisy fabric of RAILS rails
rails=$1
shift
echo
echo "# a noisy fabric of $rails rail(s): $SEEDS seeds a size, a 15 % slow node and a 15 % slow uplink planted"
printf '| nodes | spines | rounds, mean (isolation) | simulated wall, mean | named of planted | false names | precision | recall | simulator CPU s, all seeds |\n'
printf '|---|---|---|---|---|---|---|---|---|\n'
for n in "$@"; do
    leaves=$((n / 32)) spines=8
    [ "$leaves" -lt 8 ] && spines=$leaves
    : >"$W/list"
    /usr/bin/time -f '%U %S' -o "$W/time" bash -c '
        for s in $(seq 1 "$4"); do
            printf "nodes: %d\nnoise: 8%%\ntest_noise: 5%%\nseed: %d\nspikes: {rate: 1%%, size: 50%%}\ncongestion: {rate: 5%%, size: 10%%}\ndrift: 5%%\nfabric: {per_leaf: 32, spines: %d, rails: %d}\nslow_nodes: [{node: %d, severity: 15%%}]\nslow_uplinks: [{leaf: %d, spine: %d, rail: %d, severity: 15%%}]\n" \
                "$1" "$s" "$2" "$6" $(( (s * 337) % $1 )) $(( ((s * 337) % $1 / 32 + 1) % ($1 / 32) )) $(( s % $2 )) $(( s % $6 )) >"$3/n$s.yaml"
            "$5" validate --simulate "$3/n$s.yaml" -q --json "$3/n$s.json" >/dev/null 2>&1
            echo "$3/n$s.json" >>"$3/list"
        done' _ "$n" "$spines" "$W" "$SEEDS" "$TP" "$rails"
    cpu=$(awk '{print $1 + $2}' "$W/time")
    python3 - "$n" "$spines" "$cpu" "$W/list" <<'PY'
import json, sys
n, spines, cpu, runs = sys.argv[1], sys.argv[2], float(sys.argv[3]), open(sys.argv[4]).read().split()
rounds = iso = wall = hit = planted = false = 0
named = 0
for path in runs:
    r = json.load(open(path))["results"]; s = r["simulated"]
    rounds += r["rounds_total"]; iso += r["rounds_isolation"]; wall += s["wall_s"]
    hit += s["true_named"]; false += s["false_named"]; planted += len(s["planted"])
    named += s["true_named"] + s["false_named"]
k = len(runs)
fmt = lambda x: f"{x / 60:.1f} min" if x >= 60 else f"{x:.0f} s"
print(f"| {n} | {spines} | {rounds / k:.1f} ({iso / k:.1f}) | {fmt(wall / k)} | {hit} of {planted} | {false} | "
      f"{hit / named if named else 1:.2f} | {hit / planted:.2f} | {cpu:.2f} |")
PY
done
}
noisy 1 64 256 1024 4096 16384 65536
noisy 8 1024 4096 16384


# The rounds' control on a real group (docs/fleet.md, "Bytes per round"):
# N ranks of validate under the env launcher on loopback, --tier prolog,
# the quick profile's net tests; fleet.json's triage.control is what rank
# 0's control connections carried from the first round's start to the
# last's end (frames with their headers; the pair tests' own traffic
# not). Beside it, what the allgather design (before 2026-12-07: every
# round's figures to every node, the barriers answered with everyone's
# part) would have sent out of rank 0 for the same rounds, from the same
# figure words: per round (N - 1) frames of the whole set (N words of 22
# bytes), and per pair round two barriers of (N - 1) frames of N empty
# parts. Then both per node and round, and at 16,384 nodes.
[ "${CONTROL_BYTES:-1}" = 0 ] && exit 0
echo
echo "# the rounds' control out of rank 0, measured at N ranks on loopback (prolog tier), and the allgather design's for the same rounds"
printf '| nodes | rounds | out per round | in per round | out per node and round | allgather design out per round | ratio | before the rounds, out (the meeting) |\n'
printf '|---|---|---|---|---|---|---|---|\n'
for n in 3 4 6 8 12; do
    port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
    for r in $(seq 0 $((n - 1))); do
        RANK=$r WORLD_SIZE=$n MASTER_ADDR=127.0.0.1 MASTER_PORT=$port timeout 600 "$TP" validate \
            --only net --tier prolog --seed 1 --min-effect 900 -q --out "$W/c$n" >/dev/null 2>&1 &
    done
    wait
    python3 - "$W/c$n/fleet.json" "$n" "$W/meet" <<'PY'
import json, sys
d = json.load(open(sys.argv[1])); n = int(sys.argv[2]); t = d["results"]["triage"]; k = t["control"]
rounds = k["rounds"]; pairs = t["rounds"]["ring"]
frame = 12 + len('{"all":[]}')
old = (n - 1) * (frame + n * 22) * rounds + 2 * pairs * (n - 1) * (frame + n * 3)
per_node = k["bytes_sent_per_round"] / (n - 1)
before = k["bytes_sent_before"]
print(f"| {n} | {rounds} | {k['bytes_sent_per_round']:.0f} B | {k['bytes_received_per_round']:.0f} B | "
      f"{per_node:.0f} B | {old / rounds:.0f} B | {old / rounds / k['bytes_sent_per_round']:.1f}x | "
      f"{before / 1e3:.1f} kB |")
with open(sys.argv[3], "a") as f:
    print(n, before, per_node, pairs / rounds, file=f)
PY
done
# at 16,384 nodes: the rounds' share a node from the largest group; the
# meeting fitted as a N (N - 1) + b (N - 1) (every node's words to every
# node, and a node's own) by least squares over the sizes measured
python3 - "$W/meet" <<'PY'
import sys
rows = [list(map(float, l.split())) for l in open(sys.argv[1])]
sxx = sxy = syy = sx1 = sy1 = s11 = 0
for n, before, _, _ in rows:
    x, y = n * (n - 1), n - 1
    sxx += x * x; sxy += x * y; syy += y * y; sx1 += x * before; sy1 += y * before
det = sxx * syy - sxy * sxy
a = (sx1 * syy - sy1 * sxy) / det; b = (sxx * sy1 - sxy * sx1) / det
n, _, per_node, pair_share = rows[-1]
N = 16384; frame = 12 + len('{"all":[]}')
new16 = per_node * (N - 1)
old16 = (N - 1) * (frame + N * 22) + 2 * pair_share * (N - 1) * (frame + N * 3)
meet16 = a * N * (N - 1) + b * (N - 1)
print(f"| 16,384 (from {int(n)}; the meeting fitted: {a:.0f} B a node a node + {b:.0f} B a node) | | "
      f"{new16 / 1e6:.1f} MB | | {per_node:.0f} B | {old16 / 1e9:.1f} GB | {old16 / new16:.0f}x | "
      f"{meet16 / 1e9:.0f} GB, once |")
PY
