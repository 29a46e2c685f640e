/* What libfabric offers on this host, for the point-to-point transport
 * (ofi.c), its collectives' channel (chan_ofi.c) and the callers above
 * that check a --provider before anything starts: the provider entries
 * that can open an RDM endpoint with the capabilities the transport needs,
 * whether a provider offers FI_HMEM, and the library's version. */
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include <rdma/fabric.h>
#include <rdma/fi_errno.h>

#include "ofi_int.h"
#include "tp/transport.h"

static struct fi_info *make_hints(const char *provider, bool rma, bool hmem)
{
    struct fi_info *h = tp__ofi_hints(
        provider, FI_MSG | (rma ? FI_RMA | FI_WRITE | FI_REMOTE_WRITE : 0) | (hmem ? FI_HMEM : 0),
        TP__OFI_MODE_WANTED, TP__OFI_MR_WANTED | (hmem ? FI_MR_HMEM : 0));
    if (h) {
        /* streams map message n to the n-th posted receive */
        h->tx_attr->msg_order = FI_ORDER_SAS;
        h->rx_attr->msg_order = FI_ORDER_SAS;
    }
    return h;
}

int tp__ofi_get_info(const char *provider, const char *node, bool rma, bool hmem,
                    struct fi_info **out)
{
    struct fi_info *hints = make_hints(provider, rma, hmem), *list = NULL;
    if (!hints)
        return -FI_ENOMEM;
    int rc = fi_getinfo(hmem ? TP__OFI_API_HMEM : TP__OFI_API, node, NULL, node ? FI_SOURCE : 0,
                        hints, &list);
    fi_freeinfo(hints);
    if (rc)
        return rc;
    struct fi_info *pick = list;
    for (struct fi_info *i = list; i; i = i->next)
        if (strcmp(i->fabric_attr->prov_name, provider) == 0) {
            pick = i;
            break;
        }
    *out = fi_dupinfo(pick);
    fi_freeinfo(list);
    return *out ? 0 : -FI_ENOMEM;
}

/* ", "-separated names of the providers that offer RDM endpoints here. */
static void list_providers(char *buf, size_t cap)
{
    struct fi_info *hints = make_hints(NULL, false, false), *list = NULL;
    buf[0] = '\0';
    if (!hints || fi_getinfo(TP__OFI_API, NULL, NULL, 0, hints, &list) != 0) {
        snprintf(buf, cap, "(none)");
        fi_freeinfo(hints);
        return;
    }
    fi_freeinfo(hints);
    size_t used = 0;
    for (struct fi_info *i = list; i; i = i->next) {
        const char *name = i->fabric_attr->prov_name;
        bool seen = false;
        for (struct fi_info *j = list; j != i && !seen; j = j->next)
            seen = strcmp(j->fabric_attr->prov_name, name) == 0;
        if (seen)
            continue;
        int n = snprintf(buf + used, cap - used, "%s%s", used ? ", " : "", name);
        if (n < 0 || (size_t)n >= cap - used)
            break;
        used += (size_t)n;
    }
    fi_freeinfo(list);
}

int tp__ofi_unknown_provider(const char *provider, const char *node, int rc, tp_error *err)
{
    char avail[384];
    list_providers(avail, sizeof avail);
    return tp_error_set(err, TP_EUSAGE,
                        "libfabric provider '%s' cannot open an RDM endpoint%s%s (fi_getinfo: %s); "
                        "providers available here: %s",
                        provider, node ? " on " : "", node ? node : "", fi_strerror(-rc), avail);
}

int tp_ofi_provider_check(const char *provider, tp_error *err)
{
    if (!provider || !provider[0])
        return tp_error_set(err, TP_EUSAGE, "no libfabric provider named");
    struct fi_info *info = NULL;
    int rc = tp__ofi_get_info(provider, NULL, false, false, &info);
    fi_freeinfo(info);
    return rc ? tp__ofi_unknown_provider(provider, NULL, rc, err) : 0;
}

bool tp_ofi_hmem_offered(const char *provider)
{
    struct fi_info *info = NULL;
    if (!provider || !provider[0] || tp__ofi_get_info(provider, NULL, false, true, &info) != 0)
        return false;
    bool yes = (info->caps & FI_HMEM) != 0;
    fi_freeinfo(info);
    return yes;
}

static char version_str[32];
static pthread_once_t version_once = PTHREAD_ONCE_INIT;

static void read_version(void)
{
    const char *v = fi_tostr("", FI_TYPE_VERSION); /* the loaded library's package version */
    if (v && v[0])
        snprintf(version_str, sizeof version_str, "%s", v);
    else
        tp__ofi_api_version(version_str, sizeof version_str);
}

const char *tp_ofi_version(void)
{
    pthread_once(&version_once, read_version);
    return version_str;
}
