/*
 * algo_unfused.c — standard attention as a framework runs it: one kernel per
 * operation, each reading its inputs from HBM and writing its output to HBM
 * in full. Two lists of operations (sim_uf_ops). gpt2, the default, is
 * HuggingFace transformers' GPT-2 attention (GPT2Attention._attn,
 * 2021-2022) on PyTorch's CUDA kernels, the baseline of the FlashAttention
 * paper's Figure 2:
 *
 *   2: attn_weights = torch.matmul(query, key.transpose(-1, -2))     S = Q K^T
 *   3: attn_weights = attn_weights / (value.size(-1) ** 0.5)         S = S / sqrt(d)
 *   4: attn_weights = torch.where(causal_mask, attn_weights,         causal only
 *                                 mask_value)
 *   5: attn_weights = nn.Softmax(dim=-1)(attn_weights)               P = softmax(S)
 *   6: attn_weights = self.attn_dropout(attn_weights)                dropout p > 0
 *   8: attn_output = torch.matmul(attn_weights, value)               O = P V
 *
 * fa2bench is attention_pytorch of flash-attn's benchmarks (the PyTorch
 * series of the FlashAttention-2 paper's Figure 4). Its input is one packed
 * tensor qkv (B, N, 3, H, d), so:
 *
 *   1: q = rearrange(q, 'b t h d -> (b h) t d'), k likewise to (b h) d s:
 *      copies of Q and K (a reshape of a permuted view copies)
 *   2: torch.baddbmm(scores, q, k, beta=0, alpha=1/sqrt(d))        S = Q K^T / sqrt(d)
 *   5: torch.softmax(scores, dim=-1); F.dropout (6) as gpt2's
 *   7, 8: torch.einsum('bhts,bshd->bthd', attention, v): V copied to
 *      (b h) s d, then one bmm; its output stays a permuted view
 *
 * No line 3 (the scale is the GEMM's alpha) and no mask: the benchmark
 * builds a causal mask anew in every call, which is not modelled (refused).
 *
 * Line 4 reads the causal mask, causal_mask = self.bias[...], a torch.bool
 * N x N_k slice of the registered lower-triangular buffer, broadcast over
 * the heads: fasim counts it once per head, as each head's kernel blocks
 * read it (an L2 may serve all but the first head: 1 byte a score). A
 * block mask (--block-mask) is passed to PyTorch the same way, as the
 * element-wise bool N x N_k mask (blocks and causal rule combined): line 4
 * reads it as C, counted alike. Its
 * mask_value (the dtype's lowest, -65504 in fp16, or -1e4 in older
 * releases) is -inf here: exp of either is 0, so P is the same. Line 6 is
 * PyTorch's fused dropout kernel (native_dropout): it reads P, writes the
 * dropped P and keeps the mask it drew, Z, as torch.bool (1 byte a score)
 * for the backward. With p = 0 nn.Dropout returns its input: no kernel.
 * The key-padding mask (attn_weights + attention_mask) is not modelled:
 * fasim's problems have none.
 *
 * Every kernel moves the whole of one head's operands once (sim_unfused.h):
 * the products read A and B once and write C once; the element-wise kernels
 * read and write N x N_k in tiles of B_r x B_c. The softmax makes the passes
 * PyTorch's kernel makes (sim_uf_persistent): one over whole rows of S when
 * the persistent kernel takes the row (and a row fits SRAM), else three over
 * tiles. Values stored in HBM are rounded to the dtype at every step, as the
 * framework's tensors are.
 *
 * Shapes: Q, O (N, d); K, V (N_k, d); S, P, C, Z (N, N_k); A_i (B_r, d);
 * B_j (B_c, d); S_ij (B_r, B_c); S_rows (B_s, N_k). Row-major.
 */
#include "sim_unfused.h"

#include <math.h>

/* The forward's lines, as the loop nest marks them. */
enum {
    UF_L1_COPY_QK = 1,
    UF_L2_SCORES = 2,
    UF_L3_SCALE = 3,
    UF_L4_MASK = 4,
    UF_L5_SOFTMAX = 5,
    UF_L6_DROPOUT = 6,
    UF_L7_COPY_V = 7,
    UF_L8_OUTPUT = 8,
    UF_L9_RETURN = 9
};

int sim_uf_persistent(const sim_shape *sh)
{
    const int64_t N_k = sim_shape_Nk(sh);
    return N_k <= 1024 && N_k * sim_dtype_bytes(sh->dtype) <= 4096;
}

static void zero(float *x, int64_t n)
{
    for (int64_t k = 0; k < n; k++)
        x[k] = 0.0f;
}

/* An operand tile of a product: from HBM the first time the kernel reads it,
 * afterwards from the L2: the data moves, HBM counts nothing. */
