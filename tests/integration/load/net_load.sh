#!/usr/bin/env bash
# Load on trainpath's servers: 200 connection attempts at once -- the right
# key, a wrong key, random bytes, oversized, malformed and truncated frames,
# connections that never speak -- against `net serve` with a key, `net serve`
# without one on loopback, and the rendezvous of `coll` under the env
# launcher while its real ranks join. Each server must stay up, answer every
# attempt (BUSY, REJECT, or a close) within a deadline, serve the next good
# client, give back its descriptors and memory, and log what happened in a
# bounded number of plain lines. `net serve` hands its one test slot only to
# a client that has authenticated: silent, trickling and late connections
# hold nothing but a handshake of bounded length, among a bounded number.
# The assertions are on outcomes, not speed; the figures (answer times per
# kind) are printed as TAP comments.
. "$(dirname "$0")/../lib.sh"

GEN="$SRC/tests/integration/load/load_gen.py"
head -c 32 /dev/urandom | base64 >"$WORK/good.key"
head -c 32 /dev/urandom | base64 >"$WORK/wrong.key"
# the server's --timeout: a connection that never finishes its handshake is
# dropped after it; the generator waits DEADLINE for every answer
STIMEOUT=1
DEADLINE=8
MIX=good=40,wrong=40,random=40,halfopen=40,oversize=10,badjson=10,truncated=20

# load NAME ARGS...: run the generator (results in $WORK/NAME.json)
load() {
    local name=$1; shift
    timeout 60 /usr/bin/python3 "$GEN" --deadline "$DEADLINE" --json "$WORK/$name.json" "$@" \
        >"$WORK/$name.txt" 2>&1
    local rc=$?
    echo "# load '$name':"; cat "$WORK/$name.txt"
    return $rc
}

# ended NAME 'kind:outcome,outcome kind:...': every connection ended in one
# of the outcomes allowed for its kind, every kind named ran, and the
# generator reports as many connections as it was asked to make
ended() {
    /usr/bin/python3 - "$WORK/$1.json" "$2" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
allowed = dict(spec.split(":") for spec in sys.argv[2].split())
bad = 0
for kind in allowed:
    if kind not in d["kinds"]:
        print("# no connections of kind %s" % kind); bad += 1
for c in d["connections"]:
    if c["outcome"] not in allowed.get(c["kind"], "").split(","):
        bad += 1
        print("# %s connection %d ended '%s' after %.3f s (allowed: %s) %s"
              % (c["kind"], c["i"], c["outcome"], c["t_s"], allowed.get(c["kind"]), c["detail"]))
if len(d["connections"]) != d["asked"]:
    print("# %d connections reported, %d asked" % (len(d["connections"]), d["asked"])); bad += 1
sys.exit(1 if bad else 0)
PY
}

# count NAME KIND OUTCOME: how many connections of KIND ended OUTCOME
count() { json_get "$WORK/$1.json" "d['kinds']['$2']['outcomes'].get('$3', 0)"; }

fds() { ls "/proc/$1/fd" 2>/dev/null | wc -l; }
rss_kb() { awk '/^VmRSS/ {print $2}' "/proc/$1/status"; }
nthreads() { awk '/^Threads/ {print $2}' "/proc/$1/status"; }

# settle PID FDS THREADS: wait up to 10 s until PID holds at most FDS
# descriptors and THREADS threads again (every session over)
settle() {
    for _ in $(seq 100); do
        [ "$(fds "$1")" -le "$2" ] && [ "$(nthreads "$1")" -le "$3" ] && return 0
        sleep 0.1
    done
    echo "# pid $1 still holds $(fds "$1") descriptors (had $2), $(nthreads "$1") threads (had $3)"
    ls -l "/proc/$1/fd" | sed 's/^/#   /'
    return 1
}

