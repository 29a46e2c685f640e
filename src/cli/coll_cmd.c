/* trainpath coll: collectives across ranks, in nccl-tests' vocabulary (size,
 * count, type, redop, time, algbw, busbw, #wrong) plus what it leaves out:
 * tails, arrival skew, the algorithm chosen, and an alpha-beta fit. Options
 * are all parsed and checked before any rank starts; every rank then passes
 * them to the bootstrap, which refuses ranks started differently. The run
 * itself, the table and the document are the library's (tp_coll_main). Each
 * option is a row of one table (opts.h), the group's of cli_group_rows,
 * which --help is written from. */
#include <getopt.h> /* optind */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "opts.h"
#include "tp/boot.h"
#include "tp/coll.h"
#include "tp/result.h"
#include "tp/units.h"

struct parsed {
    struct tp_coll_job job;
    struct tp_group_opts g;
    uint64_t *sizes;
    bool quiet;
};

static int op_parse(const char *arg, void *opts, tp_error *err)
{
    int k = tp_coll_parse(arg);
    if (k < 0)
        return tp_error_set(err, TP_EUSAGE,
                            "--op %s: not a collective (allreduce, reduce-scatter, "
                            "allgather, broadcast, reduce, alltoall, sendrecv)",
                            arg);
    ((struct parsed *)opts)->job.bench.kind = (enum tp_coll_kind)k;
    return 0;
}

static int sizes_parse(const char *arg, void *opts, tp_error *err)
{
    struct parsed *p = opts;
    struct tp_coll_bench_opts *b = &p->job.bench;
    free(p->sizes);
    p->sizes = NULL;
    int rc = tp_parse_size_list(arg, "--sizes", &p->sizes, &b->nsizes, err);
    if (!rc && p->sizes[b->nsizes - 1] > (4ull << 30))
        rc = tp_error_set(err, TP_EUSAGE, "--sizes: %llu bytes is over the 4 GiB limit",
                          (unsigned long long)p->sizes[b->nsizes - 1]);
    return rc;
}

static int dtype_parse(const char *arg, void *opts, tp_error *err)
{
    int t = tp_dtype_parse(arg);
    if (t < 0)
        return tp_error_set(err, TP_EUSAGE,
                            "--dtype %s: not a type (f32, f64, bf16, f16, i32, i64)", arg);
    ((struct parsed *)opts)->job.bench.dtype = (enum tp_dtype)t;
    return 0;
}

static int redop_parse(const char *arg, void *opts, tp_error *err)
{
    int o = tp_redop_parse(arg);
    if (o < 0)
        return tp_error_set(err, TP_EUSAGE,
                            "--redop %s: not an operator (sum, prod, min, max, avg)", arg);
    ((struct parsed *)opts)->job.bench.op = (enum tp_redop)o;
    return 0;
}

static int backend_parse(const char *arg, void *opts, tp_error *err)
{
    return tp_coll_backends_parse(arg, &((struct parsed *)opts)->job.backends, err);
}

#define P(f) CLI_AT(struct parsed, f)
static const char *const repros[] = {"plain", "exact", NULL};
static const char *const mems[] = {"host", "cuda", NULL};

