/*
 * fuzz_numbers.c — the list parser behind a lesson's --x (sim_parse_numbers).
 *
 * Properties: an accepted list has between 1 and max entries, each finite and
 * within float32's range, and one entry more than commas; a refusal says why
 * in one line, even for a list with a newline (sim_shown escapes it). max is small so that the "too many entries" path is reached.
 */
#include "fuzz_util.h"
#include "sim_parse.h"

#include <float.h>
#include <math.h>

#define FUZZ_MAX_NUMBERS 32

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *s = fuzz_string(data, size);
    double x[FUZZ_MAX_NUMBERS];
    int n = -1;
    char err[512];
    err[0] = '\0';
    if (sim_parse_numbers("--x", s, x, FUZZ_MAX_NUMBERS, &n, err, sizeof err) != 0) {
        fuzz_check_message(err, 1, "");   /* one line: entries are shown escaped */
    } else {
        int commas = 0;
        for (const char *p = s; *p; p++)
            commas += *p == ',';
        FUZZ_CHECK(n >= 1 && n <= FUZZ_MAX_NUMBERS, "n = %d", n);
        FUZZ_CHECK(n == commas + 1, "n = %d with %d commas", n, commas);
        for (int k = 0; k < n; k++)
            FUZZ_CHECK(isfinite(x[k]) && fabs(x[k]) <= FLT_MAX, "entry %d = %g", k, x[k]);
    }
    free(s);
    return 0;
}
