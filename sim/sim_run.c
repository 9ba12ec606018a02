/*
 * sim_run.c — one run: place the inputs in HBM, let a loop order drive the
 * hierarchy, hand back the counts (and in compute mode the output).
 */
#define _POSIX_C_SOURCE 200809L     /* sysconf */
#define _DEFAULT_SOURCE             /* madvise, MADV_HUGEPAGE */
#include "ref_rng.h"
#include "sim_hier.h"
#include "sim_limits.h"

#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

void sim_round_to_dtype(float *x, int64_t n, sim_dtype dt)
{
    if (dt == SIM_FP32 || sim_dtype_is_fp8(dt))
        return;
    for (int64_t k = 0; k < n; k++)
        x[k] = dt == SIM_FP16 ? ref_round_fp16(x[k]) : ref_round_bf16(x[k]);
}

/* Q (Nq, d), K and V (Nk, d) drawn from one stream r in that order, each
 * value by draw, then rounded to dt. */
static void draw_qkv(ref_rng r, float (*draw)(ref_rng *), int64_t Nq, int64_t Nk, int64_t d,
                     sim_dtype dt, float *Q, float *K, float *V)
{
    float *t[3] = { Q, K, V };
    for (int k = 0; k < 3; k++) {
        const int64_t n = (k == 0 ? Nq : Nk) * d;
        for (int64_t x = 0; x < n; x++)
            t[k][x] = draw(&r);
        sim_round_to_dtype(t[k], n, dt);
    }
}

void sim_random_qkv(uint64_t seed, int64_t Nq, int64_t Nk, int64_t d, sim_dtype dt,
                    float *Q, float *K, float *V)
{
    draw_qkv(ref_rng_seed(seed), ref_rng_normalish, Nq, Nk, d, dt, Q, K, V);
}

void sim_outlier_qkv(uint64_t seed, int64_t Nq, int64_t Nk, int64_t d, sim_dtype dt,
                     float *Q, float *K, float *V)
{
    /* A stream apart from sim_random_qkv's (another seed word), so that the
     * two input kinds of one seed are unrelated. */
    draw_qkv(ref_rng_seed(seed ^ UINT64_C(0x0f8f8f8f8f8f8f8f)), ref_rng_outlier, Nq, Nk, d, dt,
             Q, K, V);
}

void sim_random_grad(uint64_t seed, int64_t n, sim_dtype dt, float *dO)
{
    /* A stream of its own, so that the forward inputs of a seed stay those
     * of sim_random_qkv whether or not a backward pass runs. */
    ref_rng r = ref_rng_seed(seed ^ UINT64_C(0xd0d0d0d0d0d0d0d0));
    for (int64_t x = 0; x < n; x++)
        dO[x] = ref_rng_normalish(&r);
    sim_round_to_dtype(dO, n, dt);
}

void sim_random_inputs(uint64_t seed, int64_t N, int64_t d, sim_dtype dt,
                       float *Q, float *K, float *V)
{
    sim_random_qkv(seed, N, N, d, dt, Q, K, V);
}

/* Heads of a tensor in HBM: the key/value side has B G, the query side B H. */
static int kv_side(sim_tensor t)
{
    return sim_tensor_about(t)->kv;
}

static int64_t tensor_heads(const sim_shape *sh, sim_tensor t)
{
    return sim_shape_B(sh) * (kv_side(t) ? sim_shape_G(sh) : sim_shape_H(sh));
}

/* Rows and columns of one head of tensor t. */
static void tensor_shape(const sim_shape *sh, const sim_run_opts *run, sim_tensor t,
                         int64_t dims[2])
{
    const sim_tensor_info *ti = sim_tensor_about(t);
    dims[0] = sim_dim_of(ti->rows, sh, run);
    dims[1] = sim_dim_of(ti->cols, sh, run);
}

/* The tensors a run holds in HBM: its loop order's (the forward's, and for
 * the backward also dO, the gradients, and its own intermediates), less an
 * fp32 accumulator the run's intermediates do not use; and a backward with
 * G < H its query heads' dK_exp, dV_exp (sim_gqa_grad). */
