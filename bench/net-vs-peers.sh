#!/usr/bin/env bash
# bench/net-vs-peers.sh — trainpath net against the usual peer tools, on loopback.
#
# usage: bench/net-vs-peers.sh [TRAINPATH_BINARY]      (default: build/trainpath)
#   env BENCH_SECONDS   seconds each tool measures for (default 3)
#   env BENCH_CPUS      "S,C": pin every server to CPU S and every client to
#                       CPU C (default 0,1 where there are 2 CPUs or more);
#                       "none" leaves placement to the scheduler
#   env BENCH_KEEP=1    keep the servers' and clients' logs (the path is printed)
#   env BENCH_REPS      runs of the whole set (default 3): each run's tables,
#                       then one table of medians with each ratio's min-max
#   env BENCH_LAT_SIZES the latency rows' message sizes (default "8 64 1M")
#
# Why pin: on a VM, a ping-pong whose two ends share a core runs ~3-4x faster
# than one whose ends sit on different cores (no cross-CPU wake-up), and an
# unpinned pair lands either way by chance. Busy-polling tools (fi_pingpong)
# need a core each, so the default puts server and client on different CPUs,
# the same two for every tool.
#
# Runs each pair one after the other (never two measurements at once: a
# 2-core machine would only measure the contention), each side the same way:
#   1. TCP one-way latency, 8 B, 64 B, 1 MiB: trainpath net lat  vs  sockperf
#      ping-pong (its messages are 14 to 65507 B: the 64 B row), qperf tcp_lat
#   2. TCP bandwidth, one stream, 128 KiB writes: trainpath net bw  vs  iperf3
#   3. libfabric one-way latency, the same sizes, provider shm and tcp;ofi_rxm:
#      trainpath net lat --provider P  vs  fi_pingpong -p P -e rdm
# (libfabric bandwidth has no peer here: Debian's libfabric-bin ships
# fi_info, fi_pingpong and fi_strerror, not fabtests' fi_rdm_bw/fi_msg_bw.)
# and prints each pair's figures, the ratio trainpath/peer and whether the
# target is met.
#
# This is a benchmark, not a test: an unmet target does not fail it.
# Exit status: 0 when every measurement it attempted ran (rows of missing
# peer tools are "skipped (tool missing)"); 1 when some measurement failed
# to run (its row says why); 2 when nothing could run at all (no trainpath
# binary, no python3).
set -euo pipefail

BIN=${1:-build/trainpath}
SECS=${BENCH_SECONDS:-3}
HOST=127.0.0.1

die() { echo "net-vs-peers: $*" >&2; exit 2; }

[[ $SECS =~ ^[1-9][0-9]*$ ]] || die "BENCH_SECONDS must be a whole number of seconds >= 1 (got '$SECS')"
REPS=${BENCH_REPS:-3}
[[ $REPS =~ ^[1-9][0-9]*$ ]] || die "BENCH_REPS must be a whole number >= 1 (got '$REPS')"
LAT_SIZES=${BENCH_LAT_SIZES:-8 64 1M}
# bytes SIZE: 8, 64K, 1M as bytes
bytes() { awk -v s="$1" 'BEGIN { m = 1; u = substr(s, length(s)); if (u == "K") m = 1024; else if (u == "M") m = 1048576;
    n = (m > 1) ? substr(s, 1, length(s) - 1) : s; if (n !~ /^[0-9]+$/) exit 1; printf "%d\n", n * m }'; }
