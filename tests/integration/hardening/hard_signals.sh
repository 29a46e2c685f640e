#!/usr/bin/env bash
# Class 3 of docs/reliability.md's adversarial findings: an interrupt is a
# failure like any other. SIGINT or SIGTERM during each long command stops it
# at its next safe point: exit 130 or 143, one message, a valid failed
# document ("interrupted by SIGINT"), and nothing left that the run created
# and did not keep (shards, commit logs, a half-written dataset, validate's
# scratch folder). Every wait below is for a sign that the command is at
# work, so the signal lands mid-run and not before it.
. "$(dirname "$0")/../lib.sh"

# wait_for COND-COMMAND...: up to 30 s (the sanitizer build is slow to start)
wait_for() { for _ in $(seq 300); do "$@" 2>/dev/null && return 0; sleep 0.1; done; return 1; }
has_file() { [ -n "$(find "$1" -name "$2" 2>/dev/null)" ]; }  # has_file DIR NAME-PATTERN

# interrupt NAME SIG WANT_RC SIGN-COMMAND -- CMD...: start CMD, wait for SIGN,
# send SIG, and check the exit status, the message and the document
interrupt() {
    local name=$1 sig=$2 want=$3; shift 3
    local sign=()
    while [ "$1" != "--" ]; do sign+=("$1"); shift; done
    shift
    "$@" --json "$WORK/$name.json" >"$WORK/$name.out" 2>&1 &
    local pid=$!
    PIDS+=("$pid")
    if ! wait_for "${sign[@]}"; then
        not_ok "$name: did not start its work"; sed 's/^/#   /' "$WORK/$name.out" | head; return
    fi
    kill -"$sig" "$pid"
    local t0 rc
    t0=$(date +%s)
    timeout 60 tail --pid="$pid" -f /dev/null
    wait "$pid"; rc=$?
    ELAPSED=$(( $(date +%s) - t0 ))
    check "$name: SIG$sig -> exit $want (got $rc, $ELAPSED s after the signal)" \
        test "$rc" -eq "$want"
    check "$name: ... one message saying so" \
        test "$(grep -c "error: interrupted by SIG$sig" "$WORK/$name.out")" -eq 1
    check "$name: ... a failed document, code interrupted, exit_code $want" \
        test "$(json_get "$WORK/$name.json" "d['status']['code'], d['status']['exit_code']" 2>&1)" \
            = "interrupted $want"
    check "$name: ... that the schema accepts" valid_doc "$WORK/$name.json"
}

# io checkpoint: 20 checkpoints of 1 GiB; no shard may stay
mkdir -p "$WORK/ck"
interrupt ckpt INT 130 test -d "$WORK/ck/trainpath-ckpt" -- \
    "$TP" io checkpoint "$WORK/ck" --size 1G --repeat 20
check "ckpt: ... no shard left behind" test -z "$(find "$WORK/ck" -type f)"

# io commit: a minute of commits; the log goes
mkdir -p "$WORK/cm"
interrupt commit TERM 143 has_file "$WORK/cm" 'commit-*.log' -- \
    "$TP" io commit "$WORK/cm" --time 60s --count 100000000 --overwrite
check "commit: ... its log removed" test -z "$(find "$WORK/cm" -type f)"

# io dataset while it writes the dataset: the half-written files go
mkdir -p "$WORK/ds"
interrupt dataset INT 130 has_file "$WORK/ds" 'data-*.bin' -- \
    "$TP" io dataset "$WORK/ds" --records 1000000 --record-size 4K --files 4
check "dataset: ... no half-written dataset left" test -z "$(find "$WORK/ds" -type f)"

# net lat against a real server
start_server sig -- --bind 127.0.0.1 || exit 1
interrupt net TERM 143 grep -q "client .* authenticated" "$WORK/sig.log" -- \
    "$TP" net lat 127.0.0.1 --port "$PORT" --sizes 64,128,256 --time 20s

# coll, signalled on rank 0 alone: the ranks it forked stop too
interrupt coll TERM 143 grep -q "^ *1K " "$WORK/coll.out" -- \
    "$TP" coll -n 2 --sizes 1K-64M --time 5s
check "coll: ... no rank left running" \
    test -z "$(pgrep -f "coll -n 2 --sizes 1K-64M --time 5s")"

# coll over libfabric: libfabric is loaded on first use, after trainpath's
# handlers are in; the psm providers' libinfinipath installs its own for
# SIGINT and SIGTERM (a backtrace, then exit 1) and the loader puts
# trainpath's back (src/fabric/ofi_lib.c)
if "$TP" coll -n 1 --intra fabric --transport ofi --provider 'tcp;ofi_rxm' --sizes 8 --iters 1 \
        >/dev/null 2>&1; then
    interrupt collofi TERM 143 grep -q "^ *1K " "$WORK/collofi.out" -- \
        "$TP" coll -n 2 --intra fabric --transport ofi --provider 'tcp;ofi_rxm' --sizes 1K-64M --time 5s
else
    ok "# SKIP libfabric's tcp;ofi_rxm provider is not there: no ofi run to interrupt"
fi

# step: 10^6 steps
mkdir -p "$WORK/st"
interrupt step INT 130 test -f "$WORK/st/trainpath-step/manifest.json" -- \
    "$TP" step -n 2 --steps 1000000 --dir "$WORK/st"

# validate --simulate: the full tier over 4,096 model nodes (seconds of
# rounds); it stops at the next round
printf 'nodes: 4096\nseed: 3\n' >"$WORK/fleet.yaml"
for s in "INT 130" "TERM 143"; do
    read -r sig want <<<"$s"
    interrupt "sim$sig" "$sig" "$want" grep -q "^plan:" "$WORK/sim$sig.out" -- \
        "$TP" validate --simulate "$WORK/fleet.yaml" --tier full
    check "sim$sig: ... within a round or two, not at the end ($ELAPSED s, at most 3)" \
        test "$ELAPSED" -le 3
    check "sim$sig: ... no verdict printed after it" test -z "$(grep '^simulated:' "$WORK/sim$sig.out")"
done

# validate: its running test is told, later ones do not start, the scratch
# folder is removed
ls -d /var/tmp/trainpath-validate.* 2>/dev/null | sort >"$WORK/scratch.before"
"$TP" validate --out "$WORK/val" >"$WORK/val.out" 2>&1 &
vpid=$!
PIDS+=("$vpid")
wait_for test -f "$WORK/val/net-lat.json"
kill -INT "$vpid"
wait "$vpid"; rc=$?
check "validate: SIGINT -> exit 130 (got $rc)" test "$rc" -eq 130
check "validate: ... says so once" test "$(grep -c "error: interrupted by SIGINT" "$WORK/val.out")" -eq 1
check "validate: ... the tests after it not run" grep_q "not run: interrupted by SIGINT" "$WORK/val.out"
ls -d /var/tmp/trainpath-validate.* 2>/dev/null | sort >"$WORK/scratch.after"
check "validate: ... its scratch folder removed" cmp -s "$WORK/scratch.before" "$WORK/scratch.after"
finish
