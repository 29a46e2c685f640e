/* JSON helpers every layer shares (src/core/json.c): reading a number or a
 * string out of a result document, and making text that came from outside
 * (a host name, a sysfs value, a path, a buffer cut short) safe for JSON,
 * whose strings must be valid UTF-8: jansson refuses anything else, and one
 * refused string would lose a whole document. */
#ifndef TP_JSON_H
#define TP_JSON_H

#include <jansson.h>
#include <stddef.h>

#include "tp/error.h"

/* Read the JSON file at path into *out (a new reference): a regular file of
 * at most TP_FILE_MAX_DOC bytes (tp/file.h). On error *out is untouched and
 * err (TP_EUSAGE) names the file, with "LINE:COL: not JSON:" and jansson's
 * reason where the text is at fault, or the reason it could not be read (not
 * a regular file, too large, unreadable). */
int tp_json_load(const char *path, json_t **out, tp_error *err);

/* The number at o[key], or the "value" of a {value, unit} object there (the
 * way result documents carry figures with units); otherwise when o is not
 * an object, the key is absent or the value is not a number. */
double tp_json_num_or(const json_t *o, const char *key, double otherwise);

/* tp_json_num_or(o, key, NAN). */
double tp_json_num(const json_t *o, const char *key);

/* As tp_json_num, and *unit (when unit is not NULL and the value is a
 * {value, unit} object) set to its unit string (NULL when it has none);
 * *unit is left as it is for a plain number. */
double tp_json_num_unit(const json_t *o, const char *key, const char **unit);

/* The string at o[key], or NULL when o is not an object, the key is absent
 * or the value is not a string. Valid while o holds it. */
const char *tp_json_str(const json_t *o, const char *key);

/* The length of the well-formed UTF-8 character at u (n bytes left, n >= 1):
 * 1 to 4, or 0 when the byte at u starts none (RFC 3629: no overlong forms,
 * no surrogates, nothing above U+10FFFF). The one UTF-8 rule of trainpath:
 * the repair below and tp_text_safe (tp/text.h) both use it. */
size_t tp_utf8_len(const unsigned char *u, size_t n);

/* Replace, in place, every byte of s that is not part of a well-formed
 * UTF-8 character (RFC 3629: no overlong forms, no surrogates, nothing
 * above U+10FFFF) with '?'; valid characters are kept. Returns s. */
char *tp_utf8_fix(char *s);

/* Cut s (in place) before a last character that a fixed-size buffer cut
 * short, so that truncation by snprintf leaves valid UTF-8. Returns s. */
char *tp_utf8_trim(char *s);

/* A JSON string of the n bytes at s (NUL bytes kept, as jansson keeps
 * them), with bytes that are not UTF-8 made '?' as tp_utf8_fix makes them;
 * NULL only when out of memory. */
json_t *tp_json_textn(const char *s, size_t n);

/* tp_json_textn(s, strlen(s)); json null for s == NULL. */
json_t *tp_json_text(const char *s);

#endif
