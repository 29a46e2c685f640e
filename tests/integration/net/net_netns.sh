#!/usr/bin/env bash
# Two hosts in network namespaces joined by a veth pair, so the bytes cross
# a real interface: kernel TCP and libfabric's tcp provider, a key on a
# non-loopback address, the interface counters confirming the traffic, and a
# TBF-shaped link whose rate the bandwidth test must find.
. "$(dirname "$0")/../lib.sh"

[ "$(id -u)" -eq 0 ] || skip_all "network namespaces need root"
command -v ip >/dev/null || skip_all "iproute2 missing"
A=tpa$$ B=tpb$$ VA=tva$$ VB=tvb$$
ip netns add $A 2>/dev/null && NETNS+=($A) || skip_all "cannot create network namespaces here"
ip netns add $B && NETNS+=($B)
ip link add $VA netns $A type veth peer name $VB netns $B || { not_ok "veth pair"; finish; }
ip -n $A addr add 10.231.7.1/24 dev $VA && ip -n $A link set $VA up && ip -n $A link set lo up
ip -n $B addr add 10.231.7.2/24 dev $VB && ip -n $B link set $VB up && ip -n $B link set lo up
ok "namespaces $A and $B joined by $VA <-> $VB"
head -c 32 /dev/urandom | base64 >"$WORK/key"
inB() { ip netns exec $B "$@"; }
txb() { cat /sys/class/net/$VB/statistics/tx_bytes 2>/dev/null || ip netns exec $B cat /sys/class/net/$VB/statistics/tx_bytes; }

start_server nsA ip netns exec $A -- --bind 10.231.7.1 --key-file "$WORK/key" || { not_ok "server in $A"; finish; }
ok "server in $A on 10.231.7.1 port $PORT with a key"

before=$(inB cat /sys/class/net/$VB/statistics/tx_bytes)
run_rc 0 "$WORK/lat.out" inB "$TP" net lat 10.231.7.1 -p "$PORT" --key-file "$WORK/key" \
    --sizes 64,64K --iters 200 --check --json "$WORK/lat.json"
check "lat over tcp across the veth pair" test $? -eq 0
run_rc 0 "$WORK/bw.out" inB "$TP" net bw 10.231.7.1 -p "$PORT" --key-file "$WORK/key" \
    --sizes 1M --iters 100 --check --json "$WORK/bw.json"
check "bw over tcp across the veth pair" test $? -eq 0
after=$(inB cat /sys/class/net/$VB/statistics/tx_bytes)
check "the interface counted at least the 100 MiB + lat payload sent ($((after - before)) bytes)" \
    test $((after - before)) -ge $((100 * 1048576 + 200 * 65600))
check "documents are valid" valid_doc "$WORK/lat.json" "$WORK/bw.json"
check "provenance lists the veth interface with its driver and MTU" test "$(json_get "$WORK/lat.json" \
    "[(n['driver'], n['mtu']) for n in d['provenance']['nics'] if n['name'] == '$VB']")" = "[('veth', 1500)]"
check "the peer is the server in the other namespace" test "$(json_get "$WORK/lat.json" "d['provenance']['peer']['address']")" = "10.231.7.1:$PORT"

before=$(inB cat /sys/class/net/$VB/statistics/tx_bytes)
run_rc 0 "$WORK/ofi.out" inB "$TP" net lat 10.231.7.1 -p "$PORT" --key-file "$WORK/key" \
    --provider 'tcp;ofi_rxm' --sizes 64,64K --iters 200 --check --json "$WORK/ofi.json"
check "lat over libfabric tcp;ofi_rxm across the veth pair" test $? -eq 0
run_rc 0 "$WORK/ofibw.out" inB "$TP" net bw 10.231.7.1 -p "$PORT" --key-file "$WORK/key" \
    --provider 'tcp;ofi_rxm' --sizes 1M --iters 50 --check
check "bw over libfabric tcp;ofi_rxm across the veth pair" test $? -eq 0
after=$(inB cat /sys/class/net/$VB/statistics/tx_bytes)
check "libfabric's bytes crossed the interface too ($((after - before)) bytes)" \
    test $((after - before)) -ge $((50 * 1048576))
check "provenance names the provider and its domain" test "$(json_get "$WORK/ofi.json" \
    "d['provenance']['transport']['provider'] + ' ' + d['provenance']['transport']['domain']")" = "tcp;ofi_rxm $VB"

# shape the link to 200 Mbit/s (25e6 B/s): the bandwidth test must find it
inB tc qdisc add dev $VB root tbf rate 200mbit burst 32kb latency 100ms || not_ok "tbf qdisc"
run_rc 0 "$WORK/tbf.out" inB "$TP" net bw 10.231.7.1 -p "$PORT" --key-file "$WORK/key" \
    --sizes 64K --time 1.5 --json "$WORK/tbf.json"
check "bw runs on the shaped link" test $? -eq 0
bw=$(json_get "$WORK/tbf.json" "int(e['bw']['value'])")
echo "# shaped bandwidth measured: $bw B/s (shaper: 25000000 B/s)"
check "measured bandwidth is within the shaper's rate (0.8-1.05 x 25e6 B/s)" \
    test "$bw" -ge 20000000 -a "$bw" -le 26250000
finish
