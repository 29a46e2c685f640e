#!/usr/bin/env bash
# Class 1 of issue 42 (docs/reliability.md, "Waits"): every wait answers
# SIGINT/SIGTERM within a second or two and has a bound. Each case puts a
# command in one of its long waits (a compute slice of five minutes, rank 0
# waiting for a rank that never joins, a rank waiting for a rank 0 that never
# listens, an scontrol whose slurmctld never answers), signals it, and checks
# the exit status, the time from the signal to the exit (a generous bound,
# not a measurement), the document and that no process of it is left. The
# waits are for states (a rank forked, CPU spent in the compute, a port
# listening, a rank asleep between tries, the scontrol started), never for
# time.
. "$(dirname "$0")/../lib.sh"

# wait_for COND-COMMAND...: up to 60 s (the sanitizer build is slow to start)
wait_for() { for _ in $(seq 600); do "$@" 2>/dev/null && return 0; sleep 0.1; done; return 1; }
has_child() { [ -n "$(pgrep -P "$1")" ]; }
# asleep between two tries (rank 1 retrying to reach rank 0), in main():
# SIGPIPE ignored (main's first line; tp_intr's handler follows at once).
# Before main a library's constructor (libinfinipath) sleeps too, with a
# handler of its own that makes SIGINT a silent exit 1.
napping() {
    [ $(( 0x$(awk '/^SigIgn/ {print $2}' "/proc/$1/status") >> 12 & 1 )) -eq 1 ] &&
        grep -q nanosleep "/proc/$1/wchan"
}
listening() { [ -n "$(ss -Htln "( sport = :$1 )")" ]; }
# cpu_s PID: CPU seconds the process has spent (user + system)
cpu_s() { awk -v t="$(getconf CLK_TCK)" '{print int(($14 + $15) / t)}' "/proc/$1/stat"; }
busy() { [ "$(cpu_s "$1")" -ge "$2" ]; }
now_ms() { echo $(( $(date +%s%N) / 1000000 )); }
# gone_within PID SECONDS: the process ends within SECONDS; sets ELAPSED (ms)
gone_within() {
    local t0; t0=$(now_ms)
    timeout "$2" tail --pid="$1" -f /dev/null
    local r=$?
    ELAPSED=$(( $(now_ms) - t0 ))
    return $r
}
BOUND=3 # seconds from a signal to the exit: generous for a shared 2-core machine
# (the sanitizer build's exits are slower: its rank 1 took 3.02 s in CI)
[ -n "${TP_TEST_SANITIZED:-}" ] && BOUND=6

# reap PID: wait for it, killing it and its children when it is still
# there after the bound (the old code's waits: minutes); its status in RC
reap() {
    if kill -0 "$1" 2>/dev/null; then
        pkill -9 -P "$1"
        kill -9 "$1"
    fi
    wait "$1"; RC=$?
}
# signal NAME SIG WANT_RC PID: send SIG, check the exit within BOUND s and
# its status, and the one message
signal() {
    local name=$1 sig=$2 want=$3 pid=$4 rc
    kill -"$sig" "$pid"
    gone_within "$pid" "$BOUND"
    check "$name: SIG$sig ends it within $BOUND s (took $ELAPSED ms)" test "$ELAPSED" -lt $((BOUND * 1000))
    reap "$pid"; rc=$RC
    check "$name: ... exit $want (got $rc)" test "$rc" -eq "$want"
    check "$name: ... one message saying so" \
        test "$(grep -c "error: interrupted by SIG$sig" "$WORK/$name.out")" -eq 1
}
doc_says() { # doc_says FILE WANT_RC: a valid failed document, code interrupted
    test "$(json_get "$1" "d['status']['code'], d['status']['exit_code'], d['status']['message']" \
        2>&1)" = "interrupted $2 interrupted by SIG$( [ "$2" = 130 ] && echo INT || echo TERM)" &&
        valid_doc "$1"
}

