#!/usr/bin/env bash
# The results folder fails, for every command that writes a result document
# (net lat against a server, coll, io commit, step, plan, check, validate
# --out):
# - a --json path on a read-only tmpfs is refused up front, exit 2 naming
#   the path (check: 3, Nagios's unknown), before anything is measured: the
#   error is all the command prints;
# - a folder that is full (a tiny tmpfs, filled before the run: the up-front
#   check cannot see it) fails the run at its end, exit 1 (check: 3) naming
#   the path, with no temporary file left and the older document at that
#   path intact (atomic replace, src/core/atomicfile.c);
# - a folder removed while the run measures: exit 1 naming the path.
# The tmpfs mounts live in private mount namespaces (unshare -m): nothing
# leaks to the host.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/faults_lib.sh"

unshare -m true 2>/dev/null || skip_all "no mount namespaces here (unshare -m)"
R=$WORK/results; mkdir -p "$R"
start_server srv -- --bind 127.0.0.1 || { not_ok "net server"; finish; }
mkdir -p "$WORK/io" "$WORK/sd"
old='{"old": "an earlier result, to be kept"}'

# in_tmpfs OPTS DOC CMD...: in a private mount namespace, a tmpfs with OPTS
# on $R; unless it is read-only, the older document DOC is put in it and the
# rest filled up; then CMD. What is left in $R goes to $WORK/left, DOC's
# content to $WORK/left.doc; the exit status is CMD's.
in_tmpfs() {
    local opts=$1 doc=$2; shift 2
    R="$R" OPTS="$opts" DOC="$doc" OLD="$old" LEFT="$WORK/left" unshare -m sh -c '
        mount -t tmpfs -o "$OPTS" tmpfs "$R" || exit 99
        case ",$OPTS," in *,ro,*) ;; *)
            printf "%s\n" "$OLD" >"$R/$DOC"
            dd if=/dev/zero of="$R/fill" bs=4k 2>/dev/null ;;
        esac
        "$@"; rc=$?
        ls -A "$R" | tr "\n" " " >"$LEFT"
        cat "$R/$DOC" >"$LEFT.doc" 2>/dev/null
        exit $rc' sh "$@"
}

# name | exit code when refused | exit code when the folder is full | the
# command, with @J for the document path
cmds=(
    "net-lat|2|1|net lat 127.0.0.1 -p $PORT --sizes 64 --iters 2000 --json @J"
    "coll|2|1|coll -n 2 --sizes 8,64K --iters 20 --json @J"
    "io-commit|2|1|io commit $WORK/io --count 20 --json @J"
    "step|2|1|step -n 2 --steps 3 --batch 8 --sample-size 1K --grad-size 64K --compute-ms 1 --dir $WORK/sd --json @J"
    "plan|2|1|plan $SRC/docs/examples/plan.yaml --json @J"
    "check|3|3|check --json @J"
)
for spec in "${cmds[@]}"; do
    IFS='|' read -r name rc_ro rc_full cmd <<<"$spec"
    read -ra args <<<"${cmd//@J/$R/r.json}"

    check "$name: --json on a read-only tmpfs: exit $rc_ro" run_rc "$rc_ro" "$WORK/out" \
        in_tmpfs ro,size=1M r.json "$TP" "${args[@]}"
    check "... naming the path and why" \
        grep_q "error: --json $R/r.json: folder $R is not writable: Read-only file system" "$WORK/out"
    check "... refused before measuring: the error is all it printed" \
        test "$(wc -l <"$WORK/out")" -eq 1
    [ "$name" = step ] && check "... no rank started: the dataset was not written" test -z "$(ls -A "$WORK/sd")"

    rm -f "$WORK/left.doc"
    check "$name: --json in a full folder: exit $rc_full" run_rc "$rc_full" "$WORK/out" \
        in_tmpfs size=64k r.json "$TP" "${args[@]}"
    check "... naming the path and the error" grep_q "error: $R/r.json: write: No space left on device" "$WORK/out"
    is "... no temporary file left (left: $(cat "$WORK/left"))" "fill r.json " "$(cat "$WORK/left")"
    is "... the older document is intact" "$old" "$(cat "$WORK/left.doc")"
done

# validate --out
check "validate --out on a read-only tmpfs: exit 2" run_rc 2 "$WORK/out" \
    in_tmpfs ro,size=1M report.html "$TP" validate --only step --out "$R" -q
check "... naming the folder and why" grep_q "error: --out $R: not writable: Read-only file system" "$WORK/out"
check "... refused before measuring: the error is all it printed" test "$(wc -l <"$WORK/out")" -eq 1
rm -f "$WORK/left.doc"
check "validate --out in a full folder: exit 1" run_rc 1 "$WORK/out" \
    in_tmpfs size=64k report.html "$TP" validate --only step --out "$R" -q
check "... naming the report and the error" grep_q "error: report: $R/report.html: write: No space left on device" "$WORK/out"
check "... no temporary file left, no result document half written (left: $(cat "$WORK/left"))" \
    test -z "$(tr ' ' '\n' <"$WORK/left" | grep -E '\.tmp\.|\.json$')"
is "... the older report is intact" "$old" "$(cat "$WORK/left.doc")"

# the folder removed while the run measures (what it waits for first)
gone() { # gone NAME MARKER-COMMAND CMD...: start CMD, wait for MARKER, rm the folder
    local name=$1 marker=$2; shift 2
    local G=$WORK/gone-$name out=$WORK/gone-$name.out
    mkdir -p "$G"
    local args=("${@//@J/$G/r.json}")
    "$TP" "${args[@]}" >"$out" 2>&1 &
    local pid=$!
    PIDS+=("$pid")
    for _ in $(seq 100); do eval "$marker" && break; sleep 0.1; done
    rm -rf "$G"
    wait_exit "$pid" 60; local rc=$RC
    check "$name: the --json folder removed mid-run: exit 1" test "$rc" -eq 1
    check "... naming the path" grep_q "error: $G/r.json: cannot create a file in $G: No such file or directory" "$out"
    check "... after measuring: the results were printed" grep_q "$MEASURED" "$out"
}
MEASURED='^ +64 +[0-9]+ ' gone net-lat 'sleep 1; true' net lat 127.0.0.1 -p "$PORT" --sizes 64 --time 3 --json @J
MEASURED='^ +1M +[0-9]+ ' gone coll 'grep -q "^# trainpath coll" "$out"' \
    coll -n 2 --sizes 8,64K,1M --time 1s --json @J
MEASURED='commits of 4K' gone io-commit '[ -d "$WORK/io/trainpath-commit" ]' \
    io commit "$WORK/io" --count 20000 --time 3s --json @J
MEASURED='^# run 0, mean per step' gone step 'grep -q "^# trainpath step" "$out"' \
    step -n 2 --steps 150 --batch 8 --sample-size 1K --grad-size 64K --compute-ms 10 --dir "$WORK/sd" --json @J
finish
