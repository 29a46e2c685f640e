/* trainpath io: the storage path. Workloads (checkpoint, dataset, commit)
 * and path identification (info). This file parses argv into a tp_io_opts
 * by one table of rows (opts.h), an option each with its default, which
 * --help is written from; the library (src/io/workload.c) says which options a workload takes,
 * checks them together, builds the config document, runs and prints. Every
 * option is checked before anything is written; the result document is
 * written even when the run fails. */
#include <getopt.h> /* optind */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "opts.h"
#include "tp/io.h"
#include "tp/result.h"
#include "tp/storage.h"
#include "tp/units.h"

/* The CLI's own options, which no workload is asked about, beside the
 * workloads'. */
struct parsed {
    struct tp_io_opts o;
    const char *json;
    bool quiet;
};

static int bs_check(const char *arg, void *opts, tp_error *err)
{
    if (((struct parsed *)opts)->o.c.bs > (1u << 30))
        return tp_error_set(err, TP_EUSAGE, "--bs %s: at most 1G", arg);
    return 0;
}

#define P(f) CLI_AT(struct parsed, f)
static const char *const during_values[] = {"checkpoint", NULL};
static const char *const sync_values[] = {"fdatasync", "fsync", "dsync", NULL};

/* every option of every workload, in the order of --help; which workload
 * takes which is the library's (tp_io_workload_takes) */
