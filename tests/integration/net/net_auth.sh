#!/usr/bin/env bash
# Control-channel security: pre-shared key both ways, rejection of wrong or
# missing keys while the server keeps serving, the non-loopback rule, and
# iperf3's one-test-at-a-time "busy" answer.
. "$(dirname "$0")/../lib.sh"

head -c 32 /dev/urandom | base64 >"$WORK/good.key"
head -c 32 /dev/urandom | base64 >"$WORK/wrong.key"
echo "short" >"$WORK/short.key"

start_server keyed -- --bind 127.0.0.1 --key-file "$WORK/good.key" || { not_ok "keyed server starts"; finish; }
ok "keyed server starts"
LOG="$WORK/keyed.log"
lat() { "$TP" net lat 127.0.0.1 -p "$PORT" --sizes 64 --iters 20 --timeout 5 "$@"; }

run_rc 1 "$WORK/nokey.out" lat
check "a client without a key is rejected (exit 1)" test $? -eq 0
check "... and told the server requires a key" grep_q "requires a key" "$WORK/nokey.out"

run_rc 1 "$WORK/wrong.out" lat --key-file "$WORK/wrong.key"
check "a client with a wrong key is rejected (exit 1)" test $? -eq 0
check "... and told why" grep_q "rejected us: wrong key" "$WORK/wrong.out"
check "the server logs the rejection naming the client" grep_q "client 127\.0\.0\.1:[0-9]+ rejected: wrong key" "$LOG"

run_rc 0 "$WORK/good.out" lat --key-file "$WORK/good.key" --json "$WORK/good.json"
check "the next client with the right key is served" test $? -eq 0
check "the document records that the channel was authenticated" test "$(json_get "$WORK/good.json" "d['config']['authenticated']")" = True

# one test at a time: a second client gets "busy" at once, the first finishes
lat --key-file "$WORK/good.key" --iters 1 --sizes 64 >/dev/null 2>&1 # warm
"$TP" net lat 127.0.0.1 -p "$PORT" --sizes 8 --time 2 --key-file "$WORK/good.key" >"$WORK/long.out" 2>&1 &
LONG=$!
wait_log "authenticated" "$LOG" 3   # the long client is in its test
sleep 0.3
t0=$(date +%s%N)
run_rc 1 "$WORK/busy.out" lat --key-file "$WORK/good.key"
busy_rc=$?
t1=$(date +%s%N)
check "a second client while a test runs is answered busy (exit 1)" test $busy_rc -eq 0
check "... with a message that says busy" grep_q "is busy running another test" "$WORK/busy.out"
check "... at once, not after a timeout (< 2 s)" test $(((t1 - t0) / 1000000)) -lt 2000
wait $LONG; long_rc=$?; sed "s/^/#   long: /" "$WORK/long.out"
check "the first client finishes normally" test $long_rc -eq 0
run_rc 0 "$WORK/after.out" lat --key-file "$WORK/good.key"
check "the server serves again after the busy answer" test $? -eq 0

# a keyed client refuses a server that cannot prove the key
start_server open -- --bind 127.0.0.1 || not_ok "open server starts"
run_rc 1 "$WORK/unauth.out" "$TP" net lat 127.0.0.1 -p "$PORT" --sizes 64 --iters 5 --key-file "$WORK/good.key"
check "a client with a key refuses a server without one" test $? -eq 0
check "... naming the reason" grep_q "does not authenticate" "$WORK/unauth.out"

# non-loopback bind needs a key or --insecure
run_rc 2 "$WORK/refuse.out" timeout 5 "$TP" net serve --bind 0.0.0.0 --port 0
check "serving on 0.0.0.0 without a key is refused (exit 2)" test $? -eq 0
check "... with a message that says how to fix it" grep_q "refusing to serve on 0.0.0.0 without a key.*--insecure" "$WORK/refuse.out"
start_server insecure -- --bind 0.0.0.0 --insecure
check "--insecure allows it" test -n "$PORT"
start_server keyany -- --bind 0.0.0.0 --key-file "$WORK/good.key"
check "a key allows it" test -n "$PORT"

run_rc 2 "$WORK/short.out" "$TP" net serve --bind 127.0.0.1 --port 0 --key-file "$WORK/short.key"
check "a short key file is refused (exit 2) naming the file" grep_q "short.key: key is 5 bytes" "$WORK/short.out"
finish
