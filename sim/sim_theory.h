/*
 * sim_theory.h — the shared pieces of the closed forms (internal to sim/ and
 * to loop orders defined in tests).
 *
 * Each loop order's file (algo_*.c) writes its own one-head counts and tile
 * steps with these helpers; sim_theory.c adds paged KV and the heads of a
 * batch. Every helper is overflow-checked: a result past 64 bits sets
 * k->overflow, and sim_theory_counts then returns -1.
 */
#ifndef FASIM_SIM_THEORY_H
#define FASIM_SIM_THEORY_H

#include <stdint.h>

#include "sim.h"
#include "sim_loop.h"

struct sim_chk {
    int overflow;
};

enum { SIM_RD = 0, SIM_WR = 1 };

static inline uint64_t sim_th_mul(sim_chk *k, uint64_t a, uint64_t b)
{
    uint64_t r;
    if (__builtin_mul_overflow(a, b, &r))
        k->overflow = 1;
    return r;
}

static inline uint64_t sim_th_add(sim_chk *k, uint64_t a, uint64_t b)
{
    uint64_t r;
    if (__builtin_add_overflow(a, b, &r))
        k->overflow = 1;
    return r;
}

/* Add elems elements in ops transfers of tensor t, read (SIM_RD) or
 * written (SIM_WR). */
static inline void sim_th_put(sim_counts *c, sim_tensor t, int dir_write, uint64_t elems,
                              uint64_t ops, sim_chk *k)
{
    if (dir_write) {
        c->write_elems[t] = sim_th_add(k, c->write_elems[t], elems);
        c->write_ops[t] = sim_th_add(k, c->write_ops[t], ops);
    } else {
        c->read_elems[t] = sim_th_add(k, c->read_elems[t], elems);
        c->read_ops[t] = sim_th_add(k, c->read_ops[t], ops);
    }
}

/* sum_{k=0}^{n-1} floor((a k + b) / m) for a, b >= 0, m >= 1, in O(log). */
uint64_t sim_th_floor_sum(sim_chk *k, uint64_t n, uint64_t m, uint64_t a, uint64_t b);

/* Visited block pairs under the shape's mask (T_r T_c without one). */
uint64_t sim_th_visited(sim_chk *k, const sim_shape *sh, int64_t Br, int64_t Bc);

/* Over the visited block pairs of the plan: the query rows of the query
 * block of each pair, summed (B_r per pair, less B_r - br_last for each key
 * block the last, partial, query block visits). *V_b gets the pairs. */
uint64_t sim_th_pair_rows(sim_chk *k, const sim_plan *p, const sim_shape *sh, uint64_t *V_b);

/* Over the visited block pairs of the plan: the scores of their tiles,
 * B_r x B_c each, trimmed to N and N_k in the last blocks (the scores FA1
 * and FA2 compute, masked ones included). *rows gets sim_th_pair_rows. A
 * double, as sim_flops is. */
double sim_th_pair_scores(sim_chk *k, const sim_plan *p, const sim_shape *sh, uint64_t *rows);

/* The key blocks no query sees (those before row 0's first key under a
 * window), which loops over key blocks skip. Without a block mask only: a
 * block mask may leave any key block unseen (sim_th_kv_seen). */
uint64_t sim_th_kv_skip(const sim_plan *p, const sim_shape *sh);

/* The key blocks some query sees (*blocks) and their keys (returned): every
 * block but the sim_th_kv_skip first ones, or under a block mask the key
 * blocks with a visited tile. */
uint64_t sim_th_kv_seen(sim_chk *k, const sim_plan *p, const sim_shape *sh, uint64_t *blocks);

/* Over the visited block pairs: the keys of their key blocks, summed (B_c
 * per pair, bc_last for a pair with the last key block). */
uint64_t sim_th_pair_keys(sim_chk *k, const sim_plan *p, const sim_shape *sh);

/* The backward passes' key blocks (FA1 line 7, FA2 line 6): K_j, V_j read
 * once for every key block some query sees (*blocks of them). Returns those
 * blocks' keys times d, which the dK_j, dV_j writes of FA1 share. */
uint64_t sim_bwd_kv_counts(sim_chk *k, const sim_plan *p, const sim_shape *sh,
                           sim_counts *out, uint64_t *blocks);

/* FA2's line 7: K_j, V_j at every visited block pair (algo_fa2.c), which
 * its split form (algo_fa2_split.c) shares. */
void sim_fa2_kv_counts(sim_chk *k, const sim_plan *p, const sim_shape *sh, sim_counts *out);

/* FA2's forward (algo_fa2.c), which FlashAttention-3's forward (algo_fa3.c)
 * shares: the same loop order on the same tiles, so the same HBM traffic,
 * tile steps, FLOPs and numerics; FA3 differs in time (study/sim_gpu_fa3.c)
 * and in its pseudocode. sim_fwd_lines names the pseudocode line the nest
 * marks (sim_at) at each of its points. */
typedef struct {
    int load_q, init, load_kv, scores, online, acc, normalise, lse, write_o, write_l, ret;
} sim_fwd_lines;
struct sim_hier;
int sim_fa2_fwd_nest(struct sim_hier *h, const sim_plan *p, const sim_fwd_lines *ln);
void sim_fa2_fwd_plan(sim_plan *p, const sim_shape *sh, int e);
void sim_fa2_fwd_counts(sim_chk *k, const sim_plan *p, const sim_shape *sh, sim_counts *out);
uint64_t sim_fa2_fwd_steps(sim_chk *k, const sim_plan *p, const sim_shape *sh);
void sim_fa2_fwd_flops(sim_chk *k, const sim_plan *p, const sim_shape *sh, sim_flops *out);

/* The passes of standard attention's forward softmax for form f when B_s
 * whole rows of S fit in SRAM (sim_plan_rows; 0: not one): 1, 2 or 3;
 * AUTO is 1 when a row fits, else 2. */
int sim_naive_softmax(sim_softmax f, int64_t B_s);

/* Standard attention's tile steps (algo_naive.c): tiled_lines lines tile by
 * tile (2 forward, 4 backward) and the softmax line in its passes. */
uint64_t sim_naive_steps(sim_chk *k, const sim_plan *p, const sim_shape *sh, int tiled_lines);

#endif /* FASIM_SIM_THEORY_H */
