#!/usr/bin/env bash
# trainpath io: every workload on a folder of an ext4 (or whatever backs
# /tmp) and a tmpfs filesystem, with the result documents checked against the
# schema and against each other; the restore path catching a flipped byte;
# a reused dataset catching a corrupted record; and the durability order
# (no sync before the writes it covers completed; metadata only after the
# shards are durable; the folder fsync'd after the rename).
. "$(dirname "$0")/../lib.sh"

EXT=$WORK/ext; mkdir -p "$EXT"
SHM=$(mktemp -d /dev/shm/tp-io.XXXXXX); trap 'rm -rf "$SHM"; cleanup' EXIT
fs_of() { stat -f -c %T "$1"; }
echo "# folders: $EXT on $(fs_of "$EXT"), $SHM on $(fs_of "$SHM")"

for D in "$EXT" "$SHM"; do
    tag=$(fs_of "$D" | tr / _)
    # checkpoint: 3 commits with restore checks; the phases add up to the commit
    J=$WORK/ck-$tag.json
    check "$tag: checkpoint --verify exits 0" run_rc 0 "$WORK/out" \
        "$TP" io checkpoint "$D" --size 48M --shards 3 --repeat 3 --verify --bs 1M --json "$J"
    check "$tag: checkpoint document is valid" valid_doc "$J"
    check "$tag: 3 checkpoints committed, each verified with no bad block" \
        test "$(json_get "$J" "[c['committed'] and c['verify']['bad_blocks']==0 and c['verify']['bad_shards']==0 for c in r['checkpoints']]")" = "[True, True, True]"
    check "$tag: write + data sync + metadata <= commit (each checkpoint)" \
        test "$(json_get "$J" "all(c['write']['value']+c['data_sync']['value']+c['metadata']['value'] <= c['commit']['value'] for c in r['checkpoints'])")" = True
    check "$tag: every byte counted (3 x 48M)" \
        test "$(json_get "$J" "sum(c['bytes'] for c in r['checkpoints'])")" = $((3 * 48 * 1048576))
    check "$tag: commit distribution over 3 checkpoints" \
        test "$(json_get "$J" "r['commit']['count'], r['commit']['p50'] <= r['commit']['max']")" = "3 True"
    check "$tag: buffered restore right after writing is flagged as page cache" \
        test "$(json_get "$J" "r['checkpoints'][0]['verify']['page_cache'], 'warning' in r['checkpoints'][0]['verify']")" = "cached True"
    check "$tag: no checkpoint left behind without --keep" test ! -e "$D/trainpath-ckpt"

    # --keep leaves the files and a metadata file that names each shard's checksum
    check "$tag: checkpoint --keep --direct --jobs 2" run_rc 0 "$WORK/out" \
        "$TP" io checkpoint "$D" --size 8M --shards 4 --repeat 2 --keep --direct --jobs 2 -q --json "$J"
    check "$tag: --keep leaves both steps with meta.json and 4 shards of 2M" \
        test "$(ls "$D/trainpath-ckpt/step-0001" | tr '\n' ' ')" = "meta.json shard-0000-of-0004.bin shard-0001-of-0004.bin shard-0002-of-0004.bin shard-0003-of-0004.bin "
    check "$tag: metadata lists 4 shards with xxh3 checksums" \
        test "$(python3 -c "import json,sys; m=json.load(open(sys.argv[1])); print(len(m['shards']), all(len(s['xxh3'])==16 for s in m['shards']), m['shards'][3]['bytes'])" "$D/trainpath-ckpt/step-0001/meta.json")" = "4 True 2097152"
    rm -rf "$D/trainpath-ckpt"

    # dataset: created, then reused; both epochs read every record once
    J=$WORK/ds-$tag.json
    check "$tag: dataset exits 0" run_rc 0 "$WORK/out" \
        "$TP" io dataset "$D" --records 3000 --record-size 4K --files 5 --epochs 2 --qd 16 --json "$J"
    check "$tag: dataset document is valid" valid_doc "$J"
    check "$tag: dataset created; 2 epochs of 3000 reads; nothing wrong" \
        test "$(json_get "$J" "r['created'], [e['reads'] for e in r['epochs']], r['wrong'], r['latency']['count']")" = "True [3000, 3000] 0 6000"
    check "$tag: small buffered dataset warns that it fits in the page cache" \
        test "$(json_get "$J" "r['page_cache']['fits'], 'warning' in r['page_cache']")" = "True True"
    J2=$WORK/ds2-$tag.json
    check "$tag: second run reuses it (direct, verify every byte, 2 jobs, psync)" run_rc 0 "$WORK/out" \
        "$TP" io dataset "$D" --records 3000 --record-size 4K --files 5 --epochs 1 --direct --verify --jobs 2 --engine psync -q --json "$J2"
    check "$tag: reused, read by psync, no warning under --direct" \
        test "$(json_get "$J2" "r['created'], r['engine']['engine'], r['wrong'], 'warning' in r['page_cache']")" = "False psync 0 False"
    # a record overwritten with another record's bytes is caught on reuse
    python3 - "$D/trainpath-dataset/data-0002.bin" <<'PY'
