#!/usr/bin/env bash
# Storage that fails under trainpath: faultfs (faultfs.c), a FUSE
# passthrough filesystem mounted in $WORK that fails on demand, with every
# engine `trainpath io` offers (auto, io_uring, psync), so the requests go
# through the kernel's own paths (io_uring's included) to a filesystem that
# misbehaves:
# - EIO and ENOSPC on a write after N bytes, mid-checkpoint: exit 1, the
#   message names the shard and the error, the partial checkpoint is
#   removed, the document is valid and failed;
# - EIO on fsync/fdatasync, and on the folder's fsync alone: the commit
#   fails, and no checkpoint or commit is ever reported as committed;
# - a slow disk (fsync and write delays): io commit and io checkpoint
#   finish, and the latencies they report hold the delays;
# - a sync stuck longer than --timeout: io_uring fails with a timeout once
#   the sync returns; psync cannot bound a call (docs/storage.md) and
#   reports the time it took;
# - trainpath step whose --dir is on the failing filesystem: a checkpoint
#   write fails mid-run, exit 1 with the reason.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/faults_lib.sh"

[ -n "${FAULTFS:-}" ] && [ -x "$FAULTFS" ] || skip_all "faultfs not built (libfuse3-dev missing at configure time)"
[ -c /dev/fuse ] || skip_all "no /dev/fuse here"
command -v fusermount3 >/dev/null || skip_all "fusermount3 missing (package fuse3)"

BACK=$WORK/back MNT=$WORK/mnt
mkdir -p "$BACK" "$MNT"
# unmount before lib.sh's cleanup kills the daemon and removes $WORK, even
# when the test fails or is stopped
trap 'fusermount3 -u -z "$MNT" 2>/dev/null; cleanup' EXIT
trap 'exit 143' TERM INT
"$FAULTFS" "$BACK" "$MNT" -f -o max_threads=16 >"$WORK/faultfs.log" 2>&1 &
PIDS+=($!)
mounted() { awk -v m="$MNT" '$5 == m && / - fuse\.faultfs /' /proc/self/mountinfo | grep -q .; }
for _ in $(seq 100); do mounted && break; sleep 0.1; done
mounted || { sed 's/^/#   /' "$WORK/faultfs.log"; skip_all "faultfs could not mount (FUSE unavailable here?)"; }
ok "faultfs mounted on $MNT over $BACK"

ctl() { echo "reset $*" >"$MNT/.faultfs"; } # set faults (and zero the counters)
counter() { sed -n "s/^$1=//p" "$MNT/.faultfs"; }
D=$MNT/d; mkdir -p "$D"
empty() { # empty DIR: nothing left in it (shows what is)
    [ -z "$(ls -A "$1")" ] && return 0
    echo "# left in $1:"; find "$1" | sed 's/^/#   /' | head; return 1
}

