/* trainpath io: the storage path. Workloads (checkpoint, dataset, commit)
 * and path identification (info). Every option is checked before anything
 * is written; the result document is written even when the run fails. */
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "tp/blkpath.h"
#include "tp/io.h"
#include "tp/json.h"
#include "tp/log.h"
#include "tp/result.h"
#include "tp/units.h"

static void usage(FILE *f)
{
    fprintf(f,
            "usage: trainpath io checkpoint DIR [--size SIZE] [--shards K] [--repeat R] [--verify]\n"
            "       trainpath io dataset DIR [--records N] [--record-size SIZE] [--files F]\n"
            "                                [--epochs E] [--during checkpoint]\n"
            "       trainpath io commit DIR [--write-size SIZE] [--count N] [--sync MODE]\n"
            "       trainpath io info PATH [--sysfs-root DIR] [--mountinfo FILE]\n"
            "\n"
            "checkpoint  write SIZE as K shard files, then commit: fdatasync every shard,\n"
            "            metadata to a temporary file, fsync, rename, fsync the folder.\n"
            "            Commit latency (first write to folder fsync) and its phases.\n"
            "      --size SIZE        bytes per checkpoint (default 1G)\n"
            "      --shards K         shard files (default 8)\n"
            "      --repeat R         checkpoints (default 3)\n"
            "      --verify           read each checkpoint back and check its checksums\n"
            "      --keep             leave the checkpoints in DIR/trainpath-ckpt\n"
            "dataset     N records in F files, every record read once per epoch in a seeded\n"
            "            shuffled order: samples/s, per-read latency, epoch time.\n"
            "      --records N        (default 65536)\n"
            "      --record-size SIZE (default 4K)\n"
            "      --files F          (default 16)\n"
            "      --epochs E         (default 2)\n"
            "      --verify           check every byte of every record (the header always)\n"
            "      --during checkpoint  then read again while one checkpoint of --size and\n"
            "                         --shards is written: how much the read p99 degrades\n"
            "commit      small writes each made durable: the latency of one commit.\n"
            "      --write-size SIZE  (default 4K)\n"
            "      --count N          commits per job (default 1000)\n"
            "      --time DUR         stop after DUR (with --count as a cap)\n"
            "      --sync MODE        fdatasync (default), fsync, or dsync (O_DSYNC writes)\n"
            "      --overwrite        lay the file out first, then overwrite it (as fio does);\n"
            "                         the default appends, as a log does\n"
            "info        the storage behind PATH: filesystem, block devices, NVMe controller,\n"
            "            NVMe-oF transport, address, subsystem NQN, state, queues.\n"
            "\n"
            "Common options:\n"
            "      --device DEV       a raw block device instead of DIR: its data is destroyed;\n"
            "                         needs --destroy-data; refused when mounted or holding a\n"
            "                         partition table or filesystem\n"
            "      --engine E         auto (default: io_uring, else psync), io_uring, psync\n"
            "      --qd N             requests in flight per job (default: checkpoint 8,\n"
            "                         dataset 32)\n"
            "      --jobs N           threads (default 1)\n"
            "      --bs SIZE          block size of large writes (default 1M)\n"
            "      --batch N          submit requests N at a time (default 1: each as soon as\n"
            "                         it is queued, as fio does; 0: a whole queue at once)\n"
            "      --direct           O_DIRECT (alignment from statx, else the logical block)\n"
            "      --drop-cache       drop the files' cached pages before reading them\n"
            "      --force            write even when SIZE exceeds the free space\n"
            "      --seed N           data and shuffle seed (default 1)\n"
            "      --timeout DUR      fail when no I/O completes for DUR (default 10m)\n"
            "      --sysfs-root DIR   read /sys from a snapshot (tests, offline audits)\n"
            "      --json FILE        write the result document (atomically; - for stdout)\n"
            "  -q, --quiet            no table\n");
}

enum {
    OPT_SIZE = 256, OPT_SHARDS, OPT_REPEAT, OPT_VERIFY, OPT_KEEP, OPT_RECORDS, OPT_RECSIZE,
    OPT_FILES, OPT_EPOCHS, OPT_DURING, OPT_WSIZE, OPT_COUNT, OPT_TIME, OPT_SYNC, OPT_OVERWRITE,
    OPT_DEVICE, OPT_DESTROY, OPT_ENGINE, OPT_QD, OPT_JOBS, OPT_BS, OPT_DIRECT, OPT_DROP,
    OPT_FORCE, OPT_SEED, OPT_BATCH, OPT_TIMEOUT, OPT_SYSFS, OPT_MOUNTINFO, OPT_JSON,
};

