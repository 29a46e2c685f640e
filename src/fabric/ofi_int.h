/* Internal to src/fabric: libfabric set-up shared by the point-to-point
 * transport (ofi.c) and the collectives' channel (chan_ofi.c). */
#ifndef TP_FABRIC_OFI_INT_H
#define TP_FABRIC_OFI_INT_H

#include <stdbool.h>

#include <rdma/fabric.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>

#include "tp/error.h"

/* Close a fid (any struct with a .fid member) if open, and forget it. */
#define TP_OFI_CLOSE(p)                                                                            \
    do {                                                                                           \
        if (p)                                                                                     \
            fi_close(&(p)->fid);                                                                   \
        (p) = NULL;                                                                                \
    } while (0)

/* Does the core provider of provider ("tcp" in "tcp;ofi_rxm") bind to an
 * IP address? The others (shm, efa, psm2, cxi, ...) address by their own
 * means and get node = NULL. */
bool tp_ofi_takes_ip(const char *provider);

/* The fids of one endpoint. */
struct tp_ofi_fids {
    struct fid_fabric *fabric;
    struct fid_domain *domain;
    struct fid_cq *cq;
    struct fid_av *av;
    struct fid_ep *ep;
};

/* Open fabric, domain, CQ (cq_attr), AV (av_attr) and an endpoint for fi,
 * bind the AV and the CQ (transmit and receive) and enable it. For the shm
 * provider, the first call removes the regions a dead process with this
 * pid left in /dev/shm (they would make the endpoint fail with EBUSY). On error
 * (TP_ESYS naming the step and the provider) the fids opened so far stay in
 * f, for the caller's close path. */
int tp_ofi_open_fids(struct fi_info *fi, struct fi_cq_attr *cq_attr, struct fi_av_attr *av_attr,
                     struct tp_ofi_fids *f, tp_error *err);

#endif
