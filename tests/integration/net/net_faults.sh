#!/usr/bin/env bash
# Faults: a server killed mid-test, corrupted payloads, malformed and
# oversized control frames, a client that never speaks. The server must keep
# serving; the client must fail within its deadline, name the peer, exit 1
# and still leave a valid result document.
. "$(dirname "$0")/../lib.sh"

# --- the server dies mid-test (kernel TCP) ---
start_server victim -- --bind 127.0.0.1 || { not_ok "server starts"; finish; }
t0=$(date +%s%N)
"$TP" net lat 127.0.0.1 -p "$PORT" --sizes 64 --time 20 --timeout 3 --json "$WORK/killed.json" \
    >"$WORK/killed.out" 2>&1 &
CL=$!
sleep 1
kill -9 "$SPID"
wait "$SPID" 2>/dev/null
wait $CL
rc=$?
t1=$(date +%s%N)
check "client exits 1 when the server is killed" test $rc -eq 1
check "... within the timeout (< 5 s after start)" test $(((t1 - t0) / 1000000)) -lt 5000
check "... naming the peer" grep_q "127\.0\.0\.1:$PORT" "$WORK/killed.out"
check "... and leaves a valid result document" valid_doc "$WORK/killed.json"
check "... whose status says the peer failed" test "$(json_get "$WORK/killed.json" "d['status']['ok'] == False and d['status']['code'] in ('peer', 'timeout') and d['status']['exit_code'] == 1 and '127.0.0.1' in d['status']['message']")" = True

# --- the server stops answering (SIGSTOP): the deadline fires ---
start_server frozen -- --bind 127.0.0.1
"$TP" net lat 127.0.0.1 -p "$PORT" --sizes 64 --time 20 --timeout 2 >"$WORK/frozen.out" 2>&1 &
CL=$!
sleep 1
kill -STOP "$SPID"
t0=$(date +%s%N)
wait $CL
rc=$?
t1=$(date +%s%N)
kill -CONT "$SPID"
check "client exits 1 when the server hangs" test $rc -eq 1
check "... after about --timeout (< 4 s)" test $(((t1 - t0) / 1000000)) -lt 4000
check "... saying it timed out and naming the peer" grep_q "127\.0\.0\.1:$PORT.*(within|did not answer)|(did not answer|no progress).*127\.0\.0\.1:$PORT" "$WORK/frozen.out"

# --- SIGTERM to a server in the middle of a test: it ends promptly ---
start_server term -- --bind 127.0.0.1
"$TP" net lat 127.0.0.1 -p "$PORT" --sizes 64 --time 20 --timeout 5 >"$WORK/term-client.out" 2>&1 &
CL=$!
wait_log "authenticated" "$WORK/term.log"
sleep 0.5
t0=$(date +%s%N)
kill -TERM "$SPID"
wait "$SPID"
srv_rc=$?
t1=$(date +%s%N)
wait $CL
cl_rc=$?
check "SIGTERM ends a server that is running a test, exit 0" test $srv_rc -eq 0
check "... within 2 s, not after the test's timeout" test $(((t1 - t0) / 1000000)) -lt 2000
check "... saying it abandoned the test" grep_q "abandoning it" "$WORK/term.log"
check "... and its client fails (exit 1)" test $cl_rc -eq 1

# --- a data-path call that never returns (as libfabric's shm provider can,
#     spinning on a lock its killed peer held) is abandoned, not waited for ---
start_server stuckless -- --bind 127.0.0.1
t0=$(date +%s%N)
run_rc 1 "$WORK/stuck.out" env TP_FAULT_STUCK=1 "$TP" net lat 127.0.0.1 -p "$PORT" --sizes 64 \
    --iters 100 --timeout 1 --json "$WORK/stuck.json"
check "a client whose data-path call never returns exits 1" test $? -eq 0
t1=$(date +%s%N)
check "... within timeout + grace (< 6 s)" test $(((t1 - t0) / 1000000)) -lt 6000
check "... saying it abandoned the call and naming the peer" grep_q "127\.0\.0\.1:$PORT.*has not returned" "$WORK/stuck.out"
check "... with a valid document" valid_doc "$WORK/stuck.json"
start_server stuckserver env TP_FAULT_STUCK=1 -- --bind 127.0.0.1
run_rc 1 "$WORK/stuck2.out" "$TP" net lat 127.0.0.1 -p "$PORT" --sizes 64 --iters 100 --timeout 1
check "a client of a server stuck in a data-path call times out (exit 1)" test $? -eq 0
wait_log "abandoned a stuck data-path thread" "$WORK/stuckserver.log"
check "the server abandons its stuck thread" test $? -eq 0
run_rc 0 "$WORK/stuck3.out" "$TP" net lat 127.0.0.1 -p "$PORT" --sizes 64 --iters 100
check "... and serves the next client" test $? -eq 0