/* coll's options in the order of --help, the group's among them (CLI_SEE) */
static const struct cli_opt rows[] = {
    {CLI_TEXT,
     .help =
         "usage: trainpath coll [-n RANKS] [--op COLL] [--sizes LIST] [--dtype T] [--redop OP]\n"
         "                      [--algo A] [options]\n"
         "\n"
         "Ranks: -n N forks N ranks on this host; under mpirun or srun the launcher's\n"
         "ranks are used; with RANK/WORLD_SIZE/MASTER_ADDR/MASTER_PORT set (torchrun,\n"
         "Kubernetes) the ranks meet at MASTER_ADDR:MASTER_PORT. --launcher wins over\n"
         "those variables; without it, a -n that the launcher's size does not confirm\n"
         "is refused, naming the variable.\n"
         "\n"},
    {CLI_SEE, "ranks", .help = "local ranks to start (default 2)"},
    {CLI_CALL, "op", 'o', "COLL", .check = op_parse,
     .help = "allreduce (default), reduce-scatter, allgather, broadcast,\n"
             "reduce, alltoall, sendrecv"},
    {CLI_CALL, "sizes", 's', "LIST", .check = sizes_parse, .def = "8-256M",
     .help = "sizes as nccl-tests counts them, e.g. 8,1M,16M or 8-64M\n"
             "(default {}: every power of two; rounded down to\n"
             "whole elements, and one below an element is refused)"},
    {CLI_CALL, "dtype", 'd', "T", .check = dtype_parse,
     .help = "f32 (default), f64, bf16, f16, i32, i64"},
    {CLI_CALL, "redop", 0, "OP", .given = P(job.redop_given), .check = redop_parse,
     .help = "sum (default), prod, min, max, avg (the collectives\n"
             "that reduce; refused with the others)"},
    {CLI_STRING, "algo", 'a', "A", P(job.bench.algo),
     .help = "auto (default: by size; the choice is in the result),\n"
             "ring, rabenseifner, recdoubling, dbtree, binomial, hier,\n"
             "bruck, pairwise (each where it applies)"},
    {CLI_UINT, "root", 'r', "N", P(job.bench.root), .given = P(job.root_given), .hi = 1023,
     .help = "root of broadcast and reduce (default 0)"},
    {CLI_UINT, "iters", 0, "N", P(job.bench.iters), .lo = 1, .hi = 20000,
     .help = "timed iterations per size (default: as many as fit --time)"},
    {CLI_DURATION, "time", 'T', "DUR", P(job.bench.time_ns), .lo = TP_DURATION_MIN_NS,
     .def = "200ms", .help = "time per size when --iters is not given (default {})"},
    {CLI_UINT, "warmup", 'w', "N", P(job.bench.warmup), .hi = 100000, .def = "5",
     .help = "warm-up iterations per size (default {})"},
    {CLI_SIZE, "chunk", 0, "SIZE", P(job.bench.chunk_bytes),
     .help = "pipelining unit (default 256K on shm, 512K on tcp)"},
    {CLI_CHOICE, "repro", 0, "MODE", P(job.bench.exact), .values = repros,
     .help = "plain (default; deterministic for one configuration) or\n"
             "exact (allreduce sum/avg of floats: bitwise the same for\n"
             "any rank count, algorithm, chunking and timing)"},
    {CLI_FLAG, "repro-check", .at = P(job.bench.repro_check),
     .help = "inputs that show it: each element sums the same 840\n"
             "random floats, shared among the ranks (result_sha256)"},
    {CLI_CALL, "backend", 0, "B", .check = backend_parse,
     .help = "trainpath (default), mpi (MPI_Allreduce and siblings;\n"
             "needs mpirun or srun) or nccl (GPU memory, one rank\n"
             "per GPU); a list (trainpath,nccl) runs the sweep through\n"
             "each in turn and compares their busbw at the end"},
    {CLI_CHOICE, "mem", 0, "M", P(job.bench.mem_cuda), .values = mems,
     .help = "host (default) or cuda: buffers in GPU memory (NCCL\n"
             "works on them; trainpath stages them through host\n"
             "memory; the result's data_path says which path)"},
    {CLI_SEE, "gpu", .help = "device index (default: the rank's index on its host)"},
    {CLI_SEE, "launcher", .help = "local, mpi or env (default: detected)"},
    {CLI_SEE, "transport", .help = "tcp (default: kernel sockets) or ofi (libfabric)"},
    {CLI_SEE, "provider",
     .help = "libfabric provider as fi_info prints it: shm,\n"
             "'tcp;ofi_rxm' (default), 'verbs;ofi_rxm', efa (implies ofi)"},
    {CLI_SEE, "intra", .help = "shm (default) or fabric between ranks of one host"},
    {CLI_SEE, "shm-stores",
     .help = "auto (default: streaming stores where a receive on shared\n"
             "memory of 8 KiB or more is forwarded next), cached (none)\n"
             "or stream (every receive on shared memory)"},
    {CLI_SEE, "bind",
     .help = "address for the data connections (default: loopback\n"
             "on one host, else the first up IPv4 interface)"},
    {CLI_SEE, "key-file", .help = "pre-shared key of the env rendezvous"},
    {CLI_SEE, "timeout", .help = "idle deadline of every wait (default {})"},
    {CLI_FLAG, "busy-poll", .at = P(g.comm.busy_poll),
     .help = "spin instead of sleeping while waiting"},
    {CLI_DURATION, "inject-delay", 0, "DUR", P(job.bench.inject_delay_ns),
     .help = "every rank sleeps up to DUR (random) before each\n"
             "iteration: jitter and arrival-order tests"},
    {CLI_SEE, "json", .help = "write the result document (atomically; - for stdout)"},
    {CLI_STRING, "trace", 0, "FILE", P(job.trace),
     .help = "every timed iteration of every rank, on rank 0's clock,\n"
             "in the Chrome trace format (ui.perfetto.dev)"},
    {CLI_FLAG, "quiet", 'q', .at = P(quiet), .help = "no table"},
    {CLI_TEXT,
     .help = "Progress (sizes done, time left) is shown on stderr when it is a terminal;\n"
             "-q or --json - hide it.\n"},
    {CLI_END},
};

