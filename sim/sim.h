/*
 * sim.h — the fasim simulator: an HBM/SRAM hierarchy that counts every
 * transfer while the naive, FA1 and FA2 loop orders run on it.
 *
 * A run is: shape -> tile plan -> a loop order drives the hierarchy -> events
 * -> observers. In compute mode real data moves and the reference primitives
 * (reference/ref_tile.h) do real arithmetic; in count-only mode no tensor data
 * exists at all and only the counters move. Both modes execute the same loop
 * nest, so their counts are identical by construction.
 *
 * Notation: N rows (sequence length), d head dimension, B_r x B_c block sizes,
 * T_r = ceil(N / B_r), T_c = ceil(N / B_c). All tensors are row-major.
 * M is the SRAM size in BYTES (the papers count elements; sim_bounds converts).
 */
#ifndef FASIM_SIM_H
#define FASIM_SIM_H

#include <stddef.h>
#include <stdint.h>

#include "ref_tile.h"   /* ref_blocks, ref_mask */

/* ---- vocabulary --------------------------------------------------------- */

/* A loop order. The set of them is the registry's (sim_loop.h): loop orders
 * 0 .. sim_algo_count() - 1, the built-in ones first (naive, fa1, fa2), then
 * those registered at run time, each taking the next number. The built-in
 * ones are named here for code that chooses one (a comparison with standard
 * attention, the default fa2); code that goes over every loop order asks
 * sim_algo_count(), and sizes its arrays by SIM_ALGO_MAX, the most there can
 * be. */
typedef enum { SIM_NAIVE, SIM_FA1, SIM_FA2 } sim_algo;
#define SIM_ALGO_MAX 8
/* FlashAttention-3's forward (sim/algo_fa3.c) is registered at run time
 * (sim_fa3_register): the command line registers it first, as number 4,
 * after the unfused baseline (3). */

/* How many loop orders there are: the built-in ones and those registered
 * (sim_loop_register), at most SIM_ALGO_MAX. */
int sim_algo_count(void);

/* Whether loop order a runs when none is named (the report, sweeps): the
 * papers' three do; a baseline beside them (the unfused framework
 * attention) runs only when named with --algo, or when a preset that
 * reproduces a figure showing it asks for it (sim_loop.h,
 * SIM_LOOP_OPT_IN). */
int sim_algo_in_default(sim_algo a);

/* The loop order after a in the default set, cyclically: what a view's
 * "next loop order" key opens. */
sim_algo sim_algo_next(sim_algo a);

/* The forward pass (O from Q, K, V) or the backward pass (dQ, dK, dV from
 * dO and what the forward left in HBM). Each loop order has both: naive's
 * backward is Algorithm 3 of the FlashAttention paper, FA1's its Algorithm
 * 4, FA2's Algorithm 2 of the FlashAttention-2 paper. */
typedef enum { SIM_FWD, SIM_BWD, SIM_PASS_COUNT } sim_pass;
/* The dtypes of a run. E4M3 and E5M2 are FlashAttention-3's FP8 forward
 * (reference/ref_fp8.h): Q, K, V in HBM in fp8 (1 byte), each tensor
 * quantised with its scales (sim_fp8_scale) as a run places it, and P~ in
 * fp8 before P~ V; O is written in bf16, as FA3's FP8 forward writes it, and
 * the statistics and accumulators stay fp32 (sim_tensor_dtype). */
typedef enum { SIM_FP16, SIM_BF16, SIM_FP32, SIM_E4M3, SIM_E5M2, SIM_DTYPE_COUNT } sim_dtype;

/* 1 for the fp8 dtypes. */
static inline int sim_dtype_is_fp8(sim_dtype t)
{
    return t == SIM_E4M3 || t == SIM_E5M2;
}

/* The scales of an fp8 tensor: one for the whole tensor (all heads; the
 * FP8 baseline of FlashAttention-3's Table 3), or one per block of B_r
 * rows of Q and B_c rows of K, V of each head (FA3's block quantization,
 * on the run's tiles). Each scale is s = amax / the format's largest value
 * (448, 57344), so the block's largest magnitude lands on it. */
typedef enum { SIM_FP8_TENSOR, SIM_FP8_BLOCK, SIM_FP8_SCALE_COUNT } sim_fp8_scale;

/* The form of standard attention's forward softmax (Algorithm 0, line 2),
 * as a run asks for it. AUTO: one pass over whole rows of S when one fits
 * in SRAM, else the two passes over tiles real softmax kernels make (the
 * online normaliser of Milakov and Gimelshein 2018: m and l together, then
 * P). The others name one form: 1PASS needs a row of S in SRAM; 2PASS and
 * 3PASS (row maxima, row sums, normalise) go over B_r x B_c tiles. The
 * FlashAttention loop orders have their own online softmax and no form. */
typedef enum {
    SIM_SOFTMAX_AUTO, SIM_SOFTMAX_1PASS, SIM_SOFTMAX_2PASS, SIM_SOFTMAX_3PASS,
    SIM_SOFTMAX_COUNT
} sim_softmax;

/* The tensors that live in HBM. m, l, L, D, O~, the page table and the
 * accumulators O_acc, dQ_acc are always fp32; the others
 * take the run's dtype (docs/ARCHITECTURE.md, "The IO model"). The backward pass adds
 * the gradients dO (its input), dQ, dK, dV, standard attention's dP and dS
 * (N x N_k), and D = rowsum(dO o O) (N). Split-KV decoding adds O~, the S
 * splits' unnormalised partial outputs (S N, d), fp32 as real kernels keep
 * them, beside their statistics m, l (S N). */
typedef enum {
    SIM_Q, SIM_K, SIM_V, SIM_O, SIM_S, SIM_P, SIM_m, SIM_l, SIM_L,
    SIM_dO, SIM_dQ, SIM_dK, SIM_dV, SIM_dP, SIM_dS, SIM_D,
    SIM_Ot,   /* "O~": split-KV's partial outputs, unnormalised, fp32 */
    SIM_PT,   /* paged KV: the page table, one 4-byte entry per page of K, V */
    SIM_Oacc, /* "O_acc": FA1's running output between key blocks, fp32 (sim_inter) */
    SIM_dQacc,/* "dQ_acc": the backwards' dQ accumulator, fp32 (sim_inter) */
    SIM_C,    /* the unfused baseline's causal mask, bool (1 byte), N x N_k */
    SIM_Z,    /* the unfused baseline's saved dropout mask, bool (1 byte), N x N_k */
    SIM_dKexp,/* "dK_exp": GQA's backward, dK of each query head (N_k, d) in the dtype,
                 summed over its group into dK after the loops (sim_gqa_grad) */
    SIM_dVexp,/* "dV_exp": the same for dV */
    SIM_TENSOR_COUNT
} sim_tensor;

