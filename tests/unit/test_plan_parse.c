/* Tests of the plan file reader: a file with every key and its values in
 * their units, the defaults of a minimal file, `measured:` references, a
 * table of value spellings, and a table of bad files, each of whose errors
 * must name the file, the line and column, and the key path. The files are
 * written to a fresh folder under /tmp. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tp/plan.h"
#include "tp_test.h"

static char dir[64];

#define EXACT(a, b) TP_NEAR_REL(a, b, 0)

static int setup(void **state)
{
    (void)state;
    return tp_test_mkdtemp(dir, sizeof dir, "tp_plan_parse");
}

static int teardown(void **state)
{
    (void)state;
    return tp_test_rmtree(dir);
}

/* Parse text as dir/plan.yaml; a failure prints the message. */
static void parse_ok(const char *text, struct tp_plan_spec *spec, char *path, size_t cap)
{
    tp_error err = {0};
    tp_test_write(dir, "plan.yaml", text, path, cap);
    int rc = tp_plan_parse(path, spec, &err);
    if (rc != 0)
        fail_msg("parse failed (%d): %s", rc, err.msg);
}

static const char full_plan[] =            /* every key, the units in several spellings */
    "# a plan with every key\n"            /*  1 */
    "workload:\n"                          /*  2 */
    "  name: llm-7b\n"                     /*  3 */
    "  unit: tokens\n"                     /*  4 */
    "  parameters: 7B\n"                   /*  5 */
    "  gradient_bytes_per_parameter: 4\n"  /*  6 */
    "  samples_per_gpu: 16\n"              /*  7 */
    "  compute_time: 850ms\n"              /*  8 */
    "  compute_cv: 3%\n"                   /*  9 */
    "  dataset_bytes_per_sample: 4K\n"     /* 10 */
    "  checkpoint_bytes: 98G\n"            /* 11 */
    "  train_samples: 1.5T\n"              /* 12 */
    "  overlap: 60%\n"                     /* 13 */
    "  spike:\n"                           /* 14 */
    "    duration: 20ms\n"                 /* 15 */
    "    probability: 1e-4\n"              /* 16 */
    "cluster:\n"                           /* 17 */
    "  nodes: 128\n"                       /* 18 */
    "  gpus_per_node: 8\n"                 /* 19 */
    "  intra_node:\n"                      /* 20 */
    "    latency: 2us\n"                   /* 21 */
    "    bandwidth: 450GB/s\n"             /* 22 */
    "  mtbf_per_node: 5y\n"                /* 23 */
    "  restart: 10m\n"                     /* 24 */
    "prices:\n"                            /* 25 */
    "  gpu_hour: $2.50\n"                  /* 26 */
    "  amortization: 4y\n"                 /* 27 */
    "  checkpoints_kept: 3\n"              /* 28 */
    "candidates:\n"                        /* 29 */
    "  - name: tcp-100g-nfs\n"             /* 30 */
    "    network:\n"                       /* 31 */
    "      kind: tcp\n"                    /* 32 */
    "      link: 100Gb/s\n"                /* 33 */
    "      nics_per_node: 2\n"             /* 34 */
    "      efficiency: 0.75\n"             /* 35 */
    "      latency: 20us\n"                /* 36 */
    "      bandwidth: 90GB/s\n"            /* 37 */
    "      topology: rail-optimized\n"     /* 38 */
    "      oversubscription: 2\n"          /* 39 */
    "      algorithm: hierarchical\n"      /* 40 */
    "      node_cost: 2500\n"              /* 41 */
    "    storage:\n"                       /* 42 */
    "      kind: nfs\n"                    /* 43 */
    "      write_bandwidth: 20GB/s\n"      /* 44 */
    "      read_bandwidth: 40 GiB/s\n"     /* 45 */
    "      commit_latency: 5ms\n"          /* 46 */
    "      tb_month: $30\n"                /* 47 */
    "      async_checkpoint: true\n"       /* 48 */
    "      snapshot_bandwidth: 12.5GB/s\n" /* 49 */
    "  - name: \"ib-400g\"\n"              /* 50 */
    "    network: {link: 400 Gbit/s, latency: 2us, algorithm: ring, topology: fat-tree}\n"
    "    storage: {write_bandwidth: 1.5TB/s, async_checkpoint: false}\n"
    "sweep:\n"
    "  gpus: [8, 64, 512, 1K]\n"
    "simulate:\n"
    "  steps: 5000\n"
    "  seed: 18446744073709551615\n";

