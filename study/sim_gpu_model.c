/*
 * sim_gpu_model.c — a whole GPU in time (see sim_gpu_model.h).
 *
 * Three stages:
 *   1. the template: one head run in the two-level model, count-only, its
 *      loads and stores cut into kernels, thread blocks and tile steps by
 *      the loop order's grid (sim_loop.grid);
 *   2. the launch: each kernel's grid, threads, resident blocks per SM
 *      (occupancy) and waves, checked against the preset's limits;
 *   3. the replay: every head's blocks dispatched to the SMs in block-index
 *      order, their tile steps taken in time order (a heap of blocks by the
 *      time of their next step), each step's tiles looked up in the L2, its
 *      time charged as sim_gpu_model.h says.
 */
#include "sim_gpu_model.h"
#include "sim_gpu_fa3.h"
#include "sim_loop.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---- the constants -------------------------------------------------------
 * The model's only efficiency constants. Everything else is a preset's
 * number with its source (sim_presets.c).
 *   tensor_eff: the fraction of the tensor-core peak an mma.sync loop
 *     reaches on operands in shared memory and registers; FITTED on the
 *     FlashAttention-2 paper's Figure 4, FA2 forward + backward, not causal,
 *     d = 128, N = 4k, 8k and 16k on A100 80GB (the long sequences, where the
 *     kernel is bound by its products) and frozen by tests/test_gpu_model.c.
 *     Every other published figure is judged on it (bench/published/).
 *   dram_eff: the fraction of the datasheet's DRAM bandwidth a streaming
 *     kernel sustains: 0.90, not fitted, the ratio NVIDIA's own bandwidth
 *     test reaches on A100 (about 1.8 of 2.0 TB/s, [CUDA-SAMPLES]
 *     bandwidthTest figures quoted in [MB-A100]).
 *   launch_s: the gap between two kernels launched back to back on one
 *     stream: 4 us, not fitted ([MB-A100] reports kernel launch overheads of
 *     a few microseconds on A100).
 *   phase_cycles: the clocks each dependent phase of a sliced-K tile step
 *     (sim_gm_step_phases: a product, a barrier) leaves exposed when one
 *     block holds the SM; FITTED on the FlashAttention-2 paper's Figure 4,
 *     FlashAttention (v1) forward + backward, not causal, d = 64, N = 512 to
 *     16k on A100 80GB (bench/published/gpu-figures.tsv, its fit column), the
 *     multiple of 10 clocks with the least geometric-mean error there, and
 *     frozen by tests/test_gpu_model.c. No published figure was found for
 *     it: the microbenchmark papers searched give instruction latencies of
 *     tens of clocks, and 170 is more than one mma.sync plus one barrier, so
 *     it stands for a phase's whole exposed tail (the slowest warp's chain
 *     of dependent mma.sync, the barrier, the restart). */
/*   framework_dram_eff: the fraction of the datasheet's DRAM bandwidth a
 *     framework's attention reaches, kernel by kernel (the unfused
 *     baseline: PyTorch's GEMMs with k = d writing an N x N_k output, its
 *     softmax, its copies), in place of dram_eff; FITTED on the
 *     FlashAttention-2 paper's Figure 4, PyTorch forward + backward, not
 *     causal, d = 64, N = 512 to 8k on A100 80GB (bench/published/
 *     gpu-figures.tsv, its fit column; the multiple of 0.01 with the least
 *     geometric-mean error there, 1.5%) and frozen by tests/test_gpu_model.c.
 *     Its operations' bytes are counted (unfused/fa2bench: 11 N^2 + 26 N d
 *     elements a head), so it is a rate alone; on those rows the published
 *     figures imply 0.55 to 0.56 of 2.04 TB/s at every N. No figure found
 *     gives it; it stands for the kernels' own shortfall (a GEMM whose
 *     k = d is too short to hide its epilogue's stores, launches between
 *     short kernels). */
static const sim_gm_constants CONSTANTS = {
    .tensor_eff = 0.74,
    .dram_eff = 0.90,
    .framework_dram_eff = 0.60,
    .launch_s = 4e-6,
    .phase_cycles = 170,
};

sim_gm_constants sim_gpu_model_constants(void)
{
    return CONSTANTS;
}

const char *sim_gm_bound_name(sim_gm_bound b)
{
    static const char *const NAMES[SIM_GM_BOUND_COUNT] = {
        "tensor cores", "FP32", "exp (SFU)", "shared memory", "DRAM", "L2", "latency",
    };
    return (unsigned)b < SIM_GM_BOUND_COUNT ? NAMES[b] : "?";
}

/* ---- stage 1: the template ----------------------------------------------- */

typedef struct {
    int16_t tensor;
    uint8_t store;
    uint8_t reread;        /* a load of a tile its block loaded before in the same
                              kernel (SIM_LOOP_FRAMEWORK only) */
    int32_t qh;            /* a group sum's: the query head in the group */
    int64_t r0, c0;
    uint64_t bytes;
} gm_access;

typedef struct {
    int kernel;            /* index into the template's kernels */
    int64_t block;         /* thread block within one head */
    int64_t first, n;      /* its accesses */
    int64_t i, j;          /* the block pair it works on (-1: outside that loop) */
    double area;           /* scores computed in this step (0: none) */
    int64_t order;         /* event order, for a stable sort */
    int64_t prev;          /* SIM_LOOP_FRAMEWORK: the block's last step before at
                              the same (i, j), in event order; -1: none */
} gm_step;

typedef struct {
    int line;              /* the aux kernel's pseudocode line; -1: main;
                              GM_GROUP_SUM: GQA's group sum */
    char name[32];
    int64_t blocks;        /* per head: 1 + the largest block index seen */
    int per_kv;            /* 1: its blocks run per key/value head (B G heads):
                              GQA's group sum */
} gm_tkernel;

#define GM_GROUP_SUM (-2)

typedef struct {
    const sim_loop *loop;
    const sim_plan *p;
    int64_t Br, Bc;        /* the plan's block sizes */
    gm_access *acc;
    int64_t nacc, capacc;
    gm_step *steps;
    int64_t nsteps, capsteps;
    gm_tkernel kern[SIM_GM_MAX_KERNELS];
    int nkern;
    int64_t splits;        /* FA1's splits of a head (SIM_GRID_HEAD_SPLIT_Q,
                              SIM_GRID_HEAD_OR_COLS); 1: none */
    int cur;               /* the step being filled, -1: none */
    int failed;            /* out of memory, or too many kernels */
    int gqa;               /* a backward with G < H: dK, dV go to dK_exp, dV_exp */
    /* SIM_LOOP_FRAMEWORK: per key block j, the last step at j of the
     * current run of one (kernel, block), and that run's number */
    int64_t *last_j, *last_run, run;
} gm_template;

static int grow(void **p, int64_t *cap, int64_t need, size_t size)
{
    if (need <= *cap)
        return 0;
    int64_t c = *cap ? *cap * 2 : 1024;
    while (c < need)
        c *= 2;
    void *q = realloc(*p, (size_t)c * size);
    if (!q)
        return -1;
    *p = q;
    *cap = c;
    return 0;
}

/* The kernel an event belongs to: the main one (the grid's loop), or one of
 * its own per pseudocode line outside it. Returns its index, -1 when full. */
static int kernel_of(gm_template *t, const sim_event *ev, int main_kernel)
{
    const int line = main_kernel ? -1 : ev->line;
    for (int k = 0; k < t->nkern; k++)
        if (t->kern[k].line == line)
            return k;
    if (t->nkern == SIM_GM_MAX_KERNELS)
        return -1;
    gm_tkernel *k = &t->kern[t->nkern];
    k->line = line;
    k->blocks = 0;
    k->per_kv = 0;
    if (main_kernel) {
        snprintf(k->name, sizeof k->name, "%s", t->loop->name);
    } else {
        /* The line's own text names the kernel: "D = rowsum(dO o O)". */
        const char *text = "?";
        for (int c = 0; c < t->loop->ncode; c++)
            if (t->loop->code[c].line == ev->line) {
                text = t->loop->code[c].text;
                break;
            }
        snprintf(k->name, sizeof k->name, "line %d: %s", ev->line, text);
    }
    return t->nkern++;
}

/* Which kernel and blocks an event belongs to: the main kernel (the grid's
 * loop) or one of its own for its line; *nblocks blocks from *block on (more
 * than one: FA1's K_j, V_j, which every split of a head loads). */
