/*
 * kern_driver.c — the host side of the kernels: launch schedules, the check
 * that each kernel's shared memory is the plan's buffers, and the CPU
 * backend's run (the CUDA backend is kern_cuda.cu). See kern.h.
 */
#define _POSIX_C_SOURCE 200809L
#include "kern_internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

const char *kern_backend_name(kern_backend b)
{
    return b == KERN_CUDA ? "cuda" : "cpu";
}

int kern_backend_parse(const char *s, kern_backend *out)
{
    if (s && !strcmp(s, "cpu")) {
        *out = KERN_CPU;
        return 0;
    }
    if (s && !strcmp(s, "cuda")) {
        *out = KERN_CUDA;
        return 0;
    }
    return -1;
}

const char *kern_kernel_name(kern_kernel k)
{
    static const char *names[KERN_K_COUNT] = {
        "kern_naive_scores", "kern_naive_softmax_rows", "kern_naive_softmax_2pass",
        "kern_naive_softmax_3pass", "kern_naive_pv", "kern_fa1", "kern_fa1_bwd", "kern_fa2",
        "kern_fa2_split", "kern_fa2_combine", "kern_fa2_bwd_pre", "kern_fa2_bwd",
        "kern_fa2_bwd_convert", "kern_gqa_sum_dk", "kern_gqa_sum_dv",
        "kern_naive_bwd_dv", "kern_naive_bwd_dp", "kern_naive_bwd_ds_rows",
        "kern_naive_bwd_ds_2pass", "kern_naive_bwd_dq", "kern_naive_bwd_dk",
    };
    return (unsigned)k < KERN_K_COUNT ? names[k] : "?";
}

int kern_kernel_turns(kern_kernel k)
{
    return k == KERN_K_FA2_BWD;
}

double kern_now_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

double kern_median(double *x, int n)
{
    if (n <= 0)
        return 0.0;
    qsort(x, (size_t)n, sizeof *x, cmp_double);
    return n % 2 ? x[n / 2] : 0.5 * (x[n / 2 - 1] + x[n / 2]);
}

void kern_counts_to_sim(const kern_counts *k, sim_counts *s)
{
    for (int t = 0; t < SIM_TENSOR_COUNT; t++) {
        s->read_elems[t] = k->read_elems[t];
        s->write_elems[t] = k->write_elems[t];
        s->read_ops[t] = k->read_ops[t];
        s->write_ops[t] = k->write_ops[t];
    }
}

void kern_poison(float *x, int64_t n)
{
    const float nan = ref_u2f(0x7fc00000u);
    for (int64_t k = 0; k < n; k++)
        x[k] = nan;
}

kern_params kern_params_make(const sim_shape *sh, const sim_plan *p)
{
    kern_params k;
    memset(&k, 0, sizeof k);
    k.N = sh->N;
    k.Nk = sim_shape_Nk(sh);
    k.H = sim_shape_H(sh);
    k.G = sim_shape_G(sh);
    k.window = sh->window;
    k.d = sh->d;
    k.Br = p->Br;
    k.Bc = p->Bc;
    k.Tr = p->Tr;
    k.Tc = p->Tc;
    k.Bs_r = p->Bs_r;
    k.splits = sim_run_S(&p->run);
    k.causal = sh->causal;
    k.dtype = sh->dtype;
    k.scale = 1.0f / sqrtf((float)sh->d);    /* as sim_run computes it */
    k.p_round = sim_inter_p_round(sh, &p->run);
    return k;
}

/* ---- shared memory = the plan ------------------------------------------------ */

/* What a kernel carves out of its shared memory, in the plan's order: the
 * plan's buffer names, the sizes the kernel's pointer arithmetic assumes, and
 * the bytes per element it holds them in (4: fp32; e: a tile in the dtype). */
typedef struct {
    const char *name;
    int64_t rows, cols;
    int elem_bytes;
    int tile;                /* held in the dtype (kern_tile.h), carved after fp32 */
} carve;

static int carve_list(kern_kernel k, const sim_plan *p, const sim_shape *sh, carve *c)
{
    const int64_t Br = p->Br, Bc = p->Bc, d = sh->d, N_k = sim_shape_Nk(sh), Bs = p->Bs_r;
    const int e = sim_dtype_bytes(sh->dtype);
    int n = 0;
#define C(nm, r, cc, eb, t) (c[n].name = (nm), c[n].rows = (r), c[n].cols = (cc), \
                             c[n].elem_bytes = (eb), c[n].tile = (t), n++)
