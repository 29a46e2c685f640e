/* The counters module (include/tp/counters.h) against node roots under
 * tests/fixtures/counters/, each case a before/ and an after/ folder laid
 * out as a node's /sys, /proc and sosreport files: a RoCE port under
 * congestion and loss (roce), an InfiniBand port throttled, erring and
 * flapping (ib), an Ethernet port receiving pause frames and flapping
 * (pause), PCIe links below their maximum and an NVMe drive's AER count
 * (pcie, with a during/ sample where the GPU's link drops a speed), TCP
 * retransmits and timeouts beside a level that falls (tcp), and a counter
 * that went backwards, a device that went and one that came (reset). Each
 * test takes both snapshots, diffs them and reads the "counters" document;
 * it checks the exact deltas set in the fixtures, their units and classes,
 * the causes with their evidence, and that what did not change, what reset
 * and what only one side has is never reported as a delta. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tp/counters.h"
#include "tp_test.h"

#define FIXTURES TP_SOURCE_ROOT "/tests/fixtures/counters"

/* The PCIe AER counters are named after their file and line: "correctable.BadTLP". */
#define AER_BADTLP "correctable.BadTLP"

/* ---- one case: two snapshots, their diff and its document ---- */

struct fx {
    struct tp_ctr_snap before, after;
    struct tp_ctr_diff d;
    json_t *doc;
};

static void snap(const char *root, struct tp_ctr_snap *s)
{
    tp_error err = {0};
    int rc = tp_ctr_snapshot(root, s, &err);
    if (rc)
        fail_msg("tp_ctr_snapshot(%s) = %d: %s", root, rc, err.msg);
}

/* Snapshot FIXTURES/kase/from and FIXTURES/kase/to, diff them and build the
 * document with path (NULL for none). */
static void load_pair(struct fx *f, const char *kase, const char *from, const char *to,
                      const char *path)
{
    char b[1024], a[1024];
    snprintf(b, sizeof b, "%s/%s/%s", FIXTURES, kase, from);
    snprintf(a, sizeof a, "%s/%s/%s", FIXTURES, kase, to);
    memset(f, 0, sizeof *f);
    snap(b, &f->before);
    snap(a, &f->after);
    tp_error err = {0};
    int rc = tp_ctr_diff(&f->before, &f->after, &f->d, &err);
    if (rc)
        fail_msg("tp_ctr_diff(%s) = %d: %s", kase, rc, err.msg);
    f->doc = tp_ctr_diff_json(&f->d, path);
    assert_non_null(f->doc);
}

static void load(struct fx *f, const char *kase, const char *path)
{
    load_pair(f, kase, "before", "after", path);
}

static void unload(struct fx *f)
{
    json_decref(f->doc);
    tp_ctr_diff_free(&f->d);
    tp_ctr_snap_free(&f->after);
    tp_ctr_snap_free(&f->before);
}

/* ---- the diff ---- */

static const struct tp_ctr *either(const struct tp_ctr_delta *x)
{
    return x->after ? x->after : x->before;
}

/* The diff's entry for counter name of dev in source src, or NULL. */
static const struct tp_ctr_delta *entry(const struct tp_ctr_diff *d, enum tp_ctr_source src,
                                        const char *dev, const char *name)
{
    for (size_t i = 0; i < d->n; i++) {
        const struct tp_ctr *c = either(&d->d[i]);
        if (c && c->source == src && strcmp(c->dev, dev) == 0 && strcmp(c->name, name) == 0)
            return &d->d[i];
    }
    return NULL;
}

/* The counter counted exactly delta, and its entry carries the class and
 * unit that tp_ctr_classify gives its name. */
static void expect_delta(const struct tp_ctr_diff *d, enum tp_ctr_source src, const char *dev,
                         const char *name, uint64_t delta)
{
    const struct tp_ctr_delta *x = entry(d, src, dev, name);
    if (!x)
        fail_msg("%s %s %s: not in the diff", tp_ctr_source_name(src), dev, name);
    if (x->state != TP_CTR_COUNTED)
        fail_msg("%s %s %s: state %d, expected counted", tp_ctr_source_name(src), dev, name,
                 x->state);
    if (x->delta != delta)
        fail_msg("%s %s %s: delta %llu, expected %llu", tp_ctr_source_name(src), dev, name,
                 (unsigned long long)x->delta, (unsigned long long)delta);
    const char *unit = NULL;
    TP_EQ_INT(x->cls, tp_ctr_classify(src, name, &unit));
    TP_EQ_STR(x->unit, unit);
}

/* The unit the diff gives the counter (which must be in it). */
static const char *unit_of(const struct tp_ctr_diff *d, enum tp_ctr_source src, const char *dev,
                           const char *name)
{
    const struct tp_ctr_delta *x = entry(d, src, dev, name);
    if (!x)
        fail_msg("%s %s %s: not in the diff", tp_ctr_source_name(src), dev, name);
    return x->unit;
}

/* The counter is not in the diff at all (it did not change). */
static void expect_absent(const struct tp_ctr_diff *d, enum tp_ctr_source src, const char *dev,
                          const char *name)
{
    if (entry(d, src, dev, name))
        fail_msg("%s %s %s: in the diff, though unchanged", tp_ctr_source_name(src), dev, name);
}

/* What holds of every diff: no count in it is unchanged, a counted delta
 * is after - before, a reset went backwards, a level is a level that
 * moved, gone and new have one side. */
