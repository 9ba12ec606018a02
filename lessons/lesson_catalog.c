/*
 * lesson_catalog.c — the lessons, in order.
 */
#include "lesson.h"

static const lesson_def *const ALL[] = {
    &lesson_softmax_overflow, &lesson_online_softmax, &lesson_merge,
    &lesson_online_attention, &lesson_a_common_bug,   &lesson_tiling_budget,
    &lesson_io_complexity,    &lesson_loop_order,     &lesson_causal,
    &lesson_fp8_outliers,
    &lesson_gpu_time,         &lesson_l2_bytes,
    &lesson_block_sparse,
    &lesson_ring,
    &lesson_atomic_dq,
};

const lesson_def *const *lesson_all(int *count)
{
    *count = (int)(sizeof ALL / sizeof ALL[0]);
    return ALL;
}
