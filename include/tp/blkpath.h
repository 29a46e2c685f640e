/* Where a path's bytes really go: the filesystem it lives on, the block
 * device behind it (through partitions, device-mapper and md down to the
 * disks), and for NVMe the controller; for NVMe over Fabrics the transport
 * (tcp, rdma, fc, loop), the target address, the subsystem NQN, the state and
 * the queue count. Read from sysfs as the kernel documents it
 * (Documentation/ABI/testing/sysfs-block, sysfs-class-nvme), under a root
 * that tests and offline audits point at a snapshot. */
#ifndef TP_BLKPATH_H
#define TP_BLKPATH_H

#include <jansson.h>
#include <stdint.h>
#include <stdio.h>

#include "tp/error.h"

/* Describe the storage behind path as the JSON object every io result
 * carries as "storage" and `trainpath io info` prints:
 *
 *   {"path", "fs": {"type","mount","source","options"} | null,
 *    "block": {"name","dev","kind","size_bytes","logical_block_size",
 *              "physical_block_size","rotational","scheduler","model",
 *              "partition_of","slaves":[...], "dm_name" (dm only)} | null,
 *    "disks": [the leaf devices, each like "block"],
 *    "nvme": [{"controller","transport","address","traddr","trsvcid",
 *              "subsysnqn","state","queue_count","model","serial",
 *              "firmware_rev","cntrltype","hostnqn","fabrics":bool,
 *              "dhchap":bool|null,"tls":bool|null}...],
 *    "kind": "nvme-of/tcp" | "nvme-of/rdma" | "nvme-of/fc" | "nvme-of/loop" |
 *            "nvme" | "nfs" | "tmpfs" | "block" | "unknown"}
 *
 * path is a file or folder (stat gives its device), a block device node, or
 * "/dev/NAME" / "NAME" naming a block device when sysfs_root is a snapshot.
 * sysfs_root is the folder standing for /sys (NULL or "": the live /sys);
 * mountinfo is a file standing for /proc/self/mountinfo (NULL: the live one;
 * "" skips the filesystem part).
 *
 * fs is the mount whose mount point is the longest prefix of the path's
 * realpath (among equal mount points the last line, the one on top); its
 * options are the mount's then the superblock's, as findmnt shows them. fs
 * is null when path names a device rather than a place in a filesystem.
 * block is found by device number (sysfs dev/block/MAJ:MIN), else by the
 * mount's source "/dev/NAME" (btrfs gives an anonymous number). block.kind
 * is "partition", "dm" (with "dm_name"), "md", "loop", "nvme", "virtio",
 * "scsi" or "disk"; a partition's queue facts and model are its disk's.
 * disks follow partitions and slaves/ down to the devices under no other.
 * nvme lists each controller of the NVMe disks once (with native multipath,
 * every path of the subsystem); queue_count is the kernel's, the admin queue
 * included; traddr/trsvcid come out of address ("traddr=...,trsvcid=...";
 * for PCIe traddr is the PCI function); dhchap and tls tell whether a
 * secret or key is configured, null when the attribute cannot be read.
 * kind follows the first controller's transport, else the filesystem type,
 * else whether a block device was found.
 *
 * Facts that cannot be read are null, never an error. Errors: TP_EUSAGE
 * "PATH: No such file or directory" when path does not exist (or cannot be
 * stat'ed); TP_EUSAGE naming --mountinfo when the mountinfo file given
 * cannot be read, is not a regular file or is over TP_FILE_MAX_SYSTEM
 * (tp/file.h); TP_ENOMEM. Returns a new reference in *out, NULL on error. */
int tp_blkpath_describe(const char *path, const char *sysfs_root, const char *mountinfo,
                        json_t **out, tp_error *err);

/* Logical block size in bytes of the block device behind path (the O_DIRECT
 * alignment when statx gives none), found as tp_blkpath_describe finds
 * "block" (with the live mount table only when sysfs_root is live); a
 * partition's is its disk's, dm and md have their own. 512 when it cannot
 * be found. */
uint32_t tp_blkpath_logical_block(const char *path, const char *sysfs_root);

/* Print the description as a few human lines: the path, filesystem and
 * kind; the block device and the disks under it; one line per NVMe
 * controller:
 *
 *   storage: /data on xfs (/dev/mapper/vg-data at /data): nvme-of/tcp
 *     block: dm-0 (dm 253:0 vg-data) 1.1 TB, blocks 512/4096 B, scheduler none, ssd -> nvme0n1
 *     nvme0: tcp traddr 10.0.0.5:4420 nqn.2023-10.com.example:pool live, 8 I/O queues, dhchap */
void tp_blkpath_print(FILE *f, const json_t *desc);

#endif
