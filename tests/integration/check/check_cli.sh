#!/usr/bin/env bash
# trainpath check from the command line: facts of this host and of the
# snapshot fixtures, audits of the snapshots (the RDMA and NVMe-oF rules end
# to end), facts audited from a file, the rule list, Nagios exit codes, and
# bad input: a bad policy is UNKNOWN (3) naming file:line:column, a bad root
# exits 2.
. "$(dirname "$0")/../lib.sh"

FX=$SRC/tests/fixtures/check
check "check facts of this host" run_rc 0 "$WORK/facts.out" "$TP" check facts --json "$WORK/facts.json"
check "... the loopback interface with 127.0.0.1" test "$(json_run "$WORK/facts.json" "
print(any(a['address'] == '127.0.0.1' for i in d['interfaces'] if i['loopback'] for a in i['addresses']))")" = True
check "check facts --root: the RDMA snapshot" run_rc 0 "$WORK/out" "$TP" check facts --root "$FX/node-rdma" --json "$WORK/rdma-facts.json"
check "... its RDMA port, RoCE v2, exclusive netns" test "$(json_run "$WORK/rdma-facts.json" "
r0 = d['rdma']; p = r0['devices'][0]['ports'][0]; print(p['link_layer'], 'RoCE v2' in p['gid_types'], r0['netns_mode'])")" = "Ethernet True exclusive"
check "check facts --root on a file: exit 2" run_rc 2 "$WORK/out" "$TP" check facts --root "$FX/node-rdma.json"
check "... naming it" grep -q "node-rdma.json" "$WORK/out"

check "check rules: at least 30, unique ids" test "$("$TP" check rules | awk '{print $1}' | sort -u | wc -l)" -ge 30
# the tour's example summary counts every rule: it follows the table
nrules=$("$TP" check rules | wc -l)
readme=$(sed -n 's/^# \([0-9]*\) pass, \([0-9]*\) warn, \([0-9]*\) fail, \([0-9]*\) skip, \([0-9]*\) unknown: .*/\1+\2+\3+\4+\5/p' "$SRC/docs/tour.md")
check "docs/tour.md's check summary counts the $nrules rules (${readme:-no summary line})" \
    test -n "$readme" -a "$(( ${readme:-0} ))" -eq "$nrules"

# the open nvmet target: any host admitted, a host without a controller key,
# NVMe/TCP without TLS
cat >"$WORK/target.yaml" <<'YAML'
role: storage
planes:
  storage:
    cidrs: ["fd00:2::/64"]
    interfaces: [eth0]
    mtu_min: 1500
    services:
      - {name: nvmet-tcp, port: 4420}
YAML
run_rc 2 "$WORK/target.out" "$TP" check --policy "$WORK/target.yaml" --root "$FX/target-open" --json "$WORK/target.json"
check "the open target: exit 2 (critical)" test $? -eq 0
sed 's/^/# /' "$WORK/target.out" | grep -E "^# (FAIL|WARN)"
st() { json_get "$1" "[f['status'] for f in r['findings'] if f['id'] == '$2'][0]"; }
ev() { json_get "$1" "[f['evidence'] for f in r['findings'] if f['id'] == '$2'][0]"; }
check "... NVMET-ANY-HOST fails, naming the open subsystem" \
    eval '[ "$(st "$WORK/target.json" NVMET-ANY-HOST)" = FAIL ] && ev "$WORK/target.json" NVMET-ANY-HOST | grep -q "io.example:open"'
check "... NVMET-DHCHAP fails: a host without a controller key" test "$(st "$WORK/target.json" NVMET-DHCHAP)" = FAIL
check "... NVMET-TLS fails on the tcp port" test "$(st "$WORK/target.json" NVMET-TLS)" != PASS
check "... the document is valid" valid_doc "$WORK/target.json"

# the RDMA node: a policy for its planes
cat >"$WORK/node.yaml" <<'YAML'
role: compute
multi_tenant: true
planes:
  management:
    cidrs: [10.0.0.0/24]
    interfaces: [eth0]
    services:
      - {name: sshd, port: 22}
    mtu_min: 1500
  data:
    cidrs: [10.0.1.0/24, "fd00:1::/64"]
    interfaces: [eth2]
    rdma: true
