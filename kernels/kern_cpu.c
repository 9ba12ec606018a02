/*
 * kern_cpu.c — the CPU execution path: a CUDA thread block as real threads.
 *
 * A launch runs `groups` resident blocks side by side, each `threads` POSIX
 * threads (the caller is thread 0 of the first): groups = the simulator's
 * threads (sim_threads, the cores it uses) / threads, at least 1. Each
 * resident block takes the grid's blocks one after another (the next one
 * nobody has taken); for each, every thread of it calls the kernel with its
 * own (block, thread) indices, KERN_SYNC() is a real barrier across them
 * (barrier_wait below), and KERN_SHARED() is its own buffer of exactly the
 * launch's shared-memory size, poisoned with 0xff bytes before each block (a
 * NaN whether read as a float, as fp16 bits or as bf16 bits: a kernel that
 * reads shared memory it did not write produces NaN, and one that writes
 * past its buffers is caught by AddressSanitizer).
 *
 * Blocks of a grid are independent (each writes its own part of the
 * outputs), as CUDA requires of blocks that run concurrently. Counters: each
 * resident block counts into its own, summed after the launch (integer
 * sums, the same in any order). The one exception is a launch given an
 * order (kern_cpu_launch_order: FA2's backward, whose blocks of one head
 * all add into its dQ): its blocks of one head run one at a time in that
 * order, by one resident block; heads run side by side only when they share
 * nothing (G = H: dK, dV per head), else the whole launch runs one block at
 * a time. A block that waits for another's turn (kern_exec.h's kern_turn_*:
 * turns are per head, and a head's blocks run one at a time in the
 * driver's order) finds it taken or never gets it, which fails the launch
 * (kern_cpu_stall). This is CUDA's block model (threads, barriers, shared memory); it
 * catches missing barriers and unwritten shared memory, not what only a GPU
 * shows (warp-level behaviour, blocks racing on shared global data).
 */
#define _POSIX_C_SOURCE 200809L
#include "kern_internal.h"
#include "kern_half.h"
#include "ref_simd.h"

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>
#define KERN_CPU_X86 1
#endif

_Thread_local const kern_cpu_ctx *kern_cpu_tls;

kern_carve_log *kern_cpu_carve_log;

void kern_cpu_carve_note(const char *name, const void *at, int64_t bytes)
{
    const kern_cpu_ctx *c = kern_cpu_tls;
    kern_carve_log *g = kern_cpu_carve_log;
    if (!g || !c || c->thread_x != 0 || c->block_x != 0 || c->block_y != 0 || g->n >= KERN_CARVE_LOG_MAX)
        return;
    g->r[g->n++] = (kern_carve_rec){ g->launches - 1, name,
                                     (uint64_t)((const unsigned char *)at - c->smem),
                                     (uint64_t)bytes };
}

/*
 * Tiles in the dtype <-> floats, n elements at a time (kern_tile.h's
 * tile-of-rows primitives and kern_load_tile on the CPU). The same integer
 * operations as kern_half.h, element by element: exact both ways, for every
 * value the dtype holds (tests/test_kernels.c compares all 65,536 fp16 and
 * bf16 patterns). On a CPU whose active path (ref_simd_active) is AVX2 or
 * wider, eight elements a step in AVX2's integer lanes; else one at a time.
 */
