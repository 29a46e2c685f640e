/* The SVG plotter of the HTML report, and the text buffer the page is
 * written into (svg.h says how they are used).
 *
 * Plots are drawn by hand, as text: an axis is fitted to its data (decades,
 * powers of two or a 1-2-5 step), ticks are laid on it, and every point is
 * mapped to pixels and written with one decimal, so the same data give the
 * same bytes. One <path> a series (and a layer of bars) keeps the page
 * small. */
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "svg.h"
#include "tp/units.h"

/* ---- output buffer ---- */

void tp__svg_put(struct svg_buf *b, const char *s, size_t n)
{
    if (b->oom)
        return;
    if (b->len + n + 1 > b->cap) {
        size_t cap = b->cap ? b->cap : 65536;
        while (b->len + n + 1 > cap)
            cap *= 2;
        char *p = realloc(b->p, cap);
        if (!p) {
            b->oom = true;
            return;
        }
        b->p = p;
        b->cap = cap;
    }
    memcpy(b->p + b->len, s, n);
    b->len += n;
    b->p[b->len] = '\0';
}

void tp__svg_emit(struct svg_buf *b, const char *s)
{
    tp__svg_put(b, s, strlen(s));
}

void tp__svg_printf(struct svg_buf *b, const char *fmt, ...)
{
    char small[512];
    va_list ap;
    va_start(ap, fmt);
    int k = vsnprintf(small, sizeof small, fmt, ap);
    va_end(ap);
    if (k < 0)
        return;
    if ((size_t)k < sizeof small) {
        tp__svg_put(b, small, (size_t)k);
        return;
    }
    char *big = malloc((size_t)k + 1);
    if (!big) {
        b->oom = true;
        return;
    }
    va_start(ap, fmt);
    vsnprintf(big, (size_t)k + 1, fmt, ap);
    va_end(ap);
    tp__svg_put(b, big, (size_t)k);
    free(big);
}

/* the five characters HTML and SVG give meaning */
void tp__svg_esc(struct svg_buf *b, const char *s)
{
    if (!s)
        return;
    const char *run = s;
    for (; *s; s++) {
        const char *rep = NULL;
        switch (*s) {
        case '&': rep = "&amp;"; break;
        case '<': rep = "&lt;"; break;
        case '>': rep = "&gt;"; break;
        case '"': rep = "&quot;"; break;
        case '\'': rep = "&#39;"; break;
        default: continue;
        }
        tp__svg_put(b, run, (size_t)(s - run));
        tp__svg_emit(b, rep);
        run = s + 1;
    }
    tp__svg_put(b, run, (size_t)(s - run));
}

void tp__svg_time_unit(double ns, double *div, const char **unit)
{
    static const char *const u[] = {"ns", "us", "ms", "s"};
    int k = 0;
    double d = 1;
    while (k < 3 && ns >= d * 1000) {
        d *= 1000;
        k++;
    }
    *div = d;
    *unit = u[k];
}

/* ---- SVG plotting ---- */

static const char *const palette[] = {"#1f77b4", "#d62728", "#2ca02c", "#ff7f0e",
                                      "#9467bd", "#8c564b", "#e377c2", "#17becf"};
#define PALETTE (sizeof palette / sizeof palette[0])

const char *tp__svg_color(size_t k)
{
    return palette[k % PALETTE];
}

void tp__svg_legend_add(struct svg_legend *lg, const char *name, const char *color, bool block)
{
    if (lg->n < SVG_MAX_SERIES) {
        lg->name[lg->n] = name;
        lg->color[lg->n] = color;
        lg->block[lg->n] = block;
        lg->n++;
    }
}

static double nice(double x)
{
    double e = pow(10, floor(log10(x))), f = x / e;
    return (f <= 1 ? 1 : f <= 2 ? 2 : f <= 5 ? 5 : 10) * e;
}

