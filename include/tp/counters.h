/* Counters beside every figure (docs/counters.md): the NIC, fabric, TCP and
 * PCIe counters of a node, read before and after a test (and the links'
 * state sampled during it), their deltas, and the cause they point at.
 *
 * A snapshot reads every source of the table (src/counters/counters.c),
 * each from files under a root ("/" for this node, or a folder laid out as
 * one: a snapshot or a fixture, the same code path):
 *   rdma     /sys/class/infiniband/DEV/ports/P/counters/ and hw_counters/
 *            (IB PMA and RoCE counters, by name), device "DEV/P";
 *   netdev   /sys/class/net/IF/statistics/ and carrier_changes, device IF;
 *   ethtool  the driver's statistics (`ethtool -S`: rx_pause, rx_prioN_pause,
 *            rx_discards ...): for the live root through SIOCETHTOOL, under
 *            another root from sos_commands/networking/ethtool_-S_IF (the
 *            `ethtool -S IF` text an sosreport keeps), device IF;
 *   tcp      /proc/net/snmp (Tcp:) and /proc/net/netstat (TcpExt:), device
 *            "Tcp" or "TcpExt" (this network namespace's);
 *   pcie     /sys/bus/pci/devices/BDF/: current and maximum link speed (MT/s)
 *            and width (lanes), levels, of network, display, NVMe and
 *            processing-accelerator devices; the AER counts of
 *            aer_dev_correctable, _nonfatal and _fatal as "correctable.NAME",
 *            "nonfatal.NAME", "fatal.NAME" (their TOTAL_ lines left out).
 * Only what a device has is read; nothing is invented for what it lacks. */
#ifndef TP_COUNTERS_H
#define TP_COUNTERS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <jansson.h>

#include "tp/error.h"

enum tp_ctr_source { TP_CTR_RDMA, TP_CTR_NETDEV, TP_CTR_ETHTOOL, TP_CTR_TCP, TP_CTR_PCIE,
                     TP_CTR_SOURCES };

/* What a counter's change says (the classes of docs/counters.md), from the
 * table in src/counters/explain.c; TP_CTR_TRAFFIC and TP_CTR_OTHER name no
 * cause. */
enum tp_ctr_class {
    TP_CTR_OTHER,       /* read and reported, no cause attached */
    TP_CTR_TRAFFIC,     /* bytes and packets moved */
    TP_CTR_THROTTLED,   /* pause frames received, transmit waits: the peer or switch throttles us */
    TP_CTR_PAUSING,     /* pause frames sent: our own receive path is behind */
    TP_CTR_CONGESTION,  /* ECN marks, CNPs: congestion control at work */
    TP_CTR_LOSS,        /* retransmits, out of sequence, discards, drops */
    TP_CTR_ERRORS,      /* symbol, CRC, integrity and PCIe AER errors */
    TP_CTR_FLAP,        /* the link went down (carrier changes, link_downed) */
    TP_CTR_DOWNTRAINED, /* a PCIe link below its maximum speed or width */
    TP_CTR_LINK_CHANGED,/* a PCIe link's speed or width changed during the test */
    TP_CTR_CLASSES
};

struct tp_ctr {
    char dev[64];  /* "mlx5_0/1", "eth0", "Tcp", "0000:3b:00.0" */
    char name[64]; /* the counter's own name: "port_xmit_wait", "rx_prio3_pause" */
    uint8_t source; /* enum tp_ctr_source */
    bool level;     /* a level (link speed, width, open connections), not a count */
    uint64_t value;
};

struct tp_ctr_snap {
    struct tp_ctr *c; /* sorted by source, device, name */
    size_t n, cap;
    uint64_t at_ns;   /* tp_now_ns() when it was taken */
    char **devs;      /* every device seen, "source:dev" (one that has no counters too) */
    size_t ndevs;
};

/* Read every source under root (NULL or "/": this node; ethtool through
 * SIOCETHTOOL only there) into *out (freed with tp_ctr_snap_free, also on
 * error). A source that has nothing here is no error; a root that is not a
 * folder is TP_EUSAGE naming it; TP_ENOMEM. */
int tp_ctr_snapshot(const char *root, struct tp_ctr_snap *out, tp_error *err);

void tp_ctr_snap_free(struct tp_ctr_snap *s);

/* The PCIe links' levels only (speed and width, no AER counts), for
 * sampling during a test: as tp_ctr_snapshot, the pcie source alone. */
int tp_ctr_snapshot_links(const char *root, struct tp_ctr_snap *out, tp_error *err);

/* A counter's change between two snapshots. */
enum tp_ctr_state {
    TP_CTR_COUNTED, /* after >= before: delta = after - before */
    TP_CTR_RESET,   /* after < before: wrapped or reset; no delta is claimed */
    TP_CTR_GONE,    /* in before only: its device disappeared (or the counter did) */
    TP_CTR_NEW,     /* in after only */
    TP_CTR_LEVEL,   /* a level whose value differs (before and after both given) */
};