/* The one table of the tensors in HBM: each one's name, its element type
 * there, its side and its shape per head in terms of the shape's N, N_k, d,
 * S (sim_names.c). sim_tensor_name, sim_tensor_bytes, the hierarchy's
 * rounding and the run's placement all read it; the kernels' copy of the
 * element types (kernels/kern_exec.h) is checked against it by a test. */
typedef enum {
    SIM_DIM_N,       /* query rows N */
    SIM_DIM_Nk,      /* key/value rows N_k */
    SIM_DIM_SN,      /* S N: split-KV's partials, S blocks of N rows (N unsplit) */
    SIM_DIM_d,       /* head dimension d */
    SIM_DIM_PAGES,   /* paged KV: ceil(N_k / P) pages */
    SIM_DIM_1
} sim_dim;

typedef struct {
    const char *name;    /* "Q", ..., "O~", "PT" */
    int fp32;            /* 1: 4-byte elements whatever the dtype; 0: the run's dtype */
    int kv;              /* 1: key/value side (B G heads, blocks of B_c rows);
                            0: query side (B H heads, blocks of B_r rows) */
    sim_dim rows, cols;  /* one head's shape */
    int mask;            /* 1: a mask of 1-byte elements (bool), whatever the dtype */
    int shared;          /* 1: one tensor broadcast over the heads, which each read
                            (the unfused baseline's causal mask C); its counts are
                            per head, and an L2 holds it once */
} sim_tensor_info;

const sim_tensor_info *sim_tensor_about(sim_tensor t);   /* NULL out of range */

const char *sim_algo_name(sim_algo a);            /* "naive", "fa1", "fa2"; "?" */
const char *sim_algo_title(sim_algo a);           /* "standard (Algorithm 0)", ... */
/* The names of every loop order in order, joined by ", " save the last two,
 * joined by `last` (", ": "naive, fa1, fa2"; " or ": "naive, fa1 or fa2"),
 * into buf (always terminated when len > 0; cut short if it does not fit).
 * Returns buf. */
char *sim_algo_names(char *buf, size_t len, const char *last);
const char *sim_pass_name(sim_pass p);            /* "fwd", "bwd" */
const char *sim_dtype_name(sim_dtype t);          /* "fp16", "bf16", "fp32", "e4m3", "e5m2" */
const char *sim_fp8_scale_name(sim_fp8_scale s);  /* "tensor", "block"; "?" */
const char *sim_softmax_name(sim_softmax f);      /* "auto", "1pass", "2pass", "3pass" */
const char *sim_tensor_name(sim_tensor t);        /* "Q", ..., "m", "l", "L" */
int sim_dtype_bytes(sim_dtype t);                 /* 2, 2, 4, 1, 1 */
int sim_tensor_bytes(sim_tensor t, sim_dtype dt); /* bytes of one element in HBM */
/* The element type tensor t has in HBM in a run of dtype dt: fp32 for the
 * fp32 tensors (sim_tensor_info.fp32), dt for the others, except in fp8
 * runs, where only Q, K, V are fp8: O (and the backward's tensors) bf16, as
 * FlashAttention-3's FP8 forward writes O (hopper/flash_api.cpp: bf16 out
 * for e4m3 in), and standard attention's S and P fp16 (Table 3's FP8
 * baseline: fp16 softmax). A mask's 1-byte bools are not a dtype: its
 * bytes are sim_tensor_bytes'. */
sim_dtype sim_tensor_dtype(sim_tensor t, sim_dtype dt);
/* The REF_ROUND_* kind that rounds a float to dt (NONE for fp32). */
int sim_dtype_round_kind(sim_dtype dt);
/* Parse a name; returns 0 and sets *out, or -1 for an unknown name. */
int sim_algo_parse(const char *s, sim_algo *out);
int sim_dtype_parse(const char *s, sim_dtype *out);
int sim_softmax_parse(const char *s, sim_softmax *out);
int sim_fp8_scale_parse(const char *s, sim_fp8_scale *out);

/* "96 KiB", "1.50 MiB", "512 B": a byte count for people. */
void sim_format_bytes(char *buf, size_t len, uint64_t bytes);
/* "1.23 s", "45.6 ms", "789 us": seconds for people, 3 digits. */
void sim_format_seconds(char *buf, size_t len, double s);
/* "about 12 s", "about 7 min", "about 3.5 h", "about 4.7 days": an
 * estimated duration for people. */
void sim_format_duration(char *buf, size_t len, double s);
/* 1234567 -> "1,234,567". */
void sim_format_count(char *buf, size_t len, uint64_t n);

/* How a problem is run, apart from the problem itself: the pass, and the
 * variants of a loop order (grouped query heads, split-KV) or of the memory
 * (paged KV). All zero: the plain forward pass. Which loop orders serve
 * which options is the registry's to say (sim_loop.h: sim_loop_find, and
 * sim_run_opts_check for the one message that names what is not served).
 * Kept apart from sim_shape so that a function that takes a problem says
 * whether it takes a run too: one problem has many runs (both passes,
 * split or not, paged or not), with the same mask, heads and counts of
 * the problem. A plan holds the options it was made for (sim_plan.run). */