# --- corrupted payloads ---
start_server corrupt env TP_FAULT_CORRUPT=1 -- --bind 127.0.0.1
run_rc 1 "$WORK/corrupt.out" "$TP" net lat 127.0.0.1 -p "$PORT" --sizes 4K --iters 10 --check --json "$WORK/corrupt.json"
check "--check fails a run whose payload was corrupted (exit 1)" test $? -eq 0
check "... saying where" grep_q "payload mismatch: 4096-byte message 0, byte 2048" "$WORK/corrupt.out"
check "... status code 'check' in a valid document" test "$(json_get "$WORK/corrupt.json" "d['status']['code']")" = check
run_rc 1 "$WORK/corrupt-bibw.out" "$TP" net bibw 127.0.0.1 -p "$PORT" --sizes 64K --iters 20 --check
check "--check catches corruption in a stream too" grep_q "payload mismatch" "$WORK/corrupt-bibw.out"
run_rc 0 "$WORK/nocheck.out" "$TP" net lat 127.0.0.1 -p "$PORT" --sizes 4K --iters 10
check "without --check the same run passes (the check is what catches it)" test $? -eq 0

# --- malformed control frames: logged, connection closed, server goes on ---
start_server garbage -- --bind 127.0.0.1 --timeout 2
send_raw() { /usr/bin/python3 - "$PORT" "$1" <<'PY'
import socket, struct, sys, time
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=5)
hello = s.recv(65536)                  # the server speaks first
kind = sys.argv[2]
if kind == "magic":
    s.sendall(b"GET / HTTP/1.0\r\n\r\n")
elif kind == "oversize":
    s.sendall(struct.pack(">III", 0x54504331, 2 << 16, 1 << 30))
elif kind == "notjson":
    s.sendall(struct.pack(">III", 0x54504331, 2 << 16, 5) + b"{{{{{")
elif kind == "type":
    s.sendall(struct.pack(">III", 0x54504331, 99 << 16, 2) + b"{}")
try:
    s.settimeout(5)
    while s.recv(65536):
        pass
except OSError:
    pass
PY
}
for kind in magic oversize notjson type; do send_raw $kind; done
check "bad magic is logged" grep_q "bad magic" "$WORK/garbage.log"
check "an oversized frame is logged with its size" grep_q "frame of 1073741824 bytes, over the 65536-byte limit" "$WORK/garbage.log"
check "a payload that is not JSON is logged" grep_q "not a JSON object" "$WORK/garbage.log"
check "an unknown frame type is logged" grep_q "unknown type 99" "$WORK/garbage.log"
run_rc 0 "$WORK/after-garbage.out" "$TP" net lat 127.0.0.1 -p "$PORT" --sizes 64 --iters 20
check "the server still serves a good client afterwards" test $? -eq 0

# --- a client that connects and never speaks holds nobody hostage ---
# The silent client waits for the state it needs instead of racing the end
# of the test before: until the server takes its connection as a handshake
# (answers HELLO, not BUSY: the previous test may still be ending), then it
# stays silent until the server closes it (its --timeout 2 caps the
# handshake). A good client is served meanwhile.
/usr/bin/python3 - "$PORT" >"$WORK/silent.out" 2>&1 <<'PY' &
import socket, struct, sys, time
port = int(sys.argv[1])
end = time.monotonic() + 30
while time.monotonic() < end:
    s = socket.create_connection(("127.0.0.1", port), timeout=10)
    hdr = b""
    while len(hdr) < 12:
        b = s.recv(12 - len(hdr))
        if not b:
            break
        hdr += b
    if len(hdr) == 12 and struct.unpack(">III", hdr)[1] >> 16 == 1:   # HELLO
        print("handshake taken", flush=True)
        t0 = time.monotonic()
        s.settimeout(20)
        try:
            while s.recv(65536):
                pass
        except OSError:
            pass
        print(f"closed by the server after {time.monotonic() - t0:.1f} s", flush=True)
        sys.exit(0)
    s.close()                                   # BUSY: the last test is still ending
    time.sleep(0.1)
print("never taken as a handshake within 30 s", flush=True)
sys.exit(1)
PY
SILENT=$!
wait_log "handshake taken" "$WORK/silent.out"
run_rc 0 "$WORK/after-silent.out" "$TP" net lat 127.0.0.1 -p "$PORT" --sizes 64 --iters 20
check "a client beside a silent one is served" test $? -eq 0
wait $SILENT
check "the silent client is timed out by the server" grep_q "closed by the server" "$WORK/silent.out"
wait_log "did not answer" "$WORK/garbage.log"
check "the silent client's timeout is logged" grep_q "did not answer" "$WORK/garbage.log"
check "the server survived everything" kill -0 "$SPID"
finish
