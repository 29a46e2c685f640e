#!/usr/bin/env bash
# Classes 2 and 6 of the third hardening round (docs/reliability.md,
# "Hardening III"): what one run leaves must not reach another. A
# validation reads only what it wrote: an earlier run's files in the same
# --out (a server log naming an old port, the documents of tests this run
# did not get to) are gone before it starts, on one host and across nodes.
# And a run that is killed (SIGKILL) leaves no secret behind: the session
# key of a fleet's net servers is never on a disk, and the scratch folder
# of a killed run is removed by the next run's start.
. "$(dirname "$0")/../lib.sh"

wait_for() { for _ in $(seq 300); do "$@" 2>/dev/null && return 0; sleep 0.1; done; return 1; }
# stale DIR MARK: the files in DIR not newer than MARK (an earlier run's),
# but the history (a history gathers runs) and a file of the user's
stale() { find "$1" -type f ! -newer "$2" ! -name history.sqlite ! -name notes.txt | sort; }
scratch() { find /var/tmp -maxdepth 1 -name 'trainpath-validate.*' 2>/dev/null | sort; }
# fleet DIR TAG: validate --only net on 2 ranks (the env launcher) into DIR,
# in the background; their pids in vpid[]
fleet() {
    local port k
    port=$(free_port)
    for k in 0 1; do
        env RANK=$k WORLD_SIZE=2 MASTER_ADDR=127.0.0.1 MASTER_PORT=$port timeout 120 \
            "$TP" validate --only net --tier screen --seed 1 --out "$1" >"$WORK/$2$k.out" 2>&1 &
        vpid[$k]=$!
        PIDS+=($!)
    done
}

# --- class 2: a run reads only what it wrote ---

# this host: an earlier run's server log names a port nobody listens on
mkdir -p "$WORK/h"
echo "trainpath: info: listening on 127.0.0.1 port 9 (auth: none)" >"$WORK/h/net-serve.log"
echo "mine" >"$WORK/h/notes.txt"
sleep 0.05
touch "$WORK/mark"
check "host: --out holding an old net-serve.log: the net tests pass" \
    run_rc 0 "$WORK/h.out" timeout 60 "$TP" validate --only net --out "$WORK/h"
check "... nothing of the earlier run left" test -z "$(stale "$WORK/h" "$WORK/mark")"
check "... the user's own file kept" test "$(cat "$WORK/h/notes.txt")" = mine

# an allocation, twice into the same --out (every node's server log and
# every pair's documents there already)
fleet "$WORK/f" f1
wait "${vpid[0]}"; rc0=$?; wait "${vpid[1]}"; rc1=$?
check "fleet: a first run passes ($rc0 $rc1)" test "$rc0$rc1" = 00
sleep 0.05
touch "$WORK/mark"
fleet "$WORK/f" f2
wait "${vpid[0]}"; rc0=$?; wait "${vpid[1]}"; rc1=$?
check "fleet: a second run into the same --out passes too ($rc0 $rc1)" test "$rc0$rc1" = 00
sed 's/^/# /' "$WORK/f20.out" | grep -E "FAIL|error" | head -5
check "... every pair measured (verdicts: pass 2)" grep_q "verdicts: pass 2" "$WORK/f20.out"
check "... nothing of the first run left" test -z "$(stale "$WORK/f" "$WORK/mark")"

# interrupted: the tests it did not get to leave no earlier document behind
check "a whole run first" run_rc 1 "$WORK/q1.out" timeout 120 "$TP" validate --out "$WORK/q"
for d in sdc plan counters; do
    check "... wrote $d.json" test -f "$WORK/q/$d.json"
done
check "... its report has the sdc document's row" grep -q '<td>sdc</td>' "$WORK/q/report.html"
sleep 0.05
touch "$WORK/mark"
"$TP" validate --out "$WORK/q" >"$WORK/q2.out" 2>&1 &
qpid=$!
PIDS+=("$qpid")
wait_for test "$WORK/q/net-lat.json" -nt "$WORK/mark"
kill -INT "$qpid"
wait "$qpid"; rc=$?
check "a second run, interrupted -> exit 130 (got $rc)" test "$rc" -eq 130
check "... the tests it did not get to: not run" grep_q "not run: interrupted by SIGINT" "$WORK/q2.out"
for d in sdc plan counters; do
    check "... no $d.json of the run before" test ! -e "$WORK/q/$d.json"
done
check "... nothing of the run before left" test -z "$(stale "$WORK/q" "$WORK/mark")"
check "... its report has no sdc document's row" eval "! grep -q '<td>sdc</td>' '$WORK/q/report.html'"

# --- class 6: no secret left behind ---

scratch >"$WORK/scratch.before"
fleet "$WORK/k" k
# its net servers: children of the two validates (timeout's children)
mine() { local v; for v in $(pgrep -P "${vpid[0]}") $(pgrep -P "${vpid[1]}"); do
    pgrep -P "$v" -f "net serve --bind"; done | tr '\n' ' '; }
servers=""
for _ in $(seq 300); do
    servers=$(mine)
    [ "$(echo $servers | wc -w)" -ge 2 ] && break
    sleep 0.1
done
check "killed fleet: both net servers started" test "$(echo $servers | wc -w)" -ge 2
# the key as a server reads it (root may read another process's descriptors)
key=""
for s in $servers; do
    kf=$(tr '\0' '\n' <"/proc/$s/cmdline" | grep -A1 -- --key-file | tail -1)
    key=$(cat "${kf/\/proc\/self\//\/proc\/$s\/}" 2>/dev/null) && [ -n "$key" ] && break
done
check "... the session key read from a server" test "${#key}" -ge 32
kill -9 "${vpid[0]}" "${vpid[1]}" $(pgrep -P "${vpid[0]}") $(pgrep -P "${vpid[1]}") 2>/dev/null
wait "${vpid[0]}" "${vpid[1]}" 2>/dev/null
alive() { local s; for s in $servers; do kill -0 "$s" 2>/dev/null && echo "$s"; done; }
for _ in $(seq 50); do [ -z "$(alive)" ] && break; sleep 0.1; done
check "... SIGKILL: its net servers end with it" test -z "$(alive)"
scratch >"$WORK/scratch.after"
killed=$(comm -13 "$WORK/scratch.before" "$WORK/scratch.after")
check "... its scratch folders ($(echo $killed | wc -w)) hold no net.key" \
    test -z "$(find $killed -name net.key 2>/dev/null)"
check "... the key in no file it could write (scratch, /dev/shm, --out)" \
    test -z "$(grep -rlF -- "$key" $killed /dev/shm "$WORK/k" 2>/dev/null)"
check "the next run passes" run_rc 0 "$WORK/n.out" timeout 60 "$TP" validate --only sdc --out "$WORK/n"
left=""
for d in $killed; do [ -e "$d" ] && left="$left $d"; done
check "... and removed the killed runs' scratch folders ($(echo $killed | wc -w))" test -z "$left"
finish