#define F(nm, r, cc) C(nm, r, cc, 4, 0)     /* fp32 */
#define T(nm, r, cc) C(nm, r, cc, e, 1)     /* a tile in the dtype */
    switch (k) {
    case KERN_K_NAIVE_SCORES:
        T("Q_i", Br, d); T("K_j", Bc, d); F("S_ij", Br, Bc);
        break;
    case KERN_K_NAIVE_SOFTMAX_ROWS:
        F("S_rows", Bs, N_k); F("m", Bs, 1); F("l", Bs, 1);
        break;
    case KERN_K_NAIVE_SOFTMAX_2PASS:
    case KERN_K_NAIVE_SOFTMAX_3PASS:
        F("S_ij", Br, Bc); F("m_i", Br, 1); F("l_i", Br, 1);
        break;
    case KERN_K_NAIVE_PV:
        T("P_ij", Br, Bc); T("V_j", Bc, d); F("O_i", Br, d);
        break;
    case KERN_K_FA1:
        T("K_j", Bc, d); T("V_j", Bc, d); T("Q_i", Br, d); F("O_i", Br, d);
        F("S_ij", Br, Bc); F("m_i", Br, 1); F("l_i", Br, 1); F("m~_ij", Br, 1);
        F("l~_ij", Br, 1); F("m_new", Br, 1); F("l_new", Br, 1);
        break;
    case KERN_K_FA1_BWD:
        T("K_j", Bc, d); T("V_j", Bc, d); F("dK_j", Bc, d); F("dV_j", Bc, d);
        T("Q_i", Br, d); T("O_i", Br, d); T("dO_i", Br, d); F("dQ_i", Br, d);
        F("l_i", Br, 1); F("m_i", Br, 1); F("S_ij", Br, Bc); F("dP_ij", Br, Bc);
        F("D_i", Br, 1);
        break;
    case KERN_K_FA2:
    case KERN_K_FA2_SPLIT:
        T("Q_i", Br, d); T("K_j", Bc, d); T("V_j", Bc, d); F("S_ij", Br, Bc);
        F(k == KERN_K_FA2 ? "O_i" : "O~_i", Br, d); F("m_i", Br, 1); F("l_i", Br, 1);
        break;
    case KERN_K_FA2_COMBINE:
        F("O~_s", Br, d); F("m_s", Br, 1); F("l_s", Br, 1); F("O_i", Br, d);
        F("m_i", Br, 1); F("l_i", Br, 1);
        break;
    case KERN_K_FA2_BWD_PRE:
        T("O_i", Br, d); T("dO_i", Br, d); F("D_i", Br, 1);
        break;
    case KERN_K_FA2_BWD:
    case KERN_K_FA2_BWD_CONVERT:        /* converts through phase 2's dQ_i */
        T("K_j", Bc, d); T("V_j", Bc, d); F("dK_j", Bc, d); F("dV_j", Bc, d);
        T("Q_i", Br, d); T("dO_i", Br, d); F("dQ_i", Br, d); F("L_i", Br, 1);
        F("D_i", Br, 1); F("S_ij", Br, Bc); F("dP_ij", Br, Bc);
        break;
    case KERN_K_GQA_SUM_DK:             /* one of its phase's buffers (carve_borrows) */
        F("dK_j", Bc, d);
        break;
    case KERN_K_GQA_SUM_DV:
        F("dV_j", Bc, d);
        break;
    case KERN_K_NAIVE_BWD_DV:
        T("P_ij", Br, Bc); T("dO_i", Br, d); F("dV_j", Bc, d);
        break;
    case KERN_K_NAIVE_BWD_DP:
        T("dO_i", Br, d); T("V_j", Bc, d); F("dP_ij", Br, Bc);
        break;
    case KERN_K_NAIVE_BWD_DS_ROWS:
        F("P_rows", Bs, N_k); F("dP_rows", Bs, N_k); F("D", Bs, 1);
        break;
    case KERN_K_NAIVE_BWD_DS_2PASS:
        F("P_ij", Br, Bc); F("dP_ij", Br, Bc); F("D_i", Br, 1);
        break;
    case KERN_K_NAIVE_BWD_DQ:
        T("dS_ij", Br, Bc); T("K_j", Bc, d); F("dQ_i", Br, d);
        break;
    case KERN_K_NAIVE_BWD_DK:
        T("dS_ij", Br, Bc); T("Q_i", Br, d); F("dK_j", Bc, d);
        break;
    default:
        break;
    }
#undef T
#undef F
#undef C
    return n;
}

/* 1 for a kernel that takes some of its phase's buffers, not all: GQA's
 * group sums, one pass after the loops that the simulator runs through one
 * buffer of the backward's plan (sim_run.c's group_sum: dK_j, dV_j). */
static int carve_borrows(kern_kernel k)
{
    return k == KERN_K_GQA_SUM_DK || k == KERN_K_GQA_SUM_DV;
}

int kern_layout(kern_kernel k, int phase, const sim_plan *p, const sim_shape *sh,
                kern_smem_buf buf[SIM_MAX_BUFFERS], int *n, uint64_t *bytes, char *err,
                size_t errlen)
{
    carve c[SIM_MAX_BUFFERS];
    int nc = carve_list(k, p, sh, c), at = 0;
    uint64_t plan_bytes = 0;
    *n = 0;
    *bytes = 0;
    for (int b = 0; b < p->nbuf; b++) {
        const sim_buffer *pb = &p->buf[b];
        if (pb->phase != phase ||
            (carve_borrows(k) && (at >= nc || strcmp(pb->name, c[at].name) != 0)))
            continue;
        if (at >= nc || strcmp(pb->name, c[at].name) != 0 || pb->rows != c[at].rows ||
            pb->cols != c[at].cols || pb->elem_bytes != c[at].elem_bytes) {
            snprintf(err, errlen, "internal: %s's shared memory does not match the %s "
                     "plan at buffer %s (phase %d)", kern_kernel_name(k),
                     sim_algo_name(p->algo), pb->name, phase);
            return -1;
        }
        buf[at] = (kern_smem_buf){ pb->name, pb->rows, pb->cols, pb->elem_bytes,
                                   c[at].tile, 0, pb->bytes };
        plan_bytes += pb->bytes;
        at++;
    }
    if (at != nc) {
        snprintf(err, errlen, "internal: the %s plan lacks buffer %s that %s uses",
                 sim_algo_name(p->algo), c[at].name, kern_kernel_name(k));
        return -1;
    }
    /* The kernels' order (kern_carve): the fp32 buffers first, then the tiles
     * held in the dtype (2 or 4 B), each group in plan order. Offsets are
     * rounded up to the element size; with this order that never adds
     * padding, which the check below asserts. */
    uint64_t off = 0;
    for (int pass = 0; pass < 2; pass++)
        for (int b = 0; b < at; b++) {
            if (buf[b].tile != (pass == 1))
                continue;
            const uint64_t a = (uint64_t)buf[b].elem_bytes;
            off = (off + a - 1) / a * a;
            buf[b].offset = off;
            off += buf[b].bytes;
        }
    if (off != plan_bytes) {
        snprintf(err, errlen, "internal: %s's shared-memory layout takes %llu B, the %s "
                 "plan's buffers %llu B (phase %d): padding", kern_kernel_name(k),
                 (unsigned long long)off, sim_algo_name(p->algo),
                 (unsigned long long)plan_bytes, phase);
        return -1;
    }
    *n = at;
    *bytes = off;
    return 0;
}