static void expect_sound(const struct tp_ctr_diff *d)
{
    for (size_t i = 0; i < d->n; i++) {
        const struct tp_ctr_delta *x = &d->d[i];
        const struct tp_ctr *c = either(x);
        assert_non_null(c);
        switch (x->state) {
        case TP_CTR_COUNTED:
            assert_non_null(x->before);
            assert_non_null(x->after);
            if (c->level)
                fail_msg("%s %s: a level counted as a delta", c->dev, c->name);
            if (x->delta == 0)
                fail_msg("%s %s: an unchanged count in the diff", c->dev, c->name);
            TP_EQ_U64(x->delta, x->after->value - x->before->value);
            break;
        case TP_CTR_LEVEL:
            assert_non_null(x->before);
            assert_non_null(x->after);
            assert_true(x->after->level);
            if (x->after->value == x->before->value)
                fail_msg("%s %s: an unchanged level in the diff", c->dev, c->name);
            break;
        case TP_CTR_RESET:
            assert_non_null(x->before);
            assert_non_null(x->after);
            assert_false(x->after->level);
            assert_true(x->after->value < x->before->value);
            break;
        case TP_CTR_GONE:
            assert_non_null(x->before);
            assert_null(x->after);
            break;
        case TP_CTR_NEW:
            assert_null(x->before);
            assert_non_null(x->after);
            break;
        default: fail_msg("%s %s: state %d", c->dev, c->name, x->state);
        }
    }
}

/* ---- the document ---- */

static const char *str_at(const json_t *o, const char *key)
{
    const json_t *v = json_object_get(o, key);
    if (!json_is_string(v))
        fail_msg("\"%s\" is not a string", key);
    return json_string_value(v);
}

static long long int_at(const json_t *o, const char *key)
{
    const json_t *v = json_object_get(o, key);
    if (!json_is_integer(v))
        fail_msg("\"%s\" is not an integer", key);
    return json_integer_value(v);
}

static bool bool_at(const json_t *o, const char *key)
{
    const json_t *v = json_object_get(o, key);
    if (!json_is_boolean(v))
        fail_msg("\"%s\" is not a boolean", key);
    return json_is_true(v);
}

static json_t *array_at(const json_t *doc, const char *key)
{
    json_t *v = json_object_get(doc, key);
    if (!json_is_array(v))
        fail_msg("\"%s\" is not an array", key);
    return v;
}

/* The entry of array key whose dev, source and name are these, or NULL. */
static json_t *row(const json_t *doc, const char *key, const char *dev, const char *source,
                   const char *name)
{
    json_t *arr = array_at(doc, key), *e;
    size_t i;
    json_array_foreach(arr, i, e)
    {
        if (strcmp(str_at(e, "dev"), dev) == 0 && strcmp(str_at(e, "source"), source) == 0 &&
            strcmp(str_at(e, "name"), name) == 0)
            return e;
    }
    return NULL;
}

/* "changed" holds the counter with this delta, unit and class. */
static void expect_changed(const json_t *doc, const char *dev, const char *source, const char *name,
                           long long delta, const char *unit, const char *cls)
{
    json_t *e = row(doc, "changed", dev, source, name);
    if (!e)
        fail_msg("changed: no %s %s %s", source, dev, name);
    TP_EQ_INT(int_at(e, "delta"), delta);
    TP_EQ_STR(str_at(e, "unit"), unit);
    TP_EQ_STR(str_at(e, "class"), cls);
}

static void expect_not_changed(const json_t *doc, const char *dev, const char *source,
                               const char *name)
{
    if (row(doc, "changed", dev, source, name))
        fail_msg("changed: %s %s %s is there, though it did not count", source, dev, name);
}

/* The "causes" entry for cause, or NULL; there is at most one. */
static json_t *cause(const json_t *doc, const char *name)
{
    json_t *arr = array_at(doc, "causes"), *e, *found = NULL;
    size_t i;
    json_array_foreach(arr, i, e)
    {
        if (strcmp(str_at(e, "cause"), name) == 0) {
            if (found)
                fail_msg("causes: \"%s\" twice", name);
            found = e;
        }
    }
    if (found && !*str_at(found, "text"))
        fail_msg("causes: \"%s\" has no text", name);
    return found;
}

/* The cause is there, with this counter (and delta, unless negative) in its
 * evidence. */
static void expect_evidence(const json_t *doc, const char *name, const char *dev,
                            const char *source, const char *ctr, long long delta)
{
    json_t *c = cause(doc, name);
    if (!c)
        fail_msg("causes: no \"%s\"", name);
    json_t *ev = array_at(c, "evidence"), *e;
    size_t i;
    json_array_foreach(ev, i, e)
    {
        if (strcmp(str_at(e, "dev"), dev) == 0 && strcmp(str_at(e, "source"), source) == 0 &&
            strcmp(str_at(e, "name"), ctr) == 0) {
            if (delta >= 0)
                TP_EQ_INT(int_at(e, "delta"), delta);
            return;
        }
    }
    char *s = json_dumps(c, JSON_COMPACT);
    fail_msg("causes: \"%s\" lacks %s %s %s in %s", name, source, dev, ctr, s ? s : "?");
}

