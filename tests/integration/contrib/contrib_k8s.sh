#!/usr/bin/env bash
# contrib/kubernetes/validate-job.yaml without a cluster: its pods as
# Kubernetes would start them, on nodes that are network namespaces on a
# bridge, and the validation they run across those nodes.
#
# Reproduced from the manifest (tests/integration/contrib/k8s_pod.py reads
# it; nothing of it is copied here): the container's command and arguments,
# run as they are; its environment as the kubelet makes it (the values,
# RANK from the completion-index annotation through the downward API, the
# Job's name and uid labels, JOB_COMPLETION_INDEX, the node's HOSTNAME and
# nothing of this shell's); one pod per node (the anti-affinity), each on
# the host network (hostNetwork: its node's namespace, address and
# hostname); the headless Service's records (<job>-<index>.<service>, short
# and FQDN) in each node's /etc/hosts, the way the cluster DNS answers
# them, added only once pod 0 starts, as the Service publishes them, while
# the other pods already wait; the Secret's key as the kubelet's atomic
# writer lays a Secret out (symlinks through ..data, mode 0400); every
# other volume a folder of its own per node (hostPath, emptyDir), /var/tmp
# bind-mounted in the pod's mount namespace.
#
# Changed from the manifest, to fit a 2-core machine (the only
# differences): PROFILE=quick (the manifest's standard takes minutes a
# node), EXTRA_ARGS="--min-effect 900" (4 nodes sharing 2 cores differ by
# multiples, not percent: fleet_bed.sh), and the paths of mounts that do
# not exist on this host are replaced by their folders in the command.
# Not reproduced: the scheduler, the kubelet, the container runtime and the
# image (the build's binary stands for the image's /usr/bin/trainpath),
# the cluster DNS itself (/etc/hosts answers instead), the Job controller's
# bookkeeping (completions, backoff, deadlines).
. "$(dirname "$0")/../lib.sh"
[ "$(id -u)" -eq 0 ] || skip_all "network namespaces need root"
for t in ip unshare getent; do command -v $t >/dev/null || skip_all "$t missing"; done
/usr/bin/python3 -c 'import yaml' 2>/dev/null || skip_all "python3-yaml missing (scripts/install-deps.sh)"

M=$SRC/contrib/kubernetes/validate-job.yaml
POD=$SRC/tests/integration/contrib/k8s_pod.py
check "validate-job.yaml and check-daemonset.yaml parse as YAML" /usr/bin/python3 -c '
import sys, yaml
for f in sys.argv[1:]:
    assert list(yaml.safe_load_all(open(f))), f' "$M" "$SRC/contrib/kubernetes/check-daemonset.yaml" \
    "$SRC/contrib/kubernetes/namespace.yaml"

# the manifests' own consistency: what the rendezvous needs of them
/usr/bin/python3 "$POD" check "$M" "$SRC/contrib/kubernetes/check-daemonset.yaml" >"$WORK/static" 2>&1 ||
    echo "not ok|k8s_pod.py check ran|$(tail -1 "$WORK/static")" >>"$WORK/static"
while IFS='|' read -r st what why; do
    if [ "$st" = ok ]; then ok "$what"; else not_ok "$what"; echo "#   $why"; fi
done <"$WORK/static"

# what the manifest says
read -r JOB SVC NS N PORT <<<"$(/usr/bin/python3 -c '
import sys, yaml
d = list(yaml.safe_load_all(open(sys.argv[1])))
j = [x for x in d if x["kind"] == "Job"][0]
c = j["spec"]["template"]["spec"]["containers"][0]
env = {e["name"]: e.get("value") for e in c.get("env", [])}
print(j["metadata"]["name"], j["spec"]["template"]["spec"]["subdomain"], j["metadata"].get("namespace", "trainpath"),
      j["spec"]["completions"], env["MASTER_PORT"])' "$M")"
echo "# the manifest: Job $JOB, Service $SVC, namespace $NS, $N pods, MASTER_PORT $PORT"
# MASTER_PORT as written: each node has its own namespace, so its port is
# free there whatever runs on this host (a test beside this one included)