static const struct cli_opt rows[] = {
    {CLI_TEXT,
     .help =
         "usage: trainpath io checkpoint DIR [--size SIZE] [--shards K] [--repeat R] [--verify]\n"
         "       trainpath io dataset DIR [--records N] [--record-size SIZE] [--files F]\n"
         "                                [--epochs E] [--during checkpoint]\n"
         "       trainpath io commit DIR [--write-size SIZE] [--count N] [--sync MODE]\n"
         "       trainpath io info PATH [--sysfs-root DIR] [--mountinfo FILE]\n"
         "\n"
         "checkpoint  write SIZE as K shard files, then commit: fdatasync every shard,\n"
         "            metadata to a temporary file, fsync, rename, fsync the folder.\n"
         "            Commit latency (first write to folder fsync) and its phases.\n"},
    {CLI_SIZE, "size", 0, "SIZE", P(o.ck.size), .def = "1G",
     .help = "bytes per checkpoint (default {})"},
    {CLI_UINT, "shards", 0, "K", P(o.ck.shards), .lo = 1, .hi = 4096, .def = "8",
     .help = "shard files (default {})"},
    {CLI_UINT, "repeat", 0, "R", P(o.ck.repeat), .lo = 1, .hi = 100000, .def = "3",
     .help = "checkpoints (default {})"},
    {CLI_FLAG, "verify", .at = P(o.ck.verify), .also = P(o.ds.verify),
     .help = "read each checkpoint back and check its checksums"},
    {CLI_FLAG, "keep", .at = P(o.ck.keep), .help = "leave the checkpoints in DIR/trainpath-ckpt"},
    {CLI_TEXT,
     .help = "dataset     N records in F files, every record read once per epoch in a seeded\n"
             "            shuffled order: samples/s, per-read latency, epoch time.\n"},
    {CLI_UINT, "records", 0, "N", P(o.ds.records), .lo = 1, .hi = UINT32_MAX - 1,
     .def = "65536", .help = "(default {})"},
    {CLI_SIZE, "record-size", 0, "SIZE", P(o.ds.record_size), .def = "4K",
     .help = "(default {})"},
    {CLI_UINT, "files", 0, "F", P(o.ds.files), .lo = 1, .hi = 4096, .def = "16",
     .help = "(default {})"},
    {CLI_UINT, "epochs", 0, "E", P(o.ds.epochs), .lo = 1, .hi = 100000, .def = "2",
     .help = "(default {})"},
    {CLI_SEE, "verify", .help = "check every byte of every record (the header always)"},
    {CLI_CHOICE, "during", 0, "checkpoint", .given = P(o.ds.during_ckpt), .values = during_values,
     .help = "then read again while one checkpoint of --size and\n"
             "--shards is written: how much the read p99 degrades"},
    {CLI_TEXT, .help = "commit      small writes each made durable: the latency of one commit.\n"},
    {CLI_SIZE, "write-size", 0, "SIZE", P(o.cm.write_size), .def = "4K",
     .help = "(default {})"},
    {CLI_UINT, "count", 0, "N", P(o.cm.count), .lo = 1, .hi = 1u << 30, .def = "1000",
     .help = "commits per job (default {})"},
    {CLI_DURATION, "time", 0, "DUR", P(o.cm.time_ns), .lo = TP_DURATION_MIN_NS,
     .help = "stop after DUR (with --count as a cap)"},
    {CLI_CHOICE, "sync", 0, "MODE", .text = P(o.cm.sync), .values = sync_values,
     .def = "fdatasync", .help = "{} (default), fsync, or dsync (O_DSYNC writes)"},
    {CLI_FLAG, "overwrite", .at = P(o.cm.overwrite),
     .help = "lay the file out first, then overwrite it (as fio does);\n"
             "the default appends, as a log does"},
    {CLI_TEXT,
     .help = "info        the storage behind PATH: filesystem, block devices, NVMe controller,\n"
             "            NVMe-oF transport, address, subsystem NQN, state, queues.\n"
             "\n"
             "Common options:\n"},
    {CLI_STRING, "device", 0, "DEV", P(o.c.target.device),
     .help = "a raw block device instead of DIR: its data is destroyed;\n"
             "needs --destroy-data; refused when mounted or holding a\n"
             "partition table or filesystem"},
    {CLI_FLAG, "destroy-data", .at = P(o.c.target.destroy_data)},
    {CLI_STRING, "engine", 0, "E", P(o.c.engine), .check = cli_engine_check, .def = "auto",
     .help = "{} (default: io_uring, else psync), io_uring, psync"},
    {CLI_UINT, "qd", 0, "N", P(o.c.qd), .given = P(o.have_qd), .lo = 1, .hi = 4096,
     .help = "requests in flight per job (default: checkpoint 8,\ndataset 32)"},
    {CLI_UINT, "jobs", 0, "N", P(o.c.jobs), .lo = 1, .hi = 256, .def = "1",
     .help = "threads (default {})"},
    {CLI_SIZE, "bs", 0, "SIZE", P(o.c.bs), .check = bs_check, .def = "1M",
     .help = "block size of large writes (default {})"},
    {CLI_UINT, "batch", 0, "N", P(o.c.batch), .hi = 4096, .def = "1",
     .help = "submit requests N at a time (default {}: each as soon as\n"
             "it is queued, as fio does; 0: a whole queue at once)"},
    {CLI_FLAG, "direct", .at = P(o.c.direct), .also = P(o.c.target.direct),
     .help = "O_DIRECT (alignment from statx, else the logical block)"},
    {CLI_FLAG, "drop-cache", .at = P(o.c.drop_cache),
     .help = "drop the files' cached pages before reading them"},
    {CLI_FLAG, "force", .at = P(o.c.force), .help = "write even when SIZE exceeds the free space"},
    {CLI_UINT, "seed", 0, "N", P(o.c.seed), .hi = INT64_MAX, .def = "1",
     .help = "data and shuffle seed (default {})"},
    {CLI_DURATION, "timeout", 0, "DUR", P(o.c.timeout_ns), .lo = TP_DURATION_MIN_NS,
     .def = "10m", .help = "fail when no I/O completes for DUR (default {})"},
    {CLI_STRING, "sysfs-root", 0, "DIR", P(o.c.sysfs_root),
     .help = "read /sys from a snapshot (tests, offline audits)"},
    {CLI_STRING, "mountinfo", 0, "FILE", P(o.mountinfo), .help = NULL},
    {CLI_STRING, "json", 0, "FILE", P(json), .every = true,
     .help = "write the result document (atomically; - for stdout)"},
    {CLI_FLAG, "quiet", 'q', .at = P(quiet), .every = true, .help = "no table"},
    {CLI_TEXT,
     .help = "Progress (checkpoints, epochs or commits done, time left) is shown on stderr\n"
             "when it is a terminal; -q or --json - hide it.\n"},
    {CLI_END},
};

static int takes(const struct cli_opt *row, const void *opts, tp_error *err)
{
    const struct tp_io_workload *w = ((const struct parsed *)opts)->o.w;
    if (!tp_io_workload_takes(w, row->name))
        return tp_error_set(err, TP_EUSAGE, "--%s: not an option of io %s", row->name,
                            tp_io_workload_name(w));
    return 0;
}

static const struct cli_cmd io_cmd = {"io", rows, 25, .takes = takes};

static int parse(int argc, char **argv, struct parsed *p, tp_error *err)
{
    if (argc < 2 || strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
        cli_opts_usage(&io_cmd, argc < 2 ? stderr : stdout);
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
    int rc = cli_opts_parse(&io_cmd, argc, argv, p, err);
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
    tp_error err = {0};
    int rc = cli_opts_defaults(&io_cmd, &p, &err);
    if (rc == 0)
        rc = parse(argc, argv, &p, &err);
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
