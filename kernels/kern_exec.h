/*
 * kern_exec.h — the portability layer of fasim's kernels: one kernel source,
 * compiled by nvcc as CUDA and by a C11 compiler for the CPU path.
 *
 * A kernel is written in the C subset of CUDA against these names only:
 *   KERN_GLOBAL            a kernel: `KERN_GLOBAL kern_fa2(kern_params p)`
 *   KERN_DEVICE            a helper called from kernels
 *   kern_block_x()         blockIdx.x      (the thread block's index in the grid)
 *   kern_block_y()         blockIdx.y      (its second: the query head, in FA2 and naive)
 *   kern_thread_x()        threadIdx.x     (the thread's index in its block)
 *   kern_block_dim()       blockDim.x      (threads per block)
 *   KERN_SYNC()            __syncthreads() (every thread of the block must reach it)
 *   KERN_SHARED()          the block's dynamic shared memory, as unsigned char *
 *   kern_carve             the next buffer of it (the plan's buffers, see below)
 *   kern_load / kern_store counted, cooperative tile copies global <-> shared
 *   kern_load_tile         the same into a tile held in the dtype's storage type
 *   kern_turn_wait / kern_turn_lock / kern_turn_pass
 *                          a block's turn at a global tile that blocks share
 *                          (a semaphore in global memory, below)
 *
 * Under nvcc these are CUDA's own. On the CPU (kern_cpu.c) every thread of a
 * block is a real POSIX thread, KERN_SYNC() is a real barrier across them and
 * KERN_SHARED() is one buffer per block that all its threads see; a few
 * blocks are resident at once (one per core's worth of threads), each
 * running blocks of the grid one after another. So a kernel that forgets a
 * barrier, or reads shared memory it never wrote, misbehaves on the CPU path
 * as on a GPU.
 *
 * Bit identity with the simulator (docs/ARCHITECTURE.md, Numerics): threads of a block
 * split the ROWS of a tile; each thread computes whole dot products and whole
 * rows with the ref_ primitives of reference/ref_tile.h, in the simulator's
 * order. Parallelism therefore never reorders a floating-point operation.
 *
 * Counting: kern_load / kern_store add to per-tensor counters (elements, and
 * one transfer per tile, as sim_load / sim_store do) when p.cnt is not NULL.
 * Only thread 0 of a block adds; on the GPU with atomicAdd, because blocks of
 * a grid run concurrently there.
 */
#ifndef FASIM_KERN_EXEC_H
#define FASIM_KERN_EXEC_H

#include <stddef.h>
#include <stdint.h>

#include "ref_tile.h"
#include "sim.h"        /* sim_tensor (counter index), sim_dtype */

/* Per-tensor global-memory traffic, indexed by sim_tensor. unsigned long long
 * because that is what CUDA's 64-bit atomicAdd takes. */
typedef struct {
    unsigned long long read_elems[SIM_TENSOR_COUNT];
    unsigned long long write_elems[SIM_TENSOR_COUNT];
    unsigned long long read_ops[SIM_TENSOR_COUNT];     /* tiles moved */
    unsigned long long write_ops[SIM_TENSOR_COUNT];
} kern_counts;

/* Everything a kernel reads, passed by value (CUDA kernel parameter space).
 * Global tensors are row-major float arrays whose values are already rounded
 * to what their HBM type holds, laid out head after head as the simulator
 * holds them (sim_run.c): the query side Q, O, O_acc (B H, N, d), S, P
 * (B H, N, N_k), m, l, L (B H, N); the key/value side K, V (B G, N_k, d).
 * Query head h of sequence b is head b H + h, and reads key/value head
 * b G + h / (H / G). Tensors a loop order does not use are NULL. A kernel
 * moves the pointers to its head with kern_at_head and then addresses one
 * head, as before. */