# the engines of io (src/storage): auto is io_uring for checkpoints, psync
# for commits (docs/storage.md)
for eng in auto io_uring psync; do
    # --- a write fails after 5 MiB of a 16 MiB checkpoint (1 MiB requests)
    for err in EIO ENOSPC; do
        J=$WORK/ck-$err-$eng.json
        msg=$([ $err = EIO ] && echo "Input/output error" || echo "No space left on device")
        ctl write_error=$err write_after=5M
        check "$eng: $err on a write after 5 MiB of a checkpoint: exit 1" run_rc 1 "$WORK/out" \
            "$TP" io checkpoint "$D" --size 16M --shards 4 --repeat 1 --engine $eng -q --json "$J"
        check "... faultfs failed the writes past 5 MiB ($(counter faults) refused)" test "$(counter faults)" -ge 1
        check "... the message names the shard, the offset and the error" \
            grep_q "$D/trainpath-ckpt/step-0000/shard-000[0-3]-of-0004.bin: write at offset [0-9]+ after [0-9]+ bytes of the shard were written: $msg" "$WORK/out"
        check "... the partial checkpoint is removed" empty "$D"
        check "... valid document" valid_doc "$J"
        is "... failed (system) with that error; not committed; the 5 MiB written counted" "False system True False 5242880 0" \
            "$(json_get "$J" "d['status']['ok'], d['status']['code'], '$msg' in d['status']['message'], r['checkpoints'][0]['committed'], r['checkpoints'][0]['bytes_written'], r['commit']['count']")"
    done

    # --- a sync fails: the shards' fdatasync, or only the folder's fsync
    # after the metadata's rename (the rename is then not durable): the
    # commit fails, no checkpoint is ever reported committed, none is left
    for fault in "fsync_error|step-0000/shard-000[0-3]-of-0004.bin: fdatasync" \
                 "fsyncdir_error|step-0000: fsync of the folder"; do
        IFS='|' read -r key what <<<"$fault"
        J=$WORK/ck-$key-$eng.json
        ctl $key=EIO
        check "$eng: EIO on ${what#*: }: the checkpoint exits 1" run_rc 1 "$WORK/out" \
            "$TP" io checkpoint "$D" --size 8M --shards 4 --repeat 2 --engine $eng -q --json "$J"
        check "... faultfs failed it ($(counter faults) of $(counter fsyncs) file and $(counter fsyncdirs) folder syncs)" \
            test "$(counter faults)" -ge 1
        [ $key = fsyncdir_error ] && check "... after the shards' and the metadata's syncs passed" \
            test "$(counter fsyncs)" -ge 5 -a "$(counter faults)" -eq 1
        check "... naming it" grep_q "$D/trainpath-ckpt/$what: Input/output error" "$WORK/out"
        is "... valid document: failed, nothing reported committed" "False [False] 0" \
            "$(valid_doc "$J" >/dev/null && json_get "$J" "d['status']['ok'], [c['committed'] for c in r['checkpoints']], r['commit']['count']")"
        check "... nothing left (the renamed metadata included)" empty "$D"
    done

    J=$WORK/cm-fsync-$eng.json
    ctl fsync_error=EIO
    check "$eng: io commit with EIO on fdatasync: exit 1" run_rc 1 "$WORK/out" \
        "$TP" io commit "$D" --count 20 --engine $eng -q --json "$J"
    check "... naming the log and the commit" \
        grep_q "$D/trainpath-commit/commit-00.log: fdatasync of commit 0: Input/output error" "$WORK/out"
    is "... no commit counted, valid failed document" "False 0 0" \
        "$(valid_doc "$J" >/dev/null && json_get "$J" "d['status']['ok'], r['commits'], r['latency']['count']")"

    # --- a slow disk: every fsync/fdatasync 20 ms, every write 5 ms
    J=$WORK/cm-slow-$eng.json
    ctl fsync_delay_ms=20 write_delay_ms=5
    check "$eng: io commit on a slow disk finishes (exit 0)" run_rc 0 "$WORK/out" \
        "$TP" io commit "$D" --count 10 --engine $eng -q --json "$J"
    is "... each of the 10 commits' write and sync reached the filesystem" "10 10" \
        "$(counter writes) $(counter fsyncs)"
    echo "# $eng commit on the slow disk: $(json_get "$J" "'engine %s: commit p50 %.1f ms, write p50 %.1f ms, sync p50 %.1f ms' % (r['engine']['engine'], r['latency']['p50']/1e6, r['write_latency']['p50']/1e6, r['sync_latency']['p50']/1e6)")"
    want=$([ $eng = io_uring ] && echo io_uring || echo psync)
    is "... engine $want; commit p50 >= 25 ms, write p50 >= 5 ms, sync p50 >= 20 ms" "$want True True True" \
        "$(json_get "$J" "r['engine']['engine'], r['latency']['p50'] >= 25e6, r['write_latency']['p50'] >= 5e6, r['sync_latency']['p50'] >= 20e6")"
    check "... valid document" valid_doc "$J"

    J=$WORK/ck-slow-$eng.json
    ctl fsync_delay_ms=20 write_delay_ms=5
    check "$eng: io checkpoint on a slow disk finishes (exit 0)" run_rc 0 "$WORK/out" \
        "$TP" io checkpoint "$D" --size 4M --shards 2 --repeat 3 --engine $eng -q --json "$J"
    echo "# $eng checkpoint on the slow disk: $(json_get "$J" "'engine %s: commit p50 %.1f ms, data sync p50 %.1f ms, metadata p50 %.1f ms, write request p50 %.1f ms' % (r['engine']['engine'], r['commit']['p50']/1e6, r['phases']['data_sync']['p50']/1e6, r['phases']['metadata']['p50']/1e6, r['write_latency']['p50']/1e6)")"
    want=$([ $eng = psync ] && echo psync || echo io_uring)
    # a commit: the shards' fdatasync, then the metadata's fsync, then the
    # folder's: at least three 20 ms syncs one after the other
    is "... engine $want; commit p50 >= 60 ms, data sync >= 20 ms, metadata >= 40 ms, write >= 5 ms" "$want True True True True" \
        "$(json_get "$J" "r['engine']['engine'], r['commit']['p50'] >= 60e6, r['phases']['data_sync']['p50'] >= 20e6, r['phases']['metadata']['p50'] >= 40e6, r['write_latency']['p50'] >= 5e6")"
    is "... three checkpoints committed" 3 "$(json_get "$J" "r['commit']['count']")"
    check "... their syncs seen by faultfs (files $(counter fsyncs) >= 9, folders $(counter fsyncdirs) >= 3)" \
        test "$(counter fsyncdirs)" -ge 3 -a "$(counter fsyncs)" -ge 9
    check "... valid document" valid_doc "$J"
done

