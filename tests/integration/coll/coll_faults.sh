#!/usr/bin/env bash
# A rank killed or hung mid-run: every other rank exits 1 within the
# timeout, naming the lost rank and its host; rank 0 still writes a valid
# result document that says why.
. "$(dirname "$0")/../lib.sh"

# children of PID (the forked ranks of a local run)
ranks_of() { pgrep -P "$1" | head -${2:-8}; }

start_coll() { # start_coll NAME ARGS...: background run, sets CPID
    local name=$1; shift
    "$TP" coll -n 3 --sizes 4M --iters 20000 --warmup 1 "$@" --json "$WORK/$name.json" >"$WORK/$name.out" 2>&1 &
    CPID=$!
    PIDS+=("$CPID")
    for _ in $(seq 100); do [ "$(pgrep -P "$CPID" | wc -l)" -ge 2 ] && grep -q "trainpath coll" "$WORK/$name.out" && break; sleep 0.1; done
    sleep 0.5
}

for intra in shm fabric; do
    start_coll kill-$intra --intra "$intra" --timeout 20s
    victim=$(ranks_of "$CPID" | tail -1)
    t0=$(date +%s)
    kill -9 "$victim"
    wait "$CPID"; rc=$?
    dt=$(( $(date +%s) - t0 ))
    check "$intra: rank killed with SIGKILL: the run exits 1" test "$rc" -eq 1
    check "... within the timeout (${dt}s < 20s)" test "$dt" -lt 20
    check "... naming the lost rank and its host" grep -qE "rank [12] on $(hostname)" "$WORK/kill-$intra.out"
    check "... the document is valid and says why" bash -c "/usr/bin/python3 '$SRC/tests/integration/validate.py' '$SCHEMA' '$WORK/kill-$intra.json' && grep -q '\"ok\": false' '$WORK/kill-$intra.json'"
done

# a hung rank (SIGSTOP): the others give up after --timeout
start_coll hang --timeout 3s
victim=$(ranks_of "$CPID" | tail -1)
t0=$(date +%s)
kill -STOP "$victim"
wait "$CPID"; rc=$?
dt=$(( $(date +%s) - t0 ))
kill -9 "$victim" 2>/dev/null
check "hung rank: the run exits 1" test "$rc" -eq 1
check "... after about the timeout (${dt}s, timeout 3s)" test "$dt" -ge 2 -a "$dt" -lt 15
check "... naming a rank and the lack of progress or its loss" grep -qE "rank [0-9]+ on .*(no progress|lost|failed|gone)" "$WORK/hang.out"
finish
