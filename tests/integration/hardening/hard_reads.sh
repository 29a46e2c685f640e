#!/usr/bin/env bash
# Class 2 of docs/reliability.md's adversarial findings: no unbounded read.
# Every file trainpath reads has a cap suited to what it is (tp/file.h), and
# a reader that needs a regular file refuses a FIFO, a device or a folder
# with exit 2 before it blocks on it or reads it forever. Every case runs
# under a timeout (expect_exit): a reader that blocks or grows fails by timing out.
. "$(dirname "$0")/../lib.sh"

mkfifo "$WORK/fifo"
mkdir "$WORK/folder"
truncate -s 300M "$WORK/huge.json"          # sparse: over the 256 MiB document cap
truncate -s 17M "$WORK/huge.yaml"           # over the 16 MiB cap of a YAML input
truncate -s 9K "$WORK/huge.key"
"$TP" plan "$SRC/docs/examples/plan.yaml" --json "$WORK/plan.json" >/dev/null 2>&1

# exit code | pattern the message must contain | arguments
cases=(
    "2|--mountinfo: /dev/zero: is a character device|io info /tmp --mountinfo /dev/zero"
    "2|--mountinfo: $WORK/fifo: is a FIFO|io info /tmp --mountinfo $WORK/fifo"
    "2|--mountinfo: $WORK/folder: is a folder|io info /tmp --mountinfo $WORK/folder"
    "2|$WORK/fifo: is a FIFO; a plan file must be a regular file|plan $WORK/fifo"
    "2|/dev/zero: is a character device|plan /dev/zero"
    "2|$WORK/huge.yaml: over 16 MiB|plan $WORK/huge.yaml"
    "3|$WORK/fifo: is a FIFO|check --policy $WORK/fifo"
    "3|$WORK/fifo: is a FIFO|report gate $WORK/fifo $WORK/plan.json"
    "2|$WORK/fifo: is a FIFO|report diff $WORK/fifo $WORK/plan.json"
    "2|$WORK/huge.json: over 256 MiB|report diff $WORK/huge.json $WORK/plan.json"
    "2|/dev/zero: is a character device|report html --out $WORK/r.html /dev/zero"
    "2|$WORK/fifo: is a FIFO|report add $WORK/fifo --db $WORK/h.sqlite"
    "2|/dev/zero: is a character device; a key file|net lat 127.0.0.1 --key-file /dev/zero"
    "2|$WORK/fifo: is a FIFO; a key file|net serve --key-file $WORK/fifo"
    "2|$WORK/huge.key: over 8 KiB|net lat 127.0.0.1 --key-file $WORK/huge.key"
    "2|$WORK/fifo: is a FIFO|validate --policy $WORK/fifo --out $WORK/v"
    "2|$WORK/fifo: is a FIFO; a JSON Lines file|report fleet $WORK/fifo"
)
expect_cases "${cases[@]}"

# stdin as a stream is read to the cap, not forever
timeout 20 "$TP" report fleet - </dev/zero >"$WORK/zero.out" 2>&1
rc=$?
check "report fleet - < /dev/zero: exit 2 (got $rc)" test "$rc" -eq 2
check "... at the cap" grep_q "stdin: over 256 MiB" "$WORK/zero.out"

# a check snapshot whose /proc files are a FIFO and an endless device: the
# facts are not seen (UNKNOWN), nothing waits
cp -a "$SRC/tests/fixtures/check/node-rdma" "$WORK/snap"
rm -f "$WORK/snap/proc/meminfo" "$WORK/snap/proc/net/route"
mkfifo "$WORK/snap/proc/meminfo"
ln -s /dev/zero "$WORK/snap/proc/net/route"
timeout 20 "$TP" check facts --root "$WORK/snap" --json "$WORK/snap.json" >"$WORK/snap.out" 2>&1
rc=$?
check "check facts on a snapshot with a FIFO and /dev/zero in it: done (got $rc)" test "$rc" -eq 0
check "... both named as not seen" test "$(json_get "$WORK/snap.json" \
    "sorted(m['part'] for m in d['missing'] if m.get('unseen') and m['part'] in ('memory', 'routes.inet'))" 2>&1)" = "['memory', 'routes.inet']"

# a plan's measured input ({measured: FILE}) takes the same reader: a FIFO
# there is refused too, not waited on
sed -e "s|    latency: 3us |    latency: {measured: $WORK/fifo} |" "$SRC/docs/examples/plan.yaml" \
    >"$WORK/measured.yaml"
timeout 10 "$TP" plan "$WORK/measured.yaml" >"$WORK/measured.out" 2>&1
rc=$?
check "plan with a FIFO as its measured document: exit 2 (got $rc)" test "$rc" -eq 2
check "... naming it" grep_q "fifo: is a FIFO" "$WORK/measured.out"
finish
