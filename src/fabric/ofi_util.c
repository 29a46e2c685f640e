/* libfabric set-up shared by the transport (ofi.c) and the collectives'
 * channel (chan_ofi.c), declared in ofi_int.h: everything that is the same
 * for one RDM endpoint whichever of the two drives it. */
#include "ofi_int.h"

#include <dirent.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

#include <rdma/fi_cm.h>
#include <rdma/fi_errno.h>

#include "tp/gpu.h"

bool tp__ofi_takes_ip(const char *provider)
{
    static const char *const ip_provs[] = {"tcp", "verbs", "sockets", "udp", "net", "usnic"};
    size_t n = strcspn(provider, ";");
    for (size_t i = 0; i < sizeof ip_provs / sizeof ip_provs[0]; i++)
        if (strlen(ip_provs[i]) == n && strncmp(provider, ip_provs[i], n) == 0)
            return true;
    return false;
}

struct fi_info *tp__ofi_hints(const char *provider, uint64_t caps, uint64_t mode,
                              uint64_t mr_mode)
{
    struct fi_info *h = fi_dupinfo(NULL); /* fi_allocinfo, through the loader */
    if (!h)
        return NULL;
    h->ep_attr->type = FI_EP_RDM;
    h->caps = caps;
    h->mode = mode;
    h->domain_attr->mr_mode = (int)mr_mode;
    h->domain_attr->threading = FI_THREAD_DOMAIN;
    if (provider && !(h->fabric_attr->prov_name = strdup(provider))) {
        fi_freeinfo(h);
        return NULL;
    }
    return h;
}

static int failed(const struct fi_info *fi, const char *step, int rc, tp_error *err)
{
    return tp_error_set(err, TP_ESYS, "%s for provider %s: %s", step, fi->fabric_attr->prov_name,
                        fi_strerror(-rc));
}

/* libfabric's shm provider names an endpoint's region /dev/shm/PID:D:E. A
 * process killed with SIGKILL leaves its regions behind, and when the
 * kernel reuses its pid a new endpoint with the same name fails with
 * EBUSY. Before this process opens its first endpoint, any region named
 * after its pid belongs to a dead process: remove it. */
static void clean_stale_regions(void)
{
    char prefix[32];
    int len = snprintf(prefix, sizeof prefix, "%d:", (int)getpid());
    DIR *d = opendir("/dev/shm");
    if (!d)
        return;
    struct dirent *e;
    while ((e = readdir(d)))
        if (strncmp(e->d_name, prefix, (size_t)len) == 0) {
            char path[300];
            snprintf(path, sizeof path, "/dev/shm/%s", e->d_name);
            unlink(path);
        }
    closedir(d);
}

static pthread_once_t clean_once = PTHREAD_ONCE_INIT;

int tp__ofi_open(struct tp__ofi *o, struct fi_cq_attr *cq_attr, struct fi_av_attr *av_attr,
                 tp_error *err)
{
    struct fi_info *fi = o->info;
    int rc;
    if (strcmp(fi->fabric_attr->prov_name, "shm") == 0)
        pthread_once(&clean_once, clean_stale_regions);
    if ((rc = fi_fabric(fi->fabric_attr, &o->fabric, NULL)))
        return failed(fi, "fi_fabric", rc, err);
    if ((rc = fi_domain(o->fabric, fi, &o->domain, NULL)))
        return failed(fi, "fi_domain", rc, err);
    if ((rc = fi_cq_open(o->domain, cq_attr, &o->cq, NULL)))
        return failed(fi, "fi_cq_open", rc, err);
    if ((rc = fi_av_open(o->domain, av_attr, &o->av, NULL)))
        return failed(fi, "fi_av_open", rc, err);
    if ((rc = fi_endpoint(o->domain, fi, &o->ep, NULL)))
        return failed(fi, "fi_endpoint", rc, err);
    if ((rc = fi_ep_bind(o->ep, &o->av->fid, 0)))
        return failed(fi, "fi_ep_bind(av)", rc, err);
    if ((rc = fi_ep_bind(o->ep, &o->cq->fid, FI_TRANSMIT | FI_RECV)))
        return failed(fi, "fi_ep_bind(cq)", rc, err);
    if ((rc = fi_enable(o->ep)))
        return failed(fi, "fi_enable", rc, err);
    return 0;
}

