/*
 * sim_ring.c — ring attention and all-gather context parallelism (see
 * sim_ring.h).
 *
 * Sources of the link presets, per direction (a link is used one way by
 * each ring step: device p sends to p + 1 while receiving from p - 1):
 *   [DS-A100]  NVIDIA A100 datasheet: NVLink 600 GB/s per GPU (12 third-
 *              generation links of 50 GB/s, both directions together).
 *   [DS-H100]  NVIDIA H100 datasheet: NVLink 900 GB/s per GPU (18 fourth-
 *              generation links), both directions together. NCCL issue
 *              1264 measures 380 of its 450 GB/s one way on an H100 SXM.
 *   [PCIe]     PCI-SIG: PCIe 4.0 runs 16 GT/s a lane, 5.0 32 GT/s, both
 *              128b/130b encoded: x16 carries 16 x 16 x 128/130 / 8 =
 *              31.5 GB/s (4.0) and 63.0 GB/s (5.0) each way.
 *   [IB]       InfiniBand Trade Association: HDR 200 Gb/s, NDR 400 Gb/s a
 *              port (4x lanes), each way: 25 and 50 GB/s. One port per GPU,
 *              as in DGX A100 and DGX H100 (an HCA per GPU).
 * These are peaks; a ring reaches less (the NCCL figure above: 84%).
 */
#include "sim_ring.h"
#include "sim_gpu_model.h"
#include "ref_tile.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define ERR(...) do { if (err && errlen) snprintf(err, errlen, __VA_ARGS__); } while (0)

static const sim_link LINKS[] = {
    { "nvlink3", "NVLink 3 (A100 SXM), 12 links", 300e9,
      "[DS-A100] 600 GB/s per GPU, both ways" },
    { "nvlink4", "NVLink 4 (H100 SXM), 18 links", 450e9,
      "[DS-H100] 900 GB/s per GPU, both ways" },
    { "pcie4", "PCIe 4.0 x16", 31.5e9, "[PCIe] 16 GT/s x 16 lanes, 128b/130b" },
    { "pcie5", "PCIe 5.0 x16", 63.0e9, "[PCIe] 32 GT/s x 16 lanes, 128b/130b" },
    { "ib-hdr", "InfiniBand HDR, one port", 25e9, "[IB] 200 Gb/s a port" },
    { "ib-ndr", "InfiniBand NDR, one port", 50e9, "[IB] 400 Gb/s a port" },
};
#define NLINKS (int)(sizeof LINKS / sizeof LINKS[0])

const sim_link *sim_links(int *n)
{
    *n = NLINKS;
    return LINKS;
}

const sim_link *sim_link_find(const char *name)
{
    for (int k = 0; k < NLINKS; k++)
        if (!strcasecmp(LINKS[k].name, name))
            return &LINKS[k];
    return NULL;
}

char *sim_link_names(char *buf, size_t len)
{
    size_t at = 0;
    if (len)
        buf[0] = '\0';
    for (int k = 0; k < NLINKS && at < len; k++) {
        int n = snprintf(buf + at, len - at, "%s%s", k ? ", " : "", LINKS[k].name);
        if (n < 0)
            break;
        at += (size_t)n;
    }
    return buf;
}

static const char *const ORDER_NAMES[SIM_RING_ORDER_COUNT] = { "contiguous", "zigzag" };

const char *sim_ring_order_name(sim_ring_order o)
{
    return (unsigned)o < SIM_RING_ORDER_COUNT ? ORDER_NAMES[o] : "?";
}

int sim_ring_order_parse(const char *s, sim_ring_order *out)
{
    for (int k = 0; k < SIM_RING_ORDER_COUNT; k++)
        if (!strcasecmp(s, ORDER_NAMES[k])) {
            *out = (sim_ring_order)k;
            return 0;
        }
    return -1;
}

int sim_ring_check(const sim_shape *sh, const sim_ring_req *rq, char *err, size_t errlen)
{
    const int64_t P = rq->P, N = sh->N;
    if (P < 1 || P > SIM_RING_MAX_P) {
        ERR("--ring %lld: the devices of a ring, 1 .. %d", (long long)P, SIM_RING_MAX_P);
        return -1;
    }
    if (sim_shape_Nk(sh) != N) {
        ERR("--ring splits one sequence of queries, keys and values across devices: N_q = N_k "
            "(drop --Nq/--Nk)");
        return -1;
    }
    if (sh->window > 0) {
        ERR("--ring with --window: a window skips whole blocks of the ring, not modelled; drop "
            "one");
        return -1;
    }
    const int64_t div = rq->order == SIM_RING_ZIGZAG ? 2 * P : P;
    if (N % div != 0) {
        ERR("--ring %lld: N = %lld is not a multiple of %lld (%s): each device holds the same "
            "rows", (long long)P, (long long)N, (long long)div,
            rq->order == SIM_RING_ZIGZAG ? "2P, the zig-zag order's chunks" : "P");
        return -1;
    }
    if (N / P < SIM_RING_MIN_ROWS) {
        ERR("--ring %lld: N / P = %lld rows a device; a device holds at least %d (P <= N / %d "
            "= %lld)", (long long)P, (long long)(N / P), SIM_RING_MIN_ROWS, SIM_RING_MIN_ROWS,
            (long long)(N / SIM_RING_MIN_ROWS));
        return -1;
    }
    if (rq->link && !(rq->link->bytes_per_s > 0)) {
        ERR("--link %s: the preset has no bandwidth", rq->link->name);
        return -1;
    }
    return 0;
}