for z in $LAT_SIZES; do bytes "$z" >/dev/null || die "BENCH_LAT_SIZES: '$z' is not a size (8, 64, 4K, 1M)"; done
[[ -x $BIN ]] || die "trainpath binary '$BIN' not found or not executable (pass its path as \$1)"
case $BIN in /*) ;; *) BIN=$PWD/$BIN ;; esac
if [[ -x /usr/bin/python3 ]]; then PY=/usr/bin/python3
elif command -v python3 >/dev/null 2>&1; then PY=$(command -v python3)
else die "python3 is needed to read the JSON results"; fi

# BENCH_REPS runs of the whole set, each one this script again (its own
# servers, clients and tables), then one table of the medians
if [[ -z ${NVP_ROWS:-} ]] && ((REPS > 1)); then
    AGG=$(mktemp -d "${TMPDIR:-/tmp}/net-vs-peers-runs.XXXXXX")
    trap 'rm -rf "$AGG"' EXIT
    trap 'echo "net-vs-peers: interrupted" >&2; exit 130' INT TERM
    worst=0
    for ((r = 1; r <= REPS; r++)); do
        echo "######## run $r of $REPS"
        rc=0
        NVP_ROWS=$AGG/rows.$r BENCH_REPS=1 "$0" "$BIN" || rc=$?
        ((rc > worst)) && worst=$rc
        echo
    done
    "$PY" - "$AGG" "$REPS" <<'EOF'
import os, statistics as st, sys
d, reps = sys.argv[1], int(sys.argv[2])
order, got = [], {}
for r in range(1, reps + 1):
    path = f"{d}/rows.{r}"
    if not os.path.exists(path):
        continue
    for line in open(path):
        f = line.rstrip("\n").split("|")
        if len(f) != 7:
            continue
        key = (f[0], f[2])
        if key not in got:
            order.append(key)
            got[key] = []
        got[key].append(f)
def num(x):
    try:
        return float(x)
    except ValueError:
        return None
out = [("metric", "trainpath", "peer", "peer value", "ratio (min-max)", "runs", "target", "met?")]
for key in order:
    rows = got[key]
    ok = [f for f in rows if num(f[1]) is not None and num(f[3]) is not None and num(f[4]) is not None]
    if not ok:
        f = rows[0]
        out.append((f[0], f[1], f[2], f[3], f[4], f"0/{reps}", f[5], f[6]))
        continue
    tp = st.median(num(f[1]) for f in ok)
    pv = st.median(num(f[3]) for f in ok)
    rs = [num(f[4]) for f in ok]
    rm = st.median(rs)
    target = ok[0][5]
    met = (rm <= 1.0) if target.startswith("<=") else (rm >= 1.0)
    out.append((key[0], f"{tp:.3f}", key[1], f"{pv:.3f}", f"{rm:.2f} ({min(rs):.2f}-{max(rs):.2f})",
                f"{len(ok)}/{reps}", target, "yes" if met else "NO"))
w = [max(len(r[i]) for r in out) for i in range(len(out[0]))]
print(f"== medians over {reps} runs (trainpath and peer values: medians; ratio: the median of the runs' ratios, min-max; met: by the median)")
for i, r in enumerate(out):
    print(" | ".join(c.ljust(w[j]) for j, c in enumerate(r)))
    if i == 0:
        print("-|-".join("-" * x for x in w))
print("a ratio whose min-max straddles the target is within this machine's noise; run with BENCH_REPS=5 or more to narrow it")
EOF
    exit "$worst"
fi

SRV_PIN=()
CLI_PIN=()
CPUS=${BENCH_CPUS:-}
if [[ -z $CPUS ]]; then
    if (($(nproc) >= 2)) && command -v taskset >/dev/null 2>&1; then CPUS=0,1; else CPUS=none; fi
fi
if [[ $CPUS != none ]]; then
    [[ $CPUS =~ ^([0-9]+),([0-9]+)$ ]] || die "BENCH_CPUS must be S,C (two CPU numbers) or none (got '$CPUS')"
    command -v taskset >/dev/null 2>&1 || die "BENCH_CPUS=$CPUS needs taskset"
    SRV_PIN=(taskset -c "${BASH_REMATCH[1]}")
    CLI_PIN=(taskset -c "${BASH_REMATCH[2]}")
    if ! taskset -c "${BASH_REMATCH[1]}" true 2>/dev/null || ! taskset -c "${BASH_REMATCH[2]}" true 2>/dev/null; then
        die "cannot pin to CPUs $CPUS (set BENCH_CPUS=S,C or none)"
    fi
fi

WORK=$(mktemp -d "${TMPDIR:-/tmp}/net-vs-peers.XXXXXX")
PIDS=()
FAILED=0
# a client that hangs is killed after this long
CLIENT_LIMIT=$((SECS * 6 + 40))

# ---------------------------------------------------------------- processes

# alive PID: true while PID runs (an exited child waiting to be reaped is a
# zombie, which kill -0 would still find)
alive() {
    local st
    st=$(awk '{ sub(/^.*\) /, ""); print $1 }' "/proc/$1/stat" 2>/dev/null) || return 1
    [[ -n $st && $st != Z && $st != X ]]
}

# is_leader PID: true when PID leads its own process group (servers started
# through setsid, clients through timeout), so the group can be signalled
is_leader() {
    [[ $(awk '{ sub(/^.*\) /, ""); print $3 }' "/proc/$1/stat" 2>/dev/null) == "$1" ]]
}

stop_pid() { # PID: TERM, a grace period, then KILL (its group too); reap and forget it
    local pid=$1 i group=
    is_leader "$pid" && group=1
    if alive "$pid"; then
        if [[ -n $group ]]; then kill -TERM -- "-$pid" 2>/dev/null || true; else kill -TERM "$pid" 2>/dev/null || true; fi
        for ((i = 0; i < 30; i++)); do
            alive "$pid" || break
            sleep 0.1
        done
    fi
    # whatever is left of it (a forked qperf child, say) goes now
    if [[ -n $group ]]; then kill -KILL -- "-$pid" 2>/dev/null || true
    elif alive "$pid"; then kill -KILL "$pid" 2>/dev/null || true; fi
    wait "$pid" 2>/dev/null || true
    forget_pid "$pid"
}

# forget_pid PID: once reaped, so that cleanup never signals a recycled id
forget_pid() {
    local p keep=()
    for p in ${PIDS[@]+"${PIDS[@]}"}; do [[ $p == "$1" ]] || keep+=("$p"); done
    PIDS=(${keep[@]+"${keep[@]}"})
}

cleanup() {
    local pid
    trap - EXIT INT TERM
    for pid in ${PIDS[@]+"${PIDS[@]}"}; do stop_pid "$pid"; done
    if [[ -n ${BENCH_KEEP:-} ]]; then
        echo "net-vs-peers: logs kept in $WORK" >&2
    else
        rm -rf "$WORK"
    fi
}
trap cleanup EXIT
trap 'echo "net-vs-peers: interrupted" >&2; exit 130' INT TERM

# client OUT ERR CMD...: runs a client on its CPU, stdout to OUT, stderr to
# ERR (or to OUT when ERR is "+"), killed if it hangs. It runs in the
# background so that a signal to this script is handled at once (the trap
# stops it); bash's own report of a client killed by a signal is dropped:
# the row says what happened.
client() {
    local out=$1 err=$2 rc=0 pid
    shift 2
    if [[ $err == + ]]; then
        timeout -k 5 "$CLIENT_LIMIT" ${CLI_PIN[@]+"${CLI_PIN[@]}"} "$@" </dev/null >"$out" 2>&1 &
    else
        timeout -k 5 "$CLIENT_LIMIT" ${CLI_PIN[@]+"${CLI_PIN[@]}"} "$@" </dev/null >"$out" 2>"$err" &
    fi
    pid=$!
    PIDS+=("$pid")
    wait "$pid" 2>/dev/null || rc=$?
    forget_pid "$pid"
    return "$rc"
}

start_server() { # LOG CMD...: starts CMD in the background; sets SERVER_PID
    local log=$1
    shift
    # setsid: its own process group, so that stopping it stops its children
    setsid ${SRV_PIN[@]+"${SRV_PIN[@]}"} "$@" </dev/null >"$log" 2>&1 &
    SERVER_PID=$!
    PIDS+=("$SERVER_PID")
}

# Waits until something listens on TCP port PORT (read from /proc/net/tcp*,
# so no probe connection disturbs a one-off server); fails if PID exits.
wait_listen() { # PORT PID [SECONDS]
    local port=$1 pid=$2 limit=${3:-10} hex i
    hex=$(printf '%04X' "$port")
    for ((i = 0; i < limit * 20; i++)); do
        if cat /proc/net/tcp /proc/net/tcp6 2>/dev/null |
            awk -v p=":$hex" '$4 == "0A" && substr($2, length($2) - 4) == p { f = 1 } END { exit !f }'; then
            return 0
        fi
        alive "$pid" || return 1
        sleep 0.05
    done
    return 1
}

# Waits for a one-off server to exit by itself after its client finished;
# stops it if it does not.
finish_server() { # PID
    local pid=$1 i
    for ((i = 0; i < 20; i++)); do
        alive "$pid" || break
        sleep 0.1
    done
    stop_pid "$pid"
}

USED_PORTS=" "
free_port() { # prints a random high TCP port nothing is bound to
    local p i
    for ((i = 0; i < 200; i++)); do
        p=$((20000 + (RANDOM * 32768 + RANDOM) % 40000))
        [[ $USED_PORTS == *" $p "* ]] && continue
        if "$PY" - "$p" <<'EOF' 2>/dev/null; then
import socket, sys
p = int(sys.argv[1])
for fam, addr in ((socket.AF_INET, "0.0.0.0"), (socket.AF_INET6, "::")):
    try:
        s = socket.socket(fam, socket.SOCK_STREAM)
    except OSError:
        continue
    s.bind((addr, p))
    s.close()
EOF
            USED_PORTS+="$p "
            echo "$p"
            return 0
        fi
    done
    die "no free TCP port found"
}

have() { command -v "$1" >/dev/null 2>&1; }

# ------------------------------------------------------------------ helpers

# jget FILE EXPR: evaluates a Python expression on the document d
jget() {
    "$PY" - "$1" "$2" <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
v = eval(sys.argv[2], {"d": d})
print(v if not isinstance(v, float) else repr(v))
EOF
}

fmt() { awk -v v="$1" -v d="${2:-3}" 'BEGIN { if (v == "" || v == "-") print "-"; else printf "%.*f\n", d, v }'; }

ROWS=()
# row METRIC TRAINPATH PEER PEERVALUE RATIO TARGET MET
row() { ROWS+=("$1|$2|$3|$4|$5|$6|$7"); }

# ratio_row METRIC TP_VALUE PEER PEER_VALUE DIR(le|ge) UNIT_LABEL
ratio_row() {
    local metric=$1 tp=$2 peer=$3 pv=$4 dir=$5 ratio met target
    ratio=$(awk -v a="$tp" -v b="$pv" 'BEGIN { if (b > 0) printf "%.2f", a / b; else print "-" }')
    if [[ $dir == le ]]; then
        target="<= 1.00x"
        met=$(awk -v r="$ratio" 'BEGIN { print (r != "-" && r + 0 <= 1.0) ? "yes" : "NO" }')
    else
        target=">= 1.00x"
        met=$(awk -v r="$ratio" 'BEGIN { print (r != "-" && r + 0 >= 1.0) ? "yes" : "NO" }')
    fi
    row "$metric" "$tp" "$peer" "$pv" "$ratio" "$target" "$met"
}

note() { printf '  %s\n' "$*"; }

DUR_WARN=0
TP_DUR_WARN=0
# dur_check WHAT SECONDS: flags a run whose measured span strays from BENCH_SECONDS
dur_check() {
    if awk -v t="$2" -v s="$SECS" 'BEGIN { exit !(t < 0.7 * s || t > 1.5 * s) }'; then
        note "WARNING: $1 measured for $(fmt "$2" 2) s, not the ${SECS} s asked: this pair did not run for the same time"
        DUR_WARN=1
        [[ $1 == trainpath* ]] && TP_DUR_WARN=1
    fi
    return 0
}

# tp_run NAME TEST JSON [client options...]: one trainpath server + client.
# Returns non-zero (and prints why) when it failed.
tp_run() {
    local name=$1 test=$2 json=$3 port rc
    shift 3
    port=$(free_port)
    start_server "$WORK/$name.srv.log" "$BIN" net serve --bind "$HOST" --port "$port" --one-off
    if ! wait_listen "$port" "$SERVER_PID"; then
        note "trainpath server did not start: $(tail -n 3 "$WORK/$name.srv.log" | tr '\n' ' ')"
        stop_pid "$SERVER_PID"
        return 1
    fi
    rc=0
    client "$WORK/$name.cli.log" + "$BIN" net "$test" "$HOST" -p "$port" --time "${SECS}s" \
        --json "$json" "$@" || rc=$?
    finish_server "$SERVER_PID"
    if ((rc != 0)) || [[ ! -s $json ]]; then
        local why
        why=$(grep -v '^ *$' "$WORK/$name.cli.log" | tail -n 2 | tr '\n' ' ')
        if ((rc == 124 || rc == 137)); then why="timed out after ${CLIENT_LIMIT} s; $why"
        elif ((rc > 128)); then why="killed by signal $((rc - 128)) ($(kill -l "$((rc - 128))" 2>/dev/null || echo '?')); $why"
        fi
        note "trainpath net $test $* failed (exit $rc): ${why:-no output}"
        return 1
    fi
}

# ------------------------------------------------------------------ header

echo "== trainpath net vs peer tools, loopback ($HOST), ${SECS} s per tool, pairs run one after the other"
echo "machine : $(hostname) | nproc $(nproc) | CPU $(awk -F': *' '/^model name/ { print $2; exit }' /proc/cpuinfo) | kernel $(uname -r)"
if [[ $CPUS == none ]]; then
    echo "pinning : none (BENCH_CPUS=none): the scheduler places each end; latency depends on where"
else
    echo "pinning : every server on CPU ${CPUS%,*}, every client on CPU ${CPUS#*,} (BENCH_CPUS)"
fi
echo "load    : $(cut -d' ' -f1-3 /proc/loadavg) (1/5/15 min; other work on these cores shows up in every figure)"
echo "trainpath: $BIN ($("$BIN" --version 2>/dev/null | head -n 1 || echo 'version unknown'))"
printf 'peers   :'
for t in sockperf qperf iperf3 fi_pingpong; do
    if have "$t"; then
        case $t in
            sockperf) v=$(sockperf --version 2>&1 | sed -n 's/.*version \([^ ]*\).*/\1/p' | head -n 1) ;;
            qperf) v=$(qperf --version 2>&1 | head -n 1 | awk '{ print $NF }') ;;
            iperf3) v=$(iperf3 --version 2>&1 | head -n 1 | awk '{ print $2 }') ;;
            fi_pingpong) v="libfabric $(fi_info --version 2>/dev/null | sed -n 's/^libfabric: *//p' | head -n 1)" ;;
        esac
        printf ' %s %s;' "$t" "${v:-?}"
    else
        printf ' %s MISSING;' "$t"
    fi
