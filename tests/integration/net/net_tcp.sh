#!/usr/bin/env bash
# net over kernel TCP on loopback: every test, payload checking, result
# documents valid against the schema, and figures consistent with each other.
. "$(dirname "$0")/../lib.sh"

start_server tcp -- --bind 127.0.0.1 || { not_ok "server starts"; finish; }
ok "server starts on 127.0.0.1 port $PORT"

run_rc 0 "$WORK/lat.out" "$TP" net lat 127.0.0.1 -p "$PORT" --sizes 8,4K,1M --iters 300 --check \
    --json "$WORK/lat.json"
check "lat over tcp with --check exits 0" test $? -eq 0
check "lat document is valid against the schema" valid_doc "$WORK/lat.json"
check "lat measured 3 sizes of 300 iterations" test "$(json_get "$WORK/lat.json" \
    "[e['iterations'] for e in d['results']['sizes']]")" = "[300, 300, 300]"
check "one-way latency is RTT/2 and the histogram holds every iteration" test "$(json_get "$WORK/lat.json" \
    "all(abs(e['latency']['p50']*2 - e['rtt']['p50']) < 1e-6 and e['rtt_histogram']['count'] == e['iterations'] and 0 < e['latency']['min'] <= e['latency']['p50'] <= e['latency']['p99'] <= e['latency']['max'] for e in d['results']['sizes'])")" = True
check "lat table printed with a row per size" test "$(grep -cE '^ +(8|4K|1M) ' "$WORK/lat.out")" -eq 3
check "provenance names the transport and the peer" test "$(json_get "$WORK/lat.json" \
    "d['provenance']['transport']['transport'] + ' ' + d['provenance']['peer']['address'].split(':')[0]")" = "tcp 127.0.0.1"
check "status is ok" test "$(json_get "$WORK/lat.json" "d['status']['code']")" = ok

run_rc 0 "$WORK/bw.out" "$TP" net bw 127.0.0.1 -p "$PORT" --sizes 64K,1M --time 0.3 --check \
    --json "$WORK/bw.json"
check "bw over tcp exits 0" test $? -eq 0
check "bw document is valid" valid_doc "$WORK/bw.json"
check "bw is bytes / time and positive, cpu per GB reported for both ends" test "$(json_get "$WORK/bw.json" \
    "all(e['bw']['value'] > 0 and e['bytes'] == e['messages']*e['size_bytes'] and abs(e['bw']['value'] - e['bytes']/e['duration']['value']) / e['bw']['value'] < 1e-6 and e['cpu']['client']['per_GB']['value'] > 0 and e['cpu']['server']['per_GB']['unit'] == 's/GB' for e in d['results']['sizes'])")" = True

run_rc 0 "$WORK/bibw.out" "$TP" net bibw 127.0.0.1 -p "$PORT" --sizes 256K --iters 400 \
    --json "$WORK/bibw.json"
check "bibw over tcp exits 0" test $? -eq 0
check "bibw document is valid" valid_doc "$WORK/bibw.json"
check "bibw moves both directions" test "$(json_get "$WORK/bibw.json" \
    "e['bytes'] == 2*400*262144 and e['bw_c2s']['value'] > 0 and e['bw_s2c']['value'] > 0 and e['peak_bw_c2s']['value'] > 0 and e['peak_bw_s2c']['value'] > 0")" = True

run_rc 0 "$WORK/loaded.out" "$TP" net loaded 127.0.0.1 -p "$PORT" --streams 2 --load-size 256K \
    --sizes 8 --iters 500 --json "$WORK/loaded.json"
check "loaded over tcp exits 0" test $? -eq 0
check "loaded document is valid" valid_doc "$WORK/loaded.json"
check "loaded reports isolated, loaded and the impact factor" test "$(json_get "$WORK/loaded.json" \
    "len(r['isolated']) == len(r['loaded']) == 1 and r['load']['bytes'] > 0 and r['load']['streams'] == 2 and abs(r['impact_factor'][0]['mean'] - r['loaded'][0]['latency']['mean']/r['isolated'][0]['latency']['mean']) < 1e-9")" = True
check "loaded table prints the impact factor" grep_q "congestion impact factor" "$WORK/loaded.out"