/* The launch's shared memory in bytes: the layout's, which kern_layout has
 * checked to be the plan's bytes of the phase (of its buffers, for a kernel
 * that borrows some). */
static int smem_of(kern_kernel k, int phase, const sim_plan *p, const sim_shape *sh,
                   uint64_t *bytes, char *err, size_t errlen)
{
    kern_smem_buf buf[SIM_MAX_BUFFERS];
    int n;
    return kern_layout(k, phase, p, sh, buf, &n, bytes, err, errlen);
}

int kern_serves(sim_algo a)
{
    return a == SIM_NAIVE || a == SIM_FA1 || a == SIM_FA2;
}

int kern_serves_bwd(sim_algo a)
{
    return a == SIM_NAIVE || a == SIM_FA1 || a == SIM_FA2;
}

int kern_schedule_make(sim_algo a, const sim_plan *p, const sim_shape *sh,
                       kern_schedule *s, char *err, size_t errlen)
{
    memset(s, 0, sizeof *s);
    if (p->algo != a) {
        snprintf(err, errlen, "internal: a %s plan given for %s", sim_algo_name(p->algo),
                 sim_algo_name(a));
        return -1;
    }
    /* Every query head of the batch: the grid's y (FA1: its x). */
    const int64_t BH = sim_shape_B(sh) * sim_shape_H(sh);
    switch (a) {
    case SIM_NAIVE:
        if (p->run.pass == SIM_BWD) {       /* Algorithm 3, a launch per line */
            s->l[s->n++] = (kern_launch){ KERN_K_NAIVE_BWD_DV, p->Tc, BH, 1, 0 };
            s->l[s->n++] = (kern_launch){ KERN_K_NAIVE_BWD_DP, p->Tr, BH, 2, 0 };
            if (p->softmax_passes == 1)
                s->l[s->n++] = (kern_launch){ KERN_K_NAIVE_BWD_DS_ROWS,
                                              (sh->N + p->Bs_r - 1) / p->Bs_r, BH, 3, 0 };
            else
                s->l[s->n++] = (kern_launch){ KERN_K_NAIVE_BWD_DS_2PASS, p->Tr, BH, 3, 0 };
            s->l[s->n++] = (kern_launch){ KERN_K_NAIVE_BWD_DQ, p->Tr, BH, 4, 0 };
            s->l[s->n++] = (kern_launch){ KERN_K_NAIVE_BWD_DK, p->Tc, BH, 5, 0 };
            break;
        }
        s->l[s->n++] = (kern_launch){ KERN_K_NAIVE_SCORES, p->Tr, BH, 1, 0 };
        if (p->softmax_passes == 1)
            s->l[s->n++] = (kern_launch){ KERN_K_NAIVE_SOFTMAX_ROWS,
                                          (sh->N + p->Bs_r - 1) / p->Bs_r, BH, 2, 0 };
        else
            s->l[s->n++] = (kern_launch){ p->softmax_passes == 2 ? KERN_K_NAIVE_SOFTMAX_2PASS
                                                                : KERN_K_NAIVE_SOFTMAX_3PASS,
                                          p->Tr, BH, 2, 0 };
        s->l[s->n++] = (kern_launch){ KERN_K_NAIVE_PV, p->Tr, BH, 3, 0 };
        break;
    case SIM_FA1:       /* the backward: one launch too, dQ written at the last j */
        s->l[s->n++] = (kern_launch){ p->run.pass == SIM_BWD ? KERN_K_FA1_BWD : KERN_K_FA1, BH,
                                      1, 1, 0 };
        break;
    case SIM_FA2:
        if (p->run.pass == SIM_BWD) {       /* D, the key blocks, dQ_acc -> dQ */
            s->l[s->n++] = (kern_launch){ KERN_K_FA2_BWD_PRE, p->Tr, BH, 1, 0 };
            s->l[s->n++] = (kern_launch){ KERN_K_FA2_BWD, p->Tc, BH, 2, 0 };
            if (sim_inter_acc(&p->run, SIM_dQ) == SIM_dQacc)
                s->l[s->n++] = (kern_launch){ KERN_K_FA2_BWD_CONVERT, p->Tr, BH, 2, 0 };
        } else if (sim_run_S(&p->run) > 1) {       /* split-KV: partials, then their merge */
            s->l[s->n++] = (kern_launch){ KERN_K_FA2_SPLIT, sim_run_S(&p->run) * p->Tr, BH,
                                          1, 0 };
            s->l[s->n++] = (kern_launch){ KERN_K_FA2_COMBINE, p->Tr, BH, 2, 0 };
        } else {
            s->l[s->n++] = (kern_launch){ KERN_K_FA2, p->Tr, BH, 1, 0 };
        }
        break;
    default:
        snprintf(err, errlen, "unknown loop order");
        return -1;
    }
    /* GQA's backward: dK_exp, then dV_exp, summed over each group (sim_run.c's
     * group_sum) through the plan's dK_j, dV_j, in the phase that holds each. */
    if (p->run.pass == SIM_BWD && sim_shape_G(sh) < sim_shape_H(sh)) {
        const int64_t BG = sim_shape_B(sh) * sim_shape_G(sh);
        const kern_kernel ks[2] = { KERN_K_GQA_SUM_DK, KERN_K_GQA_SUM_DV };
        const char *bufs[2] = { "dK_j", "dV_j" };
        for (int x = 0; x < 2; x++) {
            int phase = 0;
            for (int b = 0; b < p->nbuf && !phase; b++)
                if (!strcmp(p->buf[b].name, bufs[x]))
                    phase = p->buf[b].phase;
            if (!phase) {
                snprintf(err, errlen, "internal: the %s plan lacks buffer %s that %s uses",
                         sim_algo_name(a), bufs[x], kern_kernel_name(ks[x]));
                return -1;
            }
            s->l[s->n++] = (kern_launch){ ks[x], p->Tc, BG, phase, 0 };
        }
    }
    for (int k = 0; k < s->n; k++)
        if (smem_of(s->l[k].k, s->l[k].phase, p, sh, &s->l[k].smem_bytes, err, errlen))
            return -1;
    /* The largest launch is the plan's peak (sram_peak: the largest phase). */
    uint64_t peak = 0;
    for (int k = 0; k < s->n; k++)
        peak = s->l[k].smem_bytes > peak ? s->l[k].smem_bytes : peak;
    if (peak != p->sram_peak) {
        snprintf(err, errlen, "internal: the %s kernels' largest shared memory is %llu B, "
                 "the plan's SRAM peak %llu B", sim_algo_name(a), (unsigned long long)peak,
                 (unsigned long long)p->sram_peak);
        return -1;
    }
    return 0;
}