typedef struct {
    sim_pass pass;       /* the pass a plan or run is for; SIM_FWD (0) by default */
    int group;           /* FA2 forward only: the H/G query heads of a key/value
                            head share one block, so each K_j, V_j is loaded once
                            for all of them (B_r rows of each head on chip) */
    int64_t splits;      /* FA2 forward, split-KV (Flash-Decoding): the key blocks
                            in S contiguous splits, each writing a partial (O~, m,
                            l) to HBM, then a merge; 0 or 1: not split */
    int64_t page;        /* paged KV: K and V in pages of this many rows, placed
                            in a pool by a page table; 0: contiguous */
    uint64_t page_seed;  /* the seed of the pages' random placement */
    int intermediates;   /* a sim_inter: the precision of the intermediates
                            (SIM_INTER_KERNEL, 0, by default) */
    sim_softmax softmax; /* naive forward: the softmax's form; AUTO (0) by default.
                            Loop orders without forms leave it unread */
    double dropout;      /* the probability of attention dropout, in [0, 1); 0: none.
                            Only a loop order that stores its mask counts it
                            (SIM_LOOP_DROPOUT: the unfused baseline); FA1 and FA2
                            regenerate the mask from the RNG state in the
                            backward, so their HBM traffic does not change */
    int unfused_ops;     /* a sim_uf_ops: the unfused baseline's operations
                            (SIM_UF_GPT2, 0, by default); others leave it unread */
    sim_fp8_scale fp8_scale; /* fp8 dtypes: the scales of Q, K, V (TENSOR, 0, by default) */
    int incoherent;      /* fp8 dtypes: 1 multiplies Q and K by one random-sign
                            Hadamard transform before quantising (FA3's incoherent
                            processing); needs d a power of two */
    uint64_t incoherent_seed;   /* the seed of the transform's signs */
} sim_run_opts;

/* The operations of the unfused baseline (sim_loop_unfused), each as a
 * framework's attention code runs them:
 *   GPT2: HuggingFace transformers' GPT2Attention._attn, the baseline of the
 *     FlashAttention paper's Figure 2: the scale a kernel of its own, Q, K,
 *     V given as tensors of one head each (the default);
 *   FA2BENCH: attention_pytorch of flash-attn's
 *     benchmarks/benchmark_flash_attention.py, the PyTorch series of the
 *     FlashAttention-2 paper's Figure 4: Q, K, V packed in one tensor
 *     (B, N, 3, H, d), so each is copied into a batched layout before its
 *     product (and dO before its products, the gradients stacked into the
 *     packed one after); the scale is baddbmm's alpha, inside the product. */
typedef enum { SIM_UF_GPT2 = 0, SIM_UF_FA2BENCH, SIM_UF_OPS_COUNT } sim_uf_ops;
/* Parse "gpt2" or "fa2bench": 0 and *out, or -1; the name of one. */
int sim_uf_ops_parse(const char *s, sim_uf_ops *out);
const char *sim_uf_ops_name(sim_uf_ops o);

/* ---- intermediate precisions -----------------------------------------------
 * What the values between the papers' lines are kept in, where the listings
 * leave it open and a half-precision run must choose. SIM_INTER_KERNEL (the
 * default) keeps them as the released kernels do; SIM_INTER_PAPER as the
 * listings read literally, every value stored to HBM in the tensor's dtype
 * and P~ exact, which costs accuracy (a lesson shows by how much). The
 * choices, each with its source, are made in one place (sim_names.c):
 *   - FA1's running output O_i between key blocks: fp32, in HBM tensor O_acc
 *     (flash-attn v1's o_tmp), O written in the dtype once, at the last key
 *     block a query block sees; paper: O in the dtype at every step;
 *   - the backward's dQ: accumulated in fp32, in HBM tensor dQ_acc (v1's
 *     dq_tmp; v2's dq_accum), converted to the dtype once: FA1 at the last
 *     key block (as v1's last loop step), FA2 by a pass of its own after
 *     the loops (v2's convert_dQ); paper: dQ in the dtype at every
 *     read-modify-write;
 *   - P~ rounded to the dtype before the product P~ V (forward) and P
 *     before dV = P^T dO, dS before dQ = dS K and dK = dS^T Q (backward),
 *     as tensor cores take them; the row sums l and dS itself come from the
 *     fp32 values; paper: all of them fp32. fp32 runs round nothing. */
typedef enum { SIM_INTER_KERNEL, SIM_INTER_PAPER, SIM_INTER_COUNT } sim_inter;

const char *sim_inter_name(sim_inter x);          /* "kernel", "paper"; "?" */
int sim_inter_parse(const char *s, sim_inter *out);   /* 0, or -1: unknown name */

/* The tensor in HBM that holds the running value of t (SIM_O, SIM_dQ)
 * between key blocks: its fp32 accumulator (O_acc, dQ_acc) under
 * SIM_INTER_KERNEL, t itself under SIM_INTER_PAPER; t for any other. */
sim_tensor sim_inter_acc(const sim_run_opts *run, sim_tensor t);

/* 1 when a run with these options holds tensor t at all: 0 for an fp32
 * accumulator the options do not use. */
int sim_inter_holds(const sim_run_opts *run, sim_tensor t);


/* A block-sparse mask (block-sparse FlashAttention, Proposition 4 of the
 * FlashAttention paper): R x C blocks of 0/1 over the N_q x N_k scores,
 * blocks of b_r rows and b_c keys (m.br, m.bc). It is element-wise: key c is
 * visible to row r iff block (r / b_r, c / b_c) is 1 and the causal rule
 * (sim_mask_keys) allows it. A file's R x C give b_r = ceil(N_q / R), b_c =
 * ceil(N_k / C); the patterns are built on the run's common plan tile
 * (sim_bmask.c). The bits belong to whoever made the mask; a shape points at
 * it. */
typedef struct {
    ref_blocks m;            /* the bits (R x C), C, b_r, b_c */
    int64_t R;               /* block rows */
    uint64_t nonzero;        /* blocks that are 1 */
    char pattern[64];        /* "local:2", "file mask.txt": for the report */
} sim_block_mask;

/* s of Proposition 4: the fraction of the R C blocks that are nonzero. */
static inline double sim_bmask_s(const sim_block_mask *b)
{
    return (double)b->nonzero / ((double)b->R * (double)b->m.cols);
}

/* One attention problem: queries (N, d), keys and values (N_k, d), the
 * mask, the batch and heads, on an SRAM of M bytes. How it is run is not
 * here (sim_run_opts). The fields after `causal` default to the plain
 * problem when zero, so { N, d, M, dtype, causal } is one head with
 * N_k = N. M is the machine's, not the problem's: it stays here because
 * nearly everything that reads a problem (plans, bounds, checks, every
 * report and view) reads M with it, and a third struct beside every shape
 * and run would move far more than it would make clear. */