static int needs(const sim_loop *l, const sim_shape *sh, const sim_run_opts *run,
                 sim_tensor t)
{
    if (t == SIM_dKexp || t == SIM_dVexp)
        return run->pass == SIM_BWD && sim_gqa_grad(sh, SIM_dK) == SIM_dKexp;
    return ((l->hbm >> t) & 1u) && sim_inter_holds(run, t);
}

/* The loop order of run options, or for options none serves (a split
 * naive run, say) the unsplit one of their pass, for the memory estimate. */
static const sim_loop *loop_or_plain(sim_algo algo, const sim_run_opts *run)
{
    const sim_loop *l = sim_loop_find(algo, run);
    return l ? l : sim_loop_of(algo, run->pass);
}

uint64_t sim_compute_memory(sim_algo algo, const sim_shape *sh, const sim_run_opts *run)
{
    double bytes = 0.0;                    /* every tensor the run holds, as floats */
    const sim_loop *l = loop_or_plain(algo, run);
    for (int t = 0; t < SIM_TENSOR_COUNT; t++) {
        if (!l || !needs(l, sh, run, (sim_tensor)t))
            continue;
        int64_t dims[2];
        tensor_shape(sh, run, (sim_tensor)t, dims);
        if (run->page > 0 && (t == SIM_K || t == SIM_V))       /* the pool: whole pages */
            dims[0] = sim_run_pages(sh, run) * run->page;
        bytes += 4.0 * (double)tensor_heads(sh, (sim_tensor)t) * (double)dims[0] *
                 (double)dims[1];
    }
    if (run->page > 0)                                         /* the page table */
        bytes += 8.0 * (double)sim_shape_B(sh) * (double)sim_shape_G(sh) *
                 (double)sim_run_pages(sh, run);
    return bytes >= 1.8e19 ? UINT64_MAX : (uint64_t)bytes;
}

double sim_compute_flops(sim_algo algo, const sim_shape *sh, const sim_run_opts *run)
{
    /* All three do Q K^T and P V: 2 N N_k d multiply-adds per head. The
     * backward recomputes the forward (compute mode runs it first) and does
     * five N N_k d products (S again, dV, dP, dQ, dK): 2 + 10 more. */
    (void)algo;
    double N = (double)sh->N, N_k = (double)sim_shape_Nk(sh), d = (double)sh->d;
    double per = run->pass == SIM_BWD ? 14.0 : 4.0;
    return per * N * N_k * d * (double)sim_shape_B(sh) * (double)sim_shape_H(sh);
}

double sim_compute_seconds(sim_algo algo, const sim_shape *sh, const sim_run_opts *run)
{
    const double rate = run->pass == SIM_BWD ? SIM_COMPUTE_BWD_FLOPS_PER_S
                                             : SIM_COMPUTE_FWD_FLOPS_PER_S;
    return sim_compute_flops(algo, sh, run) / rate;
}

/* Every tensor's base row at query head `head` (of B H) and key/value
 * head kv_head (of B G). */
static void set_bases(sim_hier *h, const sim_plan *p, int64_t head, int64_t kv_head)
{
    for (int t = 0; t < SIM_TENSOR_COUNT; t++) {
        int64_t dims[2];
        tensor_shape(&h->sh, &p->run, (sim_tensor)t, dims);
        h->base[t] = (kv_side((sim_tensor)t) ? kv_head : head) * dims[0];
    }
}

/* GQA's backward, after the loop nest of key/value head kv_head's group:
 * dK = the sum of the group's H/G dK_exp, dV of its dV_exp (sim_gqa_grad),
 * as at::sum_out does it after flash-attn's kernel: key block by key
 * block (B_c rows), each query head's tile read once, the sum kept in
 * fp32 and written once, rounded to the dtype. Its own pass, not a tile
 * step of the loop nest. Returns 0, or -1 out of memory. */
