/*
 * sim_hier.c — SRAM allocation and event delivery of the hierarchy.
 */
#include "sim_hier.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The level of the live buffer called name (a plan's buffers are SRAM's or
 * the registers'; one not found is SRAM's). */
static sim_level buf_level(const sim_hier *h, const char *name)
{
    for (int k = h->nbufs - 1; name && k >= 0; k--)
        if (h->bufs[k].name == name || !strcmp(h->bufs[k].name, name))
            return (sim_level)h->bufs[k].level;
    return SIM_LEVEL_SRAM;
}

void sim_emit(sim_hier *h, sim_event_kind kind, sim_tensor t, int64_t r0,
              int64_t c0, int64_t rows, int64_t cols, const char *buf,
              uint64_t bytes, const float *data)
{
    /* The levels of a transfer, or of a buffer allocated or freed. */
    sim_level from = SIM_LEVEL_COUNT, to = SIM_LEVEL_COUNT;
    if (kind == SIM_EV_LOAD) {
        from = SIM_LEVEL_HBM;
        to = buf_level(h, buf);
    } else if (kind == SIM_EV_STORE) {
        from = buf_level(h, buf);
        to = SIM_LEVEL_HBM;
    } else if (kind == SIM_EV_ALLOC || kind == SIM_EV_FREE) {
        from = to = buf_level(h, buf);
    }
    sim_event ev = {
        .kind = kind, .line = h->line, .head = h->head, .i = h->i, .j = h->j,
        .split = h->split, .tensor = t, .from = from, .to = to, .block = h->block,
        .t = h->clock,
        .r0 = r0, .c0 = c0, .rows = rows, .cols = cols, .buf = buf,
        .bytes = bytes, .sram_used = h->lv[SIM_LEVEL_SRAM].used,
        .data = h->compute ? data : NULL, .counts = &h->c,
    };
    h->obs->on_event(h->obs->ctx, &ev);
}

void sim_emit_buf(sim_hier *h, sim_event_kind kind, sim_tensor t, int64_t r0,
                  int64_t c0, int64_t rows, int64_t cols, sim_buf_id b,
                  uint64_t bytes, const float *data)
{
    sim_emit(h, kind, t, r0, c0, rows, cols, sim_buf_name(b), bytes, data);
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
    if (sim_tensor_about(t)->fp32 || h->sh.dtype == SIM_FP32) {
        for (int64_t r = 0; r < rows; r++)
            memcpy(dst + r * ld, src + r * cols, (size_t)cols * sizeof(float));
        return;
    }
    for (int64_t r = 0; r < rows; r++)
        for (int64_t c = 0; c < cols; c++)
            dst[r * ld + c] = sim_hbm_round(h, t, src[r * cols + c]);
}

/* A tile of K or V, rows r0 .. r0 + rows - 1 of the head in hand, spans the
 * logical pages p0 .. p1. First the page-table entries of those pages come
 * in (one transfer of p1 - p0 + 1 entries, into the plan's PT_j buffer); then
 * one transfer per page, each a contiguous run of rows in the pool. The
 * entries are not kept from one load to the next: a V_j load after K_j reads
 * them again. */
void sim_load_paged(sim_hier *h, sim_tensor t, sim_buf_id buf, float *dst, int64_t r0,
                    int64_t c0, int64_t rows, int64_t cols)
{
    const int64_t P = h->run.page, p0 = r0 / P, p1 = (r0 + rows - 1) / P;
    h->c.read_elems[SIM_PT] += (uint64_t)(p1 - p0 + 1);
    h->c.read_ops[SIM_PT] += 1;
    if (!h->compute && !h->obs) {       /* counting only: no page is visited */
        h->c.read_elems[t] += (uint64_t)(rows * cols);
        h->c.read_ops[t] += (uint64_t)(p1 - p0 + 1);
        return;
    }
    if (SIM_UNLIKELY(h->obs != NULL))
        sim_emit_buf(h, SIM_EV_LOAD, SIM_PT, p0, 0, p1 - p0 + 1, 1, SIM_BUF_PT_j,
                 (uint64_t)(p1 - p0 + 1) * 4u, NULL);
    const int64_t ld = h->hbm_ld[t];
    for (int64_t p = p0; p <= p1; p++) {
        const int64_t a = r0 > p * P ? r0 : p * P;
        const int64_t b = r0 + rows < (p + 1) * P ? r0 + rows : (p + 1) * P;
        h->c.read_elems[t] += (uint64_t)((b - a) * cols);
        h->c.read_ops[t] += 1;
        float *seg = dst ? dst + (a - r0) * cols : NULL;
        if (h->compute) {
            const int64_t phys = h->pt[h->kv_head * sim_run_pages(&h->sh, &h->run) + p];
            const float *src = h->hbm[t] + (phys * P + (a - p * P)) * ld + c0;
            for (int64_t r = 0; r < b - a; r++)
                memcpy(seg + r * cols, src + r * ld, (size_t)cols * sizeof(float));
        }
        if (SIM_UNLIKELY(h->obs != NULL))
            sim_emit_buf(h, SIM_EV_LOAD, t, a, c0, b - a, cols, buf,
                     (uint64_t)((b - a) * cols) * (uint64_t)sim_tensor_bytes(t, h->sh.dtype),
                     seg);
    }
}

