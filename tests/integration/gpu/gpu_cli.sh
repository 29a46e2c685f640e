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

# once(OUT): the refusal is said once, by rank 0, however many ranks met it
once() {
    [ "$(grep -c 'error:' "$1")" -eq 1 ] && return 0
    sed 's/^/#   /' "$1" | head -5
    return 1
}

HAVE_GPU=0
"$TP" coll -n 1 --mem cuda --sizes 8 --iters 1 -q >"$WORK/probe" 2>&1 && HAVE_GPU=1

if [ "$HAVE_GPU" = 0 ]; then
    echo "# no usable GPU here: $(tail -1 "$WORK/probe")"
    J=$WORK/coll-cuda.json
    check "coll --mem cuda: exit 2" run_rc 2 "$WORK/o1" "$TP" coll -n 2 --mem cuda --sizes 1K --json "$J"
    check "coll --mem cuda: says why" refused "--mem cuda" "$WORK/o1"
    check "... once, not once per rank" once "$WORK/o1"
    check "coll --mem cuda: the result document says so" doc_refused "$J" "$WORK/o1"
    J=$WORK/coll-nccl.json
    check "coll --backend nccl: exit 2" run_rc 2 "$WORK/o2" "$TP" coll -n 2 --backend nccl --sizes 1K --json "$J"
    check "coll --backend nccl: says why" refused "--backend nccl" "$WORK/o2"
    check "... once, not once per rank" once "$WORK/o2"
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
    check "... once, not once per rank" once "$WORK/o5"
    J=$WORK/net-cuda.json
    check "net --mem cuda: exit 2 (before any server is reached)" run_rc 2 "$WORK/o6" \
        "$TP" net lat 127.0.0.1 --port 9 --mem cuda -s 64 --json "$J"
    check "net --mem cuda: says why" refused "--mem cuda" "$WORK/o6"
    check "net --mem cuda: the result document says so" doc_refused "$J" "$WORK/o6"
    # (this test's own: each of the runs above names a file under $WORK; a
    # test beside it may run coll or step of its own)
    check "no rank is left running" bash -c "! pgrep -f '$TP (coll|step) .*$WORK' >/dev/null"

    # The paths around the device calls, through the TP_GPU_EMULATE test
    # double (device memory is host memory; no CUDA, no NCCL): staging, the
    # check through device buffers, the step's GPU compute and buckets,
    # net's staged flows. Only a build with the path has it.
    if grep -q "GPU path built" "$WORK/ver"; then
        EMU=(env TP_GPU_EMULATE=1)
        emu_coll() { # emu_coll FILE ARGS...: an emulated staged sweep, all bits right
            local j=$1; shift
            run_rc 0 "$j.out" "${EMU[@]}" "$TP" coll --mem cuda --iters 3 -q --json "$j" "$@" &&
                [ "$(json_get "$j" "sum(x['wrong'] for x in r['sizes']), all(x['checked'] or x.get('count') == 0 for x in r['sizes']), r['data_path'][0]['path'], d['provenance']['gpu']['emulated']")" = "0 True staged True" ]
        }
        # (a collective that reduces nothing takes no --redop: "-")
        for spec in "allreduce f32 sum" "allreduce bf16 avg" "reduce-scatter f64 max" \
                    "allgather i32 -" "alltoall f16 -" "broadcast i64 -" \
                    "sendrecv f32 -" "reduce f32 prod"; do
            set -- $spec
            redop=()
            [ "$3" = - ] || redop=(--redop "$3")
            check "emulated --mem cuda: coll $1 $2 ${redop[*]}, 3 ranks, staged and bit-exact" \
                emu_coll "$WORK/emu-$1-$2.json" -n 3 --op "$1" --dtype "$2" "${redop[@]}" --sizes 8,4K,1M
        done
        check "emulated --mem cuda over ofi shm: staged (no FI_HMEM for emulated memory), bit-exact" \
            emu_coll "$WORK/emu-ofi.json" -n 2 --transport ofi -P shm --intra fabric --sizes 8,64K
        run_rc 0 "$WORK/x1" "$TP" coll -n 3 --repro exact --sizes 4K,1M --iters 3 -q --json "$WORK/x-host.json"
        emu_coll "$WORK/x-cuda.json" -n 3 --repro exact --sizes 4K,1M
        check "--repro exact: the same result bits from GPU memory as from host memory" \
            [ "$(json_get "$WORK/x-host.json" "[x['result_sha256'] for x in r['sizes']]")" = \
              "$(json_get "$WORK/x-cuda.json" "[x['result_sha256'] for x in r['sizes']]")" ]
        check "emulated --backend nccl: exit 2 (NCCL is not emulated)" \
            run_rc 2 "$WORK/x2" "${EMU[@]}" "$TP" coll -n 2 --backend nccl --sizes 8
        STEPA=(--no-io --steps 6 --batch 32 --dir "$WORK" -q)
        run_rc 0 "$WORK/s0" "$TP" step -n 2 "${STEPA[@]}" --json "$WORK/st-host.json"
        check "emulated step --compute gpu, verify-repro 2: exit 0" run_rc 0 "$WORK/s1" \
            "${EMU[@]}" "$TP" step -n 2 --compute gpu --gemm-size 32 --verify-repro 2 "${STEPA[@]}" \
            --json "$WORK/st-gpu.json"
        check "... products counted, gradient on the device, staged sync" \
            [ "$(json_get "$WORK/st-gpu.json" "r['calibration']['gpu']['products_per_step'] >= 1, r['calibration']['gpu']['gemm_side'], r['data_path']['gradients'], r['reproducibility']['identical']")" = "True 32 cuda True" ]
        WL=$SRC/tests/fixtures/workload/ddp-mlp.json
        check "emulated step --workload --compute gpu (a recorded DDP job): exit 0" run_rc 0 "$WORK/sw" \
            "${EMU[@]}" "$TP" step -n 2 --workload "$WL" --compute gpu --gemm-size 64 --no-io --steps 4 \
            -q --json "$WORK/st-wl.json"
        # (an order of magnitude, not the accuracy: this test shares the
        # machine, and the emulated device's products are the CPU's, so a
        # busy neighbour slows them: 1.4-1.6x alone here, 2.5-3.3x beside
        # two busy loops; the replay without its products gives 0.0003x.
        # The accuracy on the CPU is step_workload's, which runs alone)
        ratio=$(json_get "$WORK/st-wl.json" "round(r['workload']['replayed_over_recorded']['compute'], 3)")
        check "... its recorded compute as matrix products: within 0.2x-10x of the recording (${ratio}x)" \
            [ "$(json_get "$WORK/st-wl.json" "0.2 < r['workload']['replayed_over_recorded']['compute'] < 10, r['calibration']['gpu']['gemm_side'], d['config']['workload']['source']")" = "True 64 pytorch-ddp" ]
        check "emulated step --mem cuda (CPU compute): exit 0" run_rc 0 "$WORK/s2" \
            "${EMU[@]}" "$TP" step -n 2 --mem cuda "${STEPA[@]}" --json "$WORK/st-mem.json"
        check "the weights are the same bits whether the gradient went through the GPU or not" \
            [ "$(json_get "$WORK/st-host.json" "r['reproducibility']['weights_sha256']")" = \
              "$(json_get "$WORK/st-gpu.json" "r['reproducibility']['weights_sha256']")" ] && \
            [ "$(json_get "$WORK/st-host.json" "r['reproducibility']['weights_sha256']")" = \
              "$(json_get "$WORK/st-mem.json" "r['reproducibility']['weights_sha256']")" ]
        run_rc 0 "$WORK/s3" "${EMU[@]}" "$TP" step -n 1 --reduce exact --mem cuda "${STEPA[@]}" --json "$WORK/st-e1.json"
        run_rc 0 "$WORK/s4" "${EMU[@]}" "$TP" step -n 3 --reduce exact --mem cuda "${STEPA[@]}" --json "$WORK/st-e3.json"
        check "exact mode through GPU memory: the same weights for 1 and 3 ranks" \
            [ "$(json_get "$WORK/st-e1.json" "r['reproducibility']['weights_sha256']")" = \
              "$(json_get "$WORK/st-e3.json" "r['reproducibility']['weights_sha256']")" ]
        if start_server emu "${EMU[@]}" -- --bind 127.0.0.1; then
            for t in "lat tcp" "bw tcp" "bibw tcp" "lat shm" "bw shm"; do
                set -- $t
                J=$WORK/net-$1-$2.json
                prov=(); [ "$2" = shm ] && prov=(-P shm)
                run_rc 0 "$J.out" "${EMU[@]}" "$TP" net "$1" 127.0.0.1 -p "$PORT" --mem cuda --check \
                    -s 8,64K -n 50 "${prov[@]}" --json "$J"
                check "emulated net $1 over $2 --mem cuda --check: both ends staged, every byte right" \
                    [ "$(json_get "$J" "d['status']['ok'], d['provenance']['transport']['mem_path'][:6], d['provenance']['peer']['endpoint']['mem_path'][:6]")" = "True staged staged" ]
            done
        fi
        if start_server emucorrupt "${EMU[@]}" TP_FAULT_CORRUPT=1 -- --bind 127.0.0.1; then
            check "a byte corrupted before staging is caught after it (exit 1)" run_rc 1 "$WORK/c1" \
                "${EMU[@]}" "$TP" net lat 127.0.0.1 -p "$PORT" --mem cuda --check -s 4K -n 10
            check "... saying where" grep_q "payload mismatch: 4096-byte message 0, byte 2048" "$WORK/c1"
        fi
    fi