int sim_ring_source(int P, int p, int r)
{
    return ((p - r) % P + P) % P;
}

sim_ring_kind sim_ring_round_kind(const sim_ring_req *rq, int causal, int p, int r)
{
    if (r == 0)
        return causal ? SIM_RING_DIAG : SIM_RING_FULL;
    if (!causal)
        return SIM_RING_FULL;
    const int q = sim_ring_source(rq->P, p, r);
    if (rq->order == SIM_RING_ZIGZAG)
        return q < p ? SIM_RING_ZZ_LOW : SIM_RING_ZZ_HIGH;
    return q < p ? SIM_RING_FULL : SIM_RING_SKIP;
}

/* The global row of device p's local row i (0 <= i < c). */
static int64_t global_row(const sim_ring *g, int p, int64_t i)
{
    if (g->req.order != SIM_RING_ZIGZAG)
        return p * g->c + i;
    const int64_t h = g->c / 2, P = g->req.P;
    return i < h ? p * h + i : (2 * P - 1 - p) * h + (i - h);
}

/* One count-only FA2 run of sub-shape sub: counts, steps, FLOPs, and the GPU
 * model's time. */
static int run_shape(const sim_shape *sub, const sim_run_opts *run, int64_t Br, int64_t Bc,
                     const sim_gpu *gpu, sim_ring_kind_info *k, char *err, size_t errlen)
{
    k->sh = *sub;
    if (sim_plan_make(SIM_FA2, sub, run, Br, Bc, SIM_PLAN_USER, &k->plan) != 0) {
        ERR("ring: no FA2 plan for a %lld x %lld round", (long long)sub->N,
            (long long)sim_shape_Nk(sub));
        return -1;
    }
    sim_result res;
    if (sim_run(SIM_FA2, sub, &k->plan, NULL, NULL, NULL, NULL, &res, err, errlen) != 0)
        return -1;
    k->counts = res.counts;
    k->steps = res.steps;
    k->hbm_bytes = sim_counts_read_bytes(&res.counts, sub->dtype) +
                   sim_counts_write_bytes(&res.counts, sub->dtype);
    sim_result_free(&res);
    k->flops = sim_run_flops(&k->plan, sub);
    k->compute_s = 0.0;
    if (gpu) {
        sim_gm_opts o;
        memset(&o, 0, sizeof o);
        sim_gm_result m;
        if (sim_gpu_model_run(gpu, &k->plan, sub, &o, &m, err, errlen) != 0)
            return -1;
        k->compute_s = m.time_s;
    }
    k->used = 1;
    return 0;
}

/* The sub-shape of a kind: N_q x N_k rows of the device's Q and of the
 * block, from q0 and k0. */
static sim_shape kind_shape(const sim_ring *g, sim_ring_kind kd, int64_t *q0, int64_t *k0)
{
    sim_shape s = g->sh;
    const int64_t c = g->c, h = c / 2;
    s.Nk = 0;
    s.causal = kd == SIM_RING_DIAG;
    s.N = c;
    *q0 = *k0 = 0;
    if (kd == SIM_RING_ZZ_LOW) {          /* all local rows, the first K chunk */
        s.Nk = h;
    } else if (kd == SIM_RING_ZZ_HIGH) {  /* the second local chunk, both K chunks */
        s.N = h;
        s.Nk = c;
        *q0 = h;
    }
    return s;
}

/* ---- compute mode ---- */

/* Rows of device p (c of them) from X (B, heads, N, d) into out (B, heads, c, d). */
static void gather(const sim_ring *g, int p, const float *X, int64_t heads, float *out)
{
    const int64_t N = g->sh.N, d = g->sh.d, c = g->c;
    for (int64_t bh = 0; bh < sim_shape_B(&g->sh) * heads; bh++)
        for (int64_t i = 0; i < c; i++)
            memcpy(out + (bh * c + i) * d, X + (bh * N + global_row(g, p, i)) * d,
                   (size_t)d * sizeof *out);
}

/* Rows r0 .. r0 + n - 1 of each head of X (bh heads of c rows) into out. */
static void slice(const float *X, int64_t bh, int64_t c, int64_t d, int64_t r0, int64_t n,
                  float *out)
{
    for (int64_t k = 0; k < bh; k++)
        memcpy(out + k * n * d, X + (k * c + r0) * d, (size_t)(n * d) * sizeof *out);
}

