/* The transport table: every data path the measuring code can drive, found by
 * name. Adding a transport is one file with its ops table plus one line here;
 * nothing above this layer switches on the transport. */
#include "tp/transport.h"

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
