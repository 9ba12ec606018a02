/*
 * sim_registry.c — the loop orders fasim knows: one line per descriptor
 * (each defined in its own sim/algo_*.c), and the lookup.
 *
 * Adding a loop order is a new algo_*.c exporting its sim_loop, and one line
 * here (the build takes every algo_*.c).
 */
#include "sim_loop.h"

#include <stddef.h>

extern const sim_loop sim_loop_naive, sim_loop_naive_bwd;
extern const sim_loop sim_loop_fa1, sim_loop_fa1_bwd;
extern const sim_loop sim_loop_fa2, sim_loop_fa2_bwd, sim_loop_fa2_split;

static const sim_loop *const BUILTIN[] = {
    &sim_loop_naive,
    &sim_loop_fa1,
    &sim_loop_fa2,
    &sim_loop_naive_bwd,
    &sim_loop_fa1_bwd,
    &sim_loop_fa2_bwd,
    &sim_loop_fa2_split,
};

#define NBUILTIN ((int)(sizeof BUILTIN / sizeof BUILTIN[0]))

/* Loop orders registered at run time (tests): a handful at most. */
#define SIM_LOOP_EXTRA_MAX 8
static const sim_loop *extra[SIM_LOOP_EXTRA_MAX];
static int nextra;

static const sim_loop *entry(int k)
{
    return k < NBUILTIN ? BUILTIN[k] : extra[k - NBUILTIN];
}

static const sim_loop *lookup(sim_algo algo, sim_pass pass, int split, int group)
{
    for (int k = 0; k < NBUILTIN + nextra; k++) {
        const sim_loop *l = entry(k);
        if (l->algo == algo && l->pass == pass && l->split == split && (!group || l->grouped))
            return l;
    }
    return NULL;
}

const sim_loop *sim_loop_find(sim_algo algo, const sim_shape *sh)
{
    return lookup(algo, sh->pass, sim_shape_S(sh) > 1, sh->group != 0);
}

const sim_loop *sim_loop_of(sim_algo algo, sim_pass pass)
{
    return lookup(algo, pass, 0, 0);
}

int sim_loop_register(const sim_loop *l)
{
    if (!l || (unsigned)l->algo < SIM_ALGO_COUNT || nextra == SIM_LOOP_EXTRA_MAX ||
        lookup(l->algo, l->pass, l->split, 0))
        return -1;
    extra[nextra++] = l;
    return 0;
}
