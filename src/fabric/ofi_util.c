/* libfabric set-up shared by the transports above it (ofi_int.h). */
#include "ofi_int.h"

#include <dirent.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rdma/fi_errno.h>

bool tp_ofi_takes_ip(const char *provider)
{
    static const char *const ip_provs[] = {"tcp", "verbs", "sockets", "udp", "net", "usnic"};
    size_t n = strcspn(provider, ";");
    for (size_t i = 0; i < sizeof ip_provs / sizeof ip_provs[0]; i++)
        if (strlen(ip_provs[i]) == n && strncmp(provider, ip_provs[i], n) == 0)
            return true;
    return false;
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

int tp_ofi_open_fids(struct fi_info *fi, struct fi_cq_attr *cq_attr, struct fi_av_attr *av_attr,
                     struct tp_ofi_fids *f, tp_error *err)
{
    int rc;
    if (strcmp(fi->fabric_attr->prov_name, "shm") == 0)
        pthread_once(&clean_once, clean_stale_regions);
    if ((rc = fi_fabric(fi->fabric_attr, &f->fabric, NULL)))
        return failed(fi, "fi_fabric", rc, err);
    if ((rc = fi_domain(f->fabric, fi, &f->domain, NULL)))
        return failed(fi, "fi_domain", rc, err);
    if ((rc = fi_cq_open(f->domain, cq_attr, &f->cq, NULL)))
        return failed(fi, "fi_cq_open", rc, err);
    if ((rc = fi_av_open(f->domain, av_attr, &f->av, NULL)))
        return failed(fi, "fi_av_open", rc, err);
    if ((rc = fi_endpoint(f->domain, fi, &f->ep, NULL)))
        return failed(fi, "fi_endpoint", rc, err);
    if ((rc = fi_ep_bind(f->ep, &f->av->fid, 0)))
        return failed(fi, "fi_ep_bind(av)", rc, err);
    if ((rc = fi_ep_bind(f->ep, &f->cq->fid, FI_TRANSMIT | FI_RECV)))
        return failed(fi, "fi_ep_bind(cq)", rc, err);
    if ((rc = fi_enable(f->ep)))
        return failed(fi, "fi_enable", rc, err);
    return 0;
}
