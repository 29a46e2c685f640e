#!/usr/bin/env bash
# Hardening, class 9 of issue 42: messages that say the wrong thing. Each
# message names what the user typed, in the house's units ("1 MiB", not
# "1048576-byte"), says the real cause (a full disk, a read-only folder),
# claims nothing it did not check (one SDC thread compared with nothing;
# an empty fleet file is not "0 outliers"), and a refusal prints nothing
# after itself (no counters line). The full and read-only folders are small
# tmpfs mounts of this test (root), unmounted at the end.
. "$(dirname "$0")/../lib.sh"

D=$WORK/d
mkdir -p "$D" "$WORK/full" "$WORK/ro"
mounted=()
umount_all() { for m in "${mounted[@]}"; do umount "$m" 2>/dev/null; done; }
trap 'umount_all; cleanup' EXIT
if mount -t tmpfs -o size=64k tmpfs "$WORK/full" 2>/dev/null; then
    mounted+=("$WORK/full")
    dd if=/dev/zero of="$WORK/full/fill" bs=4k 2>/dev/null # to the last block
fi
if mount -t tmpfs -o size=1m tmpfs "$WORK/ro" 2>/dev/null; then
    mounted+=("$WORK/ro")
    mount -o remount,ro "$WORK/ro"
fi
mkdir -p "$WORK/small"
if mount -t tmpfs -o size=1m tmpfs "$WORK/small" 2>/dev/null; then mounted+=("$WORK/small"); fi
has_mounts=$([ "${#mounted[@]}" -eq 3 ] && echo 1 || echo 0)

# --- what the user typed, echoed; sizes with their unit ---
expect_exit 2 "--sizes '': no size given" "net lat --sizes '': the empty list echoed" \
    net lat 127.0.0.1 --sizes ''
expect_exit 2 "--sizes '8,,16': an empty entry" "coll --sizes 8,,16: the list echoed" \
    coll -n 2 --sizes 8,,16
expect_exit 2 "--sample-size 1: a record of 1 feature needs at least 24 B" \
    "step --sample-size 1: 1 echoed (was 0), the minimum with its unit" \
    step -n 1 --sample-size 1 --no-io --dir "$D"
expect_exit 2 "--grad-size 1K: the model's own gradient needs 2.01 KiB" \
    "step --grad-size 1K: the need in KiB (was 2056 bytes beside 1K)" \
    step -n 2 --grad-size 1K --dim 512 --no-io --dir "$D"
/usr/bin/python3 - "$SRC/tests/fixtures/workload/ddp-mlp.json" "$WORK/slow.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
d['steps']['forward_ns'] = [10**15] * len(d['steps']['forward_ns'])
json.dump(d, open(sys.argv[2], 'w'))
PY
run_rc 2 "$WORK/wl.out" "$TP" step -n 2 --workload "$WORK/slow.json" --no-io --dir "$D"
check "step --workload with an 11-day forward: exit 2, naming the file's steps.forward_ns" \
    grep_q "--workload .*slow.json: steps.forward_ns .*11.6 d, past the 10 min" "$WORK/wl.out"
check "... not an option nobody typed (--compute-ms 1e+09)" test -z "$(grep -- --compute-ms "$WORK/wl.out")"
expect_exit 2 "--inject-delay: 40.0 s is not under --timeout 30.0 s" \
    "step --inject-delay 40s beyond --timeout 30s: refused as coll refuses it" \
    step -n 2 --inject-delay comm:const:40s --no-io --dir "$D"
expect_exit 2 "--node-timeout 100y: 1 s to 1 d" "validate --node-timeout 100y: refused, the range said" \
    validate --node-timeout 100y
printf 'nodes: 8\ndies: [{node: 1, round: 2000000}]\n' >"$WORK/r.yaml"
expect_exit 2 "dies\[0\].round: '2000000' must be a round between 1 and 1000000" \
    "a fleet's round past the bound: the bound said (was 'from 1')" validate --simulate "$WORK/r.yaml"

# --- validate --simulate: --budget picks a tier the simulator runs ---
printf 'nodes: 10000\nseed: 3\n' >"$WORK/n10k.yaml"
run_rc 0 "$WORK/budget.out" "$TP" validate --simulate "$WORK/n10k.yaml" --budget 1000h -q \
    --json "$WORK/budget.json"
check "--budget 1000h for 10,000 nodes: exit 0, not the full tier (10,001 rounds) it then refused" \
    test "$(json_get "$WORK/budget.json" "r['tier']")" = screen

# --- report reads the simulator's document; says the count right ---
"$TP" validate --simulate "$SRC/docs/examples/fleet.yaml" -q --json "$WORK/sim.json" >/dev/null 2>&1
run_rc 0 "$WORK/add.out" "$TP" report add --db "$WORK/h.db" "$WORK/sim.json"
check "report add of validate --simulate's document: added (was 'not one trainpath runs')" \
    grep_q "^1 of 1 documents added to $WORK/h.db$" "$WORK/add.out"
run_rc 0 "$WORK/add2.out" "$TP" report add --db "$WORK/h.db" "$WORK/sim.json"
check "... again: '1 was there already', not 'the rest were'" \
    grep_q "^0 of 1 documents added to .* \(1 was there already\)$" "$WORK/add2.out"
check "report html of it: exit 0" run_rc 0 "$WORK/html.out" "$TP" report html "$WORK/sim.json" \
    --out "$WORK/sim.html"