typedef struct {
    int64_t N;           /* query rows (N_q); the key rows too unless Nk is set */
    int64_t d;
    uint64_t M;          /* bytes: the SRAM of one thread block (the machine's) */
    sim_dtype dtype;
    int causal;
    int64_t Nk;          /* key/value rows N_k; 0: N */
    int64_t window;      /* sliding window W >= 1 (with causal): each query sees
                            the W keys before it, itself included; 0: none */
    int64_t batch;       /* B sequences; 0: 1 */
    int64_t heads;       /* H query heads per sequence; 0: 1 */
    int64_t kv_heads;    /* G key/value heads (GQA; MQA is G = 1), G divides H;
                            query head h reads key/value head h / (H / G); 0: H */
    const sim_block_mask *blocks;   /* a block-sparse mask, with causal or not;
                                       NULL: none (dense) */
} sim_shape;

/* How the probabilities entering a matrix product are rounded (P~ before
 * P~ V; P and dS in the backward): a REF_ROUND_* of ref_tile.h, NONE for
 * fp32 runs and SIM_INTER_PAPER. */
int sim_inter_p_round(const sim_shape *sh, const sim_run_opts *run);

/* The size of dimension dim of a tensor of sh run with run (sim_tensor_info:
 * S N and the pages are the run's). */
int64_t sim_dim_of(sim_dim dim, const sim_shape *sh, const sim_run_opts *run);

/* N_k: the key/value rows. */
static inline int64_t sim_shape_Nk(const sim_shape *sh)
{
    return sh->Nk > 0 ? sh->Nk : sh->N;
}

/* B, H and G with their defaults. */
static inline int64_t sim_shape_B(const sim_shape *sh)
{
    return sh->batch > 0 ? sh->batch : 1;
}

static inline int64_t sim_shape_H(const sim_shape *sh)
{
    return sh->heads > 0 ? sh->heads : 1;
}

static inline int64_t sim_shape_G(const sim_shape *sh)
{
    return sh->kv_heads > 0 ? sh->kv_heads : sim_shape_H(sh);
}

/* S, the splits of a split-KV run (1 when not split). */
static inline int64_t sim_run_S(const sim_run_opts *run)
{
    return run->splits > 1 ? run->splits : 1;
}

/* Pages of one key/value head of sh: ceil(N_k / P); 0 when not paged. */
static inline int64_t sim_run_pages(const sim_shape *sh, const sim_run_opts *run)
{
    return run->page > 0 ? (sim_shape_Nk(sh) + run->page - 1) / run->page : 0;
}

/* The tensor a backward loop order writes gradient t (dK or dV) to: with
 * G < H each query head writes its own, dK_exp or dV_exp (B H heads of
 * N_k x d, in the dtype), and after the loops every key/value head's dK, dV
 * is the sum over its H/G query heads, accumulated in fp32 and rounded
 * once. So the released FlashAttention-2 does it (flash_api.cpp, mha_bwd:
 * dk_expanded, dv_expanded in q's dtype, then at::sum_out over the group).
 * With G = H, t itself. */
static inline sim_tensor sim_gqa_grad(const sim_shape *sh, sim_tensor t)
{
    if (sim_shape_G(sh) == sim_shape_H(sh))
        return t;
    return t == SIM_dK ? SIM_dKexp : t == SIM_dV ? SIM_dVexp : t;
}

/* Query heads processed in one block: H / G when grouped, else 1. */
static inline int64_t sim_run_hq(const sim_shape *sh, const sim_run_opts *run)
{
    return run->group ? sim_shape_H(sh) / sim_shape_G(sh) : 1;
}

/* Check a shape's combination of fields (each field's own range is the
 * parser's business). Returns 0, or -1 with a one-line message naming the
 * options: a window without causal, causal with N_k < N_q, G not dividing H. */
int sim_shape_check(const sim_shape *sh, char *err, size_t errlen);

/* A problem and how it is run: sim_shape_check, then (run not NULL) the
 * run options with it (sim_run_opts_valid, sim_loop.h). Returns 0, or -1
 * with the first one-line message. */
int sim_check(const sim_shape *sh, const sim_run_opts *run, char *err, size_t errlen);

/* ---- the mask ------------------------------------------------------------
 * Query row r (0-based) stands at position r + off of the keys' sequence,
 * off = N_k - N_q >= 0: the queries are the last N_q positions (in decoding,
 * one new query sees every cached key). With causal, row r sees key c iff
 * c <= r + off; a window W further requires c > r + off - W. Without causal,
 * every row sees every key. */

typedef struct {
    int64_t lo, hi;      /* inclusive; empty when lo > hi */
} sim_range;

/* The keys that some row of [r0, r1] sees: one interval, since each row's
 * keys are an interval and neighbouring rows' intervals touch. */
static inline sim_range sim_mask_keys(const sim_shape *sh, int64_t r0, int64_t r1)
{
    const int64_t Nk = sim_shape_Nk(sh), off = Nk - sh->N;
    sim_range k = { 0, Nk - 1 };
    if (sh->causal) {
        k.hi = r1 + off < Nk - 1 ? r1 + off : Nk - 1;
        if (sh->window > 0 && r0 + off - sh->window + 1 > 0)
            k.lo = r0 + off - sh->window + 1;
    }
    return k;
}

/* The rows that see some key of [c0, c1]. */
static inline sim_range sim_mask_rows(const sim_shape *sh, int64_t c0, int64_t c1)
{
    const int64_t off = sim_shape_Nk(sh) - sh->N;
    sim_range r = { 0, sh->N - 1 };
    if (sh->causal) {
        if (c0 - off > 0)
            r.lo = c0 - off;
        if (sh->window > 0 && c1 - off + sh->window - 1 < r.hi)
            r.hi = c1 - off + sh->window - 1;
    }
    return r;
}

/* Block form: the key blocks j (of B_c keys) that query block i (of B_r
 * rows) visits, and the query blocks that visit key block j. A block pair
 * is visited iff it holds at least one visible score. */
static inline sim_range sim_block_js(const sim_shape *sh, int64_t i, int64_t Br, int64_t Bc)
{
    const int64_t r0 = i * Br, r1 = (r0 + Br < sh->N ? r0 + Br : sh->N) - 1;
    sim_range k = sim_mask_keys(sh, r0, r1);
    sim_range j = { k.lo / Bc, k.hi < k.lo ? k.lo / Bc - 1 : k.hi / Bc };
    return j;
}