static const struct option long_opts[] = {
    {"size", required_argument, NULL, OPT_SIZE},
    {"shards", required_argument, NULL, OPT_SHARDS},
    {"repeat", required_argument, NULL, OPT_REPEAT},
    {"verify", no_argument, NULL, OPT_VERIFY},
    {"keep", no_argument, NULL, OPT_KEEP},
    {"records", required_argument, NULL, OPT_RECORDS},
    {"record-size", required_argument, NULL, OPT_RECSIZE},
    {"files", required_argument, NULL, OPT_FILES},
    {"epochs", required_argument, NULL, OPT_EPOCHS},
    {"during", required_argument, NULL, OPT_DURING},
    {"write-size", required_argument, NULL, OPT_WSIZE},
    {"count", required_argument, NULL, OPT_COUNT},
    {"time", required_argument, NULL, OPT_TIME},
    {"sync", required_argument, NULL, OPT_SYNC},
    {"overwrite", no_argument, NULL, OPT_OVERWRITE},
    {"device", required_argument, NULL, OPT_DEVICE},
    {"destroy-data", no_argument, NULL, OPT_DESTROY},
    {"engine", required_argument, NULL, OPT_ENGINE},
    {"qd", required_argument, NULL, OPT_QD},
    {"jobs", required_argument, NULL, OPT_JOBS},
    {"bs", required_argument, NULL, OPT_BS},
    {"batch", required_argument, NULL, OPT_BATCH},
    {"direct", no_argument, NULL, OPT_DIRECT},
    {"drop-cache", no_argument, NULL, OPT_DROP},
    {"force", no_argument, NULL, OPT_FORCE},
    {"seed", required_argument, NULL, OPT_SEED},
    {"timeout", required_argument, NULL, OPT_TIMEOUT},
    {"sysfs-root", required_argument, NULL, OPT_SYSFS},
    {"mountinfo", required_argument, NULL, OPT_MOUNTINFO},
    {"json", required_argument, NULL, OPT_JSON},
    {"quiet", no_argument, NULL, 'q'},
    {"help", no_argument, NULL, 'h'},
    {NULL, 0, NULL, 0},
};

enum sub { SUB_CHECKPOINT, SUB_DATASET, SUB_COMMIT, SUB_INFO };
static const char *const sub_names[] = {"checkpoint", "dataset", "commit", "info"};

struct parsed {
    enum sub sub;
    struct tp_io_common c;
    struct tp_ckpt_opts ck;
    struct tp_dataset_opts ds;
    struct tp_commit_opts cm;
    const char *path, *json, *mountinfo;
    bool quiet, have_qd;
    uint64_t seen; /* bit per option given, to refuse those of another workload */
};

/* The workloads an option applies to, as a bit mask of 1 << enum sub
 * (dataset takes the checkpoint's size and shards for --during). */
static unsigned owners(int opt)
{
    const unsigned ck = 1u << SUB_CHECKPOINT, ds = 1u << SUB_DATASET, cm = 1u << SUB_COMMIT,
                   in = 1u << SUB_INFO;
    switch (opt) {
    case OPT_SIZE: case OPT_SHARDS: return ck | ds;
    case OPT_REPEAT: case OPT_KEEP: return ck;
    case OPT_VERIFY: return ck | ds;
    case OPT_RECORDS: case OPT_RECSIZE: case OPT_FILES: case OPT_EPOCHS: case OPT_DURING:
        return ds;
    case OPT_WSIZE: case OPT_COUNT: case OPT_TIME: case OPT_SYNC: case OPT_OVERWRITE: return cm;
    case OPT_MOUNTINFO: return in;
    case OPT_SYSFS: case OPT_JSON: case 'q': case 'h': case ':': case '?': return ck | ds | cm | in;
    default: return ck | ds | cm; /* the engine and target options */
    }
}

static const char *opt_name(int opt)
{
    for (const struct option *o = long_opts; o->name; o++)
        if (o->val == opt)
            return o->name;
    return "?";
}