YAML
"$TP" check --policy "$WORK/node.yaml" --root "$FX/node-rdma" --json "$WORK/node.json" >"$WORK/node.out" 2>&1
rc=$?
check "the RDMA node: audited (exit $rc, a verdict)" test "$rc" -le 2
sed 's/^/# /' "$WORK/node.out" | grep -E "^# (FAIL|WARN)"
check "... RDMA-NETNS passes: exclusive on a multi-tenant node" test "$(st "$WORK/node.json" RDMA-NETNS)" = PASS
check "... sshd on the wildcard reaches the data plane: SEC-SSHD-MGMT fails" test "$(st "$WORK/node.json" SEC-SSHD-MGMT)" = FAIL
check "... slurmd on a data address, not allowed there: SEC-LISTEN-PLANE fails naming 6818" \
    eval '[ "$(st "$WORK/node.json" SEC-LISTEN-PLANE)" = FAIL ] && ev "$WORK/node.json" SEC-LISTEN-PLANE | grep -q 6818'
check "... GPU-PEERMEM passes: an NVIDIA GPU, mlx5_0 and nvidia_peermem in the snapshot" test "$(st "$WORK/node.json" GPU-PEERMEM)" = PASS
check "... NVMe-oF host rules read the controllers" test "$(st "$WORK/node.json" NVMEOF-HOST-DHCHAP)" != SKIP

# facts collected elsewhere, audited here: the same findings as --root
"$TP" check --policy "$WORK/node.yaml" --facts "$WORK/rdma-facts.json" --json "$WORK/node2.json" >/dev/null 2>&1
check "--facts FILE gives the findings --root gave" test "$(json_run "$WORK/node.json" "
a = [(f['id'], f['status']) for f in r['findings']]
b = [(f['id'], f['status']) for f in json.load(open('$WORK/node2.json'))['results']['findings']]
print(a == b)")" = True

# bad input: UNKNOWN (3), named; the document says why
printf 'role: compute\nplanes:\n  managment:\n    cidrs: [10.0.0.0/24]\n' >"$WORK/typo.yaml"
check "a policy with an unknown plane: exit 3 (unknown)" run_rc 3 "$WORK/typo.out" \
    "$TP" check --policy "$WORK/typo.yaml" --json "$WORK/typo.json"
check "... naming file:line:column and the key" grep -q "typo.yaml:3:3: planes.managment" "$WORK/typo.out"
check "... a failed document, valid" eval 'valid_doc "$WORK/typo.json" && [ "$(json_get "$WORK/typo.json" "d[\"status\"][\"ok\"]")" = False ]'
printf 'role: compute\nplanes:\n  data: {cidrs: [10.1.0.0/16]}\n  storage: {cidrs: [10.1.2.0/24]}\n' >"$WORK/overlap.yaml"
check "overlapping plane CIDRs: exit 3" run_rc 3 "$WORK/out" "$TP" check --policy "$WORK/overlap.yaml"
check "... both named" grep -q "overlaps planes.storage.cidrs\[0\] 10.1.2.0/24" "$WORK/out"
"$TP" check --json "$WORK/nopolicy.json" >"$WORK/out" 2>&1
check "no --policy: the node rules only, the plane rules skipped" test "$(json_run "$WORK/nopolicy.json" "
st = {f['id']: f['status'] for f in r['findings']}
print([st[i] for i in ('NET-MTU-DATA', 'SEC-FW-MGMT', 'NET-RPF-DATA', 'SEC-LISTEN-WILDCARD-CONTROL')], st['KERN-KPTR'] != 'SKIP')")" = "['SKIP', 'SKIP', 'SKIP', 'SKIP'] True"
# --results: the counters of the tests whose documents are there (a real
# net bw document, its counters given an error and a flap cause), and a
# clean one; a file that is no result document is passed over
mkdir -p "$WORK/res/nodes/n1" "$WORK/clean"
"$TP" net serve --port 0 --one-off --insecure >"$WORK/srv.out" 2>&1 &
for _ in $(seq 50); do p=$(sed -n 's/.* port \([0-9]*\).*/\1/p' "$WORK/srv.out" | head -1); [ -n "$p" ] && break; sleep 0.1; done
"$TP" net bw 127.0.0.1 --port "$p" --sizes 64K --iters 20 --json "$WORK/clean/net-bw.json" >/dev/null 2>&1
/usr/bin/python3 - "$WORK/clean/net-bw.json" "$WORK/res/nodes/n1/net-bw.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
c = d['results']['counters']
c['causes'] = [x for x in c['causes'] if x['cause'] not in ('errors', 'flap')]
json.dump(d, open(sys.argv[1], 'w'))
c['causes'] += [{'cause': 'errors', 'text': 't', 'evidence': [{'dev': 'eth9', 'source': 'ethtool', 'name': 'rx_crc_errors_phy', 'delta': 7}]},
                {'cause': 'flap', 'text': 't', 'evidence': [{'dev': 'eth9', 'source': 'netdev', 'name': 'carrier_changes', 'delta': 2}]}]
