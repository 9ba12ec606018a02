/*
 * ref_simd.h — the tile products of ref_tile.h, run several outputs at once.
 *
 * The two products that dominate compute mode, S_ij = scale Q_i K_j^T and the
 * accumulation of P~_ij V_j, and the exps of the softmax, are the ref_tile.h
 * primitives with the loops around them reordered: each output value (one score, one column of one
 * output row) is still computed by exactly the sequence of operations
 * ref_tile.h writes for it (its sum from 0.0f, k upwards, one fmaf per term,
 * then the same multiply, fmaf or division), but independent outputs run side
 * by side in the lanes of a vector register: the B_c keys of a block for the
 * scores (from K_j transposed into a scratch tile), the d columns for P~ V,
 * the entries of a row for exp (ref_exp's steps, its special cases
 * selected lane by lane; the row's sum is still added one term at a time).
 * A lane computes an IEEE fused multiply-add, product, or division, rounded
 * once, as fmaf, * and / do: every output keeps its bits, on every path, with
 * every compiler and optimisation level (tests/test_simd.c, scripts/bits.sh).
 *
 * Paths: scalar (ref_tile.h itself, the specification), sse (128-bit SSE
 * registers with FMA3: four lanes), avx2 (eight lanes, FMA3), avx512 (sixteen
 * lanes), wasm128 (the WebAssembly build: four lanes of WebAssembly's SIMD).
 * A lane must round a*b + c once as fmaf does: the x86-64 paths need a fused
 * multiply-add instruction (SSE2 alone has none, and an x86-64 CPU without
 * FMA3, or any other CPU, takes the scalar path); WebAssembly has none, and
 * wasm128 rounds through doubles as ref_fmaf_via_double does. The path is the
 * widest the CPU has, chosen at run time; the environment variable
 * FASIM_SIMD=scalar|sse|avx2|avx512|wasm128 caps it (a narrower path for
 * checks; a wider one than the CPU has is not taken).
 *
 * C only: the CUDA build uses ref_tile.h's loops as they are.
 */
#ifndef FASIM_REF_SIMD_H
#define FASIM_REF_SIMD_H

#include "ref_tile.h"

typedef enum {
    REF_SIMD_SCALAR,     /* ref_tile.h's loops */
    REF_SIMD_SSE,        /* 4 lanes: SSE registers, FMA3 */
    REF_SIMD_AVX2,       /* 8 lanes: AVX2, FMA3 */
    REF_SIMD_AVX512,     /* 16 lanes: AVX-512F */
    REF_SIMD_WASM128,    /* 4 lanes: WebAssembly's SIMD, fmaf through doubles */
    REF_SIMD_COUNT
} ref_simd;

/* "scalar", "sse", "avx2", "avx512", "wasm128"; "?" out of range. */
const char *ref_simd_name(ref_simd s);

/* The path called name: 0 and *out set, or -1 for a name that is none. */
int ref_simd_parse(const char *name, ref_simd *out);

/* 1 when path s is built in and this CPU runs it (scalar always). */
int ref_simd_supported(ref_simd s);

/* The path the products take: the widest supported, capped by FASIM_SIMD
 * (read once, at the first call; an unknown name caps nothing). */
ref_simd ref_simd_active(void);

/* Make s the path the products take (tests, benchmarks). Returns 0, or -1
 * when this CPU does not run it (nothing changes). Not to be called while
 * another thread computes. */
int ref_simd_force(ref_simd s);

/* ref_tile_scores, on the active path: S_ij = scale Q_i K_j^T.
 * Q_i (br, d), K_j (bc, d), S (br, bc). */
void ref_simd_scores(const float *Q_i, const float *K_j, int br, int bc, int d, float scale,
                     float *S);

/* ref_exp_shift_sum on the active path: x[k] <- ref_exp(x[k] - m) (a shift
 * of 0 for m = -inf), the exps side by side; returns their sum, added in
 * order, one term at a time. */
float ref_simd_exp_shift_sum(float *x, int n, float m);

/* ref_exp_normalise on the active path: p[k] <- ref_exp(x[k] - m) * inv_l,
 * the exps side by side (p may be x). */
void ref_simd_exp_normalise(const float *x, float *p, int n, float m, float inv_l);

/* ref_online_step on the active path (its exps by ref_simd_exp_shift_sum):
 * FA2's line 9 for one row. */
float ref_simd_online_step(float *s, int n, float *m, float *l);

/* ref_pv_acc_row for rows r = 0..br-1, on the active path:
 * O[r] <- alpha[r] O[r] + P[r] V_j (alpha NULL: 1.0f for every row, still
 * multiplied). O (br, d), P (br, bc), V_j (bc, d). */
void ref_simd_pv_acc(float *O, int d, const float *alpha, const float *P, const float *V_j,
                     int br, int bc);

/* ref_fa1_out_row for rows r = 0..br-1 with weights w[r], on the active
 * path: O[r] <- (la O[r] + b P[r] V_j) / l_new; rows with l_new = 0 are
 * left as they are. */
void ref_simd_fa1_out(float *O, int d, const ref_fa1_weights *w, const float *P,
                      const float *V_j, int br, int bc);

#endif /* FASIM_REF_SIMD_H */
