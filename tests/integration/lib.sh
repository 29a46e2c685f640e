# Shared helpers for the integration tests: they drive the real binary
# ($TRAINPATH) as a user would, and print TAP ("ok N - ...", "not ok N - ...").
# Every server started here is killed on exit; every wait is bounded.
set -uo pipefail
TP=${TRAINPATH:?TRAINPATH must name the trainpath binary}
SRC=${TP_SOURCE_ROOT:?TP_SOURCE_ROOT must name the source tree}
SCHEMA="$SRC/docs/schema/result-v1.json"
# 1 in the sanitizer build (tests/integration/meson.build): sweeps that only
# move more bytes, or repeat more, through the same code run smaller there
SANITIZED=${TP_TEST_SANITIZED:-0}
WORK=$(mktemp -d /tmp/tp-it.XXXXXX)
PIDS=()
NETNS=()
n=0
fails=0

cleanup() {
    exec 2>/dev/null
    for p in "${PIDS[@]}"; do kill -9 "$p" 2>/dev/null; done
    wait 2>/dev/null
    for ns in "${NETNS[@]}"; do ip netns del "$ns" 2>/dev/null; done
    # libfabric's shm provider names its regions /dev/shm/PID:...; a process
    # a test killed cannot remove its own: drop those this test left
    local f pid
    for f in /dev/shm/[0-9]*:*; do
        [ -e "$f" ] && [ "$f" -nt "$WORK" ] || continue
        pid=${f##*/}; pid=${pid%%:*}
        kill -0 "$pid" 2>/dev/null || rm -f "$f"
    done
    for f in "$PORTS"/*; do
        [ "$(cat "$f/owner" 2>/dev/null)" = "$$" ] && rm -rf "$f"
    done
    [ -n "${KEEP_WORK:-}" ] || rm -rf "$WORK"
}
trap cleanup EXIT

# free_port: prints a TCP port for a rendezvous (MASTER_PORT) that no socket
# uses and no other test has claimed. It lies below the kernel's ephemeral
# range, so no outgoing connection of a test running beside this one can take
# it before rank 0 listens; the claim (a folder under $PORTS owned by this
# test's shell) ends when this test exits or its owner is gone.
PORTS=/tmp/tp-it-ports
free_port() {
    local lo p owner
    read -r lo _ </proc/sys/net/ipv4/ip_local_port_range 2>/dev/null || lo=32768
    [ "$lo" -gt 12000 ] 2>/dev/null || lo=32768
    mkdir -p "$PORTS"
    for _ in $(seq 200); do
        p=$((10000 + RANDOM % (lo - 10000)))
        if ! mkdir "$PORTS/$p" 2>/dev/null; then
            owner=$(cat "$PORTS/$p/owner" 2>/dev/null)
            [ -n "$owner" ] && kill -0 "$owner" 2>/dev/null && continue
            rm -rf "$PORTS/$p"; mkdir "$PORTS/$p" 2>/dev/null || continue
        fi
        echo "$$" >"$PORTS/$p/owner"
        if [ -z "$(ss -Htan "( sport = :$p )" 2>/dev/null)" ]; then
            echo "$p"; return 0
        fi
    done
    echo "free_port: no free port found below $lo" >&2; return 1
}

ok() { n=$((n + 1)); echo "ok $n - $*"; }
not_ok() { n=$((n + 1)); fails=$((fails + 1)); echo "not ok $n - $*"; }
check() { # check DESC COND-COMMAND...
    local desc=$1; shift
    if "$@"; then ok "$desc"; else not_ok "$desc"; fi
}
finish() { echo "1..$n"; [ "$fails" -eq 0 ]; exit $?; }
# meson's TAP reader takes any non-zero exit as an error, even after
# "1..0 # SKIP" (exit 77 is the convention of its exitcode protocol only)
skip_all() { echo "1..0 # SKIP $*"; exit 0; }

# start_server NAME [PREFIX-COMMAND...] -- SERVER-ARGS...: starts
# `PREFIX trainpath net serve --port 0 ARGS` in the background, waits up to 10 s
# for its "listening ... port N" line, and sets PORT and SPID.
start_server() {
    local name=$1; shift
    local prefix=()
    while [ $# -gt 0 ] && [ "$1" != "--" ]; do prefix+=("$1"); shift; done
    shift
    local log="$WORK/$name.log"
    "${prefix[@]}" "$TP" net serve --port 0 "$@" >"$log" 2>&1 &
    SPID=$!
    PIDS+=("$SPID")
    PORT=""
    for _ in $(seq 100); do
        PORT=$(sed -n 's/.*listening on .* port \([0-9]*\).*/\1/p' "$log" | head -1)
        [ -n "$PORT" ] && return 0
        kill -0 "$SPID" 2>/dev/null || break
        sleep 0.1
    done
    echo "# server $name did not start:"; sed 's/^/#   /' "$log"
    return 1
}

# run_rc WANT_RC OUTFILE CMD...: run CMD with stdout+stderr into OUTFILE; true
# when its exit code is WANT_RC (prints the output otherwise).
run_rc() {
    local want=$1 out=$2; shift 2
    "$@" >"$out" 2>&1
    local rc=$?
    if [ "$rc" -ne "$want" ]; then
        echo "# expected exit $want, got $rc from: $*"
        sed 's/^/#   /' "$out" | head -30
        return 1
    fi
    return 0
}

# json_get FILE PYTHON-EXPR: evaluate EXPR with d = the document, r = its
# results and e = the first entry of results.sizes (when there is one).
json_get() {
    /usr/bin/python3 -c "import json,sys
d=json.load(open(sys.argv[1])); r=d.get('results', {}); e=(r.get('sizes') or [None])[0]
print($2)" "$1"
}

# json_run FILE CODE: run python CODE (statements that print) with d, r and e
# as for json_get.
json_run() {
    /usr/bin/python3 -c "import json,sys
d=json.load(open(sys.argv[1])); r=d.get('results', {}); e=(r.get('sizes') or [None])[0]
$2" "$1"
}

valid_doc() { /usr/bin/python3 "$SRC/tests/integration/validate.py" "$SCHEMA" "$@"; }

# wait_log PATTERN FILE [COUNT]: wait up to 10 s until PATTERN occurs COUNT
# times (default 1) in FILE.
wait_log() {
    local c
    for _ in $(seq 100); do
        c=$(grep -cE -- "$1" "$2" 2>/dev/null)
        [ "${c:-0}" -ge "${3:-1}" ] && return 0
        sleep 0.1
    done
    echo "# '$1' did not appear ${3:-1} times in $2"; return 1
}

# expect_exit WANT PATTERN DESC ARGS...: run `trainpath ARGS` (at most 20 s:
# a reader that blocks fails here) and check its exit status and that its
# output matches PATTERN (ERE); prints the output otherwise.
expect_exit() {
    local want=$1 pat=$2 desc=$3; shift 3
    timeout 20 "$TP" "$@" >"$WORK/out" 2>&1
    local rc=$?
    if [ "$rc" -eq "$want" ] && grep -qE -- "$pat" "$WORK/out"; then
        ok "$desc"
    else
        not_ok "$desc (got exit $rc)"
        sed 's/^/#   /' "$WORK/out" | head -5
    fi
}

# expect_cases "WANT|PATTERN|ARGS" ...: expect_exit for each row of a table
# of refusals; ARGS are split on blanks (no quoting inside a row).
expect_cases() {
    local c want pat args
    for c in "$@"; do
        IFS='|' read -r want pat args <<<"$c"
        # shellcheck disable=SC2086
        expect_exit "$want" "$pat" "trainpath $args -> exit $want, '$pat'" $args
    done
}

grep_q() { # grep_q PATTERN FILE: like grep -q, shows the file when it fails
    grep -qE -- "$1" "$2" && return 0
    echo "# pattern '$1' not in $2:"; sed 's/^/#   /' "$2" | head -20
    return 1
}
