#!/usr/bin/env bash
# Hardening, class 7 (docs/reliability.md): bad input is refused before any
# work starts, with exit 2 and a message that names the input; with --json
# the refusal is still a valid result document (docs/schema/result-v1.json)
# whose status says why, in every command that takes --json; with --json -
# that document is all of stdout. Every case here must be refused at once:
# nothing may fork ranks, write a file or connect anywhere.
. "$(dirname "$0")/../lib.sh"

D=$WORK/dir
mkdir -p "$D"
cp "$SRC/docs/examples/plan.yaml" "$WORK/plan.yaml"
cp "$SRC/docs/examples/policy.yaml" "$WORK/policy.yaml"
echo "not a database" >"$WORK/notdb"

# exit | pattern the message must contain | doc: y when a --json document is
# expected (the case runs with --json FILE added) | arguments
cases=(
    "2|--sizes: .*'12X'|y|net lat 127.0.0.1 --sizes 12X"
    "2|unknown option '--bogus'|y|net bw 127.0.0.1 --bogus"
    "2|unknown option '--bogus'|y|coll -n 2 --bogus"
    "2|--dtype f7|y|coll -n 2 --dtype f7"
    "2|--root 5: not a rank \(0\.\.1\)|y|coll -n 2 --op broadcast --root 5 --sizes 1K"
    "2|--sizes: 1 is below one f32 element|y|coll -n 2 --sizes 1"
    "2|--sizes: 8 is below one f32 element per rank \(12 bytes\)|y|coll -n 3 --op allgather --sizes 8"
    "2|--redop max: allgather reduces nothing|y|coll -n 2 --op allgather --redop max"
    "2|--launcher mpi: no launcher started this process|y|coll --launcher mpi"
    "2|--launcher env: no launcher started this process|y|step --launcher env --no-io"
    "2|--backend mpi: the ranks were not started by mpirun|y|coll -n 2 --backend mpi"
    "2|--inject-delay|y|coll -n 2 --inject-delay soon"
    "2|--write-size: .*'12X'|y|io commit $D --write-size 12X"
    "2|--bogus: unknown option|y|io commit $D --bogus"
    "2|--records: not an option of io checkpoint|y|io checkpoint $D --records 5"
    "2|io frob: unknown workload|y|io frob $D"
    "2|io commit: which DIR|y|io commit"
    "2|--ckpt-size 10T: the checkpoints .* --dir $D|y|step -n 2 --ckpt-size 10T --ckpt-every 1 --no-io --dir $D"
    "2|--inject-delay \.\.\.@5: not a rank \(0\.\.1\)|y|step -n 2 --inject-delay comm:const:1ms@5 --no-io --dir $D"
    "2|--scale: needs --preset|y|step -n 2 --scale 0.5 --no-io --dir $D"
    "2|--ckpt-size: needs --ckpt-every|y|step -n 2 --ckpt-size 1M --no-io --dir $D"
    "2|--buckets: .*'2000'|y|step -n 2 --buckets 2000 --no-io --dir $D"
    "2|--bogus: unknown option|y|step --bogus"
    "2|--checkpoint-cost: needed|y|plan interval --mtbf 1h"
    "2|--mtbf: .*'soon'|y|plan interval --checkpoint-cost 1m --mtbf soon"
    "2|--bogus: unknown option|y|plan interval --bogus"
    "2|--gpus: .*'0'|y|plan $WORK/plan.yaml --gpus 0"
    "2|a plan file is needed|y|plan"
    "2|policy.yaml|y|plan $WORK/policy.yaml"
    "2|--policy $WORK/plan.yaml: not a usable policy: .*plan.yaml:[0-9]+:[0-9]+|n|validate --policy $WORK/plan.yaml --out $WORK/v1"
    "2|--db /tmp: names a folder|n|validate --db /tmp --out $WORK/v2"
    "2|--db $WORK/notdb: not an SQLite database|n|validate --db $WORK/notdb --out $WORK/v3"
    "2|--prometheus $D: names a folder|n|validate --prometheus $D --out $WORK/v4"
    "2|--launcher mpi: no launcher started this process|n|validate --launcher mpi --out $WORK/v5"
    "2|--profile frob|n|validate --profile frob --out $WORK/v6"
    "2|--min-effect inf: a percentage|n|report diff $WORK/plan.yaml $WORK/plan.yaml --min-effect inf"
    "2|--min-effect 1e400: a percentage|n|report diff $WORK/plan.yaml $WORK/plan.yaml --min-effect 1e400"
    "2|--alpha %: a probability|n|report diff $WORK/plan.yaml $WORK/plan.yaml --alpha %"
)
t0=$(date +%s%N)
i=0
slowest=0
docs=() # FILE PATTERN pairs, checked below in one go
declare -A doc_args
for c in "${cases[@]}"; do
    IFS='|' read -r want pat doc args <<<"$c"
    i=$((i + 1))
    J=$WORK/u$i.json
    extra=()
    [ "$doc" = y ] && extra=(--json "$J")
    s=$(date +%s%N)
    # shellcheck disable=SC2086
    timeout 10 "$TP" $args "${extra[@]}" >"$WORK/out" 2>&1
    rc=$?
    s=$(( ($(date +%s%N) - s) / 1000000 ))
    [ "$s" -gt "$slowest" ] && slowest=$s
    if [ "$rc" -eq "$want" ] && grep -qE -- "$pat" "$WORK/out"; then
        ok "trainpath $args -> exit $want, '$pat'"
    else
        not_ok "trainpath $args -> exit $want, '$pat' (got exit $rc)"
        sed 's/^/#   /' "$WORK/out" | head -5
    fi
    [ "$doc" = y ] && docs+=("$J" "$pat") && doc_args[$J]=$args