struct tp_ctr_delta {
    const struct tp_ctr *before, *after; /* borrowed from the snapshots; one may be NULL */
    uint8_t state;                       /* enum tp_ctr_state */
    uint8_t cls;                         /* enum tp_ctr_class */
    const char *unit;                    /* "bytes", "packets", "4-byte words", "MT/s" ... */
    uint64_t delta;                      /* TP_CTR_COUNTED only */
};

/* The comparison of two snapshots of one node, and what it says. */
struct tp_ctr_diff {
    struct tp_ctr_delta *d; /* every counter that changed, reset, went or came;
                               levels that changed; never an unchanged count */
    size_t n;
    size_t read;            /* counters in after */
    double window_s;        /* after's time - before's */
    char **gone, **added;   /* devices ("source:dev") in before only / after only */
    size_t ngone, nadded;
    const struct tp_ctr_snap *after; /* borrowed: the links' levels */
    /* links sampled during the window (tp_ctr_diff_links): per PCIe link
     * counter, whether any sample differed from before */
    char **changed_links;
    size_t nchanged_links;
};

/* Compare before and after (the same node, before earlier) into *out
 * (freed with tp_ctr_diff_free; borrows both snapshots, which must outlive
 * it). TP_ENOMEM only. */
int tp_ctr_diff(const struct tp_ctr_snap *before, const struct tp_ctr_snap *after,
                struct tp_ctr_diff *out, tp_error *err);

/* Fold a sample of the links taken during the window into d: a link whose
 * speed or width in sample differs from before is marked changed
 * (TP_CTR_LINK_CHANGED). TP_ENOMEM only. */
int tp_ctr_diff_links(struct tp_ctr_diff *d, const struct tp_ctr_snap *before,
                      const struct tp_ctr_snap *sample, tp_error *err);

void tp_ctr_diff_free(struct tp_ctr_diff *d);

/* The class of counter name of source src, and its unit (the table of
 * src/counters/explain.c; names it does not know are TP_CTR_OTHER, unit
 * "events" for counts). */
enum tp_ctr_class tp_ctr_classify(enum tp_ctr_source src, const char *name, const char **unit);

/* Names, for documents and messages. */
const char *tp_ctr_source_name(enum tp_ctr_source s);
const char *tp_ctr_class_name(enum tp_ctr_class c);

/* The result document's "counters" object (docs/metrics.md): window_s,
 * counters_read, "changed" (every counted delta that is not zero: dev,
 * source, name, unit, delta, class), "reset" (dev, source, name, before,
 * after), "levels" that changed (dev, source, name, before, after),
 * devices "gone" and "new", "links" (every PCIe link: dev, speed
 * and max in MT/s, width and max, downtrained, changed), and "causes":
 * one entry per class that names a cause (throttled, pausing, congestion,
 * loss, errors, flap, downtrained, link_changed) with its evidence (dev,
 * source, name, delta; for downtrained and link_changed: dev, source
 * "pcie", name "link", speed_mts, width) and one sentence. path, when not NULL: the network
 * interface the test used (the "path" member; its counters first). NULL
 * when out of memory. */
json_t *tp_ctr_diff_json(const struct tp_ctr_diff *d, const char *path);

/* The name of the local network interface whose address routes to host
 * (a numeric IPv4 or IPv6 address or a name) into out[cap]; 0, or -1 when
 * it cannot be told (no error: the counters are then not tied to one). */
int tp_ctr_route_dev(const char *host, char *out, size_t cap);

/* A test's counters in two calls, for net, io and the group of coll and
 * step (each host's first rank; rank 0 gathers them):
 * tp_ctr_probe_start snapshots this node (before the timed work) and
 * samples its PCIe links in a thread every period_ms (0: 1000; at least
 * 100) until tp_ctr_probe_end, which snapshots again (after the timed
 * work), compares, and returns the "counters" object (tp_ctr_diff_json)
 * with "samples" (the link samples taken) and "cost_ms" (the time the
 * snapshots themselves took), path being the interface whose address
 * routes to host (NULL: none). Errors of the probe never fail the test:
 * start gives NULL (and end of NULL gives an object {"error": WHY}) when a
 * snapshot cannot be taken. */
struct tp_ctr_probe;
struct tp_ctr_probe *tp_ctr_probe_start(const char *host, unsigned period_ms);
json_t *tp_ctr_probe_end(struct tp_ctr_probe *p);

/* A "counters" object (tp_ctr_diff_json or tp_ctr_probe_end's) as lines
 * for a command's table, the first starting with what (NULL: "counters"):
 * what was read, each cause with its evidence, what reset, went or came.
 * Nothing for NULL. */
void tp_ctr_print(FILE *f, const char *what, const json_t *counters);

/* Every counters object of a command's results, each with tp_ctr_print:
 * "counters" (this node's; rank 0's), "peer_counters" (net's server) and
 * each of "nodes_counters" (coll's and step's other hosts). */
void tp_ctr_print_results(FILE *f, const json_t *results);

#endif
