/*
 * algo_unfused_bwd.c — the unfused baseline's backward pass: autograd's
 * backward kernels of the forward's operations (algo_unfused.c), in the
 * reverse order, each reading its inputs from HBM and writing its output
 * to HBM in full:
 *
 *   1: dO = copy           fa2bench: the output was a permuted view, so
 *                            einsum's backward copies dO into (B H, N, d)
 *   2: dP = dO V^T       torch.matmul(attn_weights, value), backward:
 *   3: dV = P^T dO         two products (bmm), one per operand
 *   4: dP = dP o Z/(1-p) self.attn_dropout, backward (native_dropout_backward:
 *                          reads the saved mask Z); dropout p > 0 only
 *   5: dS = P o (dP - rowsum(P o dP))
 *                        nn.Softmax, backward (_softmax_backward_data: reads
 *                          dP and the softmax's output P)
 *   6: dS = where(C, dS, 0)   torch.where, backward (reads the mask C); causal
 *   7: dS = dS / sqrt(d) the division, backward (gpt2)
 *   8: dQ = dS K         torch.matmul(query, key.transpose(-1, -2)), backward:
 *   9: dK = dS^T Q         two products (the transpose is a view); fa2bench:
 *                          baddbmm's backward, the scale its alpha
 *  10: stack             fa2bench: unbind's backward stacks dQ, dK, dV
 *                          into the packed gradient (B, N, 3, H, d)
 *
 * P is what the forward left in HBM (the dropout's P in line 2, the
 * softmax's in line 4: one tensor here, moved as often as the framework
 * moves the two). The softmax's backward makes one pass over whole rows
 * when PyTorch's persistent kernel takes them (and two rows fit SRAM), else
 * two over tiles (sim_uf_persistent).
 *
 * Shapes: Q, dQ, dO (N, d); K, V, dK, dV (N_k, d); P, dP, dS, C, Z (N, N_k).
 */
#include "sim_unfused.h"

/* The backward's lines, as the loop nest marks them. */
enum {
    UFB_L1_COPY_DO = 1,
    UFB_L2_DP = 2,
    UFB_L3_DV = 3,
    UFB_L4_DROPOUT = 4,
    UFB_L5_SOFTMAX = 5,
    UFB_L6_MASK = 6,
    UFB_L7_SCALE = 7,
    UFB_L8_DQ = 8,
    UFB_L9_DK = 9,
    UFB_L10_STACK = 10,
    UFB_L11_RETURN = 11
};

#define NONE SIM_TENSOR_COUNT

/* Lines 1 and 10 for fa2bench alone, 7 for gpt2 alone (fa2bench's scale is
 * the alpha of lines 8 and 9), 4 and 6 only with a dropout, a mask. */
static int bwd_ops(const sim_shape *sh, const sim_run_opts *run, uf_op ops[UF_MAX_OPS])
{
    const int bench = run->unfused_ops == SIM_UF_FA2BENCH;
    int n = 0;
    if (bench)
        ops[n++] = (uf_op){ UF_COPY, UFB_L1_COPY_DO, 0, SIM_dO, NONE, SIM_dO, SIM_BUF_dO_i,
                            SIM_BUF_COUNT, SIM_BUF_COUNT, 0 };
    ops[n++] = (uf_op){ UF_BMM_NT, UFB_L2_DP, 0, SIM_dO, SIM_V, SIM_dP, SIM_BUF_dO_i,
                        SIM_BUF_V_j, SIM_BUF_dP_ij, 0 };
    ops[n++] = (uf_op){ UF_BMM_TN, UFB_L3_DV, 0, SIM_P, SIM_dO, sim_gqa_grad(sh, SIM_dV),
                        SIM_BUF_P_ij, SIM_BUF_dO_i, SIM_BUF_dV_j, 0 };
    if (run->dropout > 0.0)
        ops[n++] = (uf_op){ UF_MAP, UFB_L4_DROPOUT, UF_FN_DROPOUT_BWD, SIM_dP, SIM_Z, SIM_dP,
                            SIM_BUF_dP_ij, SIM_BUF_Z_ij, SIM_BUF_COUNT, 0 };
    ops[n++] = (uf_op){ UF_SOFTMAX_BWD, UFB_L5_SOFTMAX, 0, SIM_dP, SIM_P, SIM_dS,
                        SIM_BUF_COUNT, SIM_BUF_COUNT, SIM_BUF_COUNT, 0 };
    if (sh->causal || sh->blocks)
        ops[n++] = (uf_op){ UF_MAP, UFB_L6_MASK, UF_FN_WHERE_BWD, SIM_dS, SIM_C, SIM_dS,
                            SIM_BUF_dS_ij, SIM_BUF_C_ij, SIM_BUF_COUNT, 0 };
    if (!bench)
        ops[n++] = (uf_op){ UF_MAP, UFB_L7_SCALE, UF_FN_DIV, SIM_dS, NONE, SIM_dS,
                            SIM_BUF_dS_ij, SIM_BUF_COUNT, SIM_BUF_COUNT, 0 };
    ops[n++] = (uf_op){ UF_BMM_NN, UFB_L8_DQ, 0, SIM_dS, SIM_K, SIM_dQ, SIM_BUF_dS_ij,
                        SIM_BUF_K_j, SIM_BUF_dQ_i, bench };
    ops[n++] = (uf_op){ UF_BMM_TN, UFB_L9_DK, 0, SIM_dS, SIM_Q, sim_gqa_grad(sh, SIM_dK),
                        SIM_BUF_dS_ij, SIM_BUF_Q_i, SIM_BUF_dK_j, bench };
    if (bench) {
        ops[n++] = (uf_op){ UF_COPY, UFB_L10_STACK, 0, SIM_dQ, NONE, SIM_dQ, SIM_BUF_dQ_i,
                            SIM_BUF_COUNT, SIM_BUF_COUNT, 0 };
        ops[n++] = (uf_op){ UF_COPY, UFB_L10_STACK, 0, SIM_dK, NONE, SIM_dK, SIM_BUF_dK_j,
                            SIM_BUF_COUNT, SIM_BUF_COUNT, 0 };
        ops[n++] = (uf_op){ UF_COPY, UFB_L10_STACK, 0, SIM_dV, NONE, SIM_dV, SIM_BUF_dV_j,
                            SIM_BUF_COUNT, SIM_BUF_COUNT, 0 };
    }
    return n;
}

