/* trainpath coll: collectives across ranks, in nccl-tests' vocabulary (size,
 * count, type, redop, time, algbw, busbw, #wrong) plus what it leaves out:
 * tails, arrival skew, the algorithm chosen, and an alpha-beta fit. Options
 * are all parsed and checked before any rank starts; every rank then passes
 * them to the bootstrap, which refuses ranks started differently. The run
 * itself, the table and the document are the library's (tp_coll_main). */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "tp/boot.h"
#include "tp/coll.h"
#include "tp/result.h"
#include "tp/units.h"

static void usage(FILE *f)
{
    fprintf(f,
            "usage: trainpath coll [-n RANKS] [--op COLL] [--sizes LIST] [--dtype T] [--redop OP]\n"
            "                      [--algo A] [options]\n"
            "\n"
            "Ranks: -n N forks N ranks on this host; under mpirun or srun the launcher's\n"
            "ranks are used; with RANK/WORLD_SIZE/MASTER_ADDR/MASTER_PORT set (torchrun,\n"
            "Kubernetes) the ranks meet at MASTER_ADDR:MASTER_PORT. --launcher wins over\n"
            "those variables; without it, a -n that the launcher's size does not confirm\n"
            "is refused, naming the variable.\n"
            "\n"
            "  -n, --ranks N         local ranks to start (default 2)\n"
            "  -o, --op COLL         allreduce (default), reduce-scatter, allgather, broadcast,\n"
            "                        reduce, alltoall, sendrecv\n"
            "  -s, --sizes LIST      sizes as nccl-tests counts them, e.g. 8,1M,16M or 8-64M\n"
            "                        (default 8-256M: every power of two; rounded down to\n"
            "                        whole elements, and one below an element is refused)\n"
            "  -d, --dtype T         f32 (default), f64, bf16, f16, i32, i64\n"
            "      --redop OP        sum (default), prod, min, max, avg (the collectives\n"
            "                        that reduce; refused with the others)\n"
            "  -a, --algo A          auto (default: by size; the choice is in the result),\n"
            "                        ring, rabenseifner, recdoubling, dbtree, binomial, hier,\n"
            "                        bruck, pairwise (each where it applies)\n"
            "  -r, --root N          root of broadcast and reduce (default 0)\n"
            "      --iters N         timed iterations per size (default: as many as fit --time)\n"
            "  -T, --time DUR        time per size when --iters is not given (default 200ms)\n"
            "  -w, --warmup N        warm-up iterations per size (default 5)\n"
            "      --chunk SIZE      pipelining unit (default 256K on shm, 512K on tcp)\n"
            "      --repro MODE      plain (default; deterministic for one configuration) or\n"
            "                        exact (allreduce sum/avg of floats: bitwise the same for\n"
            "                        any rank count, algorithm, chunking and timing)\n"
            "      --repro-check     inputs that show it: each element sums the same 840\n"
            "                        random floats, shared among the ranks (result_sha256)\n"
            "      --backend B       trainpath (default), mpi (MPI_Allreduce and siblings;\n"
            "                        needs mpirun or srun) or nccl (GPU memory, one rank\n"
            "                        per GPU); a list (trainpath,nccl) runs the sweep through\n"
            "                        each in turn and compares their busbw at the end\n"
            "      --mem M           host (default) or cuda: buffers in GPU memory (NCCL\n"
            "                        works on them; trainpath stages them through host\n"
            "                        memory; the result's data_path says which path)\n"
            "      --gpu N           device index (default: the rank's index on its host)\n"
            "      --launcher L      local, mpi or env (default: detected)\n"
            "      --transport T     tcp (default: kernel sockets) or ofi (libfabric)\n"
            "  -P, --provider NAME   libfabric provider as fi_info prints it: shm,\n"
            "                        'tcp;ofi_rxm' (default), 'verbs;ofi_rxm', efa (implies ofi)\n"
            "      --intra M         shm (default) or fabric between ranks of one host\n"
            "      --shm-stores S    auto (default: streaming stores where a receive on shared\n"
            "                        memory of 8 KiB or more is forwarded next), cached (none)\n"
            "                        or stream (every receive on shared memory)\n"
            "      --bind ADDR       address for the data connections (default: loopback\n"
            "                        on one host, else the first up IPv4 interface)\n"
            "      --key-file F      pre-shared key of the env rendezvous\n"
            "      --timeout DUR     idle deadline of every wait (default 30s)\n"
            "      --busy-poll       spin instead of sleeping while waiting\n"
            "      --inject-delay DUR  every rank sleeps up to DUR (random) before each\n"
            "                        iteration: jitter and arrival-order tests\n"
            "      --json FILE       write the result document (atomically; - for stdout)\n"
            "      --trace FILE      every timed iteration of every rank, on rank 0's clock,\n"
            "                        in the Chrome trace format (ui.perfetto.dev)\n"
            "  -q, --quiet           no table\n"
            "Progress (sizes done, time left) is shown on stderr when it is a terminal;\n"
            "-q or --json - hide it.\n");
}

