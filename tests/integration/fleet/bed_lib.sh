# The fleet bed's cluster (fleet_bed.sh, fleet_switch.sh, srun_soak.sh): N
# nodes (N set by the caller), each a network and a UTS namespace, each
# running its own slurmd, one slurmctld in the head's namespace, munged.
# The fabric: one bridge in the head's namespace, every node on it; or,
# with LEAVES=L set by the caller (3 or more), switches: L leaf switches,
# each a bridge in a namespace of its own (tplfL.PID) with nodes
# L * ceil(N / L) .. on it (consecutive nodes, the last leaf the rest),
# each joined by one veth pair, its uplink (uL in the leaf, sL on the
# spine), to the spine: the head's bridge, the head on it. Slurm then gets
# TopologyPlugin=topology/tree and $D/topology.conf, also in $TOPO
# ("SwitchName=leafL Nodes=node[..]" a leaf, "SwitchName=spine
# Switches=leaf[0-(L-1)]"); leaf_of K says node K's leaf. The fabric is
# one subnet: the bridges forward between them as switches would.
# Sourced after lib.sh and slurm_lib.sh; defines in_node, in_head, idle
# and the variables NET, BR, D, SLURM_CONF; a cluster that does not come up
# is a failed test and the script finishes.
NET=10.234.0
BR=tpbed$$
D=$WORK/slurm
mkdir -p "$D/state" "$D/munge"

# ---- the namespaces: node k is 10.234.0.(k+1), the head 10.234.0.254 ----
ip netns add $BR && NETNS+=($BR) || { not_ok "network namespaces"; finish; }
ip -n $BR link add br0 type bridge && ip -n $BR link set br0 up && ip -n $BR link set lo up
ip -n $BR addr add $NET.254/24 dev br0
LEAVES=${LEAVES:-0}
PER_LEAF=$(( LEAVES > 0 ? (N + LEAVES - 1) / LEAVES : N ))
leaf_of() { echo $(($1 / PER_LEAF)); }
for l in $(seq 0 $((LEAVES - 1))); do # the leaf switches and their uplinks
    ip netns add tplf$l.$$ && NETNS+=(tplf$l.$$)
    ip -n tplf$l.$$ link add br0 type bridge && ip -n tplf$l.$$ link set br0 up
    ip link add u$l netns tplf$l.$$ type veth peer name s$l netns $BR
    ip -n tplf$l.$$ link set u$l master br0 && ip -n tplf$l.$$ link set u$l up
    ip -n $BR link set s$l master br0 && ip -n $BR link set s$l up
done
for k in $(seq 0 $((N - 1))); do
    ns=tpbn$k.$$
    sw=$BR # the switch node k is cabled to
    [ "$LEAVES" -gt 0 ] && sw=tplf$(leaf_of $k).$$
    ip netns add $ns && NETNS+=($ns)
    ip link add v$k netns $ns type veth peer name p$k netns $sw
    ip -n $ns addr add $NET.$((k + 1))/24 dev v$k
    ip -n $ns link set v$k up && ip -n $ns link set lo up
    ip -n $sw link set p$k master br0 && ip -n $sw link set p$k up
done
if [ "$LEAVES" -gt 0 ]; then
    ports=0
    for l in $(seq 0 $((LEAVES - 1))); do
        ports=$((ports + $(ip -n tplf$l.$$ -br link show master br0 | wc -l) - 1))
    done
    check "$N node namespaces on $LEAVES leaf switches, each with its uplink to the spine, the head on it" \
        test "$ports $(ip -n $BR -br link show master br0 | wc -l)" = "$N $LEAVES"
    TOPO=$D/topology.conf
    for l in $(seq 0 $((LEAVES - 1))); do
        last=$(( (l + 1) * PER_LEAF - 1 < N - 1 ? (l + 1) * PER_LEAF - 1 : N - 1 ))
        echo "SwitchName=leaf$l Nodes=node[$((l * PER_LEAF))-$last]"
    done >"$TOPO"
    echo "SwitchName=spine Switches=leaf[0-$((LEAVES - 1))]" >>"$TOPO"