static void full_file(void **state)
{
    (void)state;
    struct tp_plan_spec s;
    char path[128];
    parse_ok(full_plan, &s, path, sizeof path);
    TP_EQ_STR(s.file, path);
    const struct tp_plan_workload *w = &s.w;
    TP_EQ_STR(w->name, "llm-7b");
    TP_EQ_STR(w->unit, "tokens");
    EXACT(w->params, 7e9);
    EXACT(w->grad_bytes_per_param, 4);
    EXACT(w->samples_per_gpu, 16);
    EXACT(w->compute_s, 0.85);
    EXACT(w->compute_cv, 0.03);
    assert_null(w->compute_samples);
    EXACT(w->dataset_bytes_per_sample, 4096);
    EXACT(w->checkpoint_bytes, 98.0 * 1024 * 1024 * 1024);
    EXACT(w->train_samples, 1.5e12);
    EXACT(w->overlap, 0.6);
    EXACT(w->spike_s, 0.02);
    EXACT(w->spike_p, 1e-4);

    const struct tp_plan_cluster *c = &s.c;
    EXACT(c->nodes, 128);
    EXACT(c->gpus_per_node, 8);
    EXACT(c->intra_lat_s, 2e-6);
    EXACT(c->intra_bw_Bps, 450e9);
    EXACT(c->mtbf_node_s, 5 * 365 * 86400.0);
    EXACT(c->mtbf_job_s, 0);
    EXACT(c->restart_s, 600);

    EXACT(s.p.gpu_hour, 2.5);
    EXACT(s.p.amortization_s, 4 * 365 * 86400.0);
    EXACT(s.p.checkpoints_kept, 3);

    TP_EQ_INT(s.ncand, 2);
    const struct tp_plan_candidate *a = &s.cand[0], *b = &s.cand[1];
    TP_EQ_STR(a->name, "tcp-100g-nfs");
    TP_EQ_STR(a->net_kind, "tcp");
    EXACT(a->link_bps, 1e11);
    EXACT(a->nics_per_node, 2);
    EXACT(a->efficiency, 0.75);
    EXACT(a->net_lat_s, 20e-6);
    EXACT(a->net_bw_Bps, 9e10);
    TP_EQ_INT(a->topology, TP_PLAN_RAIL);
    EXACT(a->oversubscription, 2);
    TP_EQ_INT(a->algo, TP_PLAN_HIER);
    EXACT(a->node_cost, 2500);
    TP_EQ_STR(a->storage_kind, "nfs");
    EXACT(a->write_Bps, 2e10);
    EXACT(a->read_Bps, 40.0 * 1024 * 1024 * 1024);
    EXACT(a->commit_lat_s, 0.005);
    EXACT(a->tb_month, 30);
    assert_true(a->async_ckpt);
    EXACT(a->snapshot_Bps, 12.5e9);

    TP_EQ_STR(b->name, "ib-400g");
    TP_EQ_STR(b->net_kind, "");
    EXACT(b->link_bps, 4e11);
    EXACT(b->nics_per_node, 1);
    EXACT(b->net_bw_Bps, 0);
    TP_EQ_INT(b->algo, TP_PLAN_RING);
    TP_EQ_INT(b->topology, TP_PLAN_FAT_TREE);
    EXACT(b->write_Bps, 1.5e12);
    assert_false(b->async_ckpt);
    EXACT(b->snapshot_Bps, 25e9);

    TP_EQ_INT(s.nsweep, 4);
    EXACT(s.sweep_gpus[0], 8);
    EXACT(s.sweep_gpus[1], 64);
    EXACT(s.sweep_gpus[2], 512);
    EXACT(s.sweep_gpus[3], 1000);
    TP_EQ_INT(s.sim_steps, 5000);
    TP_EQ_U64(s.seed, UINT64_MAX);
    TP_EQ_INT(s.nrefs, 0);
    assert_null(s.refs);
    tp_plan_spec_free(&s);
}