static int parse(int argc, char **argv, struct parsed *p, tp_error *err)
{
    if (argc < 2 || strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
        usage(argc < 2 ? stderr : stdout);
        return argc < 2 ? tp_error_set(err, TP_EUSAGE, "io: which workload? checkpoint, dataset, "
                                                       "commit or info")
                        : 1;
    }
    unsigned s;
    for (s = 0; s < 4; s++)
        if (strcmp(argv[1], sub_names[s]) == 0)
            break;
    if (s == 4)
        return tp_error_set(err, TP_EUSAGE, "io %s: unknown workload (checkpoint, dataset, "
                                            "commit, info)", argv[1]);
    p->sub = (enum sub)s;
    argc--;
    argv++;
    struct tp_io_common *c = &p->c;
    uint64_t v;
    int rc = 0, opt;
    opterr = 0;
    optind = 1;
    while (rc == 0 && (opt = getopt_long(argc, argv, ":qh", long_opts, NULL)) != -1) {
        if (!(owners(opt) & (1u << p->sub)))
            return tp_error_set(err, TP_EUSAGE, "--%s: not an option of io %s", opt_name(opt),
                                sub_names[p->sub]);
        switch (opt) {
        case OPT_SIZE: rc = tp_parse_size(optarg, "--size", &p->ck.size, err); break;
        case OPT_SHARDS:
            rc = tp_parse_u64(optarg, "--shards", 1, 4096, &v, err);
            p->ck.shards = (unsigned)v;
            break;
        case OPT_REPEAT:
            rc = tp_parse_u64(optarg, "--repeat", 1, 100000, &v, err);
            p->ck.repeat = (unsigned)v;
            break;
        case OPT_VERIFY: p->ck.verify = p->ds.verify = true; break;
        case OPT_KEEP: p->ck.keep = true; break;
        case OPT_RECORDS:
            rc = tp_parse_u64(optarg, "--records", 1, UINT32_MAX - 1, &p->ds.records, err);
            break;
        case OPT_RECSIZE: rc = tp_parse_size(optarg, "--record-size", &p->ds.record_size, err); break;
        case OPT_FILES:
            rc = tp_parse_u64(optarg, "--files", 1, 4096, &v, err);
            p->ds.files = (unsigned)v;
            break;
        case OPT_EPOCHS:
            rc = tp_parse_u64(optarg, "--epochs", 1, 100000, &v, err);
            p->ds.epochs = (unsigned)v;
            break;
        case OPT_DURING:
            if (strcmp(optarg, "checkpoint") != 0)
                rc = tp_error_set(err, TP_EUSAGE, "--during %s: only 'checkpoint'", optarg);
            p->ds.during_ckpt = true;
            break;
        case OPT_WSIZE: rc = tp_parse_size(optarg, "--write-size", &p->cm.write_size, err); break;
        case OPT_COUNT: rc = tp_parse_u64(optarg, "--count", 1, 1u << 30, &p->cm.count, err); break;
        case OPT_TIME: rc = tp_parse_duration(optarg, "--time", &p->cm.time_ns, err); break;
        case OPT_SYNC:
            if (strcmp(optarg, "fdatasync") && strcmp(optarg, "fsync") && strcmp(optarg, "dsync"))
                rc = tp_error_set(err, TP_EUSAGE, "--sync %s: fdatasync, fsync or dsync", optarg);
            p->cm.sync = optarg;
            break;
        case OPT_OVERWRITE: p->cm.overwrite = true; break;
        case OPT_DEVICE: c->target.device = optarg; break;
        case OPT_DESTROY: c->target.destroy_data = true; break;
        case OPT_ENGINE:
            if (strcmp(optarg, "auto") && strcmp(optarg, "io_uring") && strcmp(optarg, "psync"))
                rc = tp_error_set(err, TP_EUSAGE, "--engine %s: auto, io_uring or psync", optarg);
            c->engine = optarg;
            break;
        case OPT_QD:
            rc = tp_parse_u64(optarg, "--qd", 1, 4096, &v, err);
            c->qd = (unsigned)v;
            p->have_qd = true;
            break;
        case OPT_JOBS:
            rc = tp_parse_u64(optarg, "--jobs", 1, 256, &v, err);
            c->jobs = (unsigned)v;
            break;
        case OPT_BS:
            rc = tp_parse_size(optarg, "--bs", &c->bs, err);
            if (rc == 0 && c->bs > (1u << 30))
                rc = tp_error_set(err, TP_EUSAGE, "--bs %s: at most 1G", optarg);
            break;
        case OPT_BATCH:
            rc = tp_parse_u64(optarg, "--batch", 0, 4096, &v, err);
            c->batch = (unsigned)v;
            break;
        case OPT_DIRECT: c->direct = c->target.direct = true; break;
        case OPT_DROP: c->drop_cache = true; break;
        case OPT_FORCE: c->force = true; break;
        case OPT_SEED: rc = tp_parse_u64(optarg, "--seed", 0, INT64_MAX, &c->seed, err); break;
        case OPT_TIMEOUT: rc = tp_parse_duration(optarg, "--timeout", &c->timeout_ns, err); break;
        case OPT_SYSFS: c->sysfs_root = optarg; break;
        case OPT_MOUNTINFO: p->mountinfo = optarg; break;
        case OPT_JSON: p->json = optarg; break;
        case 'q': p->quiet = true; break;
        case 'h': usage(stdout); return 1;
        case ':':
            return tp_error_set(err, TP_EUSAGE, "%s: needs a value", argv[optind - 1]);
        default:
            return tp_error_set(err, TP_EUSAGE, "%s: unknown option (see trainpath io --help)",
                                argv[optind - 1]);
        }
    }
    if (rc)
        return rc;
    if (optind < argc)
        p->path = argv[optind++];
    if (optind < argc)
        return tp_error_set(err, TP_EUSAGE, "%s: unexpected argument", argv[optind]);
    if (p->sub == SUB_INFO) {
        if (!p->path)
            return tp_error_set(err, TP_EUSAGE, "io info: which PATH?");
        return 0;
    }
    if (p->path && c->target.device)
        return tp_error_set(err, TP_EUSAGE, "give DIR or --device %s, not both", c->target.device);
    if (!p->path && !c->target.device)
        return tp_error_set(err, TP_EUSAGE, "io %s: which DIR (or --device)?", sub_names[p->sub]);
    if (c->target.destroy_data && !c->target.device)
        return tp_error_set(err, TP_EUSAGE, "--destroy-data: only with --device");
    if (p->ds.during_ckpt && c->target.device)
        return tp_error_set(err, TP_EUSAGE, "--during checkpoint: needs a folder, not --device");
    c->target.dir = p->path;
    c->target.sysfs_root = c->sysfs_root;
    if (!p->have_qd)
        c->qd = p->sub == SUB_DATASET ? 32 : 8;
    return 0;
}

