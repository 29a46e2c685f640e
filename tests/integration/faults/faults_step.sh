#!/usr/bin/env bash
# A rank of `trainpath step -n 3` killed with SIGKILL mid-run: the others
# give up within --timeout naming the lost rank (its pid), the run exits 1,
# rank 0's document is valid, failed, and says which rank was lost, and no
# rank is left running. Over shared memory (the default within a host) and
# over TCP (--intra fabric).
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/faults_lib.sh"

D=$WORK/data; mkdir -p "$D"
TIMEOUT_S=5
host=$(hostname)
# long enough never to finish by itself, small enough to start at once
run=(step -n 3 --steps 100000 --batch 24 --sample-size 1K --grad-size 256K --compute-ms 2
     --dir "$D" --timeout "${TIMEOUT_S}s")

# the ranks forked by PID once it is stepping ("# trainpath step:" printed)
started() {
    local pid=$1 out=$2
    for _ in $(seq 150); do
        [ "$(pgrep -P "$pid" | wc -l)" -ge 2 ] && grep -q "^# trainpath step:" "$out" && return 0
        kill -0 "$pid" 2>/dev/null || break
        sleep 0.1
    done
    echo "# step did not start:"; sed 's/^/#   /' "$out" | head -10
    return 1
}

# gone PIDS...: true once none of them runs (bounded: 5 s)
gone() {
    for _ in $(seq 50); do
        local alive=0 p
        for p in "$@"; do kill -0 "$p" 2>/dev/null && alive=1; done
        [ $alive -eq 0 ] && return 0
        sleep 0.1
    done
    echo "# still running: $(for p in "$@"; do kill -0 "$p" 2>/dev/null && echo "$p"; done)"
    return 1
}

for intra in shm fabric; do
    for victim_pos in last first; do
        name=$intra-$victim_pos
        out=$WORK/$name.out J=$WORK/$name.json
        "$TP" "${run[@]}" --intra "$intra" --json "$J" >"$out" 2>&1 &
        pid=$!
        PIDS+=("$pid")
        if ! started "$pid" "$out"; then
            not_ok "$name: step -n 3 started"
            continue
        fi
        ranks=$(pgrep -P "$pid" | tr '\n' ' ')
        PIDS+=($ranks)
        sleep 0.5 # a few steps in
        # the local launcher forks rank 1, then rank 2: the lower pid is rank 1
        if [ $victim_pos = last ]; then
            victim=$(pgrep -P "$pid" | tail -1) vrank=2
        else
            victim=$(pgrep -P "$pid" | head -1) vrank=1
        fi
        t0=$(date +%s%N)
        kill -9 "$victim"
        wait_exit "$pid" $((TIMEOUT_S + 20)); rc=$RC
        dt_ms=$(( ($(date +%s%N) - t0) / 1000000 ))
        echo "# $name: killed pid $victim (of $ranks), run ended ${dt_ms} ms later with exit $rc"
        check "$name: a rank killed with SIGKILL mid-run: exit 1" test "$rc" -eq 1
        check "... within the timeout (${dt_ms} ms <= ${TIMEOUT_S} s + 5 s)" \
            test "$dt_ms" -le $(( (TIMEOUT_S + 5) * 1000 ))
        if [ "$intra" = shm ]; then
            check "... a surviving rank names the lost one (rank $vrank) and its pid" \
                grep_q "rank $vrank on $host \\(pid $victim\\) is gone" "$out"
        else
            check "... a surviving rank names the lost one (rank $vrank)" \
                grep_q "rank [12]: rank $vrank on $host" "$out"
        fi
        check "... rank 0's document is valid" valid_doc "$J"
        is "... and failed: ok false, code peer, exit code 1" "False peer 1" \
            "$(json_get "$J" "d['status']['ok'], d['status']['code'], d['status']['exit_code']")"
        if [ "$intra" = shm ]; then
            # shared memory: every rank sees whether a peer's process is gone
            is "... its message names the lost rank, not the one that gave up" True \
                "$(json_run "$J" "import re; print(bool(re.match(r'rank $vrank on $host \\(pid $victim\\) is gone', d['status']['message'])))")"
        else
            # TCP: rank 0 sees the rank that gave up close its connection
            is "... its message names a peer rank" True \
                "$(json_run "$J" "import re; print(bool(re.match(r'rank [12] on $host', d['status']['message'])))")"
        fi
        check "... no rank left running" gone $pid $ranks
        check "... and none of this run in the process table (pgrep)" \
            test -z "$(pgrep -f -- "--json $J")"
    done
done
finish