static int compute(sim_ring *g, const float *Q, const float *K, const float *V, char *err,
                   size_t errlen)
{
    const sim_shape *sh = &g->sh;
    const int P = g->req.P;
    const int64_t B = sim_shape_B(sh), H = sim_shape_H(sh), G = sim_shape_G(sh);
    const int64_t d = sh->d, c = g->c, N = sh->N;
    const size_t nq = (size_t)(B * H * c * d), nk = (size_t)(B * G * c * d);
    float *Qp = malloc(nq * sizeof *Qp), *Kq = malloc(nk * sizeof *Kq);
    float *Vq = malloc(nk * sizeof *Vq), *Qs = malloc(nq * sizeof *Qs);
    float *Ks = malloc(nk * sizeof *Ks), *Vs = malloc(nk * sizeof *Vs);
    float *acc = malloc(nq * sizeof *acc);
    float *m = malloc((size_t)(B * H * c) * sizeof *m), *l = malloc((size_t)(B * H * c) * sizeof *l);
    g->O = malloc((size_t)(B * H * N * d) * sizeof *g->O);
    g->L = malloc((size_t)(B * H * N) * sizeof *g->L);
    g->watch_m = malloc((size_t)P * (size_t)P * sizeof *g->watch_m);
    g->watch_l = malloc((size_t)P * (size_t)P * sizeof *g->watch_l);
    const int64_t watch = g->req.watch >= 0 && g->req.watch < c ? g->req.watch : 0;
    int rc = 0;
    if (!Qp || !Kq || !Vq || !Qs || !Ks || !Vs || !acc || !m || !l || !g->O || !g->L ||
        !g->watch_m || !g->watch_l) {
        ERR("ring: out of memory for the devices' blocks");
        rc = -1;
    }
    for (int p = 0; p < P && rc == 0; p++) {
        gather(g, p, Q, H, Qp);
        for (int64_t k = 0; k < B * H * c; k++) {   /* the merge's empty state */
            m[k] = -INFINITY;
            l[k] = 0.0f;
        }
        memset(acc, 0, nq * sizeof *acc);
        /* Rounds in order: the merge's order, so the bits are fixed. */
        for (int r = 0; r < P && rc == 0; r++) {
            const sim_ring_kind kd = sim_ring_round_kind(&g->req, sh->causal, p, r);
            g->watch_m[p * P + r] = m[watch];   /* a skipped round leaves it */
            g->watch_l[p * P + r] = l[watch];
            if (kd == SIM_RING_SKIP)
                continue;
            const sim_ring_kind_info *ki = &g->kind[kd];
            const int q = sim_ring_source(P, p, r);
            const int64_t nqr = ki->sh.N, nkr = sim_shape_Nk(&ki->sh);
            gather(g, q, K, G, Kq);
            gather(g, q, V, G, Vq);
            slice(Qp, B * H, c, d, ki->q0, nqr, Qs);
            slice(Kq, B * G, c, d, ki->k0, nkr, Ks);
            slice(Vq, B * G, c, d, ki->k0, nkr, Vs);
            sim_result res;
            if (sim_run(SIM_FA2, &ki->sh, &ki->plan, Qs, Ks, Vs, NULL, &res, err, errlen) != 0) {
                rc = -1;
                break;
            }
            for (int64_t bh = 0; bh < B * H; bh++)
                for (int64_t i = 0; i < nqr; i++) {
                    const int64_t at = bh * c + ki->q0 + i;
                    /* A normalised partial (O_r, L_r) is the state m = L_r,
                     * l = 1, acc = O_r of the merge lemma. */
                    ref_merge(m[at], l[at], acc + at * d, res.L[bh * nqr + i], 1.0f,
                              res.O + (bh * nqr + i) * d, (int)d, &m[at], &l[at],
                              acc + at * d);
                }
            sim_result_free(&res);
            g->watch_m[p * P + r] = m[watch];
            g->watch_l[p * P + r] = l[watch];
        }
        for (int64_t bh = 0; bh < B * H && rc == 0; bh++)
            for (int64_t i = 0; i < c; i++) {
                const int64_t at = bh * c + i, row = bh * N + global_row(g, p, i);
                ref_normalise_row(acc + at * d, (int)d, l[at]);
                sim_round_to_dtype(acc + at * d, d, sh->dtype);
                memcpy(g->O + row * d, acc + at * d, (size_t)d * sizeof *acc);
                g->L[row] = ref_lse(m[at], l[at]);
            }
    }
    free(Qp);
    free(Kq);
    free(Vq);
    free(Qs);
    free(Ks);
    free(Vs);
    free(acc);
    free(m);
    free(l);
    if (rc == 0)
        g->computed = 1;
    return rc;
}

/* ---- the build ---- */

/* All-gather: device p's runs, one per chunk it holds (rows of the chunk
 * against every key up to its last row when causal, all N keys when not).
 * ag[j]: the run of chunk j, made once. */
static int allgather(sim_ring *g, const sim_run_opts *run, char *err, size_t errlen)
{
    const sim_shape *sh = &g->sh;
    const int P = g->req.P, zig = g->req.order == SIM_RING_ZIGZAG && sh->causal;
    const int nchunks = sh->causal ? (zig ? 2 * P : P) : 1;
    const int64_t rows = zig ? g->c / 2 : g->c;
    sim_ring_kind_info *ag = calloc((size_t)nchunks, sizeof *ag);
    if (!ag) {
        ERR("ring: out of memory");
        return -1;
    }
    int rc = 0;
    for (int j = 0; j < nchunks && rc == 0; j++) {
        sim_shape s = *sh;
        s.N = rows;
        s.Nk = sh->causal ? (j + 1) * rows : sh->N;   /* the queries are the last
                                                          rows of the keys seen */
        rc = run_shape(&s, run, g->Br, g->Bc, g->gpu, &ag[j], err, errlen);
    }
    for (int p = 0; p < P && rc == 0; p++) {
        sim_ring_device *v = &g->dev[p];
        const int js[2] = { sh->causal ? p : 0, zig ? 2 * P - 1 - p : -1 };
        for (int t = 0; t < 2; t++) {
            if (js[t] < 0)
                continue;
            v->ag_hbm_bytes += ag[js[t]].hbm_bytes;
            v->ag_steps += ag[js[t]].steps;
            v->ag_compute_s += ag[js[t]].compute_s;
        }
        v->ag_recv_bytes = (uint64_t)(P - 1) * g->block_bytes;
        v->ag_link_s = g->req.link ? (double)v->ag_recv_bytes / g->req.link->bytes_per_s : 0;
        const sim_ring_device *w = &g->dev[g->ag_slowest];
        if (v->ag_compute_s + v->ag_link_s > w->ag_compute_s + w->ag_link_s ||
            (!g->gpu && v->ag_steps > w->ag_steps))
            g->ag_slowest = p;
    }
    free(ag);
    return rc;
}