static json_t *config_json(const struct parsed *p)
{
    const struct tp_io_common *c = &p->c;
    json_t *j = json_pack("{s:s, s:s?, s:s?, s:s, s:I, s:I, s:I, s:I, s:b, s:b, s:b, s:I, s:I}",
                          "workload", sub_names[p->sub], "dir", c->target.dir, "device",
                          c->target.device, "engine", c->engine ? c->engine : "auto", "qd",
                          (json_int_t)c->qd, "jobs", (json_int_t)c->jobs, "bs_bytes",
                          (json_int_t)c->bs, "batch", (json_int_t)c->batch, "direct", c->direct, "drop_cache", c->drop_cache,
                          "force", c->force, "seed", (json_int_t)c->seed, "timeout_ns",
                          (json_int_t)c->timeout_ns);
    switch (p->sub) {
    case SUB_CHECKPOINT:
        json_object_update_new(j, json_pack("{s:I, s:I, s:I, s:b, s:b}", "size_bytes",
                                            (json_int_t)p->ck.size, "shards",
                                            (json_int_t)p->ck.shards, "repeat",
                                            (json_int_t)p->ck.repeat, "verify", p->ck.verify,
                                            "keep", p->ck.keep));
        break;
    case SUB_DATASET:
        json_object_update_new(
            j, json_pack("{s:I, s:I, s:I, s:I, s:b, s:s?}", "records", (json_int_t)p->ds.records,
                         "record_size", (json_int_t)p->ds.record_size, "files",
                         (json_int_t)p->ds.files, "epochs", (json_int_t)p->ds.epochs, "verify",
                         p->ds.verify, "during", p->ds.during_ckpt ? "checkpoint" : NULL));
        if (p->ds.during_ckpt)
            json_object_update_new(j, json_pack("{s:I, s:I}", "checkpoint_size_bytes",
                                                (json_int_t)p->ck.size, "checkpoint_shards",
                                                (json_int_t)p->ck.shards));
        break;
    case SUB_COMMIT:
        json_object_update_new(j, json_pack("{s:I, s:I, s:I, s:s, s:s}", "write_size",
                                            (json_int_t)p->cm.write_size, "count",
                                            (json_int_t)p->cm.count, "time_ns",
                                            (json_int_t)p->cm.time_ns, "sync",
                                            p->cm.sync ? p->cm.sync : "fdatasync", "mode",
                                            p->cm.overwrite ? "overwrite" : "append"));
        break;
    default: break;
    }
    return j;
}