static const char minimal_plan[] = "workload:\n"
                                   "  parameters: 1.3e9\n"
                                   "  samples_per_gpu: 4\n"
                                   "  compute_time: 0.5\n"
                                   "  train_samples: 1e6\n"
                                   "cluster:\n"
                                   "  nodes: 2\n"
                                   "  gpus_per_node: 4\n"
                                   "  mtbf_job: 1.5h\n"
                                   "prices:\n"
                                   "  gpu_hour: 2\n"
                                   "candidates:\n"
                                   "  - name: a\n"
                                   "    network: {bandwidth: 12GB/s, latency: 10us}\n"
                                   "    storage: {write_bandwidth: 1GB/s}\n";

static void defaults(void **state)
{
    (void)state;
    struct tp_plan_spec s;
    char path[128];
    parse_ok(minimal_plan, &s, path, sizeof path);
    TP_EQ_STR(s.w.name, "workload");
    TP_EQ_STR(s.w.unit, "samples");
    EXACT(s.w.params, 1.3e9);
    EXACT(s.w.grad_bytes_per_param, 2);
    EXACT(s.w.compute_s, 0.5);
    EXACT(s.w.compute_cv, 0.02);
    EXACT(s.w.dataset_bytes_per_sample, 0);
    EXACT(s.w.checkpoint_bytes, 14 * 1.3e9);
    EXACT(s.w.overlap, 0);
    EXACT(s.w.spike_s, 0);
    EXACT(s.w.spike_p, 0);
    EXACT(s.c.intra_lat_s, 3e-6);
    EXACT(s.c.intra_bw_Bps, 150e9);
    EXACT(s.c.mtbf_node_s, 0);
    EXACT(s.c.mtbf_job_s, 5400);
    EXACT(s.c.restart_s, 600);
    EXACT(s.p.gpu_hour, 2);
    EXACT(s.p.amortization_s, 3 * 365 * 86400.0);
    EXACT(s.p.checkpoints_kept, 2);
    TP_EQ_INT(s.ncand, 1);
    const struct tp_plan_candidate *a = &s.cand[0];
    TP_EQ_STR(a->net_kind, "");
    EXACT(a->link_bps, 0);
    EXACT(a->net_bw_Bps, 12e9);
    EXACT(a->nics_per_node, 1);
    EXACT(a->efficiency, 0.8);
    TP_EQ_INT(a->topology, TP_PLAN_FAT_TREE);
    EXACT(a->oversubscription, 1);
    TP_EQ_INT(a->algo, TP_PLAN_AUTO);
    EXACT(a->node_cost, 0);
    TP_EQ_STR(a->storage_kind, "");
    EXACT(a->read_Bps, 0);
    EXACT(a->commit_lat_s, 0);
    EXACT(a->tb_month, 0);
    assert_false(a->async_ckpt);
    EXACT(a->snapshot_Bps, 25e9);
    TP_EQ_INT(s.nsweep, 0);
    TP_EQ_INT(s.sim_steps, 1000);
    TP_EQ_U64(s.seed, 1);
    TP_EQ_INT(s.nrefs, 0);
    tp_plan_spec_free(&s);
    tp_plan_spec_free(&s); /* twice: harmless */
}

static const char measured_plan[] = "workload:\n"                                   /*  1 */
                                    "  parameters: 1e9\n"                           /*  2 */
                                    "  samples_per_gpu: 4\n"                        /*  3 */
                                    "  compute_time: {measured: runs/step.json}\n"  /*  4 */
                                    "  train_samples: 1e6\n"                        /*  5 */
                                    "cluster:\n"                                    /*  6 */
                                    "  nodes: 2\n"                                  /*  7 */
                                    "  gpus_per_node: 4\n"                          /*  8 */
                                    "  intra_node:\n"                               /*  9 */
                                    "    bandwidth:\n"                              /* 10 */
                                    "      measured: /abs/coll.json\n"              /* 11 */
                                    "  mtbf_job: 1.5h\n"                            /* 12 */
                                    "prices: {gpu_hour: 2}\n"                       /* 13 */
                                    "candidates:\n"                                 /* 14 */
                                    "  - name: a\n"                                 /* 15 */
                                    "    network: {link: 100Gb/s, latency: 10us}\n" /* 16 */
                                    "    storage: {write_bandwidth: 1GB/s}\n"       /* 17 */
                                    "  - name: b\n"                                 /* 18 */
                                    "    network: {latency: {measured: lat.json}, "
                                    "bandwidth: {measured: ../bw.json}}\n"         /* 19 */
                                    "    storage:\n"                               /* 20 */
                                    "      write_bandwidth: {measured: io.json}\n" /* 21 */
                                    "      commit_latency: {measured: io.json}\n"; /* 22 */

