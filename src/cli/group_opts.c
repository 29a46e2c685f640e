/* The options of a group of ranks (-n, --launcher, --key-file, --transport,
 * -P/--provider, --intra, --shm-stores, --bind, --timeout, --busy-poll,
 * --gpu, --json),
 * parsed once for every command that runs on one (coll, step) and handed
 * to the library as struct tp_group_opts. Each value is checked before any
 * rank starts. */
#include <getopt.h>

#include "cli.h"
#include "tp/boot.h"
#include "tp/chan.h"
#include "tp/intr.h"
#include "tp/result.h"
#include "tp/transport.h"
#include "tp/units.h"

void cli_group_init(struct tp_group_opts *g)
{
    *g = (struct tp_group_opts){.nranks = 2, .timeout_ns = 30000000000ull, .gpu_device = -1};
}

int cli_group_opt(struct tp_group_opts *g, int opt, const char *arg, tp_error *err)
{
    struct tp_comm_opts *c = &g->comm;
    uint64_t v;
    int rc = 0;
    switch (opt) {
    case 'n':
        rc = tp_parse_u64(arg, "--ranks", 1, 1024, &v, err);
        g->nranks = (int)v;
        g->nranks_given = true;
        break;
    case CLI_OPT_LAUNCHER: g->launcher = arg; break;
    case CLI_OPT_KEY: g->key_file = arg; break;
    case CLI_OPT_TRANSPORT: c->transport = arg; break;
    case 'P': c->provider = arg; break;
    case CLI_OPT_INTRA: c->intra = arg; break;
    case CLI_OPT_STORES: c->shm_stores = arg; break;
    case CLI_OPT_BIND: c->bind_addr = arg; break;
    case CLI_OPT_TIMEOUT:
        rc = tp_parse_duration(arg, "--timeout", &g->timeout_ns, err);
        if (!rc && g->timeout_ns < 1000000)
            rc = tp_error_set(err, TP_EUSAGE, "--timeout: '%s' is below 1 ms", arg);
        break;
    case CLI_OPT_BUSY: c->busy_poll = true; break;
    case CLI_OPT_JSON: g->json = arg; break;
    case CLI_OPT_GPU:
        rc = tp_parse_u64(arg, "--gpu", 0, 1023, &v, err);
        g->gpu_device = (int)v;
        break;
    default: return 1;
    }
    return rc;
}

int cli_group_check(struct tp_group_opts *g, tp_error *err)
{
    struct tp_comm_opts *c = &g->comm;
    const struct tp_chan_kind *intra;
    int rc = tp_chan_intra_parse(c->intra, &intra, err);
    if (rc == 0)
        rc = tp_comm_stores_check(c->shm_stores, err);
    if (rc == 0 && c->provider && !c->transport) /* a provider implies the transport that takes one */
        c->transport = tp_transport_default(true)->name;
    const struct tp_transport_ops *t = rc == 0 ? tp_transport_parse(c->transport, err) : NULL;
    if (rc == 0 && !t)
        rc = err->code;
    if (rc == 0)
        rc = tp_transport_provider_check(t, c->provider ? c->provider : t->default_provider, err);
    if (rc == 0)
        rc = tp_boot_check_backend(g->launcher, "--launcher", err);
    /* an explicit --launcher wins over the environment; an explicit -n
     * that the launcher's variables contradict is refused, naming them */
    if (rc == 0)
        rc = tp_boot_check_env(g->launcher, g->nranks_given ? g->nranks : 0, err);
    /* a launcher named but absent would make this process a group of one */
    if (rc == 0 && g->launcher && tp_boot_launched(g->launcher) && !tp_boot_launched(NULL))
        rc = tp_error_set(err, TP_EUSAGE,
                          "--launcher %s: no launcher started this process (no rank variable "
                          "of mpirun, srun or torchrun is set); without --launcher, -n forks "
                          "local ranks",
                          g->launcher);
    g->launcher_name = tp_boot_detect(g->launcher);
    return rc;
}

int cli_group_json_ok(const struct tp_group_opts *g, tp_error *err)
{
    if (g->json && tp_boot_will_be_rank0(g->launcher_name))
        return tp_result_path_ok(g->json, err);
    return 0;
}

int cli_group_distinct(const struct tp_group_opts *g, const char *trace, const char *workload)
{
    const struct tp_file_arg outs[] = {{"--json", g->json, NULL}, {"--trace", trace, NULL}};
    const struct tp_file_arg ins[] = {{"--key-file", g->key_file, NULL},
                                      {"--workload", workload, NULL}};
    return cli_distinct(outs, 2, ins, 2);
}

const char *cli_group_json(const struct tp_group_opts *g, int argc, char **argv)
{
    const char *json = g->json ? g->json : cli_json_arg(argc, argv);
    return tp_boot_will_be_rank0(g->launcher_name ? g->launcher_name : g->launcher) ? json : NULL;
}

int cli_group_exit(int rc, bool speak, const tp_error *err)
{
    if (rc >= 0)
        return 0;
    return speak ? cli_fail(err) : tp_exit_code(tp_intr_blame(rc, NULL));
}
