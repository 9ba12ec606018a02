/*
 * sim_parse.h — parsing sizes and counts written with binary suffixes, and
 * showing a user's value in a message.
 *
 * Each parser returns 0, or -1 with a one-line message in err that starts
 * with "OPT VALUE:" and says what is wrong and, where it helps, what to write.
 *
 * One rule for numbers everywhere (the command line, the lessons, --x
 * lists): white space around a number is ignored; numbers are decimal (0x10
 * is refused); the binary suffixes K/KiB, M/MiB, G/GiB (and B for bytes)
 * may be written in any case (96k = 96K = 96kib).
 */
#ifndef FASIM_SIM_PARSE_H
#define FASIM_SIM_PARSE_H

#include <stddef.h>
#include <stdint.h>

#define SIM_SHOWN_MAX 1024

/* A user's value as a message shows it: each control byte (below 0x20, and
 * 0x7f) written as an escape (\n, \r, \t, else \xHH) so that a value can
 * neither split a message nor drive the terminal; other bytes as they are;
 * a value too long for the array ends in "...". NULL shows as "". Every
 * message that echoes a value the user typed shows it through this.
 *
 * The array is a temporary that lives to the end of the full expression
 * holding the call (C11 6.2.4p8), so use it there,
 *     ERR("--dtype %s: unknown type", sim_shown(val).s);
 * or keep the struct in a variable. */
typedef struct {
    char s[SIM_SHOWN_MAX];
} sim_shown_text;

sim_shown_text sim_shown(const char *s);

/* The same of s's first len bytes at most (a name up to its '='). */
sim_shown_text sim_shown_n(const char *s, size_t len);

/* "<digits>[.<digits>]<suffix>" scaled by the suffix: K or KiB (2^10), M or
 * MiB (2^20), G or GiB (2^30), T or TiB (2^40), and B (bytes) when allow_b.
 * The result must be a whole number; KB, MB, GB and TB are refused as
 * ambiguous. */
int sim_parse_scaled(const char *opt, const char *s, int allow_b, uint64_t *out,
                     char *err, size_t errlen);

/* A byte size >= 1: 98304, 96K, 96KiB, 1.5MiB. */
int sim_parse_size(const char *opt, const char *s, uint64_t *out, char *err, size_t errlen);

/* An integer in [lo, hi] with the same suffixes (--N 64K is 65536). */
int sim_parse_count(const char *opt, const char *s, int64_t lo, int64_t hi, int64_t *out,
                    char *err, size_t errlen);

/* A real number by the rule above (decimal, as strtod reads it, not hex),
 * into *out; inf and nan are read, and left to the caller to refuse.
 * Returns 0, or -1 when s is not such a number. */
int sim_parse_real(const char *s, double *out);

/* A comma list of at most max finite numbers within float32's range
 * ("1,3,-2.5,1e3"; spaces around entries are ignored) into x[0..max-1];
 * *n receives the count. A list of more than max entries is refused before
 * any entry is read. Used for a lesson's --x. */
int sim_parse_numbers(const char *opt, const char *s, double *x, int max, int *n,
                      char *err, size_t errlen);

#endif /* FASIM_SIM_PARSE_H */
