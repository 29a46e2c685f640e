/* A kernel TCP socket's own counters (TCP_INFO) for tp_ep_stats
 * (include/tp/transport.h). Apart from tcp.c because it needs the kernel's
 * struct tcp_info (linux/tcp.h: delivery rate, bytes retransmitted,
 * out-of-order packets), which cannot share a file with glibc's. The
 * kernel fills as much of the struct as it knows and says how much. */
#include <linux/tcp.h>
#include <netinet/in.h>
#include <stddef.h>
#include <string.h>
#include <sys/socket.h>

#include "chan_int.h"
#include "tp/transport.h"

#define HAS(len, field) ((size_t)(len) >= offsetof(struct tcp_info, field) + sizeof(((struct tcp_info *)0)->field))

void tp__fabric_tcp_info(int fd, struct tp_ep_stats *out)
{
    struct tcp_info ti;
    socklen_t len = sizeof ti;
    memset(&ti, 0, sizeof ti);
    memset(out, 0, sizeof *out);
    if (getsockopt(fd, IPPROTO_TCP, TCP_INFO, &ti, &len) != 0)
        return;
    out->have = true;
    out->total_retrans = HAS(len, tcpi_total_retrans) ? ti.tcpi_total_retrans : 0;
    out->lost = ti.tcpi_lost;
    out->rtt_us = ti.tcpi_rtt;
    out->rttvar_us = ti.tcpi_rttvar;
    out->reordering = ti.tcpi_reordering;
    out->delivery_rate_Bps = HAS(len, tcpi_delivery_rate) ? ti.tcpi_delivery_rate : 0;
    out->bytes_retrans = HAS(len, tcpi_bytes_retrans) ? ti.tcpi_bytes_retrans : 0;
    out->rcv_ooopack = HAS(len, tcpi_rcv_ooopack) ? ti.tcpi_rcv_ooopack : 0;
}