json.dump(d, open(sys.argv[2], 'w'))
PY
echo '{"not": "a result"}' >"$WORK/res/other.json"
"$TP" check --results "$WORK/res" --json "$WORK/ctr.json" >"$WORK/out" 2>&1
check "--results: an error counter that moved in a test fails CTR-ERRORS, naming file and counter" \
    test "$(json_run "$WORK/ctr.json" "
f = {x['id']: x for x in r['findings']}
print(f['CTR-ERRORS']['status'], 'nodes/n1/net-bw.json (net bw, this node): eth9 rx_crc_errors_phy +7' in f['CTR-ERRORS']['evidence'])")" = "FAIL True"
check "... and a carrier change warns LINK-FLAP" test "$(json_run "$WORK/ctr.json" "
print({x['id']: x['status'] for x in r['findings']}['LINK-FLAP'])")" = WARN
"$TP" check --results "$WORK/clean" --json "$WORK/ctr2.json" >"$WORK/out" 2>&1
check "... a clean test window passes both" test "$(json_run "$WORK/ctr2.json" "
st = {x['id']: x['status'] for x in r['findings']}
print(st['CTR-ERRORS'], st['LINK-FLAP'])")" = "PASS PASS"
check "... without --results both skip" test "$(json_run "$WORK/nopolicy.json" "
st = {x['id']: x['status'] for x in r['findings']}
print(st['CTR-ERRORS'], st['LINK-FLAP'])")" = "SKIP SKIP"
# --only: validate's last test, the counters rules alone; the verdict is theirs
run_rc 2 "$WORK/out" "$TP" check --only CTR-ERRORS,LINK-FLAP --results "$WORK/res" --json "$WORK/only.json"
check "--only CTR-ERRORS,LINK-FLAP over the error: exit 2 (critical), the two rules alone" \
    test "$(json_run "$WORK/only.json" "
print([(x['id'], x['status']) for x in r['findings']], r['summary']['fail'] + r['summary']['warn'] + r['summary']['pass'], d['config']['only'])")" = \
    "[('CTR-ERRORS', 'FAIL'), ('LINK-FLAP', 'WARN')] 2 CTR-ERRORS,LINK-FLAP"
check "--only LINK-FLAP: the warning alone decides (exit 1)" run_rc 1 "$WORK/out" \
    "$TP" check --only LINK-FLAP --results "$WORK/res" -q
check "--only CTR-ERRORS on the clean window: exit 0" run_rc 0 "$WORK/out" \
    "$TP" check --only CTR-ERRORS --results "$WORK/clean" -q
check "--only NO-SUCH: exit 3 (bad input to an audit), the word named" eval \
    'run_rc 3 "$WORK/out" "$TP" check --only CTR-ERRORS,NO-SUCH -q && grep -q "'"'"'NO-SUCH'"'"' is no rule" "$WORK/out"'
check "--only with a trailing comma: exit 3" run_rc 3 "$WORK/out" "$TP" check --only CTR-ERRORS, -q
check "--fleet without --policy: exit 3" run_rc 3 "$WORK/out" "$TP" check --fleet "$WORK/rdma-facts.json"
echo '{"schema": "trainpath.result/1"}' >"$WORK/notfacts.json"
check "--facts with a file that holds no facts: exit 3, named" run_rc 3 "$WORK/out" \
    "$TP" check --policy "$WORK/node.yaml" --facts "$WORK/notfacts.json"
check "... named" grep -q "notfacts.json: not trainpath facts" "$WORK/out"
finish