void tp__svg_axis_fit(struct svg_axis *a, double lo, double hi, bool zero)
{
    if (!(a->div > 0))
        a->div = 1;
    /* far beyond any measurement, and the scale arithmetic stays finite */
    lo = fmax(fmin(lo, 1e300), -1e300);
    hi = fmax(fmin(hi, 1e300), -1e300);
    if (a->scale != SVG_LIN) {
        if (!(lo > 0) || !isfinite(lo))
            lo = hi > 0 && isfinite(hi) ? hi : 1;
        if (!(hi >= lo) || !isfinite(hi))
            hi = lo;
        if (a->scale == SVG_LOG10) {
            a->lo = pow(10, floor(log10(lo) + 1e-9));
            a->hi = pow(10, ceil(log10(hi) - 1e-9));
            if (a->hi <= a->lo)
                a->hi = a->lo * 10;
        } else {
            a->lo = exp2(floor(log2(lo) + 1e-9));
            a->hi = exp2(ceil(log2(hi) - 1e-9));
            if (a->hi <= a->lo)
                a->hi = a->lo * 2;
        }
        return;
    }
    if (!isfinite(lo) || !isfinite(hi) || lo > hi)
        lo = 0, hi = 1;
    if (zero) {
        lo = fmin(lo, 0);
        hi = fmax(hi, 0);
    }
    if (hi - lo <= fabs(hi) * 1e-12)
        hi = lo == 0 ? 1 : lo + fabs(lo) * 0.1;
    a->step = nice((hi - lo) / 5);
    a->lo = floor(lo / a->step + 1e-9) * a->step;
    a->hi = ceil(hi / a->step - 1e-9) * a->step;
}

static double tr(const struct svg_axis *a, double v)
{
    return a->scale == SVG_LIN ? v : a->scale == SVG_LOG10 ? log10(v) : log2(v);
}

/* position of v along the axis, 0..1, clamped */
static double axis_pos(const struct svg_axis *a, double v)
{
    if (a->scale != SVG_LIN && !(v > 0))
        return 0;
    double f = (tr(a, v) - tr(a, a->lo)) / (tr(a, a->hi) - tr(a, a->lo));
    return f < 0 ? 0 : f > 1 ? 1 : f;
}

static double px(const struct svg_plot *p, double x)
{
    return p->x0 + axis_pos(&p->x, x) * p->w;
}

static double py(const struct svg_plot *p, double y)
{
    return p->y0 + p->h - axis_pos(&p->y, y) * p->h;
}

static bool drawable(const struct svg_axis *a, double v)
{
    return isfinite(v) && (a->scale == SVG_LIN || v > 0);
}

static void tick_label(const struct svg_axis *a, double v, char *buf, size_t cap)
{
    if (a->fmt == SVG_SIZE) {
        tp_fmt_size((uint64_t)llround(v), buf, cap);
        return;
    }
    double x = v / a->div;
    if (fabs(x) < 1e-12 * fmax(fabs(a->hi), fabs(a->lo)) / a->div)
        x = 0;
    if (x != 0 && (fabs(x) >= 1e6 || fabs(x) < 1e-3)) {
        int e = (int)floor(log10(fabs(x)) + 1e-9);
        double m = x / pow(10, e);
        snprintf(buf, cap, "%.3ge%d", m, e);
    } else {
        snprintf(buf, cap, "%.6g", x);
    }
}

struct tick {
    double v;
    bool label; /* labelled, with a full grid line */
};

/* The ticks of an axis, at most cap. */
static size_t ticks(const struct svg_axis *a, struct tick *t, size_t cap)
{
    size_t n = 0;
    if (a->scale == SVG_LIN) {
        for (int i = 0; n < cap; i++) {
            double v = a->lo + i * a->step;
            if (v > a->hi + a->step * 1e-6)
                break;
            t[n++] = (struct tick){v, true};
        }
    } else if (a->scale == SVG_LOG10) {
        int d0 = (int)lround(log10(a->lo)), d1 = (int)lround(log10(a->hi));
        int decades = d1 - d0, stride = decades > 8 ? 2 : 1;
        for (int d = d0; d <= d1 && n < cap; d++) {
            double v = pow(10, d);
            t[n++] = (struct tick){v, (d - d0) % stride == 0};
            for (int m = 2; m <= 9 && d < d1 && decades <= 6 && n < cap; m++)
                t[n++] = (struct tick){m * v, decades <= 2 && (m == 2 || m == 5)};
        }
    } else {
        int e0 = (int)lround(log2(a->lo)), e1 = (int)lround(log2(a->hi));
        int stride = (e1 - e0) / 8 + 1;
        for (int e = e0; e <= e1 && n < cap; e++)
            t[n++] = (struct tick){exp2(e), (e - e0) % stride == 0};
    }
    return n;
}