#ifdef KERN_CPU_X86
__attribute__((target("avx2"))) static void fp16_to_f32_avx2(const uint16_t *h, float *f,
                                                              int64_t n)
{
    const __m256i sgn = _mm256_set1_epi32(0x8000), em = _mm256_set1_epi32(0x7fff),
                  bias = _mm256_set1_epi32(112 << 23), inf = _mm256_set1_epi32(0x7c00 - 1),
                  expf = _mm256_set1_epi32(0x7f800000), zero = _mm256_setzero_si256();
    const __m256 sub = _mm256_set1_ps(5.9604644775390625e-08f);     /* 2^-24 */
    int64_t k = 0;
    for (; k + 8 <= n; k += 8) {
        const __m256i x = _mm256_cvtepu16_epi32(_mm_loadu_si128((const __m128i *)(h + k)));
        const __m256i s = _mm256_slli_epi32(_mm256_and_si256(x, sgn), 16);
        const __m256i a = _mm256_and_si256(x, em);                /* exponent, fraction */
        const __m256i e = _mm256_srli_epi32(a, 10), m = _mm256_and_si256(a, _mm256_set1_epi32(0x3ff));
        __m256i r = _mm256_add_epi32(_mm256_slli_epi32(a, 13), bias);       /* normal */
        r = _mm256_blendv_epi8(r, _mm256_or_si256(_mm256_slli_epi32(a, 13), expf),
                               _mm256_cmpgt_epi32(a, inf));                /* inf, NaN */
        const __m256i d = _mm256_castps_si256(_mm256_mul_ps(_mm256_cvtepi32_ps(m), sub));
        r = _mm256_blendv_epi8(r, d, _mm256_cmpeq_epi32(e, zero));  /* subnormal, zero */
        _mm256_storeu_si256((__m256i *)(f + k), _mm256_or_si256(r, s));
    }
    for (; k < n; k++)
        f[k] = kern_fp16_to_f32(h[k]);
}

__attribute__((target("avx2"))) static void f32_to_fp16_avx2(const float *f, uint16_t *h,
                                                              int64_t n)
{
    const __m256i abs = _mm256_set1_epi32(0x7fffffff), sgn = _mm256_set1_epi32(0x8000),
                  inf32 = _mm256_set1_epi32(0x7f800000), big = _mm256_set1_epi32(0x47800000 - 1),
                  nrm = _mm256_set1_epi32(0x38800000 - 1), frac = _mm256_set1_epi32(0x3ff);
    const __m256 two24 = _mm256_set1_ps(16777216.0f);
    int64_t k = 0;
    for (; k + 8 <= n; k += 8) {
        const __m256i u = _mm256_loadu_si256((const __m256i *)(f + k));
        const __m256i s = _mm256_and_si256(_mm256_srli_epi32(u, 16), sgn);
        const __m256i a = _mm256_and_si256(u, abs);
        __m256i r = _mm256_cvttps_epi32(_mm256_mul_ps(_mm256_castsi256_ps(a), two24));
        r = _mm256_blendv_epi8(r, _mm256_sub_epi32(_mm256_srli_epi32(a, 13),
                                                   _mm256_set1_epi32(112 << 10)),
                               _mm256_cmpgt_epi32(a, nrm));                /* normal */
        r = _mm256_blendv_epi8(r, _mm256_set1_epi32(0x7c00), _mm256_cmpgt_epi32(a, big));
        r = _mm256_blendv_epi8(r, _mm256_or_si256(_mm256_set1_epi32(0x7e00),
                                                  _mm256_and_si256(_mm256_srli_epi32(a, 13), frac)),
                               _mm256_cmpgt_epi32(a, inf32));              /* NaN */
        r = _mm256_or_si256(r, s);
        const __m128i p = _mm_packus_epi32(_mm256_castsi256_si128(r),
                                           _mm256_extracti128_si256(r, 1));
        _mm_storeu_si128((__m128i *)(h + k), p);
    }
    for (; k < n; k++)
        h[k] = kern_f32_to_fp16(f[k]);
}
#endif

static int tile_avx2(void)
{
#ifdef KERN_CPU_X86
    const ref_simd s = ref_simd_active();
    return s == REF_SIMD_AVX2 || s == REF_SIMD_AVX512;
#else
    return 0;
#endif
}

void kern_cpu_tile_floats(const void *p, sim_dtype t, int64_t n, float *dst)
{
    if (t == SIM_FP32) {
        memcpy(dst, p, (size_t)n * sizeof *dst);
    } else if (t == SIM_BF16) {
        const uint16_t *h = p;
        for (int64_t k = 0; k < n; k++)
            dst[k] = kern_bf16_to_f32(h[k]);
    } else {
#ifdef KERN_CPU_X86
        if (tile_avx2()) {
            fp16_to_f32_avx2(p, dst, n);
            return;
        }
#endif
        const uint16_t *h = p;
        for (int64_t k = 0; k < n; k++)
            dst[k] = kern_fp16_to_f32(h[k]);
    }
}

