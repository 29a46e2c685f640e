/* libfabric set-up shared by the transports above it (include/tp/ofi_util.h). */
#include "tp/ofi_util.h"

#include <string.h>

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

int tp_ofi_open_fids(struct fi_info *fi, struct fi_cq_attr *cq_attr, struct fi_av_attr *av_attr,
                     struct tp_ofi_fids *f, tp_error *err)
{
    int rc;
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