# 1. step: a compute slice of five minutes (before: the signal waited for it)
"$TP" step -n 2 --steps 3 --compute-ms 300000 --no-io --json "$WORK/step.json" \
    >"$WORK/step.out" 2>&1 &
spid=$!
PIDS+=("$spid")
wait_for has_child "$spid"
r1=$(pgrep -P "$spid")
if wait_for busy "$r1" 1; then # rank 1 a second into its compute
    signal step INT 130 "$spid"
    check "step: ... a failed document saying so" doc_says "$WORK/step.json" 130
    check "step: ... rank 1 gone too" eval "! kill -0 $r1"
else
    not_ok "step: rank 1 never computed"; sed 's/^/#   /' "$WORK/step.out" | head
fi

# 2. step: rank 0 killed (SIGKILL: it cannot pass anything on) mid-compute;
# rank 1 must not go on computing for minutes as an orphan
"$TP" step -n 2 --steps 3 --compute-ms 300000 --no-io >"$WORK/orphan.out" 2>&1 &
spid=$!
PIDS+=("$spid")
wait_for has_child "$spid"
r1=$(pgrep -P "$spid")
PIDS+=("$r1")
if wait_for busy "$r1" 1; then
    kill -9 "$spid"
    gone_within "$r1" "$BOUND"
    check "step: rank 0 killed: rank 1 ends within $BOUND s (took $ELAPSED ms)" \
        test "$ELAPSED" -lt $((BOUND * 1000))
    kill -9 "$r1" 2>/dev/null
else
    not_ok "step: rank 1 never computed (orphan case)"
fi

# 3. coll under the env launcher: rank 0 waiting for a rank 1 that never
# joins (--timeout 10m: the wait would have been ten minutes)
port=$(free_port)
RANK=0 WORLD_SIZE=2 MASTER_ADDR=127.0.0.1 MASTER_PORT=$port "$TP" coll --sizes 1K --timeout 10m \
    --json "$WORK/join.json" >"$WORK/join.out" 2>&1 &
cpid=$!
PIDS+=("$cpid")
if wait_for listening "$port"; then
    signal join TERM 143 "$cpid"
    check "join: ... a failed document saying so" doc_says "$WORK/join.json" 143
else
    not_ok "join: rank 0 never listened"; sed 's/^/#   /' "$WORK/join.out" | head
fi

# 4. ... and a rank 1 retrying to reach a rank 0 that never listens
port=$(free_port)
RANK=1 WORLD_SIZE=2 MASTER_ADDR=127.0.0.1 MASTER_PORT=$port "$TP" coll --sizes 1K --timeout 10m \
    >"$WORK/connect.out" 2>&1 &
cpid=$!
PIDS+=("$cpid")
if wait_for napping "$cpid"; then
    signal connect INT 130 "$cpid"
else
    not_ok "connect: rank 1 never retried"; sed 's/^/#   /' "$WORK/connect.out" | head
fi

# 5. validate under the env launcher, rank 0 waiting for its nodes (the
# group's hour): the results folder still gets fleet.json saying why
port=$(free_port)
RANK=0 WORLD_SIZE=2 MASTER_ADDR=127.0.0.1 MASTER_PORT=$port "$TP" validate --only net \
    --out "$WORK/vjoin" >"$WORK/vjoin.out" 2>&1 &
vpid=$!
PIDS+=("$vpid")
if wait_for listening "$port"; then
    signal vjoin INT 130 "$vpid"
    check "vjoin: ... fleet.json in the results folder saying so" \
        doc_says "$WORK/vjoin/fleet.json" 130
else
    not_ok "vjoin: rank 0 never listened"; sed 's/^/#   /' "$WORK/vjoin.out" | head
fi