/* No evidence of any cause names dev (or dev's counter ctr, when not NULL). */
static void expect_no_evidence(const json_t *doc, const char *dev, const char *ctr)
{
    json_t *arr = array_at(doc, "causes"), *c, *e;
    size_t i, k;
    json_array_foreach(arr, i, c)
    {
        json_array_foreach(array_at(c, "evidence"), k, e)
        {
            if (strcmp(str_at(e, "dev"), dev) == 0 && (!ctr || strcmp(str_at(e, "name"), ctr) == 0))
                fail_msg("causes: \"%s\" names %s %s", str_at(c, "cause"), dev, ctr ? ctr : "");
        }
    }
}

static bool has_string(const json_t *arr, const char *s)
{
    json_t *e;
    size_t i;
    json_array_foreach(arr, i, e)
    {
        if (json_is_string(e) && strcmp(json_string_value(e), s) == 0)
            return true;
    }
    return false;
}

static bool in_list(char *const *list, size_t n, const char *s)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(list[i], s) == 0)
            return true;
    return false;
}

/* The members every document has, consistent with the diff. */
static void expect_shape(const struct fx *f)
{
    const json_t *w = json_object_get(f->doc, "window_s");
    assert_true(json_is_number(w));
    assert_true(json_number_value(w) >= 0);
    TP_EQ_INT(int_at(f->doc, "counters_read"), (long long)f->d.read);
    TP_EQ_U64(f->d.read, f->after.n);
    static const char *const arrays[] = {"changed", "reset", "levels", "gone",
                                         "new",     "links", "causes"};
    for (size_t i = 0; i < sizeof arrays / sizeof *arrays; i++)
        array_at(f->doc, arrays[i]);
    expect_sound(&f->d);
}

/* The "links" entry of dev, or NULL. */
static json_t *link_of(const json_t *doc, const char *dev)
{
    json_t *arr = array_at(doc, "links"), *e;
    size_t i;
    json_array_foreach(arr, i, e)
    {
        if (strcmp(str_at(e, "dev"), dev) == 0)
            return e;
    }
    return NULL;
}

static void expect_link(const json_t *doc, const char *dev, long long speed, long long max_speed,
                        long long width, long long max_width, bool downtrained, bool changed)
{
    json_t *l = link_of(doc, dev);
    if (!l)
        fail_msg("links: no %s", dev);
    TP_EQ_INT(int_at(l, "speed_mts"), speed);
    TP_EQ_INT(int_at(l, "max_speed_mts"), max_speed);
    TP_EQ_INT(int_at(l, "width"), width);
    TP_EQ_INT(int_at(l, "max_width"), max_width);
    TP_EQ_INT(bool_at(l, "downtrained"), downtrained);
    TP_EQ_INT(bool_at(l, "changed"), changed);
}

/* ---- the tests ---- */

/* The table names each class and source as documents spell them, and
 * classifies the counters the fixtures change: their class and unit. */
static void names_and_classes_follow_the_table(void **state)
{
    (void)state;
    static const char *const classes[] = {"other",       "traffic",     "throttled", "pausing",
                                          "congestion",  "loss",        "errors",    "flap",
                                          "downtrained", "link_changed"};
    assert_int_equal(sizeof classes / sizeof *classes, TP_CTR_CLASSES);
    for (int c = 0; c < TP_CTR_CLASSES; c++)
        TP_EQ_STR(tp_ctr_class_name((enum tp_ctr_class)c), classes[c]);
    static const char *const sources[] = {"rdma", "netdev", "ethtool", "tcp", "pcie"};
    assert_int_equal(sizeof sources / sizeof *sources, TP_CTR_SOURCES);
    for (int s = 0; s < TP_CTR_SOURCES; s++)
        TP_EQ_STR(tp_ctr_source_name((enum tp_ctr_source)s), sources[s]);

    static const struct {
        enum tp_ctr_source src;
        const char *name;
        enum tp_ctr_class cls;
        const char *unit; /* NULL: not checked */
    } rows[] = {
        {TP_CTR_NETDEV, "rx_bytes", TP_CTR_TRAFFIC, "bytes"},
        {TP_CTR_NETDEV, "tx_packets", TP_CTR_TRAFFIC, "packets"},
        {TP_CTR_NETDEV, "carrier_changes", TP_CTR_FLAP, NULL},
        {TP_CTR_NETDEV, "rx_crc_errors", TP_CTR_ERRORS, NULL},
        {TP_CTR_RDMA, "port_xmit_data", TP_CTR_TRAFFIC, "4-byte words"},
        {TP_CTR_RDMA, "port_rcv_data", TP_CTR_TRAFFIC, "4-byte words"},
        {TP_CTR_RDMA, "port_xmit_packets", TP_CTR_TRAFFIC, "packets"},
        {TP_CTR_RDMA, "port_xmit_wait", TP_CTR_THROTTLED, NULL},
        {TP_CTR_RDMA, "symbol_error", TP_CTR_ERRORS, NULL},
        {TP_CTR_RDMA, "link_error_recovery", TP_CTR_ERRORS, NULL},
        {TP_CTR_RDMA, "link_downed", TP_CTR_FLAP, NULL},
        {TP_CTR_RDMA, "np_cnp_sent", TP_CTR_CONGESTION, NULL},
        {TP_CTR_RDMA, "rp_cnp_handled", TP_CTR_CONGESTION, NULL},
        {TP_CTR_RDMA, "np_ecn_marked_roce_packets", TP_CTR_CONGESTION, NULL},
        {TP_CTR_RDMA, "out_of_sequence", TP_CTR_LOSS, NULL},
        {TP_CTR_ETHTOOL, "rx_prio3_pause", TP_CTR_THROTTLED, NULL},
        {TP_CTR_ETHTOOL, "rx_prio5_pause", TP_CTR_THROTTLED, NULL},
        {TP_CTR_ETHTOOL, "tx_prio0_pause", TP_CTR_PAUSING, NULL},
        {TP_CTR_TCP, "RetransSegs", TP_CTR_LOSS, NULL},
        {TP_CTR_TCP, "TCPLostRetransmit", TP_CTR_LOSS, NULL},
        {TP_CTR_TCP, "TCPTimeouts", TP_CTR_LOSS, NULL},
        {TP_CTR_PCIE, AER_BADTLP, TP_CTR_ERRORS, NULL},
    };
    for (size_t i = 0; i < sizeof rows / sizeof *rows; i++) {
        const char *unit = NULL;
        enum tp_ctr_class c = tp_ctr_classify(rows[i].src, rows[i].name, &unit);
        if (c != rows[i].cls)
            fail_msg("%s %s: class %s, expected %s", tp_ctr_source_name(rows[i].src), rows[i].name,
                     tp_ctr_class_name(c), tp_ctr_class_name(rows[i].cls));
        assert_non_null(unit);
        if (rows[i].unit)
            TP_EQ_STR(unit, rows[i].unit);
    }
    /* A name the table does not know is read and reported, with no cause. */
    const char *unit = NULL;
    TP_EQ_INT(tp_ctr_classify(TP_CTR_RDMA, "no_such_counter", &unit), TP_CTR_OTHER);
    TP_EQ_STR(unit, "events");
}

