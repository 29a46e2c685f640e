/* Internal to src/report: the SVG plotter of the HTML report (svg.c) and the
 * growing text buffer the whole page is written into.
 *
 * A plot is fitted axes (linear, decades or powers of two, with a unit in
 * every title), then series drawn into it: lines, staircases, marked points,
 * stacked bars, with a legend on top. Everything is text appended to one
 * buffer; running out of memory sets its oom flag once and every later call
 * does nothing, so a section never checks after each write. Strings that
 * came from a document go through tp__svg_esc. */
#ifndef TP_REPORT_SVG_H
#define TP_REPORT_SVG_H

#include <stdbool.h>
#include <stddef.h>

/* ---- the page's text ---- */

struct svg_buf {
    char *p; /* NUL-terminated; malloc'd */
    size_t len, cap;
    bool oom; /* a write failed: p is what came before it */
};

/* Append n bytes of s (keeps p NUL-terminated). Out of memory: b->oom. */
void tp__svg_put(struct svg_buf *b, const char *s, size_t n);

/* Append the string s. */
void tp__svg_emit(struct svg_buf *b, const char *s);

/* Append printf(fmt, ...), of any length. */
void tp__svg_printf(struct svg_buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Append s (NULL: nothing) as HTML or SVG text or attribute value: & < > " '
 * written as entities. */
void tp__svg_esc(struct svg_buf *b, const char *s);

/* ---- plots ---- */

enum svg_scale { SVG_LIN, SVG_LOG10, SVG_LOG2 };
enum svg_tickfmt { SVG_NUM, SVG_SIZE }; /* SVG_SIZE: "4K", "1M" */

struct svg_axis {
    double lo, hi; /* the range drawn, data units */
    double step;   /* SVG_LIN: the tick spacing */
    enum svg_scale scale;
    double div; /* a tick at v is labelled v / div */
    enum svg_tickfmt fmt;
    char title[128]; /* with its unit */
};

#define SVG_MAX_SERIES 16

struct svg_legend {
    const char *name[SVG_MAX_SERIES];
    const char *color[SVG_MAX_SERIES];
    bool block[SVG_MAX_SERIES]; /* a filled square (bars) rather than a line */
    size_t n;
};

struct svg_plot {
    struct svg_buf *b;
    struct svg_axis x, y;
    double x0, y0, w, h; /* the plotting area, px */
};

enum svg_style { SVG_LINE, SVG_STEP, SVG_MARKS };

/* The k-th colour of the series palette (it repeats after eight). */
const char *tp__svg_color(size_t k);

/* Add an entry to lg; beyond SVG_MAX_SERIES entries nothing is added. The
 * strings must outlive the plot. */
void tp__svg_legend_add(struct svg_legend *lg, const char *name, const char *color, bool block);

/* Fit the axis to data in [lo, hi]: decades (SVG_LOG10) or powers of two
 * (SVG_LOG2) around it, or a 1-2-5 step with about five ticks (SVG_LIN, from
 * zero when zero is set). Non-finite or empty data gives a unit range. */
void tp__svg_axis_fit(struct svg_axis *a, double lo, double hi, bool zero);

/* The unit a time axis shows: the largest of ns, us, ms, s not above ns, and
 * the divisor that turns ns into it. */
void tp__svg_time_unit(double ns, double *div, const char **unit);

/* Open an SVG of W x H px into b, <svg class="plot" data-kind="kind">:
 * legend on top (lg may be NULL), then the plotting area with its grid,
 * ticks, tick labels and axis titles. p->x and p->y must be fitted. */
void tp__svg_plot_begin(struct svg_plot *p, struct svg_buf *b, const char *kind, const char *title,
                        int W, int H, const struct svg_legend *lg);

/* Close the SVG that tp__svg_plot_begin opened. */
void tp__svg_plot_end(struct svg_plot *p);

/* A series: straight segments (SVG_LINE, SVG_MARKS with a dot at each point)
 * or a staircase that holds each y until the next x (SVG_STEP). Points that
 * cannot be drawn (non-finite, or not positive on a log axis) break the
 * line. */
void tp__svg_plot_line(struct svg_plot *p, const double *xs, const double *ys, size_t n,
                       const char *color, enum svg_style st);

/* Stacked bars: bar i spans x in [i, i + 1) on a linear axis and stacks
 * v[0][i], v[1][i], ... from zero, layer k in colors[k]. */
void tp__svg_plot_stack(struct svg_plot *p, const double *const *v, size_t layers, size_t n,
                        const char *const *colors);

#endif