static void measured_refs(void **state)
{
    (void)state;
    struct tp_plan_spec s;
    char path[128];
    parse_ok(measured_plan, &s, path, sizeof path);
    static const struct {
        enum tp_plan_fig fig;
        int cand;
        const char *file; /* relative to the test folder, or absolute */
        const char *where;
    } want[] = {
        {TP_FIG_COMPUTE, -1, "runs/step.json", "4:17: workload.compute_time"},
        {TP_FIG_INTRA_BW, -1, "/abs/coll.json", "11:7: cluster.intra_node.bandwidth"},
        {TP_FIG_NET_LAT, 1, "lat.json", "19:24: candidates[1].network.latency"},
        {TP_FIG_NET_BW, 1, "../bw.json", "19:57: candidates[1].network.bandwidth"},
        {TP_FIG_WRITE_BW, 1, "io.json", "21:24: candidates[1].storage.write_bandwidth"},
        {TP_FIG_COMMIT_LAT, 1, "io.json", "22:23: candidates[1].storage.commit_latency"},
    };
    size_t n = sizeof want / sizeof want[0];
    TP_EQ_INT(s.nrefs, n);
    for (size_t i = 0; i < n; i++) {
        const struct tp_plan_ref *r = &s.refs[i];
        char file[256], where[256];
        if (want[i].file[0] == '/')
            snprintf(file, sizeof file, "%s", want[i].file);
        else
            snprintf(file, sizeof file, "%s/%s", dir, want[i].file);
        snprintf(where, sizeof where, "%s:%s", path, want[i].where);
        TP_EQ_INT(r->fig, want[i].fig);
        TP_EQ_INT(r->cand, want[i].cand);
        TP_EQ_STR(r->file, file);
        TP_EQ_STR(r->where, where);
    }
    assert_true(isnan(s.w.compute_s));
    assert_true(isnan(s.c.intra_bw_Bps));
    EXACT(s.c.intra_lat_s, 3e-6);
    assert_true(isnan(s.cand[1].net_lat_s));
    assert_true(isnan(s.cand[1].net_bw_Bps));
    assert_true(isnan(s.cand[1].write_Bps));
    assert_true(isnan(s.cand[1].commit_lat_s));
    EXACT(s.cand[1].read_Bps, 0);
    EXACT(s.cand[0].net_lat_s, 1e-5);
    tp_plan_spec_free(&s);
    TP_EQ_INT(s.nrefs, 0);
    assert_null(s.refs);
}

/* A plan file with one value in place of its slot's default. */
enum slot { DUR, LINK, RATE, COUNT, SIZE, FRAC, MONEY, LONG, SLOTS };

static void value_plan(char *out, size_t cap, enum slot slot, const char *text)
{
    const char *v[SLOTS] = {"1s", "100Gb/s", "1GB/s", "1e9", "1G", "0", "1", "1h"};
    v[slot] = text;
    snprintf(out, cap,
             "workload:\n"
             "  compute_time: %s\n"
             "  parameters: %s\n"
             "  checkpoint_bytes: %s\n"
             "  overlap: %s\n"
             "  samples_per_gpu: 1\n"
             "  train_samples: 1e6\n"
             "cluster: {nodes: 1, gpus_per_node: 1, mtbf_job: %s}\n"
             "prices: {gpu_hour: %s}\n"
             "candidates:\n"
             "  - name: a\n"
             "    network: {link: %s, latency: 1us}\n"
             "    storage: {write_bandwidth: %s}\n",
             v[DUR], v[COUNT], v[SIZE], v[FRAC], v[LONG], v[MONEY], v[LINK], v[RATE]);
}

static double slot_value(const struct tp_plan_spec *s, enum slot slot)
{
    switch (slot) {
    case DUR: return s->w.compute_s;
    case LINK: return s->cand[0].link_bps;
    case RATE: return s->cand[0].write_Bps;
    case COUNT: return s->w.params;
    case SIZE: return s->w.checkpoint_bytes;
    case FRAC: return s->w.overlap;
    case MONEY: return s->p.gpu_hour;
    case LONG: return s->c.mtbf_job_s;
    default: return NAN;
    }
}