static void place(const gm_template *t, const sim_event *ev, int *main_kernel, int64_t *block,
                  int64_t *nblocks)
{
    const sim_tensor_info *ti = ev->kind == SIM_EV_LINE ? NULL : sim_tensor_about(ev->tensor);
    const int64_t row_block = !ti ? 0 : ti->kv ? ev->r0 / t->Bc : ev->r0 / t->Br;
    *main_kernel = 0;
    *block = ev->i >= 0 ? ev->i : row_block;
    *nblocks = 1;
    sim_grid grid = t->loop->grid;
    if (grid == SIM_GRID_HEAD_OR_COLS)
        grid = t->splits > 1 ? SIM_GRID_COLS : SIM_GRID_HEAD;
    switch (grid) {
    case SIM_GRID_HEAD:
        *main_kernel = 1;
        *block = 0;
        return;
    case SIM_GRID_HEAD_SPLIT_Q:
        *main_kernel = 1;
        if (ev->i >= 0) {
            *block = ev->i % t->splits;
        } else if (ev->j >= 0) {
            *block = 0;                 /* K_j, V_j: every split loads them */
            *nblocks = t->splits;
        } else {
            *block = row_block % t->splits;
        }
        return;
    case SIM_GRID_ROWS:
        if (ev->i >= 0) {
            *main_kernel = 1;
            *block = ev->i;
        }
        return;
    case SIM_GRID_COLS:
    case SIM_GRID_HEAD_OR_COLS:
        if (ev->j >= 0) {
            *main_kernel = 1;
            *block = ev->j;
        }
        return;
    case SIM_GRID_SPLITS:
        if (ev->split >= 0 && ev->i >= 0 &&
            !(t->loop->merge_line && ev->line >= t->loop->merge_line)) {
            *main_kernel = 1;
            *block = ev->i + t->p->Tr * ev->split;   /* grid (T_r, S, B H) */
        }
        return;
    case SIM_GRID_PER_LINE:
        return;
    }
}

/* The bytes of the rows PyTorch's softmax kernel over long rows holds at
 * once on g: SoftMax_getBlockSize (aten/src/ATen/native/cuda/SoftMax.cu)
 * gives a row's block the smallest power of two of threads at least half of
 * min(N_k / ILP, 1024), and at least a warp, ILP = 16 bytes / the element's;
 * an SM holds max_threads_per_sm / that many of them, at most
 * max_blocks_per_sm. */
static double framework_rows_in_flight(const sim_gpu *g, const sim_shape *sh)
{
    const uint64_t Nk = (uint64_t)sim_shape_Nk(sh);
    const uint64_t e = (uint64_t)sim_tensor_bytes(SIM_S, sh->dtype);
    const uint64_t ilp = e < 16 ? 16 / e : 1;
    uint64_t most = Nk / ilp < 1024 ? Nk / ilp : 1024, threads = 1;
    if (ilp > 1)
        most /= 2;
    while (threads < most)
        threads *= 2;
    if (threads < 32)
        threads = 32;
    uint64_t per_sm = (uint64_t)g->max_threads_per_sm / threads;
    if (per_sm > (uint64_t)g->max_blocks_per_sm)
        per_sm = (uint64_t)g->max_blocks_per_sm;
    if (per_sm < 1)
        per_sm = 1;
    return (double)g->sms * (double)per_sm * (double)(Nk * e);
}

/* Whether step s loads the tile a loads. */
static int loaded_in(const gm_template *t, const gm_step *s, const gm_access *a)
{
    for (int64_t x = s->first; x < s->first + s->n; x++) {
        const gm_access *b = &t->acc[x];
        if (!b->store && b->tensor == a->tensor && b->r0 == a->r0 && b->c0 == a->c0 &&
            b->qh == a->qh)
            return 1;
    }
    return 0;
}

/* Add event ev to thread block `block` of kernel k. */
static void add(gm_template *t, const sim_event *ev, int k, int64_t block)
{
    if (block + 1 > t->kern[k].blocks)
        t->kern[k].blocks = block + 1;
    const int pair = ev->i >= 0 && ev->j >= 0;
    gm_step *s = t->cur >= 0 ? &t->steps[t->cur] : NULL;
    /* A new step: another kernel, block, or block pair (i, j); or an access
     * that cannot extend the step's run of accesses. */
    const int access = ev->kind != SIM_EV_LINE;
    if (!s || s->kernel != k || s->block != block || s->i != ev->i || s->j != ev->j ||
        (access && s->first + s->n != t->nacc)) {
        if (t->last_j && (!s || s->kernel != k || s->block != block))
            t->run++;
        if (grow((void **)&t->steps, &t->capsteps, t->nsteps + 1, sizeof *t->steps)) {
            t->failed = 1;
            return;
        }
        s = &t->steps[t->nsteps];
        *s = (gm_step){ .kernel = k, .block = block, .i = ev->i, .j = ev->j, .first = t->nacc,
                        .n = 0, .area = 0, .order = t->nsteps, .prev = -1 };
        if (t->last_j && ev->j >= 0 && ev->j < t->p->Tc) {
            if (t->last_run[ev->j] == t->run)
                s->prev = t->last_j[ev->j];
            t->last_j[ev->j] = t->nsteps;
            t->last_run[ev->j] = t->run;
        }
        t->cur = (int)t->nsteps++;
    }
    if (pair && s->area == 0) {
        const int64_t rows = ev->i * t->Br + t->Br <= t->p->sh.N ? t->Br
                                                                  : t->p->sh.N - ev->i * t->Br;
        const int64_t Nk = sim_shape_Nk(&t->p->sh);
        const int64_t cols = ev->j * t->Bc + t->Bc <= Nk ? t->Bc : Nk - ev->j * t->Bc;
        s->area = (double)rows * (double)cols;
    }
    if (!access)
        return;
    if (grow((void **)&t->acc, &t->capacc, t->nacc + 1, sizeof *t->acc)) {
        t->failed = 1;
        return;
    }
    /* The template is one head, so MHA's: with G < H a query head's dK, dV
     * are its dK_exp, dV_exp (sim_gqa_grad), the same bytes. */
    sim_tensor tensor = ev->tensor;
    if (t->gqa && (tensor == SIM_dK || tensor == SIM_dV))
        tensor = tensor == SIM_dK ? SIM_dKexp : SIM_dVexp;
    const int store = ev->kind == SIM_EV_STORE;
    t->acc[t->nacc] = (gm_access){ .tensor = (int16_t)tensor, .store = (uint8_t)store,
                                   .r0 = ev->r0, .c0 = ev->c0, .bytes = ev->bytes };
    if (t->last_j && !store)
        t->acc[t->nacc].reread = (uint8_t)(loaded_in(t, s, &t->acc[t->nacc]) ||
                                           (s->prev >= 0 &&
                                            loaded_in(t, &t->steps[s->prev], &t->acc[t->nacc])));
    t->nacc++;
    s->n++;
}

/* GQA's backward (sim_gqa_grad): after the loop order's kernels, flash-attn's
 * mha_bwd sums each group's dk_expanded, then dv_expanded, with at::sum_out:
 * two launches of their own, which sim_run's group_sum counts. Each is a
 * kernel here as the lines outside a loop are (128 threads, no shared
 * memory, its time its transfers), with one block per key block j of each
 * key/value head (grid T_c x B x G): that block reads the B_c rows of its
 * H/G query heads' dK_exp (dV_exp) and writes dK (dV) once, all in the
 * dtype, as group_sum's transfers. Returns 0, or -1 (t->failed set). */
static int add_group_sums(gm_template *t, const sim_shape *sh)
{
    const int64_t N_k = sim_shape_Nk(sh), d = sh->d, B_c = t->Bc;
    const int64_t per_g = sim_shape_H(sh) / sim_shape_G(sh);
    const sim_tensor from[2] = { SIM_dKexp, SIM_dVexp }, to[2] = { SIM_dK, SIM_dV };
    const char *names[2] = { "group sum: dK = sum dK_exp", "group sum: dV = sum dV_exp" };
    for (int x = 0; x < 2; x++) {
        if (t->nkern == SIM_GM_MAX_KERNELS)
            return t->failed = 1, -1;
        gm_tkernel *k = &t->kern[t->nkern];
        *k = (gm_tkernel){ .line = GM_GROUP_SUM, .blocks = t->p->Tc, .per_kv = 1 };
        snprintf(k->name, sizeof k->name, "%s", names[x]);
        for (int64_t j = 0; j < t->p->Tc; j++) {
            const int64_t c0 = j * B_c, bc = c0 + B_c <= N_k ? B_c : N_k - c0;
            const uint64_t bytes = (uint64_t)(bc * d) * (uint64_t)sim_tensor_bytes(from[x],
                                                                              sh->dtype);
            if (grow((void **)&t->steps, &t->capsteps, t->nsteps + 1, sizeof *t->steps) ||
                grow((void **)&t->acc, &t->capacc, t->nacc + per_g + 1, sizeof *t->acc))
                return t->failed = 1, -1;
            t->steps[t->nsteps] = (gm_step){ .kernel = t->nkern, .block = j, .first = t->nacc,
                                             .n = per_g + 1, .i = -1, .j = -1, .area = 0,
                                             .order = t->nsteps };
            t->nsteps++;
            for (int64_t q = 0; q < per_g; q++)
                t->acc[t->nacc++] = (gm_access){ .tensor = (int16_t)from[x], .store = 0,
                                                 .qh = (int32_t)q, .r0 = c0, .c0 = 0,
                                                 .bytes = bytes };
            t->acc[t->nacc++] = (gm_access){ .tensor = (int16_t)to[x], .store = 1, .r0 = c0,
                                             .c0 = 0, .bytes = bytes };
        }
        t->nkern++;
    }
    return 0;
}