void kern_cpu_tile_put_n(void *p, sim_dtype t, const float *src, int64_t n)
{
    if (t == SIM_FP32) {
        memcpy(p, src, (size_t)n * sizeof *src);
    } else if (t == SIM_BF16) {
        uint16_t *h = p;
        for (int64_t k = 0; k < n; k++)
            h[k] = kern_f32_to_bf16(src[k]);
    } else {
#ifdef KERN_CPU_X86
        if (tile_avx2()) {
            f32_to_fp16_avx2(src, p, n);
            return;
        }
#endif
        uint16_t *h = p;
        for (int64_t k = 0; k < n; k++)
            h[k] = kern_f32_to_fp16(src[k]);
    }
}

/*
 * The barrier: a counter and a generation number. The last thread to arrive
 * resets the counter and advances the generation; the others wait for the
 * generation to change, spinning briefly and then yielding the CPU.
 * Why not pthread_barrier_wait: a kernel passes 2-3 barriers per tile, and
 * the futex round trip of a pthread barrier cost about 100 us per barrier on
 * a 2-core machine with 3-8 threads per block, which made small-tile runs
 * take seconds; this one costs a few microseconds. Memory order: every
 * thread's arrival is an acq_rel read-modify-write of `count`, so the last
 * arriver sees all their writes; it publishes them with a release store of
 * `gen`, which the waiters read with acquire. So all writes before the
 * barrier (shared or global memory) are visible after it, as
 * __syncthreads() guarantees.
 */
typedef struct {
    atomic_int count;
    atomic_uint gen;
    int n;
} cpu_barrier;

static void barrier_wait(cpu_barrier *b)
{
    unsigned g = atomic_load_explicit(&b->gen, memory_order_acquire);
    if (atomic_fetch_add_explicit(&b->count, 1, memory_order_acq_rel) == b->n - 1) {
        atomic_store_explicit(&b->count, 0, memory_order_relaxed);
        atomic_fetch_add_explicit(&b->gen, 1u, memory_order_release);
        return;
    }
    for (int spin = 0; atomic_load_explicit(&b->gen, memory_order_acquire) == g; spin++)
        if (spin >= 64)
            sched_yield();
}

void kern_cpu_sync(void)
{
    barrier_wait((cpu_barrier *)kern_cpu_tls->barrier);
}

/* Each thread's scratch buffers (kern_cpu_scratch), grown on demand and
 * freed when the thread's part of a launch ends (scratch_free). */
static _Thread_local struct {
    void *p[KERN_CPU_SCRATCH];
    size_t cap[KERN_CPU_SCRATCH];
} scratch;

void *kern_cpu_scratch(int slot, size_t bytes)
{
    if (slot < 0 || slot >= KERN_CPU_SCRATCH)
        return NULL;
    if (bytes > scratch.cap[slot]) {
        free(scratch.p[slot]);
        scratch.p[slot] = malloc(bytes);
        scratch.cap[slot] = scratch.p[slot] ? bytes : 0;
    }
    return scratch.p[slot];
}

static void scratch_free(void)
{
    for (int k = 0; k < KERN_CPU_SCRATCH; k++) {
        free(scratch.p[k]);
        scratch.p[k] = NULL;
        scratch.cap[k] = 0;
    }
}

/* One resident block: its threads, shared memory, barrier and counters. A
 * launch has `groups` of them, each running blocks of the grid one after
 * another, side by side with the others. */
typedef struct {
    unsigned char *smem;
    cpu_barrier barrier;
    kern_params p;           /* the launch's, counting into cnt below */
    kern_counts cnt;
    int64_t k;               /* the block being run: set by thread 0 */
    int64_t stalled;         /* kern_cpu_stall: its first block (y grid + x); -1: none */
    int g;
} cpu_group;


void kern_cpu_stall(void)
{
    const kern_cpu_ctx *c = kern_cpu_tls;
    if (*c->stalled < 0)
        *c->stalled = c->block_y * c->grid_dim + c->block_x;
}