# --json - puts the document on stdout and the table on stderr
"$TP" net lat 127.0.0.1 -p "$PORT" --sizes 64 --iters 50 --json - >"$WORK/stdout.json" 2>"$WORK/stderr.txt"
check "--json - writes a valid document to stdout" valid_doc "$WORK/stdout.json"
check "--json - sends the table to stderr" grep_q "one-way latency" "$WORK/stderr.txt"

# duration-bound run: iterations follow from the warm-up. It measures at
# least as long as asked; how much longer depends on the load: each chunk
# is sized from the rate of the one before it, and other work on the cores
# can slow a chunk tenfold after its rate was taken, so the upper bound
# (10 times the time asked) only catches a count gone wrong (a unit off by
# a thousand), not an overshoot a loaded machine makes.
run_rc 0 "$WORK/dur.out" "$TP" net lat 127.0.0.1 -p "$PORT" --sizes 64 --time 0.2 --json "$WORK/dur.json"
check "duration-bound lat measures as long as asked, in chunks" test "$(json_get "$WORK/dur.json" \
    "e['warmup_iterations'] > 0 and 0.19 < e['duration']['value'] < 2 and e['chunks'] >= 1")" = True
echo "# lat --time 0.2 measured $(json_get "$WORK/dur.json" "e['duration']['value']") s in $(json_get "$WORK/dur.json" "e['chunks']") chunks"
run_rc 0 "$WORK/durbw.out" "$TP" net bw 127.0.0.1 -p "$PORT" --sizes 64K --time 1.2 --json "$WORK/durbw.json"
echo "# bw --time 1.2 measured $(json_get "$WORK/durbw.json" "e['duration']['value']") s in $(json_get "$WORK/durbw.json" "e['chunks']") chunks"
check "duration-bound bw measures as long as asked, with a peak over 1 s (or 0.1 s) windows" test "$(json_get "$WORK/durbw.json" \
    "1.15 < e['duration']['value'] < 12 and e['peak_bw']['window_s'] in (1.0, 0.1) and e['peak_bw']['value'] > 0")" = True

# a request whose buffers would not fit is refused up front, and said so
run_rc 2 "$WORK/huge.out" "$TP" net bw 127.0.0.1 -p "$PORT" --sizes 1G --window 64 --check --iters 1
check "a test needing more than 16 GiB of server buffers is refused (exit 2)" test $? -eq 0
check "... with the size it would need" grep_q "needs 65\.0 GiB of buffers on the server" "$WORK/huge.out"

# --cpu pins the client as taskset would, and the document says where it ran
run_rc 0 "$WORK/cpu.out" "$TP" net lat 127.0.0.1 -p "$PORT" --sizes 64 --iters 50 --cpu 0 --json "$WORK/cpu.json"
check "lat --cpu 0 runs and records its affinity" test "$(json_get "$WORK/cpu.json" "d['config']['cpu'] + ' ' + d['provenance']['process']['affinity']")" = "0 0"

# --busy-poll spins instead of sleeping; the document says what the kernel granted
run_rc 0 "$WORK/busy.out" "$TP" net lat 127.0.0.1 -p "$PORT" --sizes 64,64K --iters 200 --busy-poll \
    --check --json "$WORK/busy.json"
check "lat with --busy-poll" test $? -eq 0
check "... records the polling mode" test "$(json_get "$WORK/busy.json" "'SO_BUSY_POLL' in d['provenance']['transport']['fabric'] and d['config']['busy_poll']")" = True

check "server still alive after all clients" kill -0 "$SPID"

# IPv6 loopback: control channel and both data paths
if ip -6 addr show dev lo 2>/dev/null | grep -q "::1"; then
    start_server v6 -- --bind ::1
    run_rc 0 "$WORK/v6.out" "$TP" net lat ::1 -p "$PORT" --sizes 64 --iters 100 --check --json "$WORK/v6.json"
    check "lat over IPv6 loopback (tcp)" test $? -eq 0
    check "... the peer is [::1]" test "$(json_get "$WORK/v6.json" "d['provenance']['peer']['address']")" = "[::1]:$PORT"
    run_rc 0 "$WORK/v6ofi.out" "$TP" net lat ::1 -p "$PORT" --provider 'tcp;ofi_rxm' --sizes 64 --iters 100 --check
    check "lat over IPv6 loopback (libfabric tcp;ofi_rxm)" test $? -eq 0
fi
finish
