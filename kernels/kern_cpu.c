/*
 * kern_cpu.c — the CPU execution path: a CUDA thread block as real threads.
 *
 * One launch creates `threads` POSIX threads (the caller is thread 0). They
 * run the blocks of the grid one after another: for each block every thread
 * calls the kernel with its own (block, thread) indices, KERN_SYNC() is a
 * real barrier across them (barrier_wait below), and KERN_SHARED() is one
 * buffer of exactly the launch's shared-memory size, poisoned with 0xff bytes
 * before each block (a NaN whether read as a float, as fp16 bits or as bf16
 * bits: a kernel that reads shared memory it did not write produces NaN, and
 * one that writes past its buffers is caught by AddressSanitizer).
 *
 * Blocks run in sequence, never concurrently, so the order of global-memory
 * writes is the simulator's and counters need no atomics. This is CUDA's
 * block model (threads, barriers, shared memory) with one block resident at a
 * time: it catches missing barriers and unwritten shared memory, not what
 * only a GPU shows (concurrent blocks racing, warp-level behaviour).
 */
#define _POSIX_C_SOURCE 200809L
#include "kern_internal.h"

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

typedef struct {
    kern_cpu_fn fn;
    kern_params p;
    int64_t grid, grid_y;
    const int64_t *order;    /* the blocks' order (y grid + x each); NULL: in turn */
    int threads;
    unsigned char *smem;
    uint64_t smem_bytes;
    cpu_barrier barrier;
    /* The start gate: workers wait until every thread exists (go) or the
     * launch is abandoned (abort), so that a failed pthread_create never
     * leaves threads waiting at a barrier that cannot fill. */
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int go, abort;
} cpu_launch;

typedef struct {
    cpu_launch *L;
    int tid;
} cpu_worker;

static void run_blocks(cpu_launch *L, int tid)
{
    kern_cpu_ctx ctx = { 0, 0, tid, L->threads, L->grid, L->smem, &L->barrier };
    kern_cpu_tls = &ctx;
    for (int64_t k = 0; k < L->grid * L->grid_y; k++) {
        const int64_t at = L->order ? L->order[k] : k;      /* y outer, x inner */
        ctx.block_x = at % L->grid;
        ctx.block_y = at / L->grid;
        if (tid == 0)
            memset(L->smem, 0xff, (size_t)L->smem_bytes);
        barrier_wait(&L->barrier);     /* poisoned before anyone starts */
        L->fn(L->p);
        barrier_wait(&L->barrier);     /* block k done before k + 1 reuses SRAM */
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
        run_blocks(L, w->tid);
    return NULL;
}

int kern_cpu_launch(kern_cpu_fn fn, kern_params p, int64_t grid, int64_t grid_y, int threads,
                    uint64_t smem_bytes, char *err, size_t errlen)
{
    return kern_cpu_launch_order(fn, p, grid, grid_y, threads, smem_bytes, NULL, err, errlen);
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
    L.p = p;
    L.grid = grid;
    L.grid_y = grid_y;
    L.order = order;
    L.threads = threads;
    L.smem_bytes = smem_bytes;
    L.smem = malloc((size_t)(smem_bytes ? smem_bytes : 1));
    if (!L.smem) {
        snprintf(err, errlen, "out of memory for %llu B of shared memory",
                 (unsigned long long)smem_bytes);
        return -1;
    }
    atomic_init(&L.barrier.count, 0);
    atomic_init(&L.barrier.gen, 0u);
    L.barrier.n = threads;
    pthread_mutex_init(&L.mu, NULL);
    pthread_cond_init(&L.cv, NULL);

    pthread_t tids[KERN_CPU_MAX_THREADS];
    cpu_worker ws[KERN_CPU_MAX_THREADS];
    int created = 0, rc = 0;
    for (int t = 1; t < threads; t++) {
        ws[t].L = &L;
        ws[t].tid = t;
        if (pthread_create(&tids[t], NULL, worker_main, &ws[t]) != 0) {
            snprintf(err, errlen, "cannot create CPU thread %d of %d for a thread block; "
                     "try fewer --threads", t, threads);
            rc = -1;
            break;
        }
        created++;
    }
    pthread_mutex_lock(&L.mu);
    if (rc == 0)
        L.go = 1;
    else
        L.abort = 1;
    pthread_cond_broadcast(&L.cv);
    pthread_mutex_unlock(&L.mu);
    if (rc == 0)
        run_blocks(&L, 0);
    for (int t = 1; t <= created; t++)
        pthread_join(tids[t], NULL);

    pthread_cond_destroy(&L.cv);
    pthread_mutex_destroy(&L.mu);
    free(L.smem);
    return rc;
}