/* Every loop order computes one tile of scores per block pair (i, j) it
 * visits (the forward's S_ij and P_ij, the backward's five products;
 * standard attention's operations, each over its tiles): its arithmetic is
 * charged to the step at (i, j), loads or not. */
static void on_event(void *ctx, const sim_event *ev)
{
    gm_template *t = ctx;
    if (t->failed)
        return;
    const int pair = ev->i >= 0 && ev->j >= 0;
    if (ev->kind != SIM_EV_LOAD && ev->kind != SIM_EV_STORE && !(ev->kind == SIM_EV_LINE && pair))
        return;
    int main_kernel;
    int64_t block, nblocks;
    place(t, ev, &main_kernel, &block, &nblocks);
    const int k = kernel_of(t, ev, main_kernel);
    if (k < 0) {
        t->failed = 1;
        return;
    }
    for (int64_t b = block; b < block + nblocks && !t->failed; b++)
        add(t, ev, k, b);
}

static int cmp_step(const void *a, const void *b)
{
    const gm_step *x = a, *y = b;
    if (x->kernel != y->kernel)
        return x->kernel < y->kernel ? -1 : 1;
    if (x->block != y->block)
        return x->block < y->block ? -1 : 1;
    return x->order < y->order ? -1 : x->order > y->order;
}

/* ---- the L2: an LRU of tiles with a byte capacity ---------------------------
 * A hash table of tiles (tensor, head, r0, c0) with a doubly linked list in
 * order of use. */

typedef struct {
    uint64_t key[2];       /* (tensor << 48 | head), (r0 << 24 | c0) */
    uint64_t bytes;
    int32_t prev, next;    /* LRU list: head is the most recent */
    int32_t hnext;         /* hash chain */
    uint8_t dirty, live;
} gm_line;

typedef struct {
    gm_line *line;
    int32_t nline, capline, freelist;
    int32_t *bucket;
    uint32_t nbucket;      /* a power of two */
    int32_t mru, lru;
    uint64_t cap, used;
    uint64_t dram_read, dram_write;   /* bytes */
} gm_l2;

static uint32_t hash2(const uint64_t k[2])
{
    uint64_t h = k[0] * 0x9E3779B97F4A7C15ull ^ (k[1] + 0x632BE59BD9B4E019ull) * 0xC2B2AE3D27D4EB4Full;
    h ^= h >> 29;
    h *= 0xBF58476D1CE4E5B9ull;
    h ^= h >> 32;
    return (uint32_t)h;
}

static void lru_unlink(gm_l2 *c, int32_t x)
{
    gm_line *l = &c->line[x];
    if (l->prev >= 0) c->line[l->prev].next = l->next; else c->mru = l->next;
    if (l->next >= 0) c->line[l->next].prev = l->prev; else c->lru = l->prev;
}

static void lru_push(gm_l2 *c, int32_t x)
{
    gm_line *l = &c->line[x];
    l->prev = -1;
    l->next = c->mru;
    if (c->mru >= 0) c->line[c->mru].prev = x; else c->lru = x;
    c->mru = x;
}

static void hash_remove(gm_l2 *c, int32_t x)
{
    int32_t *pp = &c->bucket[hash2(c->line[x].key) & (c->nbucket - 1)];
    while (*pp != x)
        pp = &c->line[*pp].hnext;
    *pp = c->line[x].hnext;
}

/* Evict the least recently used tiles until `need` more bytes fit; a dirty
 * one is written back. Returns the bytes written back. */
static uint64_t l2_make_room(gm_l2 *c, uint64_t need)
{
    uint64_t wb = 0;
    while (c->lru >= 0 && c->used + need > c->cap) {
        int32_t x = c->lru;
        gm_line *l = &c->line[x];
        if (l->dirty)
            wb += l->bytes;
        c->used -= l->bytes;
        lru_unlink(c, x);
        hash_remove(c, x);
        l->live = 0;
        l->hnext = c->freelist;
        c->freelist = x;
    }
    c->dram_write += wb;
    return wb;
}

static int l2_init(gm_l2 *c, uint64_t cap)
{
    memset(c, 0, sizeof *c);
    c->cap = cap;
    c->nbucket = 1u << 16;
    c->bucket = malloc(sizeof *c->bucket * c->nbucket);
    if (!c->bucket)
        return -1;
    for (uint32_t b = 0; b < c->nbucket; b++)
        c->bucket[b] = -1;
    c->mru = c->lru = c->freelist = -1;
    return 0;
}

static void l2_free(gm_l2 *c)
{
    free(c->line);
    free(c->bucket);
}

/* Grow the hash table when it holds twice as many tiles as buckets. */
static int l2_rehash(gm_l2 *c)
{
    uint32_t nb = c->nbucket * 2;
    int32_t *b = malloc(sizeof *b * nb);
    if (!b)
        return -1;
    for (uint32_t k = 0; k < nb; k++)
        b[k] = -1;
    for (int32_t x = 0; x < c->nline; x++)
        if (c->line[x].live) {
            uint32_t h = hash2(c->line[x].key) & (nb - 1);
            c->line[x].hnext = b[h];
            b[h] = x;
        }
    free(c->bucket);
    c->bucket = b;
    c->nbucket = nb;
    return 0;
}

/* One access of `bytes` to tile key: returns the bytes that hit (0 or all:
 * a tile is moved whole), sets *wb to the bytes written back to make room.
 * A load that misses reads DRAM; a store writes the whole tile into the L2,
 * dirty, reading nothing. A tile larger than the whole L2 (or an L2 of 0
 * bytes) goes straight to DRAM. Returns UINT64_MAX when out of memory. */
static uint64_t l2_access(gm_l2 *c, const uint64_t key[2], uint64_t bytes, int store,
                          uint64_t *wb)
{
    *wb = 0;
    if (bytes > c->cap) {
        /* straight to DRAM: a store is written there now (*wb charges it
         * to DRAM's bandwidth, as a write-back would be) */
        if (store) {
            c->dram_write += bytes;
            *wb = bytes;
        } else {
            c->dram_read += bytes;
        }
        return 0;
    }
    const uint32_t h = hash2(key) & (c->nbucket - 1);
    for (int32_t x = c->bucket[h]; x >= 0; x = c->line[x].hnext) {
        gm_line *l = &c->line[x];
        if (l->key[0] == key[0] && l->key[1] == key[1]) {
            lru_unlink(c, x);
            lru_push(c, x);
            if (store)
                l->dirty = 1;
            if (l->bytes != bytes) {       /* another shape of the same corner */
                c->used = c->used - l->bytes + bytes;
                l->bytes = bytes;
                *wb = l2_make_room(c, 0);
            }
            return store ? 0 : bytes;
        }
    }
    *wb = l2_make_room(c, bytes);
    int32_t x;
    if (c->freelist >= 0) {
        x = c->freelist;
        c->freelist = c->line[x].hnext;
    } else {
        if (c->nline == c->capline) {
            int32_t nc = c->capline ? c->capline * 2 : 4096;
            gm_line *nl = realloc(c->line, sizeof *nl * (size_t)nc);
            if (!nl)
                return UINT64_MAX;
            c->line = nl;
            c->capline = nc;
        }
        x = c->nline++;
        if ((uint32_t)c->nline > 2 * c->nbucket && l2_rehash(c) != 0)
            return UINT64_MAX;
    }
    gm_line *l = &c->line[x];
    l->key[0] = key[0];
    l->key[1] = key[1];
    l->bytes = bytes;
    l->dirty = (uint8_t)store;
    l->live = 1;
    const uint32_t hh = hash2(key) & (c->nbucket - 1);
    l->hnext = c->bucket[hh];
    c->bucket[hh] = x;
    lru_push(c, x);
    c->used += bytes;
    if (!store)
        c->dram_read += bytes;
    return 0;
}