# ---- the nodes: N namespaces on a bridge, node k 10.236.0.(k+1) ----
NET=10.236.0
BR=tpk8sbr$$
ip netns add $BR && NETNS+=($BR) || { not_ok "network namespaces"; finish; }
ip -n $BR link add br0 type bridge && ip -n $BR link set br0 up && ip -n $BR link set lo up
for k in $(seq 0 $((N - 1))); do
    ns=tpk8s$k.$$
    ip netns add $ns && NETNS+=($ns)
    ip link add v$k netns $ns type veth peer name p$k netns $BR
    ip -n $ns addr add $NET.$((k + 1))/24 dev v$k
    ip -n $ns link set v$k up && ip -n $ns link set lo up
    # a default route, as a node has: validate listens on its interface
    ip -n $ns route add default dev v$k
    ip -n $BR link set p$k master br0 && ip -n $BR link set p$k up
done
check "$N node namespaces on a bridge" test "$(ip -n $BR -br link show master br0 | wc -l)" -eq "$N"

head -c 32 /dev/urandom | base64 >"$WORK/secret-key"
# node k's /etc/hosts: itself, as the node's own hosts file has it; the
# Service's records come later (records)
for k in $(seq 0 $((N - 1))); do
    /usr/bin/python3 "$POD" pod "$M" Job $k --node k8s-node$k --ip $NET.$((k + 1)) \
        --root "$WORK/pod$k" --key "$WORK/secret-key" --trainpath "$TP" --hosts \
        --set PROFILE=quick --set EXTRA_ARGS="--min-effect 900" || { not_ok "pod $k's script"; finish; }
    printf '127.0.0.1 localhost\n%s k8s-node%d\n' $NET.$((k + 1)) $k >"$WORK/pod$k/hosts"
done
records() { # the headless Service's A records of every pod, as the DNS gives them
    local k
    for k in $(seq 0 $((N - 1))); do
        echo "$NET.$((k + 1)) $JOB-$k.$SVC $JOB-$k.$SVC.$NS.svc $JOB-$k.$SVC.$NS.svc.cluster.local"
    done
}
vol() { sed -n "s|^$2 ||p" "$WORK/pod$1/mounts"; } # vol K MOUNTPATH: pod K's folder for it
start_pod() {
    local k=$1
    ip netns exec tpk8s$k.$$ unshare --uts timeout 300 sh "$WORK/pod$k/pod.sh" \
        >"$WORK/pod$k.out" 2>&1 &
    PIDS+=($!)
    pid[$k]=$!
}

# the pods start in any order; pod 0's record exists once pod 0 runs
t0=$(date +%s)
for k in $(seq $((N - 1)) -1 1); do start_pod $k; done
sleep 3
waiting=0
for k in $(seq 1 $((N - 1))); do kill -0 "${pid[$k]}" 2>/dev/null && waiting=$((waiting + 1)); done
check "pods 1..$((N - 1)) started before pod 0 wait for $JOB-0.$SVC to resolve ($waiting of $((N - 1)))" \
    test "$waiting" -eq $((N - 1))
# appended in place: each pod's /etc/hosts is a bind mount of this inode
for k in $(seq 0 $((N - 1))); do records >>"$WORK/pod$k/hosts"; done
start_pod 0
for k in $(seq 0 $((N - 1))); do wait "${pid[$k]}"; rc[$k]=$?; done
echo "# the Job's $N pods, quick profile: $(( $(date +%s) - t0 )) s (exit codes ${rc[*]})"
sed 's/^/# pod 0: /' "$WORK/pod0.out" | head -30
for k in $(seq 1 $((N - 1))); do
    [ "${rc[$k]}" = "${rc[0]}" ] || sed "s/^/# pod $k: /" "$WORK/pod$k.out" | tail -5
done

R=$(vol 0 /results)/$JOB-0b6c7a52-5d0e-4c7a-9a61-1f6f3d2e8b10
check "every pod exits with rank 0's code, 0 or 1 (${rc[*]})" test "$(printf '%s\n' "${rc[@]}" |
    sort -u | tr -d '\n')" = "${rc[0]}" -a "${rc[0]}" -le 1