typedef struct {
    const float *Q, *K, *V;
    float *O, *S, *P, *m, *l, *L;
    float *Oacc;             /* FA1's running output between key blocks, fp32
                                (sim_inter_acc); NULL: O itself, as the paper */
    float *Ot;               /* split-KV: the splits' partial outputs O~ (S N, d)
                                a head, fp32; m, l are then (S N) a head */
    /* The backward (kern_naive_bwd.cuh, kern_fa1_bwd.cuh, kern_fa2_bwd.cuh):
     * dO, dQ, dQ_acc (B H, N, d), D (B H, N; FA2's), dK, dV (B G, N_k, d),
     * standard attention's dP, dS (B H, N, N_k); P (naive), O and L (FA2) or
     * m, l (FA1) are then the forward's, read. NULL in a forward run, and
     * where the loop order has none. dQacc:
     * dQ's fp32 running sum (sim_inter_acc); NULL: dQ itself, as the paper.
     * dKexp, dVexp: GQA's (G < H) per-query-head dK, dV (B H, N_k, d) in the
     * dtype, summed over each group into dK, dV by kern_gqa_bwd.cuh
     * (sim_gqa_grad); NULL with G = H. */
    const float *dO;
    float *D, *dQ, *dK, *dV, *dQacc, *dKexp, *dVexp, *dP, *dS;
    /* dQ_i's turn (B H, T_r), one int per head and query block, which
     * kern_fa2_bwd_pre zeroes: with dq_atomic 0 the key blocks done with
     * dQ_i so far (a block waits until the count is its turn), else a lock
     * (1 while a block holds dQ_i). NULL: no turns (a forward run). */
    int *dq_turn;
    int dq_atomic;
    int64_t N, d, Br, Bc, Tr, Tc;   /* N: the query rows N_q */
    int64_t Nk;              /* key/value rows N_k (>= N under a causal mask) */
    int64_t H, G;            /* query and key/value heads per sequence */
    int64_t Bs_r;            /* naive one-pass softmax: rows per block */
    int64_t splits;          /* split-KV: S >= 1 (1: unsplit) */
    int causal;
    int64_t window;          /* sliding window W (with causal); 0: none */
    sim_dtype dtype;         /* storage type of Q, K, V, O, S, P in HBM */
    float scale;             /* 1 / sqrt(d), rounded once to float on the host */
    int p_round;             /* REF_ROUND_* of P~ before P~ V (sim_inter_p_round) */
    kern_counts *cnt;        /* NULL: do not count (the timed runs) */
} kern_params;

/* ---- the execution model ------------------------------------------------ */

#if defined(__CUDACC__)

#define KERN_GLOBAL static __global__ void
#define KERN_DEVICE static __device__ inline
#define kern_block_x() ((int64_t)blockIdx.x)
#define kern_block_y() ((int64_t)blockIdx.y)
#define kern_thread_x() ((int64_t)threadIdx.x)
#define kern_block_dim() ((int64_t)blockDim.x)
#define KERN_SYNC() __syncthreads()
extern __shared__ __align__(16) unsigned char kern_dyn_smem[];
#define KERN_SHARED() (kern_dyn_smem)
#define KERN_COUNT_ADD(ptr, v) atomicAdd((ptr), (unsigned long long)(v))

#else /* the CPU path */

/* The running thread's place in its launch; set by kern_cpu.c for each
 * thread, read through the macros below. */
typedef struct {
    int64_t block_x, block_y, thread_x, block_dim, grid_dim;
    unsigned char *smem;     /* this block's shared memory */
    void *barrier;           /* the block's barrier (kern_cpu.c) */
    int64_t *stalled;        /* its resident block's first to stall (y grid + x); -1: none */
} kern_cpu_ctx;

extern _Thread_local const kern_cpu_ctx *kern_cpu_tls;

/* A barrier across the threads of the running block (kern_cpu.c). */
void kern_cpu_sync(void);

/* The running thread's scratch buffer number `slot` (0..KERN_CPU_SCRATCH - 1)
 * of at least `bytes`, kept across the blocks of a launch and freed at its
 * end; NULL when there is no memory for it. Not shared memory: the tile-of-rows
 * primitives of kern_tile.h hold a thread's tiles there as floats. */
#define KERN_CPU_SCRATCH 3
void *kern_cpu_scratch(int slot, size_t bytes);

/* n elements of a tile of storage type t (kern_tile.h) as floats into dst,
 * and n floats (values of t) into such a tile: kern_half.h's exact
 * conversions, several elements a step where the CPU can. */
void kern_cpu_tile_floats(const void *p, sim_dtype t, int64_t n, float *dst);
void kern_cpu_tile_put_n(void *p, sim_dtype t, const float *src, int64_t n);

/* The running block waits for a turn that has not come (kern_turn_wait,
 * kern_turn_lock): a head's blocks run one at a time here, in the driver's
 * order, so it never would; on a GPU the block would spin for ever. kern_cpu.c notes the block and fails
 * the launch with a message naming it. */
void kern_cpu_stall(void);