else
    check "$N node namespaces and a head on a bridge" test "$(ip -n $BR -br link show master br0 | wc -l)" -eq $N
fi
# in node k's namespaces: nsenter keeps this mount namespace (slurmd
# needs /sys/fs/cgroup, which `ip netns exec` would remount away)
# (scripts, not functions: started in the background, $! is the daemon)
# With switches, also a mount namespace whose /sys/class/net is the node's
# own (a sysfs mounted in it, its net folders bound over the host's, the
# rest of /sys kept): the counters then read the node's cable, v$k, where
# the host's sysfs has no v$k at all.
cat >"$WORK/in_node" <<SCRIPT
#!/bin/sh
k=\$1; shift
SCRIPT
if [ "$LEAVES" -gt 0 ]; then
    mkdir -p "$D/sysfs"
    cat >>"$WORK/in_node" <<SCRIPT
exec nsenter --net=/var/run/netns/tpbn\$k.$$ unshare --uts --mount sh -c "hostname node\$k; mount -t sysfs sysfs $D/sysfs && mount --bind $D/sysfs/class/net /sys/class/net && mount --bind $D/sysfs/devices/virtual/net /sys/devices/virtual/net && exec \\"\\\$@\\"" sh "\$@"
SCRIPT
else
    cat >>"$WORK/in_node" <<SCRIPT
exec nsenter --net=/var/run/netns/tpbn\$k.$$ unshare --uts sh -c "hostname node\$k; exec \\"\\\$@\\"" sh "\$@"
SCRIPT
fi
printf '#!/bin/sh\nexec nsenter --net=/var/run/netns/%s "$@"\n' $BR >"$WORK/in_head"
chmod +x "$WORK/in_node" "$WORK/in_head"
in_node() { "$WORK/in_node" "$@"; }
in_head() { "$WORK/in_head" "$@"; }

# ---- Slurm: one slurmctld in the head's namespace, a slurmd per node ----
slurm_munge "$D"
{
    slurm_conf "$D" tpbed "$(hostname -s)($NET.254)" 6817 6818
    echo "NodeName=node[0-$((N - 1))] NodeAddr=$NET.[1-$N] CPUs=$(nproc) State=UNKNOWN"
    echo "PartitionName=bed Nodes=ALL Default=YES MaxTime=INFINITE State=UP OverSubscribe=FORCE"
    [ "$LEAVES" -gt 0 ] && echo "TopologyPlugin=topology/tree"
} >"$D/slurm.conf"
export SLURM_CONF=$D/slurm.conf
"$WORK/in_head" slurmctld -D -f "$SLURM_CONF" >"$D/ctld.out" 2>&1 &
PIDS+=($!)
for k in $(seq 0 $((N - 1))); do
    # the nodes share /tmp: PMIx's per-step folder must differ per node
    mkdir -p "$D/spool/node$k" "$D/conf/node$k" "$D/pmix/node$k"
    cp "$SLURM_CONF" "$D/conf/node$k/slurm.conf"
    [ "$LEAVES" -gt 0 ] && cp "$TOPO" "$D/conf/node$k/topology.conf"
    echo "PMIxCliTmpDirBase=$D/pmix/node$k" >"$D/conf/node$k/mpi.conf"
    "$WORK/in_node" $k slurmd -D -N node$k -f "$D/conf/node$k/slurm.conf" >"$D/slurmd$k.out" 2>&1 &
    PIDS+=($!)
done
idle() { in_head timeout 10 sinfo -h -N -o '%N %t' 2>/dev/null | awk '$2 == "idle"' | wc -l; }
for _ in $(seq 150); do [ "$(idle)" -eq $N ] && break; sleep 0.2; done
if [ "$(idle)" -ne $N ]; then
    not_ok "a Slurm cluster of $N nodes comes up"
    in_head sinfo -N
    for f in "$D"/*.out; do echo "# $f:"; tail -3 "$f" | sed 's/^/#   /'; done
    finish
fi
ok "a Slurm cluster of $N nodes comes up, each node its own namespaces ($(in_head sinfo -h -o '%P %D %t %N'))"

