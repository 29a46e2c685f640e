#!/usr/bin/env bash
# The node's counters around a test (results.counters) and each data
# connection's TCP_INFO (results.connections), proven on real kernel counters:
# two hosts in network namespaces joined by a veth pair. A clean link moves
# its bytes with no retransmit and the veth counts them; a link that drops a
# share of the data packets (nftables) shows retransmits in the connection,
# in the namespace's Tcp counters and as the cause "loss"; a veth taken down
# and up during a test shows as the cause "flap" naming it.
. "$(dirname "$0")/../lib.sh"

[ "$(id -u)" -eq 0 ] || skip_all "network namespaces need root"
command -v ip >/dev/null || skip_all "iproute2 missing"
command -v taskset >/dev/null || skip_all "taskset missing"
A=tca$$ B=tcb$$ VA=tcva$$ VB=tcvb$$
NA=10.231.11.1 NB=10.231.11.2
ip netns add $A 2>/dev/null && NETNS+=($A) || skip_all "cannot create network namespaces here"
ip netns add $B && NETNS+=($B)
ip link add $VA netns $A type veth peer name $VB netns $B || { not_ok "veth pair"; finish; }
ip -n $A addr add $NA/24 dev $VA && ip -n $A link set $VA up && ip -n $A link set lo up
ip -n $B addr add $NB/24 dev $VB && ip -n $B link set $VB up && ip -n $B link set lo up
ok "namespaces $A and $B joined by $VA <-> $VB"
head -c 32 /dev/urandom | base64 >"$WORK/key"
inB() { ip netns exec $B "$@"; }

# Both ends run on one CPU. A veth hands each packet to the backlog of the
# CPU that sent it: with the sender free to move between CPUs, two backlogs
# deliver one stream out of order, the receiver SACKs the holes and the
# sender retransmits. On the 2-CPU machine an unpinned 100 MiB run counted
# 250-2500 such RetransSegs (TCPFastRetrans, DSACKs, receiver's OFO queue)
# with no packet dropped anywhere (softnet_stat's drops 0). Those are the
# kernel's real counters and the feature rightly calls them "loss"; but a
# clean link must have none: on one CPU nothing reorders (pinned: 0 in 40
# runs on the idle machine), and every retransmit in the lossy run below is
# the nftables rule's doing.
CPU=$(/usr/bin/python3 -c 'import os; print(min(os.sched_getaffinity(0)))')
PIN=(taskset -c "$CPU")

start_server nsA ip netns exec $A "${PIN[@]}" -- --bind $NA --key-file "$WORK/key" ||
    { not_ok "server in $A"; finish; }
ok "server in $A on $NA port $PORT with a key (pinned to CPU $CPU)"

# bw DOC WANT-RC ARGS...: `trainpath net bw` from B to the server in A
bw() {
    local doc=$1 want=$2; shift 2
    run_rc "$want" "$WORK/$doc.out" inB "${PIN[@]}" "$TP" net bw $NA -p "$PORT" \
        --key-file "$WORK/key" --json "$WORK/$doc.json" "$@"
}
# q DOC EXPR: evaluate a python expression on the document (json_get), with
# c = results.counters, ch = its changed list, k = results.connections[0]
q() {
    json_get "$WORK/$1.json" "(lambda c, k: (lambda ch: $2)(c.get('changed', [])))(
        r.get('counters', {}), (r.get('connections') or [{}])[0])"
}
qt() { [ "$(q "$@")" = True ]; } # qt DOC EXPR: EXPR is true
# show DOC: the counters that moved, the causes and the connection, as comments
show() {
    json_run "$WORK/$1.json" "c = r.get('counters', {})
print('#  path', c.get('path'), 'window_s', c.get('window_s'))
for x in c.get('changed', []):
    if x['source'] != 'tcp' or x['class'] == 'loss' or x['name'] in ('InSegs', 'OutSegs'):
        print('#  changed', x['dev'], x['source'], x['name'], x['delta'], x['class'])
for x in c.get('causes', []):
    print('#  cause', x['cause'], [(v['dev'], v['name'], v['delta']) for v in x['evidence']])
for k in r.get('connections', []):
    print('#  connection', k)"
}
# delta of one counter in the changed list (0 when it did not grow)
delta() { echo "sum(x['delta'] for x in ch if x['dev'] == '$1' and x['name'] == '$2')"; }
RETRANS="[x for x in ch if x['source'] == 'tcp' and 'Retrans' in x['name']]"

# -- 1. a clean link --------------------------------------------------------
# Even pinned, a process that takes the CPU from the two ends can hold an ACK
# back past TCP's tail-loss-probe timer (a couple of ms here): the probe is
# counted (TCPLossProbes) and may resend the last segment (RetransSegs).
# With a busy loop on the same CPU half the runs showed 1-12 such; on the
# idle machine none in 40. So the clean run gets three tries, each try that
# was not clean shown; the lossy run below must then count far more.
for try in 1 2 3; do
    bw clean 0 --sizes 1M --iters 100 --warmup 10
    rc=$?
    [ "$rc" -eq 0 ] || break
    qt clean "k.get('total_retrans') == 0 and $RETRANS == [] and
              'loss' not in [x['cause'] for x in c.get('causes', [])]" && break
    [ "$try" -lt 3 ] || break
    echo "# clean try $try saw retransmits or a loss cause (another process on CPU $CPU?):"
    show clean