enum {
    OPT_REDOP = 256,
    OPT_ITERS,
    OPT_CHUNK,
    OPT_REPRO,
    OPT_REPRO_CHECK,
    OPT_BACKEND,
    OPT_DELAY,
    OPT_MEM,
    OPT_TRACE,
};

static const struct option long_opts[] = {
    {"op", required_argument, NULL, 'o'},
    {"sizes", required_argument, NULL, 's'},
    {"dtype", required_argument, NULL, 'd'},
    {"redop", required_argument, NULL, OPT_REDOP},
    {"algo", required_argument, NULL, 'a'},
    {"root", required_argument, NULL, 'r'},
    {"iters", required_argument, NULL, OPT_ITERS},
    {"time", required_argument, NULL, 'T'},
    {"warmup", required_argument, NULL, 'w'},
    {"chunk", required_argument, NULL, OPT_CHUNK},
    {"repro", required_argument, NULL, OPT_REPRO},
    {"repro-check", no_argument, NULL, OPT_REPRO_CHECK},
    {"backend", required_argument, NULL, OPT_BACKEND},
    {"inject-delay", required_argument, NULL, OPT_DELAY},
    {"mem", required_argument, NULL, OPT_MEM},
    {"trace", required_argument, NULL, OPT_TRACE},
    {"quiet", no_argument, NULL, 'q'},
    {"help", no_argument, NULL, 'h'},
    CLI_GROUP_LONG_OPTS,
    CLI_GROUP_BUSY_POLL,
    {NULL, 0, NULL, 0},
};

struct parsed {
    struct tp_coll_job job;
    struct tp_group_opts g;
    uint64_t *sizes;
    bool quiet;
};

