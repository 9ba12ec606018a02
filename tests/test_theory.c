/*
 * test_theory.c — the simulator's measured counts equal the exact closed
 * forms, for hundreds of random configurations, and the closed forms equal
 * counts derived in this file from the pseudocode by direct enumeration.
 *
 * The enumeration here (enum_counts) walks the loop nests of the papers with
 * plain arithmetic, independently of sim_theory.c's closed forms (which use a
 * floor sum for the causal case) and of the simulator (which moves tiles).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim.h"
#include "mask_util.h"
#include "test_util.h"

/* Is block pair (i, j) visited: some row r of block i sees some key c of
 * block j. Row by row: row r's keys are the interval up to r + off. */
static int pair_visible(const sim_shape *sh, int64_t Br, int64_t Bc, int64_t i, int64_t j)
{
    const int64_t Nk = sh->Nk ? sh->Nk : sh->N;
    const int64_t c0 = j * Bc, c1 = min64((j + 1) * Bc, Nk) - 1;
    for (int64_t r = i * Br; r < min64((i + 1) * Br, sh->N); r++)
        for (int64_t c = c0; c <= c1; c++) {
            if (visible(sh, r, c))
                return 1;
            if (sh->causal && sh->window == 0)
                break;      /* without a window, key c0 decides the row */
        }
    return 0;
}

static void enum_counts_bwd(sim_algo algo, const sim_shape *sh, const sim_plan *p,
                            sim_counts *c);

/* The last key block query block i sees, found pair by pair. */
static int64_t last_j(const sim_shape *sh, int64_t Br, int64_t Bc, int64_t i, int64_t Tc)
{
    int64_t j = Tc - 1;
    while (j > 0 && !pair_visible(sh, Br, Bc, i, j))
        j--;
    return j;
}

/* Where a run keeps the running value of O or dQ between key blocks: with
 * the kernels' intermediates (the default) an fp32 tensor of its own, O_acc
 * or dQ_acc; with the paper's, the tensor itself. */
static sim_tensor running(const sim_plan *p, sim_tensor t)
{
    if (p->run.intermediates == SIM_INTER_PAPER)
        return t;
    return t == SIM_O ? SIM_Oacc : SIM_dQacc;
}

/* A load of rows c0 .. c0 + bc - 1 of K or V: one transfer; with paged KV
 * one transfer per page those rows fall in (found row by row) and one read
 * of those pages' table entries. */
static void rd_kv(sim_counts *c, const sim_run_opts *run, sim_tensor t, int64_t c0, int64_t bc,
                  int64_t d)
{
    c->read_elems[t] += (uint64_t)(bc * d);
    if (run->page == 0) {
        c->read_ops[t]++;
        return;
    }
    uint64_t pages = 0;
    for (int64_t r = c0; r < c0 + bc; r++)
        pages += r == c0 || r % run->page == 0;       /* a row that starts a new page */
    c->read_ops[t] += pages;
    c->read_elems[SIM_PT] += pages;
    c->read_ops[SIM_PT]++;
}
#define RDKV(t, j) rd_kv(c, &p->run, (t), (j) * Bc, min64(Bc, Nk - (j) * Bc), d)

static void scale_heads(const sim_shape *sh, const sim_run_opts *run, sim_counts *c);

/* The unfused baseline, by name: it has no enum constant. */
static sim_algo unfused(void)
{
    sim_algo a;
    assert_int_equal(sim_algo_parse("unfused", &a), 0);
    return a;
}

/* The unfused baseline's kernels, one at a time, as README.md's table lists
 * them: every product reads each operand of a head once (A by its blocks,
 * then B by its blocks) and writes its result once; every element-wise
 * kernel moves each B_r x B_c tile of its tensors once; the softmax makes
 * one pass over B_s whole rows or p->softmax_passes over tiles. */
static void enum_unfused(const sim_shape *sh, const sim_plan *p, sim_counts *c)
{
    const int64_t N = sh->N, Nk = sh->Nk ? sh->Nk : sh->N, d = sh->d, Br = p->Br, Bc = p->Bc;
    const int64_t Tr = (N + Br - 1) / Br, Tc = (Nk + Bc - 1) / Bc;
    const int drop = p->run.dropout > 0.0, bwd = p->run.pass == SIM_BWD;
    /* fa2bench: Q, K, V (dO) copied into batched layouts, a row block a
     * transfer; the gradients stacked; no scale kernel (it is the alpha) */
    const int bench = p->run.unfused_ops == SIM_UF_FA2BENCH;
#define RD(t, n) (c->read_elems[t] += (uint64_t)(n), c->read_ops[t]++)
#define WR(t, n) (c->write_elems[t] += (uint64_t)(n), c->write_ops[t]++)
#define BR(i) min64(Br, N - (i) * Br)
#define BC(j) min64(Bc, Nk - (j) * Bc)
#define EACH_TILE for (int64_t i = 0; i < Tr; i++) for (int64_t j = 0; j < Tc; j++)
    /* C = A B^T (N x N_k from query-side A, key-side B) */
#define BMM_NT(A, B, C) do {                                       \
        for (int64_t i = 0; i < Tr; i++) { RD(A, BR(i) * d); }     \
        for (int64_t j = 0; j < Tc; j++) { RD(B, BC(j) * d); }     \
        EACH_TILE { WR(C, BR(i) * BC(j)); }                        \
    } while (0)
    /* C = A B (query side, N x d) and C = A^T B (key side, N_k x d) */
#define BMM_NN(A, B, C) do {                                       \
        EACH_TILE { RD(A, BR(i) * BC(j)); }                        \
        for (int64_t j = 0; j < Tc; j++) { RD(B, BC(j) * d); }     \
        for (int64_t i = 0; i < Tr; i++) { WR(C, BR(i) * d); }     \
    } while (0)
#define BMM_TN(A, B, C) do {                                       \
        EACH_TILE { RD(A, BR(i) * BC(j)); }                        \
        for (int64_t i = 0; i < Tr; i++) { RD(B, BR(i) * d); }     \
        for (int64_t j = 0; j < Tc; j++) { WR(C, BC(j) * d); }     \
    } while (0)
#define COPY_Q(T) for (int64_t i = 0; i < Tr; i++) { RD(T, BR(i) * d); WR(T, BR(i) * d); }
#define COPY_K(T) for (int64_t j = 0; j < Tc; j++) { RD(T, BC(j) * d); WR(T, BC(j) * d); }
    if (!bwd) {
        if (bench) {
            COPY_Q(SIM_Q);
            COPY_K(SIM_K);
        }
        BMM_NT(SIM_Q, SIM_K, SIM_S);                            /* matmul(query, key^T) */
        if (!bench)
            EACH_TILE { RD(SIM_S, BR(i) * BC(j)); WR(SIM_S, BR(i) * BC(j)); }   /* / sqrt(d) */
        if (sh->causal)
            EACH_TILE { RD(SIM_S, BR(i) * BC(j)); RD(SIM_C, BR(i) * BC(j));
                        WR(SIM_S, BR(i) * BC(j)); }                      /* torch.where */
    }
    if (p->softmax_passes == 1) {                               /* softmax (backward) */
        for (int64_t r0 = 0; r0 < N; r0 += p->Bs_r) {
            const int64_t n = min64(p->Bs_r, N - r0) * Nk;
            if (bwd) {
                RD(SIM_dP, n);
                RD(SIM_P, n);
                WR(SIM_dS, n);
            } else {
                RD(SIM_S, n);
                WR(SIM_P, n);
            }
        }
    } else {
        for (int pass = 1; pass <= p->softmax_passes; pass++)
            EACH_TILE {
                RD(bwd ? SIM_dP : SIM_S, BR(i) * BC(j));
                if (bwd)
                    RD(SIM_P, BR(i) * BC(j));
                if (pass == p->softmax_passes)
                    WR(bwd ? SIM_dS : SIM_P, BR(i) * BC(j));
            }
    }
    if (!bwd) {
        if (drop)
            EACH_TILE { RD(SIM_P, BR(i) * BC(j)); WR(SIM_P, BR(i) * BC(j));
                        WR(SIM_Z, BR(i) * BC(j)); }              /* attn_dropout */
        if (bench)
            COPY_K(SIM_V);
        BMM_NN(SIM_P, SIM_V, SIM_O);                            /* matmul(P, value) */
    } else {
        if (bench)
            COPY_Q(SIM_dO);
        BMM_NT(SIM_dO, SIM_V, SIM_dP);                          /* its backward: dP */
        BMM_TN(SIM_P, SIM_dO, SIM_dV);                          /* and dV */
        if (drop)
            EACH_TILE { RD(SIM_dP, BR(i) * BC(j)); RD(SIM_Z, BR(i) * BC(j));
                        WR(SIM_dP, BR(i) * BC(j)); }
        if (sh->causal)
            EACH_TILE { RD(SIM_dS, BR(i) * BC(j)); RD(SIM_C, BR(i) * BC(j));
                        WR(SIM_dS, BR(i) * BC(j)); }
        if (!bench)
            EACH_TILE { RD(SIM_dS, BR(i) * BC(j)); WR(SIM_dS, BR(i) * BC(j)); }
        BMM_NN(SIM_dS, SIM_K, SIM_dQ);
        BMM_TN(SIM_dS, SIM_Q, SIM_dK);
        if (bench) {                                            /* stacked */
            COPY_Q(SIM_dQ);
            COPY_K(SIM_dK);
            COPY_K(SIM_dV);
        }
    }