int sim_ring_build(const sim_shape *sh, const sim_run_opts *run, const sim_ring_req *rq,
                   int64_t Br, int64_t Bc, const sim_gpu *gpu, const float *Q,
                   const float *K, const float *V, sim_ring *g, char *err, size_t errlen)
{
    memset(g, 0, sizeof *g);
    if (sim_ring_check(sh, rq, err, errlen) != 0)
        return -1;
    g->req = *rq;
    g->sh = *sh;
    g->sh.Nk = 0;
    g->c = sh->N / rq->P;
    g->Br = Br;
    g->Bc = Bc;
    g->gpu = gpu;
    const int P = rq->P;
    const int64_t B = sim_shape_B(sh), H = sim_shape_H(sh), G = sim_shape_G(sh);
    const uint64_t s = (uint64_t)sim_dtype_bytes(sh->dtype), d = (uint64_t)sh->d;
    const uint64_t c = (uint64_t)g->c;
    g->block_bytes = 2 * c * d * (uint64_t)(B * G) * s;
    /* Per device: Q and a round's partial O_r in the dtype, the merged
     * output's fp32 accumulator (the final O in the dtype is written over
     * it), L_r and the running L (fp32), and two K, V blocks: the one in
     * hand and the next arriving (double-buffered). */
    g->peak_bytes = (uint64_t)(B * H) * c * (d * (2 * s + 4) + 8) +
                    (rq->P > 1 ? 2 : 1) * g->block_bytes;   /* one device: nothing arrives */
    /* All-gather: Q, O in the dtype, L, and all of K and V. */
    g->ag_peak_bytes = (uint64_t)(B * H) * c * (2 * d * s + 4) +
                       (uint64_t)P * g->block_bytes;
    g->link_s = rq->link ? (double)g->block_bytes / rq->link->bytes_per_s : 0.0;
    /* The paper's condition: a round computes 4 c^2 d FLOPs per head (Q K^T
     * and P V, 2 c^2 d each) at F FLOP/s, while c d keys and c d values of
     * s bytes go over the link at B bytes/s: compute hides the link when
     * 4 c^2 d / F >= 2 c d s / B, i.e. c >= s F / (2 B): c >= F / B in
     * fp16 and bf16. */
    if (gpu && rq->link)
        g->threshold_c = (double)s * sim_gpu_peak_flops(gpu, sh->dtype) /
                         (2.0 * rq->link->bytes_per_s);
    g->dev = calloc((size_t)P, sizeof *g->dev);
    if (!g->dev) {
        ERR("ring: out of memory");
        return -1;
    }
    int rc = 0;
    for (int p = 0; p < P; p++)
        for (int r = 0; r < P; r++)
            g->kind[sim_ring_round_kind(rq, sh->causal, p, r)].used = 1;
    for (int k = 0; k < SIM_RING_KIND_COUNT && rc == 0; k++) {
        if (!g->kind[k].used || k == SIM_RING_SKIP)
            continue;
        int64_t q0, k0;
        const sim_shape sub = kind_shape(g, (sim_ring_kind)k, &q0, &k0);
        rc = run_shape(&sub, run, Br, Bc, gpu, &g->kind[k], err, errlen);
        g->kind[k].q0 = q0;
        g->kind[k].k0 = k0;
    }
    for (int p = 0; p < P && rc == 0; p++) {
        sim_ring_device *v = &g->dev[p];
        for (int r = 0; r < P; r++) {
            const sim_ring_kind kd = sim_ring_round_kind(rq, sh->causal, p, r);
            const double link = r < P - 1 ? g->link_s : 0.0;   /* the last round
                                                                  passes nothing on */
            double comp = 0.0;
            if (kd != SIM_RING_SKIP) {
                v->hbm_bytes += g->kind[kd].hbm_bytes;
                v->steps += g->kind[kd].steps;
                v->rounds_computed++;
                comp = g->kind[kd].compute_s;
            }
            if (r < P - 1) {
                v->sent_bytes += g->block_bytes;
                v->recv_bytes += g->block_bytes;
            }
            v->compute_s += comp;
            v->link_s += link;
            v->time_s += comp > link ? comp : link;
            v->time_serial_s += comp + link;
        }
        const sim_ring_device *w = &g->dev[g->slowest];
        if (v->time_s > w->time_s || (!gpu && v->steps > w->steps))
            g->slowest = p;
    }
    if (rc == 0)
        rc = allgather(g, run, err, errlen);
    if (rc == 0 && Q && K && V)
        rc = compute(g, Q, K, V, err, errlen);
    if (rc != 0)
        sim_ring_free(g);
    return rc;
}