static inline sim_range sim_block_is(const sim_shape *sh, int64_t j, int64_t Br, int64_t Bc)
{
    const int64_t Nk = sim_shape_Nk(sh);
    const int64_t c0 = j * Bc, c1 = (c0 + Bc < Nk ? c0 + Bc : Nk) - 1;
    sim_range r = sim_mask_rows(sh, c0, c1);
    sim_range i = { r.lo / Br, r.hi < r.lo ? r.lo / Br - 1 : r.hi / Br };
    return i;
}

/* The element-wise mask of sh for the tile primitives and the oracle (its
 * block mask's bits, if any, stay sh's). */
static inline ref_mask sim_shape_ref_mask(const sim_shape *sh)
{
    ref_mask mk = { sh->causal, sim_shape_Nk(sh) - sh->N, sh->window,
                    sh->blocks ? &sh->blocks->m : NULL };
    return mk;
}

/* Whether tile (i, j) of B_r x B_c holds a visible score: the block ranges
 * above say so for causal masking alone; with a block mask, some nonzero
 * block of it must meet the tile where the causal rule lets a row see a key
 * (sim_bmask.c). */
int sim_tile_visible(const sim_shape *sh, int64_t i, int64_t j, int64_t Br, int64_t Bc);

/* The key blocks of split s of S over T_c blocks: j0 .. j1 inclusive, as even as
 * can be: j0 = floor(s T_c / S). */
static inline sim_range sim_split_js(int64_t s, int64_t S, int64_t Tc)
{
    sim_range r = { s * Tc / S, (s + 1) * Tc / S - 1 };
    return r;
}

/* ---- tile plans ----------------------------------------------------------- */

#define SIM_MAX_BUFFERS 24

/* One on-chip buffer of a plan. `phase` tells which step of the loop order
 * holds it (the naive order has three phases that reuse SRAM; FA1 and FA2
 * one); `level` where it lives: SIM_LEVEL_SRAM (shared memory, M bytes) for
 * every buffer of the paper's one-level plans, SIM_LEVEL_REG for a kernel
 * plan's accumulators and statistics (sim_plan_kernel). */
typedef struct {
    const char *name;    /* "Q_i", "K_j", "S_ij", ... */
    int id;              /* its sim_buf_id (sim_loop.h) */
    int phase;           /* 1-based */
    int64_t rows, cols;
    int elem_bytes;
    uint64_t bytes;
    const char *why;     /* a few words: "query block", "fp32 accumulator" */
    int level;           /* sim_level: SIM_LEVEL_SRAM or SIM_LEVEL_REG */
} sim_buffer;

/* How block sizes are chosen. SIM_PLAN_SAME is the report's: one square
 * B_r = B_c for every loop order it compares (sim_report.h); the core sees
 * it as the USER sizes the report resolves it to, and a plan keeps the kind
 * only to say so. SIM_PLAN_KERNEL: the block sizes and warps the released
 * kernels launch with, accumulators in registers (sim_plan_kernel). */
typedef enum {
    SIM_PLAN_AUTO, SIM_PLAN_PAPER, SIM_PLAN_USER, SIM_PLAN_SAME, SIM_PLAN_KERNEL
} sim_plan_kind;

typedef struct {
    sim_algo algo;
    sim_shape sh;        /* the problem the plan was made for */
    sim_run_opts run;    /* and how it is run: its pass, grouping, splits, pages */
    sim_plan_kind kind;
    int64_t Br, Bc, Tr, Tc;
    /* The naive order's softmax (Algorithm 0, line 2), of the form run.softmax
     * asks: one pass over row blocks of Bs_r whole rows (by default when a row
     * of S fits in SRAM), or passes over the B_r x B_c tiles of S: two (m and
     * l online, then P; by default when a row does not fit) or three (max,
     * sum, normalise). Its
     * backward's line 3 (dS from P and dP, which needs the row sums of
     * P o dP) likewise: one pass over whole rows of P and dP, or two over
     * tiles (the sums, then dS). */
    int softmax_passes;  /* naive only: 1, 2 or 3 forward, 1 or 2 backward; 0 for FA */
    int64_t Bs_r;        /* naive, 1 pass: rows per transfer */
    int nbuf;
    sim_buffer buf[SIM_MAX_BUFFERS];
    int nphases;
    uint64_t sram_peak;  /* bytes: the largest phase's sum of buffers in SRAM
                            (shared memory, against M) */
    /* The register level: zero in the paper's one-level plans. A kernel plan
     * (sim_plan_kernel) keeps its accumulators and statistics in the
     * registers of its `warps` warps, reg_limit bytes in all. */
    int warps;           /* warps per thread block; 0: one-level plan */
    uint64_t reg_limit;  /* bytes of registers the block may hold */
    uint64_t reg_peak;   /* bytes: the largest phase's sum of buffers in registers */
    int fits;            /* sram_peak <= M and reg_peak <= reg_limit */
} sim_plan;

/* The plan of `algo` for problem sh run with run (NULL: the plain forward
 * pass), block sizes Br x Bc (clamped to N); the plan keeps copies of both.
 * Always succeeds for Br, Bc >= 1; check ->fits. Returns -1 for invalid
 * arguments, or options no loop order of algo serves. */
int sim_plan_make(sim_algo algo, const sim_shape *sh, const sim_run_opts *run,
                  int64_t Br, int64_t Bc, sim_plan_kind kind, sim_plan *out);

/* Choose a plan for problem sh run with run (NULL: the plain forward pass).
 *   SIM_PLAN_AUTO: among block sizes in {1, 2, 4, 8, 16k, N} that fit M, the one
 *     with the fewest HBM bytes (ties: fewest tile steps, then larger B_r). A
 *     nonzero Br_fixed / Bc_fixed pins that size and searches the other.
 *   SIM_PLAN_PAPER: FlashAttention Algorithm 1, line 1, with M in elements
 *     (M bytes / dtype bytes): B_c = ceil(M/4d), B_r = min(ceil(M/4d), d). The
 *     plan may exceed M: Q_i, K_j, V_j, O_i and S_ij take up to 1.25 M
 *     elements when 4d divides M (a little more when the ceiling rounds up),
 *     before fp32 accumulators; it is returned with fits = 0, not altered.
 * Returns 0 with *out set (for AUTO, out->fits is 1), or -1 with a message in
 * err: the buffers of the smallest plan tried and a block size that fits. */