#undef RD
#undef WR
#undef BR
#undef BC
#undef EACH_TILE
#undef BMM_NT
#undef BMM_NN
#undef BMM_TN
#undef COPY_Q
#undef COPY_K
    scale_heads(sh, &p->run, c);
}

/* Per-tensor element counts by enumerating the papers' loops. */
static void enum_counts(sim_algo algo, const sim_shape *sh, const sim_plan *p,
                        sim_counts *c)
{
    memset(c, 0, sizeof *c);
    if (algo == unfused()) {
        enum_unfused(sh, p, c);
        return;
    }
    if (p->run.pass == SIM_BWD) {
        enum_counts_bwd(algo, sh, p, c);
        return;
    }
    const int64_t N = sh->N, Nk = sh->Nk ? sh->Nk : sh->N, d = sh->d, Br = p->Br, Bc = p->Bc;
    const int64_t Tr = (N + Br - 1) / Br, Tc = (Nk + Bc - 1) / Bc;
#define RD(t, n) (c->read_elems[t] += (uint64_t)(n), c->read_ops[t]++)
#define WR(t, n) (c->write_elems[t] += (uint64_t)(n), c->write_ops[t]++)
    if (algo == SIM_NAIVE) {
        for (int64_t i = 0; i < Tr; i++) {
            int64_t br = min64(Br, N - i * Br);
            RD(SIM_Q, br * d);
            for (int64_t j = 0; j < Tc; j++) {
                int64_t bc = min64(Bc, Nk - j * Bc);
                RDKV(SIM_K, j);
                WR(SIM_S, br * bc);
            }
        }
        if (p->softmax_passes == 1) {
            for (int64_t r0 = 0; r0 < N; r0 += p->Bs_r) {
                RD(SIM_S, min64(p->Bs_r, N - r0) * Nk);
                WR(SIM_P, min64(p->Bs_r, N - r0) * Nk);
            }
        } else {                        /* 2 or 3 passes over tiles; the last writes P */
            for (int64_t i = 0; i < Tr; i++)
                for (int pass = 1; pass <= p->softmax_passes; pass++)
                    for (int64_t j = 0; j < Tc; j++) {
                        int64_t n = min64(Br, N - i * Br) * min64(Bc, Nk - j * Bc);
                        RD(SIM_S, n);
                        if (pass == p->softmax_passes)
                            WR(SIM_P, n);
                    }
        }
        for (int64_t i = 0; i < Tr; i++) {
            int64_t br = min64(Br, N - i * Br);
            for (int64_t j = 0; j < Tc; j++) {
                int64_t bc = min64(Bc, Nk - j * Bc);
                RD(SIM_P, br * bc);
                RDKV(SIM_V, j);
            }
            WR(SIM_O, br * d);
        }
    } else if (algo == SIM_FA1) {
        const sim_tensor Oa = running(p, SIM_O);
        for (int64_t i = 0; i < Tr; i++) {
            int64_t br = min64(Br, N - i * Br);
            WR(Oa, br * d);
            WR(SIM_l, br);
            WR(SIM_m, br);
        }
        for (int64_t j = 0; j < Tc; j++) {
            int any = 0;
            for (int64_t i = 0; i < Tr && !any; i++)
                any = pair_visible(sh, Br, Bc, i, j);
            if (!any)
                continue;                /* no query sees this key block */
            RDKV(SIM_K, j);
            RDKV(SIM_V, j);
            for (int64_t i = 0; i < Tr; i++) {
                if (!pair_visible(sh, Br, Bc, i, j))
                    continue;
                int64_t br = min64(Br, N - i * Br);
                RD(SIM_Q, br * d);
                RD(Oa, br * d);
                RD(SIM_l, br);
                RD(SIM_m, br);
                WR(j == last_j(sh, Br, Bc, i, Tc) ? SIM_O : Oa, br * d);
                WR(SIM_l, br);
                WR(SIM_m, br);
            }
        }
    } else if (p->run.splits > 1) {
        /* split-KV: split s takes key blocks floor(s Tc / S) .. floor((s+1) Tc / S) - 1 */
        const int64_t S = p->run.splits;
        for (int64_t s = 0; s < S; s++)
            for (int64_t i = 0; i < Tr; i++) {
                int64_t br = min64(Br, N - i * Br);
                RD(SIM_Q, br * d);
                for (int64_t j = s * Tc / S; j < (s + 1) * Tc / S; j++) {
                    if (!pair_visible(sh, Br, Bc, i, j))
                        continue;
                    RDKV(SIM_K, j);
                    RDKV(SIM_V, j);
                }
                WR(SIM_Ot, br * d);
                WR(SIM_m, br);
                WR(SIM_l, br);
            }
        for (int64_t i = 0; i < Tr; i++) {
            int64_t br = min64(Br, N - i * Br);
            for (int64_t s = 0; s < S; s++) {
                RD(SIM_Ot, br * d);
                RD(SIM_m, br);
                RD(SIM_l, br);
            }
            WR(SIM_O, br * d);
            WR(SIM_L, br);
        }
    } else {
        for (int64_t i = 0; i < Tr; i++) {
            int64_t br = min64(Br, N - i * Br);
            RD(SIM_Q, br * d);
            for (int64_t j = 0; j < Tc; j++) {
                if (!pair_visible(sh, Br, Bc, i, j))
                    continue;
                RDKV(SIM_K, j);
                RDKV(SIM_V, j);
            }
            WR(SIM_O, br * d);
            WR(SIM_L, br);
        }
    }
#undef RD
#undef WR
    scale_heads(sh, &p->run, c);
}

/* A batch repeats the loop nest per head. */
static void scale_heads(const sim_shape *sh, const sim_run_opts *run, sim_counts *c)
{
    /* A batch repeats the loop nest per head: B H times on the query side;
     * K and V are read B H times too, or B G times when a block takes the
     * H / G query heads of a key/value head together. */
    const uint64_t B = sh->batch ? (uint64_t)sh->batch : 1, H = sh->heads ? (uint64_t)sh->heads : 1;
    const uint64_t G = sh->kv_heads ? (uint64_t)sh->kv_heads : H;
    for (int t = 0; t < SIM_TENSOR_COUNT; t++) {
        uint64_t f = (t == SIM_K || t == SIM_V || t == SIM_PT) && run->group ? B * G : B * H;
        c->read_elems[t] *= f;
        c->write_elems[t] *= f;
        c->read_ops[t] *= f;
        c->write_ops[t] *= f;
    }
}

static void print_counts_diff(const char *what, const sim_counts *a, const sim_counts *b)
{
    for (int t = 0; t < SIM_TENSOR_COUNT; t++) {
        if (a->read_elems[t] != b->read_elems[t] || a->write_elems[t] != b->write_elems[t] ||
            a->read_ops[t] != b->read_ops[t] || a->write_ops[t] != b->write_ops[t])
            fprintf(stderr, "  %s %s: read %llu/%llu ops %llu/%llu, write %llu/%llu ops %llu/%llu\n",
                    what, sim_tensor_name((sim_tensor)t),
                    (unsigned long long)a->read_elems[t], (unsigned long long)b->read_elems[t],
                    (unsigned long long)a->read_ops[t], (unsigned long long)b->read_ops[t],
                    (unsigned long long)a->write_elems[t], (unsigned long long)b->write_elems[t],
                    (unsigned long long)a->write_ops[t], (unsigned long long)b->write_ops[t]);
    }
}

/* The backward passes' loops, from the papers' pseudocode: Algorithm 3
 * (standard), Algorithm 4 (FA1), FlashAttention-2's Algorithm 2, with fasim's
 * choices written out: naive's line 3 in one pass over whole rows or two over
 * tiles; FA2 loads dQ_i once per step (line 15) and not O_i in line 9; key
 * blocks that no query sees are skipped, FA2 still writing their zero dK_j,
 * dV_j. */