import sys
f = open(sys.argv[1], 'r+b'); f.seek(4096 * 7); blk = f.read(4096)
f.seek(4096 * 9); f.write(blk); f.close()
PY
    check "$tag: a misplaced record is found (exit 1, names the file and record)" \
        run_rc 1 "$WORK/out" "$TP" io dataset "$D" --records 3000 --record-size 4K --files 5 --epochs 1 -q
    check "$tag: ... the message says which" grep -q "data-0002.bin: record 47: the header of another record" "$WORK/out"
    # a different record size makes a new dataset, not a wrong one
    check "$tag: another record size recreates the dataset" run_rc 0 "$WORK/out" \
        "$TP" io dataset "$D" --records 3000 --record-size 1K --files 5 --epochs 1 -q --json "$J2"
    check "$tag: ... created anew" test "$(json_get "$J2" "r['created'], r['wrong']")" = "True 0"

    # commit: every commit timed, percentiles ordered, sync dominates
    J=$WORK/cm-$tag.json
    check "$tag: commit exits 0" run_rc 0 "$WORK/out" "$TP" io commit "$D" --count 200 --json "$J"
    check "$tag: commit document is valid" valid_doc "$J"
    check "$tag: 200 commits; p50 <= p99 <= p99.9 <= max" \
        test "$(json_get "$J" "r['commits'], r['latency']['count'], r['latency']['p50'] <= r['latency']['p99'] <= r['latency']['p99_9'] <= r['latency']['max']")" = "200 200 True"
    check "$tag: each commit is a write then a sync (write + sync means within 1 % of the commit mean)" \
        test "$(json_get "$J" "abs(r['write_latency']['mean'] + r['sync_latency']['mean'] - r['latency']['mean']) <= 0.01 * r['latency']['mean']")" = True
    for mode in "--sync dsync" "--sync fsync --engine io_uring --overwrite" "--jobs 2 --time 200ms --count 100000"; do
        check "$tag: commit $mode" run_rc 0 "$WORK/out" "$TP" io commit "$D" $mode -q --json "$J"
        check "$tag: ... valid, commits counted" test "$(json_get "$J" "d['status']['ok'] and r['commits'] == r['latency']['count'] > 0")" = True
    done
    check "$tag: nothing left behind by commit" test ! -e "$D/trainpath-commit"
done

# during checkpoint: the reads go on while a checkpoint is written
J=$WORK/during.json
check "dataset --during checkpoint" run_rc 0 "$WORK/out" \
    "$TP" io dataset "$EXT" --records 4000 --epochs 1 --during checkpoint --size 64M --shards 2 -q --json "$J"
check "... reports baseline, during, the p99 ratio and the checkpoint" \
    test "$(json_get "$J" "r['during_checkpoint']['baseline']['count']==4000, r['during_checkpoint']['during']['count']>0, r['during_checkpoint']['p99_ratio']>0, r['during_checkpoint']['checkpoint']['bytes']")" = "True True True 67108864"
check "... valid document" valid_doc "$J"

# the restore path catches a flipped byte, names shard and block, exit 1
J=$WORK/bad.json
check "a byte flipped after the commit fails --verify with exit 1" run_rc 1 "$WORK/out" \
    env TP_IO_TEST_CORRUPT=1:1048600 "$TP" io checkpoint "$EXT" --size 8M --shards 2 --repeat 1 --verify -q --json "$J"