int sim_plan_choose(sim_algo algo, const sim_shape *sh, const sim_run_opts *run,
                    sim_plan_kind kind, int64_t Br_fixed, int64_t Bc_fixed, sim_plan *out,
                    char *err, size_t errlen);

/* ---- kernel plans: the released kernels' launch choices ----------------- */

/* The GPU a kernel plan is for: what the released kernels' launch code asks
 * of the device (compute capability, shared memory opt-in per block and per
 * SM), and the register file's limits per thread block. */
typedef struct {
    int cc_major, cc_minor;       /* compute capability */
    uint64_t smem_per_block;      /* bytes: cudaDevAttrMaxSharedMemoryPerBlockOptin */
    uint64_t smem_per_sm;         /* bytes: cudaDevAttrMaxSharedMemoryPerMultiprocessor */
    uint32_t regs_per_block;      /* 32-bit registers one thread block may use */
    uint32_t regs_per_thread;     /* 32-bit registers one thread may use */
    const char *name;             /* "a100": for messages */
} sim_kernel_target;

/* One launch choice of a released kernel. */
typedef struct {
    int64_t Br, Bc;               /* kBlockM (query rows), kBlockN (key rows) */
    int warps;                    /* kNWarps: threads per block = 32 warps */
    const char *source;           /* "flash_fwd_launch_template.h, run_mha_fwd_hdim128" */
    const char *depends;          /* what the choice depends on here, or NULL */
} sim_kernel_choice;

/* The launch choice of the released kernel of algo's loop order for run (its
 * pass, split-KV) at head dimension sh->d on target t (sh->causal read where
 * the choice depends on it; no dropout: fasim has none). Returns 0, or -1
 * with a one-line message (the head dims the kernel serves, or that no
 * released kernel runs this loop order). */
int sim_kernel_choose(sim_algo algo, const sim_shape *sh, const sim_run_opts *run,
                      const sim_kernel_target *t, sim_kernel_choice *out,
                      char *err, size_t errlen);

/* Split-KV's split count as FlashAttention-2's launch code chooses it when
 * none is given (flash_api.cpp, num_splits_heuristic, Flash-Decoding): 1
 * when the B H ceil(N_q / 64) query blocks already fill 80% of the SMs'
 * slots (two per SM: 128 threads a block), else the fewest splits, among
 * those that change the key blocks per split, whose last wave is at least
 * 85% as full as the best, at most min(128, slots, the key blocks of
 * kBlockN = 256, 128 or 64 keys by d). sms: the GPU's SM count. */
int64_t sim_kernel_splits_auto(const sim_shape *sh, int sms);

/* Registers of a block of `warps` warps on t, in bytes: min(regs_per_thread x
 * 32 warps, regs_per_block) x 4. */
uint64_t sim_kernel_reg_bytes(const sim_kernel_target *t, int warps);

/* A kernel plan: the launch choice of sim_kernel_choose (Br_fixed / Bc_fixed
 * nonzero replace its block sizes), its accumulators and statistics in
 * registers, the tiles loaded from HBM in shared memory (M). Returns 0 with
 * *out set and fitting, or -1 with a one-line message: the kernel's choice
 * unknown here, shared memory over M, or a register buffer over the budget
 * (naming it and the bytes over). */
int sim_plan_kernel(sim_algo algo, const sim_shape *sh, const sim_run_opts *run,
                    const sim_kernel_target *t, int64_t Br_fixed, int64_t Bc_fixed,
                    sim_plan *out, char *err, size_t errlen);

/* Write a refusal for a plan that does not fit: the buffers, the overflow,
 * and the best plan that fits with the same pinned sizes (if any), run as
 * p is (p->run). sh: the plan's problem. */
void sim_plan_explain_misfit(const sim_plan *p, const sim_shape *sh,
                             char *err, size_t errlen);

/* ---- counts --------------------------------------------------------------- */

typedef struct {
    uint64_t read_elems[SIM_TENSOR_COUNT];
    uint64_t write_elems[SIM_TENSOR_COUNT];
    uint64_t read_ops[SIM_TENSOR_COUNT];      /* transfers (tiles moved) */
    uint64_t write_ops[SIM_TENSOR_COUNT];
} sim_counts;

uint64_t sim_counts_read_bytes(const sim_counts *c, sim_dtype dt);
uint64_t sim_counts_write_bytes(const sim_counts *c, sim_dtype dt);
uint64_t sim_counts_elems(const sim_counts *c);   /* read + write, all tensors */
int sim_counts_equal(const sim_counts *a, const sim_counts *b);

/* ---- theory --------------------------------------------------------------- */

/* Functions of a plan read how it is run from the plan (p->run: its pass,
 * grouping, splits, pages); sh is the plan's problem. */

/* The exact closed-form counts of the plan's loop order: per tensor, per
 * direction, elements and transfers, for any N, d, B_r, B_c, causal flag and
 * partial last blocks. Returns 0, or -1 if a count would overflow 64 bits.
 * O(1) in N (floor sums), except paged KV under a mask in FA2's forward: a
 * pass over the key blocks some query sees, fewer than the run's tile steps
 * (check sim_theory_steps first where N is large). */
int sim_theory_counts(const sim_plan *p, const sim_shape *sh, sim_counts *out);

/* Tile steps: the (i, j) block pairs the loop order visits (naive: the tiles
 * of S times its passes over them). Returns 0 or -1 on overflow. */
int sim_theory_steps(const sim_plan *p, const sim_shape *sh, uint64_t *steps);

/* The arithmetic of a run, in FLOPs, split as a GPU splits it: the matrix
 * products (N x N_k x d, on tensor cores) and everything else (the softmax's
 * exp, max and sums, the rescaling of O_i, the final division; on the
 * CUDA cores and special-function units). Doubles: N N_k d leaves 64 bits
 * long before fasim's limits on N do, and a FLOP count needs no last unit. */
typedef struct {
    double matmul;       /* 2 FLOPs per multiply-add of the products */
    double other;        /* the non-matmul FLOPs, by the convention of
                            sim_loop.flops (sim_loop.h): 1 per exp, log, max,
                            add, subtract, multiply or divide */
} sim_flops;

