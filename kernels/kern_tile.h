/*
 * kern_tile.h — tiles held in shared memory in their storage type, and the
 * few tile primitives of reference/ref_tile.h rewritten to read them.
 *
 * The plan charges Q_i, K_j, V_j (and the naive order's P_ij, dS_ij) at the dtype's
 * bytes: 2 for fp16 and bf16, 4 for fp32. The kernels hold them so: a tile
 * of an fp16 run is an array of fp16 bit patterns (kern_half.h), of a bf16
 * run of bf16 bit patterns, of an fp32 run of floats. A kern_tv ("tile
 * view") is such an array with its type; kern_tv_at reads one element as the
 * float it holds, exactly (the values are already rounded to the dtype).
 *
 * The primitives below are ref_tile_scores (one row), ref_pv_acc_row and
 * ref_fa1_step_row with each tile element read through kern_tv_at just before
 * its use: the same operations, in the same order, on the same float values,
 * so the same bits (tests/test_kernels.c compares the output with sim_run's
 * by memcmp). The fp32 parts (scores, statistics, accumulators) stay floats
 * and go through ref_tile.h's own primitives. The tile-of-rows primitives
 * further down apply them to a thread's share of the rows; on the CPU they
 * convert the tiles once and call reference/ref_simd.c.
 */
#ifndef FASIM_KERN_TILE_H
#define FASIM_KERN_TILE_H

#include "kern_exec.h"
#include "kern_half.h"
#if !defined(__CUDACC__)
#include "ref_simd.h"
#endif

/* Bytes of one tile element in shared memory: the dtype's (2, 2, 4). */
KERN_DEVICE int64_t kern_tile_elem_bytes(sim_dtype dt)
{
    return dt == SIM_FP32 ? 4 : 2;
}

/* A tile in shared memory in storage type t (SIM_FP32: floats; SIM_FP16 or
 * SIM_BF16: uint16_t bit patterns). */
typedef struct {
    const void *p;
    sim_dtype t;
} kern_tv;

KERN_DEVICE kern_tv kern_tv_make(const void *p, sim_dtype t)
{
    kern_tv v;
    v.p = p;
    v.t = t;
    return v;
}

/* Element k as a float (exact). */
KERN_DEVICE float kern_tv_at(kern_tv v, int64_t k)
{
    if (v.t == SIM_FP32)
        return ((const float *)v.p)[k];
    uint16_t h = ((const uint16_t *)v.p)[k];
    return v.t == SIM_FP16 ? kern_fp16_to_f32(h) : kern_bf16_to_f32(h);
}

/* Store x (already a value of type t) as element k of a tile of type t. */
KERN_DEVICE void kern_tile_put(void *p, sim_dtype t, int64_t k, float x)
{
    if (t == SIM_FP32)
        ((float *)p)[k] = x;
    else
        ((uint16_t *)p)[k] = t == SIM_FP16 ? kern_f32_to_fp16(x) : kern_f32_to_bf16(x);
}

/* A thread's rows of a tile of n rows: r = lo, lo + step, ... < hi. Under
 * nvcc rows tid, tid + blockDim, ... (neighbouring threads, neighbouring
 * rows); on the CPU a contiguous chunk of ceil(n / blockDim) rows. */
typedef struct {
    int64_t lo, hi, step;
} kern_rows;

KERN_DEVICE kern_rows kern_my_rows(int64_t n)
{
    const int64_t tid = kern_thread_x(), nt = kern_block_dim();
    kern_rows R;
#if defined(__CUDACC__)
    R.lo = tid;
    R.hi = n;
    R.step = nt;
#else
    const int64_t chunk = (n + nt - 1) / nt;
    R.lo = kern_min(n, tid * chunk);
    R.hi = kern_min(n, R.lo + chunk);
    R.step = 1;
#endif
    return R;
}

/* kern_load into a tile of storage type dt: the tensor's values (rounded to
 * dt in global memory) are stored in dt's bits, exactly. Counted, and
 * without a barrier, as kern_load. Only for tensors held in the dtype in
 * HBM (Q, K, V, P): m, l, L are fp32 and go through kern_load. */
