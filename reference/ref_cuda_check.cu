/*
 * ref_cuda_check.cu — compiles the reference primitives as CUDA device code,
 * so that a change that breaks ref_tile.h for nvcc fails the build here,
 * before any kernel uses it. Built only when CMake finds a CUDA compiler;
 * nothing runs (no GPU is needed).
 */
#include "ref_rng.h"
#include "ref_tile.h"

/* One thread per row: the FlashAttention-2 update of ref_tile.h over a row
 * of scores in global memory, blocks of 16 keys. */
__global__ void ref_cuda_check_online_rows(float *S, const float *V, float *O, int n, int d)
{
    int r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r >= n)
        return;
    float m = -REF_INF, l = 0.0f;
    for (int c = 0; c < d; c++)
        O[r * d + c] = 0.0f;
    for (int j0 = 0; j0 < n; j0 += 16) {
        int bc = n - j0 < 16 ? n - j0 : 16;
        float alpha = ref_online_step(S + r * n + j0, bc, &m, &l);
        ref_pv_acc_row(O + r * d, d, alpha, S + r * n + j0, V + j0 * d, bc);
    }
    ref_normalise_row(O + r * d, d, l);
    ref_rng g = ref_rng_seed((uint64_t)r);
    S[r * n] = ref_lse(m, l) + ref_round_fp16(ref_rng_normalish(&g)) + ref_round_bf16(m);
}

/* One thread per query row of one tile (br <= 16 rows, bc <= 16 keys,
 * d <= 16): the backward primitives of ref_tile.h, as FA2's Algorithm 2 uses
 * them. Rows write their own dQ row; dK and dV (bc, d) are accumulated by
 * thread 0 only, after the others have written their rows of P and dS. */
__global__ void ref_cuda_check_backward_tile(const float *Q, const float *K, const float *V,
                                             const float *O, const float *dO, const float *L,
                                             float *dQ, float *dK, float *dV, int br, int bc,
                                             int d, float scale)
{
    __shared__ float P[16 * 16], dS[16 * 16], D[16];
    int r = threadIdx.x;
    if (r < br && bc <= 16 && d <= 16) {
        const ref_mask mk = { 1, bc - br, 0, NULL };
        ref_tile_scores(Q + r * d, K, 1, bc, d, scale, P + r * bc);
        ref_tile_mask(P + r * bc, 1, bc, r, 0, &mk);
        ref_exp_lse_row(P + r * bc, bc, L[r]);
        ref_tile_scores(dO + r * d, V, 1, bc, d, 1.0f, dS + r * bc);
        D[r] = ref_row_dot(dO + r * d, O + r * d, d / 2);
        D[r] = ref_row_dot_acc(dO + r * d + d / 2, O + r * d + d / 2, d - d / 2, D[r]);
        ref_tile_ds(P + r * bc, dS + r * bc, D + r, 1, bc, dS + r * bc);
        ref_tile_acc_nn(dQ + r * d, dS + r * bc, K, 1, bc, d, scale);
    }
    __syncthreads();
    if (r == 0 && br <= 16 && bc <= 16 && d <= 16) {
        ref_tile_acc_tn(dV, P, dO, br, bc, d, 1.0f);
        ref_tile_acc_tn(dK, dS, Q, br, bc, d, scale);
    }
}