const kern_limits kern_cpu_limits = {
    "the CPU path", KERN_CPU_MAX_GRID_X, KERN_CPU_MAX_GRID_Y, KERN_CPU_MAX_THREADS,
    KERN_CPU_MAX_SMEM,
};

int kern_check_limits(const kern_schedule *s, int threads, const kern_limits *lim, char *err,
                      size_t errlen)
{
    if (threads < 1 || threads > lim->threads) {
        snprintf(err, errlen, "%d threads per block: %s runs 1 to %d", threads, lim->who,
                 lim->threads);
        return -1;
    }
    for (int k = 0; k < s->n; k++) {
        const kern_launch *l = &s->l[k];
        const char *name = kern_kernel_name(l->k);
        if (l->grid > lim->grid_x)
            snprintf(err, errlen, "%s: a grid of %lld blocks in x, over the limit of %s, "
                     "%lld; use larger --Br", name, (long long)l->grid, lim->who,
                     (long long)lim->grid_x);
        else if (l->grid_y > lim->grid_y)
            snprintf(err, errlen, "%s: a grid of %lld blocks in y (batch x heads), over the "
                     "limit of %s, %lld; use fewer --batch or --heads", name,
                     (long long)l->grid_y, lim->who, (long long)lim->grid_y);
        else if (l->smem_bytes > lim->smem)
            snprintf(err, errlen, "%s: %llu B of shared memory per block (the plan's "
                     "buffers), over the limit of %s, %llu B; use a smaller --M or --Br/--Bc",
                     name, (unsigned long long)l->smem_bytes, lim->who,
                     (unsigned long long)lim->smem);
        else
            continue;
        return -1;
    }
    return 0;
}

/* ---- runs -------------------------------------------------------------------- */

void kern_result_free(kern_result *r)
{
    if (!r)
        return;
    free(r->O);
    free(r->L);
    free(r->m);
    free(r->l);
    free(r->dQ);
    free(r->dK);
    free(r->dV);
    r->O = r->L = r->m = r->l = r->dQ = r->dK = r->dV = NULL;
}

/* Host copies of the tensors of one run (the CPU backend's "global memory"). */
typedef struct {
    float *t[SIM_TENSOR_COUNT];
    int64_t n[SIM_TENSOR_COUNT];
    int *turn;               /* the backward's dQ_i turns (kern_params.dq_turn); else NULL */
    int64_t turns;
} host_tensors;

static void host_free(host_tensors *h)
{
    for (int t = 0; t < SIM_TENSOR_COUNT; t++)
        free(h->t[t]);
    free(h->turn);
    memset(h, 0, sizeof *h);
}

int kern_uses(sim_algo a, const sim_shape *sh, const sim_run_opts *run, sim_tensor t)
{
    const int split = a == SIM_FA2 && sim_run_S(run) > 1;
    if (run->pass == SIM_BWD && a == SIM_NAIVE)     /* kern_naive_bwd.cuh */
        switch (t) {
        case SIM_Q: case SIM_K: case SIM_V: case SIM_P: case SIM_dO: case SIM_dP:
        case SIM_dS: case SIM_dQ: case SIM_dK: case SIM_dV: return 1;
        case SIM_dKexp: case SIM_dVexp: return sim_gqa_grad(sh, SIM_dK) == SIM_dKexp;
        default: return 0;
        }
    if (run->pass == SIM_BWD)           /* kern_fa1_bwd.cuh, kern_fa2_bwd.cuh */
        switch (t) {
        case SIM_Q: case SIM_K: case SIM_V: case SIM_O: case SIM_dO: case SIM_dQ:
        case SIM_dK: case SIM_dV: return 1;
        case SIM_m: case SIM_l: return a == SIM_FA1;     /* the forward's statistics */
        case SIM_L: case SIM_D: return a == SIM_FA2;
        case SIM_dQacc: return sim_inter_acc(run, SIM_dQ) == SIM_dQacc;
        case SIM_dKexp: case SIM_dVexp: return sim_gqa_grad(sh, SIM_dK) == SIM_dKexp;
        default: return 0;
        }
    switch (t) {
    case SIM_Q: case SIM_K: case SIM_V: case SIM_O: return 1;
    case SIM_S: case SIM_P: return a == SIM_NAIVE;
    case SIM_m: case SIM_l: return a == SIM_FA1 || split;
    case SIM_Oacc: return a == SIM_FA1;
    case SIM_Ot: return split;
    case SIM_L: return a == SIM_FA2;
    default: return 0;
    }
}

int64_t kern_run_elems(const sim_shape *sh, const sim_run_opts *run, sim_tensor t)
{
    const int64_t n = kern_tensor_elems(sh, t);
    return t == SIM_Ot || t == SIM_m || t == SIM_l ? sim_run_S(run) * n : n;
}