done
echo
echo

# ============================================ 1. TCP latency, one-way, per size
load() { awk '{ printf "load %s, %d runnable besides this script", $1, $4 - 1 }' /proc/loadavg; }

for LSZ in $LAT_SIZES; do
LB=$(bytes "$LSZ")
[[ $LSZ =~ ^[0-9]+$ ]] && SZ=${LSZ}B || SZ=${LSZ}iB # the rows' label: 8B, 64B, 1MiB
echo "-- 1. [$(load)] TCP one-way latency, $LSZ (all three: one-way = RTT/2)"
TP_LAT_OK=0
if tp_run "tcplat$LSZ" lat "$WORK/tp-lat.json" --sizes "$LSZ" &&
    read -r TP_P50 TP_MEAN TP_DUR TP_N < <(jget "$WORK/tp-lat.json" \
        '"%s %s %s %s" % ((lambda s: (s["latency"]["p50"]/1e3, s["latency"]["mean"]/1e3, s["duration"]["value"], s["iterations"]))(d["results"]["sizes"][0]))'); then
    TP_LAT_OK=1
    note "trainpath net lat : p50 $(fmt "$TP_P50") us, mean $(fmt "$TP_MEAN") us one-way; $TP_N round trips in $(fmt "$TP_DUR" 2) s measured (+100 ms warm-up)"
    dur_check "trainpath net lat --time ${SECS}s" "$TP_DUR"