static void enum_counts_bwd(sim_algo algo, const sim_shape *sh, const sim_plan *p,
                            sim_counts *c)
{
    const int64_t N = sh->N, Nk = sh->Nk ? sh->Nk : sh->N, d = sh->d, Br = p->Br, Bc = p->Bc;
    const int64_t Tr = (N + Br - 1) / Br, Tc = (Nk + Bc - 1) / Bc;
#define RD(t, n) (c->read_elems[t] += (uint64_t)(n), c->read_ops[t]++)
#define WR(t, n) (c->write_elems[t] += (uint64_t)(n), c->write_ops[t]++)
#define BR(i) min64(Br, N - (i) * Br)
#define BC(j) min64(Bc, Nk - (j) * Bc)
    if (algo == SIM_NAIVE) {
        for (int64_t j = 0; j < Tc; j++) {                        /* 1 */
            for (int64_t i = 0; i < Tr; i++) {
                RD(SIM_P, BR(i) * BC(j));
                RD(SIM_dO, BR(i) * d);
            }
            WR(SIM_dV, BC(j) * d);
        }
        for (int64_t i = 0; i < Tr; i++) {                        /* 2 */
            RD(SIM_dO, BR(i) * d);
            for (int64_t j = 0; j < Tc; j++) {
                RDKV(SIM_V, j);
                WR(SIM_dP, BR(i) * BC(j));
            }
        }
        if (p->softmax_passes == 1) {                             /* 3 */
            for (int64_t r0 = 0; r0 < N; r0 += p->Bs_r) {
                RD(SIM_P, min64(p->Bs_r, N - r0) * Nk);
                RD(SIM_dP, min64(p->Bs_r, N - r0) * Nk);
                WR(SIM_dS, min64(p->Bs_r, N - r0) * Nk);
            }
        } else {
            for (int64_t i = 0; i < Tr; i++)
                for (int pass = 0; pass < 2; pass++)
                    for (int64_t j = 0; j < Tc; j++) {
                        RD(SIM_P, BR(i) * BC(j));
                        RD(SIM_dP, BR(i) * BC(j));
                        if (pass == 1)
                            WR(SIM_dS, BR(i) * BC(j));
                    }
        }
        for (int64_t i = 0; i < Tr; i++) {                        /* 4 */
            for (int64_t j = 0; j < Tc; j++) {
                RD(SIM_dS, BR(i) * BC(j));
                RDKV(SIM_K, j);
            }
            WR(SIM_dQ, BR(i) * d);
        }
        for (int64_t j = 0; j < Tc; j++) {                        /* 5 */
            for (int64_t i = 0; i < Tr; i++) {
                RD(SIM_dS, BR(i) * BC(j));
                RD(SIM_Q, BR(i) * d);
            }
            WR(SIM_dK, BC(j) * d);
        }
    } else {
        const sim_tensor dQa = running(p, SIM_dQ);
        if (algo == SIM_FA1) {                                    /* 5: zeros */
            for (int64_t i = 0; i < Tr; i++)
                WR(dQa, BR(i) * d);
            for (int64_t j = 0; j < Tc; j++) {
                WR(SIM_dK, BC(j) * d);
                WR(SIM_dV, BC(j) * d);
            }
        } else {                                                  /* 3, 4 */
            for (int64_t i = 0; i < Tr; i++)
                WR(dQa, BR(i) * d);
            for (int64_t i = 0; i < Tr; i++) {
                RD(SIM_O, BR(i) * d);
                RD(SIM_dO, BR(i) * d);
                WR(SIM_D, BR(i));
            }
        }
        for (int64_t j = 0; j < Tc; j++) {
            int any = 0;
            for (int64_t i = 0; i < Tr && !any; i++)
                any = pair_visible(sh, Br, Bc, i, j);
            if (any) {
                RDKV(SIM_K, j);
                RDKV(SIM_V, j);
            }
            for (int64_t i = 0; i < Tr; i++) {
                if (!pair_visible(sh, Br, Bc, i, j))
                    continue;
                RD(SIM_Q, BR(i) * d);
                if (algo == SIM_FA1) {
                    RD(SIM_O, BR(i) * d);
                    RD(SIM_dO, BR(i) * d);
                    RD(dQa, BR(i) * d);
                    RD(SIM_l, BR(i));
                    RD(SIM_m, BR(i));
                    /* the last key block of i writes dQ itself */
                    WR(j == last_j(sh, Br, Bc, i, Tc) ? SIM_dQ : dQa, BR(i) * d);
                } else {
                    RD(SIM_dO, BR(i) * d);
                    RD(SIM_L, BR(i));
                    RD(SIM_D, BR(i));
                    RD(dQa, BR(i) * d);
                    WR(dQa, BR(i) * d);
                }
            }
            if (any || algo == SIM_FA2) {
                WR(SIM_dK, BC(j) * d);
                WR(SIM_dV, BC(j) * d);
            }
        }
        if (algo == SIM_FA2 && dQa != SIM_dQ)                     /* 20: the conversion */
            for (int64_t i = 0; i < Tr; i++) {
                RD(dQa, BR(i) * d);
                WR(SIM_dQ, BR(i) * d);
            }
    }
#undef RD
#undef WR
#undef BR
#undef BC
    scale_heads(sh, &p->run, c);
}

/* The plan for blocks Br x Bc; when it does not fit, M grows to its peak:
 * counting does not depend on M, so the run gets room for the plan. */
static void plan_with_room(sim_algo a, sim_shape *sh, const sim_run_opts *run, int64_t Br,
                           int64_t Bc, sim_plan *p)
{
    assert_int_equal(sim_plan_make(a, sh, run, Br, Bc, SIM_PLAN_USER, p), 0);
    if (!p->fits) {
        sh->M = p->sram_peak;
        assert_int_equal(sim_plan_make(a, sh, run, Br, Bc, SIM_PLAN_USER, p), 0);
    }
}

/* One configuration: count-only run vs closed form vs enumeration, with
 * the plan's intermediates (check_config_as) and then the other choice. */
static void check_config_as(sim_algo algo, const sim_shape *sh, const sim_plan *p);

static void check_config(sim_algo algo, const sim_shape *sh, const sim_plan *p)
{
    check_config_as(algo, sh, p);
    sim_plan other = *p;
    other.run.intermediates = p->run.intermediates == SIM_INTER_PAPER ? SIM_INTER_KERNEL
                                                                      : SIM_INTER_PAPER;
    check_config_as(algo, sh, &other);
}

/* An observer that looks at nothing: attached, it keeps a count-only run on
 * its stepwise loop (sim_counting_only is then false). */
static void ignore_event(void *ctx, const sim_event *e)
{
    (void)ctx;
    (void)e;
}

static void check_config_as(sim_algo algo, const sim_shape *sh, const sim_plan *p)
{
    sim_result res, stepwise;
    char err[512];
    assert_int_equal(sim_run(algo, sh, p, NULL, NULL, NULL, NULL, &res, err, sizeof err), 0);
    /* The tallied inner loops of an unobserved run move what the stepwise
     * loop moves, transfer for transfer and step for step. */
    const sim_observer ignore = { ignore_event, NULL };
    assert_int_equal(sim_run(algo, sh, p, NULL, NULL, NULL, &ignore, &stepwise, err, sizeof err),
                     0);
    assert_true(sim_counts_equal(&res.counts, &stepwise.counts));
    assert_int_equal(res.steps, stepwise.steps);
    sim_result_free(&stepwise);
    sim_counts th, en;
    assert_int_equal(sim_theory_counts(p, sh, &th), 0);
    enum_counts(algo, sh, p, &en);
    if (!sim_counts_equal(&res.counts, &th) || !sim_counts_equal(&th, &en)) {
        fprintf(stderr, "mismatch: %s N=%lld Nk=%lld d=%lld Br=%lld Bc=%lld causal=%d "
                "W=%lld M=%llu %s\n", sim_algo_name(algo), (long long)sh->N, (long long)sh->Nk,
                (long long)sh->d, (long long)p->Br, (long long)p->Bc, sh->causal,
                (long long)sh->window, (unsigned long long)sh->M,
                sim_inter_name((sim_inter)p->run.intermediates));
        print_counts_diff("measured/theory", &res.counts, &th);
        print_counts_diff("theory/enumerated", &th, &en);
    }
    assert_true(sim_counts_equal(&res.counts, &th));
    assert_true(sim_counts_equal(&th, &en));
    uint64_t steps;
    assert_int_equal(sim_theory_steps(p, sh, &steps), 0);
    assert_int_equal(res.steps, steps);
    assert_int_equal(res.sram_peak, p->sram_peak);
    sim_result_free(&res);
}

/* 150 random configurations per loop order with the block sizes given
 * directly (partial last blocks in most of them), causal and not. */
static void test_random_block_sizes(void **state)
{
    (void)state;
    uint64_t rng = 12345;
    int partial = 0, total = 0;
    for (int a = 0; a < sim_algo_count(); a++) {
        for (int k = 0; k < 150; k++) {
            sim_shape sh = { 0 };
            sh.N = tu_rand_range(&rng, 1, 700);
            sh.d = tu_rand_range(&rng, 1, 96);
            sh.dtype = (sim_dtype)tu_rand_range(&rng, 0, 2);
            sh.causal = (int)tu_rand_range(&rng, 0, 1);
            /* M either generous or small enough to force naive's 3 passes */
            sh.M = tu_rand_range(&rng, 0, 1) ? (64u << 20) : (uint64_t)(sh.N * 4 + 7);
            int64_t Br = tu_rand_range(&rng, 1, sh.N + 5);
            int64_t Bc = tu_rand_range(&rng, 1, sh.N + 5);
            sim_plan p;
            plan_with_room((sim_algo)a, &sh, NULL, Br, Bc, &p);
            partial += (sh.N % p.Br != 0) || (sh.N % p.Bc != 0);
            total++;
            check_config((sim_algo)a, &sh, &p);
        }
    }
    printf("  %d configurations, %d with partial last blocks\n", total, partial);
    assert_true(partial > total / 2);
}

/* The plans fasim chooses itself, over random (N, d, M). */
static void test_random_auto_plans(void **state)
{
    (void)state;
    uint64_t rng = 777;
    int runs = 0;
    for (int k = 0; k < 120; k++) {
        sim_shape sh = { 0 };
        sh.N = tu_rand_range(&rng, 1, 2000);
        sh.d = tu_rand_range(&rng, 1, 128);
        sh.dtype = (sim_dtype)tu_rand_range(&rng, 0, 2);
        sh.causal = (int)tu_rand_range(&rng, 0, 1);
        sh.M = (uint64_t)tu_rand_range(&rng, 4096, 256 * 1024);
        for (int a = 0; a < sim_algo_count(); a++) {
            sim_plan p;
            char err[1024];
            if (sim_plan_choose((sim_algo)a, &sh, NULL, SIM_PLAN_AUTO, 0, 0, &p, err,
                                sizeof err) != 0)
                continue;   /* M too small for this d: tested in test_plan */
            assert_true(p.fits);
            check_config((sim_algo)a, &sh, &p);
            runs++;
        }
    }
    printf("  %d auto-planned runs\n", runs);
    assert_true(runs > 250);
}