static int group_sum(sim_hier *h, const sim_plan *p, int64_t head0, int64_t kv_head)
{
    const sim_shape *sh = &h->sh;
    const int64_t N_k = sim_shape_Nk(sh), d = sh->d, B_c = p->Bc;
    const int64_t per_g = sim_shape_H(sh) / sim_shape_G(sh);
    const sim_tensor from[2] = { SIM_dKexp, SIM_dVexp }, to[2] = { SIM_dK, SIM_dV };
    const sim_buf_id buf[2] = { SIM_BUF_dK_j, SIM_BUF_dV_j };
    float *tile = NULL, *sum = NULL;                   /* (B_c, d) each, compute mode */
    if (h->compute) {
        tile = malloc((size_t)(B_c * d) * sizeof *tile);
        sum = malloc((size_t)(B_c * d) * sizeof *sum);
        if (!tile || !sum) {
            free(tile);
            free(sum);
            snprintf(h->err, h->errlen, "out of memory for the group sum of dK, dV");
            return -1;
        }
    }
    for (int x = 0; x < 2; x++)
        for (int64_t c0 = 0; c0 < N_k; c0 += B_c) {
            const int64_t bc = sim_min64(B_c, N_k - c0);
            if (sum)
                memset(sum, 0, (size_t)(bc * d) * sizeof *sum);
            for (int64_t q = 0; q < per_g; q++) {
                set_bases(h, p, head0 + q, kv_head);
                sim_load(h, from[x], buf[x], tile, c0, 0, bc, d);
                if (sum)
                    for (int64_t e = 0; e < bc * d; e++)
                        sum[e] += tile[e];
            }
            sim_store(h, to[x], buf[x], sum, c0, 0, bc, d);
        }
    free(tile);
    free(sum);
    return 0;
}

/* The loop order once per block of heads: for each sequence b and each
 * key/value head g, the H/G query heads that read g, one at a time or (a
 * grouped plan) all in one block. Every tensor's base row moves to the
 * head(s) in hand. A backward with G < H then sums g's gradients. */
static int run_heads(const sim_loop *l, sim_hier *h, const sim_plan *p)
{
    const sim_shape *sh = &h->sh;
    const int64_t B = sim_shape_B(sh), H = sim_shape_H(sh), G = sim_shape_G(sh);
    const int64_t per_g = H / G, hq = sim_run_hq(sh, &p->run);
    const int sum = p->run.pass == SIM_BWD && G < H;
    h->hq = hq;
    for (int64_t b = 0; b < B; b++)
        for (int64_t g = 0; g < G; g++) {
            if (h->head_parts > 1 && (b * G + g) % h->head_parts != h->head_part)
                continue;                        /* another thread's group */
            for (int64_t h0 = g * per_g; h0 < (g + 1) * per_g; h0 += hq) {
                h->head = b * H + h0;
                h->kv_head = b * G + g;
                h->block = h->head / hq;         /* one thread block per block of heads */
                set_bases(h, p, h->head, h->kv_head);
                if (l->run(h, p) != 0 || h->failed)
                    return -1;
            }
            if (sum && group_sum(h, p, b * H + g * per_g, b * G + g) != 0)
                return -1;
        }
    return 0;
}

/* ---- threads ------------------------------------------------------------ */

static int threads_asked;           /* sim_set_threads; 0: the default */

void sim_set_threads(int n)
{
    threads_asked = n < 0 ? 0 : n > SIM_MAX_THREADS ? SIM_MAX_THREADS : n;
}

int sim_threads(void)
{
    if (threads_asked > 0)
        return threads_asked;
    const long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n < 1 ? 1 : n > SIM_DEFAULT_THREADS ? SIM_DEFAULT_THREADS : (int)n;
}

/* One thread's share of a run: its own hierarchy (SRAM buffers, counters,
 * message), the same tensors in HBM. */
typedef struct {
    const sim_loop *l;
    const sim_plan *p;
    sim_hier h;
    char err[256];
    int rc;
} run_part;

static void *run_part_main(void *arg)
{
    run_part *w = arg;
    w->rc = run_heads(w->l, &w->h, w->p);
    sim_sram_release_all(&w->h);
    return NULL;
}

