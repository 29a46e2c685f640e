/* The simulator's fabric (include/tp/triage.h, tp_triage_fleet.fabric):
 * a two-level fat tree made with tp_topology_fat_tree, rail-optimised or
 * not, the factor a test takes through a slow leaf switch, uplink or
 * cable (a spine drawn for each flow, as ECMP spreads new connections),
 * and the scoring of the faults planted on it (switches, uplinks, bad
 * cables) against what was named. A test's traffic is split evenly over
 * its rails and it ends when the slowest share does (NCCL gives each NIC
 * its channels' fixed share of a transfer, and a transfer waits for its
 * last chunk): its factor is the worst of its rails'. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "tp/topology.h"
#include "triage_int.h"

static int leaves_of(const struct tp_triage_fleet *f)
{
    return f->fabric.per_leaf > 0 ? (f->n + f->fabric.per_leaf - 1) / f->fabric.per_leaf : 0;
}

static int rails_of(const struct tp_triage_fleet *f)
{
    return f->fabric.per_leaf > 0 && f->fabric.rails > 1 ? f->fabric.rails : 1;
}

/* a fault's rail in range */
static int check_rail(const char *what, int i, int rail, int nr, tp_error *err)
{
    if (rail >= 0 && rail < nr)
        return 0;
    return tp_error_set(err, TP_EUSAGE, "%s[%d]: rail %d: the fabric has rails 0 to %d", what, i,
                        rail, nr - 1);
}

int tp__sim_fabric_check(const struct tp_triage_fleet *f, tp_error *err)
{
    int nl = leaves_of(f), sp = f->fabric.spines, nr = rails_of(f);
    if (f->fabric.per_leaf < 0 || f->fabric.per_leaf > TP_TRIAGE_MAX_NODES || sp < 0 || sp > 4096)
        return tp_error_set(err, TP_EUSAGE,
                            "fabric: per_leaf %d, spines %d: 1 to %d nodes a "
                            "leaf, 1 to 4096 spines",
                            f->fabric.per_leaf, sp, TP_TRIAGE_MAX_NODES);
    if (f->fabric.rails < 0 || f->fabric.rails > TP_TOPOLOGY_MAX_RAILS)
        return tp_error_set(err, TP_EUSAGE, "fabric: rails %d: 1 to %d", f->fabric.rails,
                            TP_TOPOLOGY_MAX_RAILS);
    if (nl > 1 && sp < 1)
        return tp_error_set(err, TP_EUSAGE, "fabric: %d leaves and no spine to join them", nl);
    if ((f->nswitches || f->nuplinks) && nl == 0)
        return tp_error_set(err, TP_EUSAGE,
                            "slow_switches, slow_uplinks: no fabric to plant "
                            "them on (fabric: {per_leaf: N, spines: M})");
    if (f->nswitches < 0 || f->nswitches > TP_TRIAGE_SIM_MAX_FAULTS || f->nuplinks < 0 ||
        f->nuplinks > TP_TRIAGE_SIM_MAX_FAULTS || f->ncables < 0 ||
        f->ncables > TP_TRIAGE_SIM_MAX_FAULTS)
        return tp_error_set(err, TP_EUSAGE, "at most %d faults of each kind",
                            TP_TRIAGE_SIM_MAX_FAULTS);
    for (int i = 0; i < f->nswitches; i++)
        if (f->slow_switch[i].leaf < 0 || f->slow_switch[i].leaf >= nl ||
            !(f->slow_switch[i].severity > 0 && f->slow_switch[i].severity <= 100))
            return tp_error_set(err, TP_EUSAGE,
                                "slow_switches: leaf %d, severity %g: leaves 0 "
                                "to %d, severity above 0",
                                f->slow_switch[i].leaf, f->slow_switch[i].severity, nl - 1);
    for (int i = 0; i < f->nuplinks; i++)
        if (f->slow_uplink[i].leaf < 0 || f->slow_uplink[i].leaf >= nl ||
            f->slow_uplink[i].spine < 0 || f->slow_uplink[i].spine >= sp ||
            !(f->slow_uplink[i].severity > 0 && f->slow_uplink[i].severity <= 100))
            return tp_error_set(err, TP_EUSAGE,
                                "slow_uplinks: leaf %d, spine %d, severity %g: "
                                "leaves 0 to %d, spines 0 to %d, severity above 0",
                                f->slow_uplink[i].leaf, f->slow_uplink[i].spine,
                                f->slow_uplink[i].severity, nl - 1, sp - 1);
    for (int i = 0; i < f->ncables; i++)
        if (f->cable[i].node < 0 || f->cable[i].node >= f->n ||
            !(f->cable[i].severity > 0 && f->cable[i].severity <= 100))
            return tp_error_set(err, TP_EUSAGE,
                                "bad_cables: node %d, severity %g: nodes 0 to "
                                "%d, severity above 0",
                                f->cable[i].node, f->cable[i].severity, f->n - 1);
    int rc = 0;
    for (int i = 0; rc == 0 && i < f->nswitches; i++)
        rc = check_rail("slow_switches", i, f->slow_switch[i].rail, nr, err);
    for (int i = 0; rc == 0 && i < f->nuplinks; i++)
        rc = check_rail("slow_uplinks", i, f->slow_uplink[i].rail, nr, err);
    for (int i = 0; rc == 0 && i < f->ncables; i++)
        rc = check_rail("bad_cables", i, f->cable[i].rail, nr, err);
    return rc;
}