done
check "bw over tcp on the clean link" test "$rc" -eq 0
show clean
check "counters.path is B's veth ($VB)" qt clean "c.get('path') == '$VB'"
check "the connection is the client's c2s data flow" qt clean "k.get('kind') == 'c2s' and k.get('flow') == 0"
check "clean link: the connection's TCP_INFO counts no retransmit" qt clean "k.get('total_retrans') == 0"
check "clean link: no Tcp/TcpExt retransmit counter grew" qt clean "$RETRANS == []"
check "clean link: no cause 'loss'" qt clean "'loss' not in [x['cause'] for x in c.get('causes', [])]"
# the counters' window spans the warm-up too: the bytes moved are
# (warm-up + measured messages) x size
moved=$(q clean "(e['warmup_messages'] + e['messages']) * e['size_bytes']")
txb=$(q clean "$(delta $VB tx_bytes)")
echo "# payload moved $moved bytes; $VB tx_bytes grew $txb"
check "the veth's tx_bytes counted the payload (>= $moved bytes, >= 100 MiB)" \
    test "$txb" -ge "$moved" -a "$txb" -ge $((100 * 1048576))
check "and no more than 1.2 x the payload + 1 MiB of headers" \
    test "$txb" -le $((moved * 12 / 10 + 1048576))
# the server's node, in its BYE: its own path is A's veth, which received
# the payload
check "peer_counters (the server's node) has its path, A's veth ($VA)" \
    test "$(json_get "$WORK/clean.json" "r['peer_counters'].get('path')")" = "$VA"
rxa=$(json_get "$WORK/clean.json" "sum(x['delta'] for x in r['peer_counters']['changed']
    if x['dev'] == '$VA' and x['name'] == 'rx_bytes')")
check "... whose rx_bytes counted the payload ($rxa >= $moved bytes)" test "$rxa" -ge "$moved"

# -- 2. a lossy link: 5% of B's data packets to A lost on the way ----------
# The rule sits in A, where the packets arrive, as a lossy link or switch
# would drop them. A drop in B's own output path is no loss to TCP:
# netfilter hands the sender an error (EPERM) and TCP sends the segment
# again as if for the first time, counted nowhere (tried with an output hook
# rule in B: 53 packets dropped, 0 retransmits in TCP_INFO and Tcp/TcpExt).
# The control port is spared, so the control channel is not what breaks.
if ! command -v nft >/dev/null; then
    echo "# SKIP: nft (nftables) missing: the lossy link is not tested"
else
    inA() { ip netns exec $A "$@"; }
    inA nft add table inet tp &&
        inA nft add chain inet tp in '{ type filter hook prerouting priority 0 ; }' &&
        inA nft add rule inet tp in ip saddr $NB tcp dport != "$PORT" \
            numgen random mod 100 '<' 5 counter drop
    check "nftables in $A drops 5% of B's data packets (control port $PORT spared)" test $? -eq 0
    bw lossy 0 --sizes 1M --iters 50 --warmup 5
    check "bw over tcp on the lossy link" test $? -eq 0
    show lossy
    dropped=$(inA nft list chain inet tp in | sed -n 's/.*counter packets \([0-9]*\).*/\1/p')
    echo "# the rule dropped ${dropped:-?} packets"
    check "the rule dropped packets" test "${dropped:-0}" -gt 0
    inA nft delete table inet tp
    check "the rule is gone" test "$(inA nft list tables | grep -c 'inet tp')" -eq 0
    check "lossy link: the connection's TCP_INFO counts retransmits" qt lossy "k.get('total_retrans', 0) > 0"
    check "lossy link: a Tcp/TcpExt retransmit counter grew" \
        qt lossy "sum(x['delta'] for x in $RETRANS) > 0"
    check "lossy link: cause 'loss' with a tcp counter in its evidence" qt lossy \
        "any(x['cause'] == 'loss' and any(v['source'] == 'tcp' for v in x['evidence'])
             for x in c.get('causes', []))"
    clean=$(q clean "k.get('total_retrans', 0)")
    check "lossy link: far more retransmits than the clean link ($(q lossy "k.get('total_retrans', 0)") > 10 x $clean)" \
        qt lossy "k.get('total_retrans', 0) > 10 * $clean"
    check "lossy link: counters.path is still $VB" qt lossy "c.get('path') == '$VB'"
fi

# -- 3. a carrier flap: B's veth down for 0.3 s a second into the test ------
# Kernel TCP rides it out: IPv4 puts the prefix route back when the link
# comes up (the address stays), the segments the down link refused go again
# on the retransmit timer, and the run finishes (exit 0, seen in every run).
(sleep 1; ip -n $B link set $VB down; sleep 0.3; ip -n $B link set $VB up) &
PIDS+=($!)
flap=$!
t0=$(date +%s%N)
bw flap 0 --sizes 1M --time 3s
check "bw survives the veth going down and up" test $? -eq 0
wait $flap
echo "# the flapped run took $((($(date +%s%N) - t0) / 1000000)) ms"
show flap
check "after the flap: the document exists" test -s "$WORK/flap.json"
check "$VB's netdev carrier_changes grew" qt flap "$(delta $VB carrier_changes) >= 1"
check "cause 'flap' naming $VB's carrier_changes" qt flap \
    "any(x['cause'] == 'flap' and any(v['dev'] == '$VB' and v['source'] == 'netdev'
             and v['name'] == 'carrier_changes' and v['delta'] >= 1 for v in x['evidence'])
         for x in c.get('causes', []))"
# operstate follows the carrier after the kernel's link watch (up to ~1 s)
up() { for _ in $(seq 30); do [ "$(inB cat /sys/class/net/$VB/operstate)" = up ] && return 0; sleep 0.1; done; return 1; }
check "the link is back up (operstate of $VB)" up

# -- 4. ---------------------------------------------------------------------
docs=("$WORK/clean.json" "$WORK/flap.json")
[ -f "$WORK/lossy.json" ] && docs+=("$WORK/lossy.json")
check "documents are valid" valid_doc "${docs[@]}"
finish