/* Write every dirty tile back (the end of the run). */
static void l2_flush(gm_l2 *c)
{
    for (int32_t x = c->mru; x >= 0; x = c->line[x].next)
        if (c->line[x].dirty) {
            c->dram_write += c->line[x].bytes;
            c->line[x].dirty = 0;
        }
}

/* ---- stage 2 and 3: launch and replay ------------------------------------- */

typedef struct {
    double t;              /* when its next step starts */
    int64_t seq;           /* tie-break: dispatch order */
    int32_t slot;
} gm_heap_ent;

typedef struct {
    int sm;
    int64_t head;          /* global query head b H + h */
    int64_t first, n;      /* its steps in the sorted template */
    int64_t next;          /* the next step */
    int64_t computed;      /* its steps so far that computed scores (FA3's clock) */
    double t_start;
} gm_slot;

static void heap_push(gm_heap_ent *h, int64_t *n, gm_heap_ent e)
{
    int64_t i = (*n)++;
    while (i > 0) {
        int64_t p = (i - 1) / 2;
        if (h[p].t < e.t || (h[p].t == e.t && h[p].seq < e.seq))
            break;
        h[i] = h[p];
        i = p;
    }
    h[i] = e;
}

static gm_heap_ent heap_pop(gm_heap_ent *h, int64_t *n)
{
    gm_heap_ent top = h[0], e = h[--(*n)];
    int64_t i = 0;
    for (;;) {
        int64_t c = 2 * i + 1;
        if (c >= *n)
            break;
        if (c + 1 < *n && (h[c + 1].t < h[c].t || (h[c + 1].t == h[c].t && h[c + 1].seq < h[c].seq)))
            c++;
        if (e.t < h[c].t || (e.t == h[c].t && e.seq < h[c].seq))
            break;
        h[i] = h[c];
        i = c;
    }
    h[i] = e;
    return top;
}

void sim_gm_trace_begin(sim_gm_trace *t, FILE *f)
{
    memset(t, 0, sizeof *t);
    t->f = f;
    t->first = 1;
    fprintf(f, "{\"displayTimeUnit\":\"ns\",\"traceEvents\":[");
}

void sim_gm_trace_end(sim_gm_trace *t)
{
    fprintf(t->f, "\n]}\n");
}

/* A slice ("X") of thread block `block` of head `head` on track tid. */
static void trace_slice(sim_gm_trace *tr, const char *name, const char *cat, int tid, double t,
                        double dur, int64_t head, int64_t block)
{
    if (!tr)
        return;
    fprintf(tr->f, "%s\n{\"name\":\"%s\",\"cat\":\"%s\",\"ph\":\"X\",\"pid\":%d,\"tid\":%d,"
            "\"ts\":%.4f,\"dur\":%.4f,\"args\":{\"head\":%lld,\"block\":%lld}}",
            tr->first ? "" : ",", name, cat, tr->pid, tid, t * 1e6, dur * 1e6, (long long)head,
            (long long)block);
    tr->first = 0;
    tr->events++;
}

/* A counter sample ("C") and a name ("M") of a process or track. */
static void trace_counter(sim_gm_trace *tr, double t, double gbps)
{
    fprintf(tr->f, "%s\n{\"name\":\"DRAM GB/s\",\"ph\":\"C\",\"pid\":%d,\"ts\":%.4f,"
            "\"args\":{\"GB/s\":%.1f}}", tr->first ? "" : ",", tr->pid, t * 1e6, gbps);
    tr->first = 0;
    tr->events++;
}

static void trace_name(sim_gm_trace *tr, const char *what, int tid, const char *name)
{
    fprintf(tr->f, "%s\n{\"name\":\"%s\",\"ph\":\"M\",\"pid\":%d,\"tid\":%d,"
            "\"args\":{\"name\":\"%s\"}}", tr->first ? "" : ",", what, tr->pid, tid, name);
    tr->first = 0;
    tr->events++;
}

/* FA3's step on the tracks of its warpgroups (sim_gpu_fa3.h), tids
 * SIM_GM_FA3_TID + slot x SIM_FA3_TRACKS + track, and the ring's stages
 * full as a counter (sim_fa3_stages_full): two from the step's start while
 * the block before's V waits for its GEMM1, then one. */
#define SIM_GM_FA3_TID 100000
static void trace_fa3(sim_gm_trace *tr, int slot, double t, double dur, const sim_fa3_slice *sl,
                      int n, double freed, int64_t head, int64_t block)
{
    for (int k = 0; k < n; k++)
        trace_slice(tr, sl[k].name, "fa3", SIM_GM_FA3_TID + slot * SIM_FA3_TRACKS + sl[k].track,
                    t + sl[k].t0, sl[k].dur, head, block);
    if (slot != 0)
        return;             /* one SM's ring is the picture; every SM's would be the same */
    for (int k = 0; k < 2; k++) {
        const double at = k == 0 ? 0 : freed < dur ? freed : dur;
        fprintf(tr->f, ",\n{\"name\":\"SMEM stages full (SM 0)\",\"ph\":\"C\",\"pid\":%d,"
                "\"ts\":%.4f,\"args\":{\"stages\":%d}}", tr->pid, (t + at) * 1e6,
                at < dur ? sim_fa3_stages_full(at, freed) : 1);
        tr->events++;
    }
}

/* Resident blocks per SM of a kernel: the tightest of shared memory,
 * registers, threads and the block limit. */
static int occupancy(const sim_gpu *g, uint64_t smem, int threads, uint64_t regs,
                     const char **by)
{
    int occ = g->max_blocks_per_sm;
    *by = "blocks per SM";
    if (smem > 0 && (int)(g->smem_per_sm / smem) < occ) {
        occ = (int)(g->smem_per_sm / smem);
        *by = "shared memory";
    }
    if (threads > 0 && g->max_threads_per_sm / threads < occ) {
        occ = g->max_threads_per_sm / threads;
        *by = "threads";
    }
    if (regs > 0 && (int)(g->regs_per_sm / regs) < occ) {
        occ = (int)(g->regs_per_sm / regs);
        *by = "registers";
    }
    return occ;
}

static int missing(const sim_gpu *g, char *err, size_t errlen)
{
    const char *what = !g->sms ? "its SM count" : !g->clock_hz ? "its clock"
                       : !g->hbm_bytes_per_s ? "its DRAM bandwidth"
                       : !g->l2_bytes_per_s ? "its L2 bandwidth"
                       : !g->fp16_flops ? "its tensor-core rate"
                       : !g->fp32_flops ? "its FP32 rate"
                       : !g->sfu_per_clk ? "its exp (SFU) throughput"
                       : !g->mma_sync_fraction ? "its mma.sync rate"
                       : !g->regs_per_sm ? "its registers per SM"
                       : !g->max_blocks_per_sm ? "its resident blocks per SM"
                       : !g->max_threads_per_sm ? "its resident threads per SM"
                       : !g->max_threads_per_block ? "its threads per block"
                       : !g->max_grid_x || !g->max_grid_yz ? "its grid limits"
                       : !g->smem_per_sm ? "its shared memory per SM"
                       : NULL;
    if (what)
        snprintf(err, errlen, "the GPU model needs %s, which preset '%s' does not give", what,
                 g->name);
    return what != NULL;
}

typedef struct {
    double mm, exps, fp32;          /* per score: matmul FLOPs, exps, other FP32 ops */
} gm_work;

/* FA1's launch code chooses how many blocks share a head from the
 * occupancy, as flash-attn v1 does (fmha_fwd_hdim*.cu, fmha_bwd_launch_template.h;
 * re-derived here, not copied). Forward: the fewest splits S (at most 30; v1's
 * bound min(30, (seqlen_q + M - 1 / M)) is 30 as written, 1 / M being 0) whose
 * last wave is at least 95% as full as the fullest of S = 1 .. 30. */
/* FA1's operands through shared memory in one tile step (B_r query rows,
 * B_c keys, w warps side by side over the keys, v1's 1 x w layout;
 * FMHA_kernel_traits in fmha/kernel_traits.h, the loops of
 * fmha_fprop_kernel_1xN.h and fmha_dgrad_kernel_1xN_loop.h). A warp loads
 * the fragments of each product's operands from shared memory (ldmatrix)
 * unless it keeps them in registers:
 *   - forward (flags 0x08u: K_IN_REGS, V_IN_REGS): K_j's and V_j's
 *     fragments are loaded once per key block and stay in registers; per
 *     step only Q_i, which every warp reads whole (S_ij = Q_i K_j^T with
 *     each warp's B_c / w columns): w B_r d elements;
 *   - backward (flags 0x100u, Gemm_Q_K<..., false>: K_j and V_j stay in
 *     shared memory), five products of 2 B_r B_c d FLOPs each:
 *       S = Q_i K_j^T     Q_i by every warp (w B_r d), K_j once (B_c d);
 *       dP = dO_i V_j^T   dO_i by every warp, V_j once;
 *       dQ = dS K_j       K_j^T once (dS in the warp's registers);
 *       dV += P^T dO_i    P written and read back transposed (2 B_r B_c),
 *                         dO_i^T by every warp (w B_r d);
 *       dK += dS^T Q_i    dS likewise, Q_i^T by every warp.
 * A product's loads are double-buffered against its mma (frag[ki & 1]),
 * so it takes the longer of its tensor time and its shared-memory time;
 * products are ordered by their data (and __syncthreads), so those times
 * add. Returns the operand bytes of a whole tile step and sets *stretch to
 * the step's product time over its tensor time alone (1 when the tensor
 * cores outrun shared memory in every product). The fp32 partials the
 * warps exchange are the caller's smem_step. */