else
    NGPU=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU' || echo 1)
    echo "# $NGPU GPU(s): running the GPU path"
    J=$WORK/staged.json
    check "coll --mem cuda (staged), 2 ranks: exit 0" run_rc 0 "$WORK/p1" \
        "$TP" coll -n 2 --mem cuda --sizes 8-1M --iters 5 --json "$J"
    check "staged: no wrong element, path staged" \
        [ "$(json_get "$J" "sum(x['wrong'] for x in r['sizes']), r['data_path'][0]['path'], e['mem']")" = "0 staged cuda" ]
    J=$WORK/nccl.json
    check "coll --backend nccl, one rank per GPU: exit 0" run_rc 0 "$WORK/p2" \
        "$TP" coll -n "$NGPU" --backend nccl --sizes 8-1M --iters 5 --json "$J"
    check "nccl: no wrong element, path device, algo nccl" \
        [ "$(json_get "$J" "sum(x['wrong'] for x in r['sizes']), r['data_path'][0]['path'], e['algo']")" = "0 device nccl" ]
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
check "step --algo with --backend nccl: exit 2" run_rc 2 "$WORK/u12" "$TP" step --backend nccl --algo ring
check "step --gemm-size without --compute gpu: exit 2" run_rc 2 "$WORK/u9" "$TP" step --gemm-size 512
check "step --compute tpu: exit 2" run_rc 2 "$WORK/u10" "$TP" step --compute tpu
check "net --gpu without --mem cuda: exit 2" run_rc 2 "$WORK/u11" "$TP" net lat 127.0.0.1 --gpu 0

# the host path as before, and its documents say so
J=$WORK/host.json
check "coll --mem host: exit 0" run_rc 0 "$WORK/h1" "$TP" coll -n 2 --mem host --sizes 1K,64K --iters 3 --json "$J"
host_doc() {
    valid_doc "$1" >/dev/null &&
        [ "$(json_get "$1" "sum(x['wrong'] for x in r['sizes']), r['data_path'][0]['path'], e['mem'], d['config']['mem']")" = "0 host host host" ]
}
check "coll --mem host: no wrong element, host path, schema-valid" host_doc "$J"
finish
