/* The transport table: every data path the measuring code can drive, found by
 * name. Adding a transport is one file with its ops table plus one line here;
 * nothing above this layer switches on the transport: what callers need to
 * know (a provider, RMA, GPU memory, its collectives' channel) is a field of
 * the row, and the option checks that depend on it live here. */
#include "tp/transport.h"

#include <stdio.h>
#include <string.h>

extern const struct tp_transport_ops tp_tcp_ops;
extern const struct tp_transport_ops tp_ofi_ops;

const struct tp_transport_ops *const tp_transports[] = {
    &tp_tcp_ops,
    &tp_ofi_ops,
    NULL,
};

const struct tp_transport_ops *tp_transport_find(const char *name)
{
    if (!name)
        return NULL;
    for (size_t i = 0; tp_transports[i]; i++)
        if (strcmp(tp_transports[i]->name, name) == 0)
            return tp_transports[i];
    return NULL;
}

const struct tp_transport_ops *tp_transport_default(bool have_provider)
{
    for (size_t i = 0; tp_transports[i]; i++)
        if (tp_transports[i]->needs_provider == have_provider)
            return tp_transports[i];
    return tp_transports[0];
}

/* The first transport with RMA, for the message that asks for one. */
static const struct tp_transport_ops *with_rma(void)
{
    for (size_t i = 0; tp_transports[i]; i++)
        if (tp_transports[i]->rma)
            return tp_transports[i];
    return tp_transports[0];
}

const char *tp_transport_names(const char *last_sep, char *buf, size_t cap)
{
    size_t used = 0;
    buf[0] = 0;
    for (size_t i = 0; tp_transports[i]; i++) {
        const char *sep = i == 0 ? "" : tp_transports[i + 1] ? ", " : last_sep;
        int n = snprintf(buf + used, cap - used, "%s%s", sep, tp_transports[i]->name);
        if (n < 0 || (size_t)n >= cap - used)
            break;
        used += (size_t)n;
    }
    return buf;
}

const struct tp_transport_ops *tp_transport_parse(const char *name, tp_error *err)
{
    const struct tp_transport_ops *t = name ? tp_transport_find(name) : tp_transport_default(false);
    if (!t || !t->chan) {
        char names[128];
        tp_error_set(err, TP_EUSAGE, "--transport %s: %s", name,
                     tp_transport_names(" or ", names, sizeof names));
        return NULL;
    }
    return t;
}

int tp_transport_check(const char *transport, const char *provider, bool rma, tp_error *err)
{
    const struct tp_transport_ops *t = tp_transport_find(transport);
    char names[128];
    if (!t)
        return tp_error_set(err, TP_EUSAGE, "--transport '%s': unknown (use %s)", transport,
                            tp_transport_names(" or ", names, sizeof names));
    if (t->needs_provider && !provider)
        return tp_error_set(err, TP_EUSAGE, "--transport %s needs --provider NAME (%s)", t->name,
                            t->provider_hint);
    if (!t->provider_check && provider)
        return tp_error_set(err, TP_EUSAGE, "--provider '%s' needs --transport %s", provider,
                            tp_transport_default(true)->name);
    if (!t->rma && rma)
        return tp_error_set(err, TP_EUSAGE, "--rma needs --transport %s (%s has no RMA)",
                            with_rma()->name, t->what);
    return 0;
}

int tp_transport_provider_check(const struct tp_transport_ops *t, const char *provider,
                                tp_error *err)
{
    return t->provider_check ? t->provider_check(provider, err) : 0;
}

bool tp_transport_hmem_offered(const struct tp_transport_ops *t, const char *provider)
{
    return t->hmem_offered && t->hmem_offered(provider);
}

const char *tp_transport_label(const struct tp_transport_ops *t, const char *provider, char *buf,
                               size_t cap)
{
    if (!t->provider_check)
        snprintf(buf, cap, "%s", t->name);
    else
        snprintf(buf, cap, "%s %s", t->name,
                 provider && provider[0] ? provider : t->default_provider);
    return buf;
}
