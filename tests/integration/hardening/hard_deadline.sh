#!/usr/bin/env bash
# Class 1 of docs/reliability.md's adversarial findings: a deadline bounds a
# whole exchange, not one read. A peer that trickles is as late as a silent
# one; the server's own --timeout bounds every session whatever the client
# asks for; an injected delay cannot outlast the run's --timeout.
. "$(dirname "$0")/../lib.sh"
FAKE="$SRC/tests/integration/hardening/fakepeer.py"

elapsed() { echo $(( ($(date +%s%N) - $1) / 1000000 )); }  # ms since $1 (ns)

# 1. client side: a server that trickles its HELLO (one byte every 0.2 s,
# about 20 s for the frame) holds `net lat --timeout 2s` for 2 s, not 20
/usr/bin/python3 "$FAKE" trickle-server "$WORK/trickle.port" 0.2 &
PIDS+=($!)
for _ in $(seq 50); do [ -s "$WORK/trickle.port" ] && break; sleep 0.1; done
tport=$(cat "$WORK/trickle.port")
t0=$(date +%s%N)
run_rc 1 "$WORK/trickle.out" timeout 30 "$TP" net lat 127.0.0.1 --port "$tport" --timeout 2s \
    --iters 10 --json "$WORK/trickle.json"
check "a trickling HELLO: exit 1" test $? -eq 0
ms=$(elapsed "$t0")
check "... within the 2 s deadline (took $ms ms; the frame alone takes 20 s)" test "$ms" -lt 4500
check "... naming the peer and the deadline" grep_q "127\.0\.0\.1:$tport.*(deadline|within)" "$WORK/trickle.out"
check "... a valid failed document, reason timeout" \
    test "$(json_get "$WORK/trickle.json" "d['status']['code']")" = timeout
check "... that the schema accepts" valid_doc "$WORK/trickle.json"

# 2. server side: a client that authenticates, asks for an hour of timeout
# in its REQUEST and goes silent holds the test slot for the server's
# --timeout (2 s), then a real client is served
start_server silent -- --bind 127.0.0.1 --timeout 2s || exit 1
/usr/bin/python3 "$FAKE" silent-client "$PORT" >"$WORK/silent.out" 2>&1 &
FPID=$!
PIDS+=("$FPID")
wait_log "client .* authenticated" "$WORK/silent.log" >/dev/null
t0=$(date +%s%N)
wait "$FPID"
ms=$(elapsed "$t0")
check "a silent client after REQUEST is dropped by the server's --timeout (took $ms ms)" \
    test "$ms" -lt 4500
check "... after the server accepted its REQUEST" grep_q "^accepted; closed" "$WORK/silent.out"
check "... the server logs why" grep_q "client .*(did not answer|within)" "$WORK/silent.log"
run_rc 0 "$WORK/after.out" timeout 30 "$TP" net lat 127.0.0.1 --port "$PORT" --iters 20 --sizes 64
check "... and serves the next client" test $? -eq 0

# 3. the same for a client that trickles its AUTH inside the handshake
t0=$(date +%s%N)
/usr/bin/python3 "$FAKE" trickle-client "$PORT" 0.2 >"$WORK/tclient.out" 2>&1
ms=$(elapsed "$t0")
check "a trickling AUTH is cut within the handshake deadline (took $ms ms)" test "$ms" -lt 4500

# 4. an injected delay longer than --timeout would hold every other rank
# until it runs out: refused before the ranks start
run_rc 2 "$WORK/delay.out" timeout 30 "$TP" coll -n 2 --sizes 1K --iters 2 \
    --inject-delay 1h --timeout 2s --json "$WORK/delay.json"
check "coll --inject-delay 1h --timeout 2s: exit 2" test $? -eq 0
check "... naming both options" grep_q "\-\-inject-delay.*--timeout" "$WORK/delay.out"
check "... with a failed document" \
    test "$(json_get "$WORK/delay.json" "d['status']['code']")" = usage
finish