typedef struct {
    kern_cpu_fn fn;
    int64_t grid, grid_y;
    const int64_t *order;    /* the blocks' order (y grid + x each); NULL: in turn */
    int threads, groups;
    uint64_t smem_bytes;
    cpu_group *grp;
    atomic_llong next;       /* unordered: the next block a group takes */
    /* The start gate: workers wait until every thread exists (go) or the
     * launch is abandoned (abort), so that a failed pthread_create never
     * leaves threads waiting at a barrier that cannot fill. */
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int go, abort;
} cpu_launch;

typedef struct {
    cpu_launch *L;
    int g, tid;
} cpu_worker;

/* The next block of group G (thread 0 of the group decides, its threads
 * read it after the barrier that follows): in an ordered launch the next
 * entry of order[] whose head y is the group's (y mod groups; the groups
 * then each keep the order within their heads), else the next block
 * nobody has taken. A value past the grid: none left. */
static int64_t next_block(cpu_launch *L, cpu_group *G)
{
    const int64_t total = L->grid * L->grid_y;
    if (!L->order)
        return (int64_t)atomic_fetch_add_explicit(&L->next, 1, memory_order_relaxed);
    int64_t k = G->k + 1;
    while (k < total && (L->order[k] / L->grid) % L->groups != G->g)
        k++;
    return k;
}

static void run_blocks(cpu_launch *L, cpu_group *G, int tid)
{
    const int64_t total = L->grid * L->grid_y;
    kern_cpu_ctx ctx = { 0, 0, tid, L->threads, L->grid, G->smem, &G->barrier,
                         &G->stalled };
    kern_cpu_tls = &ctx;
    for (;;) {
        if (tid == 0) {
            G->k = next_block(L, G);
            if (G->k < total)
                memset(G->smem, 0xff, (size_t)L->smem_bytes);
        }
        barrier_wait(&G->barrier);     /* the block chosen, poisoned before anyone starts */
        const int64_t k = G->k;
        if (k >= total)
            break;
        const int64_t at = L->order ? L->order[k] : k;      /* y outer, x inner */
        ctx.block_x = at % L->grid;
        ctx.block_y = at / L->grid;
        L->fn(G->p);
        barrier_wait(&G->barrier);     /* block done before the next reuses SRAM */
    }
    scratch_free();
    kern_cpu_tls = NULL;
}

static void *worker_main(void *arg)
{
    cpu_worker *w = arg;
    cpu_launch *L = w->L;
    pthread_mutex_lock(&L->mu);
    while (!L->go && !L->abort)
        pthread_cond_wait(&L->cv, &L->mu);
    int run = L->go;
    pthread_mutex_unlock(&L->mu);
    if (run)
        run_blocks(L, &L->grp[w->g], w->tid);
    return NULL;
}

int kern_cpu_launch(kern_cpu_fn fn, kern_params p, int64_t grid, int64_t grid_y, int threads,
                    uint64_t smem_bytes, char *err, size_t errlen)
{
    return kern_cpu_launch_order(fn, p, grid, grid_y, threads, smem_bytes, NULL, err, errlen);
}

/* How many blocks run side by side: the simulator's threads (sim_threads,
 * the cores it uses) over the threads of a block, at least 1, at most
 * `most` (the blocks; in an ordered launch the heads, grid_y). An ordered
 * launch whose heads share global tensors (the backward's dK, dV are per
 * key/value head: shared when G < H) runs one block at a time. */
static int launch_groups(const kern_params *p, int64_t most, int threads, int ordered)
{
    if (ordered && p->G != p->H)
        return 1;
    int64_t g = sim_threads() / threads;
    g = g > most ? most : g;
    g = g > KERN_CPU_MAX_THREADS ? KERN_CPU_MAX_THREADS : g;
    return g < 1 ? 1 : (int)g;
}

