/*
 * sim_hier.h — the two-level memory hierarchy (internal to sim/).
 *
 * HBM holds the tensors (unbounded); SRAM holds named buffers whose bytes are
 * allocated against a limit of M bytes, with the peak tracked. Every transfer
 * is one tile (rows x cols of one tensor) and is counted per tensor and
 * direction in elements and operations (bytes follow from the element size).
 *
 * In compute mode the tensors and buffers hold real floats (values of the
 * run's dtype, kept in float storage) and sim_load / sim_store copy them; in
 * count-only mode the data pointers are NULL and only the counters move.
 *
 * The loop orders (algo_*.c) use only this interface, ref_tile.h and its
 * vector paths for the tile products (ref_simd.h).
 */
#ifndef FASIM_SIM_HIER_H
#define FASIM_SIM_HIER_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "ref_simd.h"
#include "ref_tile.h"
#include "sim.h"
#include "sim_bmask.h"
#include "sim_loop.h"

#define SIM_UNLIKELY(x) __builtin_expect(!!(x), 0)
#define SIM_NOINLINE __attribute__((noinline))

typedef struct {
    const char *name;
    uint64_t bytes;
    float *data;                /* compute mode only */
    int live;
    int id;                     /* sim_buf_id of a plan's buffer, else SIM_BUF_COUNT */
    int level;                  /* sim_level it is charged to: SRAM, or REG (a
                                   kernel plan's accumulators) */
} sim_sram_buf;

/* One level's bytes: its capacity (0: unbounded), in use now, and the most
 * in use at once. */
typedef struct {
    uint64_t limit, used, peak;
} sim_level_use;

typedef struct sim_hier {
    sim_shape sh;
    sim_run_opts run;           /* how it runs: the plan's (sim_plan.run) */
    int compute;                /* 1: real data and arithmetic */
    float scale;                /* 1 / sqrt(d), rounded once to float */
    int p_round;                /* REF_ROUND_* of the probabilities entering a
                                   product (sim_inter_p_round) */
    ref_mask mask;              /* the shape's mask, for the tile primitives */
    sim_visits vis;             /* a block mask: the plan's visited tiles
                                   (sim_bmask.h); all NULL when dense */
    float *hbm[SIM_TENSOR_COUNT];       /* compute mode: tensor data */
    int64_t hbm_ld[SIM_TENSOR_COUNT];   /* row length of each tensor */
    /* The head(s) the loop order works on now. Tensors hold every head's
     * rows one after the other (B, H, N, d as ((B H N), d)); the loop orders
     * address rows within the current head and the copies add base[t], the
     * first row of that head in tensor t. A grouped block's hq query heads
     * follow each other, so head k of the block is rows k N onwards. */
    int64_t base[SIM_TENSOR_COUNT];
    int64_t head;               /* first query head of the block: b H + h */
    int64_t hq;                 /* query heads in the block (1, or H/G grouped) */
    int64_t kv_head;            /* the key/value head in hand: b G + g */
    /* Paged KV (run.page > 0): K and V are a pool of pages of P rows, and
     * pt[kv_head * pages + p] is the pool page that holds logical page p of
     * that head (compute mode; NULL otherwise). */
    int64_t *pt;
    /* What moved: per tensor and direction at HBM's side, the transfers
     * between HBM and SRAM (a second boundary, an L2's, counts beside it). */
    sim_counts c;
    /* Each level's capacity in bytes (0: unbounded), bytes in use, and the
     * most in use at once. SRAM's limit is the plan's M, the registers' its
     * register budget; HBM's use is the tensors', not tracked. */
    sim_level_use lv[SIM_LEVEL_COUNT];
    int64_t block;              /* the thread block in hand (sim_event.block) */
    double clock;               /* seconds since the run began: every event's time
                                   stamp; 0 while no timing model advances it */
    sim_sram_buf bufs[SIM_MAX_BUFFERS];
    int nbufs;
    const sim_observer *obs;
    int line;
    int64_t i, j;
    int64_t split;              /* split-KV: the split in hand (events), else -1 */
    uint64_t steps;
    /* Threads (sim_run.c): this hierarchy runs the query blocks i = part,
     * part + parts, ... of a loop order whose blocks are independent
     * (sim_loop.rows_parallel); parts 0 or 1: all of them. */
    int64_t part, parts;
    /* Threads over heads: this hierarchy runs the groups of heads q = b G + g
     * (a key/value head and its query heads) with q % head_parts ==
     * head_part; head_parts 0 or 1: all of them. */
    int64_t head_part, head_parts;
    int failed;
    char *err;
    size_t errlen;
} sim_hier;

/* Emit an event to the observer (only called when one is attached). */
void sim_emit(sim_hier *h, sim_event_kind kind, sim_tensor t, int64_t r0,
              int64_t c0, int64_t rows, int64_t cols, const char *buf,
              uint64_t bytes, const float *data);