/* The floor sums against a direct count of visible pairs: causal with
 * N_k = N, then with longer keys and sliding windows. */
static void test_visited_blocks(void **state)
{
    (void)state;
    uint64_t rng = 99;
    for (int k = 0; k < 3000; k++) {
        sim_shape sh = { .N = tu_rand_range(&rng, 1, 3000), .causal = 1 };
        const int64_t N = sh.N;
        int64_t Br = tu_rand_range(&rng, 1, N + 3), Bc = tu_rand_range(&rng, 1, N + 3);
        int64_t Tr = (N + Br - 1) / Br, Tc = (N + Bc - 1) / Bc;
        uint64_t count = 0;
        for (int64_t i = 0; i < Tr; i++)
            for (int64_t j = 0; j < Tc; j++)
                count += (uint64_t)pair_visible(&sh, Br, Bc, i, j);
        assert_int_equal(sim_theory_visited_blocks(N, Br, Bc, 1), count);
        assert_int_equal(sim_theory_visited_blocks(N, Br, Bc, 0), (uint64_t)(Tr * Tc));
    }
    for (int k = 0; k < 2000; k++) {
        sim_shape sh = { .N = tu_rand_range(&rng, 1, 400), .causal = 1 };
        sh.Nk = sh.N + (tu_rand_range(&rng, 0, 1) ? tu_rand_range(&rng, 0, 500) : 0);
        sh.window = tu_rand_range(&rng, 0, 1) ? tu_rand_range(&rng, 1, sh.Nk + 20) : 0;
        int64_t Br = tu_rand_range(&rng, 1, sh.N + 3), Bc = tu_rand_range(&rng, 1, sh.Nk + 3);
        int64_t Tr = (sh.N + Br - 1) / Br, Tc = (sh.Nk + Bc - 1) / Bc;
        uint64_t count = 0;
        for (int64_t i = 0; i < Tr; i++)
            for (int64_t j = 0; j < Tc; j++)
                count += (uint64_t)pair_visible(&sh, min64(Br, sh.N), min64(Bc, sh.Nk), i, j);
        assert_int_equal(sim_theory_visited(&sh, min64(Br, sh.N), min64(Bc, sh.Nk)), count);
    }
    /* Square blocks dividing N: T(T+1)/2 of T^2 (docs/ARCHITECTURE.md, errors row 10). */
    for (int64_t T = 1; T <= 64; T++)
        assert_int_equal(sim_theory_visited_blocks(T * 32, 32, 32, 1), (uint64_t)(T * (T + 1) / 2));
    /* A window of one block, blocks aligned: the diagonal and the block
     * before it, 2T - 1 pairs; N = 32 T, W = 32. */
    for (int64_t T = 1; T <= 64; T++) {
        sim_shape sh = { .N = 32 * T, .causal = 1, .window = 32 };
        assert_int_equal(sim_theory_visited(&sh, 32, 32), (uint64_t)(2 * T - 1));
    }
}

/* Longer keys (N_k > N_q, the queries at the end) and sliding windows:
 * measured = closed form = enumeration, 300 random configurations per loop
 * order, with key blocks that no query sees among them. */
static void test_random_masks(void **state)
{
    (void)state;
    uint64_t rng = 4242;
    int with_window = 0, with_keys = 0, skipped_kv = 0, total = 0;
    for (int a = 0; a < sim_algo_count(); a++) {
        for (int k = 0; k < 300; k++) {
            sim_shape sh = { 0 };
            sh.N = tu_rand_range(&rng, 1, 300);
            sh.Nk = sh.N + (tu_rand_range(&rng, 0, 2) ? tu_rand_range(&rng, 0, 400) : 0);
            sh.d = tu_rand_range(&rng, 1, 48);
            sh.dtype = (sim_dtype)tu_rand_range(&rng, 0, 2);
            sh.causal = (int)tu_rand_range(&rng, 0, 3) != 0;
            if (sh.causal && tu_rand_range(&rng, 0, 1))
                sh.window = tu_rand_range(&rng, 1, sh.Nk + 10);
            if (!sh.causal && tu_rand_range(&rng, 0, 1))
                sh.Nk = tu_rand_range(&rng, 1, 500);      /* any length without a mask */
            sh.M = tu_rand_range(&rng, 0, 1) ? (64u << 20) : (uint64_t)(sh.Nk * 4 + 7);
            int64_t Br = tu_rand_range(&rng, 1, sh.N + 5);
            int64_t Bc = tu_rand_range(&rng, 1, sh.Nk + 5);
            sim_plan p;
            plan_with_room((sim_algo)a, &sh, NULL, Br, Bc, &p);
            with_window += sh.window > 0;
            with_keys += sh.Nk != sh.N;
            skipped_kv += a == SIM_FA1 && sim_block_js(&sh, 0, p.Br, p.Bc).lo > 0;
            total++;
            check_config((sim_algo)a, &sh, &p);
        }
    }
    printf("  %d configurations: %d with a window, %d with N_k != N, %d FA1 runs "
           "skipping key blocks\n", total, with_window, with_keys, skipped_kv);
    assert_true(with_window > total / 6 && with_keys > total / 3 && skipped_kv >= 5);
}

/* Batches, heads and GQA: measured = closed form = the enumeration times
 * the heads, over random shapes; grouped FA2 blocks among them. */
static void test_random_heads(void **state)
{
    (void)state;
    uint64_t rng = 8080;
    int grouped = 0, total = 0;
    for (int k = 0; k < 240; k++) {
        const sim_algo a = (sim_algo)(k % sim_algo_count());
        sim_shape sh = { 0 };
        sim_run_opts run = { 0 };
        sh.N = tu_rand_range(&rng, 1, 120);
        sh.Nk = sh.N + (tu_rand_range(&rng, 0, 1) ? tu_rand_range(&rng, 0, 90) : 0);
        sh.d = tu_rand_range(&rng, 1, 24);
        sh.dtype = (sim_dtype)tu_rand_range(&rng, 0, 2);
        sh.causal = (int)tu_rand_range(&rng, 0, 1);
        if (sh.causal && tu_rand_range(&rng, 0, 2) == 0)
            sh.window = tu_rand_range(&rng, 1, sh.Nk);
        sh.batch = tu_rand_range(&rng, 1, 3);
        sh.heads = tu_rand_range(&rng, 1, 8);
        do
            sh.kv_heads = tu_rand_range(&rng, 1, sh.heads);
        while (sh.heads % sh.kv_heads != 0);
        run.group = a == SIM_FA2 && tu_rand_range(&rng, 0, 1);
        sh.M = 64u << 20;
        sim_plan p;
        plan_with_room(a, &sh, &run, tu_rand_range(&rng, 1, sh.N + 3),
                       tu_rand_range(&rng, 1, sh.Nk + 3), &p);
        grouped += run.group && sh.kv_heads < sh.heads;
        total++;
        check_config(a, &sh, &p);
    }
    printf("  %d configurations, %d with grouped query heads\n", total, grouped);
    assert_true(grouped > 10);
}

/* MQA, written out: H = 8 query heads on one key/value head. FA2 one head
 * per block reads K H times; grouped, once, with B_r rows of all 8 heads on
 * chip. */
static void test_mqa_grouped_reads_kv_once(void **state)
{
    (void)state;
    sim_shape sh = { .N = 256, .d = 32, .M = 1u << 22, .dtype = SIM_FP16, .batch = 2,
                     .heads = 8, .kv_heads = 1 };
    sim_plan p;
    sim_result r;
    assert_int_equal(sim_plan_make(SIM_FA2, &sh, NULL, 64, 32, SIM_PLAN_USER, &p), 0);
    assert_int_equal(sim_run(SIM_FA2, &sh, &p, NULL, NULL, NULL, NULL, &r, NULL, 0), 0);
    const uint64_t per_head = 4 * 256 * 32;           /* T_r = 4 passes over K */
    assert_int_equal(r.counts.read_elems[SIM_K], 2 * 8 * per_head);
    assert_int_equal(r.counts.read_elems[SIM_Q], 2 * 8 * 256 * 32);
    sim_result_free(&r);
    const sim_run_opts run = { .group = 1 };
    assert_int_equal(sim_plan_make(SIM_FA2, &sh, &run, 64, 32, SIM_PLAN_USER, &p), 0);
    assert_int_equal(p.buf[0].rows, 8 * 64);          /* Q_i: B_r rows of 8 heads */
    assert_int_equal(sim_run(SIM_FA2, &sh, &p, NULL, NULL, NULL, NULL, &r, NULL, 0), 0);
    assert_int_equal(r.counts.read_elems[SIM_K], 2 * 1 * per_head);
    assert_int_equal(r.counts.read_elems[SIM_V], 2 * 1 * per_head);
    assert_int_equal(r.counts.read_elems[SIM_Q], 2 * 8 * 256 * 32);
    assert_int_equal(r.counts.write_elems[SIM_O], 2 * 8 * 256 * 32);
    sim_result_free(&r);
    /* Grouping is FA2's plan alone. */
    assert_int_equal(sim_plan_make(SIM_FA1, &sh, &run, 64, 32, SIM_PLAN_USER, &p), -1);
    char err[128];
    assert_int_equal(sim_shape_check(&(sim_shape){ .N = 4, .heads = 6, .kv_heads = 4 }, err,
                                     sizeof err), -1);
    assert_non_null(strstr(err, "divisible"));
}

/* Split-KV: measured = closed form = enumeration, decoding-like shapes
 * (N_q small, long keys) and others, masks and batches among them. */