static void unfused_bwd_plan(sim_plan *p, const sim_shape *sh, int e)
{
    uf_op ops[UF_MAX_OPS];
    sim_uf_plan(p, sh, e, ops, bwd_ops(sh, &p->run, ops));
}

static int unfused_bwd_run(sim_hier *h, const sim_plan *p)
{
    uf_op ops[UF_MAX_OPS];
    if (sim_uf_run(h, p, ops, bwd_ops(&h->sh, &p->run, ops)) != 0)
        return -1;
    sim_at(h, UFB_L11_RETURN, -1, -1);
    return 0;
}

static void unfused_bwd_counts(sim_chk *k, const sim_plan *p, const sim_shape *sh,
                               sim_counts *out)
{
    uf_op ops[UF_MAX_OPS];
    sim_uf_counts(k, p, sh, ops, bwd_ops(sh, &p->run, ops), out);
}

static uint64_t unfused_bwd_steps(sim_chk *k, const sim_plan *p, const sim_shape *sh)
{
    uf_op ops[UF_MAX_OPS];
    return sim_uf_steps(k, p, sh, ops, bwd_ops(sh, &p->run, ops));
}

/* Every score, masked or not: four products of 2 N N_k d (lines 1, 2, 7,
 * 8); the softmax's backward as standard attention's, 4 per score; the
 * dropout's one multiply per score. */
static void unfused_bwd_flops(sim_chk *k, const sim_plan *p, const sim_shape *sh,
                              sim_flops *out)
{
    (void)k;
    const double NN = (double)sh->N * (double)sim_shape_Nk(sh);
    out->matmul = 8.0 * (double)sh->d * NN;
    out->other = (4.0 + (p->run.dropout > 0.0)) * NN;
}

static const sim_code_line UNFUSED_BWD_CODE[] = {
    SIM_CODE(UFB_L1_COPY_DO, 0, "dO = copy [fa2bench]"),
    SIM_CODE(UFB_L2_DP, 0, "dP = matmul(dO, V^T)"),
    SIM_CODE(UFB_L3_DV, 0, "dV = matmul(P^T, dO)"),
    SIM_CODE(UFB_L4_DROPOUT, 0, "dP = dP o Z / (1-p) [p > 0]"),
    SIM_CODE(UFB_L5_SOFTMAX, 0, "dS = P o (dP - rowsum(P o dP))"),
    SIM_CODE(UFB_L6_MASK, 0, "dS = where(C, dS, 0) [causal]"),
    SIM_CODE(UFB_L7_SCALE, 0, "dS = dS / sqrt(d) [gpt2]"),
    SIM_CODE(UFB_L8_DQ, 0, "dQ = matmul(dS, K)"),
    SIM_CODE(UFB_L9_DK, 0, "dK = matmul(dS^T, Q)"),
    SIM_CODE(UFB_L10_STACK, 0, "dQ, dK, dV stacked [fa2bench]"),
    SIM_CODE(UFB_L11_RETURN, 0, "return dQ, dK, dV"),
};

const sim_loop sim_loop_unfused_bwd = {
    .algo = (sim_algo)3,
    .pass = SIM_BWD,
    .name = "unfused",
    .title = "unfused standard attention (PyTorch, one kernel per operation)",
    .code_title = "unfused attention, autograd",
    .code = UNFUSED_BWD_CODE,
    .ncode = (int)(sizeof UNFUSED_BWD_CODE / sizeof UNFUSED_BWD_CODE[0]),
    .flags = SIM_LOOP_LINE_BLOCKS | SIM_LOOP_OPT_IN | SIM_LOOP_DROPOUT | SIM_LOOP_UNPAGED |
             SIM_LOOP_FRAMEWORK,
    .no_stats = "the backward reads P from HBM",
    .hbm = 1u << SIM_Q | 1u << SIM_K | 1u << SIM_V | 1u << SIM_O | 1u << SIM_S | 1u << SIM_P |
           1u << SIM_C | 1u << SIM_Z | 1u << SIM_dO | 1u << SIM_dQ | 1u << SIM_dK |
           1u << SIM_dV | 1u << SIM_dP | 1u << SIM_dS,
    .kv_loads = SIM_KV_ONCE,
    .grid = SIM_GRID_PER_LINE,
    .prefetch = 1,
    .bound = SIM_BOUND_STANDARD,
    .reread = SIM_BLOCK_R,
    .mark = 'u',
    .plan = unfused_bwd_plan,
    .run = unfused_bwd_run,
    .counts = unfused_bwd_counts,
    .steps = unfused_bwd_steps,
    .flops = unfused_bwd_flops,
};
