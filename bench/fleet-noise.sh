#!/usr/bin/env bash
# bench/fleet-noise.sh [TRAINPATH_BINARY]: how the fleet triage does
# against the simulator's noise model (docs/fleet.md, "The noise model"):
# 1,024 nodes, 8 % per-sample noise, 5 % test_noise, one node 15 % slow (a
# different one each seed), the screen tier, FLEET_NOISE_SEEDS seeds
# (default 20). One row per noise: the Gaussian alone, then with each of
# spikes, congestion and drift at the values docs/fleet.md calls
# realistic, then all three. Per row: the runs that named the slow node,
# the runs that named something else and how many, the runs that left a
# node suspect, the isolation rounds and the wall time of the seeds. Each seed draws the
# same Gaussian noise in every row (the noise model's other draws have
# streams of their own), so the rows differ by the component alone.
# Then a second table: the same noise with all three components, on a
# fabric (32 nodes a leaf, 4 spines), one fault a row: a slow node, a slow
# uplink, a slow leaf switch, a bad cable (docs/fleet.md, "Switches and
# uplinks"). Not a test: it prints tables.
set -uo pipefail
TP=${1:-build/trainpath}
SEEDS=${FLEET_NOISE_SEEDS:-20}
[ -x "$TP" ] || { echo "fleet-noise: no binary $TP (make build)" >&2; exit 2; }
W=$(mktemp -d /tmp/tp-fleet-noise.XXXXXX)
trap 'rm -rf "$W"' EXIT
SPIKES='spikes: {rate: 1%, size: 50%}'
CONGESTION=$'congestion: {rate: 5%, size: 10%}\nleaf_size: 32'
DRIFT='drift: 5%'
rows=("Gaussian alone|" "+ spikes|$SPIKES" "+ congestion|$CONGESTION" "+ drift|$DRIFT"
      "all three|$SPIKES"$'\n'"$CONGESTION"$'\n'"$DRIFT")
echo "# $SEEDS seeds, 1024 nodes, noise 8 %, test_noise 5 %, one node 15 % slow; $("$TP" --version 2>/dev/null | head -1)"
printf '| noise | named the slow node | runs naming another | named falsely | runs leaving a suspect | isolation rounds, median (max) | wall s, all seeds |\n'
printf '|---|---|---|---|---|---|---|\n'
# run_row NAME FAULT-YAML EXTRA-YAML: SEEDS runs, one table row
run_row() {
    local name=$1 fault=$2 extra=$3
    : >"$W/list"
    start=$(date +%s.%N)
    for s in $(seq 1 "$SEEDS"); do
        slow=$(( (s * 337) % 1024 ))
        printf 'nodes: 1024\nnoise: 8%%\ntest_noise: 5%%\nseed: %d\n%s\n%s\n' "$s" \
            "$(printf "$fault" "$slow" "$(( slow / 32 ))" "$(( s % 4 ))")" "$extra" >"$W/f.yaml"
        "$TP" validate --simulate "$W/f.yaml" -q --json "$W/s$s.json" >/dev/null 2>&1
        [ $? -le 1 ] || { echo "fleet-noise: seed $s failed (see $W/f.yaml)" >&2; exit 1; }
        echo "$W/s$s.json" >>"$W/list"
    done
    cpu=$(awk -v a="$start" -v b="$(date +%s.%N)" 'BEGIN { printf "%.2f", b - a }')
    python3 - "$name" "$SEEDS" "$cpu" "$W/list" <<'PY'
import json, statistics, sys
name, seeds, cpu, runs = sys.argv[1], int(sys.argv[2]), sys.argv[3], open(sys.argv[4]).read()
named = other = falsely = suspect = 0
iso = []
for path in runs.split():
    r = json.load(open(path))["results"]
    s = r["simulated"]
    named += s["true_named"]
    falsely += s["false_named"]
    other += s["false_named"] > 0
    suspect += r["counts"].get("suspect", 0) > 0
    iso.append(r["rounds_isolation"])
print(f"| {name} | {named} of {seeds} | {other} | {falsely} | {suspect} | "
      f"{statistics.median(iso):g} ({max(iso)}) | {cpu} |")
PY
}
NODE='slow_nodes: [{node: %d, severity: 15%%}]%.0s%.0s'
for row in "${rows[@]}"; do
    run_row "${row%%|*}" "$NODE" "${row#*|}"
done
ALL="$SPIKES"$'\n'"$CONGESTION"$'\n'"$DRIFT"
FABRIC='fabric: {per_leaf: 32, spines: 4}'
echo
echo "# all three components, on a fabric of 32 nodes a leaf and 4 spines; one fault a row"
printf '| fault | named it | runs naming another | named falsely | runs leaving a suspect | isolation rounds, median (max) | wall s, all seeds |\n'
printf '|---|---|---|---|---|---|---|\n'
run_row "a slow node" "$NODE" "$FABRIC"$'\n'"$ALL"
run_row "a slow uplink" 'slow_uplinks: [{leaf: %.0s%d, spine: %d, severity: 15%%}]' "$FABRIC"$'\n'"$ALL"
run_row "a slow leaf switch" 'slow_switches: [{leaf: %.0s%d, severity: 15%%}]%.0s' "$FABRIC"$'\n'"$ALL"
run_row "a bad cable" 'bad_cables: [{node: %d, severity: 15%%}]%.0s%.0s' "$FABRIC"$'\n'"$ALL"
run_row "nothing (a clean fabric)" '%.0s%.0s%.0s' "$FABRIC"$'\n'"$ALL"