static void operand(sim_hier *h, int first, sim_tensor t, sim_buf_id b, float *dst,
                    int64_t r0, int64_t rows, int64_t cols)
{
    if (first)
        sim_load(h, t, b, dst, r0, 0, rows, cols);
    else if (h->compute)
        sim_copy_in(h, t, dst, r0, 0, rows, cols);
}

/* A product's alpha: 1/sqrt(d) when the scale is in the GEMM, else 1. */
static float alpha(const sim_hier *h, const uf_op *op)
{
    return op->scaled ? 1.0f / sqrtf((float)h->sh.d) : 1.0f;
}

/* UF_COPY: each row block of A (B_r rows of N, or B_c of N_k for a key or
 * value tensor) read and written in the batched layout, unchanged. Its
 * buffer stays taken: sim_uf_run releases a line's copies together. */
static int copy(sim_hier *h, const sim_plan *p, int ph, const uf_op *op)
{
    const int kv = sim_tensor_about(op->a)->kv;
    const int64_t rows = kv ? sim_shape_Nk(&h->sh) : h->sh.N, B = kv ? p->Bc : p->Br;
    float *A = sim_sram_take(h, p, ph, op->ab);
    if (h->failed)
        return -1;
    for (int64_t r0 = 0; r0 < rows; r0 += B) {
        const int64_t n = sim_min64(B, rows - r0);
        sim_at(h, op->line, -1, -1);
        sim_load(h, op->a, op->ab, A, r0, 0, n, h->sh.d);
        h->steps++;
        sim_store(h, op->c, op->ab, A, r0, 0, n, h->sh.d);
    }
    return 0;       /* the line's copies hold their buffers together (sim_uf_run) */
}

/* UF_BMM_NT: for i { load A_i; for j { B_j; C_ij = A_i B_j^T; store } }. */
static int bmm_nt(sim_hier *h, const sim_plan *p, int ph, const uf_op *op)
{
    const int64_t N = h->sh.N, N_k = sim_shape_Nk(&h->sh), d = h->sh.d;
    float *A_i = sim_sram_take(h, p, ph, op->ab);
    float *B_j = sim_sram_take(h, p, ph, op->bb);
    float *C_ij = sim_sram_take(h, p, ph, op->cb);
    if (h->failed)
        return -1;
    for (int64_t i = 0; i < p->Tr; i++) {
        const int64_t r0 = i * p->Br, br = sim_min64(p->Br, N - r0);
        sim_at(h, op->line, i, -1);
        sim_load(h, op->a, op->ab, A_i, r0, 0, br, d);
        for (int64_t j = 0; j < p->Tc; j++) {
            const int64_t c0 = j * p->Bc, bc = sim_min64(p->Bc, N_k - c0);
            sim_at(h, op->line, i, j);
            operand(h, i == 0, op->b, op->bb, B_j, c0, bc, d);
            h->steps++;
            if (h->compute)
                ref_simd_scores(A_i, B_j, (int)br, (int)bc, (int)d, alpha(h, op), C_ij);
            sim_store(h, op->c, op->cb, C_ij, r0, c0, br, bc);
        }
    }
    sim_sram_release_all(h);
    return 0;
}

/* UF_BMM_NN: for i { for j { load A_ij; B_j; C_i += A_ij B_j } store C_i }. */
static int bmm_nn(sim_hier *h, const sim_plan *p, int ph, const uf_op *op)
{
    const int64_t N = h->sh.N, N_k = sim_shape_Nk(&h->sh), d = h->sh.d;
    float *A_ij = sim_sram_take(h, p, ph, op->ab);
    float *B_j = sim_sram_take(h, p, ph, op->bb);
    float *C_i = sim_sram_take(h, p, ph, op->cb);
    if (h->failed)
        return -1;
    for (int64_t i = 0; i < p->Tr; i++) {
        const int64_t r0 = i * p->Br, br = sim_min64(p->Br, N - r0);
        sim_at(h, op->line, i, -1);
        if (h->compute)
            zero(C_i, br * d);
        for (int64_t j = 0; j < p->Tc; j++) {
            const int64_t c0 = j * p->Bc, bc = sim_min64(p->Bc, N_k - c0);
            sim_at(h, op->line, i, j);
            sim_load(h, op->a, op->ab, A_ij, r0, c0, br, bc);
            operand(h, i == 0, op->b, op->bb, B_j, c0, bc, d);
            h->steps++;
            if (h->compute)
                ref_tile_acc_nn(C_i, A_ij, B_j, (int)br, (int)bc, (int)d, alpha(h, op));
        }
        sim_store(h, op->c, op->cb, C_i, r0, 0, br, d);
    }
    sim_sram_release_all(h);
    return 0;
}

