#!/usr/bin/env bash
# net over libfabric on loopback: the shm and tcp;ofi_rxm providers, two-sided
# messages and one-sided RMA writes with remote CQ data, payload checking,
# and a dead peer on a provider that cannot see a socket close.
. "$(dirname "$0")/../lib.sh"

start_server ofi -- --bind 127.0.0.1 || { not_ok "server starts"; finish; }
for prov in shm 'tcp;ofi_rxm'; do
    tag=${prov%%;*}
    for mode in msg rma; do
        extra=()
        [ $mode = rma ] && extra=(--rma)
        run_rc 0 "$WORK/lat-$tag-$mode.out" "$TP" net lat 127.0.0.1 -p "$PORT" --provider "$prov" \
            "${extra[@]}" --sizes 8,4K,1M --iters 200 --check --json "$WORK/lat-$tag-$mode.json"
        check "lat over ofi $prov ($mode) with --check" test $? -eq 0
        run_rc 0 "$WORK/bw-$tag-$mode.out" "$TP" net bw 127.0.0.1 -p "$PORT" --provider "$prov" \
            "${extra[@]}" --sizes 64,1M --iters 300 --window 16 --check --json "$WORK/bw-$tag-$mode.json"
        check "bw over ofi $prov ($mode) with --check" test $? -eq 0
        check "documents for $prov ($mode) are valid" valid_doc "$WORK/lat-$tag-$mode.json" "$WORK/bw-$tag-$mode.json"
        want_rma=False
        [ $mode = rma ] && want_rma=True
        check "provenance names provider $prov, mode $mode, rma $want_rma" test "$(json_get "$WORK/lat-$tag-$mode.json" \
            "d['provenance']['transport']['provider'] + ' ' + d['config']['mode'] + ' ' + str(d['provenance']['transport']['rma'])")" \
            = "$prov $mode $want_rma"
    done
    run_rc 0 "$WORK/bibw-$tag.out" "$TP" net bibw 127.0.0.1 -p "$PORT" --provider "$prov" \
        --sizes 64K --iters 200 --check --json "$WORK/bibw-$tag.json"
    check "bibw over ofi $prov" test $? -eq 0
    run_rc 0 "$WORK/loaded-$tag.out" "$TP" net loaded 127.0.0.1 -p "$PORT" --provider "$prov" \
        --streams 2 --load-size 64K --sizes 8 --iters 300 --json "$WORK/loaded-$tag.json"
    check "loaded over ofi $prov" test $? -eq 0
    check "bibw and loaded documents for $prov are valid" valid_doc "$WORK/bibw-$tag.json" "$WORK/loaded-$tag.json"
done

# a dead peer on shm: no socket to close, so the deadline must catch it
start_server victim -- --bind 127.0.0.1
t0=$(date +%s%N)
"$TP" net lat 127.0.0.1 -p "$PORT" --provider shm --sizes 64 --time 20 --timeout 2 \
    --json "$WORK/dead.json" >"$WORK/dead.out" 2>&1 &
CL=$!
sleep 1
kill -9 "$SPID"
wait "$SPID" 2>/dev/null
wait $CL
rc=$?
t1=$(date +%s%N)
check "client over shm exits 1 when the server dies" test $rc -eq 1
# 1 s before the kill, the 2 s deadline, and room for a loaded machine
check "... within the timeout (< 10 s)" test $(((t1 - t0) / 1000000)) -lt 10000
check "... naming the peer" grep_q "127\.0\.0\.1:$PORT" "$WORK/dead.out"
check "... and leaves a valid failed document" valid_doc "$WORK/dead.json"
finish
