/*
 * fuzz_npy.c — the .npy reader (sim_npy_parse) on arbitrary bytes.
 *
 * Properties beyond "no crash, no leak, no undefined behaviour": an accepted
 * array is 2-D, non-empty, within the element limit, and holds only finite
 * values (the reader promises to refuse NaN and Inf); a refusal names the
 * problem in one line. The element limit is small so that a header that
 * claims a huge shape must be refused, never allocated.
 */
#include "fuzz_util.h"
#include "sim_npy.h"

#include <math.h>

#define FUZZ_NPY_MAX_ELEMS (INT64_C(1) << 16)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    sim_npy_matrix m;
    char err[512];
    err[0] = '\0';
    if (sim_npy_parse(data, size, "fuzz.npy", FUZZ_NPY_MAX_ELEMS, &m, err, sizeof err) != 0) {
        fuzz_check_message(err, 1, "");
        return 0;
    }
    FUZZ_CHECK(m.rows >= 1 && m.cols >= 1, "accepted shape (%lld, %lld)", (long long)m.rows,
               (long long)m.cols);
    FUZZ_CHECK(m.rows * m.cols <= FUZZ_NPY_MAX_ELEMS, "accepted %lld elements",
               (long long)(m.rows * m.cols));
    FUZZ_CHECK(m.src_dtype_bytes == 4 || m.src_dtype_bytes == 8, "dtype bytes %d",
               m.src_dtype_bytes);
    /* The data must follow a header: at least 4 or 8 bytes per element. */
    FUZZ_CHECK((uint64_t)(m.rows * m.cols) * (uint64_t)m.src_dtype_bytes <= size,
               "more elements than bytes");
    for (int64_t k = 0; k < m.rows * m.cols; k++)
        FUZZ_CHECK(isfinite(m.data[k]), "a non-finite value at %lld accepted", (long long)k);
    free(m.data);
    return 0;
}