# plain LOG: every line is one of ours and printable (no bytes of a peer's
# making -- escape sequences, forged newlines -- pass through)
plain() {
    if LC_ALL=C grep -qvE '^trainpath: (info|warn|error): [[:print:]]*$' "$1"; then
        echo "# lines of $1 that are not plain log lines:"
        LC_ALL=C grep -nvE '^trainpath: (info|warn|error): [[:print:]]*$' "$1" | cat -A | head -5 |
            sed 's/^/#   /'
        return 1
    fi
}

not() { ! "$@"; } # not CMD...: true when CMD fails
# gone PID: true once PID has ended, within 5 s; a server still up is killed
gone() {
    for _ in $(seq 50); do kill -0 "$1" 2>/dev/null || return 0; sleep 0.1; done
    kill -9 "$1"
    return 1
}

lat() { "$TP" net lat 127.0.0.1 -p "$PORT" --sizes 64 --iters 20 --timeout 5 "$@"; }

# ---------- net serve with a key ----------
# a small quarantine keeps a sanitizer build's freed memory out of the
# resident-size figure (no effect on a plain build)
export ASAN_OPTIONS="${ASAN_OPTIONS:-}:quarantine_size_mb=8"
start_server keyed -- --bind 127.0.0.1 --key-file "$WORK/good.key" --timeout "${STIMEOUT}s" ||
    { not_ok "keyed server starts"; finish; }
LOG="$WORK/keyed.log"
run_rc 0 "$WORK/warm.out" lat --key-file "$WORK/good.key"
check "keyed server: a good client is served before the load" test $? -eq 0
# the first test started the tcp transport's watchdog thread, which lives
# as long as the process: the baseline is taken after it
sleep 0.5
fd0=$(fds "$SPID"); th0=$(nthreads "$SPID"); rss0=$(rss_kb "$SPID"); lines0=$(wc -l <"$LOG")
echo "# keyed server before the load: $fd0 fds, $th0 threads, VmRSS $rss0 KiB"

KEYS=(--port "$PORT" --key-file "$WORK/good.key" --wrong-key-file "$WORK/wrong.key")
ALLOWED_KEYED="good:served,busy wrong:reject,busy random:closed,busy oversize:closed,busy
    badjson:closed,busy truncated:closed,busy halfopen:closed,busy"

load burst "${KEYS[@]}" --mix "$MIX"
check "200 attempts at once: the generator ran" test $? -eq 0
d="... every attempt answered within ${DEADLINE} s: served or BUSY (good key),"
check "$d REJECT or BUSY (wrong key), closed or BUSY (the rest)" ended burst "$ALLOWED_KEYED"
check "... the server is still up" kill -0 "$SPID"
run_rc 0 "$WORK/after-burst.out" lat --key-file "$WORK/good.key"
check "... and serves the next good client (net lat exits 0)" test $? -eq 0

# the same mix spread over 2 s, so that each kind also meets an idle server,
# a busy one and one that has just been freed
load wave "${KEYS[@]}" --mix "$MIX" --stagger 2
check "200 attempts over 2 s: every attempt answered within ${DEADLINE} s as above" \
    ended wave "$ALLOWED_KEYED"
run_rc 0 "$WORK/after-wave.out" lat --key-file "$WORK/good.key"
check "... and the next good client is served" test $? -eq 0

# no silent clients: handshakes take milliseconds, so the server is mostly
# idle and each kind reaches its own verdict (not only BUSY)
load quick "${KEYS[@]}" --mix good=40,wrong=40,nokey=40,random=30,oversize=20,badjson=30 \
    --stagger 1
check "200 attempts without silent ones: every attempt answered" ended quick \
    "good:served,busy wrong:reject,busy nokey:reject,busy random:closed,busy oversize:closed,busy
     badjson:closed,busy"
served=$(count quick good served); rejected=$(count quick wrong reject)
keyless=$(count quick nokey reject); closed=$(count quick badjson closed)
d="... good keys served ($served), wrong keys rejected ($rejected), keyless clients"
check "$d rejected ($keyless), bad frames closed ($closed): at least one each" \
    test "$served" -ge 1 -a "$rejected" -ge 1 -a "$keyless" -ge 1 -a "$closed" -ge 1