/* RoCE under congestion: CNPs and ECN marks grew, so did out_of_sequence;
 * the causes are congestion and loss, each with its exact counters, and
 * the port's transmit wait, unchanged, neither counts nor throttles. */
static void roce_congestion_and_loss_named(void **state)
{
    (void)state;
    struct fx f;
    load(&f, "roce", NULL);
    expect_shape(&f);
    TP_EQ_U64(f.d.read, 17); /* 10 PMA counters and 7 hardware counters of mlx5_0/1 */

    expect_delta(&f.d, TP_CTR_RDMA, "mlx5_0/1", "port_rcv_data", 250000000);
    expect_delta(&f.d, TP_CTR_RDMA, "mlx5_0/1", "port_xmit_data", 250000000);
    expect_delta(&f.d, TP_CTR_RDMA, "mlx5_0/1", "port_rcv_packets", 250000);
    expect_delta(&f.d, TP_CTR_RDMA, "mlx5_0/1", "port_xmit_packets", 250000);
    expect_delta(&f.d, TP_CTR_RDMA, "mlx5_0/1", "np_cnp_sent", 300);
    expect_delta(&f.d, TP_CTR_RDMA, "mlx5_0/1", "rp_cnp_handled", 300);
    expect_delta(&f.d, TP_CTR_RDMA, "mlx5_0/1", "np_ecn_marked_roce_packets", 640);
    expect_delta(&f.d, TP_CTR_RDMA, "mlx5_0/1", "out_of_sequence", 27);
    static const char *const same[] = {
        "port_xmit_discards", "port_rcv_errors",       "symbol_error",
        "link_downed",        "link_error_recovery",   "port_xmit_wait",
        "packet_seq_err",     "local_ack_timeout_err", "implied_nak_seq_err"};
    for (size_t i = 0; i < sizeof same / sizeof *same; i++) {
        expect_absent(&f.d, TP_CTR_RDMA, "mlx5_0/1", same[i]);
        expect_not_changed(f.doc, "mlx5_0/1", "rdma", same[i]);
    }
    TP_EQ_U64(f.d.n, 8);

    expect_changed(f.doc, "mlx5_0/1", "rdma", "port_xmit_data", 250000000, "4-byte words",
                   "traffic");
    expect_changed(f.doc, "mlx5_0/1", "rdma", "np_cnp_sent", 300,
                   unit_of(&f.d, TP_CTR_RDMA, "mlx5_0/1", "np_cnp_sent"), "congestion");
    TP_EQ_INT(json_array_size(array_at(f.doc, "changed")), 8);
    expect_evidence(f.doc, "congestion", "mlx5_0/1", "rdma", "np_cnp_sent", 300);
    expect_evidence(f.doc, "congestion", "mlx5_0/1", "rdma", "rp_cnp_handled", 300);
    expect_evidence(f.doc, "congestion", "mlx5_0/1", "rdma", "np_ecn_marked_roce_packets", 640);
    expect_evidence(f.doc, "loss", "mlx5_0/1", "rdma", "out_of_sequence", 27);
    assert_null(cause(f.doc, "throttled"));
    assert_null(cause(f.doc, "errors"));
    assert_null(cause(f.doc, "flap"));
    TP_EQ_INT(json_array_size(array_at(f.doc, "causes")), 2);
    TP_EQ_INT(json_array_size(array_at(f.doc, "reset")), 0);
    TP_EQ_INT(json_array_size(array_at(f.doc, "gone")), 0);
    TP_EQ_INT(json_array_size(array_at(f.doc, "new")), 0);
    /* No path given: the document names none. */
    const json_t *p = json_object_get(f.doc, "path");
    assert_true(!p || json_is_null(p));
    unload(&f);
}

/* An InfiniBand port throttled by its peer (port_xmit_wait), with symbol
 * errors and link recoveries, and one link_downed: throttled, errors and
 * flap, with transmit data counted in 4-byte words. */