/* The same for a transfer into or out of SRAM buffer b (its printed name). */
void sim_emit_buf(sim_hier *h, sim_event_kind kind, sim_tensor t, int64_t r0,
                  int64_t c0, int64_t rows, int64_t cols, sim_buf_id b,
                  uint64_t bytes, const float *data);

/* Allocate an SRAM buffer of rows x cols elements of elem_bytes each.
 * Returns its storage in compute mode, NULL in count-only mode. If the
 * allocation would exceed the SRAM limit (which a checked plan never does) or
 * host memory runs out, h->failed is set with a message; callers test
 * h->failed once after allocating. */
float *sim_sram_alloc(sim_hier *h, const char *name, int64_t rows, int64_t cols,
                      int elem_bytes);

/* Allocate the plan's buffer `id` of phase `phase` (the plan is the single
 * source of SRAM sizes), at the level the plan puts it (SRAM or registers).
 * Same return convention as sim_sram_alloc. */
float *sim_sram_take(sim_hier *h, const sim_plan *p, int phase, sim_buf_id id);

/* Release every SRAM buffer (the end of a phase). */
void sim_sram_release_all(sim_hier *h);

/* Standard attention's softmax backward over B_r x B_c tiles, two passes
 * per row block i at pseudocode line `line`: the row sums D_i = rowsum(P o
 * dP), continued tile after tile in the order of one pass, then dS = P o
 * (dP - D_i) stored to tensor t_dS from dP_ij's buffer. P_ij, dP_ij, D_i
 * are the caller's SRAM buffers; dP_first loads dP before P (the order the
 * caller's listing names). Shared by naive's Algorithm 3 line 3 and the
 * unfused baseline's softmax backward. */
void sim_softmax_bwd_tiles(sim_hier *h, const sim_plan *p, int line, sim_tensor t_P,
                           sim_tensor t_dP, sim_tensor t_dS, int dP_first, float *P_ij,
                           float *dP_ij, float *D_i);

/* Round a value to what an HBM element of tensor t holds. */
static inline float sim_hbm_round(const sim_hier *h, sim_tensor t, float x)
{
    return ref_round_to(x, sim_dtype_round_kind(sim_tensor_dtype(t, h->sh.dtype)));
}

/* The loop order reached pseudocode `line` with block indices i, j. */
static inline void sim_at(sim_hier *h, int line, int64_t i, int64_t j)
{
    /* Only observers read the position: unobserved runs skip even the stores,
     * which keeps count-only runs at a few nanoseconds per tile step. */
    if (SIM_UNLIKELY(h->obs != NULL)) {
        h->line = line;
        h->i = i;
        h->j = j;
        sim_emit(h, SIM_EV_LINE, SIM_TENSOR_COUNT, 0, 0, 0, 0, NULL, 0, NULL);
    }
}

/* Compute mode's data movement, out of line so that the counting path of
 * sim_load / sim_store stays a handful of instructions. */
void sim_copy_in(const sim_hier *h, sim_tensor t, float *dst, int64_t r0, int64_t c0,
                 int64_t rows, int64_t cols);
void sim_copy_out(sim_hier *h, sim_tensor t, const float *src, int64_t r0, int64_t c0,
                  int64_t rows, int64_t cols);

/* Paged KV: a tile of K or V read page by page (sim_hier.c). */
void sim_load_paged(sim_hier *h, sim_tensor t, sim_buf_id buf, float *dst, int64_t r0,
                    int64_t c0, int64_t rows, int64_t cols);

/* HBM -> SRAM: tile (r0.., c0..) of tensor t, rows x cols, into dst
 * (row-major, row length cols). With paged KV a tile of K or V is read
 * through the page table: sim_load_paged. */
static inline void sim_load(sim_hier *h, sim_tensor t, sim_buf_id buf, float *dst,
                            int64_t r0, int64_t c0, int64_t rows, int64_t cols)
{
    if (SIM_UNLIKELY(h->run.page > 0) && (t == SIM_K || t == SIM_V)) {
        sim_load_paged(h, t, buf, dst, r0, c0, rows, cols);
        return;
    }
    h->c.read_elems[t] += (uint64_t)(rows * cols);
    h->c.read_ops[t] += 1;
    if (h->compute)
        sim_copy_in(h, t, dst, r0, c0, rows, cols);
    if (SIM_UNLIKELY(h->obs != NULL))
        sim_emit_buf(h, SIM_EV_LOAD, t, r0, c0, rows, cols, buf,
                 (uint64_t)(rows * cols) * (uint64_t)sim_tensor_bytes(t, h->sh.dtype),
                 dst);
}

