/* Fuzz target: histogram deserialisation (tp_hist_from_json), the way a
 * result document's histograms come back into trainpath. The input is the
 * JSON text of one histogram object. A histogram that parses must then
 * behave: its percentiles lie in [min, max] and never fall as p rises, it
 * merges with itself to twice its count, and it writes out and reads back
 * to the very same JSON. */
#include <jansson.h>
#include <math.h>
#include <stdlib.h>

#include "fuzz.h"
#include "tp/hist.h"

static const double ps[] = {0, 1, 25, 50, 90, 99, 99.9, 99.99, 100};

static void check_percentiles(const tp_hist *h)
{
    uint64_t prev = 0;
    for (size_t i = 0; i < sizeof ps / sizeof ps[0]; i++) {
        uint64_t v = tp_hist_percentile(h, ps[i]);
        FZ_ASSERT(v >= h->min && v <= h->max, "p%g = %llu outside [%llu, %llu]", ps[i],
                  (unsigned long long)v, (unsigned long long)h->min, (unsigned long long)h->max);
        FZ_ASSERT(v >= prev, "p%g = %llu below the previous percentile %llu", ps[i],
                  (unsigned long long)v, (unsigned long long)prev);
        prev = v;
    }
    FZ_ASSERT(tp_hist_percentile(h, 0) == h->min, "p0 is not min");
    FZ_ASSERT(tp_hist_percentile(h, 100) == h->max, "p100 is not max");
    (void)tp_hist_stdev(h);
}

/* to_json of h, from_json of that, to_json again: the two texts agree. */
static void check_round_trip(const tp_hist *h, const char *what)
{
    json_t *j1 = tp_hist_to_json(h);
    if (!j1) {
        /* only a moment that is no longer finite (a merge can overflow m2)
         * cannot be written */
        FZ_ASSERT(!isfinite(h->mean) || !isfinite(h->m2), "%s: to_json failed", what);
        return;
    }
    tp_error err;
    tp_hist *h2 = tp_hist_from_json(j1, &err);
    FZ_ASSERT(h2, "%s: its own JSON does not read back: %s", what, err.msg);
    json_t *j2 = tp_hist_to_json(h2);
    FZ_ASSERT(j2 && json_equal(j1, j2), "%s: JSON round trip differs", what);
    json_decref(j2);
    tp_hist_free(h2);
    json_decref(j1);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    json_t *j = json_loadb((const char *)data, size, 0, NULL);
    if (!j)
        return 0;
    tp_error err;
    tp_hist *h = tp_hist_from_json(j, &err);
    json_decref(j);
    if (!h)
        return 0;
    if (h->count > 0)
        check_percentiles(h);
    else
        FZ_ASSERT(tp_hist_percentile(h, 50) == 0, "empty histogram with a p50");
    check_round_trip(h, "parsed");

    /* merged with itself: twice the samples (when that fits in the count) */
    if (h->count <= UINT64_MAX / 2) {
        tp_hist *m = tp_hist_new();
        FZ_ASSERT(m, "out of memory");
        tp_hist_merge(m, h);
        tp_hist_merge(m, h);
        FZ_ASSERT(m->count == 2 * h->count, "merged count %llu, want %llu",
                  (unsigned long long)m->count, (unsigned long long)(2 * h->count));
        if (m->count > 0) {
            FZ_ASSERT(m->min == h->min && m->max == h->max, "merge changed min or max");
            check_percentiles(m);
            FZ_ASSERT(tp_hist_percentile(m, 50) == tp_hist_percentile(h, 50),
                      "p50 of h merged with itself %llu differs from h's %llu",
                      (unsigned long long)tp_hist_percentile(m, 50),
                      (unsigned long long)tp_hist_percentile(h, 50));
        }
        check_round_trip(m, "merged");
        tp_hist_free(m);
    }
    tp_hist_free(h);
    return 0;
}