/* The tests' record of how kernels carve their shared memory: when
 * kern_cpu_carve_log is not NULL, thread 0 of block 0 of every CPU launch
 * notes each kern_carve (launch number, name, offset, bytes). Only the tests
 * set it, and only around single-threaded use of the driver. */
#define KERN_CARVE_LOG_MAX 64
typedef struct {
    int launch;              /* the launch's number since the log was cleared */
    const char *name;
    uint64_t offset, bytes;
} kern_carve_rec;
typedef struct {
    int launches, n;
    kern_carve_rec r[KERN_CARVE_LOG_MAX];
} kern_carve_log;
extern kern_carve_log *kern_cpu_carve_log;
void kern_cpu_carve_note(const char *name, const void *at, int64_t bytes);

#define KERN_GLOBAL static void
#define KERN_DEVICE static inline
#define kern_block_x() (kern_cpu_tls->block_x)
#define kern_block_y() (kern_cpu_tls->block_y)
#define kern_thread_x() (kern_cpu_tls->thread_x)
#define kern_block_dim() (kern_cpu_tls->block_dim)
#define KERN_SYNC() kern_cpu_sync()
#define KERN_SHARED() (kern_cpu_tls->smem)
/* Only thread 0 of a block counts, and each resident block on the CPU into
 * counters of its own (kern_cpu.c sums them after the launch): no race. */
#define KERN_COUNT_ADD(ptr, v) (*(ptr) += (unsigned long long)(v))

#endif

/* ---- helpers shared by the kernels -------------------------------------- */

/*
 * The next buffer of the block's shared memory: returns *sm and advances it by
 * `bytes`. Each kernel carves the plan's buffers of its phase with it, the
 * fp32 buffers first (in the plan's order), then the tiles held in the dtype
 * (in the plan's order): every fp32 buffer is then 4-byte aligned and every
 * 2-byte tile 2-byte aligned with no padding, so the layout's bytes are the
 * plan's sum exactly (kern_driver.c's kern_layout computes the same offsets;
 * tests/test_kernels.c compares them with what kern_carve records on the CPU).
 */
KERN_DEVICE void *kern_carve(unsigned char **sm, const char *name, int64_t bytes)
{
    void *at = *sm;
#if defined(__CUDACC__)
    (void)name;
#else
    if (kern_cpu_carve_log)
        kern_cpu_carve_note(name, at, bytes);
#endif
    *sm += bytes;
    return at;
}

KERN_DEVICE int64_t kern_min(int64_t a, int64_t b)
{
    return a < b ? a : b;
}

/*
 * The mask of sim.h ("the mask"): query row r stands at position r + off of
 * the keys, off = N_k - N_q; with causal it sees key c iff c <= r + off, and
 * with a window W also c > r + off - W.
 */
KERN_DEVICE ref_mask kern_mask(const kern_params *p)
{
    ref_mask mk;
    mk.causal = p->causal;
    mk.offset = p->Nk - p->N;
    mk.window = p->window;
    mk.blocks = NULL;          /* the kernels are dense: fasim gpu refuses --block-mask */
    return mk;
}

/* The key blocks j that query block i visits (holds a visible score in):
 * sim.h's sim_block_js, which device code cannot call; empty when
 * lo > hi. tests/test_kernels.c checks the two agree. */
KERN_DEVICE sim_range kern_block_js(const kern_params *p, int64_t i)
{
    const int64_t off = p->Nk - p->N, r0 = i * p->Br;
    const int64_t r1 = kern_min(r0 + p->Br, p->N) - 1;
    int64_t lo = 0, hi = p->Nk - 1;                  /* the keys rows r0..r1 see */
    if (p->causal) {
        hi = kern_min(r1 + off, p->Nk - 1);
        if (p->window > 0 && r0 + off - p->window + 1 > 0)
            lo = r0 + off - p->window + 1;
    }
    sim_range j;
    j.lo = lo / p->Bc;
    j.hi = hi < lo ? lo / p->Bc - 1 : hi / p->Bc;
    return j;
}

/* The query blocks i that visit key block j: sim.h's sim_block_is. */
KERN_DEVICE sim_range kern_block_is(const kern_params *p, int64_t j)
{
    const int64_t off = p->Nk - p->N, c0 = j * p->Bc;
    const int64_t c1 = kern_min(c0 + p->Bc, p->Nk) - 1;
    int64_t lo = 0, hi = p->N - 1;                   /* the rows that see keys c0..c1 */
    if (p->causal) {
        if (c0 - off > 0)
            lo = c0 - off;
        if (p->window > 0 && c1 - off + p->window - 1 < hi)
            hi = c1 - off + p->window - 1;
    }
    sim_range i;
    i.lo = lo / p->Br;
    i.hi = hi < lo ? lo / p->Br - 1 : hi / p->Br;
    return i;
}