int tp__sim_fabric_init(struct tp__sim_fabric *fb, const struct tp_triage_fleet *f, tp_error *err)
{
    memset(fb, 0, sizeof *fb);
    fb->rails = 1;
    fb->ncables = f->ncables; /* with a fabric or without: a node's link */
    fb->cable = f->cable;
    if (f->fabric.per_leaf <= 0)
        return 0;
    fb->per_leaf = f->fabric.per_leaf;
    fb->spines = f->fabric.spines > 0 ? f->fabric.spines : 1;
    fb->nleaves = leaves_of(f);
    fb->rails = rails_of(f);
    fb->rng = f->seed ^ 0x726f757465000000ull;
    int rc = tp_topology_fat_tree(f->n, fb->per_leaf, fb->nleaves > 1 ? fb->spines : 0, fb->rails,
                                  &fb->topo, err);
    if (rc)
        return rc;
    size_t nsw = (size_t)fb->nleaves * (size_t)fb->rails; /* switch g * rails + r */
    fb->sw = malloc(sizeof *fb->sw * nsw);
    fb->up = malloc(sizeof *fb->up * nsw * (size_t)fb->spines);
    if (!fb->sw || !fb->up)
        return tp_error_set(err, TP_ENOMEM, "out of memory");
    for (size_t l = 0; l < nsw; l++)
        fb->sw[l] = 1;
    for (size_t k = 0; k < nsw * (size_t)fb->spines; k++)
        fb->up[k] = 1;
    for (int i = 0; i < f->nswitches; i++) {
        int l = f->slow_switch[i].leaf * fb->rails + f->slow_switch[i].rail;
        fb->sw[l] = fmax(fb->sw[l], 1 + f->slow_switch[i].severity);
    }
    for (int i = 0; i < f->nuplinks; i++) {
        size_t l = (size_t)f->slow_uplink[i].leaf * (size_t)fb->rails + (size_t)f->slow_uplink[i].rail;
        size_t k = l * (size_t)fb->spines + (size_t)f->slow_uplink[i].spine;
        fb->up[k] = fmax(fb->up[k], 1 + f->slow_uplink[i].severity);
        fb->any_uplink = true;
    }
    return 0;
}

void tp__sim_fabric_free(struct tp__sim_fabric *fb)
{
    tp_topology_free(fb->topo);
    free(fb->sw);
    free(fb->up);
    memset(fb, 0, sizeof *fb);
}

/* rail r's share of a test between a and b: its cables, its two leaves
 * and, across them, the uplinks its two flows took */