void sim_ring_free(sim_ring *g)
{
    free(g->dev);
    free(g->O);
    free(g->L);
    free(g->watch_m);
    free(g->watch_l);
    g->dev = NULL;
    g->O = g->L = g->watch_m = g->watch_l = NULL;
    g->computed = 0;
}

/* ---- output ---- */

static const char *const KIND_NAME[SIM_RING_KIND_COUNT] = {
    "skipped", "own block", "full block", "zig-zag low", "zig-zag high",
};
static const char KIND_MARK[SIM_RING_KIND_COUNT] = { '.', 'D', 'F', 'L', 'H' };
static const char *const KIND_KEY[SIM_RING_KIND_COUNT] = {
    "skip", "diag", "full", "zz_low", "zz_high",
};

static void kinds_text(FILE *out, const sim_ring *g)
{
    char b1[32], b2[32], b3[32];
    fprintf(out, "  round kind      N_q x N_k             HBM bytes   tile steps%s\n",
            g->gpu ? "    GPU time" : "");
    for (int k = 1; k < SIM_RING_KIND_COUNT; k++) {
        const sim_ring_kind_info *ki = &g->kind[k];
        if (!ki->used)
            continue;
        char shape[40];
        snprintf(shape, sizeof shape, "%lld x %lld%s", (long long)ki->sh.N,
                 (long long)sim_shape_Nk(&ki->sh), ki->sh.causal ? " causal" : "");
        sim_format_bytes(b1, sizeof b1, ki->hbm_bytes);
        sim_format_count(b2, sizeof b2, ki->steps);
        fprintf(out, "  %c %-13s %-19s %11s %12s", KIND_MARK[k], KIND_NAME[k], shape, b1, b2);
        if (g->gpu) {
            sim_format_seconds(b3, sizeof b3, ki->compute_s);
            fprintf(out, " %11s", b3);
        }
        fputc('\n', out);
    }
}

/* The P x P table of kinds: a row per device, a column per round. */
static void grid_text(FILE *out, const sim_ring *g)
{
    const int P = g->req.P;
    if (P > 64) {
        fprintf(out, "  (the device x round table is left out past 64 devices)\n");
        return;
    }
    fprintf(out, "  device x round (D own block, F full, L zig-zag low, H high, . skipped):\n");
    for (int p = 0; p < P; p++) {
        fprintf(out, "  %4d  ", p);
        for (int r = 0; r < P; r++)
            fputc(KIND_MARK[sim_ring_round_kind(&g->req, g->sh.causal, p, r)], out);
        fputc('\n', out);
    }
}

