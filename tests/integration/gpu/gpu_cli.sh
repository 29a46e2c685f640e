#!/usr/bin/env bash
# The GPU path from the command line (--mem cuda, --backend nccl, --compute
# gpu). Where there is no device (CI, the development machines): every GPU
# option refuses with exit 2, a message that names the option and says why
# (no device, or the path not built), and a valid result document saying
# so; the checks between options hold; the host path is as before. Where
# there is a device, the same commands run and are checked instead:
# bit-exact collectives through staging and through NCCL, a GPU-compute
# step that reproduces its weights.
. "$(dirname "$0")/../lib.sh"

"$TP" --version >"$WORK/ver" 2>&1
check "--version says whether the GPU path is built" grep_q "GPU path (built|is not built)" "$WORK/ver"

refused() { # refused OPTION OUTFILE: the refusal names OPTION and says why
    grep_q "$1: .*(no CUDA device|not built|cannot load)" "$2"
}
doc_refused() { # doc_refused FILE OUTFILE: a valid document whose status is the usage
    # error; a build without the GPU path refuses coll and step while
    # checking the options, before any rank starts, and then (as for every bad
    # option of theirs) may write none
    if grep -q "not built" "$2" && [ ! -e "$1" ]; then
        return 0
    fi
    valid_doc "$1" >/dev/null && [ "$(json_get "$1" "d['status']['code'], d['status']['exit_code']")" = "usage 2" ]
}

HAVE_GPU=0
"$TP" coll -n 1 --mem cuda --sizes 8 --iters 1 -q >"$WORK/probe" 2>&1 && HAVE_GPU=1

if [ "$HAVE_GPU" = 0 ]; then
    echo "# no usable GPU here: $(tail -1 "$WORK/probe")"
    J=$WORK/coll-cuda.json
    check "coll --mem cuda: exit 2" run_rc 2 "$WORK/o1" "$TP" coll -n 2 --mem cuda --sizes 1K --json "$J"
    check "coll --mem cuda: says why" refused "--mem cuda" "$WORK/o1"
    check "coll --mem cuda: the result document says so" doc_refused "$J" "$WORK/o1"
    J=$WORK/coll-nccl.json
    check "coll --backend nccl: exit 2" run_rc 2 "$WORK/o2" "$TP" coll -n 2 --backend nccl --sizes 1K --json "$J"
    check "coll --backend nccl: says why" refused "--backend nccl" "$WORK/o2"
    check "coll --backend nccl: the result document says so" doc_refused "$J" "$WORK/o2"
    J=$WORK/step-gpu.json
    check "step --compute gpu: exit 2" run_rc 2 "$WORK/o3" \
        "$TP" step -n 2 --compute gpu --no-io --steps 2 --dir "$WORK" --json "$J"
    check "step --compute gpu: says why" refused "--compute gpu" "$WORK/o3"
    check "step --compute gpu: the result document says so" doc_refused "$J" "$WORK/o3"
    check "step --mem cuda: exit 2" run_rc 2 "$WORK/o4" "$TP" step -n 2 --mem cuda --no-io --steps 2 --dir "$WORK"
    check "step --mem cuda: says why" refused "--mem cuda" "$WORK/o4"
    check "step --backend nccl: exit 2" run_rc 2 "$WORK/o5" "$TP" step -n 2 --backend nccl --no-io --steps 2 --dir "$WORK"
    check "step --backend nccl: says why" refused "--backend nccl" "$WORK/o5"
    J=$WORK/net-cuda.json
    check "net --mem cuda: exit 2 (before any server is reached)" run_rc 2 "$WORK/o6" \
        "$TP" net lat 127.0.0.1 --port 9 --mem cuda -s 64 --json "$J"
    check "net --mem cuda: says why" refused "--mem cuda" "$WORK/o6"
    check "net --mem cuda: the result document says so" doc_refused "$J" "$WORK/o6"
    check "no rank is left running" bash -c "! pgrep -f '$TP (coll|step)' >/dev/null"
