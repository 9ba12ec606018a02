/*
 * kern_cpu_kernels.c — the kernel source compiled for the CPU path.
 *
 * The .cuh files are included here exactly as kern_cuda.cu includes them; the
 * kernels become static C functions, collected in a table. The tests compile
 * this same file again with KERN_BUG_SKIP_RESCALE or KERN_BUG_RELOAD_Q
 * defined and KERN_TABLE_NAME renamed, to get a deliberately wrong build of
 * the same source that their comparisons must reject.
 */
#include "kern_internal.h"

#include "kern_fa1.cuh"
#include "kern_fa1_bwd.cuh"
#include "kern_fa2.cuh"
#include "kern_fa2_bwd.cuh"
#include "kern_gqa_bwd.cuh"
#include "kern_naive.cuh"

#ifndef KERN_TABLE_NAME
#define KERN_TABLE_NAME kern_cpu_kernels
#define KERN_TABLE_LABEL "kernels"
#endif
#ifndef KERN_TABLE_LABEL
#define KERN_TABLE_LABEL "kernels (test variant)"
#endif

const kern_cpu_table KERN_TABLE_NAME = {
    KERN_TABLE_LABEL,
    {
        [KERN_K_NAIVE_SCORES] = kern_naive_scores,
        [KERN_K_NAIVE_SOFTMAX_ROWS] = kern_naive_softmax_rows,
        [KERN_K_NAIVE_SOFTMAX_2PASS] = kern_naive_softmax_2pass,
        [KERN_K_NAIVE_SOFTMAX_3PASS] = kern_naive_softmax_3pass,
        [KERN_K_NAIVE_PV] = kern_naive_pv,
        [KERN_K_FA1] = kern_fa1,
        [KERN_K_FA1_BWD] = kern_fa1_bwd,
        [KERN_K_FA2] = kern_fa2,
        [KERN_K_FA2_SPLIT] = kern_fa2_split,
        [KERN_K_FA2_COMBINE] = kern_fa2_combine,
        [KERN_K_FA2_BWD_PRE] = kern_fa2_bwd_pre,
        [KERN_K_FA2_BWD] = kern_fa2_bwd,
        [KERN_K_FA2_BWD_CONVERT] = kern_fa2_bwd_convert,
        [KERN_K_GQA_SUM_DK] = kern_gqa_sum_dk,
        [KERN_K_GQA_SUM_DV] = kern_gqa_sum_dv,
    },
};
