/* Planes and roles by name, CIDR membership, and the plane an interface
 * belongs to. Every address is compared as 16 bytes, an IPv4 address as its
 * IPv4-mapped IPv6 form (::ffff:a.b.c.d), so a socket that the kernel shows
 * as ::ffff:10.1.0.5 (a dual-stack listener) falls in the IPv4 CIDR that
 * holds 10.1.0.5. An interface's name wins over its addresses: the policy
 * names ports by how they are cabled, and an address can move (DHCP,
 * failover) while the cable does not. */
#include <arpa/inet.h>
#include <fnmatch.h>
#include <string.h>
#include <sys/socket.h>

#include "tp/check.h"

static const char *const plane_names[TP_PLANES] = {"management", "control", "data", "storage"};
static const char *const role_names[] = {"compute", "storage", "login", "kubernetes"};

const char *tp_plane_name(enum tp_plane p)
{
    return (unsigned)p < TP_PLANES ? plane_names[p] : "unknown";
}

int tp_plane_parse(const char *s)
{
    for (int i = 0; s && i < TP_PLANES; i++)
        if (strcmp(s, plane_names[i]) == 0)
            return i;
    return -1;
}

const char *tp_role_name(enum tp_role r)
{
    return (unsigned)r < sizeof role_names / sizeof role_names[0] ? role_names[r] : "unknown";
}

/* Parse a textual address into 16 bytes (IPv4 mapped). Takes the forms the
 * facts and ss(8) write: "[fd00::5]", a zone ("fe80::1%eth0"), a trailing
 * "/prefix". *text_v4 says the text was dotted IPv4. */
static bool parse_addr(const char *a, uint8_t out[16], bool *text_v4)
{
    char buf[INET6_ADDRSTRLEN + 16];
    size_t n = strlen(a);
    if (n == 0 || n >= sizeof buf)
        return false;
    memcpy(buf, a[0] == '[' ? a + 1 : a, a[0] == '[' ? n : n + 1);
    buf[strcspn(buf, "]%/")] = '\0';

    struct in_addr v4;
    if (inet_pton(AF_INET, buf, &v4) == 1) {
        memset(out, 0, 10);
        out[10] = out[11] = 0xff;
        memcpy(out + 12, &v4, 4);
        *text_v4 = true;
        return true;
    }
    *text_v4 = false;
    return inet_pton(AF_INET6, buf, out) == 1;
}

static bool mapped(const uint8_t a[16])
{
    static const uint8_t pre[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
    return memcmp(a, pre, sizeof pre) == 0;
}

/* The first bits of a and b are equal. */
static bool same_prefix(const uint8_t *a, const uint8_t *b, unsigned bits)
{
    unsigned whole = bits / 8, rest = bits % 8;
    if (memcmp(a, b, whole) != 0)
        return false;
    if (rest == 0)
        return true;
    uint8_t mask = (uint8_t)(0xff00u >> rest);
    return ((a[whole] ^ b[whole]) & mask) == 0;
}

bool tp_cidr_contains(const struct tp_cidr *c, const char *a)
{
    uint8_t x[16];
    bool text_v4;
    if (!c || !a || !parse_addr(a, x, &text_v4))
        return false;
    if (c->family == AF_INET)
        return mapped(x) && c->prefix <= 32 && same_prefix(x + 12, c->addr, c->prefix);
    /* dotted IPv4 is not inside ::/0: an IPv6 CIDR holds IPv6 addresses */
    if (c->family == AF_INET6)
        return !text_v4 && c->prefix <= 128 && same_prefix(x, c->addr, c->prefix);
    return false;
}

int tp_policy_plane_of(const struct tp_policy *p, const json_t *iface)
{
    if (!p || !json_is_object(iface))
        return -1;
    const char *name = json_string_value(json_object_get(iface, "name"));
    for (int i = 0; name && i < TP_PLANES; i++) {
        const struct tp_policy_plane *pl = &p->planes[i];
        for (int k = 0; pl->present && k < pl->nifaces; k++)
            if (fnmatch(pl->ifaces[k], name, 0) == 0)
                return i;
    }
    const json_t *addrs = json_object_get(iface, "addresses");
    size_t j;
    json_t *a;
    json_array_foreach(addrs, j, a) {
        const char *s = json_string_value(json_object_get(a, "address"));
        for (int i = 0; s && i < TP_PLANES; i++) {
            const struct tp_policy_plane *pl = &p->planes[i];
            for (int k = 0; pl->present && k < pl->ncidrs; k++)
                if (tp_cidr_contains(&pl->cidrs[k], s))
                    return i;
        }
    }
    return -1;
}
