#!/usr/bin/env bash
# trainpath io under bad input and faults: every bad option exits 2 naming
# it; missing and unwritable targets exit 2 naming the path; a size beyond
# the free space is refused up front unless --force; and running out of
# space mid-checkpoint (a 24 MiB tmpfs in a private mount namespace) exits 1
# naming the file and the bytes written, removes the partial checkpoint and
# leaves a valid result document that says why.
. "$(dirname "$0")/../lib.sh"

D=$WORK/d; mkdir -p "$D"
bad() { # bad DESC PATTERN ARGS...: exit 2 and PATTERN in the message
    local desc=$1 pat=$2; shift 2
    if run_rc 2 "$WORK/out" "$TP" io "$@" && grep -q -- "$pat" "$WORK/out"; then
        ok "$desc"
    else
        echo "# wanted /$pat/ in:"; sed 's/^/#   /' "$WORK/out" | head -5
        not_ok "$desc"
    fi
}
bad "no workload" "which workload"
bad "unknown workload" "io frobnicate: unknown workload" frobnicate "$D"
bad "no folder" "which DIR" checkpoint
bad "an option of another workload" "\-\-records: not an option of io checkpoint" checkpoint "$D" --records 5
bad "a checkpoint option given to commit" "\-\-size: not an option of io commit" commit "$D" --size 4G
bad "an engine option given to info" "\-\-qd: not an option of io info" info "$D" --qd 4
bad "--size 0" "\-\-size" checkpoint "$D" --size 0
bad "--size 1KB (ambiguous)" "\-\-size" checkpoint "$D" --size 1KB
bad "--qd 0" "\-\-qd" dataset "$D" --qd 0
bad "--engine libaio" "\-\-engine libaio" commit "$D" --engine libaio
bad "--record-size 8" "\-\-record-size 8: at least 32 bytes" dataset "$D" --record-size 8
bad "--direct with a record size off the alignment" "\-\-record-size 1000: with --direct it must be a multiple of" dataset "$D" --record-size 1000 --direct
bad "--direct with a block size off the alignment" "\-\-bs .*: not a multiple of the O_DIRECT" checkpoint "$D" --bs 1000 --direct --size 8M
bad "--sync maybe" "\-\-sync maybe" commit "$D" --sync maybe
bad "--during other" "\-\-during other" dataset "$D" --during other
bad "--destroy-data without --device" "\-\-destroy-data: only with --device" commit "$D" --destroy-data
bad "--device that is not a block device" "/dev/null: not a block device" commit --device /dev/null --destroy-data
bad "a folder and --device" "not both" commit "$D" --device /dev/null
bad "--shards beyond the size" "cannot be split" checkpoint "$D" --size 10 --shards 8
bad "unknown option" "\-\-frob: unknown option" commit "$D" --frob
bad "missing folder, named" "$WORK/nope: No such file or directory" checkpoint "$WORK/nope"
bad "a file, not a folder" "not a directory" commit /etc/hostname

# a run that fails after the options were read still writes its document
check "--json of a refused run: exit 2" run_rc 2 "$WORK/out" \
    "$TP" io checkpoint "$D" --size 1000G --json "$WORK/refused.json"
check "... the size needed and '--force'" grep -Eq "a checkpoint needs 1000 GiB, .* has [0-9.]+ [KMGT]iB free \(--force writes anyway\)" "$WORK/out"
check "... the document says usage, valid" test "$(json_get "$WORK/refused.json" "d['status']['ok'], d['status']['code']")" = "False usage"
check "... valid document" valid_doc "$WORK/refused.json"
check "nothing written for a refused run" test -z "$(ls -A "$D")"

if ! unshare -m true 2>/dev/null; then
    ok "# SKIP no mount namespaces here (unshare -m)"
    finish
fi
M=$WORK/small; mkdir -p "$M"
# in a private mount namespace: a 24 MiB tmpfs; the test's own /tmp is untouched
inns() { unshare -m sh -c "mount -t tmpfs -o size=24M tmpfs '$M' && \"\$@\"" sh "$@"; }
check "a checkpoint beyond the free space is refused up front (exit 2)" run_rc 2 "$WORK/out" \
    inns "$TP" io checkpoint "$M" --size 64M --shards 4 -q
check "... naming the space needed and available" grep -q "needs 64.1 MiB, $M has 24 MiB free" "$WORK/out"
J=$WORK/enospc.json
check "--force: out of space mid-checkpoint exits 1" run_rc 1 "$WORK/out" \
    inns sh -c "\"\$0\" io checkpoint '$M' --size 64M --shards 4 --force -q --json '$J'; rc=\$?; ls -A '$M' > '$WORK/left'; exit \$rc" "$TP"
check "... naming the shard and the bytes written" \
    grep -Eq "shard-000[0-3]-of-0004.bin: write at offset [0-9]+ after [0-9]+ bytes of the shard were written: No space left on device" "$WORK/out"
check "... the partial checkpoint is removed" test "$(cat "$WORK/left")" = ""
check "... the document says failed (sys) with the error" \
    test "$(json_get "$J" "d['status']['ok'], d['status']['code'], 'No space left' in d['status']['message'], r['checkpoints'][0]['committed'], r['checkpoints'][0]['bytes_written'] > 0")" = "False system True False True"
check "... valid document" valid_doc "$J"
check "dataset that does not fit: refused, exit 2" run_rc 2 "$WORK/out" \
    inns "$TP" io dataset "$M" --records 10000 --record-size 4K -q
check "... names --records x --record-size" grep -q "records 10000 x --record-size 4K: the dataset needs" "$WORK/out"

# a read-only filesystem: exit 2 naming the folder
check "read-only folder: exit 2" run_rc 2 "$WORK/out" \
    unshare -m sh -c "mount -t tmpfs -o ro,size=1M tmpfs '$M' && \"\$0\" io commit '$M' -q" "$TP"
check "... naming it as not writable" grep -q "$M: not writable: Read-only file system" "$WORK/out"
# the results file cannot be written: the run fails, exit 2, path named
check "--json into a missing folder: exit 2" run_rc 2 "$WORK/out" \
    "$TP" io commit "$D" --count 5 -q --json "$WORK/none/r.json"
check "... naming it" grep -q "$WORK/none" "$WORK/out"
finish
