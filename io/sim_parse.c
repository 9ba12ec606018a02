/*
 * sim_parse.c — sizes and counts as people write them: "98304", "96K",
 * "96KiB", "1.5MiB", "64K". Shared by the command line and the lessons.
 */
#include "sim_parse.h"

#include <ctype.h>
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define ERR(...) do { if (err && errlen) snprintf(err, errlen, __VA_ARGS__); } while (0)

sim_shown_text sim_shown(const char *s)
{
    return sim_shown_n(s, SIZE_MAX);
}

sim_shown_text sim_shown_n(const char *s, size_t len)
{
    sim_shown_text t;
    size_t n = 0;
    const size_t room = sizeof t.s - 4;          /* an escape, or "...", and the NUL */
    for (const char *start = s; s && *s && (size_t)(s - start) < len; s++) {
        const unsigned char c = (unsigned char)*s;
        if (n + 4 >= room) {
            memcpy(t.s + n, "...", 3);
            n += 3;
            break;
        }
        if (c == '\n' || c == '\r' || c == '\t') {
            t.s[n++] = '\\';
            t.s[n++] = c == '\n' ? 'n' : c == '\r' ? 'r' : 't';
        } else if (c < 0x20 || c == 0x7f) {
            n += (size_t)snprintf(t.s + n, sizeof t.s - n, "\\x%02x", c);
        } else {
            t.s[n++] = (char)c;
        }
    }
    t.s[n] = '\0';
    return t;
}

/* One rule for every number: white space around it is ignored. *s0 and
 * *s1 become the first and one past the last byte that is not white space. */
static void trim(const char *s, const char **s0, const char **s1)
{
    while (isspace((unsigned char)*s))
        s++;
    const char *e = s + strlen(s);
    while (e > s && isspace((unsigned char)e[-1]))
        e--;
    *s0 = s;
    *s1 = e;
}

/* Does the number at p (after an optional sign) start with 0x or 0X? */
static int is_hex(const char *p)
{
    if (*p == '+' || *p == '-')
        p++;
    return p[0] == '0' && (p[1] == 'x' || p[1] == 'X');
}

/* The binary suffix suf[0, n) as a power of 1024 (any case: k, K, KiB and
 * kib are the same), 0 for bytes (B, allow_b only); -1 when it is none. */
static int suffix_power(const char *suf, size_t n, int allow_b)
{
    static const char *const names[] = { "K", "KiB", "M", "MiB", "G", "GiB", "T", "TiB" };
    if (n == 0 || (allow_b && n == 1 && (suf[0] == 'B' || suf[0] == 'b')))
        return 0;
    for (int k = 0; k < 8; k++)
        if (strlen(names[k]) == n && !strncasecmp(suf, names[k], n))
            return 1 + k / 2;
    return -1;
}

/* Parse "<digits>[.<digits>]<suffix>" into a whole number scaled by the
 * suffix's power of 1024. allow_b: whether a trailing B (bytes) is allowed.
 * Returns 0, or -1 with err set (prefixed by opt). */
int sim_parse_scaled(const char *opt, const char *s, int allow_b, uint64_t *out,
                        char *err, size_t errlen)
{
    if (!s || !*s) {
        ERR("%s needs a value", opt);
        return -1;
    }
    const sim_shown_text shown = sim_shown(s);
    const char *p, *end;
    trim(s, &p, &end);
    if (*p == '-') {
        ERR("%s %s: negative numbers are not allowed", opt, shown.s);
        return -1;
    }
    if (is_hex(p)) {
        ERR("%s %s: write numbers in decimal (hexadecimal is not accepted)", opt, shown.s);
        return -1;
    }
    if (*p == '+')
        p++;
    uint64_t whole = 0;
    int ndig = 0;
    for (; p < end && *p >= '0' && *p <= '9'; p++, ndig++) {
        if (__builtin_mul_overflow(whole, 10, &whole) ||
            __builtin_add_overflow(whole, (uint64_t)(*p - '0'), &whole)) {
            ERR("%s %s: number too large", opt, shown.s);
            return -1;
        }
    }
    uint64_t frac = 0, frac_div = 1;
    int nfrac = 0;
    if (p < end && *p == '.') {
        p++;
        for (; p < end && *p >= '0' && *p <= '9'; p++, nfrac++) {
            if (nfrac >= 9) {
                ERR("%s %s: too many decimal places", opt, shown.s);
                return -1;
            }
            frac = frac * 10 + (uint64_t)(*p - '0');
            frac_div *= 10;
        }
    }
    if (ndig + nfrac == 0) {
        ERR("%s %s: not a number (expected e.g. 1024, 96K, 1.5MiB)", opt, shown.s);
        return -1;
    }
    const char *suf = p;
    const size_t nsuf = (size_t)(end - p);
    const int power = suffix_power(suf, nsuf, allow_b);
    if (power < 0 && nsuf == 2 && strchr("KkMmGgTt", suf[0]) && (suf[1] == 'B' || suf[1] == 'b')) {
        ERR("%s %s: '%.2s' is ambiguous (1000 or 1024?); write %.1s or %.1siB (powers of 1024)",
            opt, shown.s, suf, suf, suf);
        return -1;
    }
    if (power < 0) {
        ERR("%s %s: unknown suffix '%s' (use %sK/KiB, M/MiB, G/GiB or T/TiB)", opt, shown.s,
            sim_shown(suf).s, allow_b ? "B, " : "");
        return -1;
    }
    const uint64_t mult = UINT64_C(1) << (10 * power);
    uint64_t v;
    if (__builtin_mul_overflow(whole, mult, &v)) {
        ERR("%s %s: number too large", opt, shown.s);
        return -1;
    }
    if (nfrac) {
        uint64_t f = frac * mult;                 /* < 10^9 * 2^30 < 2^60 */
        if (f % frac_div != 0) {
            ERR("%s %s: not a whole number%s", opt, shown.s, allow_b ? " of bytes" : "");
            return -1;
        }
        if (__builtin_add_overflow(v, f / frac_div, &v)) {
            ERR("%s %s: number too large", opt, shown.s);
            return -1;
        }
    }
    *out = v;
    return 0;
}