/* SRAM -> HBM: src (rows x cols, row-major) into tile (r0.., c0..) of t,
 * each value rounded to the tensor's HBM type. */
static inline void sim_store(sim_hier *h, sim_tensor t, sim_buf_id buf,
                             const float *src, int64_t r0, int64_t c0,
                             int64_t rows, int64_t cols)
{
    h->c.write_elems[t] += (uint64_t)(rows * cols);
    h->c.write_ops[t] += 1;
    if (h->compute)
        sim_copy_out(h, t, src, r0, c0, rows, cols);
    if (SIM_UNLIKELY(h->obs != NULL))
        sim_emit_buf(h, SIM_EV_STORE, t, r0, c0, rows, cols, buf,
                 (uint64_t)(rows * cols) * (uint64_t)sim_tensor_bytes(t, h->sh.dtype),
                 src);
}

/* The step between the query blocks this hierarchy runs (sim_hier.parts). */
static inline int64_t sim_part_step(const sim_hier *h)
{
    return h->parts > 1 ? h->parts : 1;
}

/* Count-only with no observer and contiguous K, V: nothing moves but the
 * counters. A loop order may then run an inner loop as a tally (below): the
 * transfers summed in locals, which the compiler keeps in registers, and
 * added to h->c once per block, with no mode or observer flag tested per
 * step. The counts are those of the stepwise loop, transfer for transfer
 * (tests/test_theory.c runs both). */
static inline int sim_counting_only(const sim_hier *h)
{
    return !h->compute && h->obs == NULL && h->run.page == 0;
}

/* One tensor's transfers in one direction, tallied in locals. */
typedef struct {
    uint64_t elems, ops;
} sim_tally;

static inline void sim_tally_add(sim_tally *x, int64_t rows, int64_t cols)
{
    x->elems += (uint64_t)(rows * cols);
    x->ops += 1;
}

/* The tally written back: loads of tensor t (HBM -> SRAM), stores of t. */
static inline void sim_tally_load(sim_hier *h, sim_tensor t, sim_tally x)
{
    h->c.read_elems[t] += x.elems;
    h->c.read_ops[t] += x.ops;
}

static inline void sim_tally_store(sim_hier *h, sim_tensor t, sim_tally x)
{
    h->c.write_elems[t] += x.elems;
    h->c.write_ops[t] += x.ops;
}

/* Element off of an SRAM buffer, which is NULL in count-only mode: there
 * the result is NULL too (NULL + off is undefined behaviour in C, even for
 * off = 0). */
static inline float *sim_buf_at(float *buf, int64_t off)
{
    return buf ? buf + off : NULL;
}

static inline int64_t sim_min64(int64_t a, int64_t b)
{
    return a < b ? a : b;
}

/* The block ranges of the mask (sim.h) for the plan's block sizes: the key
 * blocks query block i visits, the query blocks that visit key block j.
 * Without causal masking they are all blocks. With a block mask they run
 * from the first visited tile to the last, and a loop over one skips the
 * tiles between that sim_visited says are not visited. */
static inline sim_range sim_visit_js(const sim_hier *h, const sim_plan *p, int64_t i)
{
    if (SIM_UNLIKELY(h->vis.bits != NULL))
        return h->vis.js[i];
    return sim_block_js(&h->sh, i, p->Br, p->Bc);
}

static inline sim_range sim_visit_is(const sim_hier *h, const sim_plan *p, int64_t j)
{
    if (SIM_UNLIKELY(h->vis.bits != NULL))
        return h->vis.is[j];
    return sim_block_is(&h->sh, j, p->Br, p->Bc);
}

/* Whether tile (i, j) of a visit range is visited: always, but under a
 * block mask (the tile holds a visible score). */
static inline int sim_visited(const sim_hier *h, int64_t i, int64_t j)
{
    return h->vis.bits == NULL || h->vis.bits[i * h->vis.Tc + j];
}

/* Compute mode: mask a score tile whose top-left score is (r0, c0). */
static inline void sim_mask_tile(const sim_hier *h, float *S, int64_t br, int64_t bc,
                                 int64_t r0, int64_t c0)
{
    if (h->sh.causal || h->sh.blocks)
        ref_tile_mask(S, (int)br, (int)bc, r0, c0, &h->mask);
}

/* An empty online-softmax state for `rows` rows: m = -inf, l = 0, O = 0
 * (O: rows x d). Compute mode only. */
static inline void sim_state_empty(float *m, float *l, float *O, int64_t rows, int64_t d)
{
    for (int64_t r = 0; r < rows; r++) {
        m[r] = -REF_INF;
        l[r] = 0.0f;
    }
    for (int64_t x = 0; x < rows * d; x++)
        O[x] = 0.0f;
}

#endif /* FASIM_SIM_HIER_H */
