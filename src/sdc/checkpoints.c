/* The SDC screen's chains as kept (include/tp/sdc.h): which steps are
 * checkpoints, a chain's checkpoints in memory and in a document.
 *
 * The rule depends on the step alone, never on the run's length: every
 * step up to E = TP_SDC_EXACT_STEPS, then E checkpoints at a stride of 2,
 * E at 4, and so on (level L holds the steps E (2^L - 1) + k 2^L, k = 1 ..
 * E). So a run of any length keeps about E log2(steps / E) hashes, and two
 * runs of different lengths (soaks by time on nodes of different speeds)
 * have the same checkpoints on the steps they share: the first checkpoint
 * that differs bounds the step that diverged. In a document the steps are
 * implied by the rule: the hashes alone, 16 hex digits each, run together
 * (about 100 KB for a day's soak). */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sdc_int.h"

#define E ((uint64_t)TP_SDC_EXACT_STEPS)

uint64_t tp_sdc_checkpoint_step(size_t i)
{
    uint64_t level = i / E, k = i % E + 1;
    return E * ((UINT64_C(1) << level) - 1) + (k << level);
}

bool tp_sdc_is_checkpoint(uint64_t step)
{
    for (unsigned level = 0; level < 40; level++) {
        uint64_t base = E * ((UINT64_C(1) << level) - 1),
                 top = E * ((UINT64_C(1) << (level + 1)) - 1);
        if (step > base && step <= top)
            return (step - base) % (UINT64_C(1) << level) == 0;
    }
    return false;
}

void tp_sdc_chain_free(struct tp_sdc_chain *c)
{
    if (!c)
        return;
    free(c->step);
    free(c->hash);
    memset(c, 0, sizeof *c);
}

int tp__sdc_keep(struct tp_sdc_chain *c, uint64_t s, const unsigned char h[32], tp_error *err)
{
    if (c->n == c->cap) {
        size_t cap = c->cap ? 2 * c->cap : 64;
        uint64_t *step = realloc(c->step, cap * sizeof *step);
        if (step)
            c->step = step;
        uint64_t *hash = step ? realloc(c->hash, cap * sizeof *hash) : NULL;
        if (!hash)
            return tp_error_set(err, TP_ENOMEM, "out of memory");
        c->hash = hash;
        c->cap = cap;
    }
    uint64_t v = 0;
    for (int b = 0; b < 8; b++)
        v = v << 8 | h[b];
    c->step[c->n] = s;
    c->hash[c->n++] = v;
    c->steps = s;
    memcpy(c->final, h, 32);
    return 0;
}

int tp_sdc_chain_run(uint64_t seed, uint64_t steps, const struct tp_sdc_fault *fault, int thread,
                     struct tp_sdc_chain *out, tp_error *err)
{
    memset(out, 0, sizeof *out);
    if (steps < 1 || steps > TP_SDC_MAX_STEPS)
        return tp_error_set(err, TP_EUSAGE, "steps: %" PRIu64 " is out of range 1..%" PRIu64, steps,
                            TP_SDC_MAX_STEPS);
    struct tp__sdc_state st;
    int rc = tp__sdc_init(&st, seed, NULL, err);
    for (uint64_t s = 1; rc == 0 && s <= steps; s++) {
        rc = tp__sdc_step(&st, s, tp__sdc_flip(fault, thread, -1, s), err);
        if (rc == 0 && (tp_sdc_is_checkpoint(s) || s == steps))
            rc = tp__sdc_keep(out, s, st.h, err);
    }
    tp__sdc_fini(&st);
    if (rc)
        tp_sdc_chain_free(out);
    return rc;
}

json_t *tp_sdc_chain_json(const struct tp_sdc_chain *c)
{
    char *hex = malloc(16 * c->n + 65);
    if (!hex)
        return NULL;
    for (size_t i = 0; i < c->n; i++)
        snprintf(hex + 16 * i, 17, "%016" PRIx64, c->hash[i]);
    char final[65];
    for (int b = 0; b < 32; b++)
        snprintf(final + 2 * b, 3, "%02x", c->final[b]);
    json_t *j =
        json_pack("{s:I, s:s, s:s}", "steps", (json_int_t)c->steps, "hashes", hex, "final", final);
    free(hex);
    return j;
}

/* hex of exactly 2 * len digits into out[len]. */
static bool unhex(const char *s, unsigned char *out, size_t len)
{
    for (size_t i = 0; i < 2 * len; i++)
        if (!s[i] || !strchr("0123456789abcdef", s[i]))
            return false;
    for (size_t i = 0; i < len; i++) {
        unsigned v = 0;
        sscanf(s + 2 * i, "%2x", &v);
        out[i] = (unsigned char)v;
    }
    return true;
}

int tp_sdc_chain_parse(const json_t *j, struct tp_sdc_chain *out, tp_error *err)
{
    memset(out, 0, sizeof *out);
    const char *hex = json_string_value(json_object_get(j, "hashes"));
    const char *final = json_string_value(json_object_get(j, "final"));
    json_int_t steps = json_integer_value(json_object_get(j, "steps"));
    size_t len = hex ? strlen(hex) : 0, n = len / 16;
    unsigned char h[32] = {0}, last[32];
    if (!final || strlen(final) != 64 || !unhex(final, last, 32))
        return tp_error_set(err, TP_EPROTO, "chain: no final hash of 64 hex digits");
    /* the rule's checkpoints below steps, then steps itself */
    if (steps < 1 || (uint64_t)steps > TP_SDC_MAX_STEPS || n == 0 || len % 16 ||
        (n > 1 && tp_sdc_checkpoint_step(n - 2) >= (uint64_t)steps) ||
        tp_sdc_checkpoint_step(n - 1) < (uint64_t)steps)
        return tp_error_set(err, TP_EPROTO,
                            "chain: %zu hashes are not the checkpoints of %lld "
                            "steps",
                            n, (long long)steps);
    for (size_t i = 0; i < n; i++) {
        if (!unhex(hex + 16 * i, h, 8)) {
            tp_sdc_chain_free(out);
            return tp_error_set(err, TP_EPROTO, "chain: hash %zu is not 16 hex digits", i);
        }
        if (tp__sdc_keep(out, i + 1 < n ? tp_sdc_checkpoint_step(i) : (uint64_t)steps, h, err)) {
            tp_sdc_chain_free(out);
            return TP_ENOMEM;
        }
    }
    memcpy(out->final, last, 32);
    return 0;
}