static void ib_throttled_errors_and_flap_named(void **state)
{
    (void)state;
    struct fx f;
    load(&f, "ib", NULL);
    expect_shape(&f);
    expect_delta(&f.d, TP_CTR_RDMA, "mlx5_1/1", "port_xmit_wait", 4000000);
    expect_delta(&f.d, TP_CTR_RDMA, "mlx5_1/1", "symbol_error", 12);
    expect_delta(&f.d, TP_CTR_RDMA, "mlx5_1/1", "link_error_recovery", 2);
    expect_delta(&f.d, TP_CTR_RDMA, "mlx5_1/1", "link_downed", 1);
    expect_delta(&f.d, TP_CTR_RDMA, "mlx5_1/1", "port_xmit_data", 500000000);
    expect_delta(&f.d, TP_CTR_RDMA, "mlx5_1/1", "port_xmit_packets", 2000000);
    TP_EQ_STR(unit_of(&f.d, TP_CTR_RDMA, "mlx5_1/1", "port_xmit_data"), "4-byte words");
    expect_absent(&f.d, TP_CTR_RDMA, "mlx5_1/1", "port_rcv_data");
    expect_absent(&f.d, TP_CTR_RDMA, "mlx5_1/1", "port_rcv_errors");
    TP_EQ_U64(f.d.n, 6);

    expect_changed(f.doc, "mlx5_1/1", "rdma", "port_xmit_data", 500000000, "4-byte words",
                   "traffic");
    expect_changed(f.doc, "mlx5_1/1", "rdma", "port_xmit_wait", 4000000,
                   unit_of(&f.d, TP_CTR_RDMA, "mlx5_1/1", "port_xmit_wait"), "throttled");
    expect_not_changed(f.doc, "mlx5_1/1", "rdma", "port_rcv_data");
    expect_evidence(f.doc, "throttled", "mlx5_1/1", "rdma", "port_xmit_wait", 4000000);
    expect_evidence(f.doc, "errors", "mlx5_1/1", "rdma", "symbol_error", 12);
    expect_evidence(f.doc, "errors", "mlx5_1/1", "rdma", "link_error_recovery", 2);
    expect_evidence(f.doc, "flap", "mlx5_1/1", "rdma", "link_downed", 1);
    assert_null(cause(f.doc, "congestion"));
    assert_null(cause(f.doc, "loss"));
    TP_EQ_INT(json_array_size(array_at(f.doc, "causes")), 3);
    unload(&f);
}

/* Ethernet pause: pause frames received on priority 3 (the driver's
 * statistics, from the sosreport's ethtool -S text) say the switch
 * throttled us; the carrier changed twice (a flap); the pause frames we
 * sent did not grow, so nothing says we were pausing. The path's counters
 * come first and the document names the path. */
static void pause_received_is_throttled_not_pausing(void **state)
{
    (void)state;
    struct fx f;
    load(&f, "pause", "eth0");
    expect_shape(&f);
    TP_EQ_STR(str_at(f.doc, "path"), "eth0");
    expect_delta(&f.d, TP_CTR_NETDEV, "eth0", "rx_bytes", 1000000000);
    expect_delta(&f.d, TP_CTR_NETDEV, "eth0", "tx_bytes", 800000000);
    expect_delta(&f.d, TP_CTR_NETDEV, "eth0", "rx_packets", 700000);
    expect_delta(&f.d, TP_CTR_NETDEV, "eth0", "tx_packets", 600000);
    expect_delta(&f.d, TP_CTR_NETDEV, "eth0", "carrier_changes", 2);
    expect_delta(&f.d, TP_CTR_ETHTOOL, "eth0", "rx_prio3_pause", 9000);
    expect_delta(&f.d, TP_CTR_ETHTOOL, "eth0", "rx_bytes", 1000000000);
    TP_EQ_STR(unit_of(&f.d, TP_CTR_NETDEV, "eth0", "rx_bytes"), "bytes");
    static const char *const same_netdev[] = {"rx_errors", "tx_errors", "rx_dropped", "tx_dropped",
                                              "rx_crc_errors"};
    for (size_t i = 0; i < sizeof same_netdev / sizeof *same_netdev; i++) {
        expect_absent(&f.d, TP_CTR_NETDEV, "eth0", same_netdev[i]);
        expect_not_changed(f.doc, "eth0", "netdev", same_netdev[i]);
    }
    static const char *const same_ethtool[] = {"tx_prio0_pause",    "tx_pause_ctrl_phy",
                                               "rx_pause_ctrl_phy", "tx_prio3_pause",
                                               "rx_discards_phy",   "tx_timeout"};
    for (size_t i = 0; i < sizeof same_ethtool / sizeof *same_ethtool; i++) {
        expect_absent(&f.d, TP_CTR_ETHTOOL, "eth0", same_ethtool[i]);
        expect_not_changed(f.doc, "eth0", "ethtool", same_ethtool[i]);
    }
    /* The ethtool text's counters are all read: 13 of them, and 10 netdev. */
    TP_EQ_U64(f.d.read, 23);

    expect_changed(f.doc, "eth0", "netdev", "rx_bytes", 1000000000, "bytes", "traffic");
    expect_changed(f.doc, "eth0", "ethtool", "rx_prio3_pause", 9000,
                   unit_of(&f.d, TP_CTR_ETHTOOL, "eth0", "rx_prio3_pause"), "throttled");
    expect_changed(f.doc, "eth0", "netdev", "carrier_changes", 2,
                   unit_of(&f.d, TP_CTR_NETDEV, "eth0", "carrier_changes"), "flap");
    expect_evidence(f.doc, "throttled", "eth0", "ethtool", "rx_prio3_pause", 9000);
    expect_evidence(f.doc, "flap", "eth0", "netdev", "carrier_changes", 2);
    assert_null(cause(f.doc, "pausing"));
    expect_no_evidence(f.doc, "eth0", "tx_prio0_pause");
    TP_EQ_INT(json_array_size(array_at(f.doc, "causes")), 2);
    /* Every changed counter is the path's here, so the first one is too. */
    json_t *first = json_array_get(array_at(f.doc, "changed"), 0);
    assert_non_null(first);
    TP_EQ_STR(str_at(first, "dev"), "eth0");
    unload(&f);
}

