/* The options of a group of ranks (-n, --launcher, --key-file, --transport,
 * -P/--provider, --intra, --shm-stores, --bind, --timeout, --gpu, --json),
 * declared once as rows (opts.h) for every command that runs on one (coll,
 * step) and handed to the library as struct tp_group_opts. Each value is
 * checked before any rank starts. */
#include "cli.h"
#include "tp/boot.h"
#include "tp/chan.h"
#include "tp/intr.h"
#include "tp/result.h"
#include "tp/transport.h"
#include "tp/units.h"

#define G(f) CLI_AT(struct tp_group_opts, f)

const struct cli_opt cli_group_rows[] = {
    {CLI_UINT, "ranks", 'n', "N", G(nranks), .given = G(nranks_given), .lo = 1, .hi = 1024,
     .def = "2"},
    {CLI_STRING, "launcher", 0, .arg = "L", .at = G(launcher)},
    {CLI_STRING, "key-file", 0, .arg = "F", .at = G(key_file)},
    {CLI_STRING, "transport", 0, .arg = "T", .at = G(comm.transport)},
    {CLI_STRING, "provider", 'P', .arg = "NAME", .at = G(comm.provider)},
    {CLI_STRING, "intra", 0, .arg = "M", .at = G(comm.intra)},
    {CLI_STRING, "shm-stores", 0, .arg = "S", .at = G(comm.shm_stores)},
    {CLI_STRING, "bind", 0, .arg = "ADDR", .at = G(comm.bind_addr)},
    {CLI_DURATION, "timeout", 0, "DUR", G(timeout_ns), .lo = 1000000, .def = "30s"},
    {CLI_STRING, "json", 0, .arg = "FILE", .at = G(json)},
    {CLI_UINT, "gpu", 0, .arg = "N", .at = G(gpu_device), .hi = 1023},
    {CLI_END},
};

void cli_group_init(struct tp_group_opts *g)
{
    *g = (struct tp_group_opts){.gpu_device = -1};
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