/* UF_BMM_TN: for j { for i { load A_ij; B_i; C_j += A_ij^T B_i } store C_j }. */
static int bmm_tn(sim_hier *h, const sim_plan *p, int ph, const uf_op *op)
{
    const int64_t N = h->sh.N, N_k = sim_shape_Nk(&h->sh), d = h->sh.d;
    float *A_ij = sim_sram_take(h, p, ph, op->ab);
    float *B_i = sim_sram_take(h, p, ph, op->bb);
    float *C_j = sim_sram_take(h, p, ph, op->cb);
    if (h->failed)
        return -1;
    for (int64_t j = 0; j < p->Tc; j++) {
        const int64_t c0 = j * p->Bc, bc = sim_min64(p->Bc, N_k - c0);
        sim_at(h, op->line, -1, j);
        if (h->compute)
            zero(C_j, bc * d);
        for (int64_t i = 0; i < p->Tr; i++) {
            const int64_t r0 = i * p->Br, br = sim_min64(p->Br, N - r0);
            sim_at(h, op->line, i, j);
            sim_load(h, op->a, op->ab, A_ij, r0, c0, br, bc);
            operand(h, j == 0, op->b, op->bb, B_i, r0, br, d);
            h->steps++;
            if (h->compute)
                ref_tile_acc_tn(C_j, A_ij, B_i, (int)br, (int)bc, (int)d, alpha(h, op));
        }
        sim_store(h, op->c, op->cb, C_j, c0, 0, bc, d);
    }
    sim_sram_release_all(h);
    return 0;
}

/* UF_MAP's function on a tile whose top-left score is (r0, c0). Dropout is
 * never computed (sim_run refuses compute mode with p > 0): its tiles move
 * for the counts. */
static void map_tile(const sim_hier *h, uf_fn fn, float *A, int64_t br, int64_t bc,
                     int64_t r0, int64_t c0)
{
    const float root_d = sqrtf((float)h->sh.d);
    switch (fn) {
    case UF_FN_DIV:
        for (int64_t x = 0; x < br * bc; x++)
            A[x] = A[x] / root_d;
        break;
    case UF_FN_WHERE:
        sim_mask_tile(h, A, br, bc, r0, c0);
        break;
    case UF_FN_WHERE_BWD:
        for (int64_t r = 0; r < br; r++)
            for (int64_t c = 0; c < bc; c++)
                if (!ref_mask_visible(&h->mask, r0 + r, c0 + c))
                    A[r * bc + c] = 0.0f;
        break;
    case UF_FN_DROPOUT:
    case UF_FN_DROPOUT_BWD:
        break;
    }
}

/* UF_MAP: every tile of A (and of the mask B) read, C written in its place;
 * dropout's forward writes its mask Z instead of reading one. */
static int map(sim_hier *h, const sim_plan *p, int ph, const uf_op *op)
{
    const int64_t N = h->sh.N, N_k = sim_shape_Nk(&h->sh);
    const int has_b = op->b != SIM_TENSOR_COUNT, writes_b = op->fn == UF_FN_DROPOUT;
    float *A_ij = sim_sram_take(h, p, ph, op->ab);
    float *B_ij = has_b ? sim_sram_take(h, p, ph, op->bb) : NULL;
    if (h->failed)
        return -1;
    for (int64_t i = 0; i < p->Tr; i++) {
        const int64_t r0 = i * p->Br, br = sim_min64(p->Br, N - r0);
        for (int64_t j = 0; j < p->Tc; j++) {
            const int64_t c0 = j * p->Bc, bc = sim_min64(p->Bc, N_k - c0);
            sim_at(h, op->line, i, j);
            sim_load(h, op->a, op->ab, A_ij, r0, c0, br, bc);
            if (has_b && !writes_b)
                sim_load(h, op->b, op->bb, B_ij, r0, c0, br, bc);
            h->steps++;
            if (h->compute)
                map_tile(h, op->fn, A_ij, br, bc, r0, c0);
            sim_store(h, op->c, op->ab, A_ij, r0, c0, br, bc);
            if (writes_b)
                sim_store(h, op->b, op->bb, B_ij, r0, c0, br, bc);
        }
    }
    sim_sram_release_all(h);
    return 0;
}

/* UF_SOFTMAX, one pass: B_s whole rows of S at a time (the persistent
 * kernel's one read of a row). */
