#!/usr/bin/env bash
# trainpath coll under Open MPI's mpirun: ranks, addresses and barriers come
# from MPI, the data path is trainpath's (shared memory between local
# ranks); and --backend mpi, the same sweep through MPI_Allreduce and its
# siblings, in the same result format.
. "$(dirname "$0")/../lib.sh"
command -v mpirun >/dev/null || skip_all "mpirun missing"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_btl=self,tcp
mpi() { timeout 120 mpirun --oversubscribe "$@"; }
sumwrong() { json_get "$1" "sum(x['wrong'] for x in r['sizes'])"; }

TC=${TEST_COLL:?}
for np in 2 3; do
    run_rc 0 "$WORK/tc$np.out" mpi -np $np "$TC" auto
    check "mpirun -np $np: every collective x algorithm x dtype x redop (and exact) correct" test $? -eq 0 -a "$(grep -c '^ok' "$WORK/tc$np.out")" -gt 300
    J=$WORK/np$np.json
    run_rc 0 "$WORK/np$np.out" mpi -np $np "$TP" coll --sizes 8,64K,1M --iters 5 --json "$J"
    check "mpirun -np $np: allreduce runs" test $? -eq 0
    check "... launcher mpi, $np ranks, 0 wrong" test "$(json_get "$J" "d['config']['launcher'], d['config']['ranks']") $(sumwrong "$J")" = "mpi $np 0"
done
# --repro exact end to end through MPI's own allreduce (--backend mpi:
# block fixed-point over MPI_Allreduce, its wide blocks by the wide
# words), f32, bf16, f16, sum and avg, equal on every rank to the
# correctly rounded sum (tests/unit/test_repro.c; the algorithms are
# checked on local ranks)
TR=${TEST_REPRO:?}
run_rc 0 "$WORK/tr.out" mpi -np 3 "$TR" auto
check "mpirun -np 3: exact allreduce by MPI, wide blocks mixed in, correctly rounded" \
    test $? -eq 0 -a "$(grep -c '^ok .* backend mpi' "$WORK/tr.out")" = 12 -a "$(grep -c '^not ok' "$WORK/tr.out")" = 0
for op in reduce-scatter allgather broadcast reduce alltoall sendrecv; do
    J=$WORK/op-$op.json
    run_rc 0 "$WORK/op.out" mpi -np 3 "$TP" coll --op $op --dtype f16 --root 2 --sizes 8-16K --iters 3 -q --json "$J"
    check "mpirun -np 3 --op $op f16: 0 wrong" test $? -eq 0 -a "$(sumwrong "$J")" = 0
done

# --backend mpi
for dt in f32 bf16 i64; do
    for redop in sum avg max; do
        J=$WORK/mpi-$dt-$redop.json
        run_rc 0 "$WORK/m.out" mpi -np 3 "$TP" coll --backend mpi --dtype $dt --redop $redop --sizes 8-64K --iters 3 -q --json "$J"
        check "--backend mpi allreduce $dt $redop: 0 wrong, backend recorded" test $? -eq 0 -a "$(sumwrong "$J") $(json_get "$J" "e['backend']")" = "0 mpi"
    done
done
for op in reduce-scatter allgather broadcast reduce alltoall sendrecv; do
    J=$WORK/mpiop-$op.json
    run_rc 0 "$WORK/m.out" mpi -np 2 "$TP" coll --backend mpi --op $op --sizes 8-16K --iters 3 -q --json "$J"
    check "--backend mpi --op $op: 0 wrong" test $? -eq 0 -a "$(sumwrong "$J")" = 0
done
run_rc 0 "$WORK/mx.out" mpi -np 3 "$TP" coll --backend mpi --repro exact --dtype f32 --sizes 8-64K --iters 3 -q --json "$WORK/mx.json"
check "--backend mpi --repro exact: MPI's own algorithm, rounded once, 0 wrong" test $? -eq 0 -a "$(sumwrong "$WORK/mx.json")" = 0
# both backends in one run, compared at the end
J=$WORK/both.json
run_rc 0 "$WORK/both.out" mpi -np 2 "$TP" coll --backend trainpath,mpi --sizes 8,64K,1M --iters 3 --json "$J"
check "--backend trainpath,mpi: one run, both sweeps, 0 wrong" test $? -eq 0 -a \
    "$(json_get "$J" "[x['backend'] for x in r['sizes']], [p['backend'] for p in r['data_path']], sum(x['wrong'] for x in r['sizes'])")" = \
    "['trainpath', 'trainpath', 'trainpath', 'mpi', 'mpi', 'mpi'] ['trainpath', 'mpi'] 0"
check "... and a table comparing their busbw per size" grep_q "^ +1M +[0-9.]+ +[0-9.]+ +[0-9.]+$" "$WORK/both.out"
check "... the document is schema-valid" valid_doc "$J"
"$TP" report html --out "$WORK/both.html" "$J" -q
check "... the report plots each backend as its own series" \
    test "$(grep -c 'allreduce, 2 ranks, tcp, MPI' "$WORK/both.html")" -ge 1 -a \
    "$(grep -o 'allreduce, 2 ranks, tcp<' "$WORK/both.html" | wc -l)" -ge 1
# trainpath step under mpirun: the same weights as local ranks in exact mode
S=(step --steps 6 --batch 24 --sample-size 512 --grad-size 64K --compute-ms 1 --reduce exact --dir "$WORK/step" -q)
mkdir -p "$WORK/step"
run_rc 0 "$WORK/st.out" mpi -np 2 "$TP" "${S[@]}" --json "$WORK/st-mpi.json"
check "mpirun -np 2 trainpath step --reduce exact runs" test $? -eq 0
run_rc 0 "$WORK/st.out" timeout 120 "$TP" "${S[@]}" -n 3 --json "$WORK/st-local.json"
check "... launcher mpi, and the weights' hash of 3 local ranks" \
    test "$(json_get "$WORK/st-mpi.json" "d['config']['launcher'], r['reproducibility']['weights_sha256']")" = "mpi $(json_get "$WORK/st-local.json" "r['reproducibility']['weights_sha256']")"
finish
