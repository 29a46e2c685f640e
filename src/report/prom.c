/* Metric rows as a Prometheus textfile for node_exporter's textfile
 * collector: gauges named by Prometheus conventions (base units, the unit
 * as a suffix: seconds, bytes per second), labels escaped, every sample of
 * a name together under its HELP and TYPE, and the file replaced
 * atomically so the collector never scrapes half of it. */
#include "tp/judge.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "tp/atomicfile.h"
#include "tp/json.h"
#include "tp/units.h"

/* ---- names ---- */

struct part {
    const char *unit, *word;
    double mult, div; /* to the word's base unit: times mult, divided by div */
};

/* A unit's numerator and denominator parts; anything else keeps its own
 * name (sanitised) and scale 1. Powers of ten divide rather than multiply
 * by their inverse, so 52000 ns is 5.2e-05 s, not 5.2000000000000004e-05. */
static const struct part num_parts[] = {
    {"ns", "seconds", 1, 1e9}, {"us", "seconds", 1, 1e6}, {"ms", "seconds", 1, 1e3},
    {"s", "seconds", 1, 1},    {"h", "seconds", 3600, 1}, {"B", "bytes", 1, 1},
    {"GB", "bytes", 1e9, 1},   {"$", "dollars", 1, 1},    {"1", "", 1, 1},
    {"msg", "messages", 1, 1},
};
static const struct part den_parts[] = {
    {"s", "second", 1, 1},  {"ns", "second", 1, 1e9}, {"B", "byte", 1, 1},
    {"GB", "byte", 1e9, 1}, {"msg", "message", 1, 1},
};

/* Append s to out (cap bytes) with every character outside [a-zA-Z0-9_]
 * made '_'. */
static void sanitize(char *out, size_t cap, const char *s, size_t len)
{
    size_t n = strlen(out);
    for (size_t i = 0; i < len && n + 1 < cap; i++) {
        char ch = s[i];
        bool ok = (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
                  (ch >= '0' && ch <= '9') || ch == '_';
        out[n++] = ok ? ch : '_';
    }
    out[n] = '\0';
}

static struct part part_of(const struct part *t, size_t nt, const char *s, size_t len, char *word,
                           size_t cap)
{
    for (size_t i = 0; i < nt; i++) {
        if (strlen(t[i].unit) == len && strncmp(t[i].unit, s, len) == 0) {
            snprintf(word, cap, "%s", t[i].word);
            return t[i];
        }
    }
    word[0] = '\0';
    sanitize(word, cap, s, len);
    return (struct part){s, word, 1, 1};
}

/* The suffix for unit ("seconds", "bytes_per_second", "" for none) and the
 * factors that convert a value into it: times *mult, divided by *div. */
static void unit_suffix(const char *unit, char *suffix, size_t cap, double *mult, double *div)
{
    suffix[0] = '\0';
    *mult = *div = 1;
    if (!unit || !*unit)
        return;
    const char *slash = strchr(unit, '/');
    char num[64], den[64];
    struct part n = part_of(num_parts, sizeof num_parts / sizeof num_parts[0], unit,
                            slash ? (size_t)(slash - unit) : strlen(unit), num, sizeof num);
    struct part d = {"", "", 1, 1};
    if (slash) {
        d = part_of(den_parts, sizeof den_parts / sizeof den_parts[0], slash + 1, strlen(slash + 1),
                    den, sizeof den);
        snprintf(suffix, cap, "%s%sper_%s", num, *num ? "_" : "", den);
    } else {
        snprintf(suffix, cap, "%s", num);
    }
    *mult = n.mult * d.div;
    *div = n.div * d.mult;
}

static bool ends_with(const char *s, const char *tail)
{
    size_t a = strlen(s), b = strlen(tail);
    return a >= b && strcmp(s + a - b, tail) == 0;
}

/* trainpath_<metric>_<suffix>, the suffix left out where the name already
 * says it ("io.commit.per_s" in 1/s is trainpath_io_commit_per_second). */
static void prom_name(const char *metric, const char *suffix, char *out, size_t cap)
{
    snprintf(out, cap, "trainpath_");
    sanitize(out, cap, metric, strlen(metric));
    if (ends_with(suffix, "per_second") && ends_with(out, "per_s")) {
        size_t n = strlen(out) - strlen("per_s");
        snprintf(out + n, cap - n, "per_second");
    }
    if (!*suffix || ends_with(out, suffix))
        return;
    size_t n = strlen(out);
    snprintf(out + n, cap - n, "_%s", suffix);
}

/* A label name: [a-zA-Z_][a-zA-Z0-9_]*, not starting "__" (reserved). */
static void label_name(const char *s, char *out, size_t cap)
{
    out[0] = '\0';
    while (s[0] == '_' && s[1] == '_')
        s++;
    if (*s >= '0' && *s <= '9')
        snprintf(out, cap, "_");
    sanitize(out, cap, s, strlen(s));
    if (!*out)
        snprintf(out, cap, "_");
}

/* ---- writing ---- */

static void put_escaped(FILE *f, const char *s, bool quote)
{
    for (; *s; s++) {
        if (*s == '\\')
            fputs("\\\\", f);
        else if (*s == '\n')
            fputs("\\n", f);
        else if (*s == '"' && quote)
            fputs("\\\"", f);
        else
            fputc(*s, f);
    }
}

/* The shortest decimal that reads back as v. */
static void put_value(FILE *f, double v)
{
    if (isnan(v)) {
        fputs("NaN", f);
        return;
    }
    if (isinf(v)) {
        fputs(v > 0 ? "+Inf" : "-Inf", f);
        return;
    }
    char buf[40];
    for (int prec = 15; prec <= 17; prec++) {
        snprintf(buf, sizeof buf, "%.*g", prec, v);
        if (strtod(buf, NULL) == v)
            break;
    }
    fputs(buf, f);
}

/* The label set of row, as the sample line writes it: {a="1",host="n1"},
 * or "" when there are none. malloc'd; NULL when out of memory. */
static char *label_text(const json_t *row, const char *host)
{
    char *s = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&s, &len);
    if (!f)
        return NULL;
    const char *k;
    const json_t *v;
    int n = 0;
    bool has_host = false;
    json_object_foreach((json_t *)json_object_get(row, "labels"), k, v) {
        char name[128];
        label_name(k, name, sizeof name);
        has_host |= strcmp(name, "host") == 0;
        fprintf(f, "%s%s=\"", n++ ? "," : "{", name);
        put_escaped(f, json_is_string(v) ? json_string_value(v) : "", true);
        fputc('"', f);
    }
    const char *h = json_string_value(json_object_get(row, "host"));
    if (!h)
        h = host;
    if (h && !has_host) {
        fprintf(f, "%shost=\"", n++ ? "," : "{");
        put_escaped(f, h, true);
        fputc('"', f);
    }
    if (n)
        fputc('}', f);
    if (fclose(f) != 0) {
        free(s);
        return NULL;
    }
    return s;
}