static int softmax_rows(sim_hier *h, const sim_plan *p, int ph, const uf_op *op)
{
    const int64_t N = h->sh.N, N_k = sim_shape_Nk(&h->sh), B_s = p->Bs_r;
    float *S_rows = sim_sram_take(h, p, ph, SIM_BUF_S_rows);
    float *m = sim_sram_take(h, p, ph, SIM_BUF_m);
    float *l = sim_sram_take(h, p, ph, SIM_BUF_l);
    if (h->failed)
        return -1;
    for (int64_t i = 0; i * B_s < N; i++) {
        const int64_t r0 = i * B_s, rows = sim_min64(B_s, N - r0);
        sim_at(h, op->line, i, -1);
        sim_load(h, op->a, SIM_BUF_S_rows, S_rows, r0, 0, rows, N_k);
        h->steps++;
        if (h->compute)
            for (int64_t r = 0; r < rows; r++) {
                float *s = S_rows + r * N_k;
                m[r] = ref_row_max(s, (int)N_k);
                l[r] = ref_exp_sum(s, (int)N_k, m[r], 0.0f);
                ref_simd_exp_normalise(s, s, (int)N_k, m[r], 1.0f / l[r]);
            }
        sim_store(h, op->c, SIM_BUF_S_rows, S_rows, r0, 0, rows, N_k);
    }
    sim_sram_release_all(h);
    return 0;
}

/* UF_SOFTMAX, three passes over B_r x B_c tiles (cunn_SoftMaxForward): the
 * row maxima, the sums of exponentials, then P; the sums run over a row in
 * the order of one pass, so both give the same bits. */
static int softmax_tiles(sim_hier *h, const sim_plan *p, int ph, const uf_op *op)
{
    const int64_t N = h->sh.N, N_k = sim_shape_Nk(&h->sh);
    float *S_ij = sim_sram_take(h, p, ph, SIM_BUF_S_ij);
    float *m_i = sim_sram_take(h, p, ph, SIM_BUF_m_i);
    float *l_i = sim_sram_take(h, p, ph, SIM_BUF_l_i);
    if (h->failed)
        return -1;
    for (int64_t i = 0; i < p->Tr; i++) {
        const int64_t r0 = i * p->Br, br = sim_min64(p->Br, N - r0);
        if (h->compute)
            for (int64_t r = 0; r < br; r++) {
                m_i[r] = -REF_INF;
                l_i[r] = 0.0f;
            }
        for (int pass = 1; pass <= 3; pass++)
            for (int64_t j = 0; j < p->Tc; j++) {
                const int64_t c0 = j * p->Bc, bc = sim_min64(p->Bc, N_k - c0);
                sim_at(h, op->line, i, j);
                sim_load(h, op->a, SIM_BUF_S_ij, S_ij, r0, c0, br, bc);
                h->steps++;
                for (int64_t r = 0; h->compute && r < br; r++) {
                    float *s = S_ij + r * bc;
                    if (pass == 1) {
                        const float mb = ref_row_max(s, (int)bc);
                        m_i[r] = mb > m_i[r] ? mb : m_i[r];
                    } else if (pass == 2) {
                        l_i[r] = ref_exp_sum(s, (int)bc, m_i[r], l_i[r]);
                    } else {
                        ref_simd_exp_normalise(s, s, (int)bc, m_i[r], 1.0f / l_i[r]);
                    }
                }
                if (pass == 3)
                    sim_store(h, op->c, SIM_BUF_S_ij, S_ij, r0, c0, br, bc);
            }
    }
    sim_sram_release_all(h);
    return 0;
}

/* UF_SOFTMAX_BWD, one pass over B_s whole rows of dP and P:
 * dS = P o (dP - rowsum(P o dP)), in dP's place. */
static int softmax_bwd_rows(sim_hier *h, const sim_plan *p, int ph, const uf_op *op)
{
    const int64_t N = h->sh.N, N_k = sim_shape_Nk(&h->sh), B_s = p->Bs_r;
    float *dP_rows = sim_sram_take(h, p, ph, SIM_BUF_dP_rows);
    float *P_rows = sim_sram_take(h, p, ph, SIM_BUF_P_rows);
    float *D = sim_sram_take(h, p, ph, SIM_BUF_D);
    if (h->failed)
        return -1;
    for (int64_t i = 0; i * B_s < N; i++) {
        const int64_t r0 = i * B_s, rows = sim_min64(B_s, N - r0);
        sim_at(h, op->line, i, -1);
        sim_load(h, op->a, SIM_BUF_dP_rows, dP_rows, r0, 0, rows, N_k);
        sim_load(h, op->b, SIM_BUF_P_rows, P_rows, r0, 0, rows, N_k);
        h->steps++;
        if (h->compute) {
            for (int64_t r = 0; r < rows; r++)
                D[r] = ref_row_dot_acc(P_rows + r * N_k, dP_rows + r * N_k, (int)N_k, 0.0f);
            ref_tile_ds(P_rows, dP_rows, D, (int)rows, (int)N_k, dP_rows);
        }
        sim_store(h, op->c, SIM_BUF_dP_rows, dP_rows, r0, 0, rows, N_k);
    }
    sim_sram_release_all(h);
    return 0;
}