static double sliced_k_operands(int bwd, double w, double Br, double Bc, double d, double elt,
                                double tc_sm, double smem_sm, double *stretch)
{
    const double flops = 2 * Br * Bc * d;       /* each product's */
    double bytes[5];
    int n;
    if (!bwd) {
        bytes[0] = w * Br * d * elt;            /* S = Q_i K_j^T */
        bytes[1] = 0;                           /* O += P V_j: P and V_j in registers */
        n = 2;
    } else {
        bytes[0] = (w * Br * d + Bc * d) * elt; /* S = Q_i K_j^T */
        bytes[1] = bytes[0];                    /* dP = dO_i V_j^T */
        bytes[2] = Bc * d * elt;                /* dQ = dS K_j */
        bytes[3] = (2 * Br * Bc + w * Br * d) * elt;   /* dV += P^T dO_i */
        bytes[4] = bytes[3];                    /* dK += dS^T Q_i */
        n = 5;
    }
    double total = 0, t = 0;
    const double t_mm = flops / tc_sm;
    for (int k = 0; k < n; k++) {
        const double t_op = bytes[k] / smem_sm;
        total += bytes[k];
        t += t_op > t_mm ? t_op : t_mm;
    }
    *stretch = t / (n * t_mm);
    return total;
}

/* The dependent phases of a tile step: its products, each of which must
 * finish before the next reads its result, plus its block-wide barriers
 * (__syncthreads), counted in the loops of the released kernels. Charged
 * where the warps split the keys (sliced-K, flash-attn v1):
 *   - v1 forward (fmha_fprop_kernel_1xN.h): S = Q_i K_j^T and O += P V_j;
 *     the barrier of the row maximum's exchange between the warps (the
 *     softmax's reduce_max through shared memory) and the one before O's
 *     partials are summed: 2 + 2 = 4;
 *   - v1 backward (fmha_dgrad_kernel_1xN_loop.h): five products and one
 *     barrier, before dQ's partials are read back: 5 + 1 = 6.
 * There a step is B_r = 16 rows and each warp's share of a product is one
 * row of 16 x 8 mma tiles over its B_c / w keys (2 to 8 accumulators on
 * A100's tiles: B_c = 128 or 256, w = 4 or 8), so a product is a short
 * chain of dependent mma.sync, and every step ends with the warps waiting
 * on one another. flash-attn v2 has barriers too, 2 + 2 a forward step
 * (flash_fwd_kernel.h) and 5 + 3 a backward one (flash_bwd_kernel.h), but
 * each warp's share of a product is four times v1's (8 to 32 independent
 * accumulators), and its forward's warps exchange nothing: charged the
 * same latency per phase, its A100 predictions fall by 7-11% (geometric
 * mean |error| 5% -> 10%, the three rows that fitted tensor_eff 0.5% ->
 * 12%), so the latency is not charged there: 0, as for standard
 * attention's library kernels. */
int sim_gm_step_phases(const sim_loop *loop, int bwd)
{
    if (!loop || loop->warps != SIM_WARPS_SPLIT_K)
        return 0;
    return bwd ? 5 + 1 : 2 + 2;
}

static int64_t fa1_splits_fwd(int64_t heads, int sms, int occ, int64_t Tr)
{
    double eff[31], best = 0;
    for (int s = 1; s <= 30; s++) {
        const double waves = (double)(heads * s) / ((double)sms * occ);
        eff[s] = waves / ceil(waves);
        if (eff[s] > best)
            best = eff[s];
    }
    int64_t S = 1;
    for (int s = 1; s <= 30; s++)
        if (eff[s] > 0.95 * best) {
            S = s;
            break;
        }
    return S < Tr ? S : Tr;
}

/* Backward: one block per head, or one per key block (T_c = N_k / B_c of
 * them, "seqparallel") when that fills the last wave better, discounted by
 * 1 + B_c / N_k (half that when causal, and always when causal with
 * T_c >= 10). Returns the blocks per head: 1 or T_c. */
static int64_t fa1_splits_bwd(int64_t heads, int sms, int occ, int64_t Nk, int64_t Bc, int causal)
{
    const double w1 = (double)heads / ((double)sms * occ);
    const double eff1 = w1 / ceil(w1);
    const int64_t par = Nk / Bc;
    if (par < 1)
        return 1;
    const double wp = (double)(heads * par) / ((double)sms * occ);
    const double raw = wp / ceil(wp);
    double discount;
    if (!causal) {
        discount = 1.0 + (double)Bc / (double)Nk;
    } else {
        if (par >= 10)
            return par;
        discount = 1.0 + 0.5 * (double)Bc / (double)Nk;
    }
    return eff1 >= raw / discount ? 1 : par;
}