/* PCIe: the NIC at 0000:3b:00.0 runs at 8 GT/s x8 of 16 GT/s x16 and is
 * the one link downtrained; the GPU and the NVMe drive run at their
 * maximum and the bridge at 0000:00:01.0 is no network, display or NVMe
 * device, so it is not a link of the document. The drive's correctable
 * AER count of bad TLPs grew by 3: errors. Levels that did not change are
 * not deltas. */
static void pcie_downtrained_nic_and_aer_errors_named(void **state)
{
    (void)state;
    struct fx f;
    load(&f, "pcie", NULL);
    expect_shape(&f);
    expect_delta(&f.d, TP_CTR_PCIE, "0000:af:00.0", AER_BADTLP, 3);
    /* the TOTAL_ line is the sum of the others: read, it would count the
     * three errors twice */
    expect_absent(&f.d, TP_CTR_PCIE, "0000:af:00.0", "correctable.TOTAL_ERR_COR");
    for (size_t i = 0; i < f.d.n; i++) {
        const struct tp_ctr *c = either(&f.d.d[i]);
        if (strcmp(c->dev, "0000:af:00.0") != 0)
            fail_msg("%s %s: in the diff, though nothing of it changed", c->dev, c->name);
        if (c->level)
            fail_msg("%s %s: an unchanged level in the diff", c->dev, c->name);
    }
    expect_changed(f.doc, "0000:af:00.0", "pcie", AER_BADTLP, 3,
                   unit_of(&f.d, TP_CTR_PCIE, "0000:af:00.0", AER_BADTLP), "errors");
    expect_evidence(f.doc, "errors", "0000:af:00.0", "pcie", AER_BADTLP, 3);
    TP_EQ_INT(json_array_size(array_at(f.doc, "levels")), 0);

    TP_EQ_INT(json_array_size(array_at(f.doc, "links")), 3);
    expect_link(f.doc, "0000:3b:00.0", 8000, 16000, 8, 16, true, false);
    expect_link(f.doc, "0000:5e:00.0", 16000, 16000, 16, 16, false, false);
    expect_link(f.doc, "0000:af:00.0", 8000, 8000, 4, 4, false, false);
    assert_null(link_of(f.doc, "0000:00:01.0"));

    /* The NIC's link, and it alone, is the evidence of downtrained. */
    json_t *down = cause(f.doc, "downtrained");
    assert_non_null(down);
    assert_true(json_array_size(array_at(down, "evidence")) >= 1);
    json_t *e;
    size_t i;
    json_array_foreach(array_at(down, "evidence"), i, e)
    {
        TP_EQ_STR(str_at(e, "dev"), "0000:3b:00.0");
    }
    assert_null(cause(f.doc, "link_changed"));
    expect_no_evidence(f.doc, "0000:5e:00.0", NULL);
    expect_no_evidence(f.doc, "0000:00:01.0", NULL);
    TP_EQ_INT(json_array_size(array_at(f.doc, "causes")), 2);
    unload(&f);
}

/* A sample of the links taken during the window in which the GPU's link
 * ran at 8 GT/s: folded into the diff, that link is marked changed (and
 * only it), and link_changed names it, though before and after agree. */
static void pcie_link_change_during_window_named(void **state)
{
    (void)state;
    struct fx f;
    load(&f, "pcie", NULL);
    struct tp_ctr_snap during;
    tp_error err = {0};
    int rc = tp_ctr_snapshot_links(FIXTURES "/pcie/during", &during, &err);
    if (rc)
        fail_msg("tp_ctr_snapshot_links = %d: %s", rc, err.msg);
    assert_true(during.n > 0);

    rc = tp_ctr_diff_links(&f.d, &f.before, &during, &err);
    if (rc)
        fail_msg("tp_ctr_diff_links = %d: %s", rc, err.msg);
    assert_true(f.d.nchanged_links >= 1);
    for (size_t i = 0; i < f.d.nchanged_links; i++)
        TP_HAS(f.d.changed_links[i], "0000:5e:00.0");

    json_decref(f.doc);
    f.doc = tp_ctr_diff_json(&f.d, NULL);
    assert_non_null(f.doc);
    expect_link(f.doc, "0000:5e:00.0", 16000, 16000, 16, 16, false, true);
    expect_link(f.doc, "0000:3b:00.0", 8000, 16000, 8, 16, true, false);
    expect_link(f.doc, "0000:af:00.0", 8000, 8000, 4, 4, false, false);
    json_t *lc = cause(f.doc, "link_changed");
    assert_non_null(lc);
    json_t *e;
    size_t i;
    json_array_foreach(array_at(lc, "evidence"), i, e)
    {
        TP_EQ_STR(str_at(e, "dev"), "0000:5e:00.0");
    }
    assert_true(json_array_size(array_at(lc, "evidence")) >= 1);
    /* The sample changes no count: the downtrained NIC and the AER errors
     * are still the other causes. */
    assert_non_null(cause(f.doc, "downtrained"));
    assert_non_null(cause(f.doc, "errors"));
    TP_EQ_INT(json_array_size(array_at(f.doc, "causes")), 3);
    /* The sample holds the links' levels only (speed and width): three
     * devices, four levels each. */
    for (size_t k = 0; k < during.n; k++)
        if (!during.c[k].level || during.c[k].source != TP_CTR_PCIE)
            fail_msg("links sample: %s %s is not a PCIe level", during.c[k].dev, during.c[k].name);
    TP_EQ_U64(during.n, 12);
    tp_ctr_snap_free(&during);
    unload(&f);
}

