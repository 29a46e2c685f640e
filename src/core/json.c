/* JSON helpers (include/tp/json.h). The readers accept a figure either bare
 * or as the {value, unit} objects of result documents, so callers need not
 * know which form a key takes. The UTF-8 repair is one strict check (that of
 * RFC 3629, which is jansson's) used by every place that turns outside text
 * into JSON, so whatever it passes jansson takes. */
#include "tp/json.h"
#include "tp/file.h"

#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

int tp_json_load(const char *path, json_t **out, tp_error *err)
{
    char *text;
    size_t len;
    int rc = tp_file_read(path, NULL, TP_FILE_MAX_DOC, TP_FILE_REGULAR, &text, &len, err);
    if (rc)
        return rc;
    json_error_t je;
    json_t *d = json_loadb(text, len, 0, &je);
    free(text);
    if (!d)
        return je.line > 0 ? tp_error_set(err, TP_EUSAGE, "%s:%d:%d: not JSON: %s", path, je.line,
                                          je.column, je.text)
                           : tp_error_set(err, TP_EUSAGE, "%s: %s", path, je.text);
    *out = d;
    return 0;
}

double tp_json_num_or(const json_t *o, const char *key, double otherwise)
{
    const json_t *v = json_object_get(o, key);
    if (json_is_object(v))
        v = json_object_get(v, "value");
    return json_is_number(v) ? json_number_value(v) : otherwise;
}

double tp_json_num(const json_t *o, const char *key)
{
    return tp_json_num_or(o, key, NAN);
}

double tp_json_num_unit(const json_t *o, const char *key, const char **unit)
{
    const json_t *v = json_object_get(o, key);
    if (json_is_object(v)) {
        if (unit)
            *unit = json_string_value(json_object_get(v, "unit"));
        v = json_object_get(v, "value");
    }
    return json_is_number(v) ? json_number_value(v) : NAN;
}

const char *tp_json_str(const json_t *o, const char *key)
{
    return json_string_value(json_object_get(o, key));
}

size_t tp_utf8_len(const unsigned char *u, size_t n)
{
    unsigned char c = u[0];
    if (c < 0x80)
        return 1;
    size_t len;
    unsigned char lo = 0x80, hi = 0xbf; /* the range of the second byte */
    if (c >= 0xc2 && c <= 0xdf)
        len = 2;
    else if (c >= 0xe0 && c <= 0xef) {
        len = 3;
        if (c == 0xe0)
            lo = 0xa0; /* overlong */
        else if (c == 0xed)
            hi = 0x9f; /* surrogates */
    } else if (c >= 0xf0 && c <= 0xf4) {
        len = 4;
        if (c == 0xf0)
            lo = 0x90; /* overlong */
        else if (c == 0xf4)
            hi = 0x8f; /* above U+10FFFF */
    } else
        return 0;
    if (n < len || u[1] < lo || u[1] > hi)
        return 0;
    for (size_t k = 2; k < len; k++)
        if ((u[k] & 0xc0) != 0x80)
            return 0;
    return len;
}

static void fix_n(char *s, size_t n)
{
    unsigned char *u = (unsigned char *)s;
    for (size_t i = 0; i < n;) {
        size_t len = tp_utf8_len(u + i, n - i);
        if (len == 0)
            u[i++] = '?';
        else
            i += len;
    }
}

char *tp_utf8_fix(char *s)
{
    fix_n(s, strlen(s));
    return s;
}

char *tp_utf8_trim(char *s)
{
    size_t n = strlen(s), i = n;
    /* back over the continuation bytes (at most three) to the lead byte */
    while (i > 0 && n - i < 3 && ((unsigned char)s[i - 1] & 0xc0) == 0x80)
        i--;
    if (i == 0)
        return s;
    unsigned char lead = (unsigned char)s[i - 1];
    size_t want = lead >= 0xf0 ? 4 : lead >= 0xe0 ? 3 : lead >= 0xc0 ? 2 : 1;
    if (n - (i - 1) < want)
        s[i - 1] = '\0';
    return s;
}

json_t *tp_json_textn(const char *s, size_t n)
{
    json_t *j = json_stringn(s, n);
    if (j)
        return j;
    char *copy = malloc(n + 1);
    if (!copy)
        return NULL;
    memcpy(copy, s, n);
    copy[n] = '\0';
    fix_n(copy, n);
    j = json_stringn(copy, n);
    free(copy);
    return j;
}

json_t *tp_json_text(const char *s)
{
    return s ? tp_json_textn(s, strlen(s)) : json_null();
}
