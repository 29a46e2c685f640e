/* The YAML input files (plan, policy, thresholds) read one way: libfyaml's
 * event stream becomes a small tree that keeps each node's line and column;
 * then one table of keys per mapping (name, kind of value, where it goes,
 * its range, whether required, its default) drives the check. Every error,
 * from a YAML syntax error to a value out of range, reads
 * "FILE:LINE:COL: KEY.PATH[2]: message"; unknown keys are refused with the
 * nearest known one suggested, duplicate keys are refused, aliases and
 * second documents too. A parser declares tables; the walk does the rest.
 *
 * Use:
 *     struct tp_yaml y;
 *     int rc = tp_yaml_open(&y, path, "policy", err);
 *     if (rc == 0)
 *         rc = tp_yaml_walk(&y, y.root, y.root, "", &top_tbl, out);
 *     tp_yaml_close(&y); */
#ifndef TP_YAML_H
#define TP_YAML_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "tp/error.h"

#define TP_YAML_MAX_BYTES (16u << 20) /* an input file is a page or two: refuse the absurd */
#define TP_YAML_MAX_DEPTH 64
#define TP_YAML_PATH_LEN 256 /* a key path, cut short beyond */

/* ---- the tree ---- */

enum tp_yaml_type { TP_YAML_N_SCALAR, TP_YAML_N_SEQ, TP_YAML_N_MAP, TP_YAML_N_ALIAS };

struct tp_yaml_node {
    enum tp_yaml_type type;
    int line, col;             /* 1-based; an empty value takes its key's position */
    bool null;                 /* an empty plain scalar, ~ or null */
    char *text;                /* scalars: the text, never NULL; others: NULL */
    struct tp_yaml_node **kid; /* sequence: the items; mapping: key, value, key, value, ... */
    size_t n, cap;
};

struct tp_yaml_key;

/* One open file. The fields are read by the parser built on it; what, the
 * hook and user may be set between tp_yaml_open and the walk. */
struct tp_yaml {
    const char *file; /* the path as given, for messages */
    const char *what; /* "plan", "policy": the kind of file, for messages */
    tp_error *err;
    struct tp_yaml_node *root; /* NULL for an empty document (nothing, only comments, ~) */
    void *user;                /* the parser's, for its callbacks */
    /* Called by the walk when key k, of a scalar kind, is given a mapping
     * (plan files: `{measured: FILE}`). Returns 0 once it has stored a
     * value, an error code, or TP_YAML_DECLINE for the usual "expected ...,
     * found a mapping" error. NULL: always that error. */
    int (*map_value)(struct tp_yaml *y, const struct tp_yaml_key *k, const struct tp_yaml_node *v,
                     const char *path, void *base);
    char alias_says[96]; /* private: the type name of an alias in messages */
};

#define TP_YAML_DECLINE 1

/* Read the file at path (at most TP_YAML_MAX_BYTES) and parse it into y->root.
 * what names the kind of file in messages ("a second YAML document; a plan
 * file holds one"). Returns 0, with y->root NULL when the document is empty;
 * the caller then owns the tree and calls tp_yaml_close. On error (a file
 * that cannot be read, too large, a YAML syntax error, a second document,
 * nesting deeper than TP_YAML_MAX_DEPTH) returns TP_EUSAGE (TP_ENOMEM when
 * memory runs out) with err saying "FILE:LINE:COL: ..." where a position is
 * known, and y holds nothing to free (tp_yaml_close is still harmless). An
 * alias is not an error here: it becomes a TP_YAML_N_ALIAS node, refused by
 * the walk with its key path. */
int tp_yaml_open(struct tp_yaml *y, const char *path, const char *what, tp_error *err);

/* Free the tree; y->root becomes NULL. Safe to call twice. */
void tp_yaml_close(struct tp_yaml *y);

/* ---- messages and paths ---- */

/* Set y->err to "FILE:LINE:COL: PATH: message", at node at (NULL: 1:1) and
 * with path "" written as "top level". Returns TP_EUSAGE. */
int tp_yaml_fail(const struct tp_yaml *y, const struct tp_yaml_node *at, const char *path,
                 const char *fmt, ...) __attribute__((format(printf, 4, 5)));

/* What v is, for "expected ..., found %s": "a scalar", "a sequence", "a
 * mapping", "nothing" (NULL or a null scalar), or an alias with the remark
 * that aliases are not supported in y->what files. */
const char *tp_yaml_type_name(const struct tp_yaml *y, const struct tp_yaml_node *v);

