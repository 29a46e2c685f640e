#!/usr/bin/env bash
# trainpath io --device on a real block device (a loop device over a file):
# the workloads run on the raw device, and its safety refusals hold: no
# --destroy-data, a filesystem signature, a partition table, a mounted
# device, O_DSYNC commits on a device.
. "$(dirname "$0")/../lib.sh"

IMG=$WORK/disk.img
truncate -s 160M "$IMG"
LOOP=$(losetup -f --show "$IMG" 2>/dev/null) || skip_all "no loop device (losetup -f failed)"
trap 'losetup -d "$LOOP" 2>/dev/null; cleanup' EXIT
echo "# device $LOOP over $IMG"

check "--device without --destroy-data: exit 2" run_rc 2 "$WORK/out" "$TP" io commit --device "$LOOP"
check "... says what to add" grep -q "$LOOP: the test overwrites the device's data; add --destroy-data" "$WORK/out"

J=$WORK/ck.json
check "checkpoint on the raw device (direct, verify, 2 jobs)" run_rc 0 "$WORK/out" \
    "$TP" io checkpoint --device "$LOOP" --destroy-data --size 32M --shards 2 --repeat 2 --verify --direct --jobs 2 -q --json "$J"
check "... valid document" valid_doc "$J"
check "... target is the device, storage a loop block device, both verified" \
    test "$(json_get "$J" "r['target']['kind'], r['storage']['block']['kind'], [c['verify']['bad_blocks'] for c in r['checkpoints']], r['checkpoints'][1]['verify']['page_cache']")" = "device loop [0, 0] direct"
# the bytes are on the device: shard 1 starts 16 MiB in, with its block header
check "... shard 1's first block header is on the device at 16 MiB" \
    python3 - "$IMG" <<'PY'
import struct, sys
f = open(sys.argv[1], 'rb'); f.seek(16 << 20); magic, a, b, seed = struct.unpack('<QQQQ', f.read(32))
print('# magic %x shard %d ckpt %d block %d seed %d' % (magic, a & 0xffffffff, a >> 32, b, seed))
sys.exit(0 if magic == 0x7470696f68647231 and a & 0xffffffff == 1 and b == 0 else 1)
PY
check "a corrupted device checkpoint is caught" run_rc 1 "$WORK/out" \
    env TP_IO_TEST_CORRUPT=0:4096 "$TP" io checkpoint --device "$LOOP" --destroy-data --size 8M --shards 2 --repeat 1 --verify -q
check "... named by device and offset" grep -q "$LOOP@0: block 0 (offset 0) differs" "$WORK/out"

J=$WORK/ds.json
check "dataset on the raw device" run_rc 0 "$WORK/out" \
    "$TP" io dataset --device "$LOOP" --destroy-data --records 4000 --record-size 4K --epochs 2 --verify -q --json "$J"
check "... every record read twice, none wrong" test "$(json_get "$J" "r['latency']['count'], r['wrong'], r['created']")" = "8000 0 True"
check "commit on the raw device" run_rc 0 "$WORK/out" \
    "$TP" io commit --device "$LOOP" --destroy-data --count 50 -q --json "$WORK/cm.json"
check "... 50 commits" test "$(json_get "$WORK/cm.json" "r['commits']")" = 50
check "--sync dsync on a device: exit 2" run_rc 2 "$WORK/out" \
    "$TP" io commit --device "$LOOP" --destroy-data --sync dsync -q
check "too large for the device: exit 2" run_rc 2 "$WORK/out" \
    "$TP" io checkpoint --device "$LOOP" --destroy-data --size 1G -q

if command -v mkfs.ext4 >/dev/null; then
    mkfs.ext4 -q -F "$LOOP" >/dev/null 2>&1
    check "a device holding a filesystem: exit 2" run_rc 2 "$WORK/out" \
        "$TP" io commit --device "$LOOP" --destroy-data -q
    check "... names it" grep -q "$LOOP: holds a ext4 filesystem; refusing" "$WORK/out"
    M=$WORK/mnt; mkdir -p "$M"
    check "a mounted device: exit 2" run_rc 2 "$WORK/out" \
        unshare -m sh -c "mount '$LOOP' '$M' && \"\$0\" io commit --device '$LOOP' --destroy-data -q" "$TP"
    check "... as mounted, naming where" grep -q "$LOOP: mounted (at $M)" "$WORK/out"
    wipefs -a -q "$LOOP"
fi
# an MBR partition table with one partition (written byte by byte: no fdisk needed)
python3 - "$LOOP" <<'PY'
import struct, sys
mbr = bytearray(512)
mbr[446:462] = bytes([0, 0, 0, 0, 0x83, 0, 0, 0]) + struct.pack('<II', 2048, 4096)
mbr[510:512] = b'\x55\xaa'
with open(sys.argv[1], 'r+b') as f: f.write(mbr)
PY
check "a device holding a partition table: exit 2" run_rc 2 "$WORK/out" \
    "$TP" io dataset --device "$LOOP" --destroy-data -q
check "... names it" grep -q "$LOOP: holds a dos partition table; refusing" "$WORK/out"
finish
