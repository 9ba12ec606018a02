/*
 * sim_names.c — names, element sizes and parsing of the simulator's vocabulary.
 */
#include "sim.h"
#include "sim_bmask.h"
#include "sim_loop.h"
#include "ref_tile.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

static const char *const DTYPE_NAMES[SIM_DTYPE_COUNT] = { "fp16", "bf16", "fp32", "e4m3",
                                                          "e5m2" };
static const char *const FP8_SCALE_NAMES[SIM_FP8_SCALE_COUNT] = { "tensor", "block" };
static const char *const SOFTMAX_NAMES[SIM_SOFTMAX_COUNT] = { "auto", "1pass", "2pass",
                                                              "3pass" };

/* The softmax statistics, the logsumexp, the backward's D, split-KV's partial
 * outputs and the page table are fp32 in every FlashAttention implementation;
 * the matrices take the run's dtype (docs/ARCHITECTURE.md, "The IO model"). */
static const sim_tensor_info TENSORS[SIM_TENSOR_COUNT] = {
    [SIM_Q] = { "Q", 0, 0, SIM_DIM_N, SIM_DIM_d, 0, 0 },
    [SIM_K] = { "K", 0, 1, SIM_DIM_Nk, SIM_DIM_d, 0, 0 },
    [SIM_V] = { "V", 0, 1, SIM_DIM_Nk, SIM_DIM_d, 0, 0 },
    [SIM_O] = { "O", 0, 0, SIM_DIM_N, SIM_DIM_d, 0, 0 },
    [SIM_S] = { "S", 0, 0, SIM_DIM_N, SIM_DIM_Nk, 0, 0 },
    [SIM_P] = { "P", 0, 0, SIM_DIM_N, SIM_DIM_Nk, 0, 0 },
    [SIM_m] = { "m", 1, 0, SIM_DIM_SN, SIM_DIM_1, 0, 0 },        /* split-KV: S partial rows */
    [SIM_l] = { "l", 1, 0, SIM_DIM_SN, SIM_DIM_1, 0, 0 },
    [SIM_L] = { "L", 1, 0, SIM_DIM_N, SIM_DIM_1, 0, 0 },
    [SIM_dO] = { "dO", 0, 0, SIM_DIM_N, SIM_DIM_d, 0, 0 },
    [SIM_dQ] = { "dQ", 0, 0, SIM_DIM_N, SIM_DIM_d, 0, 0 },
    [SIM_dK] = { "dK", 0, 1, SIM_DIM_Nk, SIM_DIM_d, 0, 0 },
    [SIM_dV] = { "dV", 0, 1, SIM_DIM_Nk, SIM_DIM_d, 0, 0 },
    [SIM_dP] = { "dP", 0, 0, SIM_DIM_N, SIM_DIM_Nk, 0, 0 },
    [SIM_dS] = { "dS", 0, 0, SIM_DIM_N, SIM_DIM_Nk, 0, 0 },
    [SIM_D] = { "D", 1, 0, SIM_DIM_N, SIM_DIM_1, 0, 0 },
    [SIM_Ot] = { "O~", 1, 0, SIM_DIM_SN, SIM_DIM_d, 0, 0 },
    [SIM_PT] = { "PT", 1, 1, SIM_DIM_PAGES, SIM_DIM_1, 0, 0 },
    /* The unfused baseline's masks, as PyTorch keeps them: torch.bool, one
     * byte per element (algo_unfused.c). */
    [SIM_C] = { "C", 0, 0, SIM_DIM_N, SIM_DIM_Nk, 1, 1 },
    [SIM_Z] = { "Z", 0, 0, SIM_DIM_N, SIM_DIM_Nk, 1, 0 },
    [SIM_Oacc] = { "O_acc", 1, 0, SIM_DIM_N, SIM_DIM_d, 0, 0 },
    [SIM_dQacc] = { "dQ_acc", 1, 0, SIM_DIM_N, SIM_DIM_d, 0, 0 },
    /* GQA's backward: one N_k x d gradient per query head (B H of them),
     * in the dtype as flash-attn's dk_expanded (sim_gqa_grad). */
    [SIM_dKexp] = { "dK_exp", 0, 0, SIM_DIM_Nk, SIM_DIM_d, 0, 0 },
    [SIM_dVexp] = { "dV_exp", 0, 0, SIM_DIM_Nk, SIM_DIM_d, 0, 0 },
};