static void test_random_splits(void **state)
{
    (void)state;
    uint64_t rng = 3131;
    int runs = 0;
    for (int k = 0; k < 200; k++) {
        sim_shape sh = { 0 };
        sim_run_opts run = { 0 };
        sh.N = k % 2 ? tu_rand_range(&rng, 1, 8) : tu_rand_range(&rng, 1, 150);
        sh.Nk = sh.N + tu_rand_range(&rng, 0, 600);
        sh.d = tu_rand_range(&rng, 1, 32);
        sh.dtype = (sim_dtype)tu_rand_range(&rng, 0, 2);
        sh.causal = (int)tu_rand_range(&rng, 0, 1);
        if (sh.causal && tu_rand_range(&rng, 0, 2) == 0)
            sh.window = tu_rand_range(&rng, 1, sh.Nk);
        if (k % 5 == 0) {
            sh.batch = 2;
            sh.heads = 3;
        }
        sh.M = 64u << 20;
        const int64_t Bc = tu_rand_range(&rng, 1, sh.Nk / 2 > 1 ? sh.Nk / 2 : 1);
        const int64_t Tc = (sh.Nk + Bc - 1) / Bc;
        run.splits = Tc < 2 ? 1 : tu_rand_range(&rng, 2, Tc < 40 ? Tc : 40);
        sim_plan p;
        plan_with_room(SIM_FA2, &sh, &run, tu_rand_range(&rng, 1, sh.N + 2), Bc, &p);
        check_config(SIM_FA2, &sh, &p);
        runs += run.splits > 1;
    }
    printf("  %d split-KV runs\n", runs);
    assert_true(runs > 180);
}

/* More splits than key blocks is refused with the limit; the best plan with
 * splits keeps T_c >= S. */
static void test_splits_need_key_blocks(void **state)
{
    (void)state;
    sim_shape sh = { .N = 1, .Nk = 4096, .d = 128, .M = 96 * 1024, .dtype = SIM_FP16 };
    sim_run_opts run = { .splits = 16 };
    sim_plan p;
    char err[512];
    assert_int_equal(sim_plan_choose(SIM_FA2, &sh, &run, SIM_PLAN_AUTO, 0, 0, &p, err, sizeof err),
                     0);
    assert_true(p.Tc >= 16);
    assert_int_equal(sim_plan_choose(SIM_FA2, &sh, &run, SIM_PLAN_AUTO, 0, 1024, &p, err,
                                     sizeof err), -1);
    assert_non_null(strstr(err, "--splits 16 is more than the T_c = 4 key blocks"));
    assert_non_null(strstr(err, "--Bc 256"));
    assert_int_equal(sim_plan_make(SIM_FA1, &sh, &run, 1, 64, SIM_PLAN_USER, &p), -1);
    run.splits = 5000;
    assert_int_equal(sim_check(&sh, &run, err, sizeof err), -1);
    assert_non_null(strstr(err, "must not exceed N_k"));
}

/* The backward passes: measured = closed form = the enumeration above, over
 * random shapes with masks, longer keys, batches and partial blocks, and M
 * small enough for naive's two-pass line 3 in a share of them. */
static void test_random_backward(void **state)
{
    (void)state;
    uint64_t rng = 9191;
    int two_pass = 0, windows = 0, total = 0;
    for (int k = 0; k < 450; k++) {
        const sim_algo a = (sim_algo)(k % sim_algo_count());
        sim_shape sh = { 0 };
        const sim_run_opts run = { .pass = SIM_BWD };
        sh.N = tu_rand_range(&rng, 1, 200);
        sh.Nk = sh.N + (tu_rand_range(&rng, 0, 2) == 0 ? tu_rand_range(&rng, 0, 150) : 0);
        sh.d = tu_rand_range(&rng, 1, 40);
        sh.dtype = (sim_dtype)tu_rand_range(&rng, 0, 2);
        sh.causal = (int)tu_rand_range(&rng, 0, 2) != 0;
        if (sh.causal && tu_rand_range(&rng, 0, 1))
            sh.window = tu_rand_range(&rng, 1, sh.Nk + 5);
        if (tu_rand_range(&rng, 0, 3) == 0) {
            sh.batch = tu_rand_range(&rng, 1, 3);
            sh.heads = tu_rand_range(&rng, 1, 4);
        }
        int64_t Br = tu_rand_range(&rng, 1, sh.N + 4), Bc = tu_rand_range(&rng, 1, sh.Nk + 4);
        sh.M = 64u << 20;
        if (tu_rand_range(&rng, 0, 1)) {
            /* Just under two rows of P and dP (8 N_k + 4 B), with blocks and d
             * small enough that every tiled phase fits: line 3 in two passes. */
            sh.Nk = sh.N + 40 + tu_rand_range(&rng, 0, 100);
            sh.d = tu_rand_range(&rng, 1, 4);
            Br = tu_rand_range(&rng, 1, 4);
            Bc = tu_rand_range(&rng, 1, 4);
            sh.M = (uint64_t)(sh.Nk * 8 + 3);
        }
        sim_plan p;
        plan_with_room(a, &sh, &run, Br, Bc, &p);
        two_pass += a == SIM_NAIVE && p.softmax_passes == 2;
        windows += sh.window > 0;
        total++;
        check_config(a, &sh, &p);
    }
    printf("  %d backward configurations, %d with naive's two-pass line 3, %d windows\n",
           total, two_pass, windows);
    assert_true(two_pass > 20 && windows > 50);
}

/* Standard attention's softmax in every form over random shapes, half of
 * them with a row of S (N_k fp32 scores and its m, l: 4 N_k + 8 B) over M:
 * measured = closed form = enumeration, and the passes each form takes,
 * worked out here from the row against M: auto is one pass when the row
 * fits and two when it does not; 1pass is refused when it does not. */
static void test_random_softmax_forms(void **state)
{
    (void)state;
    uint64_t rng = 2018;
    int fit = 0, over = 0;
    for (int k = 0; k < 120; k++) {
        sim_shape sh = { 0 };
        sh.N = tu_rand_range(&rng, 1, 300);
        sh.Nk = tu_rand_range(&rng, 0, 2) == 0 ? sh.N + tu_rand_range(&rng, 0, 120) : 0;
        sh.dtype = (sim_dtype)tu_rand_range(&rng, 0, 2);
        sh.causal = (int)tu_rand_range(&rng, 0, 1);
        const int64_t Nk = sh.Nk ? sh.Nk : sh.N;
        int64_t Br = tu_rand_range(&rng, 1, sh.N + 3), Bc = tu_rand_range(&rng, 1, Nk + 3);
        sh.d = tu_rand_range(&rng, 1, 64);
        sh.M = 64u << 20;
        if (k % 2) {        /* a row over M; tiles small enough to fit under it */
            sh.d = tu_rand_range(&rng, 1, 4);
            Br = tu_rand_range(&rng, 1, 4);
            Bc = tu_rand_range(&rng, 1, 4);
            sh.Nk = sh.N + 40 + tu_rand_range(&rng, 0, 100);
            sh.M = (uint64_t)((sh.N + 40) * 4 + 7);
        }
        const uint64_t row = (uint64_t)(sh.Nk ? sh.Nk : sh.N) * 4 + 8;
        for (int f = 0; f < SIM_SOFTMAX_COUNT; f++) {
            sim_shape s = sh;
            const sim_run_opts run = { .softmax = (sim_softmax)f };
            sim_plan p;
            if (f == SIM_SOFTMAX_1PASS && row > s.M) {
                char err[256];
                assert_int_equal(sim_plan_make(SIM_NAIVE, &s, &run, Br, Bc, SIM_PLAN_USER, &p),
                                 -1);
                assert_int_equal(sim_check(&s, &run, err, sizeof err), -1);
                assert_non_null(strstr(err, "--softmax 1pass reads whole rows of S"));
                continue;
            }
            plan_with_room(SIM_NAIVE, &s, &run, Br, Bc, &p);
            const int fits = row <= s.M;
            const int want = f == SIM_SOFTMAX_AUTO ? (fits ? 1 : 2) : f;
            assert_int_equal(p.softmax_passes, want);
            assert_int_equal(p.run.softmax, f);
            check_config(SIM_NAIVE, &s, &p);
            /* Line 2 by itself: S read once per pass, P written once. */
            sim_counts th;
            assert_int_equal(sim_theory_counts(&p, &s, &th), 0);
            const uint64_t NN = (uint64_t)s.N * (uint64_t)(s.Nk ? s.Nk : s.N);
            assert_int_equal(th.read_elems[SIM_S], (uint64_t)want * NN);
            assert_int_equal(th.write_elems[SIM_P], NN);
            if (f == SIM_SOFTMAX_AUTO) {
                fit += fits;
                over += !fits;
            }
        }
    }
    printf("  120 shapes in 4 forms: auto in one pass %d times, in two %d times\n", fit, over);
    assert_true(fit > 40 && over > 40);
}

/* The loop orders other than standard attention have no softmax forms
 * (FlashAttention's online softmax, the unfused baseline's framework
 * kernels): their plans keep run.softmax at auto whatever was asked, and
 * count the same. */
