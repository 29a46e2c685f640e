#!/usr/bin/env bash
# The boot layer's mpi backend under Open MPI's mpirun: groups of 2 and 3
# ranks (oversubscribed on this machine), and ranks started with different
# options, which must all fail with exit 2 naming the option; validate's
# tier rounds over a star of their own.
. "$(dirname "$0")/../lib.sh"
CHECK=${BOOT_MPI_CHECK:?}
command -v mpirun >/dev/null || skip_all "mpirun missing"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_btl=self,tcp
mpi() { timeout 60 mpirun --oversubscribe "$@"; }

for np in 2 3; do
    run_rc 0 "$WORK/np$np.out" mpi -np $np "$CHECK"
    check "mpirun -np $np: every rank joins, allgathers, meets and has a clock offset" test $? -eq 0
    check "... $np ranks said ok" test "$(grep -c '^ok rank' "$WORK/np$np.out")" -eq $np
done
# past 17 ranks the gather's tree (fan-in 16) has ranks that relay their
# children's strings: rank 0 still sees every rank's, in rank order
run_rc 0 "$WORK/np20.out" timeout 120 mpirun --oversubscribe -np 20 "$CHECK"
check "mpirun -np 20 (a gather tree two deep): every rank ok" test $? -eq 0
check "... 20 ranks said ok" test "$(grep -c '^ok rank' "$WORK/np20.out")" -eq 20

run_rc 2 "$WORK/odd.out" env TP_TEST_ODD_RANK=1 timeout 60 mpirun --oversubscribe -x TP_TEST_ODD_RANK -np 3 "$CHECK"
check "ranks started with different options: mpirun exits 2" test $? -eq 0
check "... every rank names the option" test "$(grep -c 'rank 1 on .* was started with a different --sizes' "$WORK/odd.out")" -eq 3
# validate's tier stages under mpirun: MPI's collectives cannot be bounded,
# so the stages meet over a star of their own (tp_boot_star), the ranks
# joining rank 0 at the port it reserved; 3 ranks, the prolog tier
TP=${TRAINPATH:?}
run_rc 0 "$WORK/tier.out" timeout 300 mpirun --oversubscribe -np 3 "$TP" validate --only net \
    --tier prolog --seed 1 --min-effect 900 --out "$WORK/tier"
check "mpirun -np 3 validate --tier prolog: exit 0" test $? -eq 0
check "... the plan says the stages meet over a star of their own" \
    grep -q "^plan: a node silent for [0-9]* s in a round is lost (its tests' deadlines), .*; the stages meet over a star of their own" "$WORK/tier.out"
check "... its rounds (the gang, a ring of 3: 3 rounds), every figure in" test "$(json_run "$WORK/tier/fleet.json" "
t = r['triage']
print(t['rounds']['gang'], t['rounds']['ring'], t['counts'].get('pass'))")" = "1 3 3"
check "... a verdict line per node" test "$(wc -l <"$WORK/tier/nodes.jsonl")" -eq 3
finish
