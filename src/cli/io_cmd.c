/* trainpath io: the storage path. Workloads (checkpoint, dataset, commit)
 * and path identification (info). This file parses argv into a tp_io_opts;
 * the library (src/io/workload.c) says which options a workload takes,
 * checks them together, builds the config document, runs and prints. Every
 * option is checked before anything is written; the result document is
 * written even when the run fails. */
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "tp/io.h"
#include "tp/result.h"
#include "tp/storage.h"
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
            "  -q, --quiet            no table\n"
            "Progress (checkpoints, epochs or commits done, time left) is shown on stderr\n"
            "when it is a terminal; -q or --json - hide it.\n");
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

/* The CLI's own options, which no workload is asked about. */
struct parsed {
    struct tp_io_opts o;
    const char *json;
    bool quiet;
};

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
    struct tp_io_opts *o = &p->o;
    o->w = tp_io_workload(argv[1]);
    if (!o->w)
        return tp_error_set(err, TP_EUSAGE, "io %s: unknown workload (checkpoint, dataset, "
                                            "commit, info)", argv[1]);
    argc--;
    argv++;
    struct tp_io_common *c = &o->c;
    uint64_t v;
    int rc = 0, opt;
    opterr = 0;
    optind = 1;
    while (rc == 0 && (opt = getopt_long(argc, argv, ":qh", long_opts, NULL)) != -1) {
        if (opt >= OPT_SIZE && opt != OPT_JSON && !tp_io_workload_takes(o->w, opt_name(opt)))
            return tp_error_set(err, TP_EUSAGE, "--%s: not an option of io %s", opt_name(opt),
                                tp_io_workload_name(o->w));
        switch (opt) {
        case OPT_SIZE: rc = tp_parse_size(optarg, "--size", &o->ck.size, err); break;
        case OPT_SHARDS:
            rc = tp_parse_u64(optarg, "--shards", 1, 4096, &v, err);
            o->ck.shards = (unsigned)v;
            break;
        case OPT_REPEAT:
            rc = tp_parse_u64(optarg, "--repeat", 1, 100000, &v, err);
            o->ck.repeat = (unsigned)v;
            break;
        case OPT_VERIFY: o->ck.verify = o->ds.verify = true; break;
        case OPT_KEEP: o->ck.keep = true; break;
        case OPT_RECORDS:
            rc = tp_parse_u64(optarg, "--records", 1, UINT32_MAX - 1, &o->ds.records, err);
            break;
        case OPT_RECSIZE:
            rc = tp_parse_size(optarg, "--record-size", &o->ds.record_size, err);
            break;
        case OPT_FILES:
            rc = tp_parse_u64(optarg, "--files", 1, 4096, &v, err);
            o->ds.files = (unsigned)v;
            break;
        case OPT_EPOCHS:
            rc = tp_parse_u64(optarg, "--epochs", 1, 100000, &v, err);
            o->ds.epochs = (unsigned)v;
            break;
        case OPT_DURING:
            if (strcmp(optarg, "checkpoint") != 0)
                rc = tp_error_set(err, TP_EUSAGE, "--during %s: only 'checkpoint'", optarg);
            o->ds.during_ckpt = true;
            break;
        case OPT_WSIZE: rc = tp_parse_size(optarg, "--write-size", &o->cm.write_size, err); break;
        case OPT_COUNT: rc = tp_parse_u64(optarg, "--count", 1, 1u << 30, &o->cm.count, err); break;
        case OPT_TIME:
            rc = tp_parse_duration_min(optarg, "--time", TP_DURATION_MIN_NS, &o->cm.time_ns, err);
            break;
        case OPT_SYNC:
            if (strcmp(optarg, "fdatasync") && strcmp(optarg, "fsync") && strcmp(optarg, "dsync"))
                rc = tp_error_set(err, TP_EUSAGE, "--sync %s: fdatasync, fsync or dsync", optarg);
            o->cm.sync = optarg;
            break;
        case OPT_OVERWRITE: o->cm.overwrite = true; break;
        case OPT_DEVICE: c->target.device = optarg; break;
        case OPT_DESTROY: c->target.destroy_data = true; break;
        case OPT_ENGINE:
            rc = tp_ioq_engine_check(optarg, err);
            c->engine = optarg;
            break;
        case OPT_QD:
            rc = tp_parse_u64(optarg, "--qd", 1, 4096, &v, err);
            c->qd = (unsigned)v;
            o->have_qd = true;
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
        case OPT_TIMEOUT:
            rc = tp_parse_duration_min(optarg, "--timeout", TP_DURATION_MIN_NS, &c->timeout_ns, err);
            break;
        case OPT_SYSFS: c->sysfs_root = optarg; break;
        case OPT_MOUNTINFO: o->mountinfo = optarg; break;
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
        o->path = argv[optind++];
    if (optind < argc)
        return tp_error_set(err, TP_EUSAGE, "%s: unexpected argument", argv[optind]);
    return tp_io_opts_finish(o, err);
}

int cmd_io(int argc, char **argv)
{
    struct parsed p = {0};
    tp_io_opts_init(&p.o);
    tp_error err = {0};
    int rc = parse(argc, argv, &p, &err);
    if (rc == 1)
        return 0;
    const struct tp_file_arg out = {"--json", p.json, NULL},
                             in = {"--mountinfo", p.o.mountinfo, NULL};
    if (cli_distinct(&out, 1, &in, 1)) /* before a refusal writes over the input */
        return 2;
    if (rc == 0 && p.json)
        rc = tp_result_path_ok(p.json, &err);
    char cmd[32];
    snprintf(cmd, sizeof cmd, "io%s%s", p.o.w ? " " : "", p.o.w ? tp_io_workload_name(p.o.w) : "");
    if (rc < 0)
        return cli_refuse(cmd, p.json ? p.json : cli_json_arg(argc, argv), &err);
    p.o.c.progress = !p.quiet;
    p.o.c.progress_line = cli_progress(p.quiet, p.json);
    json_t *doc = tp_result_new(cmd, tp_io_config_json(&p.o));
    json_t *results = json_object();
    json_object_set_new(doc, "results", results);
    rc = tp_io_run(&p.o, results, &err);
    /* with --json - the document alone goes to stdout; a refusal has no
     * table and no counters */
    if (!p.quiet && rc != TP_EUSAGE)
        tp_io_print(cli_table_out(p.json), &p.o, results);
    tp_result_finish(doc, rc, rc ? err.msg : "");
    tp_error werr;
    if (p.json && tp_result_write_run(doc, p.json, &werr) < 0 && rc == 0) {
        err = werr;
        rc = werr.code;
    }
    json_decref(doc);
    return rc < 0 ? cli_fail(&err) : 0;
}