static void test_softmax_forms_leave_fa(void **state)
{
    (void)state;
    const sim_shape sh = { .N = 300, .d = 32, .M = 32u << 10, .dtype = SIM_FP16 };
    for (int a = SIM_FA1; a < sim_algo_count(); a++) {
        sim_plan p0, p3;
        const sim_run_opts three = { .softmax = SIM_SOFTMAX_3PASS };
        assert_int_equal(sim_plan_make((sim_algo)a, &sh, NULL, 32, 32, SIM_PLAN_USER, &p0), 0);
        assert_int_equal(sim_plan_make((sim_algo)a, &sh, &three, 32, 32, SIM_PLAN_USER, &p3), 0);
        assert_int_equal(p3.run.softmax, SIM_SOFTMAX_AUTO);
        /* FA1, FA2: no passes over S at all; the unfused baseline: its own
         * rule (PyTorch's kernels), whatever form was asked. */
        assert_int_equal(p3.softmax_passes, p0.softmax_passes);
        if (a == SIM_FA1 || a == SIM_FA2)
            assert_int_equal(p3.softmax_passes, 0);
        sim_counts c0, c3;
        assert_int_equal(sim_theory_counts(&p0, &sh, &c0), 0);
        assert_int_equal(sim_theory_counts(&p3, &sh, &c3), 0);
        assert_true(sim_counts_equal(&c0, &c3));
    }
}

/* The unfused baseline: measured = closed form = the kernel-by-kernel
 * enumeration over random shapes, both passes, causal or not, dropout or
 * not, with batches, longer keys and windows, and rows past PyTorch's
 * persistent softmax (N_k > 1024, or 4096 bytes) or SRAM (three passes
 * forward, two backward). The passes follow PyTorch's rule. */
static void test_random_unfused(void **state)
{
    (void)state;
    uint64_t rng = 2026;
    int tiled = 0, dropped = 0, masked = 0, bench = 0, total = 0;
    for (int k = 0; k < 240; k++) {
        sim_shape sh = { 0 };
        sim_run_opts run = { .pass = k % 2 ? SIM_BWD : SIM_FWD };
        sh.N = tu_rand_range(&rng, 1, 150);
        sh.Nk = sh.N + (tu_rand_range(&rng, 0, 2) == 0 ? tu_rand_range(&rng, 0, 1200) : 0);
        sh.d = tu_rand_range(&rng, 1, 40);
        sh.dtype = (sim_dtype)tu_rand_range(&rng, 0, 2);
        sh.causal = (int)tu_rand_range(&rng, 0, 1);
        if (sh.causal && tu_rand_range(&rng, 0, 2) == 0)
            sh.window = tu_rand_range(&rng, 1, sh.Nk + 3);
        if (tu_rand_range(&rng, 0, 3) == 0) {
            sh.batch = tu_rand_range(&rng, 1, 3);
            sh.heads = tu_rand_range(&rng, 1, 4);
        }
        if (tu_rand_range(&rng, 0, 1))
            run.dropout = 0.1 * (double)tu_rand_range(&rng, 1, 9);
        if (tu_rand_range(&rng, 0, 2) == 0) {   /* fa2bench: one packed N x d tensor */
            run.unfused_ops = SIM_UF_FA2BENCH;
            sh.causal = 0;
            sh.window = 0;
            sh.Nk = sh.N;
        }
        int64_t Br = tu_rand_range(&rng, 1, sh.N + 4), Bc = tu_rand_range(&rng, 1, sh.Nk + 4);
        sh.M = 64u << 20;
        if (tu_rand_range(&rng, 0, 2) == 0) {
            /* Less than one row of S in fp32 with its statistics, with blocks
             * and d small enough that every tiled kernel fits. */
            sh.d = tu_rand_range(&rng, 1, 4);
            Br = tu_rand_range(&rng, 1, 4);
            Bc = tu_rand_range(&rng, 1, 4);
            sh.M = (uint64_t)(sh.Nk * 4 + 7);
        }
        sim_plan p;
        plan_with_room(unfused(), &sh, &run, Br, Bc, &p);
        const int64_t Nk = sh.Nk, e = sh.dtype == SIM_FP32 ? 4 : 2;
        const int persistent = Nk <= 1024 && Nk * e <= 4096;
        const int row_fits = (uint64_t)(Nk * (run.pass == SIM_BWD ? 8 : 4) +
                                        (run.pass == SIM_BWD ? 4 : 8)) <= sh.M;
        assert_int_equal(p.softmax_passes,
                         persistent && row_fits ? 1 : run.pass == SIM_BWD ? 2 : 3);
        check_config(unfused(), &sh, &p);
        tiled += p.softmax_passes > 1;
        dropped += run.dropout > 0.0;
        masked += sh.causal;
        bench += run.unfused_ops == SIM_UF_FA2BENCH;
        total++;
    }
    printf("  %d unfused configurations: %d with the softmax over tiles, %d with dropout, "
           "%d masked, %d fa2bench\n", total, tiled, dropped, masked, bench);
    assert_true(tiled > 30 && dropped > 60 && masked > 50 && bench > 50);
}

/* Paged KV: measured = closed form = enumeration (which finds each tile's
 * pages row by row) for every loop order and both passes, with masks, longer
 * keys, batches, grouped heads and split-KV among them, and page sizes below,
 * equal to and above the key block. */
static void test_random_paged(void **state)
{
    (void)state;
    uint64_t rng = 4242;
    int spanning = 0, total = 0;
    for (int k = 0; k < 600; k++) {
        const sim_algo a = (sim_algo)(k % sim_algo_count());
        sim_shape sh = { 0 };
        sim_run_opts run = { .pass = k % 6 < 3 ? SIM_FWD : SIM_BWD };
        sh.N = tu_rand_range(&rng, 1, 120);
        sh.Nk = sh.N + (tu_rand_range(&rng, 0, 1) ? tu_rand_range(&rng, 0, 300) : 0);
        sh.d = tu_rand_range(&rng, 1, 24);
        sh.dtype = (sim_dtype)tu_rand_range(&rng, 0, 2);
        sh.causal = (int)tu_rand_range(&rng, 0, 1);
        if (sh.causal && tu_rand_range(&rng, 0, 2) == 0)
            sh.window = tu_rand_range(&rng, 1, sh.Nk + 3);
        if (tu_rand_range(&rng, 0, 3) == 0) {
            sh.batch = tu_rand_range(&rng, 1, 2);
            sh.heads = 4;
            if (run.pass == SIM_FWD)        /* the backward takes one K, V head per query head */
                sh.kv_heads = tu_rand_range(&rng, 0, 1) ? 2 : 1;
            run.group = a == SIM_FA2 && run.pass == SIM_FWD && tu_rand_range(&rng, 0, 1);
        }
        const int64_t Bc = tu_rand_range(&rng, 1, sh.Nk + 3), Tc = (sh.Nk + Bc - 1) / Bc;
        if (a == SIM_FA2 && run.pass == SIM_FWD && !run.group && Tc > 1 && k % 4 == 2)
            run.splits = tu_rand_range(&rng, 2, Tc < 9 ? Tc : 9);
        const int64_t pick = tu_rand_range(&rng, 0, 2);
        run.page = pick == 0 ? tu_rand_range(&rng, 1, 8)
                   : pick == 1 ? Bc : tu_rand_range(&rng, 1, 64);
        if (run.page > sh.Nk)
            run.page = sh.Nk;                      /* at most N_k: one page holds every key */
        sh.M = 64u << 20;
        sim_plan p;
        if (a == unfused()) {        /* refused: unfused reads K and V as whole tensors */
            assert_int_equal(sim_plan_make(a, &sh, &run, 1, Bc, SIM_PLAN_USER, &p), -1);
            continue;
        }
        plan_with_room(a, &sh, &run, tu_rand_range(&rng, 1, sh.N + 3), Bc, &p);
        check_config(a, &sh, &p);
        sim_counts th;
        assert_int_equal(sim_theory_counts(&p, &sh, &th), 0);
        spanning += th.read_ops[SIM_K] > th.read_ops[SIM_PT] / 2;   /* some tile spans pages */
        total++;
    }
    printf("  %d paged configurations, %d with tiles that span pages\n", total, spanning);
    assert_true(spanning > total / 3);
}

/* Without a mask each key block is loaded the same number of times, and the
 * extra transfers are the page boundaries inside key blocks: the multiples
 * of P below N_k that are not multiples of B_c, floor((N_k - 1) / P) -
 * floor((N_k - 1) / lcm(P, B_c)), times the loads of a block. Contiguous KV
 * (no pages) is the same run less those transfers and the table. */
static void test_paged_boundaries(void **state)
{
    (void)state;
    uint64_t rng = 515;
    for (int k = 0; k < 300; k++) {
        sim_shape sh = { .N = tu_rand_range(&rng, 1, 300), .d = tu_rand_range(&rng, 1, 64),
                         .M = 64u << 20, .dtype = SIM_FP16 };
        sh.Nk = sh.N + tu_rand_range(&rng, 0, 2000);
        const sim_run_opts run = { .page = tu_rand_range(&rng, 1, sh.Nk < 300 ? sh.Nk : 300) };
        const sim_algo a = (sim_algo)(k % sim_algo_count());
        sim_plan p;
        if (a == unfused()) {        /* refused: unfused reads K and V as whole tensors */
            assert_int_equal(sim_plan_make(a, &sh, &run, 1, 1, SIM_PLAN_USER, &p), -1);
            continue;
        }
        plan_with_room(a, &sh, &run, tu_rand_range(&rng, 1, sh.N), tu_rand_range(&rng, 1, sh.Nk),
                       &p);
        int64_t g = run.page, b = p.Bc;
        while (b) {
            const int64_t t = g % b;
            g = b;
            b = t;
        }
        const int64_t lcm = run.page / g * p.Bc;
        const uint64_t loads = a == SIM_FA1 ? 1 : (uint64_t)p.Tr;   /* of each key block */
        const uint64_t inside = (uint64_t)((sh.Nk - 1) / run.page - (sh.Nk - 1) / lcm);
        sim_counts paged, flat;
        assert_int_equal(sim_theory_counts(&p, &sh, &paged), 0);
        sim_plan contiguous = p;
        contiguous.run.page = 0;
        assert_int_equal(sim_theory_counts(&contiguous, &sh, &flat), 0);
        for (int t = 0; t < SIM_TENSOR_COUNT; t++) {
            assert_int_equal(paged.read_elems[t] - flat.read_elems[t],
                             t == SIM_PT ? 2 * loads * ((uint64_t)p.Tc + inside) : 0);
            assert_int_equal(paged.read_ops[t] - flat.read_ops[t],
                             t == SIM_K || t == SIM_V ? loads * inside
                             : t == SIM_PT ? 2 * loads * (uint64_t)p.Tc : 0);
            assert_int_equal(paged.write_elems[t], flat.write_elems[t]);
        }
        check_config(a, &sh, &p);
    }
}