/* Move p's tensors to query head q (0 .. B H - 1: head b H + h) and the
 * key/value head it reads, b G + h / (H / G) (GQA; MQA is G = 1).
 * KERN_BUG_KV_HEAD_MODULO (never in the fasim build; tests/test_kernels.c
 * must catch it): head h reads h mod G, the same traffic, the wrong keys. */
KERN_DEVICE void kern_at_head(kern_params *p, int64_t q)
{
    const int64_t b = q / p->H, h = q % p->H;
#ifdef KERN_BUG_KV_HEAD_MODULO
    const int64_t kv = b * p->G + h % p->G;
#else
    const int64_t kv = b * p->G + h / (p->H / p->G);
#endif
    const int64_t Nd = p->N * p->d, rows = p->N, srows = p->splits * p->N;
    p->Q += q * Nd;
    p->K += kv * p->Nk * p->d;
    p->V += kv * p->Nk * p->d;
    if (p->O)                    /* none in the naive backward */
        p->O += q * Nd;
    if (p->Oacc)                 /* unused tensors stay NULL: no offset on NULL */
        p->Oacc += q * Nd;
    if (p->S)
        p->S += q * rows * p->Nk;
    if (p->P)
        p->P += q * rows * p->Nk;
    if (p->Ot)                   /* split-KV's partials: S N rows a head */
        p->Ot += q * srows * p->d;
    if (p->m)
        p->m += q * srows;
    if (p->l)
        p->l += q * srows;
    if (p->L)
        p->L += q * rows;
    if (p->dO) {                 /* the backward's tensors */
        p->dO += q * Nd;
        p->dQ += q * Nd;
        if (p->D)
            p->D += q * rows;
        if (p->dQacc)
            p->dQacc += q * Nd;
        if (p->dP)
            p->dP += q * rows * p->Nk;
        if (p->dS)
            p->dS += q * rows * p->Nk;
        p->dK += kv * p->Nk * p->d;
        p->dV += kv * p->Nk * p->d;
        if (p->dKexp) {          /* GQA: the query head's own dK, dV */
            p->dKexp += q * p->Nk * p->d;
            p->dVexp += q * p->Nk * p->d;
        }
        if (p->dq_turn)
            p->dq_turn += q * p->Tr;
    }
}

/*
 * Turns: blocks of one launch that read-modify-write the same global tile
 * (FA2's backward: dQ_i) take turns through an int in global memory, as the
 * released kernels' deterministic backward does with its semaphore.
 *
 *   kern_turn_wait(turn, v)   until *turn == v (the blocks before this one
 *                             are done with the tile);
 *   kern_turn_lock(turn)      until this block sets *turn from 0 to 1 (any
 *                             order, one block at a time);
 *   kern_turn_pass(turn, v)   the tile's writes visible, then *turn = v.
 *
 * Every thread of the block calls them (they hold barriers). On a GPU,
 * thread 0 spins (a volatile read, or atomicCAS) while the others wait at
 * the barrier; the fences are cooperative groups' grid barrier's: the
 * writers' __threadfence() before the atomic store of the turn, the
 * reader's after it sees the turn, and __syncthreads() to the rest of each
 * block. Progress: a block only ever waits for blocks of lower blockIdx.x
 * (an earlier turn) or for a block holding a lock, which waits for nothing;
 * blocks are issued in blockIdx order, so the ones it waits for are resident
 * or done. On the CPU path a head's blocks run one at a time in the driver's
 * order: a turn that has not come when it is asked for never will, so
 * kern_cpu_stall() fails the launch instead of spinning.
 */
KERN_DEVICE void kern_turn_wait(int *turn, int v)
{
    if (kern_thread_x() == 0) {
#if defined(__CUDACC__)
        while (*(volatile int *)turn != v) {
        }
        __threadfence();
#else
        if (*turn != v)
            kern_cpu_stall();
#endif
    }
    KERN_SYNC();
}

KERN_DEVICE void kern_turn_lock(int *turn)
{
    if (kern_thread_x() == 0) {
#if defined(__CUDACC__)
        while (atomicCAS(turn, 0, 1) != 0) {
        }
        __threadfence();
#else
        if (*turn != 0)
            kern_cpu_stall();
        *turn = 1;
#endif
    }
    KERN_SYNC();
}