int64_t kern_tensor_elems(const sim_shape *sh, sim_tensor t)
{
    const int64_t N = sh->N, N_k = sim_shape_Nk(sh), d = sh->d;
    const int64_t BH = sim_shape_B(sh) * sim_shape_H(sh), BG = sim_shape_B(sh) * sim_shape_G(sh);
    if (t == SIM_K || t == SIM_V || t == SIM_dK || t == SIM_dV)
        return BG * N_k * d;
    if (t == SIM_dKexp || t == SIM_dVexp)              /* GQA: per query head */
        return BH * N_k * d;
    return BH * ((t == SIM_S || t == SIM_P || t == SIM_dP || t == SIM_dS) ? N * N_k
                 : (t == SIM_Q || t == SIM_O || t == SIM_Oacc || t == SIM_Ot || t == SIM_dO ||
                    t == SIM_dQ || t == SIM_dQacc) ? N * d : N);
}

void kern_params_bind(kern_params *k, float *const t[SIM_TENSOR_COUNT], const sim_run_opts *run)
{
    k->Q = t[SIM_Q];
    k->K = t[SIM_K];
    k->V = t[SIM_V];
    k->O = t[SIM_O];
    k->S = t[SIM_S];
    k->P = t[SIM_P];
    k->m = t[SIM_m];
    k->l = t[SIM_l];
    k->L = t[SIM_L];
    k->Ot = t[SIM_Ot];
    k->Oacc = sim_inter_acc(run, SIM_O) == SIM_Oacc ? t[SIM_Oacc] : NULL;
    k->dO = t[SIM_dO];
    k->D = t[SIM_D];
    k->dQ = t[SIM_dQ];
    k->dK = t[SIM_dK];
    k->dV = t[SIM_dV];
    k->dQacc = sim_inter_acc(run, SIM_dQ) == SIM_dQacc ? t[SIM_dQacc] : NULL;
    k->dKexp = t[SIM_dKexp];             /* NULL unless G < H (kern_uses) */
    k->dVexp = t[SIM_dVexp];
    k->dP = t[SIM_dP];
    k->dS = t[SIM_dS];
}

static int host_alloc(host_tensors *h, sim_algo a, const sim_shape *sh, const sim_plan *p,
                      const float *Q, const float *K, const float *V, char *err,
                      size_t errlen)
{
    const sim_run_opts *run = &p->run;
    memset(h, 0, sizeof *h);
    if (run->pass == SIM_BWD) {
        h->turns = kern_turn_count(sh, p);
        if (!(h->turn = malloc((size_t)h->turns * sizeof *h->turn))) {
            snprintf(err, errlen, "out of memory for the backward's turns");
            return -1;
        }
    }
    for (int t = 0; t < SIM_TENSOR_COUNT; t++) {
        if (!kern_uses(a, sh, run, (sim_tensor)t))
            continue;
        h->n[t] = kern_run_elems(sh, run, (sim_tensor)t);
        h->t[t] = malloc((size_t)h->n[t] * sizeof(float));
        if (!h->t[t]) {
            snprintf(err, errlen, "out of memory for tensor %s of the kernel run",
                     sim_tensor_name((sim_tensor)t));
            host_free(h);
            return -1;
        }
    }
    const float *in[3] = { Q, K, V };
    for (int t = 0; t < 3; t++) {
        memcpy(h->t[t], in[t], (size_t)h->n[t] * sizeof(float));
        sim_round_to_dtype(h->t[t], h->n[t], sh->dtype);   /* as sim_run places them */
    }
    return 0;
}


void kern_result_finish(kern_result *out, const kern_schedule *s, const sim_plan *p,
                        const kern_counts *cnt, double *times, int repeat, int threads)
{
    kern_counts_to_sim(cnt, &out->counts);
    out->seconds = kern_median(times, repeat);
    out->runs = repeat;
    out->threads = threads;
    out->launches = s->n;
    for (int k = 0; k < s->n; k++) {
        const kern_launch *l = &s->l[k];
        if (l->grid * l->grid_y > out->grid_x * out->grid_y) {
            out->grid_x = l->grid;
            out->grid_y = l->grid_y;
        }
        out->blocks += l->grid * l->grid_y;
        if (l->smem_bytes > out->smem_bytes)
            out->smem_bytes = l->smem_bytes;
    }
    out->plan_bytes = p->sram_peak;
}

static int check_plan(const sim_plan *p, const sim_shape *sh, char *err, size_t errlen)
{
    if (!p->fits && p->kind != SIM_PLAN_PAPER) {
        sim_plan_explain_misfit(p, sh, err, errlen);
        return -1;
    }
    if (sim_shape_Nk(sh) > INT32_MAX || sh->d > INT32_MAX) {
        snprintf(err, errlen, "N_k and d must fit in 32 bits for the kernels");
        return -1;
    }
    if (p->run.group || p->run.page > 0 ||
        (p->run.pass != SIM_FWD && !(p->run.pass == SIM_BWD && kern_serves_bwd(p->algo))) ||
        (sim_run_S(&p->run) > 1 && (p->algo != SIM_FA2 || p->run.pass != SIM_FWD))) {
        snprintf(err, errlen, "the kernels run the forward pass and the three loop orders' "
                 "backward, ungrouped and unpaged, split only in FA2's forward; the "
                 "simulator runs the rest");
        return -1;
    }
    if (sim_dtype_is_fp8(sh->dtype)) {   /* kern_tile.h holds 2- and 4-byte tiles only */
        snprintf(err, errlen, "the kernels run fp16, bf16 and fp32, not %s",
                 sim_dtype_name(sh->dtype));
        return -1;
    }
    return 0;
}