/* Every block of heads, as run_heads; in compute mode, unobserved, shared
 * among threads. Groups of heads (a key/value head and its query heads;
 * each group's tensors' rows are its own, K and V only read across the
 * group) are independent in every loop order and pass: with at least as
 * many groups as threads, part k takes groups q = k, k + n, ... Otherwise a
 * loop order whose query blocks are independent has them shared: part k
 * takes i = k, k + n, ... of every head (interleaved, so that a causal
 * mask's longer rows below share out too). Each part writes its own rows;
 * the counts and tile steps are summed, the SRAM peaks (those of every
 * part, the same buffers) kept. Where a thread cannot start, its part runs
 * on this one: the result does not depend on how many ran. */
static int run_all(const sim_loop *l, sim_hier *h, const sim_plan *p)
{
    const int64_t threads = sim_threads();
    const int64_t groups = sim_shape_B(&h->sh) * sim_shape_G(&h->sh);
    const int by_heads = groups >= threads || (!l->rows_parallel && groups >= 2);
    const int64_t n = sim_min64(threads, by_heads ? groups : p->Tr);
    if (!h->compute || h->obs || (!by_heads && !l->rows_parallel) || n < 2 || h->nbufs != 0)
        return run_heads(l, h, p);
    run_part *w = calloc((size_t)n, sizeof *w);
    pthread_t *tid = calloc((size_t)n, sizeof *tid);
    int *started = calloc((size_t)n, sizeof *started);
    if (!w || !tid || !started) {
        free(w);
        free(tid);
        free(started);
        return run_heads(l, h, p);
    }
    for (int64_t k = 0; k < n; k++) {
        w[k].l = l;
        w[k].p = p;
        w[k].h = *h;
        sim_hier *c = &w[k].h;
        memset(&c->c, 0, sizeof c->c);
        c->steps = 0;
        for (int v = 0; v < SIM_LEVEL_COUNT; v++)
            c->lv[v].used = c->lv[v].peak = 0;
        c->err = w[k].err;
        c->errlen = sizeof w[k].err;
        if (by_heads) {
            c->head_part = k;
            c->head_parts = n;
        } else {
            c->part = k;
            c->parts = n;
        }
    }
    for (int64_t k = 1; k < n; k++)
        started[k] = pthread_create(&tid[k], NULL, run_part_main, &w[k]) == 0;
    for (int64_t k = 0; k < n; k++)
        if (!started[k])
            run_part_main(&w[k]);
    int rc = 0;
    for (int64_t k = 0; k < n; k++) {
        if (started[k])
            pthread_join(tid[k], NULL);
        const sim_hier *c = &w[k].h;
        for (int t = 0; t < SIM_TENSOR_COUNT; t++) {
            h->c.read_elems[t] += c->c.read_elems[t];
            h->c.write_elems[t] += c->c.write_elems[t];
            h->c.read_ops[t] += c->c.read_ops[t];
            h->c.write_ops[t] += c->c.write_ops[t];
        }
        h->steps += c->steps;
        for (int v = 0; v < SIM_LEVEL_COUNT; v++)
            if (c->lv[v].peak > h->lv[v].peak)
                h->lv[v].peak = c->lv[v].peak;
        if ((w[k].rc != 0 || c->failed) && rc == 0) {
            rc = -1;
            h->failed = 1;
            snprintf(h->err, h->errlen, "%s", w[k].err);
        }
    }
    free(w);
    free(tid);
    free(started);
    return rc;
}

int sim_page_table(const sim_shape *sh, const sim_run_opts *run, int64_t *pt, int64_t n)
{
    const int64_t pool = sim_shape_B(sh) * sim_shape_G(sh) * sim_run_pages(sh, run);
    if (run->page < 1 || n != pool)
        return -1;
    for (int64_t x = 0; x < pool; x++)
        pt[x] = x;
    ref_rng r = ref_rng_seed(run->page_seed ^ UINT64_C(0x9a6e9a6e9a6e9a6e));
    for (int64_t x = pool - 1; x > 0; x--) {          /* Fisher-Yates */
        const int64_t y = (int64_t)(ref_rng_next(&r) % (uint64_t)(x + 1));
        const int64_t t = pt[x];
        pt[x] = pt[y];
        pt[y] = t;
    }
    return 0;
}