/* Allocate a buffer charged to `level` (SRAM or the registers). */
static float *alloc_at(sim_hier *h, const char *name, int64_t rows, int64_t cols,
                       int elem_bytes, sim_level level)
{
    uint64_t bytes = (uint64_t)rows * (uint64_t)cols * (uint64_t)elem_bytes;
    if (h->failed)
        return NULL;
    sim_level_use *sram = &h->lv[level];
    if (h->nbufs == SIM_MAX_BUFFERS || sram->used + bytes > sram->limit) {
        snprintf(h->err, h->errlen,
                 "internal: %s buffer %s (%llu B) does not fit: %llu of %llu B in use",
                 sim_level_name(level), name, (unsigned long long)bytes,
                 (unsigned long long)sram->used, (unsigned long long)sram->limit);
        h->failed = 1;
        return NULL;
    }
    sim_sram_buf *b = &h->bufs[h->nbufs++];
    b->name = name;
    b->id = SIM_BUF_COUNT;
    b->level = level;
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
    sram->used += bytes;
    if (sram->used > sram->peak)
        sram->peak = sram->used;
    if (h->obs)
        sim_emit(h, SIM_EV_ALLOC, SIM_TENSOR_COUNT, 0, 0, rows, cols, name, bytes,
                 b->data);
    return b->data;
}

float *sim_sram_alloc(sim_hier *h, const char *name, int64_t rows, int64_t cols,
                      int elem_bytes)
{
    return alloc_at(h, name, rows, cols, elem_bytes, SIM_LEVEL_SRAM);
}

/* Allocate a plan's buffer b, known by its id from then on. */
static float *take_buf(sim_hier *h, const sim_buffer *b)
{
    float *data = alloc_at(h, b->name, b->rows, b->cols, b->elem_bytes, (sim_level)b->level);
    if (!h->failed)
        h->bufs[h->nbufs - 1].id = b->id;
    return data;
}

/* Paged KV: the first K_j or V_j of a phase brings the phase's PT_j (the
 * page-table entries of one tile, sim_plan.c) with it. */
static void take_page_entries(sim_hier *h, const sim_plan *p, int phase)
{
    for (int k = 0; k < h->nbufs; k++)
        if (h->bufs[k].live && h->bufs[k].id == SIM_BUF_PT_j)
            return;
    for (int k = 0; k < p->nbuf; k++) {
        const sim_buffer *b = &p->buf[k];
        if (b->phase == phase && b->id == SIM_BUF_PT_j) {
            take_buf(h, b);
            return;
        }
    }
}

float *sim_sram_take(sim_hier *h, const sim_plan *p, int phase, sim_buf_id id)
{
    for (int k = 0; k < p->nbuf; k++) {
        const sim_buffer *b = &p->buf[k];
        if (b->phase == phase && b->id == (int)id) {
            float *data = take_buf(h, b);
            if (h->run.page > 0 && (id == SIM_BUF_K_j || id == SIM_BUF_V_j))
                take_page_entries(h, p, phase);
            return data;
        }
    }
    if (!h->failed) {
        snprintf(h->err, h->errlen, "internal: plan has no buffer %s in phase %d",
                 sim_buf_name(id), phase);
        h->failed = 1;
    }
    return NULL;
}

void sim_sram_release_all(sim_hier *h)
{
    for (int k = h->nbufs - 1; k >= 0; k--) {
        sim_sram_buf *b = &h->bufs[k];
        h->lv[b->level].used -= b->bytes;
        if (h->obs)
            sim_emit(h, SIM_EV_FREE, SIM_TENSOR_COUNT, 0, 0, 0, 0, b->name, b->bytes,
                     NULL);
        free(b->data);
        b->data = NULL;
        b->live = 0;
    }
    h->nbufs = 0;
}

void sim_softmax_bwd_tiles(sim_hier *h, const sim_plan *p, int line, sim_tensor t_P,
                           sim_tensor t_dP, sim_tensor t_dS, int dP_first, float *P_ij,
                           float *dP_ij, float *D_i)
{
    const int64_t N = h->sh.N, N_k = sim_shape_Nk(&h->sh);
    for (int64_t i = 0; i < p->Tr; i++) {
        const int64_t r0 = i * p->Br, br = sim_min64(p->Br, N - r0);
        if (h->compute)
            for (int64_t r = 0; r < br; r++)
                D_i[r] = 0.0f;
        for (int pass = 1; pass <= 2; pass++)
            for (int64_t j = 0; j < p->Tc; j++) {
                const int64_t c0 = j * p->Bc, bc = sim_min64(p->Bc, N_k - c0);
                sim_at(h, line, i, j);
                if (dP_first)
                    sim_load(h, t_dP, SIM_BUF_dP_ij, dP_ij, r0, c0, br, bc);
                sim_load(h, t_P, SIM_BUF_P_ij, P_ij, r0, c0, br, bc);
                if (!dP_first)
                    sim_load(h, t_dP, SIM_BUF_dP_ij, dP_ij, r0, c0, br, bc);
                h->steps++;
                if (h->compute && pass == 1)
                    for (int64_t r = 0; r < br; r++)
                        D_i[r] = ref_row_dot_acc(P_ij + r * bc, dP_ij + r * bc, (int)bc, D_i[r]);
                if (pass == 2) {
                    if (h->compute)
                        ref_tile_ds(P_ij, dP_ij, D_i, (int)br, (int)bc, dP_ij);
                    sim_store(h, t_dS, SIM_BUF_dP_ij, dP_ij, r0, c0, br, bc);
                }
            }
    }
}
