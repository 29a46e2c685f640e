#!/usr/bin/env bash
# A network partition in the middle of `trainpath coll` between two hosts:
# two network namespaces joined by a veth pair, each rank in its own UTS
# namespace too (its own host name, so the ranks talk TCP across the veth,
# not shared memory), started as torchrun would (RANK, WORLD_SIZE,
# MASTER_ADDR, MASTER_PORT) with a key. The partition is made once with an
# nftables rule that drops every packet in one namespace, once by taking
# the veth down. Both ranks must exit 1 within --timeout (plus slack),
# each naming its peer, and rank 0's document must be valid and failed.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/faults_lib.sh"

[ "$(id -u)" -eq 0 ] || skip_all "network namespaces need root"
command -v ip >/dev/null || skip_all "iproute2 missing"
command -v nft >/dev/null || skip_all "nftables (nft) missing"
unshare -u true 2>/dev/null || skip_all "no UTS namespaces here (unshare -u)"
A=tfa$$ B=tfb$$ VA=tfva$$ VB=tfvb$$
ip netns add $A 2>/dev/null && NETNS+=($A) || skip_all "cannot create network namespaces here"
ip netns add $B && NETNS+=($B)
ADDR_A=10.231.9.1 ADDR_B=10.231.9.2
TIMEOUT_S=3
head -c 32 /dev/urandom | base64 >"$WORK/key"
port=$(free_port)

link_up() {
    ip -n $A addr add $ADDR_A/24 dev $VA 2>/dev/null
    ip -n $B addr add $ADDR_B/24 dev $VB 2>/dev/null
    ip -n $A link set $VA up && ip -n $B link set $VB up &&
        ip -n $A link set lo up && ip -n $B link set lo up
}
ip link add $VA netns $A type veth peer name $VB netns $B && link_up ||
    { not_ok "veth pair between $A and $B"; finish; }
ok "namespaces $A (node-a, $ADDR_A) and $B (node-b, $ADDR_B) joined by $VA <-> $VB"

# rank NS HOST RANK ADDR OUT JSON: one rank of a 2-rank coll, in the
# background (sets RPID)
rank() {
    local ns=$1 host=$2 r=$3 addr=$4 out=$5 json=$6
    ip netns exec "$ns" unshare -u sh -c 'hostname "$0" && exec "$@"' "$host" \
        env RANK=$r WORLD_SIZE=2 MASTER_ADDR=$ADDR_A MASTER_PORT=$port \
        timeout 60 "$TP" coll --sizes 1M --iters 20000 --warmup 1 --key-file "$WORK/key" \
        --bind "$addr" --timeout ${TIMEOUT_S}s --json "$json" >"$out" 2>&1 &
    RPID=$!
    PIDS+=("$RPID")
}

txb() { ip netns exec $B cat /sys/class/net/$VB/statistics/tx_bytes; }

# start_pair NAME: both ranks in the background (P0, P1; their output in O0,
# O1; rank 0's document J)
start_pair() {
    O0=$WORK/$1.0.out O1=$WORK/$1.1.out J=$WORK/$1.json
    rank $A node-a 0 $ADDR_A "$O0" "$J"; P0=$RPID
    rank $B node-b 1 $ADDR_B "$O1" "$WORK/$1.1.json"; P1=$RPID
    port=$(free_port)
}
# end_pair: wait for both (bounded); RC0, RC1 their exit codes, DT0, DT1
# the ms from T0 to their ends
end_pair() {
    wait_exit "$P0" $((TIMEOUT_S + 20)); RC0=$RC
    DT0=$(( ($(date +%s%N) - T0) / 1000000 ))
    wait_exit "$P1" 20; RC1=$RC
    DT1=$(( ($(date +%s%N) - T0) / 1000000 ))
    echo "# $1: rank 0 exit $RC0 after ${DT0} ms, rank 1 exit $RC1 after ${DT1} ms (timeout ${TIMEOUT_S} s)"
    check "$1: both ranks exit 1" test "$RC0$RC1" = 11
    check "... within the timeout plus slack (${DT0} and ${DT1} ms <= ${TIMEOUT_S} s + 7 s)" \
        test "$DT0" -le $(( (TIMEOUT_S + 7) * 1000 )) -a "$DT1" -le $(( (TIMEOUT_S + 7) * 1000 ))
}

# partition NAME CMD...: start both ranks, wait until they measure, run CMD
# (the fault), and check how they end.
partition() {
    local name=$1; shift
    start_pair "$name"
    if ! wait_log "^# trainpath coll: allreduce, 2 ranks on 2 host" "$O0"; then
        sed 's/^/#   /' "$O1"
        not_ok "$name: the ranks started across the veth"
        return
    fi
    local b0; b0=$(txb); sleep 0.5
    check "$name: the ranks exchange data across the veth before the fault ($(( $(txb) - b0 )) bytes in 0.5 s)" \
        test $(( $(txb) - b0 )) -gt 1048576
    T0=$(date +%s%N)
    "$@" || not_ok "$name: injecting the fault: $*"
    end_pair "$name"
    check "... rank 0 names its peer: rank 1 on node-b" grep_q "error: rank 1 on node-b" "$O0"
    check "... rank 1 names its peer: rank 0 on node-a" grep_q "error: rank 1: rank 0 on node-a" "$O1"
    check "... rank 0's document is valid" valid_doc "$J"
    is "... failed, exit code 1, the reason naming rank 1 on node-b" "False 1 True" \
        "$(json_get "$J" "d['status']['ok'], d['status']['exit_code'], 'rank 1 on node-b' in d['status']['message']")"
    echo "# $name: rank 0 says: $(json_get "$J" "d['status']['code'] + ': ' + d['status']['message']")"
}

# 1. nftables in node-b's namespace drops every packet, both ways
drop_all() {
    ip netns exec $B nft -f - <<EOF
table inet tpfault {
    chain in { type filter hook input priority 0; policy drop; }
    chain out { type filter hook output priority 0; policy drop; }
}
EOF
}
partition nft-drop drop_all
ip netns exec $B nft delete table inet tpfault

# 2. the veth taken down on node-a's side (node-b loses its carrier)
partition link-down ip -n $A link set $VA down
link_up

# 3. partitioned before the ranks meet: the rendezvous itself has a deadline
drop_all
T0=$(date +%s%N)
start_pair boot
end_pair "partitioned at the rendezvous"
ip netns exec $B nft delete table inet tpfault
check "... rank 0 names the rank that did not join" grep_q "rank\(s\) 1 did not join rank 0 on node-a" "$O0"
check "... rank 1 names the address it could not reach" grep_q "rank 1 joining rank 0: connecting to $ADDR_A port" "$O1"
is "... rank 0's document is valid and failed with that reason" "False True" \
    "$(valid_doc "$J" >/dev/null && json_get "$J" "d['status']['ok'], 'rank(s) 1 did not join' in d['status']['message']")"
finish
