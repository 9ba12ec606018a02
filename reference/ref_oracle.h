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
 * The backward pass (ref_oracle_attention_bwd) follows the same rules.
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

/* The specification of the oracle's arithmetic: the plain loops, one key at
 * a time (score_rc = scale sum_t q_rt k_ct in increasing t; O_rt = sum_c
 * P_rc v_ct in increasing c, then / l_r). The oracle orders its loops for
 * speed and must produce these doubles bit for bit; tests and bench/ hold it
 * to that. Same contract as ref_oracle_attention_masked, slower. */
int ref_oracle_attention_plain(const float *Q, const float *K, const float *V,
                               int64_t Nq, int64_t Nk, int64_t d, const ref_mask *mk,
                               double *O, double *L);

/* ref_oracle_attention_masked from double inputs (used where inputs are
 * perturbed by less than a float can hold, as in finite differences). */
int ref_oracle_attention_masked_d(const double *Q, const double *K, const double *V,
                                  int64_t Nq, int64_t Nk, int64_t d, const ref_mask *mk,
                                  double *O, double *L);

/*
 * The backward pass in double: given dO = dF/dO for some scalar F of the
 * output O = attention(Q, K, V) (the mask as in ref_oracle_attention_masked),
 * the gradients
 *     P = softmax(S), S = scale Q K^T + mask     (masked entries of P are 0)
 *     dV = P^T dO          dP = dO V^T           D_r = sum_c P_rc dP_rc
 *     dS = P o (dP - D)    dQ = scale dS K       dK = scale dS^T Q
 * (o: elementwise; D_r also equals dO_r . O_r). P is recomputed row by row
 * from Q and K, as FlashAttention's backward does, so no forward state is
 * passed in.
 * Shapes: Q, dO, dQ (Nq, d); K, V, dK, dV (Nk, d); all row-major.
 * dQ, dK, dV are overwritten, not accumulated into. A query row that sees no
 * key (O_r = 0 whatever Q, K, V are) contributes nothing: its dQ row is 0 and
 * it adds nothing to dK or dV. Scratch: 2 Nk doubles, O(Nq Nk d) work.
 * Returns 0, or -1 if scratch memory could not be allocated (the outputs are
 * then untouched).
 */
int ref_oracle_attention_bwd(const float *Q, const float *K, const float *V, const float *dO,
                             int64_t Nq, int64_t Nk, int64_t d, const ref_mask *mk,
                             double *dQ, double *dK, double *dV);

/* The same from double inputs. */
int ref_oracle_attention_bwd_d(const double *Q, const double *K, const double *V,
                               const double *dO, int64_t Nq, int64_t Nk, int64_t d,
                               const ref_mask *mk, double *dQ, double *dK, double *dV);

/* Error of a float result against the oracle.
 * max_abs = max |got - want|;  max_rel = max_abs / max |want| (normwise, so
 * that entries near zero do not make it meaningless);  rmse = sqrt(sum
 * (got - want)^2 / n), the root-mean-square error FlashAttention-3's Table 3
 * reports. */
typedef struct {
    double max_abs;
    double max_rel;
    int64_t worst_index;   /* flat index of the largest absolute error */
    double rmse;
} ref_error;

ref_error ref_compare(const float *got, const double *want, int64_t n);

#endif /* FASIM_REF_ORACLE_H */