/* The FLOPs of the plan's loop order over all B H heads, each product and
 * each element-wise operation as its loop nest does it (standard attention
 * computes every score, masked or not; FA1 and FA2 the tiles of the block
 * pairs they visit). Returns 0, or -1 when the loop order gives no FLOP
 * count or its visited pairs overflow 64 bits. O(1) in N. */
int sim_theory_flops(const sim_plan *p, const sim_shape *sh, sim_flops *out);

/* Number of (i, j) block pairs with at least one unmasked score under the
 * shape's mask (all T_r T_c when not causal); UINT64_MAX on overflow. */
uint64_t sim_theory_visited(const sim_shape *sh, int64_t Br, int64_t Bc);

/* The same for N_q = N_k = N, causal or not. */
uint64_t sim_theory_visited_blocks(int64_t N, int64_t Br, int64_t Bc, int causal);

/* The papers' asymptotic expressions (constants dropped), in elements, with M
 * converted to elements: M_elems = M / dtype bytes.
 *   theta_standard = N d + N^2             (Theorem 2, standard attention)
 *   theta_flash    = N^2 d^2 / M_elems     (Theorem 2, FlashAttention)
 *   lower_bound    = N^2 d^2 / M_elems     (Proposition 3: no o() of it for all
 *                                           M in [d, N d])
 *   io_floor       = 4 N d                 (read Q, K, V and write O once)
 *   io_floor_bwd   = 8 N d                 (the backward: read Q, K, V, O, dO
 *                                           and write dQ, dK, dV once; the
 *                                           N statistics are left out)
 * The theorems take N_q = N_k = N. With longer keys fasim writes N d as
 * max(N, N_k) d, N^2 as N N_k, 4 N d as 2 (N + N_k) d (read Q, K, V and
 * write O once) and 8 N d as 4 (N + N_k) d; the regime is d <= M_elems <= max(N, N_k) d. The theorems
 * are per head: each expression is multiplied by the B H heads of a batch.
 */
typedef struct {
    double M_elems;
    double theta_standard;
    double theta_flash;
    double lower_bound;
    double io_floor;
    double io_floor_bwd;
    int in_regime;          /* d <= M_elems <= N d */
    double theta_sparse;    /* with a block mask: N d + N^2 d^2 s / M_elems
                               (Proposition 4, block-sparse FlashAttention; s the
                               fraction of nonzero blocks); else theta_flash */
} sim_bounds;

sim_bounds sim_theory_bounds(const sim_shape *sh);

/* ---- runs ----------------------------------------------------------------- */

typedef enum {
    SIM_EV_LINE,    /* the loop order reached a line of its pseudocode */
    SIM_EV_ALLOC,   /* an SRAM buffer was allocated */
    SIM_EV_FREE,    /* an SRAM buffer was released */
    SIM_EV_LOAD,    /* a tile moved HBM -> SRAM */
    SIM_EV_STORE,   /* a tile moved SRAM -> HBM */
    SIM_EV_DONE     /* the run finished */
} sim_event_kind;

/* ---- memory levels ---------------------------------------------------------
 * The levels a tile moves between, as data. The paper's model has two: HBM,
 * unbounded, which holds the tensors, and the SRAM of one thread block, M
 * bytes, which holds a plan's buffers. The hierarchy (sim_hier.h) keeps each
 * level's capacity and use in an array indexed by these; events name the two
 * levels of a transfer. Registers are the level below SRAM: a kernel plan
 * (sim_plan_kernel) keeps its accumulators and statistics there, and a tile
 * loaded into one moves HBM -> registers. A level between them (an L2 shared
 * by the SMs) is one more entry here, its name in sim_level_name, and its
 * capacity in the hierarchy: nothing that reads events changes. */
typedef enum { SIM_LEVEL_HBM, SIM_LEVEL_SRAM, SIM_LEVEL_REG, SIM_LEVEL_COUNT } sim_level;

const char *sim_level_name(sim_level l);         /* "HBM", "SRAM", "registers" */

typedef struct {
    sim_event_kind kind;
    int line;              /* pseudocode line (all events carry the latest) */
    int64_t head;          /* first query head of the block, b H + h (0 for one head) */
    int64_t i, j;          /* current block indices, -1 when outside a loop */
    int64_t split;         /* split-KV: the split s (0-based) in hand, else -1 */
    sim_tensor tensor;     /* LOAD / STORE */
    sim_level from, to;    /* LOAD / STORE: the levels the tile moved between (a LOAD
                              HBM -> SRAM, a STORE SRAM -> HBM); ALLOC / FREE: the
                              level of the buffer, both fields; else SIM_LEVEL_COUNT */
    int64_t block;         /* the thread block that issued it. The paper's model runs
                              one block at a time, each over a block of heads: block
                              k is the k-th in run order (b H + h) / (query heads per
                              block); a launch model numbers its own grid here */
    double t;              /* time stamp, seconds since the run began: 0 in the
                              paper's model, which has no clock; a timing model
                              sets the hierarchy's clock and every event carries it */
    int64_t r0, c0, rows, cols;   /* LOAD / STORE: the tile in HBM */
    const char *buf;       /* the SRAM buffer involved (ALLOC/FREE/LOAD/STORE) */
    uint64_t bytes;        /* bytes moved, or the buffer's size */
    uint64_t sram_used;    /* SRAM bytes allocated after this event */
    const float *data;     /* compute mode: the SRAM buffer's contents; else NULL */
    const sim_counts *counts;   /* running totals after this event */
} sim_event;

typedef struct {
    void (*on_event)(void *ctx, const sim_event *ev);
    void *ctx;
} sim_observer;

typedef struct {
    sim_plan plan;
    sim_counts counts;          /* measured by the hierarchy */
    uint64_t sram_peak;         /* measured: the most SRAM allocated at once */
    uint64_t reg_peak;          /* measured: the most register bytes at once */
    uint64_t steps;             /* tile steps executed */
    int computed;               /* 1 in compute mode */
    float *O;                   /* compute mode: (B, H, N, d), owned; values of dtype
                                   (a backward run: the forward's, its input) */
    float *L;                   /* compute mode, FA2: (B, H, N) logsumexp; else NULL */
    float *dQ, *dK, *dV;        /* compute mode, backward: (B, H, N, d) and twice
                                   (B, G, N_k, d), owned; else NULL */
} sim_result;