else
    FAILED=1
fi

# sockperf (its messages: 14 to 65507 bytes)
if ! have sockperf; then
    row "tcp lat $SZ p50 (us)" "$( ((TP_LAT_OK)) && fmt "$TP_P50" || echo ERROR)" sockperf "skipped (tool missing)" - "<= 1.00x" -
elif ((LB < 14 || LB > 65507)); then
    row "tcp lat $SZ p50 (us)" "$( ((TP_LAT_OK)) && fmt "$TP_P50" || echo ERROR)" sockperf "skipped (-m is 14..65507 B)" - "<= 1.00x" -
else
    port=$(free_port)
    start_server "$WORK/sockperf.srv.log" sockperf server --tcp -i "$HOST" -p "$port"
    SP_OK=0
    if wait_listen "$port" "$SERVER_PID"; then
        if client "$WORK/sockperf.cli.log" + sockperf ping-pong --tcp -i "$HOST" -p "$port" -m "$LB" -t "$SECS"; then
            # strip the colour escapes sockperf writes
            sed 's/\x1b\[[0-9;]*m//g' "$WORK/sockperf.cli.log" >"$WORK/sockperf.txt"
            SP_P50=$(awk '/percentile 50\.000 =/ { print $NF }' "$WORK/sockperf.txt")
            SP_AVG=$(sed -n 's/.*avg-latency=\([0-9.]*\).*/\1/p' "$WORK/sockperf.txt" | head -n 1)
            SP_DUR=$(sed -n 's/.*\[Valid Duration\] RunTime=\([0-9.]*\).*/\1/p' "$WORK/sockperf.txt" | head -n 1)
            SP_N=$(sed -n 's/.*Total \([0-9]*\) observations.*/\1/p' "$WORK/sockperf.txt" | head -n 1)
            [[ -n $SP_P50 && -n $SP_AVG ]] && SP_OK=1
        fi
    fi
    stop_pid "$SERVER_PID"
    if ((SP_OK)); then
        note "sockperf ping-pong: p50 $(fmt "$SP_P50") us, mean $(fmt "$SP_AVG") us one-way; $SP_N round trips in ${SP_DUR:-?} s measured (-t $SECS includes its 400 ms warm-up)"
        if ((TP_LAT_OK)); then
            ratio_row "tcp lat $SZ p50 (us)" "$(fmt "$TP_P50")" sockperf "$(fmt "$SP_P50")" le
            ratio_row "tcp lat $SZ mean (us)" "$(fmt "$TP_MEAN")" sockperf "$(fmt "$SP_AVG")" le
        else
            row "tcp lat $SZ p50 (us)" ERROR sockperf "$(fmt "$SP_P50")" - "<= 1.00x" -
        fi
    else
        FAILED=1
        note "sockperf failed: $(tail -n 3 "$WORK/sockperf.cli.log" 2>/dev/null | tr '\n' ' ')"
        row "tcp lat $SZ p50 (us)" "$( ((TP_LAT_OK)) && fmt "$TP_P50" || echo ERROR)" sockperf "ERROR (did not run)" - "<= 1.00x" -
    fi