KERN_DEVICE void kern_load_tile(kern_counts *cnt, sim_tensor t, sim_dtype dt, void *dst,
                                const float *src, int64_t ld, int64_t r0, int64_t c0,
                                int64_t rows, int64_t cols)
{
#if defined(__CUDACC__)
    for (int64_t x = kern_thread_x(); x < rows * cols; x += kern_block_dim()) {
        int64_t r = x / cols, c = x % cols;
        kern_tile_put(dst, dt, x, src[(r0 + r) * ld + c0 + c]);
    }
#else
    /* The thread's rows of the tile, each converted at once. */
    const kern_rows R = kern_my_rows(rows);
    for (int64_t r = R.lo; r < R.hi; r++)
        kern_cpu_tile_put_n((unsigned char *)dst + r * cols * kern_tile_elem_bytes(dt), dt,
                            src + (r0 + r) * ld + c0, cols);
#endif
    if (cnt && kern_thread_x() == 0) {
        KERN_COUNT_ADD(&cnt->read_elems[t], rows * cols);
        KERN_COUNT_ADD(&cnt->read_ops[t], 1);
    }
}

/* The empty online-softmax state of rows R: m = -inf, l = 0, and O = 0
 * (rows x d; none when O is NULL). No barrier inside. */
KERN_DEVICE void kern_state_empty_rows(kern_rows R, float *m, float *l, float *O, int64_t d)
{
    for (int64_t r = R.lo; r < R.hi; r += R.step) {
        m[r] = -REF_INF;
        l[r] = 0.0f;
        for (int64_t c = 0; O && c < d; c++)
            O[r * d + c] = 0.0f;
    }
}

/* The same for this thread's rows t, t + blockDim, ... of `rows`. */
KERN_DEVICE void kern_state_empty(float *m, float *l, float *O, int64_t rows, int64_t d)
{
    kern_rows R;
    R.lo = kern_thread_x();
    R.hi = rows;
    R.step = kern_block_dim();
    kern_state_empty_rows(R, m, l, O, d);
}

/* ref_tile_scores for one row: s[c] = scale * sum_t Q[q0 + t] K[c d + t],
 * c = 0..bc-1, each dot product accumulated t = 0..d-1 with fmaf. */
KERN_DEVICE void kern_scores_row(kern_tv Q, int64_t q0, kern_tv K, int bc, int d,
                                 float scale, float *s)
{
    for (int c = 0; c < bc; c++) {
        const int64_t k0 = (int64_t)c * d;
        float acc = 0.0f;
        for (int t = 0; t < d; t++)
            acc = fmaf(kern_tv_at(Q, q0 + t), kern_tv_at(K, k0 + t), acc);
        s[c] = acc * scale;
    }
}

/* ref_pv_acc_row: o[c] <- alpha o[c] + sum_k P[p0 + k] V[k d + c], k in order. */
KERN_DEVICE void kern_pv_acc_row(float *o, int d, float alpha, kern_tv P, int64_t p0,
                                 kern_tv V, int bc)
{
    for (int c = 0; c < d; c++) {
        float acc = alpha * o[c];
        for (int k = 0; k < bc; k++)
            acc = fmaf(kern_tv_at(P, p0 + k), kern_tv_at(V, (int64_t)k * d + c), acc);
        o[c] = acc;
    }
}

/* ref_row_dot with a and b read as tile views from a0, b0: fmaf from 0.0f,
 * k = 0..n-1 (the backward's D_i[r] = rowsum(dO_i o O_i)). */
KERN_DEVICE float kern_row_dot_tv(kern_tv a, int64_t a0, kern_tv b, int64_t b0, int n)
{
    float acc = 0.0f;
    for (int k = 0; k < n; k++)
        acc = fmaf(kern_tv_at(a, a0 + k), kern_tv_at(b, b0 + k), acc);
    return acc;
}

/* Row c of ref_tile_acc_tn: acc[t] (row c of the (acols, d) accumulator)
 * <- fmaf(scale, sum_r A[r][c] B[r][t], acc[t]), the sum over r = 0..rows-1
 * with fmaf from 0.0f; A (rows, acols) and B (rows, d) tile views (A in the
 * dtype: standard attention's P_ij, dS_ij; or fp32, kern_acc_tn_row). */
