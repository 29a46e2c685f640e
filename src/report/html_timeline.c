/* The HTML report's step timeline: the first steps of a step document's
 * results.timeline (src/step/trace.c) as bars on a time axis, a row per
 * rank and thread (the training loop, the comm thread's buckets, the
 * loader, the checkpoint writer), every rank on rank 0's clock. A bar's
 * colour is its span's (a table, by the span's name), and its tooltip says
 * the rank, step, span and duration. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "tp/json.h"

#include "html_int.h"

/* a span by the start of its name: the first row that matches wins */
static const struct {
    const char *prefix, *label, *color;
} kinds[] = {
    {"injected", "injected delay", "#9c755f"},
    {"data wait", "data wait", "#f28e2b"},
    {"compute", "compute", "#4e79a7"},
    {"exposed comm", "exposed comm", "#e15759"},
    {"update", "update", "#b07aa1"},
    {"checkpoint write", "checkpoint write", "#8cd17d"},
    {"checkpoint", "checkpoint stall", "#59a14f"},
    {"allreduce", "allreduce bucket", "#76b7b2"},
    {"read batch", "read batch", "#edc948"},
};
#define NKINDS (sizeof kinds / sizeof *kinds)

static size_t kind_of(const char *name)
{
    for (size_t k = 0; k < NKINDS; k++)
        if (name && strncmp(name, kinds[k].prefix, strlen(kinds[k].prefix)) == 0)
            return k;
    return NKINDS;
}

#define ROWS_MAX 64 /* rank x thread rows drawn */
#define W 960
#define LEFT 170 /* the rows' labels */
#define RIGHT 20
#define TOP 44 /* the legend */
#define ROW 18
#define BAR 14