int kern_prelude(sim_algo a, const sim_shape *sh, const sim_plan *p, sim_pass pass,
                 const kern_options *opt, const kern_limits *lim, int default_threads,
                 kern_result *out, kern_schedule *s, int *threads, int *repeat, char *err,
                 size_t errlen)
{
    memset(out, 0, sizeof *out);
    if (check_plan(p, sh, err, errlen))
        return -1;
    if (p->run.pass != pass) {
        snprintf(err, errlen, "internal: a %s plan given to the %s's run",
                 pass == SIM_FWD ? "backward" : "forward", pass == SIM_FWD ? "forward" : "backward");
        return -1;
    }
    if (kern_schedule_make(a, p, sh, s, err, errlen))
        return -1;
    *threads = opt && opt->threads ? opt->threads : default_threads;
    *repeat = opt && opt->repeat > 0 ? opt->repeat : 1;
    return kern_check_limits(s, *threads, lim, err, errlen) ? -1 : 0;
}

int kern_writes(sim_pass pass, sim_tensor t)
{
    if (pass == SIM_BWD)
        return t == SIM_D || t == SIM_dQ || t == SIM_dK || t == SIM_dV || t == SIM_dQacc ||
               t == SIM_dKexp || t == SIM_dVexp || t == SIM_dP || t == SIM_dS;
    return t >= SIM_O;
}

void kern_outs_make(sim_algo a, const sim_shape *sh, sim_pass pass, kern_result *out,
                    kern_outs *o)
{
    memset(o, 0, sizeof *o);
    if (pass == SIM_BWD) {
        const sim_tensor t[3] = { SIM_dQ, SIM_dK, SIM_dV };
        float **dst[3] = { &out->dQ, &out->dK, &out->dV };
        for (; o->n < 3; o->n++) {
            o->t[o->n] = t[o->n];
            o->dst[o->n] = dst[o->n];
        }
    } else {
        o->t[o->n] = SIM_O;
        o->dst[o->n++] = &out->O;
        if (a == SIM_FA2) {
            o->t[o->n] = SIM_L;
            o->dst[o->n++] = &out->L;
        } else if (a == SIM_FA1) {           /* what FA1's backward reads */
            o->t[o->n] = SIM_m;
            o->dst[o->n++] = &out->m;
            o->t[o->n] = SIM_l;
            o->dst[o->n++] = &out->l;
        }
    }
    for (int k = 0; k < o->n; k++) {
        o->elems[k] = kern_tensor_elems(sh, o->t[k]);
        o->checked[k] = 1;
    }
}

int kern_outs_keep(const kern_outs *o, sim_algo a, int run, float *const src[3], char *err,
                   size_t errlen)
{
    for (int k = 0; k < o->n; k++) {
        const size_t bytes = (size_t)o->elems[k] * sizeof(float);
        if (run == 0) {
            if (!(*o->dst[k] = malloc(bytes))) {
                snprintf(err, errlen, "out of memory for the kernel's results");
                return -1;
            }
            memcpy(*o->dst[k], src[k], bytes);
        } else if (o->checked[k] && memcmp(*o->dst[k], src[k], bytes) != 0) {
            snprintf(err, errlen, "%s: the %s of timed run %d differs from the counted run's: "
                     "the kernel has a race", sim_algo_name(a), sim_tensor_name(o->t[k]), run);
            return -1;
        }
    }
    return 0;
}

/* The CPU path's runs of either pass: poison what the pass writes, launch
 * the schedule (the launch that takes turns in the block order `order`),
 * keep run 0's outputs and counts, compare the timed runs'. */
static int cpu_runs(const kern_cpu_table *tab, sim_algo a, const kern_schedule *s,
                    sim_pass pass, host_tensors *h, kern_params kp, const int64_t *order,
                    int threads, int repeat, const kern_outs *o, kern_counts *cnt,
                    double *times, char *err, size_t errlen)
{
    memset(cnt, 0, sizeof *cnt);
    for (int run = 0; run <= repeat; run++) {
        for (int t = 0; t < SIM_TENSOR_COUNT; t++)
            if (h->t[t] && kern_writes(pass, (sim_tensor)t))
                kern_poison(h->t[t], h->n[t]);
        if (kp.dq_turn)
            memset(kp.dq_turn, 0xff, (size_t)h->turns * sizeof *kp.dq_turn);
        kp.cnt = run == 0 ? cnt : NULL;      /* run 0 counts; the timed runs do not */
        double t0 = kern_now_seconds();
        for (int k = 0; k < s->n; k++)
            if (kern_cpu_launch_order(tab->fn[s->l[k].k], kp, s->l[k].grid, s->l[k].grid_y,
                                      threads, s->l[k].smem_bytes,
                                      kern_kernel_turns(s->l[k].k) ? order : NULL, err, errlen))
                return -1;
        double dt = kern_now_seconds() - t0;
        float *src[3] = { NULL, NULL, NULL };
        for (int k = 0; k < o->n; k++)
            src[k] = h->t[o->t[k]];
        if (kern_outs_keep(o, a, run, src, err, errlen))
            return -1;
        if (run > 0)
            times[run - 1] = dt;
    }
    return 0;
}

/* kern_run_cpu_table; with keep not NULL a successful run also hands over
 * its global tensors (the backward reads O and the statistics from them;
 * free with host_free). */
static int cpu_forward(const kern_cpu_table *tab, sim_algo a, const sim_shape *sh,
                       const sim_plan *p, const float *Q, const float *K, const float *V,
                       const kern_options *opt, kern_result *out, host_tensors *keep,
                       char *err, size_t errlen)
{
    kern_schedule s;
    int threads, repeat;
    if (kern_prelude(a, sh, p, SIM_FWD, opt, &kern_cpu_limits, KERN_CPU_DEFAULT_THREADS, out,
                     &s, &threads, &repeat, err, errlen))
        return -1;
    host_tensors h;
    if (host_alloc(&h, a, sh, p, Q, K, V, err, errlen))
        return -1;
    kern_params kp = kern_params_make(sh, p);
    kern_params_bind(&kp, h.t, &p->run);
    double *times = malloc((size_t)repeat * sizeof *times);
    kern_outs o;
    kern_outs_make(a, sh, SIM_FWD, out, &o);
    kern_counts cnt;
    int rc = 0;
    if (!times) {
        snprintf(err, errlen, "out of memory for the kernel's results");
        rc = -1;
    } else {
        rc = cpu_runs(tab, a, &s, SIM_FWD, &h, kp, NULL, threads, repeat, &o, &cnt, times,
                      err, errlen);
    }
    if (rc == 0)
        kern_result_finish(out, &s, p, &cnt, times, repeat, threads);
    free(times);
    if (keep && rc == 0)
        *keep = h;
    else
        host_free(&h);
    if (rc)
        kern_result_free(out);
    return rc;
}