fi

# qperf: reports one mean one-way latency (time / (2 x round trips)), no percentiles
if ! have qperf; then
    row "tcp lat $SZ mean (us)" "$( ((TP_LAT_OK)) && fmt "$TP_MEAN" || echo ERROR)" qperf "skipped (tool missing)" - "<= 1.00x" -
else
    lport=$(free_port)
    dport=$(free_port)
    start_server "$WORK/qperf.srv.log" qperf -lp "$lport"
    QP_OK=0
    if wait_listen "$lport" "$SERVER_PID"; then
        # -uu: every figure in the same (smallest) unit, here ns
        if client "$WORK/qperf.cli.log" + qperf "$HOST" -lp "$lport" -ip "$dport" -m "$LB" -t "$SECS" -uu -e 6 -vu tcp_lat; then
            QP_LAT=$(awk '$1 == "latency" && $2 == "=" {
                    v = $3; u = $4
                    if (u == "ns") v /= 1000; else if (u == "ms") v *= 1000; else if (u == "sec" || u == "s") v *= 1e6
                    print v; exit }' "$WORK/qperf.cli.log")
            [[ -n $QP_LAT ]] && QP_OK=1
        fi
        timeout 5 qperf "$HOST" -lp "$lport" quit >/dev/null 2>&1 || true
    fi
    stop_pid "$SERVER_PID"
    if ((QP_OK)); then
        note "qperf tcp_lat     : mean $(fmt "$QP_LAT") us one-way (qperf reports only the mean: elapsed / (2 x round trips)), -t $SECS"
        if ((TP_LAT_OK)); then
            ratio_row "tcp lat $SZ mean (us)" "$(fmt "$TP_MEAN")" qperf "$(fmt "$QP_LAT")" le
        else
            row "tcp lat $SZ mean (us)" ERROR qperf "$(fmt "$QP_LAT")" - "<= 1.00x" -
        fi
    else
        FAILED=1
        note "qperf failed: $(tail -n 3 "$WORK/qperf.cli.log" 2>/dev/null | tr '\n' ' ')"
        row "tcp lat $SZ mean (us)" "$( ((TP_LAT_OK)) && fmt "$TP_MEAN" || echo ERROR)" qperf "ERROR (did not run)" - "<= 1.00x" -
    fi