void tp__html_timeline(struct svg_buf *b, const json_t *timeline)
{
    const json_t *ranks = get(timeline, "ranks"), *tracks = get(timeline, "tracks");
    size_t nr = json_array_size(ranks), nt = json_array_size(tracks);
    if (!nr || !nt)
        return;
    /* the rows: every (rank, track) with an event; the time range */
    int row_rank[ROWS_MAX], row_track[ROWS_MAX];
    size_t rows = 0;
    double end = 0;
    bool used[NKINDS] = {0};
    for (size_t i = 0; i < nr && rows < ROWS_MAX; i++) {
        const json_t *ev = get(json_array_get(ranks, i), "events");
        for (size_t t = 0; t < nt && rows < ROWS_MAX; t++) {
            bool any = false;
            for (size_t e = 0; e < json_array_size(ev); e++) {
                const json_t *x = json_array_get(ev, e);
                if (json_integer_value(json_array_get(x, 0)) != (json_int_t)t)
                    continue;
                any = true;
                end = fmax(end, (double)json_integer_value(json_array_get(x, 3)) +
                                    (double)json_integer_value(json_array_get(x, 4)));
                size_t k = kind_of(json_string_value(json_array_get(x, 1)));
                if (k < NKINDS)
                    used[k] = true;
            }
            if (any) {
                row_rank[rows] = (int)json_integer_value(get(json_array_get(ranks, i), "rank"));
                row_track[rows++] = (int)t;
            }
        }
    }
    if (!rows || !(end > 0))
        return;
    struct svg_axis ax = {.scale = SVG_LIN};
    const char *unit;
    tp__svg_time_unit(end, &ax.div, &unit);
    tp__svg_axis_fit(&ax, 0, end, true);
    double x0 = LEFT, w = W - LEFT - RIGHT, H = TOP + (double)rows * ROW + 40;
#define X(v) (x0 + w * ((v) - ax.lo) / (ax.hi - ax.lo))
    tp__svg_printf(b,
                   "<figure><figcaption>The first %lld steps of every thread, rank 0's clock "
                   "(%lld of %lld ranks; hover a bar for its step and duration)</figcaption>\n"
                   "<svg class=\"plot timeline\" data-kind=\"timeline\" viewBox=\"0 0 %d %.0f\" "
                   "width=\"%d\" height=\"%.0f\" role=\"img\"><title>step timeline</title>\n",
                   (long long)json_integer_value(get(timeline, "steps")), (long long)nr,
                   (long long)json_integer_value(get(timeline, "ranks_total")), W, H, W, H);
    /* the legend: the kinds drawn */
    double lx = x0;
    for (size_t k = 0; k < NKINDS; k++) {
        if (!used[k])
            continue;
        tp__svg_printf(b,
                       "<rect x=\"%.1f\" y=\"10\" width=\"10\" height=\"10\" fill=\"%s\"/>"
                       "<text x=\"%.1f\" y=\"19\" font-size=\"11\">%s</text>\n",
                       lx, kinds[k].color, lx + 14, kinds[k].label);
        lx += 30 + 6.6 * (double)strlen(kinds[k].label);
    }
    /* the time axis: grid and ticks */
    double axis_y = TOP + (double)rows * ROW + 4;
    for (double v = ax.lo; v <= ax.hi + ax.step * 1e-9 && ax.step > 0; v += ax.step) {
        tp__svg_printf(b,
                       "<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#ddd\"/>"
                       "<text x=\"%.1f\" y=\"%.1f\" font-size=\"11\" "
                       "text-anchor=\"middle\">%g</text>\n",
                       X(v), TOP - 4, X(v), axis_y, X(v), axis_y + 14, v / ax.div);
    }
    tp__svg_printf(b,
                   "<text class=\"at\" x=\"%.1f\" y=\"%.1f\" font-size=\"11\" "
                   "text-anchor=\"middle\">time since rank 0 started the run (%s)</text>\n"
                   "<text class=\"at\" x=\"12\" y=\"%.1f\" font-size=\"11\" "
                   "text-anchor=\"middle\" transform=\"rotate(-90 12 %.1f)\">rank and thread "
                   "(a row each)</text>\n",
                   x0 + w / 2, axis_y + 30, unit, TOP + (double)rows * ROW / 2,
                   TOP + (double)rows * ROW / 2);
    /* the rows */
    for (size_t q = 0; q < rows; q++) {
        double y = TOP + (double)q * ROW;
        const json_t *rk = NULL;
        for (size_t i = 0; i < nr && !rk; i++)
            if (json_integer_value(get(json_array_get(ranks, i), "rank")) == row_rank[q])
                rk = json_array_get(ranks, i);
        tp__svg_printf(b, "<text x=\"%d\" y=\"%.1f\" font-size=\"11\" text-anchor=\"end\">rank %d ",
                       LEFT - 6, y + BAR - 3, row_rank[q]);
        tp__svg_esc(b, json_string_value(json_array_get(tracks, (size_t)row_track[q])));
        tp__svg_emit(b, "</text>\n");
        const json_t *ev = get(rk, "events");
        for (size_t e = 0; e < json_array_size(ev); e++) {
            const json_t *x = json_array_get(ev, e);
            if (json_integer_value(json_array_get(x, 0)) != row_track[q])
                continue;
            const char *name = json_string_value(json_array_get(x, 1));
            double s = (double)json_integer_value(json_array_get(x, 3)),
                   d = (double)json_integer_value(json_array_get(x, 4));
            size_t k = kind_of(name);
            char dur[32];
            tp__svg_printf(b,
                           "<rect class=\"span\" x=\"%.2f\" y=\"%.1f\" width=\"%.2f\" height=\"%d\" "
                           "fill=\"%s\"><title>rank %d, step %lld: ",
                           X(s), y, fmax(X(s + d) - X(s), 0.5), BAR,
                           k < NKINDS ? kinds[k].color : "#bab0ac", row_rank[q],
                           (long long)json_integer_value(json_array_get(x, 2)));
            tp__svg_esc(b, name);
            tp__svg_printf(b, ", %s</title></rect>\n", tp__html_fmt_ns(d, dur, sizeof dur));
        }
    }
#undef X
    tp__svg_emit(b, "</svg></figure>\n");
}