/* UF_SOFTMAX_BWD, two passes over tiles (cunn_SoftMaxBackward): the row
 * sums, then dS. */
static int softmax_bwd_tiles(sim_hier *h, const sim_plan *p, int ph, const uf_op *op)
{
    float *dP_ij = sim_sram_take(h, p, ph, SIM_BUF_dP_ij);
    float *P_ij = sim_sram_take(h, p, ph, SIM_BUF_P_ij);
    float *D_i = sim_sram_take(h, p, ph, SIM_BUF_D_i);
    if (h->failed)
        return -1;
    /* op->a is dP, op->b P (loaded in that order), op->c dS. */
    sim_softmax_bwd_tiles(h, p, op->line, op->b, op->a, op->c, 1, P_ij, dP_ij, D_i);
    sim_sram_release_all(h);
    return 0;
}

int sim_uf_run(sim_hier *h, const sim_plan *p, const uf_op *ops, int nops)
{
    for (int k = 0; k < nops; k++) {
        const uf_op *op = &ops[k];
        const int ph = op->line, one = p->softmax_passes == 1;
        int rc = 0;
        switch (op->kind) {
        case UF_BMM_NT: rc = bmm_nt(h, p, ph, op); break;
        case UF_BMM_NN: rc = bmm_nn(h, p, ph, op); break;
        case UF_BMM_TN: rc = bmm_tn(h, p, ph, op); break;
        case UF_MAP: rc = map(h, p, ph, op); break;
        case UF_SOFTMAX:
            rc = one ? softmax_rows(h, p, ph, op) : softmax_tiles(h, p, ph, op);
            break;
        case UF_SOFTMAX_BWD:
            rc = one ? softmax_bwd_rows(h, p, ph, op) : softmax_bwd_tiles(h, p, ph, op);
            break;
        case UF_COPY:
            /* one launch copies all of a line's tensors: their buffers are
             * the line's phase together, released after the last */
            rc = copy(h, p, ph, op);
            if (k + 1 == nops || ops[k + 1].line != op->line)
                sim_sram_release_all(h);
            break;
        }
        if (rc != 0)
            return -1;
    }
    return 0;
}

void sim_uf_plan(sim_plan *p, const sim_shape *sh, int e, const uf_op *ops, int nops)
{
    const int64_t Br = p->Br, Bc = p->Bc, d = sh->d, N_k = sim_shape_Nk(sh);
    for (int k = 0; k < nops; k++) {
        const uf_op *op = &ops[k];
        const int ph = op->line;
        switch (op->kind) {
        case UF_BMM_NT:
            sim_plan_add(p, op->ab, ph, Br, d, e, "row block of the left operand");
            sim_plan_add(p, op->bb, ph, Bc, d, e, "row block of the right operand");
            sim_plan_add(p, op->cb, ph, Br, Bc, 4, "fp32 accumulator of the product");
            break;
        case UF_BMM_NN:
            sim_plan_add(p, op->ab, ph, Br, Bc, e, "tile of the left operand");
            sim_plan_add(p, op->bb, ph, Bc, d, e, "row block of the right operand");
            sim_plan_add(p, op->cb, ph, Br, d, 4, "fp32 accumulator of the product");
            break;
        case UF_BMM_TN:
            sim_plan_add(p, op->ab, ph, Br, Bc, e, "tile of the left operand");
            sim_plan_add(p, op->bb, ph, Br, d, e, "row block of the right operand");
            sim_plan_add(p, op->cb, ph, Bc, d, 4, "fp32 accumulator of the product");
            break;
        case UF_MAP:
            sim_plan_add(p, op->ab, ph, Br, Bc, 4, "tile, fp32; the result in place");
            if (op->b != SIM_TENSOR_COUNT)
                sim_plan_add(p, op->bb, ph, Br, Bc, 1, "tile of the mask, bool");
            break;
        case UF_SOFTMAX:
            p->Bs_r = sim_uf_persistent(sh) ? sim_plan_rows(sh, 4, 8) : 0;
            p->softmax_passes = p->Bs_r > 0 ? 1 : 3;
            if (p->Bs_r > 0) {
                sim_plan_add(p, SIM_BUF_S_rows, ph, p->Bs_r, N_k, 4,
                             "whole rows of S, fp32; P in place");
                sim_plan_add(p, SIM_BUF_m, ph, p->Bs_r, 1, 4, "row maxima");
                sim_plan_add(p, SIM_BUF_l, ph, p->Bs_r, 1, 4, "row sums");
            } else {
                sim_plan_add(p, SIM_BUF_S_ij, ph, Br, Bc, 4, "tile of S, fp32; P in place");
                sim_plan_add(p, SIM_BUF_m_i, ph, Br, 1, 4, "row maxima");
                sim_plan_add(p, SIM_BUF_l_i, ph, Br, 1, 4, "row sums");
            }
            break;
        case UF_COPY: {
            const int kv = sim_tensor_about(op->a)->kv;
            sim_plan_add(p, op->ab, ph, kv ? Bc : Br, d, e,
                         "row block, copied into the batched layout");
            break;
        }
        case UF_SOFTMAX_BWD:
            p->Bs_r = sim_uf_persistent(sh) ? sim_plan_rows(sh, 8, 4) : 0;
            p->softmax_passes = p->Bs_r > 0 ? 1 : 2;
            if (p->Bs_r > 0) {
                sim_plan_add(p, SIM_BUF_dP_rows, ph, p->Bs_r, N_k, 4,
                             "whole rows of dP, fp32; dS in place");
                sim_plan_add(p, SIM_BUF_P_rows, ph, p->Bs_r, N_k, 4, "whole rows of P");
                sim_plan_add(p, SIM_BUF_D, ph, p->Bs_r, 1, 4, "row sums of P o dP");
            } else {
                sim_plan_add(p, SIM_BUF_dP_ij, ph, Br, Bc, 4, "tile of dP; dS in place");
                sim_plan_add(p, SIM_BUF_P_ij, ph, Br, Bc, 4, "tile of P, fp32");
                sim_plan_add(p, SIM_BUF_D_i, ph, Br, 1, 4, "row sums of P o dP");
            }
            break;
        }
    }
    p->nphases = nops > 0 ? ops[nops - 1].line : 0;
}