fi
echo
done

# ======================================= 2. TCP bandwidth, one stream, 128 KiB
echo "-- 2. [$(load)] TCP bandwidth, one stream, 128 KiB messages (GB/s = 1e9 B/s, receiver-confirmed)"
TP_BW_OK=0
if tp_run tcpbw bw "$WORK/tp-bw.json" --sizes 128K &&
    read -r TP_BW TP_BWDUR TP_MSGS < <(jget "$WORK/tp-bw.json" \
        '"%s %s %s" % ((lambda s: (s["bw"]["value"]/1e9, s["duration"]["value"], s["messages"]))(d["results"]["sizes"][0]))'); then
    TP_BW_OK=1
    note "trainpath net bw  : $(fmt "$TP_BW") GB/s; $TP_MSGS messages in $(fmt "$TP_BWDUR" 2) s measured (+100 ms warm-up)"
    dur_check "trainpath net bw --time ${SECS}s" "$TP_BWDUR"
else
    FAILED=1
fi
if ! have iperf3; then
    row "tcp bw 128K 1 stream (GB/s)" "$( ((TP_BW_OK)) && fmt "$TP_BW" || echo ERROR)" iperf3 "skipped (tool missing)" - ">= 1.00x" -
else
    port=$(free_port)
    start_server "$WORK/iperf3.srv.log" iperf3 -s -1 -p "$port" -B "$HOST"
    IP_OK=0
    if wait_listen "$port" "$SERVER_PID"; then
        if client "$WORK/iperf3.json" "$WORK/iperf3.cli.log" iperf3 -c "$HOST" -p "$port" -t "$SECS" -l 128K -J; then
            if read -r IP_BW IP_DUR < <(jget "$WORK/iperf3.json" \
                '"%s %s" % (d["end"]["sum_received"]["bits_per_second"]/8/1e9, d["end"]["sum_received"]["seconds"])' 2>/dev/null); then
                IP_OK=1
            fi
        fi
    fi
    finish_server "$SERVER_PID"
    if ((IP_OK)); then
        note "iperf3 -l 128K    : $(fmt "$IP_BW") GB/s received in $(fmt "$IP_DUR" 2) s (end.sum_received)"
        if ((TP_BW_OK)); then
            ratio_row "tcp bw 128K 1 stream (GB/s)" "$(fmt "$TP_BW")" iperf3 "$(fmt "$IP_BW")" ge
        else
            row "tcp bw 128K 1 stream (GB/s)" ERROR iperf3 "$(fmt "$IP_BW")" - ">= 1.00x" -
        fi
    else
        FAILED=1
        note "iperf3 failed: $(tail -n 3 "$WORK/iperf3.cli.log" 2>/dev/null | tr '\n' ' ')"
        row "tcp bw 128K 1 stream (GB/s)" "$( ((TP_BW_OK)) && fmt "$TP_BW" || echo ERROR)" iperf3 "ERROR (did not run)" - ">= 1.00x" -
    fi