/* ---- intermediate precisions (sim.h, sim_inter) ---------------------------
 * The one place that says what each intermediate is kept in. Sources, in
 * the released FlashAttention kernels:
 *   - O_acc: flash-attn v1 (csrc/flash_attn/fmha_api.cpp, o_tmp: a float
 *     workspace of total_q x heads x d when the keys take more than one
 *     block; fmha_fprop_kernel_1xdma.h reads and writes it between key
 *     blocks and writes O, in the element type, at the last);
 *   - dQ_acc: v1's dq_tmp (fmha_api.cpp, float, converted by the last loop
 *     step or by a copy into dq), v2's dq_accum (csrc/flash_attn/
 *     flash_api.cpp, float; flash_bwd_kernel.h adds into it and
 *     convert_dQ writes dQ in the element type);
 *   - P: v2's flash_fwd_kernel.h converts the fp32 scores to the element
 *     type before the gemm with V (convert_type<Element>(scores)), after
 *     the row sums are taken from the fp32 values (softmax_rescale_o);
 *     flash_bwd_kernel.h converts P before dV = P^T dO and dS before the
 *     gemms of dQ and dK, dS = P o (dP - D) computed from the fp32 P.
 *     v1 does the same in its fragments (fmha_fprop_kernel_1xdma.h packs
 *     the softmax to the element type before the second gemm). */
static const char *const INTER_NAMES[SIM_INTER_COUNT] = { "kernel", "paper" };

const char *sim_inter_name(sim_inter x)
{
    return (unsigned)x < SIM_INTER_COUNT ? INTER_NAMES[x] : "?";
}

int sim_inter_parse(const char *s, sim_inter *out)
{
    for (int k = 0; k < SIM_INTER_COUNT; k++)
        if (strcmp(s, INTER_NAMES[k]) == 0) {
            *out = (sim_inter)k;
            return 0;
        }
    return -1;
}

sim_tensor sim_inter_acc(const sim_run_opts *run, sim_tensor t)
{
    if (run->intermediates == SIM_INTER_PAPER)
        return t;
    return t == SIM_O ? SIM_Oacc : t == SIM_dQ ? SIM_dQacc : t;
}

int sim_inter_holds(const sim_run_opts *run, sim_tensor t)
{
    return (t != SIM_Oacc && t != SIM_dQacc) || run->intermediates != SIM_INTER_PAPER;
}

int sim_inter_p_round(const sim_shape *sh, const sim_run_opts *run)
{
    if (run->intermediates == SIM_INTER_PAPER)
        return REF_ROUND_NONE;
    /* fp8: P~ in the run's fp8 format, as FA3's second product takes it
     * (both operands of an FP8 WGMMA are fp8); P~ <= 1 needs no scale. */
    return sim_dtype_round_kind(sh->dtype);
}

static const char *const BUF_NAMES[SIM_BUF_COUNT] = {
    [SIM_BUF_Q_i] = "Q_i", [SIM_BUF_K_j] = "K_j", [SIM_BUF_V_j] = "V_j",
    [SIM_BUF_S_ij] = "S_ij", [SIM_BUF_P_ij] = "P_ij", [SIM_BUF_O_i] = "O_i",
    [SIM_BUF_m_i] = "m_i", [SIM_BUF_l_i] = "l_i", [SIM_BUF_L_i] = "L_i",
    [SIM_BUF_D_i] = "D_i", [SIM_BUF_m] = "m", [SIM_BUF_l] = "l", [SIM_BUF_D] = "D",
    [SIM_BUF_S_rows] = "S_rows", [SIM_BUF_P_rows] = "P_rows", [SIM_BUF_dP_rows] = "dP_rows",
    [SIM_BUF_mt_ij] = "m~_ij", [SIM_BUF_lt_ij] = "l~_ij",
    [SIM_BUF_m_new] = "m_new", [SIM_BUF_l_new] = "l_new",
    [SIM_BUF_Ot_i] = "O~_i", [SIM_BUF_Ot_s] = "O~_s", [SIM_BUF_m_s] = "m_s",
    [SIM_BUF_l_s] = "l_s", [SIM_BUF_dO_i] = "dO_i", [SIM_BUF_dQ_i] = "dQ_i",
    [SIM_BUF_dK_j] = "dK_j", [SIM_BUF_dV_j] = "dV_j", [SIM_BUF_dP_ij] = "dP_ij",
    [SIM_BUF_dS_ij] = "dS_ij", [SIM_BUF_PT_j] = "PT_j",
    [SIM_BUF_C_ij] = "C_ij", [SIM_BUF_Z_ij] = "Z_ij",
};

const char *sim_buf_name(sim_buf_id b)
{
    return (unsigned)b < SIM_BUF_COUNT ? BUF_NAMES[b] : "?";
}

const sim_tensor_info *sim_tensor_about(sim_tensor t)
{
    return (unsigned)t < SIM_TENSOR_COUNT ? &TENSORS[t] : NULL;
}

int64_t sim_dim_of(sim_dim dim, const sim_shape *sh, const sim_run_opts *run)
{
    switch (dim) {
    case SIM_DIM_N: return sh->N;
    case SIM_DIM_Nk: return sim_shape_Nk(sh);
    case SIM_DIM_SN: return sim_run_S(run) * sh->N;
    case SIM_DIM_d: return sh->d;
    case SIM_DIM_PAGES: return sim_run_pages(sh, run);
    default: return 1;
    }
}