/* Per operation: the products read each operand once (A's blocks, then B's,
 * one transfer per block) and write C once; a copy reads and writes its
 * tensor once, a row block a transfer; the element-wise kernels move
 * every tile of N x N_k once per tensor; the softmax passes over S (or dP
 * and P) once over B_s rows, or 3 (2) times over tiles, writing once. */
void sim_uf_counts(sim_chk *k, const sim_plan *p, const sim_shape *sh, const uf_op *ops,
                   int nops, sim_counts *out)
{
    const uint64_t N = (uint64_t)sh->N, N_k = (uint64_t)sim_shape_Nk(sh), d = (uint64_t)sh->d;
    const uint64_t Tr = (uint64_t)p->Tr, Tc = (uint64_t)p->Tc;
    const uint64_t Nd = sim_th_mul(k, N, d), Nkd = sim_th_mul(k, N_k, d);
    const uint64_t TT = sim_th_mul(k, Tr, Tc), NN = sim_th_mul(k, N, N_k);
    const uint64_t T_s = p->Bs_r > 0 ? (N + (uint64_t)p->Bs_r - 1) / (uint64_t)p->Bs_r : 0;
    const uint64_t passes = (uint64_t)p->softmax_passes;
    for (int q = 0; q < nops; q++) {
        const uf_op *op = &ops[q];
        switch (op->kind) {
        case UF_BMM_NT:
            sim_th_put(out, op->a, SIM_RD, Nd, Tr, k);
            sim_th_put(out, op->b, SIM_RD, Nkd, Tc, k);
            sim_th_put(out, op->c, SIM_WR, NN, TT, k);
            break;
        case UF_BMM_NN:
            sim_th_put(out, op->a, SIM_RD, NN, TT, k);
            sim_th_put(out, op->b, SIM_RD, Nkd, Tc, k);
            sim_th_put(out, op->c, SIM_WR, Nd, Tr, k);
            break;
        case UF_BMM_TN:
            sim_th_put(out, op->a, SIM_RD, NN, TT, k);
            sim_th_put(out, op->b, SIM_RD, Nd, Tr, k);
            sim_th_put(out, op->c, SIM_WR, Nkd, Tc, k);
            break;
        case UF_COPY: {
            const int kv = sim_tensor_about(op->a)->kv;
            sim_th_put(out, op->a, SIM_RD, kv ? Nkd : Nd, kv ? Tc : Tr, k);
            sim_th_put(out, op->c, SIM_WR, kv ? Nkd : Nd, kv ? Tc : Tr, k);
            break;
        }
        case UF_MAP:
            sim_th_put(out, op->a, SIM_RD, NN, TT, k);
            if (op->b != SIM_TENSOR_COUNT)
                sim_th_put(out, op->b, op->fn == UF_FN_DROPOUT ? SIM_WR : SIM_RD, NN, TT, k);
            sim_th_put(out, op->c, SIM_WR, NN, TT, k);
            break;
        case UF_SOFTMAX:
        case UF_SOFTMAX_BWD: {
            const int bwd = op->kind == UF_SOFTMAX_BWD;
            if (passes == 1) {
                sim_th_put(out, op->a, SIM_RD, NN, T_s, k);
                if (bwd)
                    sim_th_put(out, op->b, SIM_RD, NN, T_s, k);
                sim_th_put(out, op->c, SIM_WR, NN, T_s, k);
            } else {
                sim_th_put(out, op->a, SIM_RD, sim_th_mul(k, passes, NN),
                           sim_th_mul(k, passes, TT), k);
                if (bwd)
                    sim_th_put(out, op->b, SIM_RD, sim_th_mul(k, passes, NN),
                               sim_th_mul(k, passes, TT), k);
                sim_th_put(out, op->c, SIM_WR, NN, TT, k);
            }
            break;
        }
        }
    }
}