fi
echo

# ====================================== 3. libfabric latency vs fi_pingpong
# fi_pingpong prints usec/xfer = elapsed / iterations / 2: the MEAN one-way
# latency over the timed loop (no warm-up, no percentiles). So trainpath's
# one-way MEAN is compared with it; trainpath's p50 is shown beside it.
# fi_pingpong has no duration option: a short calibration run gives its rate,
# and the measured run gets the iterations that fill BENCH_SECONDS.

fp_once() { # NAME PROVIDER ITERS SIZE -> prints "usec_per_xfer seconds" or fails
    local name=$1 prov=$2 iters=$3 size=$4 port rc=0
    port=$(free_port)
    start_server "$WORK/$name.srv.log" fi_pingpong -p "$prov" -e rdm -S "$size" -I "$iters" -B "$port"
    if ! wait_listen "$port" "$SERVER_PID"; then
        stop_pid "$SERVER_PID"
        echo "server did not start: $(tail -n 2 "$WORK/$name.srv.log" | tr '\n' ' ')" >"$WORK/$name.cli.log"
        return 1
    fi
    client "$WORK/$name.cli.log" + fi_pingpong -p "$prov" -e rdm -S "$size" -I "$iters" -P "$port" "$HOST" || rc=$?
    finish_server "$SERVER_PID"
    if ((rc != 0)); then
        echo "fi_pingpong -I $iters exited $rc$( ((rc == 124 || rc == 137)) && echo " (timed out after $CLIENT_LIMIT s)")" >>"$WORK/$name.cli.log"
        return 1
    fi
    awk '/usec\/xfer/ { h = 1; next } h && NF >= 8 { t = $5; sub(/s$/, "", t); print $7, t; exit }' "$WORK/$name.cli.log" | grep .
}