const char *sim_pass_name(sim_pass p)
{
    return p == SIM_FWD ? "fwd" : p == SIM_BWD ? "bwd" : "?";
}

const char *sim_algo_name(sim_algo a)
{
    const sim_loop *l = sim_algo_loop(a);
    return l ? l->name : "?";
}

const char *sim_algo_title(sim_algo a)
{
    const sim_loop *l = sim_algo_loop(a);
    return l && l->title ? l->title : "?";
}

char *sim_algo_names(char *buf, size_t len, const char *last)
{
    const int n = sim_algo_count();
    size_t o = 0;
    if (len)
        buf[0] = '\0';
    for (int a = 0; a < n && o < len; a++) {
        const char *sep = a == 0 ? "" : a == n - 1 ? last : ", ";
        int w = snprintf(buf + o, len - o, "%s%s", sep, sim_algo_name((sim_algo)a));
        if (w < 0)
            break;
        o += (size_t)w;
    }
    return buf;
}

const char *sim_dtype_name(sim_dtype t)
{
    return (unsigned)t < SIM_DTYPE_COUNT ? DTYPE_NAMES[t] : "?";
}

const char *sim_softmax_name(sim_softmax f)
{
    return (unsigned)f < SIM_SOFTMAX_COUNT ? SOFTMAX_NAMES[f] : "?";
}

const char *sim_level_name(sim_level l)
{
    static const char *const NAMES[SIM_LEVEL_COUNT] = { "HBM", "SRAM", "registers" };
    return (unsigned)l < SIM_LEVEL_COUNT ? NAMES[l] : "?";
}

const char *sim_tensor_name(sim_tensor t)
{
    return (unsigned)t < SIM_TENSOR_COUNT ? TENSORS[t].name : "?";
}

const char *sim_fp8_scale_name(sim_fp8_scale s)
{
    return (unsigned)s < SIM_FP8_SCALE_COUNT ? FP8_SCALE_NAMES[s] : "?";
}

int sim_dtype_bytes(sim_dtype t)
{
    return t == SIM_FP32 ? 4 : sim_dtype_is_fp8(t) ? 1 : 2;
}

sim_dtype sim_tensor_dtype(sim_tensor t, sim_dtype dt)
{
    if ((unsigned)t < SIM_TENSOR_COUNT && TENSORS[t].fp32)
        return SIM_FP32;
    if (!sim_dtype_is_fp8(dt) || t == SIM_Q || t == SIM_K || t == SIM_V)
        return dt;
    return t == SIM_S || t == SIM_P ? SIM_FP16 : SIM_BF16;
}

int sim_tensor_bytes(sim_tensor t, sim_dtype dt)
{
    if ((unsigned)t < SIM_TENSOR_COUNT && TENSORS[t].mask)
        return 1;
    return sim_dtype_bytes(sim_tensor_dtype(t, dt));
}

int sim_dtype_round_kind(sim_dtype dt)
{
    static const int KIND[SIM_DTYPE_COUNT] = { REF_ROUND_FP16, REF_ROUND_BF16, REF_ROUND_NONE,
                                               REF_ROUND_E4M3, REF_ROUND_E5M2 };
    return (unsigned)dt < SIM_DTYPE_COUNT ? KIND[dt] : REF_ROUND_NONE;
}

int sim_shape_check(const sim_shape *sh, char *err, size_t errlen)
{
    const char *why = NULL;
    if (sh->window < 0)
        why = "--window must be at least 1";
    else if (sh->window > 0 && !sh->causal)
        why = "a sliding window attends to the keys before each query: it needs --causal";
    else if (sh->Nk < 0)
        why = "--Nk must be at least 1";
    else if (sh->causal && sim_shape_Nk(sh) < sh->N)
        why = "with --causal the queries are the last N_q positions of the keys: "
              "--Nq must not exceed --Nk";
    else if (sh->batch < 0 || sh->heads < 0 || sh->kv_heads < 0)
        why = "--batch, --heads and --kv-heads must be at least 1";
    else if (sim_shape_G(sh) > sim_shape_H(sh))
        why = "--kv-heads G must not exceed --heads H (each key/value head serves H/G "
              "query heads)";
    else if (sim_shape_H(sh) % sim_shape_G(sh) != 0)
        why = "--heads H must be divisible by --kv-heads G: each key/value head serves "
              "the same number H/G of query heads";
    if (!why) {
        char dummy[8];
        return sim_bmask_check(sh, err && errlen ? err : dummy,
                               err && errlen ? errlen : sizeof dummy);
    }
    if (err && errlen)
        snprintf(err, errlen, "%s", why);
    return -1;
}