static void print_lat_row(const char *what, json_t *st)
{
    char a[16], b[16], c[16], d[16], e[16];
    printf("  %-18s p50 %9s  p99 %9s  p99.9 %9s  max %9s  mean %9s  (%lld)\n", what,
           tp_fmt_ns(tp_json_num_or(st, "p50", 0), a, sizeof a), tp_fmt_ns(tp_json_num_or(st, "p99", 0), b, sizeof b),
           tp_fmt_ns(tp_json_num_or(st, "p99_9", 0), c, sizeof c), tp_fmt_ns(tp_json_num_or(st, "max", 0), d, sizeof d),
           tp_fmt_ns(tp_json_num_or(st, "mean", 0), e, sizeof e),
           (long long)json_integer_value(json_object_get(st, "count")));
}

static void print_results(const struct parsed *p, json_t *r)
{
    char a[32];
    json_t *eng = json_object_get(r, "engine");
    if (eng)
        printf("# engine %s, qd %lld, %s%s%s\n", json_string_value(json_object_get(eng, "engine")),
               (long long)json_integer_value(json_object_get(eng, "depth")),
               p->c.direct ? "direct" : "buffered",
               json_is_true(json_object_get(eng, "registered_buffers")) ? ", registered buffers" : "",
               json_is_true(json_object_get(eng, "fixed_files")) ? ", fixed files" : "");
    switch (p->sub) {
    case SUB_CHECKPOINT: {
        printf("# %4s %12s %12s %12s %12s %12s\n", "ckpt", "commit", "write", "data sync",
               "metadata", "GB/s");
        size_t i;
        json_t *e;
        json_array_foreach(json_object_get(r, "checkpoints"), i, e) {
            if (!json_is_true(json_object_get(e, "committed")))
                continue;
            char w[16], s[16], m[16], c[16];
            printf("  %4zu %12s %12s %12s %12s %12.3f\n", i,
                   tp_fmt_ns(tp_json_num_or(e, "commit", 0), c, sizeof c),
                   tp_fmt_ns(tp_json_num_or(e, "write", 0), w, sizeof w),
                   tp_fmt_ns(tp_json_num_or(e, "data_sync", 0), s, sizeof s),
                   tp_fmt_ns(tp_json_num_or(e, "metadata", 0), m, sizeof m),
                   tp_json_num_or(e, "throughput", 0) / 1e9);
            json_t *v = json_object_get(e, "verify");
            if (v)
                printf("       restore %s at %s (page cache: %s)\n",
                       tp_fmt_ns(tp_json_num_or(v, "restore_time", 0) * 1e9, w, sizeof w),
                       tp_fmt_rate(tp_json_num_or(v, "restore_throughput", 0), a, sizeof a),
                       json_string_value(json_object_get(v, "page_cache")));
        }
        print_lat_row("commit", json_object_get(r, "commit"));
        print_lat_row("write request", json_object_get(r, "write_latency"));
        break;
    }
    case SUB_DATASET: {
        printf("# %5s %10s %12s %10s %10s %10s %8s\n", "epoch", "time(s)", "samples/s", "GB/s",
               "p50", "p99", "cached");
        size_t i;
        json_t *e;
        json_array_foreach(json_object_get(r, "epochs"), i, e) {
            char b[16], c[16];
            json_t *l = json_object_get(e, "latency");
            json_t *cf = json_object_get(e, "cached_fraction_before");
            printf("  %5zu %10.3f %12.0f %10.3f %10s %10s %8s\n", i, tp_json_num_or(e, "time", 0),
                   tp_json_num_or(e, "samples_per_s", 0), tp_json_num_or(e, "throughput", 0) / 1e9,
                   tp_fmt_ns(tp_json_num_or(l, "p50", 0), b, sizeof b),
                   tp_fmt_ns(tp_json_num_or(l, "p99", 0), c, sizeof c),
                   p->c.direct ? "direct"
                   : json_is_number(cf)
                       ? (snprintf(a, sizeof a, "%.0f%%", 100 * json_number_value(cf)), a)
                       : "?");
        }
        print_lat_row("read", json_object_get(r, "latency"));
        json_t *d = json_object_get(r, "during_checkpoint");
        if (d) {
            print_lat_row("read, checkpoint", json_object_get(d, "during"));
            printf("  read p99 during a checkpoint: %.2fx the baseline\n",
                   json_number_value(json_object_get(d, "p99_ratio")));
        }
        break;
    }
    case SUB_COMMIT:
        printf("# %lld commits of %s, %s, %s: %.0f commits/s\n",
               (long long)json_integer_value(json_object_get(r, "commits")),
               tp_fmt_size((uint64_t)json_integer_value(json_object_get(r, "write_size")), a, sizeof a),
               json_string_value(json_object_get(r, "sync")),
               json_string_value(json_object_get(r, "mode")), tp_json_num_or(r, "commits_per_s", 0));
        print_lat_row("commit", json_object_get(r, "latency"));
        print_lat_row("write", json_object_get(r, "write_latency"));
        if (json_is_object(json_object_get(r, "sync_latency")))
            print_lat_row("sync", json_object_get(r, "sync_latency"));
        break;
    default: break;
    }
}