int kern_cpu_launch_order(kern_cpu_fn fn, kern_params p, int64_t grid, int64_t grid_y,
                          int threads, uint64_t smem_bytes, const int64_t *order, char *err,
                          size_t errlen)
{
    if (threads < 1 || threads > KERN_CPU_MAX_THREADS) {
        snprintf(err, errlen, "threads per block must be 1..%d on the CPU path (got %d)",
                 KERN_CPU_MAX_THREADS, threads);
        return -1;
    }
    if (kern_cpu_carve_log)
        kern_cpu_carve_log->launches++;
    if (grid < 1 || grid_y < 1)
        return 0;
    cpu_launch L;
    memset(&L, 0, sizeof L);
    L.fn = fn;
    L.grid = grid;
    L.grid_y = grid_y;
    L.order = order;
    L.threads = threads;
    L.groups = launch_groups(&p, order ? grid_y : grid * grid_y, threads, order != NULL);
    L.smem_bytes = smem_bytes;
    atomic_init(&L.next, 0);
    L.grp = calloc((size_t)L.groups, sizeof *L.grp);
    int rc = 0;
    for (int g = 0; L.grp && g < L.groups && rc == 0; g++) {
        cpu_group *G = &L.grp[g];
        G->g = g;
        G->k = -1;
        G->stalled = -1;
        G->p = p;
        if (p.cnt)
            G->p.cnt = &G->cnt;
        atomic_init(&G->barrier.count, 0);
        atomic_init(&G->barrier.gen, 0u);
        G->barrier.n = threads;
        G->smem = malloc((size_t)(smem_bytes ? smem_bytes : 1));
        rc = G->smem ? 0 : -1;
    }
    if (!L.grp || rc != 0) {
        snprintf(err, errlen, "out of memory for %d x %llu B of shared memory", L.groups,
                 (unsigned long long)smem_bytes);
        for (int g = 0; L.grp && g < L.groups; g++)
            free(L.grp[g].smem);
        free(L.grp);
        return -1;
    }
    pthread_mutex_init(&L.mu, NULL);
    pthread_cond_init(&L.cv, NULL);

    /* Every thread but group 0's thread 0, which is the caller. */
    const int n = L.groups * threads;
    pthread_t *tids = malloc((size_t)n * sizeof *tids);
    cpu_worker *ws = malloc((size_t)n * sizeof *ws);
    int created = 0;
    if (!tids || !ws) {
        snprintf(err, errlen, "out of memory for %d CPU threads", n);
        rc = -1;
    }
    for (int t = 1; rc == 0 && t < n; t++) {
        ws[t].L = &L;
        ws[t].g = t / threads;
        ws[t].tid = t % threads;
        if (pthread_create(&tids[t], NULL, worker_main, &ws[t]) != 0) {
            snprintf(err, errlen, "cannot create CPU thread %d of %d for a thread block; "
                     "try fewer --threads", t % threads, threads);
            rc = -1;
            break;
        }
        created = t;
    }
    pthread_mutex_lock(&L.mu);
    if (rc == 0)
        L.go = 1;
    else
        L.abort = 1;
    pthread_cond_broadcast(&L.cv);
    pthread_mutex_unlock(&L.mu);
    if (rc == 0)
        run_blocks(&L, &L.grp[0], 0);
    for (int t = 1; t <= created; t++)
        pthread_join(tids[t], NULL);
    int64_t stalled = -1;    /* the first group's to stall */
    for (int g = 0; rc == 0 && stalled < 0 && g < L.groups; g++)
        stalled = L.grp[g].stalled;
    if (stalled >= 0) {
        snprintf(err, errlen, "block (%lld, %lld) waited for a turn that never came: a head's "
                 "blocks run one at a time here, and on a GPU it would spin for ever",
                 (long long)(stalled % grid), (long long)(stalled / grid));
        rc = -1;
    }

    /* The groups' counts, integer sums: the same in any order. */
    for (int g = 0; p.cnt && rc == 0 && g < L.groups; g++)
        for (int t = 0; t < SIM_TENSOR_COUNT; t++) {
            p.cnt->read_elems[t] += L.grp[g].cnt.read_elems[t];
            p.cnt->write_elems[t] += L.grp[g].cnt.write_elems[t];
            p.cnt->read_ops[t] += L.grp[g].cnt.read_ops[t];
            p.cnt->write_ops[t] += L.grp[g].cnt.write_ops[t];
        }
    pthread_cond_destroy(&L.cv);
    pthread_mutex_destroy(&L.mu);
    for (int g = 0; g < L.groups; g++)
        free(L.grp[g].smem);
    free(L.grp);
    free(tids);
    free(ws);
    return rc;
}
