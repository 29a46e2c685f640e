# The fleet bed's cluster (fleet_bed.sh, srun_soak.sh): N nodes (N set by
# the caller), each a network and a UTS namespace on one bridge, each
# running its own slurmd, one slurmctld in the head's namespace, munged.
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
for k in $(seq 0 $((N - 1))); do
    ns=tpbn$k.$$
    ip netns add $ns && NETNS+=($ns)
    ip link add v$k netns $ns type veth peer name p$k netns $BR
    ip -n $ns addr add $NET.$((k + 1))/24 dev v$k
    ip -n $ns link set v$k up && ip -n $ns link set lo up
    ip -n $BR link set p$k master br0 && ip -n $BR link set p$k up
done
check "$N node namespaces and a head on a bridge" test "$(ip -n $BR -br link show master br0 | wc -l)" -eq $N
# in node k's namespaces: nsenter keeps this mount namespace (slurmd
# needs /sys/fs/cgroup, which `ip netns exec` would remount away)
# (scripts, not functions: started in the background, $! is the daemon)
cat >"$WORK/in_node" <<SCRIPT
#!/bin/sh
k=\$1; shift
exec nsenter --net=/var/run/netns/tpbn\$k.$$ unshare --uts sh -c "hostname node\$k; exec \\"\\\$@\\"" sh "\$@"
SCRIPT
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
} >"$D/slurm.conf"
export SLURM_CONF=$D/slurm.conf
"$WORK/in_head" slurmctld -D -f "$SLURM_CONF" >"$D/ctld.out" 2>&1 &
PIDS+=($!)
for k in $(seq 0 $((N - 1))); do
    # the nodes share /tmp: PMIx's per-step folder must differ per node
    mkdir -p "$D/spool/node$k" "$D/conf/node$k" "$D/pmix/node$k"
    cp "$SLURM_CONF" "$D/conf/node$k/slurm.conf"
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

