/*
 * ref_oracle.c — the float64 oracle. See ref_oracle.h for its contract.
 */
#include "ref_oracle.h"

#include <math.h>
#include <stdlib.h>

#define AT(p, i) (is_float ? (double)((const float *)(p))[i] : ((const double *)(p))[i])

/* Row r's scaled scores s[c] = scale q_r . k_c, -inf where masked; returns
 * their maximum (-inf when the row sees no key). Each dot product sums over t
 * in increasing t; four keys are summed side by side, independent chains that
 * the CPU overlaps, and each keeps its own order, so every s[c] is the double
 * a one-key loop gives. */
static double score_row(const void *Qv, const void *Kv, int is_float, int64_t r, int64_t Nk,
                        int64_t d, const ref_mask *mk, double scale, double *s)
{
    double m = -INFINITY;
    int64_t c = 0;
    while (c < Nk) {
        if (c + 4 <= Nk && ref_mask_visible(mk, r, c) && ref_mask_visible(mk, r, c + 1) &&
            ref_mask_visible(mk, r, c + 2) && ref_mask_visible(mk, r, c + 3)) {
            double d0 = 0.0, d1 = 0.0, d2 = 0.0, d3 = 0.0;
            for (int64_t t = 0; t < d; t++) {
                const double q = AT(Qv, r * d + t);
                d0 += q * AT(Kv, (c + 0) * d + t);
                d1 += q * AT(Kv, (c + 1) * d + t);
                d2 += q * AT(Kv, (c + 2) * d + t);
                d3 += q * AT(Kv, (c + 3) * d + t);
            }
            s[c + 0] = scale * d0;
            s[c + 1] = scale * d1;
            s[c + 2] = scale * d2;
            s[c + 3] = scale * d3;
            for (int k = 0; k < 4; k++, c++)
                if (s[c] > m)
                    m = s[c];
            continue;
        }
        if (!ref_mask_visible(mk, r, c)) {    /* one key at a time near a mask's edge */
            s[c++] = -INFINITY;
            continue;
        }
        double dot = 0.0;
        for (int64_t t = 0; t < d; t++)
            dot += AT(Qv, r * d + t) * AT(Kv, c * d + t);
        s[c] = scale * dot;
        if (s[c] > m)
            m = s[c];
        c++;
    }
    return m;
}

static int oracle(const void *Qv, const void *Kv, const void *Vv, int is_float,
                  int64_t Nq, int64_t Nk, int64_t d, const ref_mask *mk, double *O,
                  double *L)
{
    double *s = malloc((size_t)(Nk > 0 ? Nk : 1) * sizeof *s);   /* one row of scores */
    if (!s)
        return -1;
    const double scale = 1.0 / sqrt((double)d);
    for (int64_t r = 0; r < Nq; r++) {
        double m = score_row(Qv, Kv, is_float, r, Nk, d, mk, scale, s);
        double l = 0.0;                           /* softmax denominators */
        for (int64_t c = 0; c < Nk; c++) {
            s[c] = s[c] == -INFINITY ? 0.0 : exp(s[c] - m);
            l += s[c];
        }
        /* O_r = sum_c P_rc v_c. Each O_rt sums over c in increasing c, as a
         * loop over c inside one over t would; walking V by rows (c outside)
         * reads it in memory order. */
        double *o = O + r * d;
        for (int64_t t = 0; t < d; t++)
            o[t] = 0.0;
        for (int64_t c = 0; c < Nk; c++) {
            const double p = s[c];
            for (int64_t t = 0; t < d; t++)
                o[t] += p * AT(Vv, c * d + t);
        }
        for (int64_t t = 0; t < d; t++)
            o[t] = l > 0.0 ? o[t] / l : 0.0;      /* no key seen: 0 */
        if (L)
            L[r] = l > 0.0 ? m + log(l) : -INFINITY;
    }
    free(s);
    return 0;
}

int ref_oracle_attention_plain(const float *Q, const float *K, const float *V,
                               int64_t Nq, int64_t Nk, int64_t d, const ref_mask *mk,
                               double *O, double *L)
{
    double *s = malloc((size_t)(Nk > 0 ? Nk : 1) * sizeof *s);
    if (!s)
        return -1;
    const double scale = 1.0 / sqrt((double)d);
    for (int64_t r = 0; r < Nq; r++) {
        double m = -INFINITY, l = 0.0;
        for (int64_t c = 0; c < Nk; c++) {
            double dot = 0.0;
            for (int64_t t = 0; t < d; t++)
                dot += (double)Q[r * d + t] * (double)K[c * d + t];
            s[c] = ref_mask_visible(mk, r, c) ? scale * dot : -INFINITY;
            m = s[c] > m ? s[c] : m;
        }
        for (int64_t c = 0; c < Nk; c++) {
            s[c] = s[c] == -INFINITY ? 0.0 : exp(s[c] - m);
            l += s[c];
        }
        for (int64_t t = 0; t < d; t++) {
            double acc = 0.0;
            for (int64_t c = 0; c < Nk; c++)
                acc += s[c] * (double)V[c * d + t];
            O[r * d + t] = l > 0.0 ? acc / l : 0.0;
        }
        if (L)
            L[r] = l > 0.0 ? m + log(l) : -INFINITY;
    }
    free(s);
    return 0;
}

int ref_oracle_attention(const double *Q, const double *K, const double *V,
                         int64_t N, int64_t d, int causal, double *O, double *L)
{
    const ref_mask mk = { causal, 0, 0, NULL };
    return oracle(Q, K, V, 0, N, N, d, &mk, O, L);
}