check "... the server logs the rejections naming the client" \
    grep_q "client 127\.0\.0\.1:[0-9]+ rejected: wrong key" "$LOG"
check "... and the malformed frames" \
    grep_q "peer 127\.0\.0\.1:[0-9]+ sent a frame that is not a JSON object" "$LOG"

# a third round while a real test runs: the test is not disturbed, and what
# the server holds afterwards must not grow with rounds
auths=$(grep -c authenticated "$LOG")
"$TP" net lat 127.0.0.1 -p "$PORT" --sizes 64 --time 3s --timeout 5 --key-file "$WORK/good.key" \
    >"$WORK/running.out" 2>&1 &
RUNNING=$!
wait_log "authenticated" "$LOG" $((auths + 1))
load again "${KEYS[@]}" --mix "$MIX"
check "a third round of 200 at once: every attempt answered" ended again "$ALLOWED_KEYED"
wait "$RUNNING"
running_rc=$?
[ $running_rc -eq 0 ] || sed 's/^/#   /' "$WORK/running.out"
check "... a test running through it finishes normally (exit 0)" test $running_rc -eq 0
run_rc 0 "$WORK/after-again.out" lat --key-file "$WORK/good.key"
check "... and the next good client is served" test $? -eq 0
settle "$SPID" "$fd0" "$th0"
settled=$?
d="after 800 attempts the server holds its $fd0 descriptors and $th0 threads again"
check "$d (now $(fds "$SPID"), $(nthreads "$SPID"))" test $settled -eq 0
rss1=$(rss_kb "$SPID")
echo "# keyed server after the load: $(fds "$SPID") fds, VmRSS $rss1 KiB (+$((rss1 - rss0)) KiB)"
check "... and its resident memory grew by less than 16 MiB ($((rss1 - rss0)) KiB)" \
    test $((rss1 - rss0)) -lt 16384
