/*
 * mask_util.h — the mask from its definition, for tests that count what a
 * loop order computes or moves tile by tile (test_theory, test_flops).
 */
#ifndef FASIM_TEST_MASK_UTIL_H
#define FASIM_TEST_MASK_UTIL_H

#include <stdint.h>

#include "sim.h"

static inline int64_t min64(int64_t a, int64_t b)
{
    return a < b ? a : b;
}

/* Is key c visible to query row r? Written from the definition (the queries
 * are the last N positions of the N_k keys; causal: c <= r + off; a window W
 * also c > r + off - W), not from sim.h's interval arithmetic. */
static inline int visible(const sim_shape *sh, int64_t r, int64_t c)
{
    const int64_t Nk = sh->Nk ? sh->Nk : sh->N, off = Nk - sh->N;
    if (!sh->causal)
        return 1;
    return c <= r + off && (sh->window == 0 || c > r + off - sh->window);
}

#endif /* FASIM_TEST_MASK_UTIL_H */