/* A tile step per tile of every kernel, per row block of a one-pass
 * softmax, per tile and pass of a softmax over tiles, per row block of a
 * copy. */
uint64_t sim_uf_steps(sim_chk *k, const sim_plan *p, const sim_shape *sh, const uf_op *ops,
                      int nops)
{
    const uint64_t TT = sim_th_mul(k, (uint64_t)p->Tr, (uint64_t)p->Tc);
    uint64_t steps = 0;
    for (int q = 0; q < nops; q++) {
        const int sm = ops[q].kind == UF_SOFTMAX || ops[q].kind == UF_SOFTMAX_BWD;
        uint64_t s = TT;
        if (ops[q].kind == UF_COPY)
            s = (uint64_t)(sim_tensor_about(ops[q].a)->kv ? p->Tc : p->Tr);
        else if (sm && p->softmax_passes == 1)
            s = ((uint64_t)sh->N + (uint64_t)p->Bs_r - 1) / (uint64_t)p->Bs_r;
        else if (sm)
            s = sim_th_mul(k, (uint64_t)p->softmax_passes, TT);
        steps = sim_th_add(k, steps, s);
    }
    return steps;
}

/* ---- the forward pass ------------------------------------------------------ */

#define NONE SIM_TENSOR_COUNT

/* The operations of problem sh run with run: lines 1 and 7 for fa2bench
 * alone, 3 for gpt2 alone (fa2bench's scale is line 2's alpha), 4 and 6 only
 * when there is a mask, a dropout. Returns how many. */
static int fwd_ops(const sim_shape *sh, const sim_run_opts *run, uf_op ops[UF_MAX_OPS])
{
    const int bench = run->unfused_ops == SIM_UF_FA2BENCH;
    int n = 0;
    if (bench) {
        ops[n++] = (uf_op){ UF_COPY, UF_L1_COPY_QK, 0, SIM_Q, NONE, SIM_Q, SIM_BUF_Q_i,
                            SIM_BUF_COUNT, SIM_BUF_COUNT, 0 };
        ops[n++] = (uf_op){ UF_COPY, UF_L1_COPY_QK, 0, SIM_K, NONE, SIM_K, SIM_BUF_K_j,
                            SIM_BUF_COUNT, SIM_BUF_COUNT, 0 };
    }
    ops[n++] = (uf_op){ UF_BMM_NT, UF_L2_SCORES, 0, SIM_Q, SIM_K, SIM_S, SIM_BUF_Q_i,
                        SIM_BUF_K_j, SIM_BUF_S_ij, bench };
    if (!bench)
        ops[n++] = (uf_op){ UF_MAP, UF_L3_SCALE, UF_FN_DIV, SIM_S, NONE, SIM_S, SIM_BUF_S_ij,
                            SIM_BUF_COUNT, SIM_BUF_COUNT, 0 };
    if (sh->causal || sh->blocks)
        ops[n++] = (uf_op){ UF_MAP, UF_L4_MASK, UF_FN_WHERE, SIM_S, SIM_C, SIM_S,
                            SIM_BUF_S_ij, SIM_BUF_C_ij, SIM_BUF_COUNT, 0 };
    ops[n++] = (uf_op){ UF_SOFTMAX, UF_L5_SOFTMAX, 0, SIM_S, NONE, SIM_P, SIM_BUF_COUNT,
                        SIM_BUF_COUNT, SIM_BUF_COUNT, 0 };
    if (run->dropout > 0.0)
        ops[n++] = (uf_op){ UF_MAP, UF_L6_DROPOUT, UF_FN_DROPOUT, SIM_P, SIM_Z, SIM_P,
                            SIM_BUF_P_ij, SIM_BUF_Z_ij, SIM_BUF_COUNT, 0 };
    if (bench)
        ops[n++] = (uf_op){ UF_COPY, UF_L7_COPY_V, 0, SIM_V, NONE, SIM_V, SIM_BUF_V_j,
                            SIM_BUF_COUNT, SIM_BUF_COUNT, 0 };
    ops[n++] = (uf_op){ UF_BMM_NN, UF_L8_OUTPUT, 0, SIM_P, SIM_V, SIM_O, SIM_BUF_P_ij,
                        SIM_BUF_V_j, SIM_BUF_O_i, 0 };
    return n;
}