static void value_spellings(void **state)
{
    (void)state;
    static const struct {
        enum slot slot;
        const char *text;
        double want;
    } rows[] = {
        {DUR, "850ms", 0.85},
        {DUR, "1.5h", 5400},
        {DUR, "20us", 20e-6},
        {DUR, "100ns", 100e-9},
        {DUR, "2m", 120},
        {DUR, "1d", 86400},
        {LONG, "3y", 3 * 365 * 86400.0},
        {LONG, "2w", 14 * 86400.0},
        {LONG, "1y2w", (365 + 14) * 86400.0},
        {DUR, "1h30m", 5400},
        {DUR, "2h15m30s", 8130},
        {DUR, "1m30s", 90},
        {DUR, "15min", 900},
        {DUR, "500\xc2\xb5s", 500e-6},
        {DUR, "250ms", 0.25},
        {DUR, "7", 7},
        {DUR, "2.5 s", 2.5},
        {DUR, "1e-3", 1e-3},
        {DUR, "90min", 5400},
        {LINK, "100Gb/s", 1e11},
        {LINK, "400 Gbit/s", 4e11},
        {LINK, "12.5GB/s", 1e11},
        {LINK, "10Mbit/s", 1e7},
        {LINK, "1.6Tb/s", 1.6e12},
        {RATE, "20GB/s", 2e10},
        {RATE, "1GiB/s", 0x1p30},
        {RATE, "100Gb/s", 1.25e10},
        {RATE, "5e9", 5e9},
        {RATE, "512MiB/s", 0x1p29},
        {RATE, "3TB/s", 3e12},
        {RATE, "800KB/s", 8e5},
        {RATE, "100B/s", 100},
        {RATE, "90 GB/s", 9e10},
        {COUNT, "7B", 7e9},
        {COUNT, "1.3e9", 1.3e9},
        {COUNT, "70G", 7e10},
        {COUNT, "1.5T", 1.5e12},
        {COUNT, "125M", 1.25e8},
        {COUNT, "10K", 1e4},
        {SIZE, "98G", 98 * 0x1p30},
        {SIZE, "4K", 4096},
        {SIZE, "1.5T", 1.5 * 0x1p40},
        {SIZE, "1e12", 1e12},
        {SIZE, "2GiB", 0x1p31},
        {SIZE, "512 MiB", 0x1p29},
        {SIZE, "1.5G", 1.5 * 0x1p30},
        {SIZE, "0.5MiB", 0x1p19},
        {FRAC, "60%", 0.6},
        {FRAC, "0.25", 0.25},
        {FRAC, "100%", 1},
        {FRAC, "0", 0},
        {MONEY, "$2.50", 2.5},
        {MONEY, "0.9", 0.9},
        {MONEY, "0", 0},
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        char text[1024], path[128];
        struct tp_plan_spec s;
        tp_error err = {0};
        value_plan(text, sizeof text, rows[i].slot, rows[i].text);
        tp_test_write(dir, "plan.yaml", text, path, sizeof path);
        int rc = tp_plan_parse(path, &s, &err);
        if (rc != 0)
            fail_msg("'%s': parse failed (%d): %s", rows[i].text, rc, err.msg);
        double got = slot_value(&s, rows[i].slot);
        if (got != rows[i].want)
            fail_msg("'%s' = %.17g, expected %.17g", rows[i].text, got, rows[i].want);
        tp_plan_spec_free(&s);
    }
}

/* ---- bad files ---- */

#define CAND_A                                                                                     \
    "  - name: a\n"                                                                                \
    "    network: {link: 100Gb/s, latency: 10us}\n"                                                \
    "    storage: {write_bandwidth: 1GB/s}\n"

struct bad {
    const char *name;
    const char *yaml;  /* NULL: the file does not exist */
    const char *where; /* "LINE:COL", "" for no position */
    const char *path;  /* key path, or "YAML syntax error", or "" */
    const char *says;  /* a phrase the message must hold */
};

static char too_many[4096];

