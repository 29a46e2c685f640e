/* Internal to src/fabric: the libfabric set-up that the point-to-point
 * transport (ofi.c) and the collectives' channel (chan_ofi.c) share, so each
 * piece exists once: hints, opening the fids of one RDM endpoint, memory
 * registration, reading a completion error, and the hex form of endpoint
 * addresses that travels over a control path. */
#ifndef TP_FABRIC_OFI_INT_H
#define TP_FABRIC_OFI_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <rdma/fabric.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>

#include "tp/error.h"

struct tp_gpu;

/* libfabric is loaded on first use, not linked (ofi_lib.c says why): the
 * seven exported functions src/fabric calls go through these, which load
 * it and, where it cannot be loaded, fail with -FI_ENOSYS (fi_strerror
 * then says why it could not). The fids' operations need no such help:
 * they are calls through tables the library filled in. */
int tp__fi_getinfo(uint32_t version, const char *node, const char *service, uint64_t flags,
                   const struct fi_info *hints, struct fi_info **info);
void tp__fi_freeinfo(struct fi_info *info);
struct fi_info *tp__fi_dupinfo(const struct fi_info *info);
int tp__fi_fabric(struct fi_fabric_attr *attr, struct fid_fabric **fabric, void *context);
uint32_t tp__fi_version(void);
const char *tp__fi_strerror(int errnum);
char *tp__fi_tostr(const void *data, enum fi_type datatype);
#define fi_getinfo tp__fi_getinfo
#define fi_freeinfo tp__fi_freeinfo
#define fi_dupinfo tp__fi_dupinfo
#define fi_fabric tp__fi_fabric
#define fi_version tp__fi_version
#define fi_strerror tp__fi_strerror
#define fi_tostr tp__fi_tostr

/* The API both ask for; FI_HMEM and fi_mr_attr's iface came with 1.10. */
#define TP__OFI_API FI_VERSION(1, 9)
#define TP__OFI_API_HMEM FI_VERSION(1, 10)

/* The most demanding registration rules: the provider keeps those it needs,
 * and the code follows whichever it kept. */
#define TP__OFI_MR_WANTED                                                                          \
    (FI_MR_LOCAL | FI_MR_VIRT_ADDR | FI_MR_ALLOCATED | FI_MR_PROV_KEY | FI_MR_ENDPOINT)

/* The modes the point-to-point transport can work in (it passes contexts
 * and reads remote CQ data). */
#define TP__OFI_MODE_WANTED (FI_CONTEXT | FI_CONTEXT2 | FI_RX_CQ_DATA)

/* Bytes of the longest endpoint name either side exchanges. */
#define TP__OFI_NAME_MAX 512

/* Close a fid (any struct with a .fid member) if open, and forget it. */
#define TP_OFI_CLOSE(p)                                                                            \
    do {                                                                                           \
        if (p)                                                                                     \
            fi_close(&(p)->fid);                                                                   \
        (p) = NULL;                                                                                \
    } while (0)

/* One endpoint's provider entry and fids, and what registering memory with
 * them needs. */
struct tp__ofi {
    struct fi_info *info;
    struct fid_fabric *fabric;
    struct fid_domain *domain;
    struct fid_cq *cq;
    struct fid_av *av;
    struct fid_ep *ep;
    uint64_t mr_mode;  /* FI_MR_* bits in force */
    uint64_t next_key; /* requested keys when the provider does not pick them */
    char prov[64];     /* the provider, as errors name it */
};

/* Does the core provider of provider ("tcp" in "tcp;ofi_rxm") bind to an
 * IP address? The others (shm, efa, psm2, cxi, ...) address by their own
 * means and get node = NULL. */
bool tp__ofi_takes_ip(const char *provider);

/* Hints for an RDM endpoint with caps and mode, mr_mode bits asked for,
 * domain threading, of provider (NULL: any). NULL when out of memory. */
struct fi_info *tp__ofi_hints(const char *provider, uint64_t caps, uint64_t mode,
                              uint64_t mr_mode);

/* Open fabric, domain, CQ (cq_attr), AV (av_attr) and an endpoint for
 * o->info, bind the AV and the CQ (transmit and receive) and enable it. For
 * the shm provider, the first call removes the regions a dead process with
 * this pid left in /dev/shm (they would make the endpoint fail with EBUSY).
 * On error (TP_ESYS naming the step and the provider) the fids opened so far
 * stay in o, for tp__ofi_close. */
int tp__ofi_open(struct tp__ofi *o, struct fi_cq_attr *cq_attr, struct fi_av_attr *av_attr,
                 tp_error *err);

/* Close what tp__ofi_open opened and free o->info. The endpoint goes first:
 * close memory regions between TP_OFI_CLOSE(o->ep) and this call. */
void tp__ofi_close(struct tp__ofi *o);

/* Register bytes at buf for access (FI_SEND, FI_RECV, ...): host memory, or
 * with gpu that GPU's memory as FI_HMEM_CUDA. Binds the region to the
 * endpoint where FI_MR_ENDPOINT asks; *desc is the descriptor FI_MR_LOCAL
 * wants, else NULL. On error *mr is NULL or the region to close, and err
 * (TP_ESYS) names the size and the provider. */
int tp__ofi_mr_reg(struct tp__ofi *o, void *buf, size_t bytes, uint64_t access,
                   struct tp_gpu *gpu, struct fid_mr **mr, void **desc, tp_error *err);

/* Read one error completion of o's CQ into *ee and the provider's detail
 * into detail ("" when it has none). Returns 1, 0 when there was none, or
 * the negative libfabric code of fi_cq_readerr. */
int tp__ofi_cq_readerr(struct tp__ofi *o, struct fi_cq_err_entry *ee, char *detail, size_t cap);

/* The endpoint's name (fi_getname) in hex, NUL-terminated, into buf of cap
 * bytes; *hexlen gets its length. TP_ESYS naming the provider when libfabric
 * fails, TP_EUNSUP when it does not fit. */
int tp__ofi_name_hex(struct tp__ofi *o, char *buf, size_t cap, size_t *hexlen, tp_error *err);

/* Decode hexlen hex digits of hex into name (at most TP__OFI_NAME_MAX bytes):
 * the byte count, or -1 for an odd, overlong or malformed string. */
int tp__ofi_unhex(const char *hex, size_t hexlen, unsigned char *name);

/* The API version of the library actually loaded, "1.17". */
void tp__ofi_api_version(char *buf, size_t cap);

/* ---- what libfabric offers here (ofi_info.c) ---- */

/* fi_getinfo for an RDM endpoint of provider with the point-to-point
 * transport's needs (messages in order; RMA writes with data when rma;
 * FI_HMEM when hmem), bound to node (an IP address) unless NULL. Prefers
 * the entry whose name is exactly provider ("tcp" also matches
 * "tcp;ofi_rxm"). *out is a copy for fi_freeinfo. Returns 0 or a negative
 * libfabric code. */
int tp__ofi_get_info(const char *provider, const char *node, bool rma, bool hmem,
                     struct fi_info **out);

/* TP_EUSAGE: provider cannot open an RDM endpoint (on node, unless NULL),
 * with fi_getinfo's reason rc and the providers that can. */
int tp__ofi_unknown_provider(const char *provider, const char *node, int rc, tp_error *err);

#endif
