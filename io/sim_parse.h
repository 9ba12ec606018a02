/*
 * sim_parse.h — parsing sizes and counts written with binary suffixes.
 *
 * Each returns 0, or -1 with a one-line message in err that starts with
 * "OPT VALUE:" and says what is wrong and, where it helps, what to write.
 */
#ifndef FASIM_SIM_PARSE_H
#define FASIM_SIM_PARSE_H

#include <stddef.h>
#include <stdint.h>

/* "<digits>[.<digits>]<suffix>" scaled by the suffix: K or KiB (2^10), M or
 * MiB (2^20), G or GiB (2^30), and B (bytes) when allow_b. The result must be
 * a whole number; KB, MB and GB are refused as ambiguous. */
int sim_parse_scaled(const char *opt, const char *s, int allow_b, uint64_t *out,
                     char *err, size_t errlen);

/* A byte size >= 1: 98304, 96K, 96KiB, 1.5MiB. */
int sim_parse_size(const char *opt, const char *s, uint64_t *out, char *err, size_t errlen);

/* An integer in [lo, hi] with the same suffixes (--N 64K is 65536). */
int sim_parse_count(const char *opt, const char *s, int64_t lo, int64_t hi, int64_t *out,
                    char *err, size_t errlen);

/* A comma list of at most max finite numbers within float32's range
 * ("1,3,-2.5,1e3"; spaces around entries are ignored) into x[0..max-1];
 * *n receives the count. A list of more than max entries is refused before
 * any entry is read. Used for a lesson's --x. */
int sim_parse_numbers(const char *opt, const char *s, double *x, int max, int *n,
                      char *err, size_t errlen);

#endif /* FASIM_SIM_PARSE_H */