/* The backward's signatures, written out: FA2 reads K and V once, reads and
 * writes dQ T_c times (plus line 3's zeros), writes dK, dV once; FA1 also
 * reads O every step and writes dK, dV twice (line 5's zeros); naive moves
 * dP and dS, N^2 each, and reads dS twice. */
static void test_backward_signatures(void **state)
{
    (void)state;
    sim_shape sh = { .N = 1000, .d = 64, .M = 1u << 30, .dtype = SIM_FP16 };
    const sim_run_opts run = { .pass = SIM_BWD };
    const uint64_t N = 1000, d = 64, Tc = 16;                    /* ceil(1000/64) */
    sim_plan p;
    sim_result r;
    assert_int_equal(sim_plan_make(SIM_FA2, &sh, &run, 128, 64, SIM_PLAN_USER, &p), 0);
    assert_int_equal(sim_run(SIM_FA2, &sh, &p, NULL, NULL, NULL, NULL, &r, NULL, 0), 0);
    assert_int_equal(r.counts.read_elems[SIM_K], N * d);
    assert_int_equal(r.counts.read_elems[SIM_V], N * d);
    /* dQ summed in fp32 dQ_acc, then the conversion pass: read once more,
     * dQ written once */
    assert_int_equal(r.counts.read_elems[SIM_dQacc], (Tc + 1) * N * d);
    assert_int_equal(r.counts.write_elems[SIM_dQacc], (Tc + 1) * N * d);
    assert_int_equal(r.counts.read_elems[SIM_dQ], 0);
    assert_int_equal(r.counts.write_elems[SIM_dQ], N * d);
    sim_result_free(&r);
    /* The paper's intermediates: dQ itself, in the dtype, at every step. */
    sim_run_opts paper = run;
    paper.intermediates = SIM_INTER_PAPER;
    assert_int_equal(sim_plan_make(SIM_FA2, &sh, &paper, 128, 64, SIM_PLAN_USER, &p), 0);
    assert_int_equal(sim_run(SIM_FA2, &sh, &p, NULL, NULL, NULL, NULL, &r, NULL, 0), 0);
    assert_int_equal(r.counts.read_elems[SIM_dQ], Tc * N * d);
    assert_int_equal(r.counts.write_elems[SIM_dQ], (Tc + 1) * N * d);
    assert_int_equal(r.counts.read_elems[SIM_dQacc] + r.counts.write_elems[SIM_dQacc], 0);
    assert_int_equal(r.counts.write_elems[SIM_dK], N * d);
    assert_int_equal(r.counts.read_elems[SIM_O], N * d);          /* line 4 only */
    assert_int_equal(r.counts.read_elems[SIM_dO], (Tc + 1) * N * d);
    assert_int_equal(r.counts.write_elems[SIM_D], N);
    assert_int_equal(r.counts.read_elems[SIM_L], Tc * N);
    sim_result_free(&r);
    assert_int_equal(sim_plan_make(SIM_FA1, &sh, &run, 128, 64, SIM_PLAN_USER, &p), 0);
    assert_int_equal(sim_run(SIM_FA1, &sh, &p, NULL, NULL, NULL, NULL, &r, NULL, 0), 0);
    assert_int_equal(r.counts.read_elems[SIM_O], Tc * N * d);
    assert_int_equal(r.counts.write_elems[SIM_dK], 2 * N * d);
    assert_int_equal(r.counts.read_elems[SIM_m], Tc * N);
    assert_int_equal(r.counts.write_elems[SIM_D], 0);
    /* dQ_acc: line 5's zeros and T_c - 1 steps; dQ at the last key block */
    assert_int_equal(r.counts.read_elems[SIM_dQacc], Tc * N * d);
    assert_int_equal(r.counts.write_elems[SIM_dQacc], Tc * N * d);
    assert_int_equal(r.counts.write_elems[SIM_dQ], N * d);
    assert_int_equal(r.counts.read_elems[SIM_dQ], 0);
    sim_result_free(&r);
    assert_int_equal(sim_plan_make(SIM_NAIVE, &sh, &run, 128, 64, SIM_PLAN_USER, &p), 0);
    assert_int_equal(p.softmax_passes, 1);
    assert_int_equal(sim_run(SIM_NAIVE, &sh, &p, NULL, NULL, NULL, NULL, &r, NULL, 0), 0);
    assert_int_equal(r.counts.write_elems[SIM_dP], N * N);
    assert_int_equal(r.counts.write_elems[SIM_dS], N * N);
    assert_int_equal(r.counts.read_elems[SIM_dS], 2 * N * N);
    assert_int_equal(r.counts.read_elems[SIM_P], 2 * N * N);
    sim_result_free(&r);
    /* With G < H the backward runs: each of the 4 query heads writes its
     * dK_exp, dV_exp once (N d), the group sum reads them all and writes
     * the 2 key/value heads' dK, dV once (flash-attn's mha_bwd). */
    char err[256];
    sh.heads = 4;
    sh.kv_heads = 2;
    assert_int_equal(sim_check(&sh, &run, err, sizeof err), 0);
    assert_int_equal(sim_plan_make(SIM_NAIVE, &sh, &run, 128, 64, SIM_PLAN_USER, &p), 0);
    assert_int_equal(sim_run(SIM_NAIVE, &sh, &p, NULL, NULL, NULL, NULL, &r, NULL, 0), 0);
    assert_int_equal(r.counts.write_elems[SIM_dKexp], 4 * N * d);
    assert_int_equal(r.counts.read_elems[SIM_dKexp], 4 * N * d);
    assert_int_equal(r.counts.write_elems[SIM_dK], 2 * N * d);
    assert_int_equal(r.counts.write_elems[SIM_dVexp], 4 * N * d);
    assert_int_equal(r.counts.write_elems[SIM_dV], 2 * N * d);
    assert_int_equal(r.counts.read_elems[SIM_dK] + r.counts.read_elems[SIM_dV], 0);
    sim_result_free(&r);
}

/* A window of N_k keys or more is causal attention: the same counts. */
static void test_full_window_is_causal(void **state)
{
    (void)state;
    uint64_t rng = 31;
    for (int k = 0; k < 200; k++) {
        sim_shape c = { .N = tu_rand_range(&rng, 1, 500), .d = 16, .M = 1u << 26,
                        .dtype = SIM_FP16, .causal = 1 };
        c.Nk = c.N + tu_rand_range(&rng, 0, 100);
        sim_shape w = c;
        w.window = c.Nk + tu_rand_range(&rng, 0, 3);
        const sim_algo a = (sim_algo)(k % sim_algo_count());
        sim_plan pc, pw;
        int64_t Br = tu_rand_range(&rng, 1, c.N), Bc = tu_rand_range(&rng, 1, c.Nk);
        assert_int_equal(sim_plan_make(a, &c, NULL, Br, Bc, SIM_PLAN_USER, &pc), 0);
        assert_int_equal(sim_plan_make(a, &w, NULL, Br, Bc, SIM_PLAN_USER, &pw), 0);
        sim_counts cc, cw;
        assert_int_equal(sim_theory_counts(&pc, &c, &cc), 0);
        assert_int_equal(sim_theory_counts(&pw, &w, &cw), 0);
        assert_true(sim_counts_equal(&cc, &cw));
    }
}

/* The loop orders' signatures, with the numbers written out by hand:
 * FA2 reads Q once and writes O once; FA1 reads Q and reads and writes O, l,
 * m T_c times (plus line 2's initial write); naive writes S and P once each. */
