#!/usr/bin/env bash
# trainpath check on real hosts: each network namespace is a node with four
# planes (veth interfaces to a switch namespace, addresses in the plane's
# CIDR), real listeners, its own sysctls and nftables ruleset. One namespace
# is clean; each of the others has one planted fault:
#   stor   a service listening on the storage plane, which the policy forbids
#   wild   the control-plane service (slurmd) listening on the wildcard address
#   rpf    rp_filter strict (1) on the data (RDMA) interface
#   mtu    MTU 1500 on the data plane
#   fw     an nftables input chain with policy accept
# The audit must find each planted fault (its rule FAILs, naming the
# interface or port) and pass the clean namespace on every plane rule.
. "$(dirname "$0")/../lib.sh"

[ "$(id -u)" -eq 0 ] || skip_all "network namespaces need root"
command -v ip >/dev/null && command -v nft >/dev/null || skip_all "iproute2 or nftables missing"
SW=tpsw$$
ip netns add $SW 2>/dev/null && NETNS+=($SW) || skip_all "cannot create network namespaces here"

POLICY=$WORK/policy.yaml
cat >"$POLICY" <<'YAML'
role: compute
planes:
  management:
    cidrs: [10.240.0.0/24]
    interfaces: [mgmt0]
    services:
      - {name: sshd, port: 22}
  control:
    cidrs: [10.240.1.0/24]
    interfaces: [ctl0]
    services:
      - {name: slurmd, port: 6818}
  data:
    cidrs: [10.240.2.0/24]
    interfaces: [data0]
    rdma: true
  storage:
    cidrs: [10.240.3.0/24]
    interfaces: [stor0]
YAML

# node NAME OCTET: a namespace with mgmt0, ctl0, data0 (MTU 9000), stor0
# (MTU 9000), each a veth to the switch namespace, clean sysctls, an
# nftables input chain with policy drop, and the allowed listeners: sshd on
# management, slurmd on control
node() {
    local ns=tp$1$$ o=$2 i=0 p
    ip netns add "$ns" && NETNS+=("$ns") || return 1
    ip -n "$ns" link set lo up
    for p in mgmt0 ctl0 data0 stor0; do
        ip link add "$p" netns "$ns" type veth peer name "s$o$i$$" netns $SW || return 1
        ip -n "$ns" addr add "10.240.$i.$o/24" dev "$p"
        ip -n "$ns" link set "$p" up
        ip -n $SW link set "s$o$i$$" up
        i=$((i + 1))
    done
    ip -n "$ns" link set data0 mtu 9000
    ip -n "$ns" link set stor0 mtu 9000
    ip netns exec "$ns" sh -c '
        sysctl -qw net.ipv4.ip_forward=0
        for k in all default mgmt0 ctl0 data0 stor0; do
            sysctl -qw net.ipv4.conf.$k.accept_redirects=0 net.ipv4.conf.$k.send_redirects=0 \
                net.ipv4.conf.$k.accept_source_route=0
        done
        sysctl -qw net.ipv4.conf.all.rp_filter=0 net.ipv4.conf.default.rp_filter=1
        sysctl -qw net.ipv4.conf.mgmt0.rp_filter=1 net.ipv4.conf.ctl0.rp_filter=1 \
            net.ipv4.conf.stor0.rp_filter=1 net.ipv4.conf.data0.rp_filter=2
        sysctl -qw net.ipv6.conf.all.accept_redirects=0 net.ipv6.conf.all.accept_source_route=0' ||
        return 1
    ip netns exec "$ns" nft -f - <<'NFT' || return 1
table inet filter {
    chain input {
        type filter hook input priority 0; policy drop;
        iif lo accept
        ct state established,related accept
        iifname "mgmt0" tcp dport 22 accept
        iifname "ctl0" tcp dport 6818 accept
        iifname "data0" accept
    }
}
NFT
    listen "$ns" "10.240.0.$o" 22 && listen "$ns" "10.240.1.$o" 6818
}

# listen NS ADDR PORT: a real TCP listener in NS (python3, as any service)
listen() {
    ip netns exec "$1" /usr/bin/python3 -c '
import socket, sys, time
s = socket.socket(socket.AF_INET6 if ":" in sys.argv[1] else socket.AF_INET)
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind((sys.argv[1], int(sys.argv[2])))
s.listen()
print("listening", flush=True)
time.sleep(600)' "$2" "$3" >"$WORK/listen-$1-$3.log" 2>&1 &
    PIDS+=($!)
    wait_log listening "$WORK/listen-$1-$3.log"
}

check "clean node" node clean 11
check "stor: clean, plus a listener on the storage plane (10.240.3.12:8080)" \
    eval 'node stor 12 && listen tpstor$$ 10.240.3.12 8080'
check "wild: slurmd on 0.0.0.0:6818 instead of the control address" eval '
    node wild 13 && pkill -f "10.240.1.13 6818" && sleep 0.2 && listen tpwild$$ 0.0.0.0 6818'
