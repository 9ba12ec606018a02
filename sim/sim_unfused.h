/*
 * sim_unfused.h — the unfused baseline's kernels (internal to sim/): standard
 * attention as a framework runs it, one kernel per operation, each reading
 * its inputs from HBM and writing its output to HBM in full.
 *
 * Both passes (algo_unfused.c, algo_unfused_bwd.c) are a list of operations
 * (uf_op), each one line of the pseudocode and that phase of the plan; one
 * list drives the plan, the loop nest, the closed-form counts and the tile
 * steps, so they cannot disagree. The kernels are in algo_unfused.c.
 */
#ifndef FASIM_SIM_UNFUSED_H
#define FASIM_SIM_UNFUSED_H

#include "sim_hier.h"
#include "sim_theory.h"

/* The kinds of kernel. Each reads every operand of one head once from HBM:
 * a GEMM's re-reads of an operand tile (the B_c rows of K for every query
 * block) come from the L2, which holds one head's operands (2 x 128 KiB at
 * N = 1024, d = 64) many times over, so they move data in compute mode and
 * count nothing. */
typedef enum {
    UF_BMM_NT,      /* C = A B^T: A (N, d), B (N_k, d), C (N, N_k) */
    UF_BMM_NN,      /* C = A B:   A (N, N_k), B (N_k, d), C (N, d) */
    UF_BMM_TN,      /* C = A^T B: A (N, N_k), B (N, d), C (N_k, d) */
    UF_MAP,         /* element-wise over N x N_k: C = f(A, B), B a mask (or none) */
    UF_SOFTMAX,     /* C = softmax(A) along rows */
    UF_SOFTMAX_BWD, /* C = B o (A - rowsum(A o B)): A = dP, B = P, C = dS */
    UF_COPY         /* C = A, (rows, d) into another layout (sim_uf_ops FA2BENCH): rows
                       N, or N_k for a key/value tensor; C names A's tensor again */
} uf_kind;

/* The element-wise functions of UF_MAP. */
typedef enum {
    UF_FN_DIV,          /* C = A / sqrt(d) */
    UF_FN_WHERE,        /* C = where(B, A, -inf); B the causal mask C */
    UF_FN_DROPOUT,      /* C = A o Z / (1 - p), Z written (B is Z, an output) */
    UF_FN_DROPOUT_BWD,  /* C = A o Z / (1 - p) */
    UF_FN_WHERE_BWD     /* C = where(B, A, 0) */
} uf_fn;

typedef struct {
    uf_kind kind;
    int line;                  /* its pseudocode line, and its phase of the plan (the
                                  lines that do not run have no buffers) */
    uf_fn fn;                  /* UF_MAP */
    sim_tensor a, b, c;        /* operands and result; b = SIM_TENSOR_COUNT: none */
    sim_buf_id ab, bb, cb;     /* their SRAM buffers (UF_MAP: c in a's place) */
    int scaled;                /* products: C = (A B) / sqrt(d), the scale the GEMM's
                                  alpha (sim_uf_ops FA2BENCH) */
} uf_op;

/* Most operations of a pass. */
#define UF_MAX_OPS 12

/* PyTorch's softmax kernels (aten/src/ATen/native/cuda/SoftMax.cu): a row
 * of at most 1024 elements and 4096 bytes goes to the persistent kernel,
 * which holds the row in registers: one read of it, forward and backward.
 * Longer rows go to cunn_SoftMaxForward, which reads the row three times
 * (max, sum of exponentials, then the output), and cunn_SoftMaxBackward,
 * twice (the sum of dP o P, then dS). 1 when persistent. */
int sim_uf_persistent(const sim_shape *sh);

/* The plan's buffers, one phase per operation. */
void sim_uf_plan(sim_plan *p, const sim_shape *sh, int e, const uf_op *ops, int nops);
/* The loop nest: the operations in turn. Returns 0 or -1. */
int sim_uf_run(sim_hier *h, const sim_plan *p, const uf_op *ops, int nops);
/* One head's closed-form counts and tile steps. */
void sim_uf_counts(sim_chk *k, const sim_plan *p, const sim_shape *sh, const uf_op *ops,
                   int nops, sim_counts *out);
uint64_t sim_uf_steps(sim_chk *k, const sim_plan *p, const sim_shape *sh, const uf_op *ops,
                      int nops);

#endif /* FASIM_SIM_UNFUSED_H */