static void test_loop_order_signatures(void **state)
{
    (void)state;
    sim_shape sh = { .N = 1000, .d = 64, .M = 1u << 30, .dtype = SIM_FP16, .causal = 0 };
    const uint64_t N = 1000, d = 64;
    sim_plan p;
    sim_result r;
    char err[256];

    assert_int_equal(sim_plan_make(SIM_FA2, &sh, NULL, 128, 64, SIM_PLAN_USER, &p), 0);
    assert_int_equal(sim_run(SIM_FA2, &sh, &p, NULL, NULL, NULL, NULL, &r, err, sizeof err), 0);
    assert_int_equal(r.counts.read_elems[SIM_Q], N * d);
    assert_int_equal(r.counts.write_elems[SIM_O], N * d);
    assert_int_equal(r.counts.read_elems[SIM_O], 0);
    assert_int_equal(r.counts.read_elems[SIM_K], 8 * N * d);     /* T_r = ceil(1000/128) = 8 */
    assert_int_equal(r.counts.write_elems[SIM_L], N);
    assert_int_equal(r.counts.write_elems[SIM_m] + r.counts.write_elems[SIM_l], 0);
    sim_result_free(&r);

    assert_int_equal(sim_plan_make(SIM_FA1, &sh, NULL, 128, 64, SIM_PLAN_USER, &p), 0);
    assert_int_equal(sim_run(SIM_FA1, &sh, &p, NULL, NULL, NULL, NULL, &r, err, sizeof err), 0);
    const uint64_t Tc = 16;                                      /* ceil(1000/64) */
    assert_int_equal(r.counts.read_elems[SIM_K], N * d);
    assert_int_equal(r.counts.read_elems[SIM_V], N * d);
    assert_int_equal(r.counts.read_elems[SIM_Q], Tc * N * d);
    /* The running O in fp32 O_acc: line 2's zeros and T_c - 1 steps; O, in
     * the dtype, at the last key block. */
    assert_int_equal(r.counts.read_elems[SIM_Oacc], Tc * N * d);
    assert_int_equal(r.counts.write_elems[SIM_Oacc], Tc * N * d);
    assert_int_equal(r.counts.read_elems[SIM_O], 0);
    assert_int_equal(r.counts.write_elems[SIM_O], N * d);
    assert_int_equal(r.counts.read_elems[SIM_l], Tc * N);
    assert_int_equal(r.counts.write_elems[SIM_l], (Tc + 1) * N);
    assert_int_equal(r.counts.read_elems[SIM_m], Tc * N);
    assert_int_equal(r.counts.write_elems[SIM_m], (Tc + 1) * N);
    /* Bytes: Q T_c times, K, V and O once in the dtype; O_acc read and
     * written T_c times at 4 bytes; l, m as before. */
    assert_int_equal(sim_counts_read_bytes(&r.counts, SIM_FP16) +
                     sim_counts_write_bytes(&r.counts, SIM_FP16),
                     2 * (Tc * N * d + 2 * N * d + N * d) + 4 * (2 * Tc * N * d) +
                     4 * (4 * Tc + 2) * N);
    sim_result_free(&r);
    /* The paper's intermediates: O itself, in the dtype, at every step. */
    const sim_run_opts paper = { .intermediates = SIM_INTER_PAPER };
    assert_int_equal(sim_plan_make(SIM_FA1, &sh, &paper, 128, 64, SIM_PLAN_USER, &p), 0);
    assert_int_equal(sim_run(SIM_FA1, &sh, &p, NULL, NULL, NULL, NULL, &r, err, sizeof err), 0);
    assert_int_equal(r.counts.read_elems[SIM_O], Tc * N * d);
    assert_int_equal(r.counts.write_elems[SIM_O], (Tc + 1) * N * d);
    assert_int_equal(r.counts.read_elems[SIM_Oacc] + r.counts.write_elems[SIM_Oacc], 0);
    sim_result_free(&r);

    assert_int_equal(sim_plan_make(SIM_NAIVE, &sh, NULL, 128, 64, SIM_PLAN_USER, &p), 0);
    assert_int_equal(p.softmax_passes, 1);
    assert_int_equal(sim_run(SIM_NAIVE, &sh, &p, NULL, NULL, NULL, NULL, &r, err, sizeof err), 0);
    assert_int_equal(r.counts.write_elems[SIM_S], N * N);
    assert_int_equal(r.counts.read_elems[SIM_S], N * N);
    assert_int_equal(r.counts.write_elems[SIM_P], N * N);
    assert_int_equal(r.counts.read_elems[SIM_P], N * N);
    sim_result_free(&r);
}

/* Compute mode counts the same as count-only: one execution, two modes. */
static void test_compute_counts_equal_count_only(void **state)
{
    (void)state;
    uint64_t rng = 5;
    for (int k = 0; k < 30; k++) {
        sim_shape sh = { 0 };
        sh.N = tu_rand_range(&rng, 1, 150);
        sh.d = tu_rand_range(&rng, 1, 32);
        sh.dtype = (sim_dtype)tu_rand_range(&rng, 0, 2);
        sh.causal = (int)tu_rand_range(&rng, 0, 1);
        sh.M = 1u << 22;
        float *Q = malloc(sizeof(float) * (size_t)(sh.N * sh.d));
        float *K = malloc(sizeof(float) * (size_t)(sh.N * sh.d));
        float *V = malloc(sizeof(float) * (size_t)(sh.N * sh.d));
        sim_random_inputs((uint64_t)k, sh.N, sh.d, sh.dtype, Q, K, V);
        for (int a = 0; a < sim_algo_count(); a++) {
            sim_plan p;
            assert_int_equal(sim_plan_make((sim_algo)a, &sh, NULL, tu_rand_range(&rng, 1, sh.N),
                                           tu_rand_range(&rng, 1, sh.N), SIM_PLAN_USER, &p), 0);
            sim_result rc, rn;
            assert_int_equal(sim_run((sim_algo)a, &sh, &p, Q, K, V, NULL, &rc, NULL, 0), 0);
            assert_int_equal(sim_run((sim_algo)a, &sh, &p, NULL, NULL, NULL, NULL, &rn, NULL, 0), 0);
            assert_true(rc.computed);
            assert_false(rn.computed);
            assert_true(sim_counts_equal(&rc.counts, &rn.counts));
            assert_int_equal(rc.steps, rn.steps);
            sim_result_free(&rc);
            sim_result_free(&rn);
        }
        free(Q);
        free(K);
        free(V);
    }
}

/* Counts that would not fit in 64 bits are refused, not wrapped. */
static void test_overflow_detected(void **state)
{
    (void)state;
    sim_shape sh = { .N = INT64_C(1) << 32, .d = 64, .M = 96 * 1024, .dtype = SIM_FP16 };
    sim_plan p;
    sim_counts c;
    assert_int_equal(sim_plan_make(SIM_NAIVE, &sh, NULL, 64, 64, SIM_PLAN_USER, &p), 0);
    assert_int_equal(sim_theory_counts(&p, &sh, &c), -1);     /* N^2 = 2^64 */
    sh.N = INT64_C(1) << 31;                                   /* N^2 = 2^62 elements: x4 B overflows */
    assert_int_equal(sim_plan_make(SIM_NAIVE, &sh, NULL, 64, 64, SIM_PLAN_USER, &p), 0);
    assert_int_equal(sim_theory_counts(&p, &sh, &c), -1);
    sh.N = INT64_C(1) << 24;                                   /* fine */
    assert_int_equal(sim_plan_make(SIM_FA2, &sh, NULL, 64, 64, SIM_PLAN_USER, &p), 0);
    assert_int_equal(sim_theory_counts(&p, &sh, &c), 0);
    assert_int_equal(c.read_elems[SIM_K], (uint64_t)(sh.N / 64) * (uint64_t)sh.N * 64u);
}

/* Bounds: the expressions of Theorem 2 and Proposition 3 with M in elements. */
static void test_bounds(void **state)
{
    (void)state;
    sim_shape sh = { .N = 1024, .d = 64, .M = 96 * 1024, .dtype = SIM_FP16 };
    sim_bounds b = sim_theory_bounds(&sh);
    assert_true(b.M_elems == 49152.0);
    assert_true(b.theta_standard == 1024.0 * 64 + 1024.0 * 1024);
    assert_true(fabs(b.theta_flash - 1024.0 * 1024 * 64 * 64 / 49152.0) < 1e-6);
    assert_true(b.io_floor == 4.0 * 1024 * 64);
    /* The backward reads Q, K, V, O, dO and writes dQ, dK, dV: eight N x d. */
    assert_true(b.io_floor_bwd == 8.0 * 1024 * 64);
    assert_true(b.in_regime);
    sim_shape dec = { .N = 1, .Nk = 256, .d = 64, .M = 96 * 1024, .dtype = SIM_FP16 };
    sim_bounds bd = sim_theory_bounds(&dec);
    assert_true(bd.io_floor == 2.0 * (1 + 256) * 64);      /* q, o; k, v */
    assert_true(bd.io_floor_bwd == 4.0 * (1 + 256) * 64);  /* q, o, do, dq; k, v, dk, dv */
    sh.M = 1u << 30;                                           /* M > N d: outside */
    assert_false(sim_theory_bounds(&sh).in_regime);
    sh.dtype = SIM_FP32;
    sh.M = 128;                                                /* 32 elements < d */
    assert_false(sim_theory_bounds(&sh).in_regime);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_random_block_sizes),
        cmocka_unit_test(test_random_auto_plans),
        cmocka_unit_test(test_random_softmax_forms),
        cmocka_unit_test(test_softmax_forms_leave_fa),
        cmocka_unit_test(test_visited_blocks),
        cmocka_unit_test(test_random_masks),
        cmocka_unit_test(test_full_window_is_causal),
        cmocka_unit_test(test_random_heads),
        cmocka_unit_test(test_mqa_grouped_reads_kv_once),
        cmocka_unit_test(test_random_backward),
        cmocka_unit_test(test_random_splits),
        cmocka_unit_test(test_splits_need_key_blocks),
        cmocka_unit_test(test_random_unfused),
        cmocka_unit_test(test_random_paged),
        cmocka_unit_test(test_paged_boundaries),
        cmocka_unit_test(test_backward_signatures),
        cmocka_unit_test(test_loop_order_signatures),
        cmocka_unit_test(test_compute_counts_equal_count_only),
        cmocka_unit_test(test_overflow_detected),
        cmocka_unit_test(test_bounds),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