static const struct bad bads[] = {
    {"yaml syntax error", "workload:\n  name: x\n  unit: [a, b\ncluster:\n  nodes: 1\n", "5:3",
     "YAML syntax error", "flow sequence"},
    {"unknown key with did-you-mean", "workload:\n  name: x\n  compute_tme: 1s\n", "3:3",
     "workload.compute_tme", "unknown key (did you mean compute_time? known: name, unit, "},
    {"unknown key, no close match", "cluster:\n  colour: blue\n", "2:3", "cluster.colour",
     "unknown key (known: nodes, gpus_per_node, intra_node, mtbf_per_node, mtbf_job, restart)"},
    {"unknown top-level key", "workloads:\n  name: x\n", "1:1", "workloads",
     "did you mean workload?"},
    {"unknown key deep in candidates[1]",
     "candidates:\n" CAND_A "  - name: b\n    network:\n      latnecy: 1us\n", "7:7",
     "candidates[1].network.latnecy", "did you mean latency?"},
    {"duplicate key", "cluster:\n  nodes: 2\n  gpus_per_node: 8\n  nodes: 3\n", "4:3",
     "cluster.nodes", "duplicate key (first at line 2, column 3)"},
    {"zero nodes", "cluster:\n  nodes: 0\n", "2:10", "cluster.nodes",
     "'0' must be at least 1 and at most 1000000 nodes"},
    {"nodes overflowing 64 bits", "cluster:\n  nodes: 99999999999999999999\n", "2:10",
     "cluster.nodes", "'99999999999999999999' must be at least 1 and at most 1000000 nodes"},
    {"parameters 1e308", "workload:\n  parameters: 1e308\n", "2:15", "workload.parameters",
     "'1e308' must be between 1 and 1e15 (1000T) parameters"},
    {"oversubscription 1e300", "candidates:\n  - name: a\n    network: {oversubscription: 1e300}\n",
     "3:33", "candidates[0].network.oversubscription", "'1e300' must be between 1 and 1000"},
    {"a tiny write bandwidth", "candidates:\n  - name: a\n    storage: {write_bandwidth: 1e-300}\n",
     "3:32", "candidates[0].storage.write_bandwidth",
     "'1e-300' must be between 1B/s and 1PB/s"},
    {"a tiny read bandwidth", "candidates:\n  - name: a\n    storage: {write_bandwidth: 1GB/s, read_bandwidth: 0.5B/s}\n",
     "3:55", "candidates[0].storage.read_bandwidth", "'0.5B/s' must be 0 (unlimited) or between"},
    {"mtbf of a second", "cluster:\n  mtbf_per_node: 1s\n", "2:18", "cluster.mtbf_per_node",
     "'1s' must be between 1 min and 1000 y"},
    {"a compound duration out of order", "cluster:\n  restart: 30m1h\n", "2:12",
     "cluster.restart", "cannot parse '30m1h' as a duration"},
    {"a sweep beyond the largest cluster", "sweep:\n  gpus: [8, 2000000000]\n", "2:13",
     "sweep.gpus[1]", "'2000000000' must be between 1 and 1024000000 GPUs"},
    {"a seed of 20 digits", "simulate:\n  seed: 99999999999999999999\n", "2:9", "simulate.seed",
     "'99999999999999999999' is too large (at most 18446744073709551615)"},
    {"negative bandwidth",
     "candidates:\n  - name: a\n    network: {link: 1Gb/s, latency: 1us}\n"
     "    storage:\n      write_bandwidth: -5GB/s\n",
     "5:24", "candidates[0].storage.write_bandwidth", "'-5GB/s' must be between 1B/s and 1PB/s"},
    {"overlap 1.5", "workload:\n  overlap: 1.5\n", "2:12", "workload.overlap",
     "'1.5' must be between 0 and 1"},
    {"efficiency 0", "candidates:\n  - name: a\n    network: {efficiency: 0}\n", "3:27",
     "candidates[0].network.efficiency", "must be above 0"},
    {"bad unit", "candidates:\n  - name: a\n    network:\n      latency: 20 parsecs\n", "4:16",
     "candidates[0].network.latency",
     "cannot parse '20 parsecs' as a duration (use e.g. 20us, 5ms, 2h, 1h30m, 3y)"},
    {"ambiguous size", "workload:\n  checkpoint_bytes: 98GB\n", "2:21", "workload.checkpoint_bytes",
     "cannot parse '98GB' as a size"},
    {"link without a unit", "candidates:\n  - name: a\n    network: {link: 100}\n", "3:21",
     "candidates[0].network.link", "cannot parse '100' as a rate with its unit"},
    {"unknown rate unit", "cluster:\n  intra_node: {bandwidth: 5 furlongs}\n", "2:27",
     "cluster.intra_node.bandwidth", "cannot parse '5 furlongs' as a rate"},
    {"unknown algorithm", "candidates:\n  - name: a\n    network: {algorithm: butterfly}\n", "3:26",
     "candidates[0].network.algorithm",
     "unknown value 'butterfly' (use one of: auto, ring, tree, hierarchical)"},
    {"unknown topology", "candidates:\n  - name: a\n    network:\n      topology: torus\n", "4:17",
     "candidates[0].network.topology",
     "unknown value 'torus' (use one of: fat-tree, rail-optimised)"},
    {"unknown unit label", "workload:\n  unit: words\n", "2:9", "workload.unit",
     "unknown value 'words' (use one of: samples, tokens)"},
    {"duplicate candidate name", "candidates:\n" CAND_A CAND_A, "5:11", "candidates[1].name",
     "duplicate candidate name 'a' (also candidates[0])"},
    {"missing required key",
     "# a plan\n\nworkload:\n  parameters: 7e9\n  compute_time: 1s\n  train_samples: 1T\n", "3:1",
     "workload.samples_per_gpu", "required"},
    {"missing required mapping",
     "workload:\n  parameters: 7e9\n  compute_time: 1s\n"
     "  train_samples: 1T\n  samples_per_gpu: 1\n",
     "1:1", "cluster", "required"},
    {"missing network", "candidates:\n  - name: a\n    storage: {write_bandwidth: 1GB/s}\n", "2:5",
     "candidates[0].network", "required"},
    {"neither link nor bandwidth", "candidates:\n  - name: a\n    network: {latency: 1us}\n", "3:5",
     "candidates[0].network.link", "required (or bandwidth"},
    {"both mtbf keys",
     "cluster:\n  nodes: 2\n  gpus_per_node: 1\n  mtbf_per_node: 5y\n  mtbf_job: 1h\n", "5:3",
     "cluster.mtbf_job", "not both"},
    {"neither mtbf key", "cluster:\n  nodes: 2\n  gpus_per_node: 1\n", "1:1",
     "cluster.mtbf_per_node", "required (or mtbf_job"},
    {"spike without probability", "workload:\n  spike:\n    duration: 1s\n", "2:3",
     "workload.spike.probability", "required"},
    {"sweep not ascending", "sweep:\n  gpus: [8, 64, 32]\n", "2:17", "sweep.gpus[2]",
     "32 does not come after 64"},
    {"sweep of a fraction", "sweep:\n  gpus:\n    - 8\n    - 12.5\n", "4:7", "sweep.gpus[1]",
     "'12.5' is not a whole number"},
    {"measured on a key that does not allow it", "workload:\n  overlap: {measured: x.json}\n",
     "2:12", "workload.overlap", "cannot be {measured: FILE} (only compute_time, "},
    {"error after a measured reference", /* the reference is freed all the same */
     "workload:\n  compute_time: {measured: a.json}\n  overlap: 2\n", "3:12", "workload.overlap",
     "'2' must be between 0 and 1"},
    {"measured with an extra key", "workload:\n  compute_time: {measured: x.json, scale: 2}\n",
     "2:36", "workload.compute_time.scale", "unknown key in a measured reference"},
    {"measured without a file", "workload:\n  compute_time: {measured: }\n", "2:18",
     "workload.compute_time.measured", "expected the path of a result file, found nothing"},
    {"sequence where a scalar is expected", "workload:\n  name: [a, b]\n", "2:9", "workload.name",
     "expected a string, e.g. llm-7b, found a sequence"},
    {"scalar where a mapping is expected", "workload: 5\n", "1:11", "workload",
     "expected a mapping, found a scalar"},
    {"candidates as a mapping", "candidates:\n  a: 1\n", "2:3", "candidates",
     "expected a sequence of candidates"},
    {"a value missing", "cluster:\n  nodes:\n", "2:3", "cluster.nodes",
     "needs a value (a whole number"},
    {"non-integer gpus_per_node", "cluster:\n  nodes: 1\n  gpus_per_node: 8.5\n", "3:18",
     "cluster.gpus_per_node", "'8.5' is not a whole number"},
    {"steps out of range", "simulate:\n  steps: 2e7\n", "2:10", "simulate.steps",
     "must be between 1 and 10000000"},
    {"seed not an integer", "simulate:\n  seed: -1\n", "2:9", "simulate.seed",
     "cannot parse '-1' as an unsigned integer"},
    {"bool misspelt", "candidates:\n  - name: a\n    storage: {async_checkpoint: yes}\n", "3:33",
     "candidates[0].storage.async_checkpoint", "cannot parse 'yes' as a boolean"},
    {"name too long",
     "candidates:\n  - name: "
     "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\n",
     "2:11", "candidates[0].name", "is too long (at most 63 characters)"},
    {"too many candidates", too_many, "50:5", "candidates[16]", "too many candidates (at most 16)"},
    {"an alias", "workload:\n  name: &n x\n  unit: *n\n", "3:9", "workload.unit",
     "found an alias (YAML aliases are not supported"},
    {"two documents", "workload: {}\n---\nworkload: {}\n", "2:1", "", "a second YAML document"},
    {"top level a sequence", "- workload\n", "1:1", "top level", "expected a mapping"},
    {"empty file", "", "1:1", "", "empty document"},
    {"only comments", "# nothing yet\n", "1:1", "", "empty document"},
    {"missing file", NULL, "", "", "No such file or directory"},
};