KERN_DEVICE void kern_turn_pass(int *turn, int v)
{
#if defined(__CUDACC__)
    __threadfence();         /* this thread's writes of the tile, device-wide */
#endif
    KERN_SYNC();
    if (kern_thread_x() == 0) {
#if defined(__CUDACC__)
        __threadfence();
        atomicExch(turn, v);
#else
        *turn = v;
#endif
    }
}

/* The value an HBM element of tensor t holds: the fp32 tensors of sim's
 * tensor table (sim_tensor_about: m, l, L, D, O~, the page table, O_acc
 * and dQ_acc) keep
 * it; the others take the run's dtype, rounded to nearest even. Device code
 * cannot read that table, so tests/test_registry.c checks that the two
 * agree for every tensor. */
KERN_DEVICE float kern_hbm_round(sim_dtype dt, sim_tensor t, float x)
{
    if (t == SIM_m || t == SIM_l || t == SIM_L || t == SIM_D || t == SIM_Ot || t == SIM_PT ||
        t == SIM_Oacc || t == SIM_dQacc ||
        dt == SIM_FP32)
        return x;
    return dt == SIM_FP16 ? ref_round_fp16(x) : ref_round_bf16(x);
}

/*
 * Global -> shared (kern_load; kern_load_to with add = 0, and with add = 1
 * kern_load_add below): the tile (r0.., c0..) of rows x cols of tensor t, whose
 * rows are `ld` floats apart in global memory, into dst (row-major, row
 * length cols). All threads of the block copy (element x goes to thread
 * x mod blockDim, so neighbouring threads touch neighbouring addresses);
 * thread 0 counts one transfer of rows * cols elements. No barrier inside:
 * the caller puts KERN_SYNC() between this and any use of dst.
 */
KERN_DEVICE void kern_load_to(kern_counts *cnt, sim_tensor t, float *dst, const float *src,
                              int64_t ld, int64_t r0, int64_t c0, int64_t rows, int64_t cols,
                              int add)
{
    for (int64_t x = kern_thread_x(); x < rows * cols; x += kern_block_dim()) {
        int64_t r = x / cols, c = x % cols;
        const float v = src[(r0 + r) * ld + c0 + c];
        dst[x] = add ? dst[x] + v : v;
    }
    if (cnt && kern_thread_x() == 0) {
        KERN_COUNT_ADD(&cnt->read_elems[t], rows * cols);
        KERN_COUNT_ADD(&cnt->read_ops[t], 1);
    }
}

KERN_DEVICE void kern_load(kern_counts *cnt, sim_tensor t, float *dst, const float *src,
                           int64_t ld, int64_t r0, int64_t c0, int64_t rows, int64_t cols)
{
    kern_load_to(cnt, t, dst, src, ld, r0, c0, rows, cols, 0);
}

/* The same, added: dst[x] = dst[x] + the tile's element x, one fp32 addition
 * per element, counted as kern_load. Element x is thread x mod blockDim's
 * here as in kern_load and kern_store, so a thread adds only to the
 * elements it wrote or zeroed itself: no barrier between two of these. */
KERN_DEVICE void kern_load_add(kern_counts *cnt, sim_tensor t, float *dst, const float *src,
                               int64_t ld, int64_t r0, int64_t c0, int64_t rows, int64_t cols)
{
    kern_load_to(cnt, t, dst, src, ld, r0, c0, rows, cols, 1);
}

/* Shared -> global: src (rows x cols, row-major) into tile (r0.., c0..) of
 * tensor t, each value rounded to t's HBM type; counted as kern_load is. The
 * caller has synchronised so that src is complete. */
KERN_DEVICE void kern_store(kern_counts *cnt, sim_dtype dt, sim_tensor t, float *dst,
                            int64_t ld, int64_t r0, int64_t c0, int64_t rows, int64_t cols,
                            const float *src)
{
    for (int64_t x = kern_thread_x(); x < rows * cols; x += kern_block_dim()) {
        int64_t r = x / cols, c = x % cols;
        dst[(r0 + r) * ld + c0 + c] = kern_hbm_round(dt, t, src[x]);
    }
    if (cnt && kern_thread_x() == 0) {
        KERN_COUNT_ADD(&cnt->write_elems[t], rows * cols);
        KERN_COUNT_ADD(&cnt->write_ops[t], 1);
    }
}

#endif /* FASIM_KERN_EXEC_H */