# the log since the load began: BUSY answers at most two lines a second (one
# naming a peer, one counting the rest), everything else at most three lines
# per handshake (connected, then authenticated and finished, or why not)
tail -n +$((lines0 + 1)) "$LOG" >"$WORK/load.log"
busy_lines=$(grep -c "busy" "$WORK/load.log")
other_lines=$(grep -vc "busy" "$WORK/load.log")
read -r handshakes wall_s < <(/usr/bin/python3 -c "import json, sys
ds = [json.load(open(f)) for f in sys.argv[1:]]
print(sum(c['outcome'] != 'busy' for d in ds for c in d['connections']),
      int(sum(d['wall_s'] for d in ds)) + 1)" "$WORK"/{burst,wave,quick,again}.json)
echo "# log: $((busy_lines + other_lines)) lines for 800 attempts over about $wall_s s of load:" \
    "$busy_lines about BUSY answers, $other_lines for $handshakes handshakes (and 4 net lat runs)"
check "the log is bounded: $busy_lines lines for the BUSY answers (at most 2 a second)" \
    test "$busy_lines" -le $((2 * (wall_s + 4)))
check "... and $other_lines for $handshakes handshakes and 4 good clients (at most 3 each)" \
    test "$other_lines" -le $((3 * (handshakes + 4)))
check "... summarises the BUSY answers in counts" grep_q "answered [0-9]+ more client\(s\) busy" "$LOG"
check "... and every line is plain text of the server's own (no peer bytes)" plain "$LOG"

# ---------- a connection holds the test slot only once authenticated ----------
# a handshake has min(--timeout, 5 s) in all and takes the one test slot only
# when it succeeds: silent connections against an idle server (--timeout 20 s
# here) keep nobody from being served beside them, and are dropped after
# 5 s, not 20
start_server silent -- --bind 127.0.0.1 --key-file "$WORK/good.key" --timeout 20s ||
    { not_ok "a server with --timeout 20s starts"; finish; }
LOG="$WORK/silent.log"
# silent NAME N: N connections that never speak, in the background (GEN_PID)
silent() {
    timeout 60 /usr/bin/python3 "$GEN" --port "$PORT" --deadline 12 --mix "halfopen=$2" \
        --json "$WORK/$1.json" >"$WORK/$1.txt" 2>&1 &
    GEN_PID=$!
}
conns=$(grep -c "connected" "$LOG")
silent silent 8
wait_log "connected" "$LOG" $((conns + 8)) # all 8 accepted, in their handshakes
run_rc 0 "$WORK/beside-silent.out" lat --key-file "$WORK/good.key"
check "8 silent connections to an idle server: a good client is served beside them (exit 0)" \
    test $? -eq 0
check "... while they are still open" kill -0 "$GEN_PID"
wait "$GEN_PID"
echo "# load 'silent':"; cat "$WORK/silent.txt"
check "... which are dropped at the handshake deadline (5 s), not after --timeout (20 s)" \
    ended silent "halfopen:closed"

# a client that authenticates while another test starts is answered BUSY
# after WELCOME: its bytes reach the server through a proxy that holds them
# 2.5 s, and meanwhile another client starts a test
delay_proxy() { # delay_proxy PORTFILE TARGET-PORT DELAY-S: one connection
    /usr/bin/python3 - "$@" <<'PY'
import asyncio, sys
async def main():
    done = asyncio.Event()
    async def pipe(r, w, delay):
        try:
            while (b := await r.read(65536)):
                await asyncio.sleep(delay)
                w.write(b)
                await w.drain()
        except OSError:
            pass
        w.close()
    async def handle(cr, cw):
        sr, sw = await asyncio.open_connection("127.0.0.1", int(sys.argv[2]))
        await asyncio.gather(pipe(cr, sw, float(sys.argv[3])), pipe(sr, cw, 0))
        done.set()
    srv = await asyncio.start_server(handle, "127.0.0.1", 0)
    with open(sys.argv[1], "w") as f:
        f.write(str(srv.sockets[0].getsockname()[1]))
    await asyncio.wait_for(done.wait(), 30)
asyncio.run(main())
PY
}
delay_proxy "$WORK/proxy.port" "$PORT" 2.5 &
PROXY=$!
for _ in $(seq 100); do [ -s "$WORK/proxy.port" ] && break; sleep 0.1; done
conns=$(grep -c "connected" "$LOG")
"$TP" net lat 127.0.0.1 -p "$(cat "$WORK/proxy.port")" --sizes 64 --iters 20 --timeout 10 \
    --key-file "$WORK/good.key" >"$WORK/late.out" 2>&1 &
LATE=$!
wait_log "connected" "$LOG" $((conns + 1)) # its handshake has begun
"$TP" net lat 127.0.0.1 -p "$PORT" --sizes 64 --time 4s --timeout 10 --key-file "$WORK/good.key" \
    >"$WORK/first.out" 2>&1 &
FIRST=$!
wait "$LATE"; late_rc=$?
wait "$FIRST"; first_rc=$?
wait "$PROXY"
[ $late_rc -eq 1 ] || sed 's/^/#   late: /' "$WORK/late.out"
check "a client that authenticates while another test starts exits 1 ($late_rc)" \
    test $late_rc -eq 1
check "... saying the server is busy" grep_q "is busy running another test" "$WORK/late.out"
check "... the server logs why" grep_q "busy, another test started while it authenticated" "$LOG"
[ $first_rc -eq 0 ] || sed 's/^/#   first: /' "$WORK/first.out"
check "... and the test that started runs to its end (exit 0)" test $first_rc -eq 0

# SIGINT while handshakes are open and no test runs: the server cuts them,
# ends their threads and exits 0, with no test to abandon
conns=$(grep -c "connected" "$LOG")
silent sigint 8
wait_log "connected" "$LOG" $((conns + 8))
kill -INT "$SPID"
check "SIGINT with 8 handshakes open: the server ends within 5 s" gone "$SPID"
wait "$SPID"
check "... exit 0" test $? -eq 0
check "... saying it shuts down" grep_q "server on port [0-9]+ shutting down" "$LOG"
check "... with no test to abandon" not grep -q "abandoning" "$LOG"
wait "$GEN_PID"
check "... the silent connections are closed" ended sigint "halfopen:closed"
check "... its log is plain text" plain "$LOG"

# --one-off: one test, then exit; handshakes still open are cut, not waited for
start_server oneoff -- --bind 127.0.0.1 --key-file "$WORK/good.key" --timeout 20s --one-off ||
    { not_ok "a --one-off server starts"; finish; }
silent oneoff 3
wait_log "connected" "$WORK/oneoff.log" 3
run_rc 0 "$WORK/oneoff.out" lat --key-file "$WORK/good.key"
check "--one-off, 3 silent connections open: a good client is served (exit 0)" test $? -eq 0
check "... then the server ends within 5 s, not waiting for them" gone "$SPID"
wait "$SPID"
check "... exit 0" test $? -eq 0
wait "$GEN_PID"
check "... the silent connections are closed" ended oneoff "halfopen:closed"

# the handshakes are bounded: of 80 silent connections at once, 65 at most
# get a thread (64 handshakes and a test); the others are answered BUSY at
# once and the log says why; afterwards every thread has ended
start_server bounded -- --bind 127.0.0.1 --key-file "$WORK/good.key" --timeout 2s ||
    { not_ok "a server with --timeout 2s starts"; finish; }
run_rc 0 "$WORK/before-bounded.out" lat --key-file "$WORK/good.key"
check "a server with --timeout 2s serves a good client" test $? -eq 0
sleep 0.5 # as above: the baseline after the tcp transport's watchdog thread started
fd0=$(fds "$SPID"); th0=$(nthreads "$SPID")
load bounded --port "$PORT" --mix halfopen=80
check "80 silent connections at once: each closed or answered BUSY within ${DEADLINE} s" \
    ended bounded "halfopen:closed,busy"
busy=$(count bounded halfopen busy)
check "... 15 or more answered BUSY at once ($busy)" test "$busy" -ge 15
check "... the log says why" grep_q "busy, too many clients are authenticating at once" \
    "$WORK/bounded.log"
run_rc 0 "$WORK/after-bounded.out" lat --key-file "$WORK/good.key"
check "... and the next good client is served" test $? -eq 0
settle "$SPID" "$fd0" "$th0"
check "... the server holds its $fd0 descriptors and $th0 threads again" test $? -eq 0

# the deadline is on the whole handshake, not on each read: a client that
# trickles its AUTH frame a byte every 0.5 s (each read makes progress) is
# cut 2 s after it connected, not after the 50 s the trickle would take
trickle() {
    /usr/bin/python3 - "$PORT" "$DEADLINE" <<'PY'
import socket, struct, sys, time
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=5)
t0 = time.monotonic()
s.recv(65536)  # HELLO
frame = struct.pack(">III", 0x54504331, 2 << 16, 88) + b" " * 88
try:
    for b in frame:
        if time.monotonic() - t0 > float(sys.argv[2]):
            sys.exit("# still connected after %s s" % sys.argv[2])
        s.send(bytes([b]))
        time.sleep(0.5)
except OSError:
    pass  # the server closed the connection
PY
}
trickle
check "a client that trickles its handshake is cut within ${DEADLINE} s" test $? -eq 0
check "... and the log says so" grep_q "did not answer with a whole handshake within 2\.0 s" \
    "$WORK/bounded.log"