int sim_check(const sim_shape *sh, const sim_run_opts *run, char *err, size_t errlen)
{
    if (sim_shape_check(sh, err, errlen) != 0)
        return -1;
    if (run && run->page > 0 && sh->blocks) {
        /* Paged KV's closed form sums pages over key blocks that a causal
         * band leaves contiguous; a block mask's are not modelled. */
        if (err && errlen)
            snprintf(err, errlen, "--block-mask does not combine with --page-size (a paged "
                     "KV cache's traffic under a block mask is not modelled)");
        return -1;
    }
    return run ? sim_run_opts_valid(sh, run, err, errlen) : 0;
}

int sim_algo_parse(const char *s, sim_algo *out)
{
    for (int a = 0; a < sim_algo_count(); a++) {
        if (strcmp(s, sim_algo_name((sim_algo)a)) == 0) {
            *out = (sim_algo)a;
            return 0;
        }
    }
    if (strcmp(s, "standard") == 0) {
        *out = SIM_NAIVE;
        return 0;
    }
    return -1;
}

int sim_dtype_parse(const char *s, sim_dtype *out)
{
    for (int t = 0; t < SIM_DTYPE_COUNT; t++) {
        if (strcmp(s, DTYPE_NAMES[t]) == 0) {
            *out = (sim_dtype)t;
            return 0;
        }
    }
    return -1;
}

/* The index of s in names[0 .. n-1], or -1. */
static int name_index(const char *const *names, int n, const char *s)
{
    for (int k = 0; k < n; k++)
        if (names[k] && strcmp(s, names[k]) == 0)
            return k;
    return -1;
}

int sim_fp8_scale_parse(const char *s, sim_fp8_scale *out)
{
    const int k = name_index(FP8_SCALE_NAMES, SIM_FP8_SCALE_COUNT, s);
    if (k < 0)
        return -1;
    *out = (sim_fp8_scale)k;
    return 0;
}

int sim_softmax_parse(const char *s, sim_softmax *out)
{
    const int k = name_index(SOFTMAX_NAMES, SIM_SOFTMAX_COUNT, s);
    if (k < 0)
        return -1;
    *out = (sim_softmax)k;
    return 0;
}

static const char *const UF_OPS_NAMES[SIM_UF_OPS_COUNT] = {
    [SIM_UF_GPT2] = "gpt2", [SIM_UF_FA2BENCH] = "fa2bench",
};

int sim_uf_ops_parse(const char *s, sim_uf_ops *out)
{
    const int k = name_index(UF_OPS_NAMES, SIM_UF_OPS_COUNT, s);
    if (k < 0)
        return -1;
    *out = (sim_uf_ops)k;
    return 0;
}

const char *sim_uf_ops_name(sim_uf_ops o)
{
    return (unsigned)o < SIM_UF_OPS_COUNT ? UF_OPS_NAMES[o] : "?";
}

void sim_format_count(char *buf, size_t len, uint64_t n)
{
    char digits[32];
    int nd = snprintf(digits, sizeof digits, "%llu", (unsigned long long)n);
    size_t o = 0;
    for (int k = 0; k < nd && o + 1 < len; k++) {
        if (k > 0 && (nd - k) % 3 == 0 && o + 2 < len)
            buf[o++] = ',';
        buf[o++] = digits[k];
    }
    if (len)
        buf[o < len ? o : len - 1] = '\0';
}

void sim_format_seconds(char *buf, size_t len, double s)
{
    if (s >= 1.0)
        snprintf(buf, len, "%.3g s", s);
    else if (s >= 1e-3)
        snprintf(buf, len, "%.3g ms", s * 1e3);
    else
        snprintf(buf, len, "%.3g us", s * 1e6);
}

void sim_format_duration(char *buf, size_t len, double s)
{
    if (s < 1.0)
        snprintf(buf, len, "under a second");
    else if (s < 120.0)
        snprintf(buf, len, "about %.0f s", ceil(s));
    else if (s < 7200.0)
        snprintf(buf, len, "about %.0f min", ceil(s / 60.0));
    else if (s < 172800.0)
        snprintf(buf, len, "about %.1f h", s / 3600.0);
    else
        snprintf(buf, len, "about %.1f days", s / 86400.0);
}

void sim_format_bytes(char *buf, size_t len, uint64_t bytes)
{
    static const char *const unit[] = { "B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB" };
    double v = (double)bytes;
    int u = 0;
    while (v >= 1024.0 && u < 6) {
        v /= 1024.0;
        u++;
    }
    if (u == 0)
        snprintf(buf, len, "%llu B", (unsigned long long)bytes);
    else if (fabs(v - round(v)) < 1e-9)
        snprintf(buf, len, "%.0f %s", v, unit[u]);
    else
        snprintf(buf, len, "%.2f %s", v, unit[u]);
}