/* Paged KV in compute mode: the page table of the run's seed, and K, V
 * copied into the pool through it. Returns 0, or -1 out of memory. */
static int place_pages(sim_hier *h, const float *K, const float *V)
{
    const sim_shape *sh = &h->sh;
    const sim_run_opts *run = &h->run;
    const int64_t P = run->page, np = sim_run_pages(sh, run), N_k = sim_shape_Nk(sh), d = sh->d;
    const int64_t heads = sim_shape_B(sh) * sim_shape_G(sh), pool = heads * np;
    h->pt = malloc((size_t)pool * sizeof *h->pt);
    if (!h->pt)
        return -1;
    (void)sim_page_table(sh, run, h->pt, pool);
    const float *src[2] = { K, V };
    float *dst[2] = { h->hbm[SIM_K], h->hbm[SIM_V] };
    for (int k = 0; k < 2; k++)
        for (int64_t hh = 0; hh < heads; hh++)
            for (int64_t row = 0; row < N_k; row++) {
                const int64_t phys = h->pt[hh * np + row / P] * P + row % P;
                memcpy(dst[k] + phys * d, src[k] + (hh * N_k + row) * d,
                       (size_t)d * sizeof(float));
            }
    return 0;
}

/* Compute mode of a backward run: the same loop order's forward pass first,
 * with the same block sizes, unobserved and uncounted, so that what the
 * backward reads (P; O, l, m; O, L) is in HBM as the forward left it. */
static int forward_first(sim_algo algo, sim_hier *h, const sim_plan *p)
{
    sim_run_opts fwd = p->run;
    fwd.pass = SIM_FWD;
    sim_plan fp;
    const sim_loop *l = sim_loop_find(algo, &fwd);
    if (!l || sim_plan_make(algo, &h->sh, &fwd, p->Br, p->Bc, SIM_PLAN_AUTO, &fp) != 0) {
        snprintf(h->err, h->errlen, "internal: no forward plan for the backward's blocks");
        return -1;
    }
    const sim_observer *obs = h->obs;
    const uint64_t limit = h->lv[SIM_LEVEL_SRAM].limit;
    h->obs = NULL;
    if (fp.sram_peak > h->lv[SIM_LEVEL_SRAM].limit)
        h->lv[SIM_LEVEL_SRAM].limit = fp.sram_peak;
    int rc = run_all(l, h, &fp);
    h->obs = obs;
    h->lv[SIM_LEVEL_SRAM].limit = limit;
    memset(&h->c, 0, sizeof h->c);
    h->steps = 0;
    h->lv[SIM_LEVEL_SRAM].peak = 0;
    h->lv[SIM_LEVEL_REG].peak = 0;
    h->line = 0;
    h->i = h->j = -1;
    return rc;
}

int sim_run(sim_algo algo, const sim_shape *sh, const sim_plan *p,
            const float *Q, const float *K, const float *V,
            const sim_observer *obs, sim_result *res, char *err, size_t errlen)
{
    const sim_inputs in = { Q, K, V, NULL };
    return sim_run_inputs(algo, sh, p, Q && K && V ? &in : NULL, obs, res, err, errlen);
}

/* The checks of a run before anything is allocated. Returns its loop
 * order, or NULL with err set. */
static const sim_loop *run_check(sim_algo algo, const sim_shape *sh, const sim_plan *p,
                                 int compute, const sim_inputs *in, char *err, size_t errlen)
{
    const sim_run_opts *run = &p->run;
    if (sim_check(sh, run, err, errlen) != 0)
        return NULL;
    if (sim_run_opts_check(algo, run, err, errlen) != 0 ||
        sim_loop_dtype_check(algo, sh->dtype, err, errlen) != 0)
        return NULL;
    const sim_loop *l = sim_loop_find(algo, run);
    if (p->Tc < sim_run_S(run)) {
        snprintf(err, errlen, "--splits %lld: more splits than the plan's T_c = %lld key blocks",
                 (long long)run->splits, (long long)p->Tc);
        return NULL;
    }
    if (compute && run->dropout > 0.0) {
        snprintf(err, errlen, "dropout is counted, not computed: fasim's numerics are "
                 "attention without dropout; use --count-only with --dropout");
        return NULL;
    }
    if (compute && run->pass == SIM_BWD && !in->dO) {
        snprintf(err, errlen, "the backward pass computes from dO: give it with Q, K, V");
        return NULL;
    }
    if (!p->fits && p->kind != SIM_PLAN_PAPER) {
        sim_plan_explain_misfit(p, sh, err, errlen);
        return NULL;
    }
    return l;
}