KERN_DEVICE void kern_acc_tn_row_tv(float *acc, int c, kern_tv A, int rows, int acols,
                                    kern_tv B, int d, float scale)
{
    for (int t = 0; t < d; t++) {
        float s = 0.0f;
        for (int r = 0; r < rows; r++)
            s = fmaf(kern_tv_at(A, (int64_t)r * acols + c), kern_tv_at(B, (int64_t)r * d + t),
                     s);
        acc[t] = fmaf(scale, s, acc[t]);
    }
}

/* kern_acc_tn_row_tv with A fp32 (FA2's recomputed P_ij, dS_ij). */
KERN_DEVICE void kern_acc_tn_row(float *acc, int c, const float *A, int rows, int acols,
                                 kern_tv B, int d, float scale)
{
    kern_acc_tn_row_tv(acc, c, kern_tv_make(A, SIM_FP32), rows, acols, B, d, scale);
}

/* Row r of ref_tile_acc_nn: acc[t] <- fmaf(scale, sum_c A[a0 + c] B[c][t],
 * acc[t]), the sum over c = 0..k-1 with fmaf from 0.0f; A a tile view whose
 * row r starts at a0 (k elements), B a tile view (k, d). */
KERN_DEVICE void kern_acc_nn_row_tv(float *acc, kern_tv A, int64_t a0, int k, kern_tv B,
                                    int d, float scale)
{
    for (int t = 0; t < d; t++) {
        float s = 0.0f;
        for (int c = 0; c < k; c++)
            s = fmaf(kern_tv_at(A, a0 + c), kern_tv_at(B, (int64_t)c * d + t), s);
        acc[t] = fmaf(scale, s, acc[t]);
    }
}

/* kern_acc_nn_row_tv with a the fp32 row r of A (k). */
KERN_DEVICE void kern_acc_nn_row(float *acc, const float *a, int k, kern_tv B, int d,
                                 float scale)
{
    kern_acc_nn_row_tv(acc, kern_tv_make(a, SIM_FP32), 0, k, B, d, scale);
}

/* ref_fa1_step_row (FA1 lines 10-12 for one row) with V_j read as a tile view;
 * s (bc floats) is the fp32 row of S_ij, P~ on return. */
KERN_DEVICE void kern_fa1_step_row(float *s, int bc, kern_tv V, int d, float *o, float *m,
                                   float *l, int p_round)
{
    ref_fa1_weights w = ref_fa1_stats_row(s, bc, m, l);     /* lines 10-11 */
    ref_round_row(s, bc, p_round);      /* P~ as the product takes it, after l~ */
    if (w.l_new == 0.0f)                /* nothing unmasked seen yet: O stays 0 */
        d = 0;
    for (int c = 0; c < d; c++) {                          /* line 12 */
        float pv = 0.0f;
        for (int k = 0; k < bc; k++)
            pv = fmaf(s[k], kern_tv_at(V, (int64_t)k * d + c), pv);
        o[c] = fmaf(w.b, pv, w.la * o[c]) / w.l_new;
    }
}

/*
 * Tile-of-rows primitives: the row primitives above applied to a thread's
 * share of a tile's rows (kern_my_rows), in the same order for each row, so
 * the same bits. Under nvcc they are the row loops themselves. On the CPU
 * a thread's share is a contiguous chunk of rows, its tiles are converted
 * to floats once (into the thread's scratch, kern_cpu_scratch; an fp32 tile
 * is used in place) and the products go through reference/ref_simd.c, whose
 * lanes run independent outputs, each with ref_tile.h's operations in its
 * order (tests/test_simd.c). Without scratch (no memory) the row loops run.
 * Which thread computes a row never changes its bits.
 */

#if !defined(__CUDACC__)
/* Elements k0 .. k0 + n - 1 of v as floats: v itself for an fp32 tile, else
 * a copy in scratch slot `slot`; NULL when there is no memory for it. */
