/*
 * test_util.c — see test_util.h.
 */
#define _POSIX_C_SOURCE 200809L
#include "test_util.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *tu_tmpdir(void)
{
    static char dir[512];
    if (!dir[0]) {
        const char *base = getenv("TMPDIR");
        snprintf(dir, sizeof dir, "%s/fasim-test-XXXXXX", base && *base ? base : "/tmp");
        if (!mkdtemp(dir)) {
            perror("mkdtemp");
            abort();
        }
    }
    return dir;
}

char *tu_path(char *buf, size_t len, const char *name)
{
    snprintf(buf, len, "%s/%s", tu_tmpdir(), name);
    return buf;
}

int tu_write_file(const char *path, const void *data, size_t len)
{
    FILE *f = fopen(path, "wb");
    if (!f)
        return -1;
    size_t w = len ? fwrite(data, 1, len, f) : 0;
    int rc = fclose(f);
    return (w == len && rc == 0) ? 0 : -1;
}

int64_t tu_compare_f64(const char *what, const float *got, const double *want,
                       int64_t n, double abs_tol)
{
    int64_t bad = 0;
    for (int64_t i = 0; i < n; i++) {
        double diff = fabs((double)got[i] - want[i]);
        if (!(diff <= abs_tol)) {
            if (bad < 5)
                fprintf(stderr, "  %s[%lld]: got %.9g want %.17g diff %.3g > tol %.3g\n",
                        what, (long long)i, (double)got[i], want[i], diff, abs_tol);
            bad++;
        }
    }
    if (bad > 5)
        fprintf(stderr, "  %s: %lld mismatches in all\n", what, (long long)bad);
    return bad;
}

int64_t tu_compare_bits(const char *what, const float *a, const float *b, int64_t n)
{
    int64_t bad = 0;
    for (int64_t i = 0; i < n; i++) {
        if (memcmp(&a[i], &b[i], sizeof(float)) != 0) {
            if (bad < 5)
                fprintf(stderr, "  %s[%lld]: %.9g vs %.9g (bits differ)\n",
                        what, (long long)i, (double)a[i], (double)b[i]);
            bad++;
        }
    }
    return bad;
}

uint64_t tu_rand(uint64_t *state)
{
    uint64_t z = (*state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

int64_t tu_rand_range(uint64_t *state, int64_t lo, int64_t hi)
{
    uint64_t span = (uint64_t)(hi - lo) + 1;
    return lo + (int64_t)(tu_rand(state) % span);
}