void tp__ofi_close(struct tp__ofi *o)
{
    TP_OFI_CLOSE(o->ep);
    TP_OFI_CLOSE(o->av);
    TP_OFI_CLOSE(o->cq);
    TP_OFI_CLOSE(o->domain);
    TP_OFI_CLOSE(o->fabric);
    fi_freeinfo(o->info);
    o->info = NULL;
}

int tp__ofi_mr_reg(struct tp__ofi *o, void *buf, size_t bytes, uint64_t access,
                   struct tp_gpu *gpu, struct fid_mr **mr, void **desc, tp_error *err)
{
    uint64_t key = o->mr_mode & FI_MR_PROV_KEY ? 0 : o->next_key++;
    int rc;
    if (gpu) {
        struct iovec iov = {.iov_base = buf, .iov_len = bytes};
        struct fi_mr_attr attr = {.mr_iov = &iov, .iov_count = 1, .access = access,
                                  .requested_key = key, .iface = FI_HMEM_CUDA};
        attr.device.cuda = tp_gpu_device(gpu);
        rc = fi_mr_regattr(o->domain, &attr, 0, mr);
    } else {
        rc = fi_mr_reg(o->domain, buf, bytes, access, 0, key, 0, mr, NULL);
    }
    if (rc) {
        *mr = NULL;
        return tp_error_set(err, TP_ESYS, "fi_mr_reg of %zu bytes%s on %s: %s", bytes,
                            gpu ? " of GPU memory (FI_HMEM_CUDA)" : "", o->prov,
                            fi_strerror(-rc));
    }
    if (o->mr_mode & FI_MR_ENDPOINT) {
        rc = fi_mr_bind(*mr, &o->ep->fid, 0);
        if (!rc)
            rc = fi_mr_enable(*mr);
        if (rc)
            return tp_error_set(err, TP_ESYS, "binding a memory region to the %s endpoint: %s",
                                o->prov, fi_strerror(-rc));
    }
    *desc = o->mr_mode & FI_MR_LOCAL ? fi_mr_desc(*mr) : NULL;
    return 0;
}

int tp__ofi_cq_readerr(struct tp__ofi *o, struct fi_cq_err_entry *ee, char *detail, size_t cap)
{
    memset(ee, 0, sizeof *ee);
    detail[0] = 0;
    ssize_t n = fi_cq_readerr(o->cq, ee, 0);
    if (n == -FI_EAGAIN)
        return 0;
    if (n < 0)
        return (int)n;
    const char *d = fi_cq_strerror(o->cq, ee->prov_errno, ee->err_data, detail, cap);
    if (d && d != detail)
        snprintf(detail, cap, "%s", d);
    return 1;
}

int tp__ofi_name_hex(struct tp__ofi *o, char *buf, size_t cap, size_t *hexlen, tp_error *err)
{
    unsigned char name[TP__OFI_NAME_MAX];
    size_t len = sizeof name;
    int rc = fi_getname(&o->ep->fid, name, &len);
    if (rc)
        return tp_error_set(err, TP_ESYS, "fi_getname on %s: %s", o->prov, fi_strerror(-rc));
    if (2 * len + 1 > cap)
        return tp_error_set(err, TP_EUNSUP, "%s address of %zu bytes is too long to exchange",
                            o->prov, len);
    for (size_t i = 0; i < len; i++)
        snprintf(buf + 2 * i, 3, "%02x", name[i]);
    buf[2 * len] = 0;
    *hexlen = 2 * len;
    return 0;
}

int tp__ofi_unhex(const char *hex, size_t hexlen, unsigned char *name)
{
    if (hexlen == 0 || hexlen % 2 || hexlen / 2 > TP__OFI_NAME_MAX)
        return -1;
    for (size_t i = 0; i < hexlen / 2; i++) {
        unsigned v;
        if (sscanf(hex + 2 * i, "%2x", &v) != 1)
            return -1;
        name[i] = (unsigned char)v;
    }
    return (int)(hexlen / 2);
}

void tp__ofi_api_version(char *buf, size_t cap)
{
    uint32_t v = fi_version();
    snprintf(buf, cap, "%u.%u", FI_MAJOR(v), FI_MINOR(v));
}