/* TCP: retransmitted segments, lost retransmits and timeouts grew (loss,
 * with RetransSegs in its evidence); CurrEstab fell from 40 to 12, a
 * level: in "levels" with both values, neither a reset, nor a delta, nor
 * a cause. MaxConn's -1 breaks nothing. */
static void tcp_retransmits_named_loss(void **state)
{
    (void)state;
    struct fx f;
    load(&f, "tcp", NULL);
    expect_shape(&f);
    expect_delta(&f.d, TP_CTR_TCP, "Tcp", "RetransSegs", 500);
    expect_delta(&f.d, TP_CTR_TCP, "Tcp", "InSegs", 1000000);
    expect_delta(&f.d, TP_CTR_TCP, "Tcp", "OutSegs", 1000000);
    expect_delta(&f.d, TP_CTR_TCP, "TcpExt", "TCPLostRetransmit", 4);
    expect_delta(&f.d, TP_CTR_TCP, "TcpExt", "TCPTimeouts", 9);
    expect_absent(&f.d, TP_CTR_TCP, "Tcp", "ActiveOpens");
    expect_absent(&f.d, TP_CTR_TCP, "Tcp", "RtoMin");
    expect_absent(&f.d, TP_CTR_TCP, "TcpExt", "TCPFastRetrans");
    expect_not_changed(f.doc, "Tcp", "tcp", "ActiveOpens");

    const struct tp_ctr_delta *est = entry(&f.d, TP_CTR_TCP, "Tcp", "CurrEstab");
    assert_non_null(est);
    assert_non_null(est->before);
    assert_non_null(est->after);
    assert_true(est->after->level);
    TP_EQ_INT(est->state, TP_CTR_LEVEL);
    TP_EQ_U64(est->before->value, 40);
    TP_EQ_U64(est->after->value, 12);
    json_t *lv = row(f.doc, "levels", "Tcp", "tcp", "CurrEstab");
    assert_non_null(lv);
    TP_EQ_INT(int_at(lv, "before"), 40);
    TP_EQ_INT(int_at(lv, "after"), 12);
    TP_EQ_INT(json_array_size(array_at(f.doc, "levels")), 1);
    assert_null(row(f.doc, "reset", "Tcp", "tcp", "CurrEstab"));
    expect_not_changed(f.doc, "Tcp", "tcp", "CurrEstab");
    expect_no_evidence(f.doc, "Tcp", "CurrEstab");
    TP_EQ_INT(json_array_size(array_at(f.doc, "reset")), 0);

    expect_changed(f.doc, "Tcp", "tcp", "RetransSegs", 500,
                   unit_of(&f.d, TP_CTR_TCP, "Tcp", "RetransSegs"), "loss");
    expect_evidence(f.doc, "loss", "Tcp", "tcp", "RetransSegs", 500);
    expect_evidence(f.doc, "loss", "TcpExt", "tcp", "TCPLostRetransmit", 4);
    expect_evidence(f.doc, "loss", "TcpExt", "tcp", "TCPTimeouts", 9);
    TP_EQ_INT(json_array_size(array_at(f.doc, "causes")), 1);
    unload(&f);
}

/* A counter that went backwards (eth1's rx_bytes: a wrap or a driver
 * reset) is a reset with both values and never a delta; a device present
 * before only (mlx5_2) is gone, one present after only (eth2) is new, and
 * neither's counters are deltas or causes. */