else
    NGPU=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU' || echo 1)
    echo "# $NGPU GPU(s): running the GPU path"
    J=$WORK/staged.json
    check "coll --mem cuda (staged), 2 ranks: exit 0" run_rc 0 "$WORK/p1" \
        "$TP" coll -n 2 --mem cuda --sizes 8-1M --iters 5 --json "$J"
    check "staged: no wrong element, path staged" \
        [ "$(json_get "$J" "sum(x['wrong'] for x in r['sizes']), r['data_path']['path'], e['mem']")" = "0 staged cuda" ]
    J=$WORK/nccl.json
    check "coll --backend nccl, one rank per GPU: exit 0" run_rc 0 "$WORK/p2" \
        "$TP" coll -n "$NGPU" --backend nccl --sizes 8-1M --iters 5 --json "$J"
    check "nccl: no wrong element, path device, algo nccl" \
        [ "$(json_get "$J" "sum(x['wrong'] for x in r['sizes']), r['data_path']['path'], e['algo']")" = "0 device nccl" ]
    J=$WORK/step.json
    check "step --compute gpu, verify-repro 2: exit 0" run_rc 0 "$WORK/p3" \
        "$TP" step -n 1 --compute gpu --no-io --steps 5 --verify-repro 2 --dir "$WORK" --json "$J"
    check "step --compute gpu: products counted, weights identical" \
        [ "$(json_get "$J" "r['calibration']['gpu']['products_per_step'] > 0, r['reproducibility']['identical']")" = "True True" ]
fi

# the option checks need no device
check "--backend nccl with --repro exact: exit 2" run_rc 2 "$WORK/u1" "$TP" coll --backend nccl --repro exact
check "... says NCCL keeps no exact sum" grep_q "exact.*nccl|NCCL" "$WORK/u1"
check "--mem cuda with --backend mpi: exit 2" run_rc 2 "$WORK/u2" "$TP" coll --mem cuda --backend mpi
check "--gpu without a GPU option: exit 2" run_rc 2 "$WORK/u3" "$TP" coll --gpu 0
check "--repro-check with --mem cuda: exit 2" run_rc 2 "$WORK/u4" "$TP" coll --mem cuda --repro-check
check "--algo with --backend nccl: exit 2" run_rc 2 "$WORK/u5" "$TP" coll --backend nccl --algo ring
check "--transport with --backend nccl: exit 2" run_rc 2 "$WORK/u6" "$TP" coll --backend nccl --transport ofi
check "--mem bogus: exit 2" run_rc 2 "$WORK/u7" "$TP" coll --mem bogus
check "step --backend nccl --mem host: exit 2" run_rc 2 "$WORK/u8" "$TP" step --backend nccl --mem host
check "... says the gradient must be on the GPU" grep_q "gradient must live on the GPU" "$WORK/u8"
check "step --gemm-size without --compute gpu: exit 2" run_rc 2 "$WORK/u9" "$TP" step --gemm-size 512
check "step --compute tpu: exit 2" run_rc 2 "$WORK/u10" "$TP" step --compute tpu
check "net --gpu without --mem cuda: exit 2" run_rc 2 "$WORK/u11" "$TP" net lat 127.0.0.1 --gpu 0

# the host path as before, and its documents say so
J=$WORK/host.json
check "coll --mem host: exit 0" run_rc 0 "$WORK/h1" "$TP" coll -n 2 --mem host --sizes 1K,64K --iters 3 --json "$J"
host_doc() {
    valid_doc "$1" >/dev/null &&
        [ "$(json_get "$1" "sum(x['wrong'] for x in r['sizes']), r['data_path']['path'], e['mem'], d['config']['mem']")" = "0 host host host" ]
}
check "coll --mem host: no wrong element, host path, schema-valid" host_doc "$J"
finish
