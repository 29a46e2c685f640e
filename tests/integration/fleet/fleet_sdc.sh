#!/usr/bin/env bash
# The SDC screen (docs/sdc.md) across an allocation of 3 ranks on loopback,
# under the env launcher: a clean run names nobody (exit 0, every verdict
# pass); with the test hook TP_FAULT_SDC=RANK:STEP (docs/env.md) one bit of
# one rank's data flipped at one step, that node alone is named corrupt with
# the step (exit 1 on every rank, the other two pass); the same flip under
# mpirun (the clean path under mpirun: validate_alloc, boot_mpi); two nodes
# that disagree name nobody: no majority; the GPUs' screen (sdc-gpu) on the
# emulated device: clean, a node's GPU named by the other nodes', one GPU of
# three named by its node's others. Then `trainpath sdc` alone:
# a bit flipped in every thread (nothing to compare against: exit 0, its
# chain differs from a clean node's from that step on), in one thread of
# three (that thread named, exit 1), by time, and its bad input (exit 2,
# naming the option). --sdc-minutes keeps each screen a fraction of a
# second, sanitizers included.
. "$(dirname "$0")/../lib.sh"

N=3
port=$(free_port)
SOAK=(--only sdc --sdc-minutes 0.005)
# env_run NAME [VAR=VALUE...]: every rank of an env-launched validate, rank
# 0's exit in rc0, all of them in rcs
env_run() {
    local name=$1 k
    shift
    port=$(free_port)
    for k in $(seq 0 $((N - 1))); do
        env "$@" RANK=$k WORLD_SIZE=$N MASTER_ADDR=127.0.0.1 MASTER_PORT=$port \
            timeout 120 "$TP" validate "${SOAK[@]}" --out "$WORK/$name" >"$WORK/$name$k.out" 2>&1 &
        pid[$k]=$!
        PIDS+=($!)
    done
    rcs=""
    for k in $(seq 0 $((N - 1))); do wait "${pid[$k]}"; rcs="$rcs$?"; done
    rc0=${rcs:0:1}
    sed 's/^/# /' "$WORK/${name}0.out" | head -8
}
verdicts() { # verdicts NAME: each node's status, in rank order
    /usr/bin/python3 -c "
import json, sys
print(' '.join(json.loads(l)['status'] for l in open(sys.argv[1])))" "$WORK/$1/nodes.jsonl"
}
field() { # field NAME NODE KEY...: those keys of the node's verdict line
    /usr/bin/python3 -c "
import json, sys
v = [json.loads(l) for l in open(sys.argv[1])][int(sys.argv[2])]
print(' '.join(str(v[k]) for k in sys.argv[3:]))" "$WORK/$1/nodes.jsonl" "${@:2}"
}
evidence() { # evidence NAME NODE: its evidence's scope and step, and what it says
    /usr/bin/python3 -c "
import json, sys
v = [json.loads(l) for l in open(sys.argv[1])][int(sys.argv[2])]
print(v['evidence']['scope'], v['evidence']['step'], '|', v['says'])" "$WORK/$1/nodes.jsonl" "$2"
}
evidence_gpu() { # evidence_gpu NAME NODE: its evidence's scope, and what it says
    /usr/bin/python3 -c "
import json, sys
v = [json.loads(l) for l in open(sys.argv[1])][int(sys.argv[2])]
print(v['evidence']['scope'], '|', v['says'])" "$WORK/$1/nodes.jsonl" "$2"
}
# the documents and verdict lines to check against the schema, at the end
# in one go (each start of the checker costs a few tenths of a second)
DOCS=()
LINES=()
keep_run() { # keep_run NAME: its fleet.json, every node's sdc.json, its verdict lines
    DOCS+=("$WORK/$1/fleet.json" "$WORK/$1"/nodes/*/sdc.json)
    LINES+=("$WORK/$1/nodes.jsonl")
}

# ---- the env launcher ----
env_run clean
check "env, clean: every rank exits 0 ($rcs)" test "$rcs" = 000
check "... nobody named: every verdict pass" test "$(verdicts clean)" = "pass pass pass"
check "... fleet.json's sdc: the 3 nodes agree" test "$(json_run "$WORK/clean/fleet.json" "
s = r['sdc']
print(s['named'], s['majority'], s['with_chain'], s['steps_compared'] > 40)")" = "[] 3 3 True"
keep_run clean

env_run flip TP_FAULT_SDC=1:40
check "env, a bit of rank 1's data flipped at step 40: every rank exits 1 ($rcs)" test "$rcs" = 111
check "... node 1 alone named corrupt, the others pass" test "$(verdicts flip)" = "pass corrupt pass"
check "... with the step it diverged at, by the majority" test "$(evidence flip 1)" = \
    "node 40 | sdc: result hash diverged from the majority (2 of 3 nodes) at step 40"
check "... a hardware cause, to drain; no tier judged (tier null)" test "$(field flip 1 cause action tier)" = \
    "hardware drain None"
check "... fleet.json names it too" test "$(json_run "$WORK/flip/fleet.json" "
v = [n for n in r['nodes'] if n['status'] == 'corrupt']
print(len(v), v[0]['label'].endswith('#1'), [x['node'] for x in r['sdc']['named']])")" = "1 True [1]"
check "... rank 0 says so: its sdc test failed on that node alone" \
    grep_q "^FAIL sdc .*FAIL on 1 of 3 nodes \(.*#1\): result hash diverged from the majority \(2 of 3 nodes\) at step 40" "$WORK/flip0.out"
check "... and its verdict line" grep_q "node .*#1: corrupt \(hardware; drain\): sdc: " "$WORK/flip0.out"
keep_run flip

N=2
env_run two TP_FAULT_SDC=0:25
N=3
check "env, 2 nodes that disagree from step 25: exit 1 ($rcs)" test "$rcs" = 11
check "... no majority: both undecided (rerun), nobody blamed" test \
    "$(verdicts two) $(field two 0 action) $(field two 1 action)" = "undecided undecided rerun rerun"
check "... saying so" test "$(evidence two 0)" = "node 25 | sdc: the 2 nodes disagree from step 25; no majority"
keep_run two

# ---- mpirun ----
if command -v mpirun >/dev/null; then
    export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_btl=self,tcp
    export OMPI_MCA_mpi_yield_when_idle=1
    mpi_run() { # mpi_run NAME [VAR=VALUE...]
        local name=$1
        shift
        # (Open MPI's own allocations are not ours to report under ASan)
        env "$@" ASAN_OPTIONS=detect_leaks=0:abort_on_error=1 timeout 120 mpirun --oversubscribe \
            -n $N "$TP" validate "${SOAK[@]}" --out "$WORK/$name" >"$WORK/$name.out" 2>&1
        rc0=$?
        sed 's/^/# /' "$WORK/$name.out" | head -6
    }
    mpi_run mpiflip TP_FAULT_SDC=2:7
    check "mpirun -n 3, a bit of rank 2's data flipped at step 7: exit 1" test "$rc0" = 1
    check "... node 2 alone named, at step 7, the other two pass" test "$(verdicts mpiflip) | $(evidence mpiflip 2)" = \
        "pass pass corrupt | node 7 | sdc: result hash diverged from the majority (2 of 3 nodes) at step 7"
    keep_run mpiflip
else
    not_ok "mpirun missing (openmpi-bin is in scripts/install-deps.sh)"
fi

# ---- the GPUs' screen (sdc-gpu), on the emulated device (TP_GPU_EMULATE:
#      its products on the CPU in another order than a core's chain; the
#      cuBLAS calls themselves need a GPU) ----
if "$TP" --version | grep -q "GPU path built"; then
    env_run gpuclean TP_GPU_EMULATE=2
    check "env, 2 emulated GPUs a node, clean: every rank exits 0 ($rcs), every verdict pass" test \
        "$rcs $(verdicts gpuclean)" = "000 pass pass pass"
    check "... the 3 nodes' GPU chains agree, and each node's sdc-gpu test ran" test "$(json_run \
        "$WORK/gpuclean/fleet.json" "
g = r['sdc']['gpus']
print(len(g), g[0]['key'], g[0]['with_chain'], g[0]['majority'], g[0]['steps_compared'] > 40, r['sdc']['named'])")" = "1 emulated 3 3 True []"
    keep_run gpuclean
    DOCS+=("$WORK/gpuclean"/nodes/*/sdc-gpu.json)
    env_run gpuflip TP_GPU_EMULATE=1 TP_FAULT_SDC=1:40:22:g0
    check "env, GPU 0 of node 1 flipped at step 40: every rank exits 1 ($rcs)" test "$rcs" = 111
    check "... node 1 alone named corrupt, by the other nodes' GPUs of its kind" test \
        "$(verdicts gpuflip) | $(field gpuflip 1 cause action)" = "pass corrupt pass | hardware drain"
    check "... evidence: the sdc-gpu test, the GPU scope, the step" test "$(json_run \
        "$WORK/gpuflip/fleet.json" "
n = r['sdc']['named'][0]
e = n['evidence']
print(n['node'], e['test'], e['scope'], e['kind'], e['step'], r['sdc']['gpus'][0]['with_chain'], r['sdc']['gpus'][0]['majority'])")" = "1 sdc-gpu gpu emulated 40 3 2"
    check "... rank 0 says so: node 1's sdc-gpu test failed, its cores' sdc passed" \
        grep_q "^FAIL sdc-gpu .*FAIL on 1 of 3 nodes \(.*#1\): emulated GPUs: result hash diverged from the majority \(2 of 3 nodes\) at step 40" "$WORK/gpuflip0.out"
    keep_run gpuflip
    DOCS+=("$WORK/gpuflip"/nodes/*/sdc-gpu.json)
    env_run gpuone TP_GPU_EMULATE=3 TP_FAULT_SDC=2:30:22:g1
    check "env, GPU 1 of node 2's three flipped at step 30: exit 1 ($rcs)" test "$rcs" = 111
    check "... node 2 named corrupt: one of its GPUs against its others" test \
        "$(verdicts gpuone) | $(evidence_gpu gpuone 2)" = \
        "pass pass corrupt | gpu | sdc-gpu: one GPU of this node against its others: GPU 1 (emulated (TP_GPU_EMULATE: host memory, CPU matrix product)): result hash diverged from the majority (2 of 3 GPUs) at step 30"
    keep_run gpuone
    DOCS+=("$WORK/gpuone"/nodes/*/sdc-gpu.json)
    TP_GPU_EMULATE=3 TP_FAULT_SDC=0:40:22:g2 run_rc 1 "$WORK/g.out" "$TP" sdc --gpu --steps 120 --threads 2 -q --json "$WORK/g.json"
    check "sdc --gpu, GPU 2 of 3 flipped at step 40: exit 1, naming it" grep_q \
        "error: GPU 2 \(emulated .*\): result hash diverged from the majority \(2 of 3 GPUs\) at step 40" "$WORK/g.out"
    check "... the cores agree, and the GPUs' chain is not a core's" test "$(json_run "$WORK/g.json" "
g = r['gpu_chains'][0]
print(r['diverged'], r['gpus'], [x['call'] for x in r['gpus_detail']], g['gpus'], g['majority'], g['chain']['final'] != r['chain']['final'])")" = \
        "0 3 ['agree', 'agree', 'odd'] 3 2 True"
    DOCS+=("$WORK/g.json")
else
    ok "# skip: the GPU path is not built, so no emulated GPU for sdc-gpu"
fi
if [ ! -e /dev/nvidia0 ]; then
    run_rc 2 "$WORK/ng.out" env -u TP_GPU_EMULATE "$TP" sdc --gpu --steps 5
    check "sdc --gpu with no GPU here: exit 2, naming the option" grep_q "sdc --gpu: " "$WORK/ng.out"
fi

# ---- trainpath sdc alone ----
# (its clean chain: a node's of the clean run above, the same seed and chain)
TP_FAULT_SDC=0:40 run_rc 0 "$WORK/b.out" "$TP" sdc --steps 120 --threads 2 --json "$WORK/b.json"
check "sdc with a bit flipped at step 40 in every thread: exit 0 (the threads agree)" test $? -eq 0
check "... the table says every thread computed the same" grep_q "every thread computed the same" "$WORK/b.out"
check "... its chain is the clean one's to step 39, another from step 40 on" test "$(/usr/bin/python3 -c "
import json, sys
a, b = ([c['hashes'][i:i + 16] for i in range(0, len(c['hashes']), 16)]
        for c in (json.load(open(p))['results']['chain'] for p in sys.argv[1:3]))
d = [x != y for x, y in zip(a, b)]
print(d.index(True) + 1, all(d[39:]))" "$(ls "$WORK"/clean/nodes/*/sdc.json | head -1)" "$WORK/b.json")" \
    = "40 True"
check "... the document says the hook planted it, the threads agree" test "$(json_run "$WORK/b.json" "
print(r['test_hook'], r['majority'], r['diverged'], r['first'], r['chain']['steps'])")" = \
    "{'step': 40, 'bit': 22, 'thread': -1, 'gpu': -1} 2 0 None 120"
TP_FAULT_SDC=0:40:22:1 run_rc 1 "$WORK/c.out" "$TP" sdc --steps 120 --threads 3 -q --json "$WORK/c.json"
check "a bit flipped at step 40 in thread 1 of 3: exit 1" test $? -eq 0
check "... naming the thread and the step" grep_q "error: thread 1 \(CPU [0-9]+\): result hash diverged from the majority \(2 of 3 threads\) at step 40" "$WORK/c.out"
check "... its document too (status check)" test "$(json_run "$WORK/c.json" "
print(d['status']['code'], r['diverged'], r['first']['thread'], r['first']['step'])")" = "check 1 1 40"
run_rc 0 "$WORK/t.out" "$TP" sdc --time 100ms --threads 2 -q --json "$WORK/t.json"
check "sdc --time 100ms: exit 0, both threads the same steps, ending on a checkpoint" test "$(json_run \
    "$WORK/t.json" "
s, L = r['steps'], 0
while s > 256 * (2 ** (L + 1) - 1):
    L += 1
print(len({t['steps'] for t in r['threads_detail']}), (s - 256 * (2 ** L - 1)) % 2 ** L == 0, d['config']['time_s'])")" \
    = "1 True 0.1"
DOCS+=("$WORK/b.json" "$WORK/c.json" "$WORK/t.json")

expect_cases \
    "2|--time: cannot parse 'x' as a duration|sdc --time x" \
    "2|--steps and --time: one or the other|sdc --steps 5 --time 1s" \
    "2|--sdc-minutes x: a number of minutes|validate --sdc-minutes x --out $WORK/bad1" \
    "2|--sdc-minutes: the sdc test is not in --only io|validate --only io --sdc-minutes 1 --out $WORK/bad2"
TP_FAULT_SDC=junk run_rc 2 "$WORK/h.out" "$TP" sdc --steps 5
check "a malformed test hook: exit 2, naming it" grep_q "TP_FAULT_SDC=junk: RANK:STEP" "$WORK/h.out"
run_rc 2 "$WORK/u.out" "$TP" sdc --steps 0 --json "$WORK/u.json"
check "sdc --steps 0: exit 2, its document status usage, naming the option" test "$(json_get \
    "$WORK/u.json" "d['status']['code'], '--steps' in d['status']['message']")" = "usage True"
DOCS+=("$WORK/u.json")
check "... nothing left of validate's refused runs" test ! -e "$WORK/bad1" -a ! -e "$WORK/bad2"

cat "${LINES[@]}" >"$WORK/lines.jsonl"
check "every document valid: fleet.json and the nodes' sdc.json of the runs, sdc's own (${#DOCS[@]})" \
    valid_doc "${DOCS[@]}"
check "every verdict line valid ($(wc -l <"$WORK/lines.jsonl"))" \
    valid_doc --lines validate_node_line "$WORK/lines.jsonl"
finish
