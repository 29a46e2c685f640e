/* Targets: the folder or raw block device a workload writes to, checked
 * before anything is written. A raw device is destructive, so it takes an
 * explicit --destroy-data and is refused when the kernel says it is in use
 * (O_EXCL fails while it or a partition is mounted or held by dm/md) or when
 * libblkid finds a partition table or a filesystem on it: an empty, unused
 * device is the only kind trainpath will overwrite. */
#include <blkid/blkid.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/fs.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "tp/blkpath.h"
#include "tp/file.h"
#include "tp/storage.h"

/* O_DIRECT alignment from statx STATX_DIOALIGN (Linux 6.1+; the struct is
 * the kernel's, from <linux/stat.h> through <linux/fs.h>). Returns 0 when
 * the kernel gave it. */
static int dio_align_statx(const char *path, uint32_t *mem, uint32_t *off)
{
    struct statx sx;
    memset(&sx, 0, sizeof sx);
    if (statx(AT_FDCWD, path, 0, STATX_DIOALIGN, &sx) != 0)
        return -1;
    if (!(sx.stx_mask & STATX_DIOALIGN))
        return -1;
    if (sx.stx_dio_mem_align == 0 || sx.stx_dio_offset_align == 0)
        return -1; /* the filesystem does not support O_DIRECT */
    *mem = sx.stx_dio_mem_align;
    *off = sx.stx_dio_offset_align;
    return 0;
}

static void set_alignment(struct tp_target *t, const char *probe, const char *sysfs_root)
{
    if (dio_align_statx(probe, &t->dio_mem_align, &t->dio_off_align) == 0) {
        t->align_source = "statx";
        return;
    }
    uint32_t lbs = tp_blkpath_logical_block(t->path, sysfs_root);
    t->dio_mem_align = lbs;
    t->dio_off_align = lbs;
    t->align_source = "logical_block_size";
}

static int open_dir(const struct tp_target_opts *o, struct tp_target *t, tp_error *err)
{
    struct stat st;
    if (stat(o->dir, &st) != 0)
        return tp_error_errno(err, TP_EUSAGE, errno, "%s", o->dir);
    if (!S_ISDIR(st.st_mode))
        return tp_error_set(err, TP_EUSAGE, "%s: not a directory", o->dir);
    if (access(o->dir, W_OK | X_OK) != 0)
        return tp_error_errno(err, TP_EUSAGE, errno, "%s: not writable", o->dir);
    /* access() trusts permission bits; a read-only mount says so only on write */
    char probe[4200];
    snprintf(probe, sizeof probe, "%s/.trainpath-probe.%d", o->dir, (int)getpid());
    int fd = open(probe, O_CREAT | O_EXCL | O_WRONLY, 0600);
    if (fd < 0)
        return tp_error_errno(err, TP_EUSAGE, errno, "%s: cannot create files", o->dir);
    close(fd);
    t->is_device = false;
    t->dev_fd = -1;
    snprintf(t->path, sizeof t->path, "%s", o->dir);
    set_alignment(t, probe, o->sysfs_root);
    unlink(probe);
    return 0;
}

/* What libblkid finds on the device: "" when nothing. */
static int probe_signature(const char *dev, char *what, size_t cap, tp_error *err)
{
    what[0] = '\0';
    blkid_probe pr = blkid_new_probe_from_filename(dev);
    if (!pr)
        return tp_error_errno(err, TP_EUSAGE, errno, "%s: cannot probe for signatures", dev);
    blkid_probe_enable_superblocks(pr, 1);
    blkid_probe_set_superblocks_flags(pr, BLKID_SUBLKS_TYPE);
    blkid_probe_enable_partitions(pr, 1);
    blkid_probe_set_partitions_flags(pr, BLKID_PARTS_MAGIC);
    int rc = blkid_do_safeprobe(pr);
    if (rc == 0) {
        const char *type = NULL;
        if (blkid_probe_lookup_value(pr, "TYPE", &type, NULL) == 0 && type)
            snprintf(what, cap, "a %s filesystem", type);
        else if (blkid_probe_lookup_value(pr, "PTTYPE", &type, NULL) == 0 && type)
            snprintf(what, cap, "a %s partition table", type);
        else
            snprintf(what, cap, "a signature");
    } else if (rc == -2)
        snprintf(what, cap, "ambivalent signatures");
    blkid_free_probe(pr);
    return 0;
}

/* Whether dev (or, for a whole disk, one of its partitions) is mounted: the
 * mount point of the first mount found in cap, "" when none is. Asked
 * before the open, so that a mounted disk is refused as mounted whatever
 * error the kernel's open would give (EBUSY, or EPERM where writes to
 * mounted devices are blocked). */