# the node audit on this VM has critical findings (validate_quick.sh):
# then, and only then, exit 1; every other test of the profile passed
check "... every test but the node audit passed" eval \
    '! grep -E "^(FAIL|WARN|ERROR) " "$WORK/pod0.out" | grep -qv "^FAIL check "'
check "... exit 1 exactly when the audit failed" test \
    "$(grep -c '^FAIL check ' "$WORK/pod0.out")" = "${rc[0]}"
check "... rank 0 planned the manifest's tier for $N nodes" \
    grep -q "^plan: the screen tier for $N nodes" "$WORK/pod0.out"
check "rank 0 wrote the results folder at the manifest's --out (/results/JOB-UID)" \
    test -s "$R/fleet.json" -a -s "$R/nodes.jsonl" -a -s "$R/report.html"
check "... one verdict per node, each named by its node's hostname and address, all pass" \
    test "$(/usr/bin/python3 -c "
import json, sys
v = [json.loads(l) for l in open(sys.argv[1])]
print(len(v), all((o['label'], o['addr'], o['status']) == ('k8s-node%d' % o['node'], '$NET.%d' % (o['node'] + 1), 'pass') for o in v))" \
        "$R/nodes.jsonl")" = "$N True"
check "... the fleet: every node arrived, the screen tier's rounds ran, nothing named" \
    test "$(json_run "$R/fleet.json" "
print(len(r['nodes']), all(n['arrived'] for n in r['nodes']), r['tier'], len(r['triage']['named']))")" \
    = "$N True screen 0"
check "... every node's own tests' documents gathered (check, coll, io, step, sdc)" eval '
for k in $(seq 0 $((N - 1))); do
    for t in check coll-allreduce io-commit io-checkpoint step sdc; do
        [ -s "$R/nodes/k8s-node$k/$t.json" ] || { echo "# missing nodes/k8s-node$k/$t.json"; exit 1; }
    done
done'
check "... fleet.json and every verdict line valid" eval \
    'valid_doc "$R/fleet.json" && valid_doc --lines validate_node_line "$R/nodes.jsonl"'
P=$(vol 0 /textfile)/trainpath_validate.prom
check "... --prometheus into node 0's textfile folder: the fleet of $N and every node's rows" \
    test "$(grep -c '^trainpath_fleet_nodes ' "$P" 2>/dev/null)/$(grep '^trainpath_fleet_nodes ' "$P" | cut -d' ' -f2)/$(
        grep -o 'host="k8s-node[0-9]*"' "$P" | sort -u | wc -l)" = "1/$N/$N"
check "... no textfile folder but rank 0's got one" eval '
for k in $(seq 1 $((N - 1))); do [ -z "$(ls -A "$(vol $k /textfile)")" ] || exit 1; done'
check "... validate's scratch (/var/tmp, the emptyDir) used and removed" eval '
for k in $(seq 0 $((N - 1))); do [ -z "$(ls -A "$(vol $k /var/tmp)")" ] || exit 1; done'
check "... no warning about the Secret's key file (mode 0400 through the symlinks)" \
    eval '! grep -h "key-file" "$WORK"/pod*.out'

# a pod whose rank 0 never comes: it waits DNS_WAIT_S, then exit 2 saying so
/usr/bin/python3 "$POD" pod "$M" Job 1 --node k8s-node1 --ip $NET.2 --root "$WORK/lone" \
    --key "$WORK/secret-key" --trainpath "$TP" --hosts --set DNS_WAIT_S=2
printf '127.0.0.1 localhost\n' >"$WORK/lone/hosts"
ip netns exec tpk8s1.$$ unshare --uts timeout 60 sh "$WORK/lone/pod.sh" >"$WORK/lone.out" 2>&1
lrc=$?
check "a pod whose MASTER_ADDR never resolves: exit 2 after DNS_WAIT_S ($lrc)" test "$lrc" = 2
check "... saying which name" grep -q "$JOB-0.$SVC did not resolve in 2 s" "$WORK/lone.out"
finish