int kern_run_cpu_table(const kern_cpu_table *tab, sim_algo a, const sim_shape *sh,
                       const sim_plan *p, const float *Q, const float *K, const float *V,
                       const kern_options *opt, kern_result *out, char *err, size_t errlen)
{
    return cpu_forward(tab, a, sh, p, Q, K, V, opt, out, NULL, err, errlen);
}

/* ---- the backward ------------------------------------------------------------ */

const char *kern_dq_mode_name(kern_dq_mode m)
{
    return m == KERN_DQ_ATOMIC ? "atomic" : m == KERN_DQ_DETERMINISTIC ? "deterministic" : "?";
}

int kern_dq_mode_parse(const char *s, kern_dq_mode *out)
{
    for (int m = 0; s && m < KERN_DQ_COUNT; m++)
        if (!strcmp(s, kern_dq_mode_name((kern_dq_mode)m))) {
            *out = (kern_dq_mode)m;
            return 0;
        }
    return -1;
}

/* splitmix64: the shuffle's generator (any fixed one would do). */
static uint64_t order_next(uint64_t *st)
{
    uint64_t z = (*st += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

void kern_block_order(int64_t grid, int64_t grid_y, uint64_t seed, kern_dq_mode mode,
                      int64_t *order)
{
    const int64_t n = grid * grid_y;
    for (int64_t k = 0; k < n; k++)
        order[k] = k;
    if (seed == 0)
        return;
    uint64_t st = seed;
    for (int64_t k = n - 1; k > 0; k--) {                /* Fisher-Yates */
        const int64_t r = (int64_t)(order_next(&st) % (uint64_t)(k + 1)), t = order[k];
        order[k] = order[r];
        order[r] = t;
    }
    if (mode != KERN_DQ_DETERMINISTIC)
        return;
    /* Head y's blocks, in the places the shuffle gave them, in ascending x:
     * the next of head y to run is block next[y]. */
    int64_t *next = calloc((size_t)grid_y, sizeof *next);
    if (!next) {                     /* the grid's own order is also j ascending */
        for (int64_t k = 0; k < n; k++)
            order[k] = k;
        return;
    }
    for (int64_t k = 0; k < n; k++) {
        const int64_t y = order[k] / grid;
        order[k] = y * grid + next[y]++;
    }
    free(next);
}

int kern_bwd_forward_plan(sim_algo a, const sim_shape *sh, const sim_plan *p, sim_plan *fp,
                          char *err, size_t errlen)
{
    sim_run_opts fwd = p->run;
    fwd.pass = SIM_FWD;
    if (sim_plan_make(a, sh, &fwd, p->Br, p->Bc, SIM_PLAN_AUTO, fp) != 0) {
        snprintf(err, errlen, "internal: no forward plan for the backward's blocks");
        return -1;
    }
    fp->fits = 1;
    return 0;
}

int64_t kern_turn_count(const sim_shape *sh, const sim_plan *p)
{
    return sim_shape_B(sh) * sim_shape_H(sh) * p->Tr;
}

int kern_run_bwd_cpu_table(const kern_cpu_table *tab, sim_algo a, const sim_shape *sh,
                           const sim_plan *p, const float *Q, const float *K, const float *V,
                           const float *dO, const kern_options *opt, kern_result *out,
                           char *err, size_t errlen)
{
    kern_schedule s;
    int threads, repeat;
    if (kern_prelude(a, sh, p, SIM_BWD, opt, &kern_cpu_limits, KERN_CPU_DEFAULT_THREADS, out,
                     &s, &threads, &repeat, err, errlen))
        return -1;
    const kern_dq_mode mode = opt ? opt->dq_mode : KERN_DQ_DETERMINISTIC;

    /* The forward with the same blocks, as sim_run's backward runs it first. */
    sim_plan fp;
    if (kern_bwd_forward_plan(a, sh, p, &fp, err, errlen))
        return -1;
    kern_options fo = { threads, 1, KERN_DQ_DETERMINISTIC, 0 };
    kern_result fr;
    host_tensors fh;
    if (cpu_forward(tab, a, sh, &fp, Q, K, V, &fo, &fr, &fh, err, errlen))
        return -1;

    host_tensors h;
    int rc = host_alloc(&h, a, sh, p, Q, K, V, err, errlen);
    if (rc) {
        host_free(&fh);
        kern_result_free(&fr);
        host_free(&fh);
        return -1;
    }
    /* What the backward reads of the forward's: P (naive), O and L (FA2), or
     * O, m and l (FA1). */
    const sim_tensor kept[5] = { SIM_P, SIM_O, SIM_L, SIM_m, SIM_l };
    for (int k = 0; k < 5; k++)
        if (h.t[kept[k]])
            memcpy(h.t[kept[k]], fh.t[kept[k]], (size_t)h.n[kept[k]] * sizeof(float));
    host_free(&fh);
    memcpy(h.t[SIM_dO], dO, (size_t)h.n[SIM_dO] * sizeof(float));
    sim_round_to_dtype(h.t[SIM_dO], h.n[SIM_dO], sh->dtype);
    out->O = fr.O;
    out->L = fr.L;
    out->m = fr.m;
    out->l = fr.l;
    kern_params kp = kern_params_make(sh, p);
    kern_params_bind(&kp, h.t, &p->run);
    kp.dq_turn = h.turn;
    kp.dq_atomic = mode == KERN_DQ_ATOMIC;

    kern_outs o;
    kern_outs_make(a, sh, SIM_BWD, out, &o);
    double *times = malloc((size_t)repeat * sizeof *times);
    /* FA2's key-block grid runs in the order of opt (kern_block_order); FA1's
     * blocks each hold a whole head, whose dQ no other block adds to. */
    int64_t *order = NULL;
    int ordered = 0;                 /* a launch takes turns (one per schedule) */
    for (int k = 0; k < s.n; k++)
        if (kern_kernel_turns(s.l[k].k) && (ordered = 1) &&
            (order = malloc((size_t)(s.l[k].grid * s.l[k].grid_y) * sizeof *order)))
            kern_block_order(s.l[k].grid, s.l[k].grid_y, opt ? opt->block_order_seed : 0,
                             mode, order);
    kern_counts cnt;
    if (!times || (ordered && !order)) {
        snprintf(err, errlen, "out of memory for the kernel's results");
        rc = -1;
    } else {
        rc = cpu_runs(tab, a, &s, SIM_BWD, &h, kp, order, threads, repeat, &o, &cnt, times,
                      err, errlen);
    }
    if (rc == 0)
        kern_result_finish(out, &s, p, &cnt, times, repeat, threads);
    free(order);
    free(times);
    host_free(&h);
    if (rc)
        kern_result_free(out);
    return rc;
}

#ifdef FASIM_HAVE_CUDA
/* Copies of the inputs src[0 .. n - 1] (tensors ts[]) rounded to the dtype,
 * as host_alloc rounds them: what the CUDA backend takes. Returns 0, or -1
 * (err set; whatever was allocated freed). */
static int rounded_inputs(const sim_shape *sh, int n, const sim_tensor *ts,
                          const float *const *src, float **in, char *err, size_t errlen)
{
    for (int t = 0; t < n; t++)
        in[t] = NULL;
    for (int t = 0; t < n; t++) {
        const int64_t m = kern_tensor_elems(sh, ts[t]);
        if (!(in[t] = malloc((size_t)m * sizeof(float)))) {
            for (int u = 0; u < t; u++)
                free(in[u]);
            snprintf(err, errlen, "out of memory for the kernel's inputs");
            return -1;
        }
        memcpy(in[t], src[t], (size_t)m * sizeof(float));
        sim_round_to_dtype(in[t], m, sh->dtype);
    }
    return 0;
}
#endif

int kern_run_bwd(kern_backend b, sim_algo a, const sim_shape *sh, const sim_plan *p,
                 const float *Q, const float *K, const float *V, const float *dO,
                 const kern_options *opt, kern_result *out, char *err, size_t errlen)
{
    memset(out, 0, sizeof *out);
    if (b == KERN_CPU)
        return kern_run_bwd_cpu_table(&kern_cpu_kernels, a, sh, p, Q, K, V, dO, opt, out,
                                      err, errlen);
    if (!kern_cuda_available(err, errlen))
        return -1;
    if (opt && opt->block_order_seed) {
        snprintf(err, errlen, "--block-order-seed orders the CPU path's blocks; on a GPU the "
                 "hardware orders them: drop it, or use --backend cpu");
        return -1;
    }
    if (a == SIM_NAIVE) {       /* kern_cuda_run_bwd takes O, L, m, l, not P, from its forward */
        snprintf(err, errlen, "standard attention's backward kernels run on the CPU path so "
                 "far (the CUDA run does not keep the forward's P): use --backend cpu");
        return -1;
    }
#ifdef FASIM_HAVE_CUDA
    if (check_plan(p, sh, err, errlen))
        return -1;
    const sim_tensor ts[4] = { SIM_Q, SIM_K, SIM_V, SIM_dO };
    const float *const src[4] = { Q, K, V, dO };
    float *in[4];
    if (rounded_inputs(sh, 4, ts, src, in, err, errlen))
        return -1;
    int rc = kern_cuda_run_bwd(a, sh, p, in[0], in[1], in[2], in[3], opt, out, err, errlen);
    for (int t = 0; t < 4; t++)
        free(in[t]);
    return rc;
#else
    return -1;
#endif
}

int kern_cuda_available(char *err, size_t errlen)
{
#ifdef FASIM_HAVE_CUDA
    return kern_cuda_probe(err, errlen);
#else
    snprintf(err, errlen, "this fasim was built without CUDA: use --backend cpu "
             "(the same kernel source on the CPU), or rebuild where nvcc is found");
    return 0;
#endif
}

int kern_run(kern_backend b, sim_algo a, const sim_shape *sh, const sim_plan *p,
             const float *Q, const float *K, const float *V, const kern_options *opt,
             kern_result *out, char *err, size_t errlen)
{
    if (b == KERN_CPU)
        return kern_run_cpu_table(&kern_cpu_kernels, a, sh, p, Q, K, V, opt, out, err,
                                  errlen);
    memset(out, 0, sizeof *out);
    if (!kern_cuda_available(err, errlen))
        return -1;
#ifdef FASIM_HAVE_CUDA
    if (check_plan(p, sh, err, errlen))
        return -1;
    /* The CUDA backend takes inputs already rounded, as host_alloc rounds them. */
    const sim_tensor ts[3] = { SIM_Q, SIM_K, SIM_V };
    const float *const src[3] = { Q, K, V };
    float *in[3];
    if (rounded_inputs(sh, 3, ts, src, in, err, errlen))
        return -1;
    int rc = kern_cuda_run(a, sh, p, in[0], in[1], in[2], opt, out, err, errlen);
    for (int t = 0; t < 3; t++)
        free(in[t]);
    return rc;
#else
    return -1;
#endif
}