static void mounted_at(dev_t dev, char *at, size_t cap)
{
    at[0] = '\0';
    FILE *f;
    tp_error ignored;
    if (tp_file_open("/proc/self/mountinfo", NULL, TP_FILE_MAX_SYSTEM, TP_FILE_REGULAR, &f,
                     &ignored))
        return;
    char *line = NULL;
    size_t n = 0;
    while (!at[0] && getline(&line, &n, f) > 0) {
        unsigned maj, min;
        char point[4096];
        if (sscanf(line, "%*u %*u %u:%u %*s %4095s", &maj, &min, point) != 3)
            continue;
        char sys[128], whole[64];
        /* a partition's sysfs folder sits in its disk's: compare the disk */
        snprintf(sys, sizeof sys, "/sys/dev/block/%u:%u/../dev", maj, min);
        FILE *d = fopen(sys, "re");
        bool under = false;
        if (d) {
            unsigned dmaj, dmin;
            under = fgets(whole, sizeof whole, d) && sscanf(whole, "%u:%u", &dmaj, &dmin) == 2 &&
                    makedev(dmaj, dmin) == dev;
            fclose(d);
        }
        if (makedev(maj, min) == dev || under)
            snprintf(at, cap, "%s", point);
    }
    free(line);
    fclose(f);
}

static int open_device(const struct tp_target_opts *o, struct tp_target *t, tp_error *err)
{
    struct stat st;
    if (stat(o->device, &st) != 0)
        return tp_error_errno(err, TP_EUSAGE, errno, "--device %s", o->device);
    if (!S_ISBLK(st.st_mode))
        return tp_error_set(err, TP_EUSAGE, "--device %s: not a block device", o->device);
    if (!o->destroy_data)
        return tp_error_set(err, TP_EUSAGE,
                            "--device %s: the test overwrites the device's data; add "
                            "--destroy-data to allow it",
                            o->device);
    char at[4096];
    mounted_at(st.st_rdev, at, sizeof at);
    if (at[0])
        return tp_error_set(err, TP_EUSAGE, "--device %s: mounted (at %s): refused", o->device,
                            at);
    int fd = open(o->device, O_RDWR | O_EXCL | O_CLOEXEC | (o->direct ? O_DIRECT : 0));
    if (fd < 0 && errno == EBUSY)
        return tp_error_set(err, TP_EUSAGE,
                            "--device %s: in use (mounted, or held by a partition, dm or md): "
                            "refused",
                            o->device);
    if (fd < 0)
        return tp_error_errno(err, TP_EUSAGE, errno, "--device %s", o->device);
    char what[128];
    int rc = probe_signature(o->device, what, sizeof what, err);
    if (rc == 0 && what[0])
        rc = tp_error_set(err, TP_EUSAGE,
                          "--device %s: holds %s; refusing to overwrite it (wipefs it first if "
                          "it is really free)",
                          o->device, what);
    uint64_t bytes = 0;
    if (rc == 0 && ioctl(fd, BLKGETSIZE64, &bytes) != 0)
        rc = tp_error_errno(err, TP_ESYS, errno, "--device %s: BLKGETSIZE64", o->device);
    if (rc) {
        close(fd);
        return rc;
    }
    t->is_device = true;
    t->dev_fd = fd;
    t->dev_bytes = bytes;
    snprintf(t->path, sizeof t->path, "%s", o->device);
    int lbs = 0;
    if (ioctl(fd, BLKSSZGET, &lbs) == 0 && lbs > 0) {
        t->dio_mem_align = (uint32_t)lbs;
        t->dio_off_align = (uint32_t)lbs;
        t->align_source = "logical_block_size";
    } else
        set_alignment(t, o->device, o->sysfs_root);
    return 0;
}

int tp_target_open(const struct tp_target_opts *o, struct tp_target *t, tp_error *err)
{
    memset(t, 0, sizeof *t);
    t->dev_fd = -1;
    if (o->device && o->dir)
        return tp_error_set(err, TP_EUSAGE, "give a folder or --device, not both");
    if (o->device)
        return open_device(o, t, err);
    if (!o->dir || !o->dir[0])
        return tp_error_set(err, TP_EUSAGE, "no target: give a folder or --device");
    return open_dir(o, t, err);
}

uint64_t tp_target_space(const struct tp_target *t)
{
    if (t->is_device)
        return t->dev_bytes;
    struct statvfs sv;
    if (statvfs(t->path, &sv) != 0)
        return 0;
    return (uint64_t)sv.f_bavail * sv.f_frsize;
}

void tp_target_close(struct tp_target *t)
{
    if (t->dev_fd >= 0)
        close(t->dev_fd);
    t->dev_fd = -1;
}

double tp_file_cached_fraction(int fd, uint64_t bytes)
{
    if (bytes == 0)
        return -1;
    long page = sysconf(_SC_PAGESIZE);
    void *m = mmap(NULL, bytes, PROT_READ, MAP_SHARED, fd, 0);
    if (m == MAP_FAILED)
        return -1;
    size_t pages = (size_t)((bytes + (uint64_t)page - 1) / (uint64_t)page);
    unsigned char *vec = malloc(pages);
    double frac = -1;
    if (vec && mincore(m, bytes, vec) == 0) {
        size_t in = 0;
        for (size_t i = 0; i < pages; i++)
            in += vec[i] & 1;
        frac = (double)in / (double)pages;
    }
    free(vec);
    munmap(m, bytes);
    return frac;
}
