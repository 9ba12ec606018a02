/*
 * test_util.h — small helpers shared by the cmocka tests.
 */
#ifndef FASIM_TEST_UTIL_H
#define FASIM_TEST_UTIL_H

/* The longest a test lets one fasim command run before it counts as a hang:
 * a minute, and four under the sanitizers, which make the same run 5 to 10
 * times slower (and CI runs their suite two tests at a time on two cores). */
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_UNDEFINED__)
#define TU_RUN_TIMEOUT_S 240
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(undefined_behavior_sanitizer)
#define TU_RUN_TIMEOUT_S 240
#endif
#endif
#ifndef TU_RUN_TIMEOUT_S
#define TU_RUN_TIMEOUT_S 60
#endif

#include <stddef.h>
#include <stdint.h>

/* A fresh temporary directory for this test process (created once, under
 * $TMPDIR or /tmp); the returned path is static. */
const char *tu_tmpdir(void);

/* Join tu_tmpdir() and name into buf; returns buf. */
char *tu_path(char *buf, size_t len, const char *name);

/* Write len bytes to path; returns 0 or -1. */
int tu_write_file(const char *path, const void *data, size_t len);

/* Compare got against want element by element with tolerance
 * |got - want| <= abs_tol. Prints the first few mismatches (index, both
 * values, the difference) to stderr, labelled with `what`.
 * Returns the number of mismatches (0 = equal within tolerance). */
int64_t tu_compare_f64(const char *what, const float *got, const double *want,
                       int64_t n, double abs_tol);

/* Bitwise comparison of two float arrays; prints the first mismatches.
 * Returns the number of differing elements. */
int64_t tu_compare_bits(const char *what, const float *a, const float *b, int64_t n);

/* A deterministic generator for test parameters (splitmix64). */
uint64_t tu_rand(uint64_t *state);
/* Uniform integer in [lo, hi]. */
int64_t tu_rand_range(uint64_t *state, int64_t lo, int64_t hi);

#endif