check "rpf: rp_filter 1 on data0" eval 'node rpf 14 && ip netns exec tprpf$$ sysctl -qw net.ipv4.conf.data0.rp_filter=1'
check "mtu: MTU 1500 on data0" eval 'node mtu 15 && ip -n tpmtu$$ link set data0 mtu 1500'
check "fw: input policy accept" eval 'node fw 16 && ip netns exec tpfw$$ nft chain inet filter input "{ policy accept; }"'

# audit NAME: trainpath check in the namespace; its document in $WORK/NAME.json
audit() {
    ip netns exec "tp$1$$" "$TP" check --policy "$POLICY" --json "$WORK/$1.json" >"$WORK/$1.out" 2>&1
    echo $? >"$WORK/$1.rc"
    sed 's/^/# /' "$WORK/$1.out" | grep -E "^# (FAIL|WARN|#)" | head -20
}
# status NAME RULE: that rule's status in NAME's audit
status() { json_get "$WORK/$1.json" "[f['status'] for f in r['findings'] if f['id'] == '$2'][0]"; }
evidence() { json_get "$WORK/$1.json" "[f['evidence'] for f in r['findings'] if f['id'] == '$2'][0]"; }

PLANE_RULES="NET-MTU-DATA NET-MTU-STORAGE NET-IFACE-PLANE SEC-LISTEN-PLANE"
PLANE_RULES+=" SEC-LISTEN-WILDCARD-CONTROL SEC-SSHD-MGMT SEC-FW-MGMT SEC-FW-CONTROL NET-RPF-MGMT"
PLANE_RULES+=" NET-RPF-DATA NET-IPFWD NET-REDIRECTS NET-SEND-REDIRECTS NET-SOURCE-ROUTE"
audit clean
check "clean: a valid result document" valid_doc "$WORK/clean.json"
for r in $PLANE_RULES; do
    check "clean: $r passes" test "$(status clean $r)" = PASS
done
check "clean: the listeners seen with their process" test "$(json_get "$WORK/clean.json" \
    "sorted((l['address'], l['port'], l['process']) for l in r['facts']['listeners'] if l['proto'] == 'tcp')")" \
    = "[('10.240.0.11', 22, 'python3'), ('10.240.1.11', 6818, 'python3')]"

planted() { # planted NAME RULE EVIDENCE-REGEX
    audit "$1"
    [ "$(status "$1" "$2")" = FAIL ] || { echo "# $2 in $1: $(status "$1" "$2")"; return 1; }
    evidence "$1" "$2" | grep -Eq "$3" || { echo "# evidence: $(evidence "$1" "$2")"; return 1; }
    [ "$(cat "$WORK/$1.rc")" -ge 1 ] || { echo "# exit $(cat "$WORK/$1.rc")"; return 1; }
}
check "stor: SEC-LISTEN-PLANE fails, naming port 8080 and the storage plane" \
    planted stor SEC-LISTEN-PLANE "8080.*storage|storage.*8080"
check "... and exits 2 (critical)" test "$(cat "$WORK/stor.rc")" = 2
check "wild: SEC-LISTEN-WILDCARD-CONTROL fails, naming 6818" \
    planted wild SEC-LISTEN-WILDCARD-CONTROL "6818"
check "rpf: NET-RPF-DATA fails, naming data0" planted rpf NET-RPF-DATA "data0"
check "mtu: NET-MTU-DATA fails, naming data0 and 1500" planted mtu NET-MTU-DATA "data0.*1500|1500.*data0"
check "fw: SEC-FW-MGMT fails" planted fw SEC-FW-MGMT "accept"
for h in stor wild rpf mtu fw; do
    check "$h: the other plane rules are as in the clean node" test "$(json_run "$WORK/$h.json" "
clean = {f['id']: f['status'] for f in json.load(open('$WORK/clean.json'))['results']['findings']}
ids = '$PLANE_RULES'.split()
planted = {'stor': ['SEC-LISTEN-PLANE'], 'wild': ['SEC-LISTEN-WILDCARD-CONTROL', 'SEC-LISTEN-PLANE'],
           'rpf': ['NET-RPF-DATA'], 'mtu': ['NET-MTU-DATA'], 'fw': ['SEC-FW-MGMT', 'SEC-FW-CONTROL']}['$h']
print([i for i in ids if i not in planted and [f['status'] for f in r['findings'] if f['id'] == i] != [clean[i]]])")" = "[]"
done

# the fleet: every namespace's facts, findings grouped by rule
for h in clean stor wild rpf mtu fw; do
    json_run "$WORK/$h.json" "json.dump(r['facts'], open('$WORK/$h-facts.json', 'w'))"
done
run_rc 2 "$WORK/fleet.out" "$TP" check --policy "$POLICY" --json "$WORK/fleet.json" --fleet \
    "$WORK"/{clean,stor,wild,rpf,mtu,fw}-facts.json
check "--fleet over the six nodes: exit 2 (critical somewhere)" test $? -eq 0
check "... each planted fault under its rule, with its host only" test "$(json_run "$WORK/fleet.json" "
g = {x['id']: sorted(h['host'] for h in x['fail']) for x in r['by_rule']}
print(len(g['NET-RPF-DATA']), len(g['NET-MTU-DATA']), len(g['SEC-LISTEN-PLANE']) >= 1)")" = "1 1 True"
check "... a valid result document" valid_doc "$WORK/fleet.json"
finish
