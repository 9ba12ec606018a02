/*
 * fuzz_npy.c — the .npy reader (sim_npy_parse) on arbitrary bytes.
 *
 * Properties beyond "no crash, no leak, no undefined behaviour": an accepted
 * array has rank 2, (N, d), or rank 4, (B, H, N, d), every dimension >= 1
 * (B = H = 1 for rank 2), B*H*N*d within the element limit and no larger than
 * the bytes given, and only finite values (the reader promises to refuse NaN
 * and Inf); a refusal names the problem in one line. The element limit is
 * small so that a header that claims a huge shape must be refused, never
 * allocated.
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
    FUZZ_CHECK(m.rank == 2 || m.rank == 4, "accepted rank %d", m.rank);
    FUZZ_CHECK(m.batch >= 1 && m.heads >= 1 && m.rows >= 1 && m.cols >= 1,
               "accepted shape (%lld, %lld, %lld, %lld)", (long long)m.batch,
               (long long)m.heads, (long long)m.rows, (long long)m.cols);
    FUZZ_CHECK(m.rank == 4 || (m.batch == 1 && m.heads == 1),
               "a 2-D array with batch %lld, heads %lld", (long long)m.batch,
               (long long)m.heads);
    /* Each factor, and each partial product, is checked against the limit
     * (2^16) before it is multiplied further, so no product formed here
     * exceeds 2^32: the check itself cannot overflow. */
    FUZZ_CHECK(m.batch <= FUZZ_NPY_MAX_ELEMS && m.heads <= FUZZ_NPY_MAX_ELEMS &&
               m.rows <= FUZZ_NPY_MAX_ELEMS && m.cols <= FUZZ_NPY_MAX_ELEMS,
               "a dimension over the element limit");
    int64_t n = m.batch * m.heads;
    FUZZ_CHECK(n <= FUZZ_NPY_MAX_ELEMS, "accepted B*H = %lld", (long long)n);
    n *= m.rows;
    FUZZ_CHECK(n <= FUZZ_NPY_MAX_ELEMS, "accepted B*H*N = %lld", (long long)n);
    n *= m.cols;
    FUZZ_CHECK(n <= FUZZ_NPY_MAX_ELEMS, "accepted %lld elements", (long long)n);
    FUZZ_CHECK(m.src_dtype_bytes == 4 || m.src_dtype_bytes == 8, "dtype bytes %d",
               m.src_dtype_bytes);
    /* The data must follow a header: at least 4 or 8 bytes per element. */
    FUZZ_CHECK((uint64_t)n * (uint64_t)m.src_dtype_bytes <= size, "more elements than bytes");
    for (int64_t k = 0; k < n; k++)
        FUZZ_CHECK(isfinite(m.data[k]), "a non-finite value at %lld accepted", (long long)k);
    free(m.data);
    return 0;
}
