/* What a counter's change says (include/tp/counters.h): a table of rows,
 * source and name pattern (fnmatch) to a class and a unit, the first row
 * that matches wins; and the classes' names and sentences. Adding what a
 * new driver's counter means is one row. */
#include <fnmatch.h>
#include <stddef.h>

#include "ctr_int.h"

#define ANY 0xff

static const struct row {
    unsigned char src; /* enum tp_ctr_source, or ANY */
    const char *pattern;
    enum tp_ctr_class cls;
    const char *unit;
} rows[] = {
    /* IB PMA (ports/P/counters) */
    {TP_CTR_RDMA, "port_xmit_data", TP_CTR_TRAFFIC, "4-byte words"},
    {TP_CTR_RDMA, "port_rcv_data", TP_CTR_TRAFFIC, "4-byte words"},
    {TP_CTR_RDMA, "port_*_packets", TP_CTR_TRAFFIC, "packets"},
    {TP_CTR_RDMA, "*cast_*_packets", TP_CTR_TRAFFIC, "packets"},
    {TP_CTR_RDMA, "port_xmit_wait", TP_CTR_THROTTLED, "ticks"},
    {TP_CTR_RDMA, "port_xmit_discards", TP_CTR_LOSS, "packets"},
    {TP_CTR_RDMA, "VL15_dropped", TP_CTR_LOSS, "packets"},
    {TP_CTR_RDMA, "link_downed", TP_CTR_FLAP, "events"},
    {TP_CTR_RDMA, "symbol_error", TP_CTR_ERRORS, "events"},
    {TP_CTR_RDMA, "link_error_recovery", TP_CTR_ERRORS, "events"},
    {TP_CTR_RDMA, "local_link_integrity_errors", TP_CTR_ERRORS, "events"},
    {TP_CTR_RDMA, "excessive_buffer_overrun_errors", TP_CTR_ERRORS, "events"},
    /* RoCE hardware counters (ports/P/hw_counters, mlx5 names) */
    {TP_CTR_RDMA, "*cnp*", TP_CTR_CONGESTION, "packets"},
    {TP_CTR_RDMA, "*ecn*", TP_CTR_CONGESTION, "packets"},
    {TP_CTR_RDMA, "out_of_sequence", TP_CTR_LOSS, "packets"},
    {TP_CTR_RDMA, "packet_seq_err", TP_CTR_LOSS, "events"},
    {TP_CTR_RDMA, "implied_nak_seq_err", TP_CTR_LOSS, "events"},
    {TP_CTR_RDMA, "local_ack_timeout_err", TP_CTR_LOSS, "events"},
    {TP_CTR_RDMA, "*retry*", TP_CTR_LOSS, "events"},
    {TP_CTR_RDMA, "duplicate_request", TP_CTR_LOSS, "packets"},
    {TP_CTR_RDMA, "out_of_buffer", TP_CTR_LOSS, "packets"},
    {TP_CTR_RDMA, "*err*", TP_CTR_ERRORS, "events"},
    /* the kernel's interface statistics */
    {TP_CTR_NETDEV, "*_bytes", TP_CTR_TRAFFIC, "bytes"},
    {TP_CTR_NETDEV, "*_packets", TP_CTR_TRAFFIC, "packets"},
    {TP_CTR_NETDEV, "multicast", TP_CTR_TRAFFIC, "packets"},
    /* rx_dropped also counts frames of protocols nobody listens to (LLDP
     * and the like): not loss on the path */
    {TP_CTR_NETDEV, "rx_dropped", TP_CTR_OTHER, "packets"},
    {TP_CTR_NETDEV, "tx_dropped", TP_CTR_LOSS, "packets"},
    {TP_CTR_NETDEV, "rx_missed_errors", TP_CTR_LOSS, "packets"},
    {TP_CTR_NETDEV, "*_fifo_errors", TP_CTR_LOSS, "packets"},
    {TP_CTR_NETDEV, "rx_over_errors", TP_CTR_LOSS, "packets"},
    {TP_CTR_NETDEV, "carrier_*", TP_CTR_FLAP, "events"},
    {TP_CTR_NETDEV, "*errors", TP_CTR_ERRORS, "packets"},
    {TP_CTR_NETDEV, "collisions", TP_CTR_ERRORS, "events"},
    /* drivers' statistics (ethtool -S): pause first, by direction */
    {TP_CTR_ETHTOOL, "rx*pause*", TP_CTR_THROTTLED, "frames"},
    {TP_CTR_ETHTOOL, "*pause*rx*", TP_CTR_THROTTLED, "frames"},
    {TP_CTR_ETHTOOL, "tx*pause*", TP_CTR_PAUSING, "frames"},
    {TP_CTR_ETHTOOL, "*pause*tx*", TP_CTR_PAUSING, "frames"},
    {TP_CTR_ETHTOOL, "*cnp*", TP_CTR_CONGESTION, "packets"},
    {TP_CTR_ETHTOOL, "*ecn*", TP_CTR_CONGESTION, "packets"},
    {TP_CTR_ETHTOOL, "*discard*", TP_CTR_LOSS, "packets"},
    {TP_CTR_ETHTOOL, "*drop*", TP_CTR_LOSS, "packets"},
    {TP_CTR_ETHTOOL, "*missed*", TP_CTR_LOSS, "packets"},
    {TP_CTR_ETHTOOL, "*out_of_buffer*", TP_CTR_LOSS, "packets"},
    {TP_CTR_ETHTOOL, "*no_buf*", TP_CTR_LOSS, "packets"},
    {TP_CTR_ETHTOOL, "*crc*", TP_CTR_ERRORS, "frames"},
    {TP_CTR_ETHTOOL, "*fcs*", TP_CTR_ERRORS, "frames"},
    {TP_CTR_ETHTOOL, "*symbol*", TP_CTR_ERRORS, "events"},
    {TP_CTR_ETHTOOL, "*timeout*", TP_CTR_ERRORS, "events"},
    {TP_CTR_ETHTOOL, "*err*", TP_CTR_ERRORS, "events"},
    {TP_CTR_ETHTOOL, "*bytes*", TP_CTR_TRAFFIC, "bytes"},
    {TP_CTR_ETHTOOL, "*packets*", TP_CTR_TRAFFIC, "packets"},
    {TP_CTR_ETHTOOL, "*pkts*", TP_CTR_TRAFFIC, "packets"},
    {TP_CTR_ETHTOOL, "*frames*", TP_CTR_TRAFFIC, "frames"},
    /* TCP (Tcp: and TcpExt:) */
    {TP_CTR_TCP, "RetransSegs", TP_CTR_LOSS, "segments"},
    {TP_CTR_TCP, "TCPLostRetransmit", TP_CTR_LOSS, "segments"},
    {TP_CTR_TCP, "TCPTimeouts", TP_CTR_LOSS, "events"},
    {TP_CTR_TCP, "TCP*Retrans", TP_CTR_LOSS, "segments"},
    /* a tail-loss probe is sent before any loss is known (it may carry
     * new data): only one that repaired a loss counts */
    {TP_CTR_TCP, "TCPLossProbeRecovery", TP_CTR_LOSS, "events"},
    {TP_CTR_TCP, "TCPRetransFail", TP_CTR_LOSS, "segments"},
    {TP_CTR_TCP, "TCPAbortOnTimeout", TP_CTR_LOSS, "connections"},
    {TP_CTR_TCP, "InErrs", TP_CTR_ERRORS, "segments"},
    {TP_CTR_TCP, "InCsumErrors", TP_CTR_ERRORS, "segments"},
    {TP_CTR_TCP, "TCPDeliveredCE", TP_CTR_CONGESTION, "segments"},
    {TP_CTR_TCP, "InSegs", TP_CTR_TRAFFIC, "segments"},
    {TP_CTR_TCP, "OutSegs", TP_CTR_TRAFFIC, "segments"},
    {TP_CTR_TCP, "Rto*", TP_CTR_OTHER, "ms"},
    /* PCIe */
    {TP_CTR_PCIE, "*_link_speed", TP_CTR_OTHER, "MT/s"},
    {TP_CTR_PCIE, "*_link_width", TP_CTR_OTHER, "lanes"},
    {TP_CTR_PCIE, "*.*", TP_CTR_ERRORS, "errors"},
};