: >"$WORK/empty.jsonl"
run_rc 2 "$WORK/fleet.out" "$TP" report fleet "$WORK/empty.jsonl"
check "report fleet of an empty file: exit 2, 'no records' (was '0 outliers', exit 0)" \
    eval "grep -q 'empty.jsonl: empty: no records' '$WORK/fleet.out' && ! grep -q outliers '$WORK/fleet.out'"

# --- sdc on one thread claims no agreement ---
run_rc 0 "$WORK/sdc.out" "$TP" sdc --threads 1 --steps 100
check "sdc --threads 1: 'compared with nothing' (was 'every thread computed the same')" \
    eval "grep -q 'one thread computed .*, compared with nothing' '$WORK/sdc.out' && ! grep -q 'every thread' '$WORK/sdc.out'"

# --- help, completion ---
check "workload import --help: --sample-bytes' bound is a size it takes (64MiB, not 64Mi)" \
    eval "'$TP' workload import --help | grep -q -- '--sample-bytes B .*(4 to 64MiB;'"
run_rc 2 "$WORK/sb.out" "$TP" workload import --samples 1 --sample-bytes 64MiB --out "$WORK/w.json"
check "... and 64MiB is taken" test -z "$(grep -- --sample-bytes "$WORK/sb.out")"
got=$(PATH="$(dirname "$TP"):$PATH" bash --norc -c '. "$1"
COMP_WORDS=(trainpath workload import --w); COMP_CWORD=3
COMP_LINE="${COMP_WORDS[*]}"; COMP_POINT=${#COMP_LINE}; COMPREPLY=()
_trainpath_complete trainpath --w import; printf "%s\n" "${COMPREPLY[@]}"' _ "$SRC/completions/trainpath.bash")
check "completion of 'workload import --w': --world-size alone, not step's --workload ($got)" \
    test "$got" = "--world-size"

# --- plan: simulate.steps 100,000 keeps 10,000 in the document ---
sed 's/^  steps: 1000 /  steps: 100000 /' "$SRC/docs/examples/plan.yaml" >"$WORK/plan.yaml"
run_rc 0 "$WORK/plan.out" "$TP" plan "$WORK/plan.yaml" -q --json "$WORK/plan.json"
check "plan, simulate.steps 100000: each series 10,000 steps, series_steps says so, steps 100000" \
    test "$(json_get "$WORK/plan.json" "sorted({(c['simulation']['steps'], len(c['simulation']['series']), c['simulation']['series_steps']) for c in r['candidates']})")" \
    = "[(100000, 10000, 10000)]"
check "... a valid document" valid_doc "$WORK/plan.json"

# --- net loaded: its header, its load in MiB ---
start_server msg -- --bind 127.0.0.1 || exit 1
run_rc 0 "$WORK/loaded.out" "$TP" net loaded 127.0.0.1 --port "$PORT" --sizes 64 --time 200ms
check "net loaded: the header first, as lat and bw print it" \
    grep_q "^trainpath net loaded 127.0.0.1:$PORT over tcp" "$WORK/loaded.out"
check "... 'streams of 1 MiB messages' (was '1048576-byte')" \
    grep_q "^load: [0-9]+ streams of 1 MiB messages" "$WORK/loaded.out"

# --- full and read-only disks, the free space said ---
if [ "$has_mounts" = 1 ]; then
    run_rc 1 "$WORK/val.out" timeout 60 "$TP" validate --only net --out "$WORK/full/v"
    check "validate on a full disk: net serve's log cannot be written, said (was 'did not start', 10 s)" \
        grep_q "net serve's log $WORK/full/v/net-serve.log: No space left on device" "$WORK/val.out"
    run_rc 1 "$WORK/ro.out" "$TP" report add --db "$WORK/ro/h.db" "$WORK/sim.json"
    check "report add --db on a read-only mount: 'Read-only file system' (was 'No such file')" \
        grep_q "ro/h.db: cannot create it in $WORK/ro: Read-only file system" "$WORK/ro.out"
    run_rc 2 "$WORK/commit.out" "$TP" io commit "$WORK/small" --write-size 4M
    check "io commit on a 1 MiB disk: what it needs and how much is free" \
        grep_q "--count 1000 x --write-size 4M: 3.91 GiB needed, $WORK/small has 1 MiB free" "$WORK/commit.out"
    check "... and no counters line after the refusal" test -z "$(grep '^counters:' "$WORK/commit.out")"
    run_rc 2 "$WORK/ckpt.out" "$TP" io checkpoint "$WORK/small" --size 10G
    check "io checkpoint 10G there: 'needs 10.0 GiB, ... has 1 MiB free' (was 10485824K)" \
        grep_q "a checkpoint needs 10.0 GiB, $WORK/small has 1 MiB free" "$WORK/ckpt.out"
    run_rc 2 "$WORK/ds.out" "$TP" io dataset "$WORK/small" --records 10000 --record-size 4K
    check "io dataset there: --records and --record-size echoed, the need in MiB" \
        grep_q "--records 10000 x --record-size 4K: the dataset needs 39.1 MiB" "$WORK/ds.out"
    check "... no counters line" test -z "$(grep '^counters:' "$WORK/ds.out")"
else
    ok "# skip: no tmpfs mounts here (not root?): the full and read-only disk cases"
fi
finish