done
ms=$(( ($(date +%s%N) - t0) / 1000000 ))
echo "# ${#cases[@]} refusals in $ms ms, the slowest $slowest ms"
# a refusal is the binary's start and the checks; a run that started work
# (ranks, a sweep, validate's tests) takes seconds
check "every refusal came at once (the slowest in $slowest ms, under 5 s)" test "$slowest" -lt 5000
check "... and left nothing in the folders they name" test -z "$(ls -A "$D")"
check "... not even the results folders of validate" test ! -e "$WORK/v1" -a ! -e "$WORK/v2" -a ! -e "$WORK/v5"

# each --json document: valid, status usage (exit 2, not ok), its message
# matching the case's pattern; one interpreter for all of them
/usr/bin/python3 - "$SCHEMA" "${docs[@]}" >"$WORK/docs.out" 2>&1 <<'PY'
import json, re, sys
import jsonschema
validator = jsonschema.Draft202012Validator(json.load(open(sys.argv[1])))
args = sys.argv[2:]
for path, pat in zip(args[::2], args[1::2]):
    try:
        d = json.load(open(path))
        errs = [f"{'/'.join(map(str, e.absolute_path)) or '(root)'}: {e.message[:200]}"
                for e in validator.iter_errors(d)][:3]
        st = d.get("status", {})
        if (st.get("code"), st.get("exit_code"), st.get("ok")) != ("usage", 2, False):
            errs.append(f"status {st}")
        elif not re.search(pat, st.get("message", "")):
            errs.append(f"message {st.get('message')!r} does not match")
    except (OSError, ValueError) as e:
        errs = [f"not readable JSON: {e}"]
    print(("PASS " if not errs else "FAIL ") + path)
    for e in errs:
        print("#   " + e)
PY
[ "$(grep -c '^PASS' "$WORK/docs.out")" -eq $((${#docs[@]} / 2)) ] || sed 's/^/#   /' "$WORK/docs.out" | grep -v PASS | head -20
while read -r verdict path; do
    [ "$verdict" = PASS ] && ok "trainpath ${doc_args[$path]} --json: a valid document, status usage, saying why"
    [ "$verdict" = FAIL ] && not_ok "trainpath ${doc_args[$path]} --json: a valid document, status usage, saying why"
done < <(grep -E '^(PASS|FAIL) ' "$WORK/docs.out")
check "... a verdict for each of the $((${#docs[@]} / 2)) documents" test "$(grep -cE '^(PASS|FAIL) ' "$WORK/docs.out")" -eq $((${#docs[@]} / 2))

# --json -: the refusal's document is all of stdout, the message on stderr
for args in "coll -n 2 --bogus" "io commit $D --bogus" "step --bogus" "plan interval --bogus" \
    "net lat 127.0.0.1 --bogus" "plan $WORK/plan.yaml --gpus 0"; do
    # shellcheck disable=SC2086
    timeout 10 "$TP" $args --json - >"$WORK/stdout" 2>"$WORK/stderr"
    rc=$?
    if [ "$rc" -eq 2 ] && /usr/bin/python3 -c "import json,sys; d=json.load(open(sys.argv[1])); sys.exit(0 if d['status']['code']=='usage' else 1)" "$WORK/stdout" &&
        grep -q "error:" "$WORK/stderr"; then
        ok "trainpath $args --json -: stdout is the document alone, the error on stderr"
    else
        not_ok "trainpath $args --json -: stdout is the document alone, the error on stderr (exit $rc)"
        head -c 300 "$WORK/stdout" | sed 's/^/#   /'
    fi
done

# a peer's bad answer is the peer's failure (exit 1), not the user's: a
# refused connection and a server that closes at once
run_rc 1 "$WORK/refused.out" "$TP" net lat 127.0.0.1 --port 1 --iters 1 --json "$WORK/peer.json"
check "net lat to a closed port: exit 1, not 2" test $? -eq 0
check "... and its document says peer" test "$(json_get "$WORK/peer.json" "d['status']['code']")" = peer
finish