/* out = "path.name", or "name" when path is "". out holds TP_YAML_PATH_LEN
 * bytes; a longer path is cut short. */
void tp_yaml_join(char *out, const char *path, const char *name);

/* out = "path[i]", as tp_yaml_join. */
void tp_yaml_join_index(char *out, const char *path, size_t i);

/* The node of key name in mapping map: the key when value is false, its
 * value when true. NULL when map is not a mapping or has no such key. */
const struct tp_yaml_node *tp_yaml_lookup(const struct tp_yaml_node *map, const char *name,
                                          bool value);

/* When the key kid[i] of mapping map repeats an earlier key, set the error
 * "duplicate key (first at line L, column C)" at it, path being its key path,
 * and return TP_EUSAGE; else return 0. */
int tp_yaml_duplicate(const struct tp_yaml *y, const struct tp_yaml_node *map, size_t i,
                      const char *path);

/* ---- values ---- */

enum tp_yaml_kind {
    TP_YAML_STR,    /* char[size]; non-empty; choices, when given, restrict it */
    TP_YAML_ENUM,   /* int: the value of the choice named */
    TP_YAML_NUM,    /* double: 2, 0.5, 1e-4 */
    TP_YAML_COUNT,  /* double: 16, 7e9, 7B, 1.5T (K M B=G T decimal) */
    TP_YAML_INT,    /* double holding a whole number (count spellings) */
    TP_YAML_UINT,   /* unsigned: a whole number (count spellings) */
    TP_YAML_U64,    /* uint64_t: decimal digits only, the full range */
    TP_YAML_SIZE,   /* double, bytes: 4096, 4K, 1.5G, 2GiB (K M G T P binary; KB refused):
                     * the grammar of the command line, tp_parse_size_d */
    TP_YAML_RATE,   /* double, bytes per second: 90GB/s, 100Gb/s, 900MiB/s, bare = B/s */
    TP_YAML_LINK,   /* double, bits per second: the unit is needed */
    TP_YAML_DUR,    /* double, seconds: 20us, 5ms, 2h, 1h30m, 2w, 3y (m = minute), bare = s:
                     * the grammar of the command line, tp_parse_duration_s */
    TP_YAML_FRAC,   /* double: 0.8, 80% */
    TP_YAML_MONEY,  /* double: 2.50, $2.50 */
    TP_YAML_BOOL,   /* bool: true/false, True/False, TRUE/FALSE (not yes/no) */
    TP_YAML_MAP,    /* a nested mapping read by sub, into base + off */
    TP_YAML_LIST,   /* a sequence of elem, into base + off + i * stride; the count is an int */
    TP_YAML_PARSE,  /* a scalar that parse reads (the walk has checked it is one) */
    TP_YAML_CUSTOM, /* any node: read takes it as it is */
};

/* Parse text as a value of kind (TP_YAML_NUM to TP_YAML_BOOL) into *v (bools
 * as 0 or 1; TP_YAML_U64 rounded to a double, the walk stores it exactly).
 * Returns false when text does not spell a finite one, or kind has no
 * spelling of its own. No range is applied. */
bool tp_yaml_parse_value(enum tp_yaml_kind kind, const char *text, double *v);

/* A closed or half-open range of a number and what a value outside it is
 * told ("'0' must be at least 1"). */
struct tp_yaml_range {
    double lo, hi;
    bool lo_open; /* lo itself is outside */
    const char *says;
};

extern const struct tp_yaml_range tp_yaml_positive;  /* > 0 */
extern const struct tp_yaml_range tp_yaml_nonneg;    /* >= 0 */
extern const struct tp_yaml_range tp_yaml_unit;      /* 0 to 1 (0% to 100%) */
extern const struct tp_yaml_range tp_yaml_unit_pos;  /* above 0, at most 1 */
extern const struct tp_yaml_range tp_yaml_at_least1; /* >= 1 */

/* One accepted name and what it stands for. A list ends with {NULL, 0}; a
 * name right after one of the same value is an alias, accepted but not
 * listed in the error. */
struct tp_yaml_choice {
    const char *name;
    int value;
};

/* ---- tables ---- */

#define TP_YAML_REQUIRED 1u         /* absent: "required" at the mapping's key */
#define TP_YAML_FLAG_USER (1u << 8) /* this bit and above are the parser's own */

struct tp_yaml_table;