void tp__svg_plot_begin(struct svg_plot *p, struct svg_buf *b, const char *kind, const char *title,
                        int W, int H, const struct svg_legend *lg)
{
    const double right = 24, bottom = 46, row = 17;
    struct tick t[160];
    char lab[48];
    /* room on the left for the widest y label (about 7 px a character) and the title */
    size_t widest = 1, n = ticks(&p->y, t, 160);
    for (size_t i = 0; i < n; i++) {
        tick_label(&p->y, t[i].v, lab, sizeof lab);
        widest = t[i].label && strlen(lab) > widest ? strlen(lab) : widest;
    }
    const double left = 30 + 7 * (double)widest;
    /* legend entries flow left to right, wrapping; measured roughly at 6.6 px a character */
    double lx = left, ly = 16;
    double ex[SVG_MAX_SERIES], ey[SVG_MAX_SERIES];
    for (size_t i = 0; lg && i < lg->n; i++) {
        double wd = 24 + 6.6 * (double)strlen(lg->name[i]) + 14;
        if (lx > left && lx + wd > W - right) {
            lx = left;
            ly += row;
        }
        ex[i] = lx;
        ey[i] = ly;
        lx += wd;
    }
    double top = (lg && lg->n ? ly + 10 : 12);
    p->b = b;
    p->x0 = left;
    p->y0 = top;
    p->w = W - left - right;
    p->h = H - top - bottom;

    tp__svg_printf(
        b,
        "<svg class=\"plot\" data-kind=\"%s\" viewBox=\"0 0 %d %d\" width=\"%d\" height=\"%d\" "
        "role=\"img\"><title>",
        kind, W, H, W, H);
    tp__svg_esc(b, title);
    tp__svg_emit(b, "</title>\n");
    tp__svg_printf(b,
                   "<rect class=\"area\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\"/>\n",
                   p->x0, p->y0, p->w, p->h);

    /* grid: labelled ticks get a full line, the others a faint one */
    for (int pass = 0; pass < 2; pass++) {
        tp__svg_printf(b, "<path class=\"%s\" d=\"", pass ? "g" : "gm");
        n = ticks(&p->x, t, 160);
        for (size_t i = 0; i < n; i++)
            if (t[i].label == (pass == 1))
                tp__svg_printf(b, "M%.1f %.1fV%.1f", px(p, t[i].v), p->y0, p->y0 + p->h);
        n = ticks(&p->y, t, 160);
        for (size_t i = 0; i < n; i++)
            if (t[i].label == (pass == 1))
                tp__svg_printf(b, "M%.1f %.1fH%.1f", p->x0, py(p, t[i].v), p->x0 + p->w);
        tp__svg_emit(b, "\"/>\n");
    }
    tp__svg_printf(b, "<path class=\"ax\" d=\"M%.1f %.1fV%.1fH%.1f\"/>\n", p->x0, p->y0,
                   p->y0 + p->h, p->x0 + p->w);
    n = ticks(&p->x, t, 160);
    for (size_t i = 0; i < n; i++) {
        if (!t[i].label)
            continue;
        tick_label(&p->x, t[i].v, lab, sizeof lab);
        tp__svg_printf(b, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">%s</text>\n",
                       px(p, t[i].v), p->y0 + p->h + 15, lab);
    }
    n = ticks(&p->y, t, 160);
    for (size_t i = 0; i < n; i++) {
        if (!t[i].label)
            continue;
        tick_label(&p->y, t[i].v, lab, sizeof lab);
        tp__svg_printf(b,
                       "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\" dy=\"0.32em\">%s</text>\n",
                       p->x0 - 5, py(p, t[i].v), lab);
    }
    tp__svg_printf(b, "<text class=\"at\" x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">",
                   p->x0 + p->w / 2, H - 10);
    tp__svg_esc(b, p->x.title);
    tp__svg_printf(b,
                   "</text>\n<text class=\"at\" transform=\"translate(14 %.1f) rotate(-90)\" "
                   "text-anchor=\"middle\">",
                   p->y0 + p->h / 2);
    tp__svg_esc(b, p->y.title);
    tp__svg_emit(b, "</text>\n");
    for (size_t i = 0; lg && i < lg->n; i++) {
        if (lg->block[i])
            tp__svg_printf(b,
                           "<rect x=\"%.1f\" y=\"%.1f\" width=\"16\" height=\"10\" fill=\"%s\"/>",
                           ex[i], ey[i] - 9, lg->color[i]);
        else
            tp__svg_printf(b, "<path d=\"M%.1f %.1fh18\" stroke=\"%s\" stroke-width=\"2.5\"/>",
                           ex[i], ey[i] - 4, lg->color[i]);
        tp__svg_printf(b, "<text x=\"%.1f\" y=\"%.1f\">", ex[i] + 22, ey[i]);
        tp__svg_esc(b, lg->name[i]);
        tp__svg_emit(b, "</text>\n");
    }
}

