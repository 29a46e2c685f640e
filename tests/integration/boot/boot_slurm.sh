#!/usr/bin/env bash
# The boot layer's mpi backend under Slurm: this script brings up a private
# Slurm cluster of one node on localhost (munged, slurmctld and slurmd from
# Debian's packages, state in a temporary folder, free ports), then runs the
# group check with `srun --mpi=pmix -n 2` (and -n 3, overcommitted), with
# ranks started with different options, `trainpath coll` and `trainpath
# validate` under srun.
# Everything it started is stopped on exit.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/../slurm_lib.sh"
CHECK=${BOOT_MPI_CHECK:?}
[ "$(id -u)" -eq 0 ] || skip_all "slurmd and munged need root here"
for t in munged mungekey slurmctld slurmd srun sinfo; do
    command -v $t >/dev/null || PATH=$PATH:/usr/sbin command -v $t >/dev/null || skip_all "$t missing"
done
export PATH=$PATH:/usr/sbin
D=$WORK/slurm
mkdir -p "$D/state" "$D/spool" "$D/munge"
free_port() { /usr/bin/python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
H=$(hostname -s)

slurm_munge "$D"
{
    slurm_conf "$D" trainpath "$H(127.0.0.1)" "$(free_port)" "$(free_port)"
    echo "NodeName=$H NodeAddr=127.0.0.1 CPUs=$(nproc) State=UNKNOWN"
    echo "PartitionName=debug Nodes=ALL Default=YES MaxTime=INFINITE State=UP OverSubscribe=FORCE"
} >"$D/slurm.conf"
export SLURM_CONF=$D/slurm.conf
slurmctld -D -f "$SLURM_CONF" >"$D/ctld.out" 2>&1 &
PIDS+=($!)
slurmd -D -f "$SLURM_CONF" >"$D/slurmd.out" 2>&1 &
PIDS+=($!)
up=0
for _ in $(seq 100); do
    sinfo -h -o %t 2>/dev/null | grep -qE '^idle' && { up=1; break; }
    sleep 0.2
done
if [ $up -ne 1 ]; then
    not_ok "a one-node Slurm cluster comes up on localhost"
    for f in "$D"/*.log "$D"/*.out; do echo "# $f:"; tail -5 "$f" | sed 's/^/#   /'; done
    finish
fi
ok "a one-node Slurm cluster comes up on localhost ($(sinfo -h -o '%P %t %N' | head -1))"

export OMPI_MCA_btl=self,tcp
run_rc 0 "$WORK/srun2.out" timeout 60 srun --mpi=pmix -n 2 "$CHECK"
check "srun --mpi=pmix -n 2: both ranks join, allgather, meet and find the clock skew" test $? -eq 0
check "... 2 ranks said ok" test "$(grep -c '^ok rank' "$WORK/srun2.out")" -eq 2
run_rc 0 "$WORK/srun3.out" timeout 60 srun --mpi=pmix --overcommit -n 3 "$CHECK"
check "srun --mpi=pmix -n 3 (overcommitted)" test $? -eq 0
run_rc 2 "$WORK/odd.out" env TP_TEST_ODD_RANK=1 timeout 60 srun --mpi=pmix -n 2 "$CHECK"
check "ranks started with different options under srun exit 2" test $? -eq 0
check "... both naming the option" test "$(grep -c 'rank 1 on .* was started with a different --sizes' "$WORK/odd.out")" -eq 2

# trainpath coll under srun: MPI bootstrap, trainpath's data path; then MPI's
TP=${TRAINPATH:?}
run_rc 0 "$WORK/tc.out" timeout 300 srun --mpi=pmix -n 2 "${TEST_COLL:?}" auto
check "srun -n 2: every collective x algorithm x dtype x redop (and exact) correct" test $? -eq 0 -a "$(grep -c '^ok' "$WORK/tc.out")" -gt 300
run_rc 0 "$WORK/coll.out" timeout 120 srun --mpi=pmix -n 2 "$TP" coll --sizes 8,64K,1M --iters 5 --json "$WORK/coll.json"
check "srun -n 2 trainpath coll: runs" test $? -eq 0
check "... launcher mpi, 2 ranks, 0 wrong" test "$(json_get "$WORK/coll.json" "d['config']['launcher'], d['config']['ranks'], sum(x['wrong'] for x in r['sizes'])")" = "mpi 2 0"
run_rc 0 "$WORK/collm.out" timeout 120 srun --mpi=pmix -n 2 "$TP" coll --backend mpi --op alltoall --sizes 8-64K --iters 3 --json "$WORK/collm.json"
check "srun -n 2 trainpath coll --backend mpi --op alltoall: 0 wrong" test $? -eq 0 -a "$(json_get "$WORK/collm.json" "sum(x['wrong'] for x in r['sizes'])")" = 0

# trainpath validate across the allocation srun made: 3 ranks, each a node
timeout 300 srun --mpi=pmix --overcommit -n 3 "$TP" validate --only io,net --tier full --out "$WORK/val" -q \
    >"$WORK/val.out" 2>&1
rc=$?
check "srun -n 3 trainpath validate --only io,net: exit 0 or 1 (exit $rc)" test $rc -le 1
check "... 3 nodes, the pairs stage 3 rounds (one node sits out each), 3 pairs" test "$(json_get "$WORK/val/fleet.json" "r['node_count'], r['triage']['rounds']['pairs'], len([p for p in r['pairs'] if p['test'] == 'net-lat' and p['stage'] == 'pairs'])")" = "3 3 3"
check "... each node's io documents in the one results folder" test "$(ls "$WORK"/val/nodes/*/io-commit.json | wc -l)" -eq 3

# stop the daemons gently, so slurmctld reaps its own helpers
kill -TERM "${PIDS[@]}" 2>/dev/null
for _ in $(seq 30); do kill -0 "${PIDS[@]}" 2>/dev/null || break; sleep 0.1; done
finish
