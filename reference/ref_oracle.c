/*
 * ref_oracle.c — the float64 oracle. See ref_oracle.h for its contract.
 */
#include "ref_oracle.h"

#include <math.h>
#include <stdlib.h>

static int oracle(const void *Qv, const void *Kv, const void *Vv, int is_float,
                  int64_t Nq, int64_t Nk, int64_t d, const ref_mask *mk, double *O,
                  double *L)
{
#define AT(p, i) (is_float ? (double)((const float *)(p))[i] : ((const double *)(p))[i])
    double *s = malloc((size_t)(Nk > 0 ? Nk : 1) * sizeof *s);   /* one row of scores */
    if (!s)
        return -1;
    const double scale = 1.0 / sqrt((double)d);
    for (int64_t r = 0; r < Nq; r++) {
        double m = -INFINITY;
        for (int64_t c = 0; c < Nk; c++) {        /* s = scale * q_r . k_c, or -inf */
            if (!ref_mask_visible(mk, r, c)) {
                s[c] = -INFINITY;
                continue;
            }
            double dot = 0.0;
            for (int64_t t = 0; t < d; t++)
                dot += AT(Qv, r * d + t) * AT(Kv, c * d + t);
            s[c] = scale * dot;
            if (s[c] > m)
                m = s[c];
        }
        double l = 0.0;                           /* softmax denominators */
        for (int64_t c = 0; c < Nk; c++) {
            s[c] = s[c] == -INFINITY ? 0.0 : exp(s[c] - m);
            l += s[c];
        }
        for (int64_t t = 0; t < d; t++) {         /* O_r = sum_c P_rc v_c */
            double acc = 0.0;
            for (int64_t c = 0; c < Nk; c++)
                acc += s[c] * AT(Vv, c * d + t);
            O[r * d + t] = l > 0.0 ? acc / l : 0.0;   /* no key seen: 0 */
        }
        if (L)
            L[r] = l > 0.0 ? m + log(l) : -INFINITY;
    }
    free(s);
    return 0;
#undef AT
}

int ref_oracle_attention(const double *Q, const double *K, const double *V,
                         int64_t N, int64_t d, int causal, double *O, double *L)
{
    const ref_mask mk = { causal, 0, 0 };
    return oracle(Q, K, V, 0, N, N, d, &mk, O, L);
}

int ref_oracle_attention_f(const float *Q, const float *K, const float *V,
                           int64_t N, int64_t d, int causal, double *O, double *L)
{
    const ref_mask mk = { causal, 0, 0 };
    return oracle(Q, K, V, 1, N, N, d, &mk, O, L);
}

int ref_oracle_attention_masked(const float *Q, const float *K, const float *V,
                                int64_t Nq, int64_t Nk, int64_t d, const ref_mask *mk,
                                double *O, double *L)
{
    return oracle(Q, K, V, 1, Nq, Nk, d, mk, O, L);
}

ref_error ref_compare(const float *got, const double *want, int64_t n)
{
    ref_error e = { 0.0, 0.0, -1 };
    double max_want = 0.0;
    for (int64_t i = 0; i < n; i++) {
        double diff = fabs((double)got[i] - want[i]);
        if (diff > e.max_abs || (diff != diff && e.max_abs == e.max_abs)) {
            e.max_abs = diff;
            e.worst_index = i;
        }
        if (fabs(want[i]) > max_want)
            max_want = fabs(want[i]);
    }
    e.max_rel = max_want > 0.0 ? e.max_abs / max_want : e.max_abs;
    return e;
}
