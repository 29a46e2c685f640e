#!/usr/bin/env bash
# Class 3 of the third hardening round (docs/reliability.md, "Hardening
# III"): an output path that is an input must not destroy it. Every command
# that takes an input and an output path refuses an output that is the same
# file as an input (by device and inode: through a symbolic or hard link
# too, "-" as standard input), or a .json file in an input folder that is
# read, before anything is written: exit 2 (3 for check and report gate,
# their code for input they cannot use) naming both paths, the input
# unchanged, no other file written. Outputs that are not regular files
# (/dev/null) are never refused.
. "$(dirname "$0")/../lib.sh"

F=$WORK/in
mkdir -p "$F/results"
cp "$SRC/tests/fixtures/nccl/nccl_v2.4_fp16.log" "$F/nccl.log"
cp "$SRC/docs/examples/plan.yaml" "$F/plan.yaml"
cp "$SRC/docs/examples/policy.yaml" "$F/policy.yaml"
cp "$SRC/docs/examples/fleet.yaml" "$F/fleet.yaml"
cp "$SRC/tests/fixtures/workload/ddp-mlp.json" "$F/ddp.json"
cp /proc/self/mountinfo "$F/mountinfo"
head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n' >"$F/key"
chmod 600 "$F/key"
"$TP" sdc --steps 20 --threads 2 --json "$F/results/sdc.json" >/dev/null 2>&1
cp "$F/results/sdc.json" "$F/doc.json"
"$TP" sdc --steps 20 --threads 2 --json "$F/doc2.json" >/dev/null 2>&1
printf 'thresholds:\n  - metric: sdc.steps\n    min: 1\n' >"$F/thr.yaml"
ln -s plan.yaml "$F/plan-link.yaml"
ln "$F/plan.yaml" "$F/plan-hard.yaml"
"$TP" report add --db "$F/h.sqlite" "$F/doc.json" >/dev/null 2>&1
check "the inputs made" test -s "$F/results/sdc.json" -a -s "$F/doc2.json" -a -s "$F/h.sqlite"

sums() { (cd "$F" && find . -type f | sort | xargs md5sum); }
sums >"$WORK/before"

# refused WANT WHAT-OUT OUT WHAT-IN IN -- ARGS...: `trainpath ARGS` exits WANT
# within 20 s, says "WHAT-OUT OUT is ... WHAT-IN IN", and leaves every input
# as it was and nothing new
refused() {
    local want=$1 wo=$2 out=$3 wi=$4 in=$5
    shift 6
    local rc
    timeout 20 "$TP" "$@" >"$WORK/out" 2>&1 <"${STDIN:-/dev/null}"
    rc=$?
    local desc="trainpath $* -> exit $want, naming $wo $out and $wi $in"
    if [ "$rc" -eq "$want" ] && grep -qF -- "$wo $out" "$WORK/out" && grep -qF -- "$wi $in" "$WORK/out" &&
        grep -q "writing it would destroy" "$WORK/out"; then
        ok "$desc"
    else
        not_ok "$desc (got exit $rc)"
        sed 's/^/#   /' "$WORK/out" | head -5
    fi
    sums >"$WORK/after"
    check "... every input as it was, nothing written" cmp -s "$WORK/before" "$WORK/after"
    cp "$WORK/after" "$WORK/before" # the next case on its own
}

imp=(workload import --samples 32 --sample-bytes 1024 --compute-ms 5)
refused 2 --out "$F/nccl.log" "the input" "$F/nccl.log" -- "${imp[@]}" --out "$F/nccl.log" "$F/nccl.log"
STDIN=$F/nccl.log refused 2 --out "$F/nccl.log" "the input" "- (standard input)" -- \
    "${imp[@]}" --out "$F/nccl.log" -
refused 2 --json "$F/plan.yaml" "the plan file" "$F/plan.yaml" -- plan "$F/plan.yaml" --json "$F/plan.yaml"
refused 2 --json "$F/plan-link.yaml" "the plan file" "$F/plan.yaml" -- \
    plan "$F/plan.yaml" --json "$F/plan-link.yaml"