# 6. --on-fail drain with an scontrol that never answers (an unreachable
# slurmctld): two nodes under the env launcher, node 1 stalled in its own
# tests (TP_FAULT_STALL, docs/env.md) so the triage names it lost, action
# drain. Each job's scontrol on PATH records its start and sleeps (a child
# of its own, as a real one's retries are), for a time that names the job.
# Two jobs at once: "drain" bounded by --node-timeout 2s, "dint"
# interrupted while its scontrol waits (its bound 6 s, longer than that).
# drain_run NAME NODE-TIMEOUT SLEEP: start the two nodes; their pids in
# NAME_pids
drain_run() {
    local name=$1 k
    mkdir -p "$WORK/bin-$name"
    printf '#!/bin/sh\necho "$$ $*" >>"%s"\nsleep %s\n' "$WORK/$name.scontrol" "$3" \
        >"$WORK/bin-$name/scontrol"
    chmod +x "$WORK/bin-$name/scontrol"
    port=$(free_port)
    local -n pids=${name}_pids
    for k in 0 1; do
        env PATH="$WORK/bin-$name:$PATH" SLURM_JOB_ID=42 TP_FAULT_STALL=local:1 RANK=$k \
            WORLD_SIZE=2 MASTER_ADDR=127.0.0.1 MASTER_PORT=$port "$TP" validate --only net \
            --tier screen --seed 1 --min-effect 900 --node-timeout "$2" --on-fail drain \
            --out "$WORK/$name" >"$WORK/$name$k.out" 2>&1 &
        pids[$k]=$!
        PIDS+=($!)
    done
}
drain_end() { # the other node: stalled
    local -n pids=${1}_pids
    kill -9 "${pids[1]}" 2>/dev/null
    wait "${pids[1]}" 2>/dev/null
}
action() { json_get "$WORK/$1/fleet.json" "r['actions'][0]['$2']"; }
hung() { pgrep -f "sleep $1" >/dev/null; }
unhang() { # the scontrols of job NAME that the old code left (by their pids)
    local p
    for p in $(cut -d' ' -f1 "$WORK/$1.scontrol" 2>/dev/null); do
        pkill -9 -P "$p"; kill -9 "$p"
    done 2>/dev/null
}
drain_pids=() dint_pids=()
drain_run drain 2s 86398
drain_run dint 6s 86399

# 6b. the interrupt
v0=${dint_pids[0]}
if wait_for test -s "$WORK/dint.scontrol"; then
    kill -INT "$v0"
    gone_within "$v0" "$BOUND"
    check "dint: SIGINT in the drain ends rank 0 within $BOUND s (took $ELAPSED ms)" \
        test "$ELAPSED" -lt $((BOUND * 1000))
    reap "$v0"; rc=$RC
    check "dint: ... exit 130 (got $rc)" test "$rc" -eq 130
    check "dint: ... fleet.json written, interrupted, the action says so" \
        eval "doc_says '$WORK/dint/fleet.json' 130 && [ '$(action dint rc)' = -3 ] &&
              action dint says | grep -q 'interrupted by SIGINT: stopped'"
    check "dint: ... no scontrol left" eval "! hung 86399"
    unhang dint
else
    not_ok "dint: scontrol never ran"; sed 's/^/#   /' "$WORK/dint0.out" | head
fi
drain_end dint

# 6a. the bound (two minutes for the job: the stall, the bound, the outputs)
v0=${drain_pids[0]}
gone_within "$v0" 120
reap "$v0"; rc=$RC
drain_end drain
check "drain: an scontrol that never answers: rank 0 ends (exit $rc, 1: a node named)" \
    test "$rc" -eq 1
check "drain: ... scontrol was run" test -s "$WORK/drain.scontrol"
check "drain: ... stopped at the bound, fleet.json says so (rc $(action drain rc))" \
    eval "[ '$(action drain rc)' = -2 ] && action drain says | grep -q 'no answer within 2 s: stopped'"
check "drain: ... fleet.json valid" valid_doc "$WORK/drain/fleet.json"
check "drain: ... no scontrol left" eval "! hung 86398"
unhang drain
finish