check "... naming the shard and block" grep -q "shard-0001-of-0002.bin: block 1 (offset 1048576) differs" "$WORK/out"
check "... and the document says failed (check)" test "$(json_get "$J" "d['status']['ok'], d['status']['code']")" = "False check"
check "... valid document" valid_doc "$J"

# durability order, io_uring: a sync is pushed only when no write is in
# flight, and every file written is synced before the run ends
T=$WORK/trace
check "checkpoint traced (io_uring, 2 jobs, 4 shards, 2 checkpoints)" run_rc 0 "$WORK/out" \
    env TP_IO_TRACE="$T" "$TP" io checkpoint "$EXT" --size 16M --shards 4 --repeat 2 --jobs 2 --engine io_uring -q
check "io_uring: no fdatasync pushed while a write was in flight; every written shard synced" \
    python3 - "$T" <<'PY'
import sys
inflight = 0; dirty = set(); syncs = 0; writes = 0; bad = []
for ln, line in enumerate(open(sys.argv[1])):
    ev, kind, fd = line.split()[:3]
    if kind == 'write':
        if ev == 'push': inflight += 1; writes += 1
        else: inflight -= 1; dirty.add(fd)
    elif kind == 'fdatasync':
        if ev == 'push':
            syncs += 1
            if inflight: bad.append(ln)
        else: dirty.discard(fd)
print('# %d writes, %d syncs, early syncs at lines %s, unsynced fds %s' % (writes, syncs, bad[:5], sorted(dirty)))
sys.exit(0 if writes == 32 and syncs == 8 and not bad and not dirty else 1)
PY

# psync: the system calls in order, as strace sees them
if command -v strace >/dev/null; then
    S=$WORK/strace
    check "checkpoint under strace (psync, 2 jobs)" run_rc 0 "$WORK/out" \
        strace -f -o "$S" -e trace=pwrite64,fdatasync,fsync,rename,openat \
        "$TP" io checkpoint "$EXT" --size 8M --shards 2 --repeat 1 --jobs 2 --engine psync -q
    check "psync: shard writes < fdatasyncs < meta.json.tmp < fsync < rename < folder fsync" \
        python3 - "$S" <<'PY'
import re, sys
lines = open(sys.argv[1]).read().splitlines()
def idx(pred):
    return [i for i, l in enumerate(lines) if pred(l)]
# completion lines: a whole call, or the resumed half of one
done = lambda name: idx(lambda l: (re.search(r'\b%s\(' % name, l) and 'unfinished' not in l) or ('<... %s resumed>' % name) in l)
start = lambda name: idx(lambda l: re.search(r'\b%s\(' % name, l))
w_end = max(done('pwrite64')); s_start = min(start('fdatasync')); s_end = max(done('fdatasync'))
tmp = min(idx(lambda l: 'openat(' in l and 'meta.json.tmp' in l))
ren = min(idx(lambda l: 'rename(' in l and 'meta.json.tmp' in l))
fs = [i for i in start('fsync')]
dir_open = min(i for i in idx(lambda l: 'openat(' in l and 'O_DIRECTORY' in l and 'step-0000' in l) if i > ren)
ok = w_end < s_start and s_end < tmp and any(tmp < i < ren for i in fs) and any(i > dir_open for i in fs)
print('# last write done %d, first sync %d, last sync done %d, tmp %d, rename %d, dir open %d, fsyncs %s' % (w_end, s_start, s_end, tmp, ren, dir_open, fs))
sys.exit(0 if ok else 1)
PY
else
    ok "# SKIP strace not installed"
fi

# io info on the live folder
check "io info on the test folder" run_rc 0 "$WORK/out" "$TP" io info "$EXT" --json "$WORK/info.json"
check "... names the filesystem and a kind" test "$(json_get "$WORK/info.json" "r['storage']['fs']['type'] == '$(fs_of "$EXT")'.replace('ext2/ext3','ext4'), r['storage']['kind'] in ('block','tmpfs','nfs','nvme','unknown') or r['storage']['kind'].startswith('nvme-of')")" = "True True"
check "... valid document" valid_doc "$WORK/info.json"
finish