refused 2 --json "$F/plan-hard.yaml" "the plan file" "$F/plan.yaml" -- \
    plan "$F/plan.yaml" --json "$F/plan-hard.yaml"
refused 2 --out "$F/doc.json" "the input" "$F/doc.json" -- report html --out "$F/doc.json" "$F/doc.json"
refused 2 --out "$F/results/sdc.json" "the input" "$F/results" -- report html --out "$F/results/sdc.json" "$F/results"
refused 2 --out "$F/doc.json" "the input" "$F/doc.json" -- \
    report prometheus --out "$F/doc.json" "$F/doc.json"
refused 2 --json "$F/doc2.json" "the input" "$F/doc2.json" -- \
    report diff "$F/doc.json" "$F/doc2.json" --json "$F/doc2.json"
refused 2 --db "$F/doc.json" "the input" "$F/doc.json" -- report add --db "$F/doc.json" "$F/doc.json"
refused 2 --json "$F/h.sqlite" --db "$F/h.sqlite" -- report history --db "$F/h.sqlite" --json "$F/h.sqlite" sdc.steps
refused 3 --json "$F/thr.yaml" "the input" "$F/thr.yaml" -- report gate "$F/thr.yaml" "$F/doc.json" --json "$F/thr.yaml"
refused 3 --json "$F/policy.yaml" --policy "$F/policy.yaml" -- check --policy "$F/policy.yaml" --json "$F/policy.yaml"
refused 3 --json "$F/results/sdc.json" --results "$F/results" -- check --results "$F/results" --json "$F/results/sdc.json"
refused 2 --json "$F/key" --key-file "$F/key" -- net lat 127.0.0.1 --key-file "$F/key" --json "$F/key"
refused 2 --json "$F/plan.yaml" "the plan file" "$F/plan.yaml" -- plan --gpus 0 "$F/plan.yaml" --json "$F/plan.yaml"
# a refusal that comes before the inputs are read writes its failed
# document, but never over a file that is not one
for c in "net lat 127.0.0.1 --bogus --key-file $F/key --json $F/key" \
    "plan --bogus $F/plan.yaml --json $F/plan.yaml" "io commit --bogus --json $F/mountinfo" \
    "coll -n 2 --bogus --json $F/nccl.log" "check --bogus --json $F/policy.yaml"; do
    expect_exit "$(case $c in check*) echo 3 ;; *) echo 2 ;; esac)" "bogus|destroy" "trainpath $c: refused" $c
    sums >"$WORK/after"
    check "... the file --json names as it was" cmp -s "$WORK/before" "$WORK/after"
    cp "$WORK/after" "$WORK/before"
done
expect_exit 2 "bogus" "trainpath plan --bogus --json NEW: refused" plan --bogus "$F/plan.yaml" --json "$WORK/new.json"
check "... with its failed document" valid_doc "$WORK/new.json"
refused 2 --json "$F/mountinfo" --mountinfo "$F/mountinfo" -- io info "$F" --mountinfo "$F/mountinfo" --json "$F/mountinfo"
refused 2 --json "$F/ddp.json" --workload "$F/ddp.json" -- step -n 2 --workload "$F/ddp.json" --json "$F/ddp.json"
refused 2 --trace "$F/doc.json" --json "$F/doc.json" -- coll -n 2 --sizes 1K --json "$F/doc.json" --trace "$F/doc.json"
refused 2 --json "$F/fleet.yaml" --simulate "$F/fleet.yaml" -- validate --simulate "$F/fleet.yaml" --json "$F/fleet.yaml"
refused 2 --db "$F/policy.yaml" --policy "$F/policy.yaml" -- validate --policy "$F/policy.yaml" --db "$F/policy.yaml"

# outputs that are no regular file are never the same file as another
check "coll --json /dev/null --trace /dev/null runs" \
    run_rc 0 "$WORK/null.out" timeout 60 "$TP" coll -n 2 --sizes 1K --iters 2 -q --json /dev/null --trace /dev/null
check "workload import of standard input into another file runs" \
    run_rc 0 "$WORK/imp.out" timeout 60 "${TP}" "${imp[@]}" -q --out "$WORK/w.json" - <"$F/nccl.log"
finish
