/* A test's counters in two calls (include/tp/counters.h): a snapshot
 * before, the PCIe links sampled by a thread during, a snapshot after,
 * the comparison as a document object. Nothing here runs inside a timed
 * loop: the thread sleeps between samples and reads a few sysfs files. */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ctr_int.h"
#include "tp/clock.h"

struct tp_ctr_probe {
    struct tp_ctr_snap before, first_links;
    char path[64];
    bool have_path;
    unsigned period_ms;
    uint64_t cost_ns;
    pthread_t th;
    bool running;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    bool stop;
    size_t samples;
    char **changed; /* devices whose link changed in some sample */
    size_t nchanged;
    bool oom;
    char why[256]; /* set when start failed */
};

static void note_changes(struct tp_ctr_probe *p, const struct tp_ctr_snap *s)
{
    struct tp_ctr_diff d = {0};
    tp_error err = {0};
    if (tp_ctr_diff_links(&d, &p->first_links, s, &err)) {
        p->oom = true;
        return;
    }
    for (size_t i = 0; i < d.nchanged_links; i++) {
        bool known = false;
        for (size_t k = 0; k < p->nchanged && !known; k++)
            known = strcmp(p->changed[k], d.changed_links[i]) == 0;
        if (known)
            continue;
        char **n = realloc(p->changed, (p->nchanged + 1) * sizeof *n);
        if (!n || !(n[p->nchanged] = strdup(d.changed_links[i]))) {
            if (n)
                p->changed = n;
            p->oom = true;
            break;
        }
        p->changed = n;
        p->nchanged++;
    }
    tp_ctr_diff_free(&d);
}

static void *watch(void *arg)
{
    struct tp_ctr_probe *p = arg;
    pthread_mutex_lock(&p->mu);
    while (!p->stop) {
        struct timespec t;
        clock_gettime(CLOCK_MONOTONIC, &t);
        t.tv_sec += p->period_ms / 1000;
        t.tv_nsec += (long)(p->period_ms % 1000) * 1000000l;
        if (t.tv_nsec >= 1000000000l) {
            t.tv_sec++;
            t.tv_nsec -= 1000000000l;
        }
        int rc = 0;
        while (!p->stop && rc != ETIMEDOUT)
            rc = pthread_cond_timedwait(&p->cv, &p->mu, &t);
        if (p->stop)
            break;
        pthread_mutex_unlock(&p->mu);
        struct tp_ctr_snap s;
        tp_error err = {0};
        int r = tp_ctr_snapshot_links(NULL, &s, &err);
        pthread_mutex_lock(&p->mu);
        if (!r) {
            p->samples++;
            note_changes(p, &s);
        }
        tp_ctr_snap_free(&s);
    }
    pthread_mutex_unlock(&p->mu);
    return NULL;
}

struct tp_ctr_probe *tp_ctr_probe_start(const char *host, unsigned period_ms)
{
    struct tp_ctr_probe *p = calloc(1, sizeof *p);
    if (!p)
        return NULL;
    tp_error err = {0};
    uint64_t t0 = tp_now_ns();
    if (tp_ctr_snapshot(NULL, &p->before, &err) ||
        tp_ctr_snapshot_links(NULL, &p->first_links, &err)) {
        tp_ctr_snap_free(&p->before);
        tp_ctr_snap_free(&p->first_links);
        free(p);
        return NULL;
    }
    p->cost_ns = tp_now_ns() - t0;
    p->have_path = host && tp_ctr_route_dev(host, p->path, sizeof p->path) == 0;
    p->period_ms = period_ms == 0 ? 1000 : period_ms < 100 ? 100 : period_ms;
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&p->cv, &ca);
    pthread_condattr_destroy(&ca);
    pthread_mutex_init(&p->mu, NULL);
    p->running = pthread_create(&p->th, NULL, watch, p) == 0;
    return p;
}

json_t *tp_ctr_probe_end(struct tp_ctr_probe *p)
{
    if (!p)
        return json_pack("{s:s}", "error", "the counters could not be read before the test");
    if (p->running) {
        pthread_mutex_lock(&p->mu);
        p->stop = true;
        pthread_cond_signal(&p->cv);
        pthread_mutex_unlock(&p->mu);
        pthread_join(p->th, NULL);
    }
    struct tp_ctr_snap after;
    struct tp_ctr_diff d;
    tp_error err = {0};
    json_t *o = NULL;
    uint64_t t0 = tp_now_ns();
    if (tp_ctr_snapshot(NULL, &after, &err) == 0) {
        p->cost_ns += tp_now_ns() - t0;
        if (tp_ctr_diff(&p->before, &after, &d, &err) == 0) {
            note_changes(p, &after);
            for (size_t i = 0; i < p->nchanged && !p->oom; i++) {
                char **n = realloc(d.changed_links, (d.nchanged_links + 1) * sizeof *n);
                if (!n || !(n[d.nchanged_links] = strdup(p->changed[i]))) {
                    if (n)
                        d.changed_links = n;
                    p->oom = true;
                    break;
                }
                d.changed_links = n;
                d.nchanged_links++;
            }
            o = p->oom ? NULL : tp_ctr_diff_json(&d, p->have_path ? p->path : NULL);
            if (o) {
                json_object_set_new(o, "samples", json_integer((json_int_t)p->samples));
                json_object_set_new(o, "cost_ms", json_real((double)p->cost_ns / 1e6));
            }
            tp_ctr_diff_free(&d);
        }
    }
    if (!o)
        o = json_pack("{s:s}", "error",
                      err.msg[0] ? err.msg : "out of memory comparing the counters");
    tp_ctr_snap_free(&after);
    tp_ctr_snap_free(&p->before);
    tp_ctr_snap_free(&p->first_links);
    tp__ctr_names_free(p->changed, p->nchanged);
    pthread_cond_destroy(&p->cv);
    pthread_mutex_destroy(&p->mu);
    free(p);
    return o;
}