enum tp_ctr_class tp_ctr_classify(enum tp_ctr_source src, const char *name, const char **unit)
{
    for (size_t i = 0; i < sizeof rows / sizeof *rows; i++)
        if ((rows[i].src == ANY || rows[i].src == src) && fnmatch(rows[i].pattern, name, 0) == 0) {
            if (unit)
                *unit = rows[i].unit;
            return rows[i].cls;
        }
    if (unit)
        *unit = "events";
    return TP_CTR_OTHER;
}

static const struct {
    const char *name, *text;
} classes[TP_CTR_CLASSES] = {
    [TP_CTR_OTHER] = {"other", NULL},
    [TP_CTR_TRAFFIC] = {"traffic", NULL},
    [TP_CTR_THROTTLED] = {"throttled",
                          "pause frames received or transmit waits: the link partner or switch "
                          "throttled this node (flow control), which slows it while no drop "
                          "counter moves"},
    [TP_CTR_PAUSING] = {"pausing", "pause frames sent: this node's own receive path fell behind "
                                   "and asked its peer to stop"},
    [TP_CTR_CONGESTION] = {"congestion", "ECN marks or congestion notifications: congestion "
                                         "control was at work on the path"},
    [TP_CTR_LOSS] = {"loss", "retransmits, out-of-sequence packets, discards or drops: packets "
                             "were lost on the path"},
    [TP_CTR_ERRORS] = {"errors", "error counters moved (symbol, CRC, link integrity, PCIe AER): "
                                 "a physical or link-level fault"},
    [TP_CTR_FLAP] = {"flap", "the link went down (and up) during the test"},
    [TP_CTR_DOWNTRAINED] = {"downtrained",
                            "a PCIe link runs below its maximum speed or width"},
    [TP_CTR_LINK_CHANGED] = {"link_changed",
                             "a PCIe link changed speed or width during the test"},
};

const char *tp_ctr_class_name(enum tp_ctr_class c)
{
    return (unsigned)c < TP_CTR_CLASSES ? classes[c].name : "?";
}

/* The sentence of a class that names a cause; NULL for the others. */
const char *tp__ctr_class_text(enum tp_ctr_class c)
{
    return (unsigned)c < TP_CTR_CLASSES ? classes[c].text : NULL;
}
