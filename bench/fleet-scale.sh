#!/usr/bin/env bash
# bench/fleet-scale.sh [TRAINPATH_BINARY]: fleet triage against the all-pairs
# sweep that validate (and the peers' all-pairs runs) do today, side by side
# per fleet size: the rounds each plans, their estimated wall time at the
# same per-test durations (3 s a pair test, 5 s a group test, 0.2 s between
# rounds), the ratio, and what the screen tier found in the simulator (a
# slow node and a slow link planted) with the CPU time the simulation took.
# Not a test: it prints a table.
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