static void bad_input(void **state)
{
    const struct bad *b = *state;
    char path[128], at[256];
    if (b->yaml)
        tp_test_write(dir, "plan.yaml", b->yaml, path, sizeof path);
    else
        snprintf(path, sizeof path, "%s/no-such-plan.yaml", dir);
    struct tp_plan_spec s;
    tp_error err = {0};
    int rc = tp_plan_parse(path, &s, &err);
    tp_plan_spec_free(&s);
    if (rc != TP_EUSAGE || err.code != TP_EUSAGE)
        fail_msg("%s: rc %d, code %d, expected TP_EUSAGE (%d); message: %s", b->name, rc, err.code,
                 TP_EUSAGE, err.msg);
    TP_EXPECT_ERR(b->name, err.msg, path, tp_test_err_at(at, sizeof at, b->where, b->path),
                  b->says);
}

static void names(void **state)
{
    (void)state;
    TP_EQ_STR(tp_plan_algo_name(TP_PLAN_AUTO), "auto");
    TP_EQ_STR(tp_plan_algo_name(TP_PLAN_RING), "ring");
    TP_EQ_STR(tp_plan_algo_name(TP_PLAN_TREE), "tree");
    TP_EQ_STR(tp_plan_algo_name(TP_PLAN_HIER), "hierarchical");
    TP_EQ_STR(tp_plan_topo_name(TP_PLAN_FAT_TREE), "fat-tree");
    TP_EQ_STR(tp_plan_topo_name(TP_PLAN_RAIL), "rail-optimised");
    struct tp_plan_spec s;
    memset(&s, 0, sizeof s);
    tp_plan_spec_free(&s); /* a zeroed spec */
}

#define NBAD (sizeof bads / sizeof bads[0])

int main(void)
{
    /* 17 candidates: one past the limit; the 17th starts on line 2 + 16 * 3 */
    size_t len = (size_t)snprintf(too_many, sizeof too_many, "candidates:\n");
    for (int i = 0; i <= TP_PLAN_MAX_CAND; i++)
        len += (size_t)snprintf(too_many + len, sizeof too_many - len,
                                "  - name: c%d\n    network: {link: 1Gb/s, latency: 1us}\n"
                                "    storage: {write_bandwidth: 1GB/s}\n",
                                i);
    struct CMUnitTest tests[5 + NBAD] = {
        cmocka_unit_test(full_file),     cmocka_unit_test(defaults),
        cmocka_unit_test(measured_refs), cmocka_unit_test(value_spellings),
        cmocka_unit_test(names),
    };
    for (size_t i = 0; i < NBAD; i++) {
        tests[5 + i] = (struct CMUnitTest)cmocka_unit_test_prestate(bad_input, (void *)&bads[i]);
        tests[5 + i].name = bads[i].name;
    }
    return cmocka_run_group_tests(tests, setup, teardown);
}