int cmd_io(int argc, char **argv)
{
    struct parsed p = {0};
    p.c.engine = "auto";
    p.c.jobs = 1;
    p.c.bs = 1u << 20;
    p.c.batch = 1;
    p.c.seed = 1;
    p.c.timeout_ns = 600000000000ull;
    p.ck.size = 1u << 30;
    p.ck.shards = 8;
    p.ck.repeat = 3;
    p.ds.records = 65536;
    p.ds.record_size = 4096;
    p.ds.files = 16;
    p.ds.epochs = 2;
    p.cm.write_size = 4096;
    p.cm.count = 1000;
    p.cm.sync = "fdatasync";
    tp_error err = {0};
    int rc = parse(argc, argv, &p, &err);
    if (rc == 1)
        return 0;
    if (rc == 0 && p.json)
        rc = cli_json_path_ok(p.json, &err);
    if (rc < 0)
        return cli_fail(&err);
    p.c.progress = !p.quiet;
    char cmd[32];
    snprintf(cmd, sizeof cmd, "io %s", sub_names[p.sub]);
    json_t *doc = tp_result_new(cmd, config_json(&p));
    json_t *results = json_object();
    json_object_set_new(doc, "results", results);
    switch (p.sub) {
    case SUB_INFO: {
        json_t *desc = NULL;
        rc = tp_blkpath_describe(p.path, p.c.sysfs_root, p.mountinfo, &desc, &err);
        if (rc == 0) {
            json_object_set_new(results, "storage", desc);
            if (!p.quiet)
                tp_blkpath_print(stdout, desc);
        }
        break;
    }
    case SUB_CHECKPOINT:
        p.ck.c = p.c;
        rc = tp_io_checkpoint(&p.ck, results, &err);
        break;
    case SUB_DATASET:
        p.ds.c = p.c;
        p.ds.ckpt = p.ck;
        rc = tp_io_dataset(&p.ds, results, &err);
        break;
    case SUB_COMMIT:
        p.cm.c = p.c;
        rc = tp_io_commit(&p.cm, results, &err);
        break;
    }
    if (!p.quiet && p.sub != SUB_INFO)
        print_results(&p, results);
    tp_result_finish(doc, rc, rc ? err.msg : "");
    tp_error werr;
    if (p.json && cli_write_result(doc, p.json, &werr) < 0 && rc == 0) {
        err = werr;
        rc = werr.code;
    }
    json_decref(doc);
    return rc < 0 ? cli_fail(&err) : 0;
}