# --- a sync stuck longer than --timeout
ctl fsync_delay_ms=2500
J=$WORK/cm-stuck.json
check "io_uring: an fdatasync stuck 2.5 s, --timeout 1s: exit 1" run_rc 1 "$WORK/out" \
    timeout 60 "$TP" io commit "$D" --count 3 --engine io_uring --timeout 1s -q --json "$J"
check "... naming the log and the deadline" grep_q "$D/trainpath-commit/commit-00.log: no I/O completed within 1 s" "$WORK/out"
is "... valid document, code timeout" timeout "$(valid_doc "$J" >/dev/null && json_get "$J" "d['status']['code']")"
ctl fsync_delay_ms=2500
J=$WORK/ck-stuck.json
check "io_uring: a checkpoint whose fdatasync is stuck 2.5 s, --timeout 1s: exit 1" run_rc 1 "$WORK/out" \
    timeout 60 "$TP" io checkpoint "$D" --size 4M --shards 2 --repeat 1 --engine io_uring --timeout 1s -q --json "$J"
check "... naming the checkpoint and the deadline" \
    grep_q "$D/trainpath-ckpt/step-0000: fdatasync of the shards: no I/O completed within 1 s" "$WORK/out"
is "... valid document, code timeout" timeout "$(valid_doc "$J" >/dev/null && json_get "$J" "d['status']['code']")"
check "... nothing left" empty "$D"
ctl fsync_delay_ms=2500
J=$WORK/cm-stuck-psync.json
check "psync cannot bound a call (docs/storage.md): the commit finishes" run_rc 0 "$WORK/out" \
    timeout 60 "$TP" io commit "$D" --count 1 --engine psync --timeout 1s -q --json "$J"
is "... and reports the 2.5 s it took" True "$(json_get "$J" "r['sync_latency']['p50'] >= 2.5e9")"

# --- trainpath step with its --dir on faultfs: a checkpoint fails mid-run
S=$MNT/step; mkdir -p "$S"
small=(step -n 2 --steps 6 --batch 16 --sample-size 1K --grad-size 64K --compute-ms 1 --dir "$S"
       --ckpt-every 2 --ckpt-size 4M --timeout 10s)
ctl
check "step on faultfs, no fault: exit 0 (and the dataset is written)" run_rc 0 "$WORK/out" \
    timeout 60 "$TP" "${small[@]}" -q
for mode in sync async; do
    extra=(); [ $mode = async ] && extra=(--ckpt-async)
    J=$WORK/step-$mode.json
    # each checkpoint is 4 MiB (2 MiB per rank): the first goes through
    ctl write_error=EIO write_after=5M
    check "step, $mode checkpoints, EIO on a write after 5 MiB: exit 1" run_rc 1 "$WORK/out" \
        timeout 60 "$TP" "${small[@]}" "${extra[@]}" -q --json "$J"
    check "... mid-run: the first checkpoint went through ($(counter write_bytes) bytes) before the fault" \
        test "$(counter write_bytes)" -ge $((4 << 20)) -a "$(counter faults)" -ge 1
    check "... the message names the rank's shard and the error" \
        grep_q "$S/trainpath-step/ckpt-rank[01]/trainpath-ckpt/step-[0-9]+/shard-0000-of-0001.bin: write at offset [0-9]+ after [0-9]+ bytes of the shard were written: Input/output error" "$WORK/out"
    # rank 0 reports its own checkpoint's error, or, when rank 1's failure
    # reaches it first, rank 1 (whose reason is then on stderr only)
    echo "# step, $mode checkpoints: rank 0 says: $(json_get "$J" "d['status']['code'] + ': ' + d['status']['message']")"
    is "... rank 0's document is valid and failed: the I/O error, or the rank that hit it" "False True" \
        "$(valid_doc "$J" >/dev/null && json_run "$J" "import re; m=d['status']['message']; print(d['status']['ok'], bool(re.search(r'shard-0000-of-0001.bin: write .*Input/output error|^rank 1 on ', m)))")"
    check "... no checkpoint left behind" test -z "$(find "$S" -path '*ckpt*' -type f)"
done
J=$WORK/step-fsync.json
ctl fsync_error=EIO
check "step, EIO on fdatasync of a checkpoint: exit 1" run_rc 1 "$WORK/out" \
    timeout 60 "$TP" "${small[@]}" -q --json "$J"
check "... naming the shard and fdatasync" grep_q "shard-0000-of-0001.bin: fdatasync: Input/output error" "$WORK/out"
echo "# step, EIO on fdatasync: rank 0 says: $(json_get "$J" "d['status']['code'] + ': ' + d['status']['message']")"
is "... rank 0's document is valid and failed: the error, or the rank that hit it" "False True" \
    "$(valid_doc "$J" >/dev/null && json_run "$J" "import re; m=d['status']['message']; print(d['status']['ok'], bool(re.search(r'fdatasync: Input/output error|^rank 1 on ', m)))")"
ctl
finish