int sim_gpu_model_run(const sim_gpu *g, const sim_plan *p, const sim_shape *sh,
                      const sim_gm_opts *o, sim_gm_result *out, char *err, size_t errlen)
{
    memset(out, 0, sizeof *out);
    if (missing(g, err, errlen))
        return -1;
    const sim_loop *loop = sim_loop_find(p->algo, &p->run);
    if (!loop) {
        snprintf(err, errlen, "no loop order serves these options");
        return -1;
    }
    /* FlashAttention-3's pipeline: Hopper only; its switches its own */
    if (loop->wgmma && sim_fa3_gpu_check(g, err, errlen) != 0)
        return -1;
    if (o && (o->no_pipeline || o->no_warp_spec) && !loop->wgmma) {
        snprintf(err, errlen, "--pipeline and --warp-specialization switch FlashAttention-3's "
                 "overlaps: %s has none; use them with --algo fa3", loop->name);
        return -1;
    }
    if (p->run.group) {
        snprintf(err, errlen, "the GPU model launches one query head per thread block, as the "
                 "released kernels do; grouped heads are fasim's variant: drop --group");
        return -1;
    }
    const int64_t B = sim_shape_B(sh), H = sim_shape_H(sh), G = sim_shape_G(sh);

    /* The main kernel's resources, for its occupancy (and FA1's splits). */
    const int threads_main = p->warps > 0 ? p->warps * 32 : 128;
    uint64_t regs_main = 0;
    if (p->warps > 0) {
        const uint64_t per_thread = p->reg_limit / 4u / (uint64_t)threads_main;
        regs_main = per_thread * (uint64_t)threads_main;
    }
    const char *occ_by;
    const int occ_main = occupancy(g, p->sram_peak, threads_main, regs_main, &occ_by);
    int64_t splits = 1;
    if (occ_main >= 1 && loop->grid == SIM_GRID_HEAD_SPLIT_Q)
        splits = fa1_splits_fwd(B * H, g->sms, occ_main, p->Tr);
    else if (occ_main >= 1 && loop->grid == SIM_GRID_HEAD_OR_COLS)
        splits = fa1_splits_bwd(B * H, g->sms, occ_main, sim_shape_Nk(sh), p->Bc, sh->causal);

    /* Stage 1: the template of one head. */
    sim_shape sh1 = *sh;
    sh1.batch = 1;
    sh1.heads = 1;
    sh1.kv_heads = 1;
    sim_plan p1 = *p;
    p1.sh = sh1;
    gm_template t = { .loop = loop, .p = &p1, .Br = p->Br, .Bc = p->Bc, .cur = -1,
                      .splits = splits,
                      .gqa = p->run.pass == SIM_BWD && sim_gqa_grad(sh, SIM_dK) == SIM_dKexp };
    if (loop->flags & SIM_LOOP_FRAMEWORK) {
        t.last_j = malloc(sizeof *t.last_j * (size_t)(p->Tc > 0 ? p->Tc : 1));
        t.last_run = calloc((size_t)(p->Tc > 0 ? p->Tc : 1), sizeof *t.last_run);
        if (!t.last_j || !t.last_run) {
            free(t.last_j);
            free(t.last_run);
            snprintf(err, errlen, "out of memory");
            return -1;
        }
    }
    sim_observer obs = { on_event, &t };
    sim_result res;
    const int run_rc = sim_run(p->algo, &sh1, &p1, NULL, NULL, NULL, &obs, &res, err, errlen);
    free(t.last_j);
    free(t.last_run);
    t.last_j = t.last_run = NULL;
    if (run_rc != 0) {
        free(t.acc);
        free(t.steps);
        return -1;
    }
    sim_result_free(&res);
    if (t.gqa && !t.failed)
        add_group_sums(&t, sh);
    int rc = -1;
    gm_slot *slot = NULL;
    gm_heap_ent *heap = NULL;
    int *sm_res = NULL;
    gm_l2 l2 = { 0 };
    int l2_live = 0;
    sim_gm_trace *tr = o ? o->trace : NULL;
    if (t.failed) {
        snprintf(err, errlen, "the GPU model ran out of memory, or the loop order has more than "
                 "%d kernels", SIM_GM_MAX_KERNELS);
        goto done;
    }
    qsort(t.steps, (size_t)t.nsteps, sizeof *t.steps, cmp_step);

    /* The arithmetic of one head, spread over the steps that compute by the
     * scores each computes: a kernel plan computes whole tiles (a decoding
     * row still fills a B_r-row tile), so its steps are charged the padded
     * tile; the FLOPs reported stay the useful ones. */
    sim_flops f1;
    if (sim_theory_flops(&p1, &sh1, &f1) != 0)
        f1.matmul = f1.other = 0;
    double area = 0;
    for (int64_t s = 0; s < t.nsteps; s++)
        area += t.steps[s].area;
    int64_t Br_k = p->Br, Bc_k = p->Bc;
    if (p->kind == SIM_PLAN_KERNEL) {
        sim_kernel_choice ch;
        char e2[128];
        sim_kernel_target kt = sim_gpu_kernel_target(g);
        if (sim_kernel_choose(p->algo, sh, &p->run, &kt, &ch, e2, sizeof e2) == 0) {
            Br_k = ch.Br > Br_k ? ch.Br : Br_k;
            Bc_k = ch.Bc > Bc_k ? ch.Bc : Bc_k;
        }
    }
    gm_work per_score = { 0 };
    if (area > 0) {
        per_score.mm = f1.matmul / area;
        /* one exp per score computed (the forward's P~, the backward's P
         * recomputed, the standard softmax's numerator); the rest FP32 */
        per_score.exps = 1.0;
        per_score.fp32 = f1.other / area > 1.0 ? f1.other / area - 1.0 : 0.0;
    }

    /* Stage 2: the launch of each kernel. */
    /* The steps are sorted by kernel, then block: kernel k's are
     * kstep[k] .. kstep[k + 1] - 1. */
    int64_t kstep[SIM_GM_MAX_KERNELS + 1];
    for (int k = 0, s = 0; k <= t.nkern; k++) {
        while (s < t.nsteps && t.steps[s].kernel < k)
            s++;
        kstep[k] = s;
    }
    const uint64_t l2_cap = o && o->l2_set ? o->l2_bytes : g->l2_bytes;
    out->l2_bytes = l2_cap;
    if (l2_init(&l2, l2_cap) != 0)
        goto oom;
    l2_live = 1;
    /* FA1's and FA2's kernels issue mma.sync; on Hopper that reaches only a
     * part of the tensor cores' peak (wgmma's). Standard attention's
     * operations are library kernels, which reach it. */
    const double mma = loop->warps != SIM_WARPS_NONE && sh->dtype != SIM_FP32 && !loop->wgmma
                           ? g->mma_sync_fraction : 1.0;
    const double tc_sm = sim_gpu_peak_flops(g, sh->dtype) * mma * CONSTANTS.tensor_eff / g->sms;
    const double fp32_sm = g->fp32_flops / 2.0 / g->sms;          /* ops/s: an FMA is 2 */
    const double sfu_sm = g->sfu_per_clk * g->clock_hz;
    const double dram_bw = g->hbm_bytes_per_s * ((loop->flags & SIM_LOOP_FRAMEWORK)
                                                     ? CONSTANTS.framework_dram_eff
                                                     : CONSTANTS.dram_eff);
    /* Shared memory per tile step for the exchange between the block's
     * warps (FlashAttention-2, section 3.3): with the keys split (FA1's
     * sliced-K) every warp writes its fp32 partial of the step's B_r x d
     * product, and they are read back and summed; with the queries split
     * (FA2) the warps exchange nothing.
     * The operands a kernel's products read from shared memory: FA1's are
     * charged (sliced_k_operands): its steps are B_r = 16 rows, so every
     * warp re-reading Q_i and dO_i is as many bytes as K_j, and in the
     * backward the operand time of S and dP outruns their tensor time at
     * d = 128 on A100. FA2's are left out: with each warp on its own rows
     * (the forward's 4 x 1 warps, the backward's 2 x 4 and 4 x 2 layouts,
     * Flash_bwd_kernel_traits in flash_bwd_launch_template.h) its products'
     * operand reads take 36% to 74% of their tensor time on the A100 tiles
     * of d = 64 and 128, so they never bind a product there. */
    const double smem_sm = g->smem_bytes_per_clk * g->clock_hz;
    double smem_step = 0, opnd_step = 0, mm_stretch = 1;
    {
        const double w = p->warps > 0 ? p->warps : 4;
        if (loop->warps == SIM_WARPS_SPLIT_K) {
            smem_step = 2 * w * (double)p->Br * (double)sh->d * 4;
            opnd_step = sliced_k_operands(p->run.pass == SIM_BWD, w, (double)Br_k,
                                          (double)Bc_k, (double)sh->d,
                                          sim_dtype_bytes(sh->dtype), tc_sm, smem_sm,
                                          &mm_stretch);
        }
    }
    const double l2_bw = g->l2_bytes_per_s;
    /* A framework's row kernels (SIM_LOOP_FRAMEWORK): PyTorch's softmax
     * over rows longer than its persistent kernel takes runs one thread
     * block per row (cunn_SoftMaxForward, cunn_SoftMaxBackward), so an SM
     * holds as many rows as it holds those blocks, and the second and later
     * passes over a row find it in the L2 (or, where a release keeps the row
     * in shared memory, on chip) while those rows fit there. The template's
     * blocks are B_r rows, whose re-reads an LRU of the L2 would lose; a
     * re-read within a block is served from the L2 when the rows in flight
     * fit it. */
    const int rows_in_l2 = (loop->flags & SIM_LOOP_FRAMEWORK) &&
                           framework_rows_in_flight(g, sh) <= (double)l2_cap;
    /* the latency a step's dependent phases leave exposed (one block per
     * SM: nothing else hides it; kres blocks hide it in kres x pipe_max) */
    const int nphases = sim_gm_step_phases(loop, p->run.pass == SIM_BWD);
    const double phase_s = nphases * CONSTANTS.phase_cycles / g->clock_hz;
    double bound_time[SIM_GM_BOUND_COUNT] = { 0 };
    sm_res = calloc((size_t)g->sms, sizeof *sm_res);
    if (!sm_res)
        goto oom;
    uint64_t trace_max = o && o->trace_max_events ? o->trace_max_events : 4000000u;
    if (tr) {
        /* Refuse a trace too large to open, before writing a byte. */
        uint64_t ev = 0;
        for (int k = 0; k < t.nkern; k++)
            ev += (uint64_t)t.kern[k].blocks;
        ev = (ev + (uint64_t)t.nsteps * (loop->wgmma ? SIM_FA3_MAX_SLICES : 3u)) *
             (uint64_t)(B * H);
        if (ev > trace_max) {
            snprintf(err, errlen, "the trace would hold %llu events (over %llu, more than a "
                     "trace viewer opens): use fewer heads or a smaller batch (--heads, --batch), "
                     "or a shorter N", (unsigned long long)ev, (unsigned long long)trace_max);
            goto done;
        }
        tr->pid++;
        trace_name(tr, "process_name", 0, o->trace_name ? o->trace_name : loop->name);
        for (int c = 0; loop->wgmma && c < g->sms; c++)
            for (int k = 0; k < SIM_FA3_TRACKS; k++) {
                char nm[80];
                snprintf(nm, sizeof nm, "SM %d slot 0: %s", c, sim_fa3_track_name(o, k));
                trace_name(tr, "thread_name", SIM_GM_FA3_TID + c * SIM_FA3_TRACKS + k, nm);
            }
        for (int c = 0; c < g->sms * g->max_blocks_per_sm && c < 4096; c++) {
            char nm[48];
            snprintf(nm, sizeof nm, "SM %d slot %d", c % g->sms, c / g->sms);
            trace_name(tr, "thread_name", c, nm);
        }
    }
    double last_c = 0;
    uint64_t last_bytes = 0;
    double now = 0;
    uint64_t hbm_r = 0, hbm_w = 0;
    int main_k = 0;
    int64_t main_blocks = -1;
    for (int k = 0; k < t.nkern; k++) {
        const gm_tkernel *tk = &t.kern[k];
        /* the loop order's own launch (any of standard attention's); the
         * lines outside the loop and the group sums are kernels of 128
         * threads without shared memory */
        const int is_main = !tk->per_kv && (tk->line < 0 || loop->grid == SIM_GRID_PER_LINE);
        const int in_grid = !tk->per_kv && tk->line < 0;   /* the grid kind's kernel */
        sim_gm_kernel *K = &out->kernels[out->nkernels++];
        snprintf(K->name, sizeof K->name, "%s", tk->name);
        const int64_t nb = tk->blocks;
        /* the heads it runs for: query heads, or the group sums' key/value heads */
        const int64_t heads = tk->per_kv ? B * G : B * H;
        K->blocks = nb * heads;
        if ((loop->grid == SIM_GRID_HEAD || loop->grid == SIM_GRID_HEAD_SPLIT_Q ||
             loop->grid == SIM_GRID_HEAD_OR_COLS) && in_grid) {
            K->grid[0] = B; K->grid[1] = H; K->grid[2] = nb;      /* v1: (b, h, splits) */
        } else if (loop->grid == SIM_GRID_SPLITS && in_grid) {
            K->grid[0] = p->Tr; K->grid[1] = sim_run_S(&p->run); K->grid[2] = B * H;
        } else {
            K->grid[0] = nb; K->grid[1] = B; K->grid[2] = heads / B;
        }
        if (K->grid[0] > g->max_grid_x || K->grid[1] > g->max_grid_yz ||
            K->grid[2] > g->max_grid_yz) {
            snprintf(err, errlen, "kernel '%s' would launch a grid of (%lld, %lld, %lld) thread "
                     "blocks, over %s's limit of (%lld, %lld, %lld): the launch would fail",
                     K->name, (long long)K->grid[0], (long long)K->grid[1],
                     (long long)K->grid[2], g->name, (long long)g->max_grid_x,
                     (long long)g->max_grid_yz, (long long)g->max_grid_yz);
            goto done;
        }
        K->threads = is_main ? threads_main : 128;
        const uint64_t smem = is_main ? p->sram_peak : 0;
        if (smem > g->smem_per_block) {
            snprintf(err, errlen, "kernel '%s' needs %llu bytes of shared memory per block, over "
                     "%s's %llu: the launch would fail", K->name, (unsigned long long)smem,
                     g->name, (unsigned long long)g->smem_per_block);
            goto done;
        }
        if (K->threads > g->max_threads_per_block) {
            snprintf(err, errlen, "kernel '%s' needs %d threads per block, over %s's %d",
                     K->name, K->threads, g->name, g->max_threads_per_block);
            goto done;
        }
        K->occupancy = occupancy(g, smem, K->threads, is_main ? regs_main : 0, &K->occupancy_by);
        if (K->occupancy < 1) {
            snprintf(err, errlen, "kernel '%s' fits no block on an SM of %s (%s)", K->name,
                     g->name, K->occupancy_by);
            goto done;
        }
        K->waves = (double)K->blocks / ((double)g->sms * K->occupancy);
        /* The main kernel: the grid's loop (any of standard attention's). */
        if (is_main && K->blocks > main_blocks) {
            main_blocks = K->blocks;
            main_k = out->nkernels - 1;
        }

        /* The blocks of one head of this kernel: step ranges. */
        const int64_t s0 = kstep[k], s1 = kstep[k + 1];
        /* Dispatch order: block index x fastest, then the heads. */
        const int cap = g->sms * K->occupancy;
        free(slot);
        free(heap);
        slot = calloc((size_t)cap, sizeof *slot);
        heap = malloc(sizeof *heap * (size_t)cap);
        if (!slot || !heap)
            goto oom;
        memset(sm_res, 0, sizeof *sm_res * (size_t)g->sms);
        int64_t nheap = 0, seq = 0, in_flight = 0;
        int64_t next_head = 0, next_step = s0;    /* the next block to dispatch */
        unsigned char *sm_used = calloc((size_t)g->sms, 1);
        if (!sm_used)
            goto oom;
        const double t0 = now;
        double t_end = now;
        /* Take the next block in dispatch order: its steps in the template. */
#define NEXT_BLOCK(first_, n_, head_)                                                     \
        do {                                                                              \
            (first_) = next_step;                                                         \
            int64_t b_ = t.steps[next_step].block;                                        \
            while (next_step < s1 && t.steps[next_step].block == b_)                      \
                next_step++;                                                              \
            (n_) = next_step - (first_);                                                  \
            (head_) = next_head;                                                          \
            if (next_step == s1) {                                                        \
                next_step = s0;                                                           \
                next_head++;                                                              \
            }                                                                             \
        } while (0)
        /* The first wave: block b to SM b mod SMs, round after round; slot
         * round x SMs + sm stays that SM's (a finished block's slot takes
         * the next block on the same SM). */
        for (int round = 0; round < K->occupancy; round++)
            for (int sm = 0; sm < g->sms; sm++) {
                if (s0 == s1 || next_head >= heads)
                    break;
                const int c = round * g->sms + sm;
                gm_slot *sl = &slot[c];
                NEXT_BLOCK(sl->first, sl->n, sl->head);
                sl->sm = sm;
                sl->next = 0;
                sl->computed = 0;
                sl->t_start = t0;
                sm_res[sm]++;
                sm_used[sm] = 1;
                in_flight++;
                heap_push(heap, &nheap, (gm_heap_ent){ t0 + g->dram_latency_s, seq++, c });
            }
        while (nheap > 0) {
            gm_heap_ent e = heap_pop(heap, &nheap);
            gm_slot *sl = &slot[e.slot];
            if (sl->next == sl->n) {
                /* The block is done: its SM takes the next one. */
                trace_slice(tr, "block", K->name, e.slot, sl->t_start,
                            e.t - sl->t_start, sl->head, t.steps[sl->first].block);
                if (o && o->on_block)
                    o->on_block(o->ctx, out->nkernels - 1, sl->sm, e.slot / g->sms, sl->t_start,
                                e.t, sl->head, t.steps[sl->first].block);
                sm_res[sl->sm]--;
                in_flight--;
                if (tr && e.t - last_c >= 1e-6) {
                    const uint64_t now_b = l2.dram_read + l2.dram_write;
                    trace_counter(tr, last_c, (double)(now_b - last_bytes) / (e.t - last_c) * 1e-9);
                    last_c = e.t;
                    last_bytes = now_b;
                }
                if (e.t > t_end)
                    t_end = e.t;
                if (next_head < heads) {
                    NEXT_BLOCK(sl->first, sl->n, sl->head);
                    sl->next = 0;
                    sl->computed = 0;
                    sl->t_start = e.t;
                    sm_res[sl->sm]++;
                    in_flight++;
                    heap_push(heap, &nheap,
                              (gm_heap_ent){ e.t + g->dram_latency_s, seq++, e.slot });
                }
                continue;
            }
            const gm_step *st = &t.steps[sl->first + sl->next];
            /* a group sum's head is key/value head b G + g, whose query heads
             * are b H + g H/G + qh; any other's is query head b H + h */
            const int64_t b = tk->per_kv ? sl->head / G : sl->head / H;
            const int64_t h = tk->per_kv ? sl->head % G * (H / G) : sl->head % H;
            const int64_t kvh = b * G + h / (H / G);
            uint64_t hit = 0, miss = 0, wbytes = 0, wb = 0;
            for (int64_t a = st->first; a < st->first + st->n; a++) {
                const gm_access *ac = &t.acc[a];
                const sim_tensor_info *ti = sim_tensor_about((sim_tensor)ac->tensor);
                /* a tensor broadcast over the heads is one line for all */
                const uint64_t hd = ti && ti->shared ? 0
                                    : (uint64_t)(ti && ti->kv ? kvh : b * H + h + ac->qh);
                const uint64_t key[2] = { (uint64_t)ac->tensor << 48 | hd,
                                          (uint64_t)ac->r0 << 24 | (uint64_t)ac->c0 };
                uint64_t w = 0;
                const uint64_t hb = ac->reread && rows_in_l2
                                        ? ac->bytes
                                        : l2_access(&l2, key, ac->bytes, ac->store, &w);
                if (hb == UINT64_MAX)
                    goto oom;
                wb += w;
                if (ac->store) {
                    wbytes += ac->bytes;
                    hbm_w += ac->bytes;
                } else {
                    hit += hb;
                    miss += ac->bytes - hb;
                    hbm_r += ac->bytes;
                    out->read_bytes[ac->tensor] += ac->bytes;
                    out->hit_bytes[ac->tensor] += hb;
                }
            }
            /* Time of the step. */
            const double R = (double)in_flight;
            const double kres = (double)sm_res[sl->sm];
            const double area_pad = st->area > 0
                ? st->area * ((double)Br_k * (double)Bc_k) / ((double)p->Br * (double)p->Bc)
                : 0;
            const double t_mm = area_pad * per_score.mm / tc_sm;
            /* one block's products in sequence: stretched where FA1's
             * operand loads outrun the tensor cores */
            const double t_prod = t_mm * mm_stretch;
            const double t_sfu = area_pad * per_score.exps / sfu_sm;
            const double t_fp = area_pad * per_score.fp32 / fp32_sm;
            const double t_sm = st->area > 0 ? smem_step / smem_sm : 0;
            /* shared memory's busy time: the exchange and the operands */
            const double t_smem = st->area > 0 ? (smem_step + opnd_step) / smem_sm : 0;
            const double t_dram = (double)(miss + wb) * R / dram_bw;
            const double t_l2 = (double)(hit + wbytes) * R / l2_bw;
            const double t_mem = t_dram > t_l2 ? t_dram : t_l2;
            double pipe_max = t_mm;
            sim_gm_bound pb = SIM_GM_BOUND_TENSOR;
            if (t_sfu > pipe_max) { pipe_max = t_sfu; pb = SIM_GM_BOUND_SFU; }
            if (t_fp > pipe_max) { pipe_max = t_fp; pb = SIM_GM_BOUND_FP32; }
            if (t_smem > pipe_max) { pipe_max = t_smem; pb = SIM_GM_BOUND_SMEM; }
            const double t_lat = st->area > 0 ? phase_s : 0;
            const double seq_sum = t_prod + t_sfu + t_fp + t_sm + t_lat;
            if (in_grid && !out->step.set && st->area == (double)(p->Br * p->Bc)) {
                out->step.mm = t_mm;
                out->step.prod = t_prod;
                out->step.sfu = t_sfu;
                out->step.fp32 = t_fp;
                out->step.exchange = t_sm;
                out->step.phases = t_lat;
                out->step.nphases = nphases;
                out->step.set = 1;
            }
            const double t_comp = seq_sum > kres * pipe_max ? seq_sum : kres * pipe_max;
            double dur;
            sim_gm_bound sb;
            sim_fa3_slice fa3_sl[SIM_FA3_MAX_SLICES];
            int fa3_n = 0;
            double fa3_freed = 0;
            const int fa3 = loop->wgmma && in_grid && st->area > 0;
            if (fa3) {      /* FA3's pipeline (sim_gpu_fa3.h): the SM's pipes shared by
                               its kres blocks */
                const int want_sl = tr || (o && o->on_fa3_step);
                dur = sim_fa3_step(o, sl->computed == 0, kres * t_mm, kres * (t_sfu + t_fp),
                                   t_mem, t_sfu >= t_fp ? SIM_GM_BOUND_SFU : SIM_GM_BOUND_FP32,
                                   t_dram >= t_l2 ? SIM_GM_BOUND_DRAM : SIM_GM_BOUND_L2, &sb,
                                   want_sl ? fa3_sl : NULL, &fa3_n, &fa3_freed);
                if (o && o->on_fa3_step) {
                    const sim_gm_fa3_step fs = {
                        .sm = sl->sm, .slot = e.slot / g->sms, .head = sl->head,
                        .block = st->block, .i = st->i, .j = st->j, .step = sl->computed,
                        .t = e.t, .dur = dur, .freed = fa3_freed, .sl = fa3_sl, .n = fa3_n,
                    };
                    o->on_fa3_step(o->ctx, &fs);
                }
                sl->computed++;
                out->fa3.G += kres * t_mm;
                out->fa3.E += kres * (t_sfu + t_fp);
                out->fa3.M += t_mem;
                out->fa3.step += dur;
                out->fa3.steps++;
            } else if (loop->prefetch) {
                dur = t_comp > t_mem ? t_comp : t_mem;
                sb = t_comp >= t_mem ? pb : t_dram >= t_l2 ? SIM_GM_BOUND_DRAM : SIM_GM_BOUND_L2;
            } else {
                dur = t_comp + t_mem + (st->n > 0 ? g->dram_latency_s : 0);
                sb = t_comp >= t_mem ? pb : t_dram >= t_l2 ? SIM_GM_BOUND_DRAM : SIM_GM_BOUND_L2;
            }
            bound_time[sb] += dur / (kres > 0 ? kres : 1);
            if (tr && fa3) {
                trace_fa3(tr, e.slot, e.t, dur, fa3_sl, fa3_n, fa3_freed, sl->head, st->block);
            } else if (tr && dur > 0) {
                const int tid = e.slot;
                trace_slice(tr, "load", "step", tid, e.t, t_mem, sl->head, st->block);
                if (t_prod > 0)
                    trace_slice(tr, "matmul", "step", tid, e.t, t_prod, sl->head, st->block);
                if (t_sfu + t_fp > 0)
                    trace_slice(tr, "softmax", "step", tid, e.t + t_prod, t_sfu + t_fp,
                                sl->head, st->block);
            }
            out->steps++;
            sl->next++;
            heap_push(heap, &nheap, (gm_heap_ent){ e.t + dur, seq++, e.slot });
        }
#undef NEXT_BLOCK
        for (int sm = 0; sm < g->sms; sm++)
            K->sms_busy += sm_used[sm];
        free(sm_used);
        K->t_start = t0;
        K->t_end = t_end;
        bound_time[SIM_GM_BOUND_LATENCY] += CONSTANTS.launch_s * g->sms;
        now = t_end + CONSTANTS.launch_s;
    }
    l2_flush(&l2);
    if (out->fa3.steps) {
        const double n = (double)out->fa3.steps;
        out->fa3.G /= n;
        out->fa3.E /= n;
        out->fa3.M /= n;
        out->fa3.step /= n;
    }
    out->time_s = now;
    out->dram_read_bytes = l2.dram_read;
    out->dram_write_bytes = l2.dram_write;
    out->hbm_read_bytes = hbm_r;
    out->hbm_write_bytes = hbm_w;
    uint64_t rd = 0, ht = 0;
    for (int k = 0; k < SIM_TENSOR_COUNT; k++) {
        rd += out->read_bytes[k];
        ht += out->hit_bytes[k];
    }
    out->l2_read_bytes = rd;
    out->l2_hit_rate = rd ? (double)ht / (double)rd : 0;
    {
        sim_flops f = sim_run_flops(p, sh);
        out->flops = f.matmul + f.other;
    }
    out->tflops = out->time_s > 0 ? out->flops / out->time_s * 1e-12 : 0;
    if (out->nkernels > 0) {
        const sim_gm_kernel *K = &out->kernels[main_k];
        out->blocks = K->blocks;
        out->waves = K->waves;
        out->sms_busy = K->sms_busy;
        out->occupancy = K->occupancy;
    }
    double total = 0;
    out->bound = SIM_GM_BOUND_TENSOR;
    for (int b = 0; b < SIM_GM_BOUND_COUNT; b++) {
        total += bound_time[b];
        if (bound_time[b] > bound_time[out->bound])
            out->bound = (sim_gm_bound)b;
    }
    out->bound_share = total > 0 ? bound_time[out->bound] / total : 0;
    rc = 0;
    goto done;
oom:
    snprintf(err, errlen, "out of memory in the GPU model");
done:
    free(slot);
    free(heap);
    free(sm_res);
    if (l2_live)
        l2_free(&l2);
    free(t.acc);
    free(t.steps);
    return rc;
}

void sim_gpu_model_assumptions(FILE *out, const sim_gpu *g)
{
    sim_gm_constants c = CONSTANTS;
    fprintf(out, "  Modelled, not measured: blocks dispatched in index order to the first SM with\n"
                 "  room; the L2 a fully associative LRU of whole tiles (no sets, no partitions);\n"
                 "  DRAM and L2 bandwidth shared equally by the blocks in flight; tensor cores at\n"
                 "  %.0f%% of %s's peak (fitted on A100's FA2), DRAM at %.0f%% (not fitted), %.0f us\n"
                 "  a launch; FA1's steps wait %.0f clocks per product or barrier in sequence\n"
                 "  (fitted on A100's FA1); unfused's kernels reach %.0f%% of DRAM (fitted on\n"
                 "  A100's PyTorch), a row's re-reads in one kernel served by the L2.\n",
            c.tensor_eff * 100, g->name, c.dram_eff * 100,
            c.launch_s * 1e6, c.phase_cycles, c.framework_dram_eff * 100);
}
