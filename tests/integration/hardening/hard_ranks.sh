#!/usr/bin/env bash
# Class 5 of issue 42 (docs/reliability.md, "Ranks"): the launcher's
# variables never override what the user asked without a word. A launcher's
# rank variable left in the environment (an `srun --pty` shell, a shell
# started by mpirun) made `coll -n 4` a group of one that exited 0. Now: an
# explicit --launcher wins over the variables; an explicit -n that a
# launcher's variables contradict, a rank that is not a rank of its size and
# a size that is no number are refused before anything starts, exit 2, the
# message naming the variable, the --json document saying so. Slurm's own
# variables without an MPI plugin's (srun --pty with --mpi=none) make no
# launcher.
. "$(dirname "$0")/../lib.sh"

port=$(free_port)
# exit | pattern the message must contain | environment (NAME=VALUE,...) |
# arguments | doc: y when this process would be rank 0 (the one that writes
# the --json document; a process whose rank variable is not 0 writes none)
cases=(
    "2|-n 4 asks for 4 ranks, but PMI_RANK=0 and PMI_SIZE=1 say mpirun or srun started this process as rank 0 of 1: unset PMI_RANK|PMI_RANK=0,PMI_SIZE=1|coll -n 4 --sizes 1K|y"
    "2|-n 2 asks for 2 ranks, but OMPI_COMM_WORLD_RANK=0 and OMPI_COMM_WORLD_SIZE=1 say|OMPI_COMM_WORLD_RANK=0,OMPI_COMM_WORLD_SIZE=1|coll -n 2 --sizes 1K|y"
    "2|-n 2 asks for 2 ranks, but PMIX_RANK=0 and SLURM_STEP_NUM_TASKS=1 say|PMIX_RANK=0,SLURM_PROCID=0,SLURM_STEP_NUM_TASKS=1|step -n 2 --no-io --steps 2|y"
    "2|-n 2 asks for 2 ranks, but PMIX_RANK=0 says mpirun or srun started this process, with a count of its own|PMIX_RANK=0|coll --ranks 2 --sizes 1K|y"
    "2|-n 2 asks for 2 ranks, but RANK=0 and WORLD_SIZE=1 say torchrun started|RANK=0,WORLD_SIZE=1,MASTER_ADDR=127.0.0.1,MASTER_PORT=$port|coll -n 2 --sizes 1K|y"
    "2|PMI_RANK='3' is not a rank of PMI_SIZE=2 \(0\.\.1\)|PMI_RANK=3,PMI_SIZE=2|coll --sizes 1K|n"
    "2|OMPI_COMM_WORLD_SIZE='x' is not a number of ranks|OMPI_COMM_WORLD_RANK=0,OMPI_COMM_WORLD_SIZE=x|step --no-io --steps 2|y"
    "2|RANK='5' is not a rank of WORLD_SIZE=2 \(0\.\.1\)|RANK=5,WORLD_SIZE=2,MASTER_ADDR=127.0.0.1,MASTER_PORT=$port|coll --launcher env --sizes 1K|n"
)
i=0
for c in "${cases[@]}"; do
    IFS='|' read -r want pat envs args doc <<<"$c"
    i=$((i + 1))
    IFS=',' read -r -a ev <<<"$envs"
    # shellcheck disable=SC2086
    timeout 20 env "${ev[@]}" "$TP" $args --json "$WORK/r$i.json" >"$WORK/r$i.out" 2>&1
    rc=$?
    check "$envs $args: exit $want (got $rc)" test "$rc" -eq "$want"
    check "... the message names the variable" grep -qE -- "$pat" "$WORK/r$i.out"
    if [ "$doc" = y ]; then
        check "... a valid failed document, code usage" eval \
            "[ \"\$(json_get '$WORK/r$i.json' \"d['status']['code']\")\" = usage ] && valid_doc '$WORK/r$i.json'"
    else
        check "... no document (not rank 0)" test ! -e "$WORK/r$i.json"
    fi
done

# validate has no -n: a rank that is not a rank of its size is refused too
timeout 20 env RANK=5 WORLD_SIZE=2 MASTER_ADDR=127.0.0.1 MASTER_PORT="$port" "$TP" validate \
    --only net --out "$WORK/v" >"$WORK/v.out" 2>&1
rc=$?
check "validate with RANK=5 WORLD_SIZE=2: exit 2 (got $rc), naming RANK, nothing created" \
    eval "[ $rc = 2 ] && grep -q \"RANK='5' is not a rank of WORLD_SIZE=2\" '$WORK/v.out' && [ ! -e '$WORK/v' ]"

# what the user asked wins: --launcher local forks -n ranks whatever is set;
# Slurm's variables alone are no launcher; -n equal to the launcher's size
ranks() { json_get "$1" "d['status']['ok'], d['config']['ranks']"; }
timeout 60 env PMI_RANK=0 PMI_SIZE=1 "$TP" coll -n 3 --launcher local --sizes 1K --time 50ms \
    --json "$WORK/local.json" >"$WORK/local.out" 2>&1
check "PMI_RANK=0 PMI_SIZE=1 coll -n 3 --launcher local: 3 ranks" \
    test "$(ranks "$WORK/local.json")" = "True 3"
timeout 60 env SLURM_PROCID=0 SLURM_NTASKS=1 SLURM_STEP_NUM_TASKS=1 SLURM_STEP_ID=0 "$TP" coll \
    -n 2 --sizes 1K --time 50ms --json "$WORK/slurm.json" >"$WORK/slurm.out" 2>&1
check "an srun --pty shell without an MPI plugin: coll -n 2 forks 2 ranks" \
    test "$(ranks "$WORK/slurm.json")" = "True 2"
port=$(free_port)
timeout 60 env RANK=0 WORLD_SIZE=1 MASTER_ADDR=127.0.0.1 MASTER_PORT="$port" "$TP" coll -n 1 \
    --sizes 1K --time 50ms --json "$WORK/one.json" >"$WORK/one.out" 2>&1
check "RANK=0 WORLD_SIZE=1 coll -n 1: the launcher's group of one, as asked" \
    test "$(json_get "$WORK/one.json" "d['status']['ok'], d['config']['launcher']")" = "True env"
finish
