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
    const char *p = s;
    while (*p == ' ')
        p++;
    if (*p == '-') {
        ERR("%s %s: negative numbers are not allowed", opt, s);
        return -1;
    }
    if (*p == '+')
        p++;
    uint64_t whole = 0;
    int ndig = 0;
    for (; *p >= '0' && *p <= '9'; p++, ndig++) {
        if (__builtin_mul_overflow(whole, 10, &whole) ||
            __builtin_add_overflow(whole, (uint64_t)(*p - '0'), &whole)) {
            ERR("%s %s: number too large", opt, s);
            return -1;
        }
    }
    uint64_t frac = 0, frac_div = 1;
    int nfrac = 0;
    if (*p == '.') {
        p++;
        for (; *p >= '0' && *p <= '9'; p++, nfrac++) {
            if (nfrac >= 9) {
                ERR("%s %s: too many decimal places", opt, s);
                return -1;
            }
            frac = frac * 10 + (uint64_t)(*p - '0');
            frac_div *= 10;
        }
    }
    if (ndig + nfrac == 0) {
        ERR("%s %s: not a number (expected e.g. 1024, 96K, 1.5MiB)", opt, s);
        return -1;
    }
    uint64_t mult = 1;
    const char *suf = p;
    if (*suf == '\0' || (allow_b && strcmp(suf, "B") == 0)) {
        mult = 1;
    } else if (!strcmp(suf, "K") || !strcmp(suf, "k") || !strcmp(suf, "KiB")) {
        mult = UINT64_C(1) << 10;
    } else if (!strcmp(suf, "M") || !strcmp(suf, "MiB")) {
        mult = UINT64_C(1) << 20;
    } else if (!strcmp(suf, "G") || !strcmp(suf, "GiB")) {
        mult = UINT64_C(1) << 30;
    } else if (!strcasecmp(suf, "KB") || !strcasecmp(suf, "MB") || !strcasecmp(suf, "GB")) {
        ERR("%s %s: '%s' is ambiguous (1000 or 1024?); write %.1s or %.1siB (powers of 1024)",
            opt, s, suf, suf, suf);
        return -1;
    } else {
        ERR("%s %s: unknown suffix '%s' (use %sK/KiB, M/MiB or G/GiB)", opt, s, suf,
            allow_b ? "B, " : "");
        return -1;
    }
    uint64_t v;
    if (__builtin_mul_overflow(whole, mult, &v)) {
        ERR("%s %s: number too large", opt, s);
        return -1;
    }
    if (nfrac) {
        uint64_t f = frac * mult;                 /* < 10^9 * 2^30 < 2^60 */
        if (f % frac_div != 0) {
            ERR("%s %s: not a whole number%s", opt, s, allow_b ? " of bytes" : "");
            return -1;
        }
        if (__builtin_add_overflow(v, f / frac_div, &v)) {
            ERR("%s %s: number too large", opt, s);
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
        ERR("%s %s: must be at least 1 byte", opt, s);
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
        ERR("%s %s: must be at least %lld", opt, s, (long long)lo);
        return -1;
    }
    if (v > (uint64_t)hi) {
        ERR("%s %s: at most %lld is supported", opt, s, (long long)hi);
        return -1;
    }
    *out = (int64_t)v;
    return 0;
}

/* A comma list of finite float32-range numbers: "1, 3, -2.5, 1e3". The
 * messages match what a lesson prints after its name. */
int sim_parse_numbers(const char *opt, const char *s, double *x, int max, int *n,
                      char *err, size_t errlen)
{
    if (!s)
        s = "";
    const char *shown = strlen(s) > 40 ? "(the list)" : s;
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
                shown, k + 1);
            return -1;
        }
        if (len - a >= sizeof tok) {
            ERR("%s: entry %d is too long to be a number", opt, k + 1);
            return -1;
        }
        memcpy(tok, p + a, len - a);
        tok[len - a] = '\0';
        char *stop;
        double v = strtod(tok, &stop);
        if (stop == tok || *stop) {
            ERR("%s %s: entry %d ('%s') is not a number", opt, shown, k + 1, tok);
            return -1;
        }
        if (isnan(v)) {
            ERR("%s %s: entry %d is NaN; entries must be finite numbers", opt, shown, k + 1);
            return -1;
        }
        if (isinf(v) || fabs(v) > FLT_MAX) {
            ERR("%s %s: entry %d ('%s') is not a finite float32 number (|x| <= 3.4e38)",
                opt, shown, k + 1, tok);
            return -1;
        }
        x[k] = v;
        p = end ? end + 1 : p + len;
    }
    *n = (int)count;
    return 0;
}