int tp_prom_render(const json_t *rows, const char *host, char **text, size_t *len, tp_error *err)
{
    *text = NULL;
    *len = 0;
    if (!json_is_array(rows))
        return tp_error_set(err, TP_EUSAGE, "prom: the rows are not an array");
    /* families: name -> {"help", "series": {labels: value}}, in first-seen order */
    json_t *fam = json_object();
    if (!fam)
        goto oom;
    size_t i;
    const json_t *row;
    json_array_foreach(rows, i, row) {
        const char *metric = json_string_value(json_object_get(row, "metric"));
        const json_t *value = json_object_get(row, "value");
        if (!metric || !json_is_number(value))
            continue;
        const char *unit = json_string_value(json_object_get(row, "unit")) ?: "";
        char suffix[160], name[400];
        double mult, div;
        unit_suffix(unit, suffix, sizeof suffix, &mult, &div);
        bool scaled = mult != 1 || div != 1;
        /* a finite value can overflow on the way to the base unit (1e300
         * GB/s): JSON holds no infinity, and the whole render failed as
         * "out of memory" (caught with fuzz/fuzz_report). Rows carry finite
         * values only; such a sample is left out as well. */
        double v = json_number_value(value) * mult / div;
        if (!isfinite(v))
            continue;
        prom_name(metric, suffix, name, sizeof name);
        json_t *f = json_object_get(fam, name);
        if (!f) {
            const char *better = json_string_value(json_object_get(row, "better"));
            char help[700];
            snprintf(help, sizeof help, "trainpath %s%s%s%s%s%s%s", metric, *unit ? ", in " : "",
                     *unit ? unit : "", scaled ? " converted to " : "", scaled ? suffix : "",
                     better ? "; better: " : "", better ? better : "");
            tp_utf8_trim(help); /* a long unit cut inside a character */
            f = json_pack("{s:s, s:{}}", "help", help, "series");
            if (!f || json_object_set_new(fam, name, f))
                goto oom;
        }
        char *labels = label_text(row, host);
        if (!labels || json_object_set_new(json_object_get(f, "series"), labels, json_real(v))) {
            free(labels);
            goto oom;
        }
        free(labels);
    }
    char *s = NULL;
    size_t n = 0;
    FILE *out = open_memstream(&s, &n);
    if (!out)
        goto oom;
    const char *name;
    json_t *f;
    json_object_foreach(fam, name, f) {
        fprintf(out, "# HELP %s ", name);
        put_escaped(out, json_string_value(json_object_get(f, "help")), false);
        fprintf(out, "\n# TYPE %s gauge\n", name);
        const char *labels;
        json_t *v;
        json_object_foreach(json_object_get(f, "series"), labels, v) {
            fprintf(out, "%s%s ", name, labels);
            put_value(out, json_real_value(v));
            fputc('\n', out);
        }
    }
    if (fclose(out) != 0) {
        free(s);
        goto oom;
    }
    json_decref(fam);
    *text = s;
    *len = n;
    return 0;
oom:
    json_decref(fam);
    return tp_error_set(err, TP_ENOMEM, "prom: out of memory");
}

int tp_prom_write(const char *path, const json_t *rows, const char *host, tp_error *err)
{
    char *text;
    size_t len;
    int rc = tp_prom_render(rows, host, &text, &len, err);
    if (rc)
        return rc;
    rc = tp_write_atomic(path, text, len, err);
    free(text);
    return rc;
}
