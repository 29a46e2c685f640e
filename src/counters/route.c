/* Which local interface a test's traffic leaves by (include/tp/counters.h):
 * a UDP socket connected to the peer (no packet is sent) names the local
 * address the kernel routes from; getifaddrs names its interface. */
#include <ifaddrs.h>
#include <netdb.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "tp/counters.h"

static bool same_addr(const struct sockaddr *a, const struct sockaddr_storage *b)
{
    if (a->sa_family != b->ss_family)
        return false;
    if (a->sa_family == AF_INET)
        return ((const struct sockaddr_in *)a)->sin_addr.s_addr ==
               ((const struct sockaddr_in *)b)->sin_addr.s_addr;
    if (a->sa_family == AF_INET6)
        return memcmp(&((const struct sockaddr_in6 *)a)->sin6_addr,
                      &((const struct sockaddr_in6 *)b)->sin6_addr, sizeof(struct in6_addr)) == 0;
    return false;
}

int tp_ctr_route_dev(const char *host, char *out, size_t cap)
{
    struct addrinfo hints = {.ai_socktype = SOCK_DGRAM}, *ai = NULL;
    if (!host || getaddrinfo(host, "9", &hints, &ai) != 0 || !ai)
        return -1;
    int fd = socket(ai->ai_family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    struct sockaddr_storage me;
    socklen_t len = sizeof me;
    bool ok = fd >= 0 && connect(fd, ai->ai_addr, ai->ai_addrlen) == 0 &&
              getsockname(fd, (struct sockaddr *)&me, &len) == 0;
    if (fd >= 0)
        close(fd);
    freeaddrinfo(ai);
    struct ifaddrs *ifs = NULL;
    if (!ok || getifaddrs(&ifs) != 0)
        return -1;
    int rc = -1;
    for (struct ifaddrs *i = ifs; i && rc; i = i->ifa_next)
        if (i->ifa_addr && same_addr(i->ifa_addr, &me) && (size_t)snprintf(out, cap, "%s", i->ifa_name) < cap)
            rc = 0;
    freeifaddrs(ifs);
    return rc;
}