static void unfused_plan(sim_plan *p, const sim_shape *sh, int e)
{
    uf_op ops[UF_MAX_OPS];
    sim_uf_plan(p, sh, e, ops, fwd_ops(sh, &p->run, ops));
}

static int unfused_run(sim_hier *h, const sim_plan *p)
{
    uf_op ops[UF_MAX_OPS];
    if (sim_uf_run(h, p, ops, fwd_ops(&h->sh, &p->run, ops)) != 0)
        return -1;
    sim_at(h, UF_L9_RETURN, -1, -1);
    return 0;
}

static void unfused_counts(sim_chk *k, const sim_plan *p, const sim_shape *sh, sim_counts *out)
{
    uf_op ops[UF_MAX_OPS];
    sim_uf_counts(k, p, sh, ops, fwd_ops(sh, &p->run, ops), out);
}

static uint64_t unfused_steps(sim_chk *k, const sim_plan *p, const sim_shape *sh)
{
    uf_op ops[UF_MAX_OPS];
    return sim_uf_steps(k, p, sh, ops, fwd_ops(sh, &p->run, ops));
}

/* Every score, masked or not. Lines 1 and 6: 2 N N_k d each. The softmax as
 * standard attention's (algo_naive.c): 5 per score in one pass, 7 in three;
 * dropout one multiply per score. The scale and the mask are left out
 * (sim_loop.flops's convention). */
static void unfused_flops(sim_chk *k, const sim_plan *p, const sim_shape *sh, sim_flops *out)
{
    (void)k;
    const double NN = (double)sh->N * (double)sim_shape_Nk(sh);
    out->matmul = 4.0 * (double)sh->d * NN;
    out->other = ((p->softmax_passes == 1 ? 5.0 : 7.0) + (p->run.dropout > 0.0)) * NN;
}

static const sim_code_line UNFUSED_CODE[] = {
    SIM_CODE(UF_L1_COPY_QK, 0, "Q, K = copies [fa2bench]"),
    SIM_CODE(UF_L2_SCORES, 0, "S = matmul(Q, K^T)"),
    SIM_CODE(UF_L3_SCALE, 0, "S = S / sqrt(d) [gpt2]"),
    SIM_CODE(UF_L4_MASK, 0, "S = where(C, S, -inf) [causal]"),
    SIM_CODE(UF_L5_SOFTMAX, 0, "P = softmax(S)"),
    SIM_CODE(UF_L6_DROPOUT, 0, "P, Z = dropout(P) [p > 0]"),
    SIM_CODE(UF_L7_COPY_V, 0, "V = copy [fa2bench]"),
    SIM_CODE(UF_L8_OUTPUT, 0, "O = matmul(P, V)"),
    SIM_CODE(UF_L9_RETURN, 0, "return O"),
};

const sim_loop sim_loop_unfused = {
    .algo = (sim_algo)3,
    .pass = SIM_FWD,
    .name = "unfused",
    .title = "unfused standard attention (PyTorch, one kernel per operation)",
    .code_title = "unfused attention, PyTorch",
    .code = UNFUSED_CODE,
    .ncode = (int)(sizeof UNFUSED_CODE / sizeof UNFUSED_CODE[0]),
    .flags = SIM_LOOP_LINE_BLOCKS | SIM_LOOP_OPT_IN | SIM_LOOP_DROPOUT | SIM_LOOP_UNPAGED |
             SIM_LOOP_FRAMEWORK,
    .hbm = 1u << SIM_Q | 1u << SIM_K | 1u << SIM_V | 1u << SIM_O | 1u << SIM_S | 1u << SIM_P |
           1u << SIM_C | 1u << SIM_Z,
    .kv_loads = SIM_KV_ONCE,
    .grid = SIM_GRID_PER_LINE,
    .prefetch = 1,
    .bound = SIM_BOUND_STANDARD,
    .reread = SIM_BLOCK_R,
    .mark = 'u',
    .mark_style = SIM_MARK_WRITTEN,
    .color = "#7f8c8d",
    .plan = unfused_plan,
    .run = unfused_run,
    .counts = unfused_counts,
    .steps = unfused_steps,
    .flops = unfused_flops,
};