/* The data of a compute-mode run: Q (B, H, N, d), K and V (B, G, N_k, d),
 * and for the backward dO (B, H, N, d). Values are rounded to the dtype as
 * they are placed in HBM. */
typedef struct {
    const float *Q, *K, *V;
    const float *dO;
} sim_inputs;

/* Run `algo` with plan p (which must fit, or be a paper plan: a paper plan over
 * M runs with SRAM as large as its peak, and the report says so), run as the
 * plan says (p->run): its buffers were sized for those options, so a second
 * copy beside it could only disagree. sh: the plan's problem.
 * Q, K, V: (N, d) inputs for compute mode, or all NULL for count-only. They are
 * rounded to the shape's dtype as they are placed in HBM.
 * obs may be NULL. Returns 0, or -1 with err set (out of memory).
 * The caller frees res with sim_result_free. */
int sim_run(sim_algo algo, const sim_shape *sh, const sim_plan *p,
            const float *Q, const float *K, const float *V,
            const sim_observer *obs, sim_result *res, char *err, size_t errlen);

/* The same with the inputs in one struct, NULL for count-only; a backward
 * plan (p->run.pass = SIM_BWD) needs in->dO too. In compute mode a
 * backward run first runs the same loop order's forward pass, with the same
 * block sizes, unobserved and uncounted, for what the backward reads. */
int sim_run_inputs(sim_algo algo, const sim_shape *sh, const sim_plan *p,
                   const sim_inputs *in, const sim_observer *obs, sim_result *res,
                   char *err, size_t errlen);

void sim_result_free(sim_result *res);

/* Compute mode's threads. A loop order whose query blocks are independent
 * (FA2's forward: sim_loop.rows_parallel) runs them on n threads at once,
 * each with SRAM buffers and counters of its own; the counters are summed
 * (integers, exactly) and every output value has the bits of a run on one
 * thread, since each is computed by one thread in the same operations.
 * Observed runs (a view) and the other loop orders run on one thread.
 * n in 1 .. SIM_MAX_THREADS, or 0 for the default: the CPUs online, at most
 * SIM_DEFAULT_THREADS. Process-wide: set it before runs, not during one. */
void sim_set_threads(int n);

/* The threads a compute run takes now: sim_set_threads's, or the default. */
int sim_threads(void);

/* Host memory a compute-mode run of algo needs (tensors in HBM), in bytes;
 * UINT64_MAX when it does not fit in 64 bits. */
uint64_t sim_compute_memory(sim_algo algo, const sim_shape *sh, const sim_run_opts *run);

/* Floating-point operations of a compute-mode run (4 N^2 d). */
double sim_compute_flops(sim_algo algo, const sim_shape *sh, const sim_run_opts *run);

/* The wall seconds a compute-mode run takes, with its share of the float64
 * oracle: its flops at the pass's measured rate (SIM_COMPUTE_*_FLOPS_PER_S,
 * sim_limits.h). An estimate for messages and the automatic mode. */
double sim_compute_seconds(sim_algo algo, const sim_shape *sh, const sim_run_opts *run);

/* Paged KV: the page table of run->page_seed, the placement of every
 * key/value head's pages in one pool of B G ceil(N_k / P) pages:
 * pt[(b G + g) pages + p] is the pool page that holds logical page p of head
 * (b, g). A seeded shuffle (Fisher-Yates), so a run is reproducible.
 * n must be that pool size; returns 0, or -1 (no paging, wrong n). */
int sim_page_table(const sim_shape *sh, const sim_run_opts *run, int64_t *pt, int64_t n);

/* Round n values in place to dtype (no-op for fp32). An fp8 dtype leaves
 * them as they are too: an fp8 tensor is quantised with its scales, which
 * depend on the whole tensor or block, where a run places it in HBM
 * (sim_fp8_quantise), so inputs stay in float32 until then and the oracle
 * sees them unquantised. */
void sim_round_to_dtype(float *x, int64_t n, sim_dtype dt);

/* An fp8 run's Q (B H N_q, d), K and V (B G N_k, d), in place, as they are
 * placed in HBM: with run->incoherent, Q and K multiplied by the
 * random-sign Hadamard transform of run->incoherent_seed (ref_fp8.h); then
 * each tensor divided by its scales (run->fp8_scale: per tensor, or per
 * block of Br rows of Q and Bc rows of K, V in each head), rounded to the
 * dtype (ref_round_fp8: ties to even, saturating) and multiplied back, so
 * each value is the one the fp8 code and its scale stand for (within one
 * float rounding, 2^-24 relative, far below fp8's 2^-4 or 2^-3). The
 * transform is not counted: FA3 leaves it to the code that writes Q and K.
 * Returns 0, or -1 with a message: inputs that are not finite (no scale
 * covers them), options sim_check refuses (d not a power of two under
 * run->incoherent), or no memory. */
int sim_fp8_quantise(const sim_shape *sh, const sim_run_opts *run, int64_t Br, int64_t Bc,
                     float *Q, float *K, float *V, char *err, size_t errlen);

/* The inputs of the FlashAttention-3 paper's Table 3 for a seed:
 * N(0, 1) + N(0, 100) x Bernoulli(0.001) (ref_rng_outlier), Q, K, V drawn
 * in that order, rounded to dt as sim_random_qkv rounds them. */
void sim_outlier_qkv(uint64_t seed, int64_t Nq, int64_t Nk, int64_t d, sim_dtype dt,
                     float *Q, float *K, float *V);

/* Fill x (n values) with the seeded bell-shaped inputs of ref_rng.h and round
 * them to dtype. Q, K, V of a seed are drawn in that order from one stream. */
void sim_random_inputs(uint64_t seed, int64_t N, int64_t d, sim_dtype dt,
                       float *Q, float *K, float *V);

/* The backward's output gradient dO of a seed: n values from a stream of
 * its own (so a seed's Q, K, V do not depend on it), rounded to dtype. */
void sim_random_grad(uint64_t seed, int64_t n, sim_dtype dt, float *dO);

/* The same with Q of Nq rows and K, V of Nk rows (Nq = Nk = N above). */
void sim_random_qkv(uint64_t seed, int64_t Nq, int64_t Nk, int64_t d, sim_dtype dt,
                    float *Q, float *K, float *V);

#endif /* FASIM_SIM_H */