static inline const float *kern_tv_floats(kern_tv v, int64_t k0, int64_t n, int slot)
{
    if (v.t == SIM_FP32)
        return (const float *)v.p + k0;
    float *f = (float *)kern_cpu_scratch(slot, (size_t)n * sizeof(float));
    if (f)
        kern_cpu_tile_floats((const uint16_t *)v.p + k0, v.t, n, f);
    return f;
}

/* acc[x] <- fmaf(scale, s[x], acc[x]), x < n: the tail of ref_tile_acc_*. */
static inline void kern_fma_into(float *acc, float scale, const float *s, int64_t n)
{
    for (int64_t x = 0; x < n; x++)
        acc[x] = fmaf(scale, s[x], acc[x]);
}

/* n floats of zeros in scratch slot `slot` (NULL: no memory). */
static inline float *kern_zeros(int64_t n, int slot)
{
    float *z = (float *)kern_cpu_scratch(slot, (size_t)n * sizeof(float));
    for (int64_t k = 0; z && k < n; k++)
        z[k] = 0.0f;
    return z;
}
#endif

/* Line 9's online step for one row (ref_online_step; on the CPU its exps
 * side by side, ref_simd_online_step). */
KERN_DEVICE float kern_online_step(float *s, int n, float *m, float *l)
{
#if defined(__CUDACC__)
    return ref_online_step(s, n, m, l);
#else
    return ref_simd_online_step(s, n, m, l);
#endif
}

/* ref_exp_shift_sum (on the CPU its exps side by side, ref_simd.h). */
KERN_DEVICE float kern_exp_shift_sum(float *x, int n, float m)
{
#if defined(__CUDACC__)
    return ref_exp_shift_sum(x, n, m);
#else
    return ref_simd_exp_shift_sum(x, n, m);
#endif
}

/* ref_exp_normalise (on the CPU its exps side by side, ref_simd.h). */
KERN_DEVICE void kern_exp_normalise(const float *x, float *p, int n, float m, float inv_l)
{
#if defined(__CUDACC__)
    ref_exp_normalise(x, p, n, m, inv_l);
#else
    ref_simd_exp_normalise(x, p, n, m, inv_l);
#endif
}

/* o[c] <- alpha o[c], c < d: ref_pv_acc_row's first product, taken apart so
 * that the accumulation can run with alpha 1 (1 x == x, exactly). */
KERN_DEVICE void kern_scale_row(float *o, int d, float alpha)
{
    for (int c = 0; c < d; c++)
        o[c] = alpha * o[c];
}

/* kern_scores_row for rows R: S[r] (row length bc) = scale Q[r] K^T, with
 * Q's row r at r d. */
KERN_DEVICE void kern_scores_rows(kern_rows R, kern_tv Q, kern_tv K, int bc, int d,
                                  float scale, float *S)
{
#if !defined(__CUDACC__)
    const int64_t n = R.hi - R.lo;
    if (n <= 0)
        return;
    const float *Qf = kern_tv_floats(Q, R.lo * d, n * d, 0);
    const float *Kf = kern_tv_floats(K, 0, (int64_t)bc * d, 1);
    if (Qf && Kf) {
        ref_simd_scores(Qf, Kf, (int)n, bc, d, scale, S + R.lo * bc);
        return;
    }
#endif
    for (int64_t r = R.lo; r < R.hi; r += R.step)
        kern_scores_row(Q, r * d, K, bc, d, scale, S + r * bc);
}

/* kern_pv_acc_row with alpha 1 for rows R: O[r] <- 1 O[r] + P[r] V, with
 * P's row r at r bc (O (rows, d), P (rows, bc), V (bc, d)). */
KERN_DEVICE void kern_pv_acc_rows(kern_rows R, float *O, int d, kern_tv P, kern_tv V, int bc)
{
#if !defined(__CUDACC__)
    const int64_t n = R.hi - R.lo;
    if (n <= 0)
        return;
    const float *Pf = kern_tv_floats(P, R.lo * bc, n * bc, 0);
    const float *Vf = kern_tv_floats(V, 0, (int64_t)bc * d, 1);
    if (Pf && Vf) {
        ref_simd_pv_acc(O + R.lo * d, d, NULL, Pf, Vf, (int)n, bc);
        return;
    }
#endif
    for (int64_t r = R.lo; r < R.hi; r += R.step)
        kern_pv_acc_row(O + r * d, d, 1.0f, P, r * bc, V, bc);
}