static const struct cli_cmd coll_cmd = {"coll", rows, 24, .errors = CLI_ERRORS_BARE,
                                        .group = cli_group_rows,
                                        .group_at = offsetof(struct parsed, g)};

static int parse(int argc, char **argv, struct parsed *p, tp_error *err)
{
    int rc = cli_opts_parse(&coll_cmd, argc, argv, p, err);
    if (rc == 0 && optind < argc)
        rc = tp_error_set(err, TP_EUSAGE, "unexpected argument '%s'", argv[optind]);
    if (rc == 0)
        rc = tp_coll_job_check(&p->job, &p->g, err);
    if (rc == 0)
        rc = cli_group_check(&p->g, err);
    return rc;
}

int cmd_coll(int argc, char **argv)
{
    struct parsed p = {0};
    cli_group_init(&p.g);
    tp_coll_backends_default(&p.job.backends);
    tp_error err = {0};
    int rc = cli_opts_defaults(&coll_cmd, &p, &err);
    if (rc == 0)
        rc = parse(argc, argv, &p, &err);
    if (rc == 1) {
        free(p.sizes);
        return 0;
    }
    p.job.bench.sizes = p.sizes;
    if (rc == 0)
        rc = tp_coll_job_check_group(&p.job, &p.g, &err);
    if (cli_group_distinct(&p.g, p.job.trace, NULL)) { /* before any refusal's document */
        free(p.sizes);
        return 2;
    }
    if (rc == 0)
        rc = cli_group_json_ok(&p.g, &err);
    if (rc == 0 && p.job.trace && tp_boot_will_be_rank0(p.g.launcher_name))
        rc = tp_result_file_ok("--trace", p.job.trace, &err);
    if (rc < 0) {
        free(p.sizes);
        return cli_refuse("coll", cli_group_json(&p.g, argc, argv), &err);
    }
    /* with --json - the document alone goes to stdout */
    p.job.table = p.quiet ? NULL : cli_table_out(p.g.json);
    p.job.progress_line = cli_progress(p.quiet, p.g.json);
    bool speak;
    rc = tp_coll_main(&p.job, &p.g, &speak, &err);
    free(p.sizes);
    return cli_group_exit(rc, speak, &err);
}
