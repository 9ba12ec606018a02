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