static double rail_factor(struct tp__sim_fabric *fb, int a, int b, int r)
{
    double w = 1;
    for (int i = 0; i < fb->ncables; i++)
        if (fb->cable[i].rail == r && (fb->cable[i].node == a || fb->cable[i].node == b))
            w = fmax(w, 1 + fb->cable[i].severity);
    if (!fb->topo)
        return w;
    int ga = a / fb->per_leaf, gb = b / fb->per_leaf;
    size_t la = (size_t)ga * (size_t)fb->rails + (size_t)r, lb = (size_t)gb * (size_t)fb->rails + (size_t)r;
    w = fmax(w, fmax(fb->sw[la], fb->sw[lb]));
    if (ga == gb || !fb->any_uplink)
        return w;
    for (int dir = 0; dir < 2; dir++) { /* a to b, then b to a: a spine each */
        size_t s = (size_t)(tp__triage_rand(&fb->rng) % (uint64_t)fb->spines);
        w = fmax(w, fmax(fb->up[la * fb->spines + s], fb->up[lb * fb->spines + s]));
    }
    return w;
}

double tp__sim_fabric_factor(struct tp__sim_fabric *fb, int a, int b, uint64_t rails)
{
    if (!fb->topo && fb->ncables == 0)
        return 1;
    double w = 1;
    for (int r = 0; r < fb->rails; r++) /* the slowest share */
        if (rails == 0 || (rails >> r & 1))
            w = fmax(w, rail_factor(fb, a, b, r));
    return w;
}

/* the round kind named the entry with that id field (and that rail, when
 * rail >= 0), and when */
static bool named_as(const json_t *named, const char *kind, const char *field, int id, int rail,
                     int *round)
{
    size_t i;
    const json_t *e;
    json_array_foreach(named, i, e)
    {
        const char *k = json_string_value(json_object_get(e, "kind"));
        const json_t *r = json_object_get(e, "rail");
        if (k && strcmp(k, kind) == 0 && json_integer_value(json_object_get(e, field)) == id &&
            (rail < 0 || (json_is_integer(r) && json_integer_value(r) == rail))) {
            *round = (int)json_integer_value(json_object_get(e, "round"));
            return true;
        }
    }
    return false;
}

/* entry (a planted fault, its "kind" set) scored: named when an entry of
 * its kind names id as field, on its rail when rail >= 0 */
static void tally(const json_t *named, json_t *planted, const char *field, int id, int rail,
                  json_t *entry, int *hits, bool *all, int *last)
{
    int r = 0;
    bool hit =
        named_as(named, json_string_value(json_object_get(entry, "kind")), field, id, rail, &r);
    *hits += hit;
    *all &= hit;
    *last = hit && r > *last ? r : *last;
    json_object_set_new(entry, "named", json_boolean(hit));
    json_array_append_new(planted, entry);
}

void tp__sim_fabric_score(const struct tp_triage_fleet *f, const json_t *named, json_t *planted,
                          int *hits, bool *all, int *last)
{
    /* a generated leaf's switch index: its group's times the rails, plus
     * its rail; with rails, a name counts on the right rail only */
    int nr = rails_of(f);
    for (int i = 0; i < f->nswitches; i++) {
        const struct tp_triage_slow_switch *x = &f->slow_switch[i];
        tally(named, planted, "switch", x->leaf * nr + x->rail, nr > 1 ? x->rail : -1,
              json_pack("{s:s, s:i, s:i, s:f}", "kind", "switch", "leaf", x->leaf, "rail", x->rail,
                        "severity", x->severity),
              hits, all, last);
    }
    for (int i = 0; i < f->nuplinks; i++) {
        const struct tp_triage_slow_uplink *x = &f->slow_uplink[i];
        tally(named, planted, "switch", x->leaf * nr + x->rail, nr > 1 ? x->rail : -1,
              json_pack("{s:s, s:i, s:i, s:i, s:f}", "kind", "uplink", "leaf", x->leaf, "rail",
                        x->rail, "spine", x->spine, "severity", x->severity),
              hits, all, last);
    }
    for (int i = 0; i < f->ncables; i++)
        tally(named, planted, "node", f->cable[i].node, nr > 1 ? f->cable[i].rail : -1,
              json_pack("{s:s, s:i, s:i, s:f}", "kind", "cable", "node", f->cable[i].node, "rail",
                        f->cable[i].rail, "severity", f->cable[i].severity),
              hits, all, last);
}