# ---------- net serve without a key, on loopback ----------
start_server open -- --bind 127.0.0.1 --timeout "${STIMEOUT}s" ||
    { not_ok "open server starts"; finish; }
load open --port "$PORT" --mix nokey=40,random=40,halfopen=40,oversize=20,badjson=20,truncated=40
check "keyless server, 200 attempts at once: every attempt answered within ${DEADLINE} s" \
    ended open "nokey:served,busy random:closed,busy halfopen:closed,busy oversize:closed,busy
        badjson:closed,busy truncated:closed,busy"
run_rc 0 "$WORK/after-open.out" lat
check "... the server is up and serves the next client" test $? -eq 0
check "... its log is plain text" plain "$WORK/open.log"

# ---------- the rendezvous of coll under the env launcher ----------
# strangers (wrong key, garbage, silent, half a frame) connect to MASTER_PORT
# first; the real ranks join while they hang on. Rank 0 handshakes each
# connection on its own, so the job starts and the strangers are turned away.
port=$(free_port)
rendezvous() { # rendezvous NAME WORLD KEYFILE-OF-RANK-1 [GENERATOR ARGS...]
    local name=$1 world=$2 key1=$3; shift 3
    local genpid="" pids=() r key
    rm -f "$WORK/$name.flag"
    export MASTER_ADDR=127.0.0.1 MASTER_PORT=$port WORLD_SIZE=$world
    RANK=0 timeout 60 "$TP" coll --key-file "$WORK/good.key" --sizes 8,64K --iters 3 --timeout 5s \
        --json "$WORK/$name.doc.json" >"$WORK/$name.0.out" 2>&1 &
    pids+=($!)
    if [ $# -gt 0 ]; then
        timeout 60 /usr/bin/python3 "$GEN" --port "$port" --deadline "$DEADLINE" --retry-refused \
            --no-end-session --connected-file "$WORK/$name.flag" --json "$WORK/$name.json" "$@" \
            >"$WORK/$name.txt" 2>&1 &
        genpid=$!
        for _ in $(seq 100); do [ -e "$WORK/$name.flag" ] && break; sleep 0.1; done
    fi
    for r in $(seq 1 $((world - 1))); do
        key=$WORK/good.key; [ "$r" -eq 1 ] && key=$key1
        RANK=$r timeout 60 "$TP" coll --key-file "$key" --sizes 8,64K --iters 3 --timeout 5s \
            >"$WORK/$name.$r.out" 2>&1 &
        pids+=($!)
    done
    RCS=""
    for p in "${pids[@]}"; do wait "$p"; RCS="$RCS$?"; done
    if [ -n "$genpid" ]; then
        wait "$genpid"
        echo "# load '$name':"; cat "$WORK/$name.txt"
    fi
    unset MASTER_ADDR MASTER_PORT WORLD_SIZE
    port=$(free_port)
}

rendezvous boot 3 "$WORK/good.key" \
    --mix wrong=40,random=40,halfopen=80,oversize=10,badjson=10,truncated=20
check "rendezvous with 200 strangers at MASTER_PORT: the 3 real ranks all exit 0 ($RCS)" \
    test "$RCS" = 000
check "... rank 0 wrote the document: 3 ranks, 0 wrong" test "$(json_get "$WORK/boot.doc.json" \
    "d['config']['ranks'], sum(x['wrong'] for x in r['sizes'])")" = "3 0"
d="... every stranger turned away within ${DEADLINE} s: REJECT or closed for a wrong key,"
check "$d closed for the rest" ended boot "wrong:reject,closed random:closed halfopen:closed
        oversize:closed badjson:closed truncated:closed"
turned='rank 0 turned away 200 connection\(s\) that did not join as ranks: (peer|client) 127\.0\.0\.1:'
check "... rank 0 says so in one line naming a peer" \
    test "$(grep -cE "$turned[0-9]+" "$WORK/boot.0.out")" -eq 1
check "... and its log lines (which quote the strangers' errors) are plain text" \
    plain <(grep '^trainpath:' "$WORK/boot.0.out")

# a rank started with the wrong key is not a stranger to ignore quietly: the
# job fails within the timeout, rank 0 naming the peer and why
rendezvous badrank 2 "$WORK/wrong.key"
check "a rank with the wrong key: both ranks exit 1 ($RCS)" test "$RCS" = 11
check "... rank 0 names the rank that did not join and the peer it turned away" grep_q \
    "rank\(s\) 1 did not join rank 0 .*turned away 1 connection\(s\) .*client 127\.0\.0\.1:[0-9]+ rejected: wrong key" \
    "$WORK/badrank.0.out"
check "... rank 1 is told it was rejected" grep_q "rejected us: wrong key" "$WORK/badrank.1.out"
finish