void sim_ring_text(FILE *out, const sim_ring *g, const ref_error *err)
{
    const sim_shape *sh = &g->sh;
    const int P = g->req.P, zig = g->req.order == SIM_RING_ZIGZAG;
    char b1[32], b2[32], b3[32], b4[32], b5[32], b6[32];
    fprintf(out, "\nRING ATTENTION: P = %d device%s, %s order%s%s\n", P, P == 1 ? "" : "s",
            sim_ring_order_name(g->req.order), g->req.link ? ", link " : "",
            g->req.link ? g->req.link->name : "");
    fprintf(out, "c = N / P = %lld rows of Q, K, V per head on each device", (long long)g->c);
    if (zig)
        fprintf(out, " (zig-zag: chunks p\nand 2P-1-p of h = %lld rows)", (long long)(g->c / 2));
    fprintf(out, ".\nRound r: device p computes against the K, V block of device (p - r) mod P "
            "and\nsends it on to p + 1 (round 0's block is its own, so it sends while it\n"
            "computes; the last round sends nothing). Each round is one FA2 run, B_r = %lld,\n"
            "B_c = %lld; the partials (O_r, L_r) merge in round order by the merge lemma.\n",
            (long long)g->Br, (long long)g->Bc);
    if (P == 1)
        fprintf(out, "P = 1: one device, one round: plain FA2.\n");
    if (!sh->causal && zig)
        fprintf(out, "Not causal: every round is a full block, whatever the order.\n");
    kinds_text(out, g);
    grid_text(out, g);

    fprintf(out, "%s%s\n", "   dev rounds   HBM bytes  tile steps  sent/recv",
            g->gpu ? "    compute      link      time" : "");
    uint64_t tot_b = 0, tot_s = 0, tot_l = 0;
    /* Past 64 devices the table shows the first and last 32 and the
     * slowest; the totals are of all. */
    const int many = P > 64;
    for (int p = 0; p < P; p++) {
        const sim_ring_device *v = &g->dev[p];
        tot_b += v->hbm_bytes;
        tot_s += v->steps;
        tot_l += v->sent_bytes;
        if (many && p >= 32 && p < P - 32 && p != g->slowest) {
            if (p == 32 || (p == g->slowest + 1 && p < P - 32))
                fprintf(out, "   ...\n");
            continue;
        }
        sim_format_bytes(b1, sizeof b1, v->hbm_bytes);
        sim_format_count(b2, sizeof b2, v->steps);
        sim_format_bytes(b3, sizeof b3, v->sent_bytes);
        fprintf(out, "  %4d %6llu %11s %11s %10s", p, (unsigned long long)v->rounds_computed,
                b1, b2, b3);
        if (g->gpu) {
            sim_format_seconds(b4, sizeof b4, v->compute_s);
            sim_format_seconds(b5, sizeof b5, v->link_s);
            sim_format_seconds(b6, sizeof b6, v->time_s);
            fprintf(out, " %10s %9s %9s", b4, b5, b6);
        }
        fputc('\n', out);
    }
    sim_format_bytes(b1, sizeof b1, tot_b);
    sim_format_count(b2, sizeof b2, tot_s);
    sim_format_bytes(b3, sizeof b3, tot_l);
    fprintf(out, "  total       %11s %11s %10s\n", b1, b2, b3);
    if (many)
        fprintf(out, "  (devices 32 .. %d left out but the slowest; the total is of all %d)\n",
                P - 33, P);
    sim_format_bytes(b1, sizeof b1, g->block_bytes);
    fprintf(out, "link: one K, V block = 2 c d B G elements = %s a round, each way", b1);
    if (g->req.link) {
        sim_format_seconds(b2, sizeof b2, g->link_s);
        fprintf(out, ": %s\n  at %.4g GB/s (%s)\n", b2, g->req.link->bytes_per_s / 1e9,
                g->req.link->title);
    } else {
        fprintf(out, " (--link NAME for times)\n");
    }
    if (g->gpu) {
        const sim_ring_device *w = &g->dev[g->slowest];
        sim_format_seconds(b1, sizeof b1, w->time_s);
        sim_format_seconds(b2, sizeof b2, w->time_serial_s);
        fprintf(out, "time: device %d is the slowest: %s with the link behind compute,\n"
                "  %s without overlap (a round takes max(compute, link); each device as\n"
                "  if its neighbours keep pace)\n", g->slowest, b1, b2);
        if (g->req.link && P > 1) {
            const double F = sim_gpu_peak_flops(g->gpu, sh->dtype);
            const int hides_peak = (double)g->c >= g->threshold_c;
            /* the model's own verdict: every computed round at least as long
             * as its link time */
            int hides_model = 1;
            for (int k = 0; k < SIM_RING_KIND_COUNT; k++)
                if (g->kind[k].used && k != SIM_RING_SKIP && g->kind[k].compute_s < g->link_s)
                    hides_model = 0;
            fprintf(out, "the paper's condition c >= s F / (2 B) (c >= F / B with 2-byte "
                    "elements):\n  c = %lld rows, the bound %.0f (F = %.4g TFLOP/s on %s, "
                    "B = %.4g GB/s):\n  at peak rates %s",
                    (long long)g->c, ceil(g->threshold_c), F / 1e12, g->gpu->name,
                    g->req.link->bytes_per_s / 1e9,
                    hides_peak ? "the link hides behind compute" : "the link shows");
            if (hides_model != hides_peak)
                fprintf(out, ";\n  in the GPU model's times it %s: %s",
                        hides_model ? "hides" : "shows",
                        hides_model ? "a round computes below peak rate\n  (launch, "
                                      "latency, softmax), which gives the link time"
                                    : "a causal round computes only part\n  of a block, "
                                      "where the bound counts a whole one");
            fprintf(out, "\n");
        }
    } else {
        fprintf(out, "device %d does the most tile steps (--gpu NAME for times)\n", g->slowest);
    }
    sim_format_bytes(b1, sizeof b1, g->peak_bytes);
    fprintf(out, "peak memory a device: %s (Q, O_r, the fp32 O and L, two K, V blocks:\n"
            "  double-buffered, one in hand and one arriving)\n", b1);
    if (err)
        fprintf(out, "merged output against the float64 oracle: max abs error %.3g, relative "
                "to\n  max |O| %.3g\n", err->max_abs, err->max_rel);

    const sim_ring_device *a = &g->dev[g->ag_slowest];
    sim_format_bytes(b1, sizeof b1, g->ag_peak_bytes);
    sim_format_bytes(b2, sizeof b2, a->ag_recv_bytes);
    sim_format_bytes(b3, sizeof b3, a->ag_hbm_bytes);
    fprintf(out, "ALL-GATHER context parallelism beside it: each device receives (P-1)/P of "
            "K\n  and V (%s), holds all of them (peak %s), then one FA2 run a\n  chunk "
            "(%s HBM bytes on device %d)", b2, b1, b3, g->ag_slowest);
    if (g->gpu) {
        sim_format_seconds(b4, sizeof b4, a->ag_compute_s);
        sim_format_seconds(b5, sizeof b5, a->ag_link_s);
        sim_format_seconds(b6, sizeof b6, a->ag_compute_s + a->ag_link_s);
        fprintf(out, ":\n  gather %s, then compute %s = %s, no overlap", b5, b4, b6);
    }
    fprintf(out, "\n");
}

void sim_ring_rounds_text(FILE *out, const sim_ring *g)
{
    const int P = g->req.P;
    const int64_t w = g->req.watch >= 0 && g->req.watch < g->c ? g->req.watch : 0;
    fprintf(out, "ring attention, P = %d devices, %s order, c = %lld rows each; each round\n"
            "one FA2 run a device, the partials merged in round order\n",
            P, sim_ring_order_name(g->req.order), (long long)g->c);
    if (g->computed)
        fprintf(out, "(m, l): the merge's running state of each device's local row %lld: m "
                "the\nlargest L_r so far, l = sum exp(L_r - m); at the end L = m + log l\n",
                (long long)w);
    for (int r = 0; r < P; r++) {
        fprintf(out, "\n-- round %d of %d --\n", r, P);
        for (int p = 0; p < P; p++) {
            const int q = sim_ring_source(P, p, r);
            const sim_ring_kind kd = sim_ring_round_kind(&g->req, g->sh.causal, p, r);
            char what[48] = "skipped: every score masked";
            if (kd != SIM_RING_SKIP)
                snprintf(what, sizeof what, "%s, %lld x %lld%s", KIND_NAME[kd],
                         (long long)g->kind[kd].sh.N, (long long)sim_shape_Nk(&g->kind[kd].sh),
                         g->kind[kd].sh.causal ? " causal" : "");
            fprintf(out, "  device %d: K, V of %d: %-32s", p, q, what);
            if (r < P - 1)
                fprintf(out, " -> %d", (p + 1) % P);
            else
                fprintf(out, "     ");
            if (g->computed)
                fprintf(out, "  m %.5g, l %.5g", g->watch_m[p * P + r], g->watch_l[p * P + r]);
            fputc('\n', out);
        }
    }
}

