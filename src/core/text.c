/* Printable text (include/tp/text.h): one scan, by UTF-8 character, that
 * says whether a string may reach a terminal as it is and, when it may
 * not, a copy with every control made '?'. The UTF-8 rule is
 * tp_utf8_len's (src/core/json.c: RFC 3629, no overlong forms, no
 * surrogates, nothing above U+10FFFF); a byte that breaks it is one '?'. */
#include "tp/text.h"

#include "tp/json.h"

#include <stdint.h>
#include <string.h>

/* The code point of the well-formed UTF-8 character at u (n bytes left)
 * in *cp, and its length; 0 when the byte at u starts none. */
static size_t decode(const unsigned char *u, size_t n, uint32_t *cp)
{
    size_t len = tp_utf8_len(u, n);
    if (len == 0)
        return 0;
    uint32_t v = len == 1 ? u[0] : u[0] & (0x7fu >> len);
    for (size_t k = 1; k < len; k++)
        v = v << 6 | (u[k] & 0x3f);
    *cp = v;
    return len;
}

static bool printable(uint32_t cp, unsigned flags)
{
    if (cp == '\t' || (cp == '\n' && (flags & TP_TEXT_NEWLINES)))
        return true;
    if (cp < 0x20 || cp == 0x7f || (cp >= 0x80 && cp <= 0x9f))
        return false;
    return !((cp >= 0x202a && cp <= 0x202e) || (cp >= 0x2066 && cp <= 0x2069));
}

bool tp_text_is_safe(const char *s, unsigned flags)
{
    if (!s)
        return true;
    const unsigned char *u = (const unsigned char *)s;
    size_t n = strlen(s);
    for (size_t i = 0; i < n;) {
        uint32_t cp;
        size_t len = decode(u + i, n - i, &cp);
        if (len == 0 || !printable(cp, flags))
            return false;
        i += len;
    }
    return true;
}

const char *tp_text_safe(const char *s, char *buf, size_t cap, unsigned flags)
{
    if (!s)
        return "";
    if (tp_text_is_safe(s, flags))
        return s;
    if (cap == 0)
        return "";
    const unsigned char *u = (const unsigned char *)s;
    size_t n = strlen(s), o = 0;
    for (size_t i = 0; i < n;) {
        uint32_t cp;
        size_t len = decode(u + i, n - i, &cp);
        bool ok = len > 0 && printable(cp, flags);
        size_t out = ok ? len : 1;
        if (o + out > cap - 1)
            break;
        if (ok)
            memcpy(buf + o, s + i, len);
        else
            buf[o] = '?';
        o += out;
        i += len ? len : 1;
    }
    buf[o] = '\0';
    return buf;
}