/* n zeroed floats, freed by free(). A tensor of 4 MiB or more is aligned to
 * 2 MiB and asks the kernel for huge pages where it gives them on request
 * (Linux's transparent huge pages in "madvise" mode): standard attention
 * writes S and P (N N_k floats each) tile by tile, a row of a tile per 4 KiB
 * page, and with small pages its first touches and TLB misses cost more than
 * its arithmetic (at N = 4096, d = 64 in fp32, a third of the run). */
static float *tensor_calloc(int64_t n)
{
    const size_t bytes = (size_t)n * sizeof(float), huge = (size_t)2 << 20;
#if defined(MADV_HUGEPAGE)
    if (bytes >= 2 * huge) {
        void *p = NULL;
        if (posix_memalign(&p, huge, bytes) != 0)
            return NULL;
        (void)madvise(p, bytes, MADV_HUGEPAGE);   /* advice: refused, small pages */
        memset(p, 0, bytes);
        return p;
    }
#endif
    return calloc((size_t)n, sizeof(float));
}

/* Row lengths of every tensor, and in compute mode storage for those the
 * loop order holds: n_el[t] floats each (K, V: the pool of whole pages when
 * paged). Returns 0, or -1 with err set (out of memory). */
static int place_tensors(sim_hier *h, const sim_loop *l, int64_t n_el[SIM_TENSOR_COUNT])
{
    const sim_shape *sh = &h->sh;
    const sim_run_opts *run = &h->run;
    for (int t = 0; t < SIM_TENSOR_COUNT; t++) {
        int64_t dims[2];
        tensor_shape(sh, run, (sim_tensor)t, dims);
        h->hbm_ld[t] = dims[1];
        /* Sizes only where data is held: count-only shapes may be far too
         * large for a product of them (the counts are checked, not these). */
        if (!h->compute || !needs(l, sh, run, (sim_tensor)t))
            continue;
        n_el[t] = tensor_heads(sh, (sim_tensor)t) * dims[0] * dims[1];
        if (run->page > 0 && (t == SIM_K || t == SIM_V))         /* the pool: whole pages */
            n_el[t] = tensor_heads(sh, (sim_tensor)t) * sim_run_pages(sh, run) * run->page *
                      dims[1];
        h->hbm[t] = tensor_calloc(n_el[t]);
        if (!h->hbm[t]) {
            snprintf(h->err, h->errlen, "out of memory for tensor %s (%lld floats)",
                     sim_tensor_name((sim_tensor)t), (long long)n_el[t]);
            return -1;
        }
    }
    return 0;
}

/* Compute mode: the inputs into HBM, rounded to the dtype (K, V through
 * the page table when paged), and for a backward run the forward first.
 * Returns 0, or -1 with err set. */
static int copy_inputs(sim_hier *h, sim_algo algo, const sim_plan *p, const sim_inputs *in,
                       const int64_t n_el[SIM_TENSOR_COUNT])
{
    const sim_shape *sh = &h->sh;
    const sim_run_opts *run = &h->run;
    const float *src[4] = { in->Q, in->K, in->V, in->dO };
    const sim_tensor dst[4] = { SIM_Q, SIM_K, SIM_V, SIM_dO };
    for (int t = 0; t < (run->pass == SIM_BWD ? 4 : 3); t++) {
        const int paged = run->page > 0 && (dst[t] == SIM_K || dst[t] == SIM_V);
        if (!paged)
            memcpy(h->hbm[dst[t]], src[t], (size_t)n_el[dst[t]] * sizeof(float));
    }
    if (run->page > 0 && place_pages(h, in->K, in->V) != 0) {
        snprintf(h->err, h->errlen, "out of memory for the page table");
        return -1;
    }
    for (int t = 0; t < (run->pass == SIM_BWD ? 4 : 3); t++)
        sim_round_to_dtype(h->hbm[dst[t]], n_el[dst[t]], sh->dtype);
    if (sim_fp8_quantise(sh, run, p->Br, p->Bc, h->hbm[SIM_Q], h->hbm[SIM_K], h->hbm[SIM_V],
                         h->err, h->errlen) != 0)
        return -1;
    return run->pass == SIM_BWD ? forward_first(algo, h, p) : 0;
}