/* A link time in the JSON: null without --link (0 would read as a link
 * that takes no time). */
static void ring_link_s(sim_json *w, const sim_ring *g, double t)
{
    if (g->req.link)
        sim_json_num(w, "link_s", t);
    else
        sim_json_null(w, "link_s");
}

void sim_ring_json(sim_json *w, const sim_ring *g, const ref_error *err)
{
    const int P = g->req.P;
    sim_json_obj(w, "ring");
    sim_json_int(w, "P", P);
    sim_json_str(w, "order", sim_ring_order_name(g->req.order));
    if (g->req.link) {
        sim_json_str(w, "link", g->req.link->name);
        sim_json_num(w, "link_bytes_per_s", g->req.link->bytes_per_s);
    } else {
        sim_json_null(w, "link");
        sim_json_null(w, "link_bytes_per_s");
    }
    sim_json_int(w, "rows_per_device", g->c);
    sim_json_int(w, "Br", g->Br);
    sim_json_int(w, "Bc", g->Bc);
    sim_json_uint(w, "block_bytes", g->block_bytes);
    sim_json_uint(w, "peak_bytes", g->peak_bytes);
    if (g->gpu) {
        ring_link_s(w, g, g->link_s);
        if (g->req.link)
            sim_json_num(w, "threshold_c", g->threshold_c);
        sim_json_int(w, "slowest", g->slowest);
        sim_json_num(w, "time_s", g->dev[g->slowest].time_s);
        sim_json_num(w, "time_serial_s", g->dev[g->slowest].time_serial_s);
    }
    if (err) {
        sim_json_num(w, "max_abs_error", err->max_abs);
        sim_json_num(w, "max_rel_error", err->max_rel);
    }
    sim_json_obj(w, "kinds");
    for (int k = 1; k < SIM_RING_KIND_COUNT; k++) {
        const sim_ring_kind_info *ki = &g->kind[k];
        if (!ki->used)
            continue;
        sim_json_obj(w, KIND_KEY[k]);
        sim_json_int(w, "Nq", ki->sh.N);
        sim_json_int(w, "Nk", sim_shape_Nk(&ki->sh));
        sim_json_bool(w, "causal", ki->sh.causal);
        sim_json_uint(w, "hbm_bytes", ki->hbm_bytes);
        sim_json_uint(w, "steps", ki->steps);
        if (g->gpu)
            sim_json_num(w, "compute_s", ki->compute_s);
        sim_json_end(w);
    }
    sim_json_end(w);
    sim_json_arr(w, "devices");
    for (int p = 0; p < P; p++) {
        const sim_ring_device *v = &g->dev[p];
        char rounds[SIM_RING_MAX_P + 1];
        for (int r = 0; r < P; r++)
            rounds[r] = KIND_MARK[sim_ring_round_kind(&g->req, g->sh.causal, p, r)];
        rounds[P] = '\0';
        sim_json_obj(w, NULL);
        sim_json_str(w, "rounds", rounds);
        sim_json_uint(w, "rounds_computed", v->rounds_computed);
        sim_json_uint(w, "hbm_bytes", v->hbm_bytes);
        sim_json_uint(w, "steps", v->steps);
        sim_json_uint(w, "sent_bytes", v->sent_bytes);
        sim_json_uint(w, "recv_bytes", v->recv_bytes);
        if (g->gpu) {
            sim_json_num(w, "compute_s", v->compute_s);
            ring_link_s(w, g, v->link_s);
            sim_json_num(w, "time_s", v->time_s);
        }
        sim_json_obj(w, "allgather");
        sim_json_uint(w, "hbm_bytes", v->ag_hbm_bytes);
        sim_json_uint(w, "steps", v->ag_steps);
        sim_json_uint(w, "recv_bytes", v->ag_recv_bytes);
        if (g->gpu) {
            sim_json_num(w, "compute_s", v->ag_compute_s);
            ring_link_s(w, g, v->ag_link_s);
        }
        sim_json_end(w);
        sim_json_end(w);
    }
    sim_json_end(w);
    sim_json_uint(w, "allgather_peak_bytes", g->ag_peak_bytes);
    sim_json_end(w);
}

/* ---- the longest context a device holds ---- */

/* The models of Table 3's A100 rows. The paper trains OpenLLaMA-3B and
 * LLaMA 7B and 13B (its section 5.2 follows "LLaMA and OpenLLaMA").
 *   [LLaMA]    Touvron et al. 2023, "LLaMA: Open and Efficient Foundation
 *              Language Models", Table 2: 6.7B, dimension 4096, 32 layers;
 *              13.0B, 5120, 40 layers.
 *   [OpenLLaMA] openlm-research/open_llama_3b, config.json: hidden_size
 *              3200, num_hidden_layers 26, intermediate_size 8640, vocab
 *              32000; 3.43B parameters counted from them. */