int ref_oracle_attention_f(const float *Q, const float *K, const float *V,
                           int64_t N, int64_t d, int causal, double *O, double *L)
{
    const ref_mask mk = { causal, 0, 0, NULL };
    return oracle(Q, K, V, 1, N, N, d, &mk, O, L);
}

int ref_oracle_attention_masked(const float *Q, const float *K, const float *V,
                                int64_t Nq, int64_t Nk, int64_t d, const ref_mask *mk,
                                double *O, double *L)
{
    return oracle(Q, K, V, 1, Nq, Nk, d, mk, O, L);
}

int ref_oracle_attention_masked_d(const double *Q, const double *K, const double *V,
                                  int64_t Nq, int64_t Nk, int64_t d, const ref_mask *mk,
                                  double *O, double *L)
{
    return oracle(Q, K, V, 0, Nq, Nk, d, mk, O, L);
}

/*
 * The backward pass, one query row r at a time (Q, K, V, dO as in oracle()):
 *   P_r   = softmax(s_r),  s_rc = scale q_r . k_c  (masked: P_rc = 0)
 *   dP_rc = dO_r . v_c
 *   D_r   = sum_c P_rc dP_rc                  (= dO_r . O_r)
 *   dS_rc = P_rc (dP_rc - D_r)
 *   dQ_r  = scale sum_c dS_rc k_c;   dK_c += scale dS_rc q_r;   dV_c += P_rc dO_r
 * Scratch: p and ds, one row of Nk doubles each.
 */
static int oracle_bwd(const void *Qv, const void *Kv, const void *Vv, const void *dOv,
                      int is_float, int64_t Nq, int64_t Nk, int64_t d, const ref_mask *mk,
                      double *dQ, double *dK, double *dV)
{
    size_t row = (size_t)(Nk > 0 ? Nk : 1);
    double *p = malloc(row * sizeof *p);        /* scores, then P_r */
    double *ds = malloc(row * sizeof *ds);      /* dP_r, then dS_r */
    if (!p || !ds) {
        free(p);
        free(ds);
        return -1;
    }
    const double scale = 1.0 / sqrt((double)d);
    for (int64_t i = 0; i < Nk * d; i++) {
        dK[i] = 0.0;
        dV[i] = 0.0;
    }
    for (int64_t r = 0; r < Nq; r++) {
        double m = score_row(Qv, Kv, is_float, r, Nk, d, mk, scale, p);
        double l = 0.0;
        for (int64_t c = 0; c < Nk; c++) {
            p[c] = p[c] == -INFINITY ? 0.0 : exp(p[c] - m);
            l += p[c];
        }
        for (int64_t t = 0; t < d; t++)
            dQ[r * d + t] = 0.0;
        if (!(l > 0.0))
            continue;                             /* no key seen: O_r = 0, no gradient */
        for (int64_t c = 0; c < Nk; c++)
            p[c] /= l;                            /* P_rc */

        double D = 0.0;
        for (int64_t c = 0; c < Nk; c++) {        /* dP_rc = dO_r . v_c;  D_r */
            double dot = 0.0;
            if (p[c] != 0.0)
                for (int64_t t = 0; t < d; t++)
                    dot += AT(dOv, r * d + t) * AT(Vv, c * d + t);
            ds[c] = dot;
            D += p[c] * dot;
        }
        for (int64_t c = 0; c < Nk; c++)          /* dS_rc = P_rc (dP_rc - D_r) */
            ds[c] = p[c] * (ds[c] - D);

        for (int64_t c = 0; c < Nk; c++) {
            if (p[c] == 0.0)
                continue;                         /* masked (or underflowed): adds 0 */
            for (int64_t t = 0; t < d; t++) {
                dQ[r * d + t] += scale * ds[c] * AT(Kv, c * d + t);
                dK[c * d + t] += scale * ds[c] * AT(Qv, r * d + t);
                dV[c * d + t] += p[c] * AT(dOv, r * d + t);
            }
        }
    }
    free(p);
    free(ds);
    return 0;
}
#undef AT

int ref_oracle_attention_bwd(const float *Q, const float *K, const float *V, const float *dO,
                             int64_t Nq, int64_t Nk, int64_t d, const ref_mask *mk,
                             double *dQ, double *dK, double *dV)
{
    return oracle_bwd(Q, K, V, dO, 1, Nq, Nk, d, mk, dQ, dK, dV);
}

int ref_oracle_attention_bwd_d(const double *Q, const double *K, const double *V,
                               const double *dO, int64_t Nq, int64_t Nk, int64_t d,
                               const ref_mask *mk, double *dQ, double *dK, double *dV)
{
    return oracle_bwd(Q, K, V, dO, 0, Nq, Nk, d, mk, dQ, dK, dV);
}

ref_error ref_compare(const float *got, const double *want, int64_t n)
{
    ref_error e = { 0.0, 0.0, -1, 0.0 };
    double max_want = 0.0, sq = 0.0;
    for (int64_t i = 0; i < n; i++) {
        double diff = fabs((double)got[i] - want[i]);
        sq += diff * diff;
        if (diff > e.max_abs || (diff != diff && e.max_abs == e.max_abs)) {
            e.max_abs = diff;
            e.worst_index = i;
        }
        if (fabs(want[i]) > max_want)
            max_want = fabs(want[i]);
    }
    e.max_rel = max_want > 0.0 ? e.max_abs / max_want : e.max_abs;
    e.rmse = n > 0 ? sqrt(sq / (double)n) : 0.0;
    return e;
}