for LSZ in $LAT_SIZES; do
LB=$(bytes "$LSZ")
[[ $LSZ =~ ^[0-9]+$ ]] && SZ=${LSZ}B || SZ=${LSZ}iB # the rows' label: 8B, 64B, 1MiB
for prov in shm 'tcp;ofi_rxm'; do
    tag=${prov%%;*}$LSZ
    label="ofi $prov lat $SZ mean (us)"
    echo "-- 3. [$(load)] libfabric one-way latency, $LSZ, provider $prov (RDM endpoint, send/recv)"
    if [[ $prov == tcp* ]]; then
        # both tools: keep the tcp provider on loopback (it defaults to the first NIC)
        export FI_TCP_IFACE=lo
    else
        unset FI_TCP_IFACE
    fi
    TP_OFI_OK=0
    if tp_run "ofi-$tag" lat "$WORK/tp-ofi-$tag.json" --provider "$prov" --sizes "$LSZ" &&
        read -r TO_P50 TO_MEAN TO_DUR TO_N TO_DOM < <(jget "$WORK/tp-ofi-$tag.json" \
            '"%s %s %s %s %s" % ((lambda s: (s["latency"]["p50"]/1e3, s["latency"]["mean"]/1e3, s["duration"]["value"], s["iterations"]))(d["results"]["sizes"][0]) + (((d.get("provenance") or {}).get("peer") or {}).get("endpoint", {}).get("domain", "?"),))'); then
        TP_OFI_OK=1
        note "trainpath net lat --provider '$prov': mean $(fmt "$TO_MEAN") us, p50 $(fmt "$TO_P50") us one-way; $TO_N round trips in $(fmt "$TO_DUR" 2) s (domain $TO_DOM)"
        dur_check "trainpath net lat --provider '$prov' --time ${SECS}s" "$TO_DUR"
    else
        FAILED=1
    fi
    if ! have fi_pingpong; then
        row "$label" "$( ((TP_OFI_OK)) && fmt "$TO_MEAN" || echo ERROR)" fi_pingpong "skipped (tool missing)" - "<= 1.00x" -
    else
        FP_OK=0
        # fi_pingpong counts iterations, not seconds: start small and scale
        # the count by the rate seen until a run lasts about BENCH_SECONDS
        # (at least 70% of it; 5 tries at most, the last one counts)
        iters=2000
        for try in 1 2 3 4 5; do
            res=$(fp_once "fp-$tag-$try" "$prov" "$iters" "$LB") || { res=; break; }
            read -r FP_US FP_DUR <<<"$res"
            # elapsed from usec/xfer: the printed time has only 10 ms resolution
            FP_DUR=$(awk -v u="$FP_US" -v n="$iters" 'BEGIN { printf "%.3f", u * 2 * n / 1e6 }')
            if ((try == 5)) || awk -v t="$FP_DUR" -v s="$SECS" 'BEGIN { exit !(t >= 0.7 * s) }'; then
                FP_OK=1
                break
            fi
            iters=$(awk -v n="$iters" -v t="$FP_DUR" -v s="$SECS" 'BEGIN {
                m = (t > 0) ? n * s / t : n * 100; if (m > n * 100) m = n * 100
                if (m > 2000000000) m = 2000000000; printf "%d", m }')
        done
        if ((FP_OK)); then
            note "fi_pingpong -p '$prov' -e rdm: $(fmt "$FP_US") us/xfer = mean one-way; $iters round trips in $(fmt "$FP_DUR" 2) s (try $try; busy-polls its CQs)"
            dur_check "fi_pingpong -I $iters" "$FP_DUR"
            if ((TP_OFI_OK)); then
                ratio_row "$label" "$(fmt "$TO_MEAN")" fi_pingpong "$(fmt "$FP_US")" le
            else
                row "$label" ERROR fi_pingpong "$(fmt "$FP_US")" - "<= 1.00x" -
            fi
        else
            FAILED=1
            note "fi_pingpong -p '$prov' failed: $(cat "$WORK/fp-$tag"*.cli.log 2>/dev/null | grep -v '^ *$' | tail -n 2 | tr '\n' ' ')"
            row "$label" "$( ((TP_OFI_OK)) && fmt "$TO_MEAN" || echo ERROR)" fi_pingpong "ERROR (did not run)" - "<= 1.00x" -
        fi
    fi
    echo
done
done
unset FI_TCP_IFACE

# ------------------------------------------------------------------ table
echo "== summary (ratio = trainpath / peer; latencies one-way = RTT/2 in us, bandwidth in GB/s)"
{
    echo "metric|trainpath|peer|peer value|ratio|target|met?"
    for r in "${ROWS[@]}"; do echo "$r"; done
} | awk -F'|' '
    { for (i = 1; i <= NF; i++) { c[NR, i] = $i; if (length($i) > w[i]) w[i] = length($i) } n = NR; nf = NF }
    END {
        for (r = 1; r <= n; r++) {
            line = ""
            for (i = 1; i <= nf; i++) line = line sprintf("%s%-*s", i > 1 ? " | " : "", w[i], c[r, i])
            print line
            if (r == 1) { sep = ""; for (i = 1; i <= nf; i++) sep = sep (i > 1 ? "-|-" : "") sprintf("%*s", w[i], ""); gsub(/ /, "-", sep); print sep }
        }
    }'
echo "definitions: p50 rows compare medians of per-round-trip RTT/2 (trainpath, sockperf);"
echo "  mean rows compare means: sockperf avg-latency, qperf (elapsed/(2 x round trips)),"
echo "  fi_pingpong usec/xfer (elapsed/iterations/2) against trainpath latency.mean (RTT/2)."
if ((DUR_WARN)); then
    echo "note: some runs did not last about BENCH_SECONDS=${SECS} s (see the WARNING lines above)."
fi
if ((TP_DUR_WARN)); then
    echo "  trainpath --time turns the duration into a message count from its 100 ms warm-up rate,"
    echo "  so when the rate changes (other load) its run is shorter or longer than asked."
fi
if [[ -n ${NVP_ROWS:-} ]]; then
    printf '%s\n' "${ROWS[@]}" >"$NVP_ROWS"
fi
if ((FAILED)); then
    echo "net-vs-peers: some measurements did not run (see the notes above)" >&2
    exit 1
fi
exit 0