void tp__svg_plot_end(struct svg_plot *p)
{
    tp__svg_emit(p->b, "</svg>\n");
}

void tp__svg_plot_line(struct svg_plot *p, const double *xs, const double *ys, size_t n,
                       const char *color, enum svg_style st)
{
    struct svg_buf *b = p->b;
    tp__svg_printf(b,
                   "<path class=\"s\" fill=\"none\" stroke=\"%s\" stroke-width=\"1.8\" "
                   "stroke-linejoin=\"round\" d=\"",
                   color);
    bool pen = false;
    for (size_t i = 0; i < n; i++) {
        if (!drawable(&p->x, xs[i]) || !drawable(&p->y, ys[i])) {
            pen = false;
            continue;
        }
        double x = px(p, xs[i]), y = py(p, ys[i]);
        if (!pen)
            tp__svg_printf(b, "M%.1f %.1f", x, y);
        else if (st == SVG_STEP)
            tp__svg_printf(b, "H%.1fV%.1f", x, y);
        else
            tp__svg_printf(b, "L%.1f %.1f", x, y);
        pen = true;
    }
    tp__svg_emit(b, "\"/>\n");
    if (st != SVG_MARKS)
        return;
    for (size_t i = 0; i < n; i++)
        if (drawable(&p->x, xs[i]) && drawable(&p->y, ys[i]))
            tp__svg_printf(b, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"2.6\" fill=\"%s\"/>",
                           px(p, xs[i]), py(p, ys[i]), color);
    tp__svg_emit(b, "\n");
}

/* One path per layer, not a rect per bar, keeps the page small. */
void tp__svg_plot_stack(struct svg_plot *p, const double *const *v, size_t layers, size_t n,
                        const char *const *colors)
{
    double slot = p->w / (double)(n ? n : 1);
    double gap = slot >= 4 ? slot * 0.15 : 0;
    double *base = calloc(n ? n : 1, sizeof *base);
    if (!base) {
        p->b->oom = true;
        return;
    }
    for (size_t k = 0; k < layers; k++) {
        tp__svg_printf(p->b, "<path class=\"bars\" fill=\"%s\" d=\"", colors[k]);
        for (size_t i = 0; i < n; i++) {
            double h = isfinite(v[k][i]) && v[k][i] > 0 ? v[k][i] : 0;
            if (h == 0)
                continue;
            double x0 = px(p, (double)i) + gap / 2, x1 = px(p, (double)i + 1) - gap / 2;
            double y0 = py(p, base[i]), y1 = py(p, base[i] + h);
            if (y0 - y1 >= 0.05)
                tp__svg_printf(p->b, "M%.1f %.1fH%.1fV%.1fH%.1fZ", x0, y0, x1, y1, x0);
            base[i] += h;
        }
        tp__svg_emit(p->b, "\"/>\n");
    }
    free(base);
}