/* kern_fa1_step_row for rows R of S (row length bc, masked scores; P~ on
 * return), O (rows, d), m, l. */
KERN_DEVICE void kern_fa1_step_rows(kern_rows R, float *S, int bc, kern_tv V, int d, float *O,
                                    float *m, float *l, int p_round)
{
#if !defined(__CUDACC__)
    const int64_t n = R.hi - R.lo;
    if (n <= 0)
        return;
    ref_fa1_weights *w = (ref_fa1_weights *)kern_cpu_scratch(0, (size_t)n * sizeof *w);
    const float *Vf = kern_tv_floats(V, 0, (int64_t)bc * d, 1);
    if (w && Vf) {
        for (int64_t r = R.lo; r < R.hi; r++) {
            /* ref_fa1_stats_row, its exps side by side (ref_simd.h) */
            const float m_t = ref_row_max(S + r * bc, bc);                    /* 10 */
            const float l_t = ref_simd_exp_shift_sum(S + r * bc, bc, m_t);
            w[r - R.lo] = ref_fa1_weights_row(m[r], l[r], m_t, l_t, &m[r]);  /* 11 */
            l[r] = w[r - R.lo].l_new;
            ref_round_row(S + r * bc, bc, p_round);
        }
        ref_simd_fa1_out(O + R.lo * d, d, w, S + R.lo * bc, Vf, (int)n, bc);   /* 12 */
        return;
    }
#endif
    for (int64_t r = R.lo; r < R.hi; r += R.step)
        kern_fa1_step_row(S + r * bc, bc, V, d, O + r * d, &m[r], &l[r], p_round);
}

/* kern_acc_tn_row for the rows c in R of acc (acols, d). */
KERN_DEVICE void kern_acc_tn_rows(kern_rows R, float *acc, const float *A, int rows, int acols,
                                  kern_tv B, int d, float scale)
{
#if !defined(__CUDACC__)
    const int64_t n = R.hi - R.lo;
    if (n <= 0)
        return;
    /* A's columns R as rows (n, rows), and the sums from 0.0f: ref_pv_acc's
     * sum over r with alpha 1 on a zero row (1 x 0 = 0). */
    float *At = (float *)kern_cpu_scratch(0, (size_t)(n * rows) * sizeof(float));
    const float *Bf = kern_tv_floats(B, 0, (int64_t)rows * d, 1);
    float *s = kern_zeros(n * d, 2);
    if (At && Bf && s) {
        for (int64_t c = 0; c < n; c++)
            for (int64_t r = 0; r < rows; r++)
                At[c * rows + r] = A[r * acols + R.lo + c];
        ref_simd_pv_acc(s, d, NULL, At, Bf, (int)n, rows);
        kern_fma_into(acc + R.lo * d, scale, s, n * d);
        return;
    }
#endif
    for (int64_t c = R.lo; c < R.hi; c += R.step)
        kern_acc_tn_row(acc + c * d, (int)c, A, rows, acols, B, d, scale);
}

/* kern_acc_nn_row for the rows r in R of acc (rows, d), A (rows, k). */
KERN_DEVICE void kern_acc_nn_rows(kern_rows R, float *acc, const float *A, int k, kern_tv B,
                                  int d, float scale)
{
#if !defined(__CUDACC__)
    const int64_t n = R.hi - R.lo;
    if (n <= 0)
        return;
    const float *Bf = kern_tv_floats(B, 0, (int64_t)k * d, 1);
    float *s = kern_zeros(n * d, 2);
    if (Bf && s) {
        ref_simd_pv_acc(s, d, NULL, A + R.lo * k, Bf, (int)n, k);
        kern_fma_into(acc + R.lo * d, scale, s, n * d);
        return;
    }
#endif
    for (int64_t r = R.lo; r < R.hi; r += R.step)
        kern_acc_nn_row(acc + r * d, A + r * k, k, B, d, scale);
}

#endif /* FASIM_KERN_TILE_H */