int sim_parse_size(const char *opt, const char *s, uint64_t *out, char *err, size_t errlen)
{
    uint64_t v;
    if (sim_parse_scaled(opt, s, 1, &v, err, errlen) != 0)
        return -1;
    if (v == 0) {
        ERR("%s %s: must be at least 1 byte", opt, sim_shown(s).s);
        return -1;
    }
    *out = v;
    return 0;
}

int sim_parse_count(const char *opt, const char *s, int64_t lo, int64_t hi,
                    int64_t *out, char *err, size_t errlen)
{
    uint64_t v;
    if (sim_parse_scaled(opt, s, 0, &v, err, errlen) != 0)
        return -1;
    if (v < (uint64_t)lo) {
        ERR("%s %s: must be at least %lld", opt, sim_shown(s).s, (long long)lo);
        return -1;
    }
    if (v > (uint64_t)hi) {
        ERR("%s %s: at most %lld is supported", opt, sim_shown(s).s, (long long)hi);
        return -1;
    }
    *out = (int64_t)v;
    return 0;
}

int sim_parse_real(const char *s, double *out)
{
    const char *p, *end;
    trim(s ? s : "", &p, &end);
    char tok[64];
    const size_t n = (size_t)(end - p);
    if (n == 0 || n >= sizeof tok || is_hex(p))
        return -1;
    memcpy(tok, p, n);
    tok[n] = '\0';
    char *stop;
    *out = strtod(tok, &stop);
    return *stop ? -1 : 0;
}

/* A comma list of finite float32-range numbers: "1, 3, -2.5, 1e3". The
 * messages match what a lesson prints after its name. */
int sim_parse_numbers(const char *opt, const char *s, double *x, int max, int *n,
                      char *err, size_t errlen)
{
    if (!s)
        s = "";
    const sim_shown_text shown = sim_shown(strlen(s) > 40 ? "(the list)" : s);
    int blank = 1;
    for (const char *p = s; *p; p++)
        blank &= isspace((unsigned char)*p) != 0;
    if (blank) {
        ERR("%s is empty; give numbers separated by commas, e.g. %s 1,3,2,5", opt, opt);
        return -1;
    }
    /* Count before parsing so that a list that is too long is refused
     * whole, before a single entry is read. */
    int64_t count = 1;
    for (const char *p = s; *p; p++)
        count += *p == ',';
    if (count > max) {
        ERR("%s has %lld entries; at most %d are supported", opt, (long long)count, max);
        return -1;
    }
    const char *p = s;
    for (int k = 0; k < (int)count; k++) {
        const char *end = strchr(p, ',');
        size_t len = end ? (size_t)(end - p) : strlen(p);
        char tok[64];
        size_t a = 0;
        while (a < len && isspace((unsigned char)p[a]))
            a++;
        while (len > a && isspace((unsigned char)p[len - 1]))
            len--;
        if (len == a) {
            ERR("%s %s: entry %d is empty (two commas in a row, or one at an end?)", opt,
                shown.s, k + 1);
            return -1;
        }
        if (len - a >= sizeof tok) {
            ERR("%s: entry %d is too long to be a number", opt, k + 1);
            return -1;
        }
        memcpy(tok, p + a, len - a);
        tok[len - a] = '\0';
        const sim_shown_text t = sim_shown(tok);
        double v;
        if (sim_parse_real(tok, &v) != 0) {
            ERR("%s %s: entry %d ('%s') is not a number", opt, shown.s, k + 1, t.s);
            return -1;
        }
        if (isnan(v)) {
            ERR("%s %s: entry %d is NaN; entries must be finite numbers", opt, shown.s, k + 1);
            return -1;
        }
        if (isinf(v) || fabs(v) > FLT_MAX) {
            ERR("%s %s: entry %d ('%s') is not a finite float32 number (|x| <= 3.4e38)",
                opt, shown.s, k + 1, t.s);
            return -1;
        }
        x[k] = v;
        p = end ? end + 1 : p + len;
    }
    *n = (int)count;
    return 0;
}