/* One key of a mapping, or one element of a list. Fields left out are zero:
 * any value, optional, default 0. Absent, a number, bool or enum gets def, a
 * string sdef (when given), a list the count 0, a mapping its keys'
 * defaults; the rest is left as it was (zero after the caller's memset). */
struct tp_yaml_key {
    const char *name;
    enum tp_yaml_kind kind;
    size_t off;                           /* from the base of the mapping's struct */
    const struct tp_yaml_range *range;    /* numbers; NULL: any finite value */
    unsigned flags;                       /* TP_YAML_REQUIRED, the parser's flags */
    int tag;                              /* the parser's (for its callbacks) */
    double def;                           /* numbers, bools, enums when absent */
    size_t size;                          /* TP_YAML_STR: the char array's size */
    const char *sdef;                     /* TP_YAML_STR when absent */
    const struct tp_yaml_choice *choices; /* TP_YAML_ENUM; restricts a TP_YAML_STR */
    const struct tp_yaml_table *sub;      /* TP_YAML_MAP */
    const struct tp_yaml_key *elem;       /* TP_YAML_LIST: each element, at offset 0 */
    size_t stride, max, count_off;        /* TP_YAML_LIST: see TP_YAML_LIST_OF */
    const char *what, *eg;                /* for messages: "a port", "22, 9100"; NULL: the
                                           * kind's own (TP_YAML_PARSE: give them) */
    /* TP_YAML_PARSE: read v->text (a non-null scalar) into base + k->off;
     * TP_YAML_CUSTOM: read node v (of any type) at key path path. 0 or an
     * error set with tp_yaml_fail. */
    int (*read)(struct tp_yaml *y, const struct tp_yaml_key *k, const struct tp_yaml_node *v,
                const char *path, void *base);
};

/* A string field of struct type: its offset and size. */
#define TP_YAML_STR_FIELD(type, field)                                                             \
    .off = offsetof(type, field), .size = sizeof(((type *)0)->field)

/* A list into array field (its length is the limit) counted by int field
 * count of struct type. */
#define TP_YAML_LIST_OF(type, field, count)                                                        \
    .off = offsetof(type, field), .stride = sizeof(((type *)0)->field[0]),                         \
    .max = sizeof(((type *)0)->field) / sizeof(((type *)0)->field[0]),                             \
    .count_off = offsetof(type, count)

/* The keys of one mapping (at most 64: the walk refuses a larger table), in
 * the order errors list them. */
struct tp_yaml_table {
    const struct tp_yaml_key *keys;
    size_t n;
    /* After the mapping is read (absent keys given their defaults): checks
     * across keys. map is the mapping (NULL when it was null), at the node
     * its "required" errors point at, seen has bit i set for keys[i] given.
     * NULL: none. 0 or an error set with tp_yaml_fail. */
    int (*check)(struct tp_yaml *y, const struct tp_yaml_node *map, const struct tp_yaml_node *at,
                 const char *path, void *base, uint64_t seen);
    const char *noun; /* "unknown %s" in errors; NULL: "key" */
};

#define TP_YAML_NKEYS(k) (sizeof(k) / sizeof((k)[0]))

/* Read mapping map (a null scalar counts as an empty mapping) by table t
 * into base; path is its key path ("" at the top), at the node where its
 * "required" errors point (the key naming it). Each key present is
 * checked (type, spelling, range, choices, length) and stored, nested
 * mappings and lists walked in turn; each key absent gets its default, or
 * is refused when required; a nested mapping absent altogether gets its
 * keys' defaults and is not asked for its required keys. Refused: a
 * non-scalar key, a duplicate key, an unknown key (naming the nearest
 * known one when one alone is within two edits, and listing the known).
 * Stops at the first error: returns 0 or the code of the error set in
 * y->err (TP_EUSAGE, TP_ENOMEM from a callback); what was stored before it
 * stays stored. */
int tp_yaml_walk(struct tp_yaml *y, const struct tp_yaml_node *map, const struct tp_yaml_node *at,
                 const char *path, const struct tp_yaml_table *t, void *base);

/* The error for key node k (path its key path) that t does not know:
 * "unknown key (did you mean NAME? known: a, b, c)". Returns TP_EUSAGE. */
int tp_yaml_unknown_key(const struct tp_yaml *y, const struct tp_yaml_node *k, const char *path,
                        const struct tp_yaml_table *t);

/* True when the key called name in t has its bit set in seen (a table
 * check's argument). */
bool tp_yaml_seen(const struct tp_yaml_table *t, uint64_t seen, const char *name);

#endif
