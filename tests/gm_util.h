/*
 * gm_util.h — one pass through the GPU model on an A100, planned in the test
 * (test_claims, test_lessons_io), to hold what the speed claim and lessons
 * 10 and 11 print against a direct call of sim_gpu_model_run.
 */
#ifndef FASIM_TEST_GM_UTIL_H
#define FASIM_TEST_GM_UTIL_H

#include <stdint.h>
#include <stdio.h>

#include "sim.h"
#include "sim_gpu_model.h"
#include "sim_presets.h"

/* algo's pass on a100 with M its shared memory per block: the released
 * kernel's plan (standard attention, which has none: its best plan), and an
 * L2 of l2 bytes (SIM_GM_L2_INFINITE: unbounded). Returns 0, or -1 with a
 * message in err. */
static inline int gm_util_pass(sim_algo a, sim_pass q, const sim_shape *base, uint64_t l2,
                               sim_gm_result *r, char *err, size_t errlen)
{
    const sim_gpu *g = sim_gpu_find("a100");
    sim_shape sh = *base;
    sh.M = g->smem_per_block;
    const sim_run_opts run = { .pass = q };
    const sim_kernel_target t = sim_gpu_kernel_target(g);
    sim_plan p;
    if ((a == SIM_NAIVE ? sim_plan_choose(a, &sh, &run, SIM_PLAN_AUTO, 0, 0, &p, err, errlen)
                        : sim_plan_kernel(a, &sh, &run, &t, 0, 0, &p, err, errlen)) != 0)
        return -1;
    const sim_gm_opts o = { .l2_bytes = l2, .l2_set = 1 };
    return sim_gpu_model_run(g, &p, &sh, &o, r, err, errlen);
}

#endif /* FASIM_TEST_GM_UTIL_H */