int sim_run_inputs(sim_algo algo, const sim_shape *sh, const sim_plan *p,
                   const sim_inputs *in, const sim_observer *obs, sim_result *res,
                   char *err, size_t errlen)
{
    char dummy[8];
    if (!err || !errlen) {
        err = dummy;
        errlen = sizeof dummy;
    }
    memset(res, 0, sizeof *res);
    const int compute = in && in->Q && in->K && in->V;
    const sim_loop *l = run_check(algo, sh, p, compute, in, err, errlen);
    if (!l)
        return -1;
    /* On the heap, not in this frame: on the stack, the distance between
     * the counters the loop nest stores to and the locals it spills follows
     * every frame between them, and where it came to a multiple of 4 KiB
     * the loads waited on the stores (count-only FA2 13% slower with
     * identical code, bench_sim). */
    sim_hier *h = calloc(1, sizeof *h);
    if (!h) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    h->sh = *sh;
    h->run = p->run;
    h->compute = compute;
    h->scale = 1.0f / sqrtf((float)sh->d);
    h->p_round = sim_inter_p_round(sh, &p->run);
    h->mask = sim_shape_ref_mask(sh);
    h->lv[SIM_LEVEL_SRAM].limit = p->sram_peak > sh->M ? p->sram_peak : sh->M;
    h->lv[SIM_LEVEL_REG].limit = p->reg_limit;
    h->obs = (obs && obs->on_event) ? obs : NULL;
    h->err = err;
    h->errlen = errlen;
    h->i = h->j = -1;
    h->split = -1;

    int rc = -1;
    int64_t n_el[SIM_TENSOR_COUNT] = { 0 };
    if (sim_bmask_visits_make(sh, p->Br, p->Bc, &h->vis, err, errlen) != 0 ||
        place_tensors(h, l, n_el) != 0 ||
        (h->compute && copy_inputs(h, algo, p, in, n_el) != 0) || run_all(l, h, p) != 0)
        goto done;
    if (h->obs) {
        h->line = 0;
        sim_emit(h, SIM_EV_DONE, SIM_TENSOR_COUNT, 0, 0, 0, 0, NULL, 0, NULL);
    }
    res->plan = *p;
    res->counts = h->c;
    res->sram_peak = h->lv[SIM_LEVEL_SRAM].peak;
    res->reg_peak = h->lv[SIM_LEVEL_REG].peak;
    res->steps = h->steps;
    res->computed = h->compute;
    if (h->compute) {
        float **keep[5] = { &res->O, &res->L, &res->dQ, &res->dK, &res->dV };
        const sim_tensor from[5] = { SIM_O, SIM_L, SIM_dQ, SIM_dK, SIM_dV };
        for (int k = 0; k < 5; k++) {
            *keep[k] = h->hbm[from[k]];          /* NULL where the run had none */
            h->hbm[from[k]] = NULL;
        }
    }
    rc = 0;
done:
    free(h->pt);
    sim_bmask_visits_free(&h->vis);
    sim_sram_release_all(h);
    for (int t = 0; t < SIM_TENSOR_COUNT; t++)
        free(h->hbm[t]);
    free(h);
    return rc;
}

void sim_result_free(sim_result *res)
{
    if (!res)
        return;
    free(res->O);
    free(res->L);
    free(res->dQ);
    free(res->dK);
    free(res->dV);
    res->O = res->L = res->dQ = res->dK = res->dV = NULL;
}
