/*
 * sim_hier.c — SRAM allocation and event delivery of the hierarchy.
 */
#include "sim_hier.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void sim_emit(sim_hier *h, sim_event_kind kind, sim_tensor t, int64_t r0,
              int64_t c0, int64_t rows, int64_t cols, const char *buf,
              uint64_t bytes, const float *data)
{
    sim_event ev = {
        .kind = kind, .line = h->line, .head = h->head, .i = h->i, .j = h->j, .tensor = t,
        .r0 = r0, .c0 = c0, .rows = rows, .cols = cols, .buf = buf,
        .bytes = bytes, .sram_used = h->sram_used,
        .data = h->compute ? data : NULL, .counts = &h->c,
    };
    h->obs->on_event(h->obs->ctx, &ev);
}

void sim_copy_in(const sim_hier *h, sim_tensor t, float *dst, int64_t r0, int64_t c0,
                 int64_t rows, int64_t cols)
{
    const int64_t ld = h->hbm_ld[t];
    const float *src = h->hbm[t] + (h->base[t] + r0) * ld + c0;
    for (int64_t r = 0; r < rows; r++)
        memcpy(dst + r * cols, src + r * ld, (size_t)cols * sizeof(float));
}

void sim_copy_out(sim_hier *h, sim_tensor t, const float *src, int64_t r0, int64_t c0,
                  int64_t rows, int64_t cols)
{
    const int64_t ld = h->hbm_ld[t];
    float *dst = h->hbm[t] + (h->base[t] + r0) * ld + c0;
    for (int64_t r = 0; r < rows; r++)
        for (int64_t c = 0; c < cols; c++)
            dst[r * ld + c] = sim_hbm_round(h, t, src[r * cols + c]);
}

float *sim_sram_alloc(sim_hier *h, const char *name, int64_t rows, int64_t cols,
                      int elem_bytes)
{
    uint64_t bytes = (uint64_t)rows * (uint64_t)cols * (uint64_t)elem_bytes;
    if (h->failed)
        return NULL;
    if (h->nbufs == SIM_MAX_BUFFERS || h->sram_used + bytes > h->sram_limit) {
        snprintf(h->err, h->errlen,
                 "internal: SRAM buffer %s (%llu B) does not fit: %llu of %llu B in use",
                 name, (unsigned long long)bytes, (unsigned long long)h->sram_used,
                 (unsigned long long)h->sram_limit);
        h->failed = 1;
        return NULL;
    }
    sim_sram_buf *b = &h->bufs[h->nbufs++];
    b->name = name;
    b->bytes = bytes;
    b->live = 1;
    b->data = NULL;
    if (h->compute) {
        b->data = malloc((size_t)(rows * cols > 0 ? rows * cols : 1) * sizeof(float));
        if (!b->data) {
            snprintf(h->err, h->errlen, "out of memory for SRAM buffer %s", name);
            h->failed = 1;
            return NULL;
        }
    }
    h->sram_used += bytes;
    if (h->sram_used > h->sram_peak)
        h->sram_peak = h->sram_used;
    if (h->obs)
        sim_emit(h, SIM_EV_ALLOC, SIM_TENSOR_COUNT, 0, 0, rows, cols, name, bytes,
                 b->data);
    return b->data;
}

float *sim_sram_take(sim_hier *h, const sim_plan *p, int phase, const char *name)
{
    for (int k = 0; k < p->nbuf; k++) {
        const sim_buffer *b = &p->buf[k];
        if (b->phase == phase && strcmp(b->name, name) == 0)
            return sim_sram_alloc(h, b->name, b->rows, b->cols, b->elem_bytes);
    }
    if (!h->failed) {
        snprintf(h->err, h->errlen, "internal: plan has no buffer %s in phase %d",
                 name, phase);
        h->failed = 1;
    }
    return NULL;
}

void sim_sram_release_all(sim_hier *h)
{
    for (int k = h->nbufs - 1; k >= 0; k--) {
        sim_sram_buf *b = &h->bufs[k];
        h->sram_used -= b->bytes;
        if (h->obs)
            sim_emit(h, SIM_EV_FREE, SIM_TENSOR_COUNT, 0, 0, 0, 0, b->name, b->bytes,
                     NULL);
        free(b->data);
        b->data = NULL;
        b->live = 0;
    }
    h->nbufs = 0;
}
