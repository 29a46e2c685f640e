#!/usr/bin/env bash
# The start-up crash under srun (docs/reliability.md, "The start-up crash
# under srun"), run many times: the fleet bed's cluster (bed_lib.sh, six
# nodes), and RUNS (default 200) srun steps of the bed's validation
# (validate --only net --tier screen on every node, as fleet_bed.sh runs it,
# with no fault planted; 20-40 s a step here), or with SOAK=start a
# collective of one 8-byte message over MPI (the start-up, MPI_Init under
# PMIx and one exchange; 2-4 s a step). Each step must end 0 or 1 with its
# document; a rank that dies of a signal (the crash printed "terminated
# with signal 11 at PC=0") fails it. Not in make check; by hand, as root:
#   TRAINPATH=build/trainpath TP_SOURCE_ROOT=. RUNS=200 SOAK=start \
#       tests/integration/fleet/srun_soak.sh
# TRAINPATH may name an older binary, to count its crashes the same way.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/../slurm_lib.sh"
[ "$(id -u)" -eq 0 ] || skip_all "namespaces and slurmd need root"
export PATH=$PATH:/usr/sbin
for t in munged mungekey slurmctld slurmd srun sinfo scontrol nsenter unshare; do
    command -v $t >/dev/null || skip_all "$t missing"
done
RUNS=${RUNS:-200}
SOAK=${SOAK:-validate}
case $SOAK in
    validate) CMD=(validate --only net --tier screen --seed 1 --min-effect 150 --out "$WORK/run")
              DOC=$WORK/run/fleet.json ;;
    start) CMD=(coll --launcher mpi --sizes 8 --iters 1 --warmup 0 --json "$WORK/run/coll.json")
           DOC=$WORK/run/coll.json ;;
    *) skip_all "SOAK=$SOAK: validate or start" ;;
esac
N=6
. "$(dirname "$0")/bed_lib.sh"
# as fleet_bed.sh: Open MPI's TCP transport only, no MTL
export OMPI_MCA_btl=self,tcp OMPI_MCA_pml=ob1 OMPI_MCA_mtl=^psm,psm2,ofi

# a rank dead of a signal: libinfinipath's handler's words, or srun's
CRASH="terminated with signal\|Segmentation fault\|Bus error\|Aborted\|core dumped"
crashes=0 failed=0 t0=$(date +%s)
for i in $(seq "$RUNS"); do
    rm -rf "${WORK:?}/run" && mkdir -p "$WORK/run"
    # (the script, not the function: $! is timeout's own pid, and a SIGTERM
    # to it ends srun's step: a crashed rank's peers would otherwise wait in
    # MPI until the timeout)
    "$WORK/in_head" timeout 300 srun -N $N --immediate=20 --mpi=pmix --chdir="$WORK" "$TP" "${CMD[@]}" \
        >"$WORK/run.out" 2>&1 &
    spid=$!
    while kill -0 "$spid" 2>/dev/null && ! grep -q "$CRASH" "$WORK/run.out"; do sleep 0.3; done
    grep -q "$CRASH" "$WORK/run.out" && kill "$spid" 2>/dev/null
    wait "$spid"
    rc=$?
    if grep -q "$CRASH" "$WORK/run.out"; then
        crashes=$((crashes + 1))
        echo "# step $i: a rank died of a signal (exit $rc):"
        grep -B1 -A2 "$CRASH" "$WORK/run.out" | sed 's/^/#   /' | head -6
        cp "$WORK/run.out" "$WORK/crash-$i.out"
    elif [ "$rc" -gt 1 ] || [ ! -f "$DOC" ]; then
        failed=$((failed + 1))
        echo "# step $i: exit $rc$( [ -f "$DOC" ] || echo ", no ${DOC##*/}")"
        tail -5 "$WORK/run.out" | sed 's/^/#   /'
    fi
    # a node a failed step left drained would fail every step after it
    for x in $(in_head timeout 10 sinfo -h -N -t drain -o '%N' | sort -u); do
        in_head scontrol update NodeName="$x" State=RESUME
    done
    for _ in $(seq 150); do [ "$(idle)" -eq $N ] && break; sleep 0.2; done
    [ $((i % 20)) -eq 0 ] && echo "# $i steps, $crashes crashed, $failed failed otherwise, $(( $(date +%s) - t0 )) s"
done
echo "# $RUNS steps ($SOAK) of $N ranks of $("$TP" --version | head -1) in $(( $(date +%s) - t0 )) s: $crashes crashed, $failed failed otherwise"
check "$RUNS srun steps ($SOAK): no rank died of a signal ($crashes did)" test "$crashes" -eq 0
check "... and every step ended 0 or 1 with its document ($failed did not)" test "$failed" -eq 0
finish