static const sim_ring_model MODELS[] = {
    { "3B", "OpenLLaMA 3B", 26, 3200, 3.43e9, "[OpenLLaMA] config.json" },
    { "7B", "LLaMA 7B", 32, 4096, 6.7e9, "[LLaMA] Table 2" },
    { "13B", "LLaMA 13B", 40, 5120, 13.0e9, "[LLaMA] Table 2" },
};

/* Table 3 (Liu, Zaharia, Abbeel 2023, p. 7), the A100 rows: Ring
 * Attention's context in thousands of tokens (x 1e3 as printed; the
 * figures are powers of two, 512 standing for 2^19 tokens). */
static const struct {
    int devices, model;
    int64_t ktokens;
} TABLE3[] = {
    { 8, 0, 512 }, { 8, 1, 256 }, { 8, 2, 128 }, { 32, 1, 4096 }, { 32, 2, 2048 },
};

/* Bytes a token a layer: the layer's bf16 input kept, 2 h; and one layer's
 * working activations, 34 h. */
#define RING_CKPT_BYTES_PER_H 2.0
#define RING_LAYER_BYTES_PER_H 34.0
#define RING_STATE_BYTES_PER_PARAM 16.0

int sim_ring_memory_rows(uint64_t hbm, sim_ring_memory_row *rows, int max)
{
    int n = 0;
    for (size_t k = 0; k < sizeof TABLE3 / sizeof TABLE3[0] && n < max; k++) {
        sim_ring_memory_row *r = &rows[n++];
        const sim_ring_model *m = &MODELS[TABLE3[k].model];
        r->model = m;
        r->devices = TABLE3[k].devices;
        r->paper_tokens = TABLE3[k].ktokens * 1024;
        r->state_bytes = RING_STATE_BYTES_PER_PARAM * m->params / r->devices;
        r->per_token_bytes = (double)m->hidden * (RING_CKPT_BYTES_PER_H * (double)m->layers +
                                                  RING_LAYER_BYTES_PER_H);
        const double free_bytes = (double)hbm - r->state_bytes;
        r->tokens_per_device = free_bytes > 0 ? (int64_t)(free_bytes / r->per_token_bytes) : 0;
        r->tokens = r->tokens_per_device * r->devices;
    }
    return n;
}

void sim_ring_memory_text(FILE *out, const sim_gpu *g)
{
    sim_ring_memory_row rows[8];
    const int n = sim_ring_memory_rows(g->hbm_capacity, rows, 8);
    char b1[32];
    sim_format_bytes(b1, sizeof b1, g->hbm_capacity);
    fprintf(out, "RING ATTENTION, THE LONGEST CONTEXT: the paper's Table 3 (A100 rows) against\n"
            "a memory model of one device, %s of HBM (%s)\n\n", b1, g->title);
    fprintf(out, "  devices  model  state/device  bytes/token  tokens/device  context   paper  "
            "ratio\n");
    for (int k = 0; k < n; k++) {
        const sim_ring_memory_row *r = &rows[k];
        char st[32], ctx[32], pap[32];
        sim_format_bytes(st, sizeof st, (uint64_t)r->state_bytes);
        snprintf(ctx, sizeof ctx, "%.0fK", (double)r->tokens / 1024.0);
        snprintf(pap, sizeof pap, "%lldK", (long long)(r->paper_tokens / 1024));
        char tpd[32];
        sim_format_count(tpd, sizeof tpd, (uint64_t)r->tokens_per_device);
        fprintf(out, "  %7d  %5s  %12s  %11.0f  %13s  %7s  %6s  %5.2f\n", r->devices,
                r->model->name, st, r->per_token_bytes,
                tpd, ctx, pap,
                (double)r->tokens / (double)r->paper_tokens);
    }
    fprintf(out, "\ncontext = devices x tokens/device; paper: Table 3's Ring Attention column\n"
            "(K = 1,024 tokens, as its powers of two read); ratio = context / paper.\n");
    if (strcmp(g->name, "a100") != 0)
        fprintf(out, "The paper's figures are for the A100 80GB; the ratio here sets the %s's\n"
                "memory against them, so it does not compare like with like.\n", g->name);
    fprintf(out, "\n"
            "assumed, as the paper's section 5.1 sets it up (FSDP, the model sharded over\n"
            "the devices, one sequence of the whole context):\n"
            "  - model state: 16 B a parameter (bf16 weights and gradients, fp32 master\n"
            "    weights and Adam's two moments), sharded over the devices;\n"
            "  - full gradient checkpointing: each layer's input kept, bf16, 2 h B a token;\n"
            "  - one layer's activations during its backward, 34 h B a token\n"
            "    (Korthikanti et al. 2022, section 4.1, without the attention matrix's\n"
            "    5 a s / h term, which blockwise attention removes);\n"
            "  - the ring's K, V blocks, FSDP's gathered layer, the logits and the\n"
            "    framework's workspace: left out.\n"
            "models: OpenLLaMA 3B (h = 3200, L = 26, 3.43e9 parameters), LLaMA 7B\n"
            "(4096, 32, 6.7e9) and 13B (5120, 40, 13.0e9).\n");
}