static void reset_gone_and_new_not_counted(void **state)
{
    (void)state;
    struct fx f;
    load(&f, "reset", "eth1");
    expect_shape(&f);
    TP_EQ_STR(str_at(f.doc, "path"), "eth1");

    const struct tp_ctr_delta *rx = entry(&f.d, TP_CTR_NETDEV, "eth1", "rx_bytes");
    assert_non_null(rx);
    TP_EQ_INT(rx->state, TP_CTR_RESET);
    TP_EQ_U64(rx->before->value, 9000000000u);
    TP_EQ_U64(rx->after->value, 1000);
    expect_delta(&f.d, TP_CTR_NETDEV, "eth1", "tx_bytes", 300);
    expect_absent(&f.d, TP_CTR_NETDEV, "eth1", "carrier_changes");

    json_t *r = row(f.doc, "reset", "eth1", "netdev", "rx_bytes");
    assert_non_null(r);
    TP_EQ_INT(int_at(r, "before"), 9000000000LL);
    TP_EQ_INT(int_at(r, "after"), 1000);
    TP_EQ_INT(json_array_size(array_at(f.doc, "reset")), 1);
    expect_not_changed(f.doc, "eth1", "netdev", "rx_bytes");
    expect_changed(f.doc, "eth1", "netdev", "tx_bytes", 300, "bytes", "traffic");
    /* Nothing from the new or the gone device is a delta. */
    TP_EQ_INT(json_array_size(array_at(f.doc, "changed")), 1);

    assert_true(in_list(f.d.gone, f.d.ngone, "rdma:mlx5_2/1"));
    assert_true(in_list(f.d.added, f.d.nadded, "netdev:eth2"));
    TP_EQ_U64(f.d.ngone, 1);
    TP_EQ_U64(f.d.nadded, 1);
    assert_true(has_string(array_at(f.doc, "gone"), "rdma:mlx5_2/1"));
    assert_true(has_string(array_at(f.doc, "new"), "netdev:eth2"));
    TP_EQ_INT(json_array_size(array_at(f.doc, "gone")), 1);
    TP_EQ_INT(json_array_size(array_at(f.doc, "new")), 1);

    const struct tp_ctr_delta *g = entry(&f.d, TP_CTR_RDMA, "mlx5_2/1", "port_rcv_data");
    assert_non_null(g);
    TP_EQ_INT(g->state, TP_CTR_GONE);
    const struct tp_ctr_delta *n = entry(&f.d, TP_CTR_NETDEV, "eth2", "carrier_changes");
    assert_non_null(n);
    TP_EQ_INT(n->state, TP_CTR_NEW);
    /* eth2's one carrier change predates the window: no flap. */
    TP_EQ_INT(json_array_size(array_at(f.doc, "causes")), 0);
    unload(&f);
}

/* Two snapshots of one unchanged root: nothing changed, reset, went or
 * came, and no cause is named. */
static void clean_pair_names_nothing(void **state)
{
    (void)state;
    struct fx f;
    load_pair(&f, "roce", "before", "before", NULL);
    expect_shape(&f);
    TP_EQ_U64(f.d.n, 0);
    TP_EQ_U64(f.d.read, 17);
    static const char *const empty[] = {"changed", "reset", "levels", "gone", "new", "causes"};
    for (size_t i = 0; i < sizeof empty / sizeof *empty; i++)
        if (json_array_size(array_at(f.doc, empty[i])) != 0)
            fail_msg("\"%s\" is not empty for a clean pair", empty[i]);
    unload(&f);
}

/* A root that does not exist, or is a file, is a usage error naming it. */
static void missing_root_is_usage_error(void **state)
{
    (void)state;
    static const char *const roots[] = {FIXTURES "/no-such-case/before",
                                        FIXTURES "/roce/before/sys/class/infiniband/mlx5_0/"
                                                 "ports/1/link_layer"};
    for (size_t i = 0; i < sizeof roots / sizeof *roots; i++) {
        struct tp_ctr_snap s;
        tp_error err = {0};
        TP_EQ_INT(tp_ctr_snapshot(roots[i], &s, &err), TP_EUSAGE);
        TP_EQ_INT(err.code, TP_EUSAGE);
        TP_HAS(err.msg, roots[i]);
        tp_ctr_snap_free(&s);
        tp_error_clear(&err);
        TP_EQ_INT(tp_ctr_snapshot_links(roots[i], &s, &err), TP_EUSAGE);
        TP_HAS(err.msg, roots[i]);
        tp_ctr_snap_free(&s);
    }
}

/* This node's own counters read (whatever it has) and diff against
 * themselves a moment later into a document; nothing is asserted of the
 * values, which move. */
static void live_node_reads(void **state)
{
    (void)state;
    struct tp_ctr_snap a, b;
    snap(NULL, &a);
    snap("/", &b);
    for (size_t i = 1; i < a.n; i++) {
        const struct tp_ctr *p = &a.c[i - 1], *q = &a.c[i];
        int o = p->source != q->source ? (p->source < q->source ? -1 : 1) : strcmp(p->dev, q->dev);
        if (!o)
            o = strcmp(p->name, q->name);
        if (o >= 0)
            fail_msg("live snapshot not sorted at %s %s", q->dev, q->name);
    }
    struct tp_ctr_diff d;
    tp_error err = {0};
    int rc = tp_ctr_diff(&a, &b, &d, &err);
    if (rc)
        fail_msg("tp_ctr_diff = %d: %s", rc, err.msg);
    expect_sound(&d);
    json_t *doc = tp_ctr_diff_json(&d, NULL);
    assert_non_null(doc);
    assert_true(json_is_array(json_object_get(doc, "causes")));
    json_decref(doc);
    tp_ctr_diff_free(&d);
    tp_ctr_snap_free(&b);
    tp_ctr_snap_free(&a);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(names_and_classes_follow_the_table),
        cmocka_unit_test(roce_congestion_and_loss_named),
        cmocka_unit_test(ib_throttled_errors_and_flap_named),
        cmocka_unit_test(pause_received_is_throttled_not_pausing),
        cmocka_unit_test(pcie_downtrained_nic_and_aer_errors_named),
        cmocka_unit_test(pcie_link_change_during_window_named),
        cmocka_unit_test(tcp_retransmits_named_loss),
        cmocka_unit_test(reset_gone_and_new_not_counted),
        cmocka_unit_test(clean_pair_names_nothing),
        cmocka_unit_test(missing_root_is_usage_error),
        cmocka_unit_test(live_node_reads),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
