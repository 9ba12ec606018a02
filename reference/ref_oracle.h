/*
 * ref_oracle.h — attention in float64, exactly as the formula reads:
 *
 *     O = softmax(scale * Q K^T + mask) V,   scale = 1/sqrt(d),
 *
 * computed row by row with the full row of scores in memory. It is the slow,
 * plain reference every other result in fasim is checked against. Its limits:
 * it needs O(N) doubles of scratch, does O(N^2 d) work, and uses libm's exp
 * and log in double (its own error, about 1e-16 relative, is far below any
 * float32 result it judges).
 *
 * Shapes: Q, K, V, O are (N, d) row-major; L (logsumexp per row) is (N).
 */
#ifndef FASIM_REF_ORACLE_H
#define FASIM_REF_ORACLE_H

#include <stdint.h>

#include "ref_tile.h"   /* ref_mask */

/* O = attention(Q, K, V) in double; when L is not NULL, L[r] receives the
 * natural-log logsumexp of row r's scaled scores. causal != 0 masks key c > r.
 * Returns 0, or -1 if scratch memory could not be allocated. */
int ref_oracle_attention(const double *Q, const double *K, const double *V,
                         int64_t N, int64_t d, int causal, double *O, double *L);

/* The same from float inputs (each widened to double before any arithmetic). */
int ref_oracle_attention_f(const float *Q, const float *K, const float *V,
                           int64_t N, int64_t d, int causal, double *O, double *L);

/* The general form: queries Q (Nq, d), keys and values K, V (Nk, d), O (Nq, d),
 * L (Nq), with the mask of ref_tile.h (causal with an offset, a sliding
 * window). A row that sees no key has O = 0 and L = -inf, as the tile
 * primitives define it. */
int ref_oracle_attention_masked(const float *Q, const float *K, const float *V,
                                int64_t Nq, int64_t Nk, int64_t d, const ref_mask *mk,
                                double *O, double *L);

/* Error of a float result against the oracle.
 * max_abs = max |got - want|;  max_rel = max_abs / max |want| (normwise, so
 * that entries near zero do not make it meaningless). */
typedef struct {
    double max_abs;
    double max_rel;
    int64_t worst_index;   /* flat index of the largest absolute error */
} ref_error;

ref_error ref_compare(const float *got, const double *want, int64_t n);

#endif /* FASIM_REF_ORACLE_H */