/* One option of coll's own: 0, TP_EUSAGE naming it, or 1 when opt is not one. */
static int own_opt(struct parsed *p, int opt, const char *arg, tp_error *err)
{
    struct tp_coll_bench_opts *b = &p->job.bench;
    uint64_t v;
    int rc = 0;
    switch (opt) {
    case 'o': {
        int k = tp_coll_parse(arg);
        if (k < 0)
            rc = tp_error_set(err, TP_EUSAGE,
                              "--op %s: not a collective (allreduce, reduce-scatter, "
                              "allgather, broadcast, reduce, alltoall, sendrecv)",
                              arg);
        else
            b->kind = (enum tp_coll_kind)k;
        break;
    }
    case 's':
        free(p->sizes);
        p->sizes = NULL;
        rc = tp_parse_size_list(arg, "--sizes", &p->sizes, &b->nsizes, err);
        if (!rc && p->sizes[b->nsizes - 1] > (4ull << 30))
            rc = tp_error_set(err, TP_EUSAGE, "--sizes: %llu bytes is over the 4 GiB limit",
                              (unsigned long long)p->sizes[b->nsizes - 1]);
        break;
    case 'd': {
        int t = tp_dtype_parse(arg);
        if (t < 0)
            rc = tp_error_set(err, TP_EUSAGE,
                              "--dtype %s: not a type (f32, f64, bf16, f16, i32, i64)", arg);
        else
            b->dtype = (enum tp_dtype)t;
        break;
    }
    case OPT_REDOP: {
        int o = tp_redop_parse(arg);
        if (o < 0)
            rc = tp_error_set(err, TP_EUSAGE,
                              "--redop %s: not an operator (sum, prod, min, max, avg)", arg);
        else
            b->op = (enum tp_redop)o;
        p->job.redop_given = true;
        break;
    }
    case 'a': b->algo = arg; break;
    case 'r':
        rc = tp_parse_u64(arg, "--root", 0, 1023, &v, err);
        b->root = (int)v;
        p->job.root_given = true;
        break;
    case OPT_ITERS: rc = tp_parse_u64(arg, "--iters", 1, 20000, &b->iters, err); break;
    case 'T': rc = tp_parse_duration_min(arg, "--time", TP_DURATION_MIN_NS, &b->time_ns, err); break;
    case 'w': rc = tp_parse_u64(arg, "--warmup", 0, 100000, &b->warmup, err); break;
    case OPT_CHUNK:
        rc = tp_parse_size(arg, "--chunk", &v, err);
        b->chunk_bytes = (size_t)v;
        break;
    case OPT_REPRO:
        if (strcmp(arg, "exact") != 0 && strcmp(arg, "plain") != 0)
            rc = tp_error_set(err, TP_EUSAGE, "--repro %s: plain or exact", arg);
        b->exact = strcmp(arg, "exact") == 0;
        break;
    case OPT_REPRO_CHECK: b->repro_check = true; break;
    case OPT_BACKEND: rc = tp_coll_backends_parse(arg, &p->job.backends, err); break;
    case OPT_MEM:
        if (strcmp(arg, "host") != 0 && strcmp(arg, "cuda") != 0)
            rc = tp_error_set(err, TP_EUSAGE, "--mem %s: host or cuda", arg);
        b->mem_cuda = strcmp(arg, "cuda") == 0;
        break;
    case OPT_DELAY: rc = tp_parse_duration(arg, "--inject-delay", &b->inject_delay_ns, err); break;
    case OPT_TRACE: p->job.trace = arg; break;
    case 'q': p->quiet = true; break;
    default: return 1;
    }
    return rc;
}

static int parse(int argc, char **argv, struct parsed *p, tp_error *err)
{
    int rc = 0, opt;
    opterr = 0;
    optind = 1;
    while (rc == 0 &&
           (opt = getopt_long(argc, argv, ":n:o:s:d:a:r:T:w:P:qh", long_opts, NULL)) != -1) {
        if (opt == 'h') {
            usage(stdout);
            return 1;
        }
        if (opt == ':')
            rc = tp_error_set(err, TP_EUSAGE, "%s needs a value", argv[optind - 1]);
        else if ((rc = own_opt(p, opt, optarg, err)) == 1 &&
                 (rc = cli_group_opt(&p->g, opt, optarg, err)) == 1)
            rc = tp_error_set(err, TP_EUSAGE, "unknown option '%s'", argv[optind - 1]);
    }
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
    struct parsed p = {.job.bench = {.warmup = 5, .time_ns = 200000000ull}};
    cli_group_init(&p.g);
    tp_coll_backends_default(&p.job.backends);
    tp_error err = {0};
    int rc = parse(argc, argv, &p, &err);
    if (rc == 1) {
        free(p.sizes);
        return 0;
    }
    if (rc == 0 && !p.sizes)
        rc = tp_parse_size_list("8-256M", "--sizes", &p.sizes, &p.job.bench.nsizes, &err);
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
