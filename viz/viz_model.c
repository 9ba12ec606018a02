/*
 * viz_model.c — the view model: record one run, rebuild any step from the log
 * (see viz_model.h for the contract).
 *
 * The recording, in order of what the observer sees:
 *   - steps[]: one per SIM_EV_LINE (line, i, j, the naive softmax pass, the
 *     range of logged events that belong to it, and the statistics snapshots
 *     before and after it);
 *   - ev[]: every ALLOC, FREE, LOAD and STORE, 20 bytes each. The events of
 *     step k are ev[steps[k].ev .. steps[k+1].ev). A run of ALLOC and FREE
 *     events just before a LINE belongs to that LINE's step (it prepares
 *     it): a phase's buffers stay resident through its last line and the
 *     next phase's appear with its first line;
 *   - cps[]: a checkpoint (counters, resident buffers) at the start of every
 *     VIZ_CHECKPOINT_STEPS-th step;
 *   - snaps[] / pool[]: in compute mode, copies of m_i, l_i (first
 *     VIZ_STATS_MAX_ROWS rows) and of the chosen row of O_i, taken when they
 *     may have changed and kept only when they did;
 *   - first_read[] / first_write[] per tensor tile: the first step that read
 *     or wrote it. Marks are monotone, so "read by step k" is one compare and
 *     needs no replay;
 *   - nread[] / nwrite[] per tensor tile: how many times it moved, kept for
 *     the current step (a seek forwards counts the new events, backwards
 *     counts again from the start: at most the whole log, milliseconds);
 *   - per step, the last block (i, j) visited so far: the run visits its
 *     blocks in one order (row by row, or column by column) and only those
 *     in the mask's band, which the recording checks, so a block is done
 *     when it comes before that one, skipped when outside the band.
 *
 * The window. A run records all of the above for the steps of its window
 * only; per tile, the counts before the window's first step and the last
 * step before it that read or wrote the tile stand in for what came
 * earlier. Compute mode's window is the whole run (recomputing a step would
 * cost the whole run's arithmetic). A count-only run longer than
 * VIZ_WINDOW_STEPS records that many steps and, on a seek outside them,
 * runs the simulator again (count-only, milliseconds to a second or two)
 * recording the window around the new step: its memory stays flat in N.
 *
 * The SRAM buffers' contents are read through the data pointers of their
 * ALLOC events: they stay valid until the FREE event of the same buffer
 * (sim_hier.c emits FREE before it frees), and are copied only inside the
 * observer callback.
 */
#include "viz_model.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ref_tile.h"
#include "sim_report.h"

#define NONE32 UINT32_MAX
#define MAX_BUFTAB 32
/* Bytes per tile of a present tensor: its first and last reads and writes,
 * its counts now and before the window (uint32_t each). */
#define VIZ_TILE_BYTES 32

/* ---- the recorded run ------------------------------------------------------ */

typedef struct {
    uint8_t kind;      /* sim_event_kind: ALLOC, FREE, LOAD, STORE */
    uint8_t tensor;    /* LOAD / STORE */
    uint8_t buf;       /* index in bufs[] */
    uint8_t pad;
    int32_t r0, c0, rows, cols;    /* LOAD / STORE: the tile in HBM */
} rec_ev;

typedef struct {
    uint32_t ev;       /* first event of this step */
    int32_t i, j;
    int32_t bi, bj;    /* the last block visited up to this step, -1: none yet */
    int32_t split;     /* split-KV: the split in hand, -1 otherwise */
    uint8_t line, pass;
    uint32_t snap_before, snap_after;   /* NONE32: none */
} rec_step;

typedef struct {
    sim_counts counts;
    uint8_t live[SIM_MAX_BUFFERS];
    int nlive;
    uint64_t used;
} rec_cp;

typedef struct {
    uint64_t off;      /* in pool[] */
    uint16_t nm;       /* rows of m and of l copied (0: not resident) */
    uint16_t no;       /* columns of the O_i row copied (0: not resident) */
} rec_snap;

typedef struct {
    char name[16];
    int64_t rows, cols;
    int elem_bytes;
    uint64_t bytes;
} rec_buf;

/* A growable array of fixed-size items. */
typedef struct {
    void *p;
    size_t n, cap, size;
} vec;

static int vec_push(vec *v, const void *item, size_t count)
{
    if (v->n + count > v->cap) {
        size_t cap = v->cap ? v->cap : 1024;
        while (cap < v->n + count)
            cap *= 2;
        void *p = realloc(v->p, cap * v->size);
        if (!p)
            return -1;
        v->p = p;
        v->cap = cap;
    }
    memcpy((char *)v->p + v->n * v->size, item, count * v->size);
    v->n += count;
    return 0;
}

struct viz_model {
    viz_config cfg;
    viz_info info;
    viz_state st;

    /* The window: steps[0 .. nsteps) are the run's steps w0 .. w0 + nsteps - 1,
     * of at most `window` steps. */
    uint64_t w0, window;
    rec_step *steps;
    size_t nsteps;
    rec_ev *ev;
    size_t nev;
    rec_cp *cps;
    size_t ncps;
    rec_snap *snaps;
    size_t nsnaps;
    float *pool;
    rec_buf bufs[MAX_BUFTAB];
    int nbufs;
    uint32_t *first_read[SIM_TENSOR_COUNT];
    uint32_t *first_write[SIM_TENSOR_COUNT];
    /* Per tile, the reads and writes of events ev[0 .. counted): brought up
     * to the current step by viz_model_seek (forwards: the new events only;
     * backwards: recounted from the start). */
    uint32_t *nread[SIM_TENSOR_COUNT];
    uint32_t *nwrite[SIM_TENSOR_COUNT];
    size_t counted;
    /* Per tile, the reads and writes before the window's first step, and the
     * last step before it that read or wrote the tile (NONE32: none). */
    uint32_t *nread0[SIM_TENSOR_COUNT];
    uint32_t *nwrite0[SIM_TENSOR_COUNT];
    uint32_t *last_read[SIM_TENSOR_COUNT];
    uint32_t *last_write[SIM_TENSOR_COUNT];
    /* The run visits its blocks row by row (i outer; 0: column by column),
     * when viz_info.blocks. */
    int by_row;
    /* Per pseudocode line, the tensors (bit t) its steps move: naive's
     * phases each work on their own tensors. */
    uint32_t line_tensors[256];

    viz_transfer *xfer;        /* the current step's transfers */
    size_t xfer_cap;
};

/* ---- static tables ----------------------------------------------------------- */

void viz_config_default(viz_config *cfg)
{
    memset(cfg, 0, sizeof *cfg);
    cfg->algo = SIM_FA2;
    cfg->sh.N = VIZ_DEFAULT_N;
    cfg->sh.d = VIZ_DEFAULT_D;
    cfg->sh.M = VIZ_DEFAULT_M;
    cfg->sh.dtype = SIM_FP16;
    cfg->plan_kind = SIM_PLAN_SAME;
    cfg->seed = 1;
    cfg->mode = VIZ_MODE_AUTO;
}

/* The loop order of the run: its pseudocode, titles and what its lines
 * mean to the view are in its descriptor (sim/algo_*.c). */
const sim_loop *viz_loop(const viz_info *in)
{
    return sim_loop_find(in->algo, &in->run);
}

int viz_model_pipeline(const viz_model *m, sim_pipe_row rows[SIM_PIPE_ROWS])
{
    const viz_info *in = viz_model_info(m);
    const viz_state *st = viz_model_state(m);
    const sim_loop *l = viz_loop(in);
    if (!l || !l->pipeline || in->refused || in->nsteps == 0)
        return 0;
    return l->pipeline(&in->plan, &in->sh, st->line, st->i, st->j, rows);
}

const viz_code_line *viz_pseudocode(const viz_info *in, int *n)
{
    const sim_loop *l = viz_loop(in);
    *n = l ? l->ncode : 0;
    return l ? l->code : NULL;
}

const char *viz_pseudocode_title(const viz_info *in)
{
    const sim_loop *l = viz_loop(in);
    return l ? l->code_title : "?";
}

const viz_code_line *viz_pseudocode_line(const viz_info *in, int line)
{
    int n;
    const viz_code_line *code = viz_pseudocode(in, &n);
    for (int k = 0; k < n && line > 0; k++)
        if (code[k].line == line)
            return &code[k];
    return NULL;
}

/* The SIM_VIEW_* flags of a line of the run's pseudocode (0 if unlisted). */
static unsigned line_view(const viz_info *in, int line)
{
    const viz_code_line *c = viz_pseudocode_line(in, line);
    return c ? c->view : 0;
}

/* ---- what the statistics mean at each line -------------------------------- */

typedef struct {
    int shown;          /* the m_i / l_i table concerns this step */
    int out_shown;      /* the O_i row concerns this step */
    int before_valid, after_valid;
    int L_before, L_after;   /* FA2: m_i holds L_i */
    int norm_before, norm_after;
    int alpha;
} line_rules;

/* The loop order's own view flags of the line (sim_loop.h); a softmax over
 * tiles initialises its statistics before the first tile. */
static line_rules rules_for(const viz_info *in, int line)
{
    line_rules r;
    const unsigned v = line_view(in, line);
    r.shown = (v & SIM_VIEW_STATS) != 0;
    r.out_shown = (v & SIM_VIEW_OUT) != 0;
    r.before_valid = (v & SIM_VIEW_BEFORE) ||
                     ((v & SIM_VIEW_BEFORE_TILED) && in->plan.softmax_passes > 1);
    r.after_valid = (v & SIM_VIEW_AFTER) != 0;
    r.L_before = (v & SIM_VIEW_L_BEFORE) != 0;
    r.L_after = (v & SIM_VIEW_L_AFTER) != 0;
    r.norm_before = (v & SIM_VIEW_NORM_BEFORE) != 0;
    r.norm_after = (v & SIM_VIEW_NORM_AFTER) != 0;
    r.alpha = (v & SIM_VIEW_ALPHA) != 0;
    return r;
}

/* ---- recording ---------------------------------------------------------------- */

typedef struct {
    viz_model *m;
    vec steps, ev, cps, snaps, pool;
    int failed;
    /* The steps recorded, [w0, w1), and the run's steps so far (LINE events:
     * the step in hand is nline - 1) and the line of the step in hand. */
    uint64_t w0, w1, nline;
    int line;
    /* The blocks visited: the last one (bi, bj), how many, whether each came
     * after the one before it row by row and column by column, whether each
     * lies in the mask's band. */
    int32_t bi, bj;
    uint64_t nvisits;
    int by_row, by_col, in_band;
    /* The live state while recording. */
    sim_counts counts;
    uint8_t live[SIM_MAX_BUFFERS];
    int nlive;
    uint64_t used;
    size_t mem_run;            /* first event of the run of ALLOC/FREE events
                                  since the last transfer or line, or SIZE_MAX */
    uint8_t run_live[SIM_MAX_BUFFERS];  /* the resident buffers when it began */
    int run_nlive;
    uint64_t run_used;
    size_t cur_xfer, max_xfer; /* transfers of the step being recorded */
    /* Statistics buffers (compute mode). */
    const float *m_ptr, *l_ptr, *o_ptr;
    int64_t m_rows, o_rows, o_cols;
    int m_buf, l_buf, o_buf;   /* bufs[] indices, -1 */
    uint32_t snap_in_step;     /* last snapshot taken inside the current step */
    float *tmp;                /* scratch for a candidate snapshot */
} recorder;

static int buf_index(viz_model *m, const char *name, int64_t rows, int64_t cols,
                     uint64_t bytes)
{
    for (int k = 0; k < m->nbufs; k++)
        if (!strcmp(m->bufs[k].name, name) && m->bufs[k].rows == rows &&
            m->bufs[k].cols == cols && m->bufs[k].bytes == bytes)
            return k;
    if (m->nbufs == MAX_BUFTAB)
        return -1;
    rec_buf *b = &m->bufs[m->nbufs];
    snprintf(b->name, sizeof b->name, "%s", name);
    b->rows = rows;
    b->cols = cols;
    b->bytes = bytes;
    b->elem_bytes = rows * cols > 0 ? (int)(bytes / (uint64_t)(rows * cols)) : 0;
    return m->nbufs++;
}

/* The live buffer named `name` (the buffer of a LOAD or STORE). */
static int live_by_name(const recorder *r, const char *name)
{
    for (int k = r->nlive - 1; k >= 0; k--)
        if (!strcmp(r->m->bufs[r->live[k]].name, name))
            return r->live[k];
    return -1;
}

/* Copy the resident statistics into a snapshot, unless they equal the last
 * one. Returns the snapshot index, or NONE32 when none is resident. */
static uint32_t capture(recorder *r)
{
    if (!r->m->info.computed || r->failed)
        return NONE32;
    int nm = 0, no = 0;
    if (r->m_ptr && r->l_ptr)
        nm = (int)(r->m_rows < VIZ_STATS_MAX_ROWS ? r->m_rows : VIZ_STATS_MAX_ROWS);
    if (r->o_ptr) {
        no = (int)(r->o_cols < VIZ_OUT_MAX_COLS ? r->o_cols : VIZ_OUT_MAX_COLS);
    }
    if (nm == 0 && no == 0)
        return NONE32;
    float *t = r->tmp;
    if (nm) {
        memcpy(t, r->m_ptr, (size_t)nm * sizeof *t);
        memcpy(t + nm, r->l_ptr, (size_t)nm * sizeof *t);
    }
    if (no) {
        int64_t row = r->m->info.out_row < r->o_rows ? r->m->info.out_row : r->o_rows - 1;
        memcpy(t + 2 * nm, r->o_ptr + row * r->o_cols, (size_t)no * sizeof *t);
    }
    size_t len = (size_t)(2 * nm + no);
    if (r->snaps.n) {
        const rec_snap *last = (const rec_snap *)r->snaps.p + r->snaps.n - 1;
        if (last->nm == nm && last->no == no &&
            memcmp((const float *)r->pool.p + last->off, t, len * sizeof *t) == 0)
            return (uint32_t)(r->snaps.n - 1);
    }
    rec_snap s = { r->pool.n, (uint16_t)nm, (uint16_t)no };
    if (vec_push(&r->pool, t, len) != 0 || vec_push(&r->snaps, &s, 1) != 0) {
        r->failed = 1;
        return NONE32;
    }
    return (uint32_t)(r->snaps.n - 1);
}

static void tile_span(const viz_tensor_info *ti, int64_t r0, int64_t c0, int64_t rows,
                      int64_t cols, int64_t *tr0, int64_t *tr1, int64_t *tc0, int64_t *tc1)
{
    *tr0 = r0 / ti->tile_rows;
    *tr1 = rows > 0 ? (r0 + rows - 1) / ti->tile_rows + 1 : *tr0;
    *tc0 = c0 / ti->tile_cols;
    *tc1 = cols > 0 ? (c0 + cols - 1) / ti->tile_cols + 1 : *tc0;
    if (*tr1 > ti->grid_rows)
        *tr1 = ti->grid_rows;
    if (*tc1 > ti->grid_cols)
        *tc1 = ti->grid_cols;
}

/* Count a load or store in the per-tile reads or writes of every tile it
 * overlaps. */
static void tally(viz_model *m, const rec_ev *x)
{
    const viz_tensor_info *ti = &m->info.tensor[x->tensor];
    uint32_t *n = x->kind == SIM_EV_LOAD ? m->nread[x->tensor] : m->nwrite[x->tensor];
    if (!n)
        return;
    int64_t tr0, tr1, tc0, tc1;
    tile_span(ti, x->r0, x->c0, x->rows, x->cols, &tr0, &tr1, &tc0, &tc1);
    for (int64_t a = tr0; a < tr1; a++)
        for (int64_t c = tc0; c < tc1; c++)
            n[a * ti->grid_cols + c]++;
}

/* An ALLOC or FREE: the start of a run of them remembers the state before. */
static void begin_mem_run(recorder *r)
{
    if (r->mem_run != SIZE_MAX)
        return;
    r->mem_run = r->ev.n;
    memcpy(r->run_live, r->live, sizeof r->live);
    r->run_nlive = r->nlive;
    r->run_used = r->used;
}

/* Does the step at `line` work on the same statistics as step a: the same
 * row block (and line, for naive's separate passes), and for split-KV the
 * same phase (lines 1-3 keep a split's state, 4-5 the merged one). */
static int same_block(const viz_info *in, const rec_step *a, int line, int64_t i)
{
    const sim_loop *l = viz_loop(in);
    const int merge = l ? l->merge_line : 0;
    if (merge && (a->line >= merge) != (line >= merge))
        return 0;
    return a->i == i && (!(l && (l->flags & SIM_LOOP_LINE_BLOCKS)) || a->line == line);
}

/* A checkpoint every VIZ_CHECKPOINT_STEPS steps: the state before this
 * step's events. The pending ALLOC/FREE run belongs to this step, so the
 * checkpoint is the state from before that run. */
static void record_checkpoint(recorder *r)
{
    if (r->steps.n % VIZ_CHECKPOINT_STEPS != 0)
        return;
    rec_cp cp;
    memset(&cp, 0, sizeof cp);
    cp.counts = r->counts;
    const int pending = r->mem_run != SIZE_MAX;
    memcpy(cp.live, pending ? r->run_live : r->live, sizeof cp.live);
    cp.nlive = pending ? r->run_nlive : r->nlive;
    cp.used = pending ? r->run_used : r->used;
    if (vec_push(&r->cps, &cp, 1) != 0)
        r->failed = 1;
}

/* A LINE event starts a step: its statistics snapshots and, at times, a
 * checkpoint. */
static void record_line(recorder *r, const sim_event *e)
{
    viz_model *m = r->m;
    rec_step s;
    memset(&s, 0, sizeof s);
    s.ev = (uint32_t)(r->mem_run != SIZE_MAX ? r->mem_run : r->ev.n);
    s.i = (int32_t)e->i;
    s.j = (int32_t)e->j;
    s.split = (int32_t)e->split;
    s.line = (uint8_t)e->line;
    s.bi = r->bi;
    s.bj = r->bj;
    s.snap_before = s.snap_after = NONE32;
    rec_step *prev = r->steps.n ? (rec_step *)r->steps.p + r->steps.n - 1 : NULL;
    if ((line_view(&m->info, e->line) & SIM_VIEW_SOFTMAX) &&
        m->info.plan.softmax_passes > 1) {
        if (prev && prev->line == e->line && prev->i == s.i)
            s.pass = (uint8_t)(prev->pass + (s.j == 0 ? 1 : 0));
        else
            s.pass = 1;
    }
    line_rules now = rules_for(&m->info, e->line);
    int prev_same = prev && same_block(&m->info, prev, e->line, e->i);
    int prev_after = prev_same && rules_for(&m->info, prev->line).after_valid;
    uint32_t here = NONE32;
    /* Copy only where a "before" is shown, or where this line ends the
     * previous step of the same block with an "after" shown. Elsewhere
     * the buffers may not be initialised yet (FA2 before line 5). */
    if (now.before_valid || prev_after)
        here = capture(r);
    if (prev) {
        if (prev_same && here != NONE32)
            prev->snap_after = here;
        else
            prev->snap_after = r->snap_in_step != NONE32 ? r->snap_in_step
                                                         : prev->snap_before;
    }
    s.snap_before = here;
    r->snap_in_step = NONE32;
    record_checkpoint(r);
    if (vec_push(&r->steps, &s, 1) != 0)
        r->failed = 1;
    r->mem_run = SIZE_MAX;
    r->cur_xfer = 0;
}

/* An SRAM buffer allocated; in compute mode the statistics buffers are
 * followed. Returns 0, or -1 (unknown buffer, too many). */
static int record_alloc(recorder *r, const sim_event *e, rec_ev *x)
{
    viz_model *m = r->m;
    int b = buf_index(m, e->buf, e->rows, e->cols, e->bytes);
    if (b < 0 || r->nlive == SIM_MAX_BUFFERS)
        return -1;
    begin_mem_run(r);
    x->buf = (uint8_t)b;
    r->live[r->nlive++] = (uint8_t)b;
    r->used += e->bytes;
    const char *n = e->buf;
    /* The backward keeps no running statistics (its no_stats): its m_i,
     * l_i, O_i are inputs loaded from HBM, not followed. */
    if (e->data && !viz_loop(&m->info)->no_stats) {
        if (!strcmp(n, "m_i") || !strcmp(n, "m")) {
            r->m_ptr = e->data;
            r->m_rows = e->rows;
            r->m_buf = b;
        } else if (!strcmp(n, "l_i") || !strcmp(n, "l")) {
            r->l_ptr = e->data;
            r->l_buf = b;
        } else if (!strcmp(n, "O_i") || !strcmp(n, "O~_i")) {
            r->o_ptr = e->data;
            r->o_rows = e->rows;
            r->o_cols = e->cols;
            r->o_buf = b;
        }
    }
    return 0;
}

/* An SRAM buffer released. Returns 0, or -1 (not resident). */
static int record_free(recorder *r, const sim_event *e, rec_ev *x)
{
    viz_model *m = r->m;
    /* The buffer is still allocated during this callback: copy first,
     * at the first release of a run, while all the statistics are
     * resident (the later releases of the run would copy fewer). */
    const int first_release = r->mem_run == SIZE_MAX;
    begin_mem_run(r);
    if (first_release && (r->m_ptr || r->o_ptr)) {
        uint32_t s = capture(r);
        if (s != NONE32)
            r->snap_in_step = s;
    }
    int b = -1;
    for (int k = r->nlive - 1; k >= 0; k--)
        if (!strcmp(m->bufs[r->live[k]].name, e->buf)) {
            b = r->live[k];
            memmove(&r->live[k], &r->live[k + 1], (size_t)(r->nlive - k - 1));
            r->nlive--;
            break;
        }
    if (b < 0)
        return -1;
    x->buf = (uint8_t)b;
    r->used -= m->bufs[b].bytes;
    if (b == r->m_buf) { r->m_ptr = NULL; r->m_buf = -1; }
    if (b == r->l_buf) { r->l_ptr = NULL; r->l_buf = -1; }
    if (b == r->o_buf) { r->o_ptr = NULL; r->o_buf = -1; }
    return 0;
}

/* A tile loaded or stored: the counters, the first touch of each tile.
 * Returns 0, or -1 (no such buffer). */
static int record_transfer(recorder *r, const sim_event *e, rec_ev *x)
{
    viz_model *m = r->m;
    const uint64_t step = r->nline ? r->nline - 1 : 0;
    const int in_window = r->nline && step >= r->w0 && step < r->w1;
    if (!in_window && r->mem_run != SIZE_MAX)
        r->ev.n = r->mem_run;            /* the releases of a step not recorded */
    r->mem_run = SIZE_MAX;
    int b = live_by_name(r, e->buf);
    if (b < 0)
        return -1;
    x->buf = (uint8_t)b;
    x->tensor = (uint8_t)e->tensor;
    x->r0 = (int32_t)e->r0;
    x->c0 = (int32_t)e->c0;
    x->rows = (int32_t)e->rows;
    x->cols = (int32_t)e->cols;
    const uint64_t n = (uint64_t)(e->rows * e->cols);
    const viz_tensor_info *ti = &m->info.tensor[e->tensor];
    uint32_t *first = e->kind == SIM_EV_LOAD ? m->first_read[e->tensor]
                                             : m->first_write[e->tensor];
    uint32_t *last = e->kind == SIM_EV_LOAD ? m->last_read[e->tensor]
                                            : m->last_write[e->tensor];
    if (e->kind == SIM_EV_LOAD) {
        r->counts.read_elems[e->tensor] += n;
        r->counts.read_ops[e->tensor]++;
    } else {
        r->counts.write_elems[e->tensor] += n;
        r->counts.write_ops[e->tensor]++;
        /* A store copies the buffer out: its values are final for this
         * step (the statistics "after" of a step that ends a block). */
        if (r->m_ptr || r->o_ptr) {
            uint32_t s = capture(r);
            if (s != NONE32)
                r->snap_in_step = s;
        }
    }
    if (first) {
        int64_t tr0, tr1, tc0, tc1;
        tile_span(ti, e->r0, e->c0, e->rows, e->cols, &tr0, &tr1, &tc0, &tc1);
        for (int64_t a = tr0; a < tr1; a++)
            for (int64_t c = tc0; c < tc1; c++) {
                uint32_t *f = &first[a * ti->grid_cols + c];
                if (*f == NONE32)
                    *f = (uint32_t)step;
                if (step < r->w0)
                    last[a * ti->grid_cols + c] = (uint32_t)step;
            }
    }
    tally(m, x);
    if (r->nline)
        m->line_tensors[r->line] |= 1u << e->tensor;
    if (!in_window)
        return 1;
    if (++r->cur_xfer > r->max_xfer)
        r->max_xfer = r->cur_xfer;
    return 0;
}

/* Whether the run visits tile (i, j): in the mask's band, and under a block
 * mask holding a visible score (sim_tile_visible). */
static int tile_visited(const viz_info *in, int64_t i, int64_t j)
{
    const sim_range js = sim_block_js(&in->sh, i, in->plan.Br, in->plan.Bc);
    return j >= js.lo && j <= js.hi &&
           (!in->sh.blocks || sim_tile_visible(&in->sh, i, j, in->plan.Br, in->plan.Bc));
}

/* A step (i, j) at a block: the order and the band of the visits. */
static void visit_block(recorder *r, const sim_event *e)
{
    const viz_info *in = &r->m->info;
    const sim_plan *p = &in->plan;
    if (e->i < 0 || e->j < 0 || e->i >= p->Tr || e->j >= p->Tc ||
        (e->i == r->bi && e->j == r->bj))
        return;
    if (r->nvisits) {
        r->by_row &= e->i > r->bi || (e->i == r->bi && e->j > r->bj);
        r->by_col &= e->j > r->bj || (e->j == r->bj && e->i > r->bi);
    }
    r->in_band &= tile_visited(in, e->i, e->j);
    r->nvisits++;
    r->bi = (int32_t)e->i;
    r->bj = (int32_t)e->j;
}

/* A LINE event: the next step, recorded when in the window. Its first
 * step keeps the per-tile counts before it. */
static void on_line(recorder *r, const sim_event *e)
{
    viz_model *m = r->m;
    const uint64_t step = r->nline++;
    r->line = e->line;
    visit_block(r, e);
    if (step == r->w0)
        for (int t = 0; t < SIM_TENSOR_COUNT; t++)
            if (m->nread[t]) {
                const size_t n = (size_t)(m->info.tensor[t].grid_rows *
                                          m->info.tensor[t].grid_cols);
                memcpy(m->nread0[t], m->nread[t], n * sizeof(uint32_t));
                memcpy(m->nwrite0[t], m->nwrite[t], n * sizeof(uint32_t));
            }
    if (step >= r->w0 && step < r->w1) {
        record_line(r, e);
        return;
    }
    if (r->mem_run != SIZE_MAX)
        r->ev.n = r->mem_run;           /* the allocations of a step not recorded */
    r->mem_run = SIZE_MAX;
}

static void on_event(void *ctx, const sim_event *e)
{
    recorder *r = ctx;
    if (r->failed)
        return;
    if (e->kind == SIM_EV_LINE) {
        on_line(r, e);
        return;
    }
    rec_ev x;
    memset(&x, 0, sizeof x);
    x.kind = (uint8_t)e->kind;
    int rc;
    switch (e->kind) {
    case SIM_EV_ALLOC: rc = record_alloc(r, e, &x); break;
    case SIM_EV_FREE: rc = record_free(r, e, &x); break;
    case SIM_EV_LOAD:
    case SIM_EV_STORE: rc = record_transfer(r, e, &x); break;
    default: return;                     /* SIM_EV_DONE */
    }
    if (rc < 0 || (rc == 0 && vec_push(&r->ev, &x, 1) != 0))
        r->failed = 1;
}

/* ---- building ----------------------------------------------------------------- */

/* The tensors in HBM and their tile grids. A tensor is shown when the loop
 * order moves it (its closed-form counts, info->final_counts, are not zero):
 * Q, K, V, O always; S, P for naive; m, l for FA1 and split-KV's partials;
 * L for FA2; the backward's dO, dQ, dK, dV and its own D, dP, dS. Query-side
 * tensors are cut in blocks of B_r rows, key-side ones of B_c; the N x N_k
 * ones in B_r x B_c tiles; split-KV's O~, m, l hold S partials of N rows. */
static void setup_tensors(viz_model *m)
{
    const sim_shape *sh = &m->info.sh;
    const sim_plan *p = &m->info.plan;
    const sim_counts *fc = &m->info.final_counts;
    const int64_t N_k = sim_shape_Nk(sh), S = sim_run_S(&m->info.run);
    for (int t = 0; t < SIM_TENSOR_COUNT; t++) {
        viz_tensor_info *ti = &m->info.tensor[t];
        ti->name = sim_tensor_name((sim_tensor)t);
        ti->present = fc->read_ops[t] + fc->write_ops[t] > 0 && t != SIM_PT;
        ti->elem_bytes = sim_tensor_bytes((sim_tensor)t, sh->dtype);
        ti->rows = sh->N;
        switch (t) {
        case SIM_Q: case SIM_O: case SIM_dO: case SIM_dQ:
            ti->cols = ti->tile_cols = sh->d;
            ti->tile_rows = p->Br;
            break;
        case SIM_Ot:
            ti->rows = S * sh->N;
            ti->cols = ti->tile_cols = sh->d;
            ti->tile_rows = p->Br;
            break;
        case SIM_K: case SIM_V: case SIM_dK: case SIM_dV:
            ti->rows = N_k;
            ti->cols = ti->tile_cols = sh->d;
            ti->tile_rows = p->Bc;
            break;
        case SIM_S: case SIM_P: case SIM_dP: case SIM_dS:
            ti->cols = N_k;
            ti->tile_rows = p->Br;
            ti->tile_cols = p->Bc;
            break;
        case SIM_m: case SIM_l:
            ti->rows = S * sh->N;
            ti->cols = ti->tile_cols = 1;
            ti->tile_rows = p->Br;
            break;
        default:                              /* L, D; PT is not drawn */
            ti->cols = ti->tile_cols = 1;
            ti->tile_rows = p->Br;
            break;
        }
        ti->grid_rows = (ti->rows + ti->tile_rows - 1) / ti->tile_rows;
        ti->grid_cols = (ti->cols + ti->tile_cols - 1) / ti->tile_cols;
    }
}

/* Fill the state of a refused plan: the buffers of the first phase over M,
 * in the order the loop order allocates them, the first that does not fit
 * flagged REFUSED and the rest PENDING. */
static void fill_refused(viz_model *m)
{
    const sim_plan *p = &m->info.plan;
    viz_state *st = &m->st;
    memset(st, 0, sizeof *st);
    int phase = 1;
    for (int ph = 1; ph <= p->nphases; ph++) {
        uint64_t sum = 0;
        for (int k = 0; k < p->nbuf; k++)
            if (p->buf[k].phase == ph)
                sum += p->buf[k].bytes;
        if (sum > m->info.sh.M) {
            phase = ph;
            break;
        }
    }
    uint64_t off = 0;
    int refused = 0;
    for (int k = 0; k < p->nbuf && st->nbuf < SIM_MAX_BUFFERS; k++) {
        const sim_buffer *b = &p->buf[k];
        if (b->phase != phase)
            continue;
        viz_sram_entry *e = &st->buf[st->nbuf++];
        snprintf(e->name, sizeof e->name, "%s", b->name);
        e->rows = b->rows;
        e->cols = b->cols;
        e->elem_bytes = b->elem_bytes;
        e->bytes = b->bytes;
        e->offset = off;
        if (refused) {
            e->flags = VIZ_BUF_PENDING;
        } else if (off + b->bytes > m->info.sh.M) {
            e->flags = VIZ_BUF_REFUSED;
            refused = 1;
        } else {
            st->sram_used = off + b->bytes;
        }
        off += b->bytes;
    }
    st->line = 1;
    st->i = st->j = -1;
}

static void free_window(viz_model *m);

static void free_parts(viz_model *m)
{
    free_window(m);
    free(m->snaps);
    free(m->pool);
    free(m->xfer);
    for (int t = 0; t < SIM_TENSOR_COUNT; t++) {
        free(m->first_read[t]);
        free(m->first_write[t]);
        free(m->nread[t]);
        free(m->nwrite[t]);
        free(m->nread0[t]);
        free(m->nwrite0[t]);
        free(m->last_read[t]);
        free(m->last_write[t]);
    }
}

/* The window's recording (steps, events, checkpoints), not the per-tile
 * arrays nor the statistics. */
static void free_window(viz_model *m)
{
    free(m->steps);
    free(m->ev);
    free(m->cps);
    m->steps = NULL;
    m->ev = NULL;
    m->cps = NULL;
    m->nsteps = m->nev = m->ncps = 0;
}

void viz_model_free(viz_model *m)
{
    if (!m)
        return;
    free_parts(m);
    free(m);
}

static uint64_t sat_add(uint64_t a, uint64_t b)
{
    return a + b < a ? UINT64_MAX : a + b;
}

static uint64_t sat_mul(uint64_t a, uint64_t b)
{
    uint64_t r;
    return __builtin_mul_overflow(a, b, &r) ? UINT64_MAX : r;
}

/* The configuration's own limits: one head, contiguous K and V, 32-bit
 * event fields. Returns VIZ_OK, or VIZ_EUSAGE with err set. */
static int config_check(const viz_config *cfg, char *err, size_t errlen)
{
    const sim_shape *sh = &cfg->sh;
    const sim_run_opts *run = &cfg->run;
    if (!sim_loop_of(cfg->algo, SIM_FWD) || sh->N < 1 || sh->d < 1 ||
        sh->M < 1) {
        snprintf(err, errlen, "invalid view configuration (N, d and M must be >= 1)");
        return VIZ_EUSAGE;
    }
    char why[256];
    if (sim_check(sh, run, why, sizeof why) != 0) {
        snprintf(err, errlen, "%s", why);
        return VIZ_EUSAGE;
    }
    if (sim_shape_B(sh) > 1 || sim_shape_H(sh) > 1 || sh->kv_heads > 1 || run->group ||
        run->page > 0) {
        snprintf(err, errlen, "the view steps through one head with K and V contiguous; "
                 "batches, heads and paged KV are the report's ('fasim --help')");
        return VIZ_EUSAGE;
    }
    if (run->splits > 1 && sim_run_opts_check(cfg->algo, run, NULL, 0) != 0) {
        snprintf(err, errlen, "split-KV (--splits) is a plan of FA2's forward pass: use "
                 "--algo fa2 and --pass fwd");
        return VIZ_EUSAGE;
    }
    /* Event fields are 32-bit: far above any run that fits the log limit. */
    if (sh->N > (INT64_C(1) << 30) || sh->d > (INT64_C(1) << 20) ||
        sim_shape_Nk(sh) > (INT64_C(1) << 30) ||
        sim_run_S(run) > (INT64_C(1) << 30) / sh->N) {
        snprintf(err, errlen, "N_q = %lld, N_k = %lld, d = %lld%s: too large to step "
                 "through; the view takes N_q, N_k and S N_q up to 2^30 and d up to 2^20 (use "
                 "the report, 'fasim --N ...', for larger runs)", (long long)sh->N,
                 (long long)sim_shape_Nk(sh), (long long)sh->d,
                 run->splits > 1 ? ", with splits" : "");
        return VIZ_EUSAGE;
    }
    return VIZ_OK;
}

/* 1. The plan; a plan that does not fit becomes a drawable refusal
 * (VIZ_EREFUSED, m kept). Returns VIZ_OK, VIZ_EREFUSED, or VIZ_EUSAGE with
 * err set. */
static int make_plan(viz_model *m, char *err, size_t errlen)
{
    const viz_config *cfg = &m->cfg;
    const sim_shape *sh = &cfg->sh;
    viz_info *info = &m->info;
    char perr[1024];
    sim_plan_kind kind = cfg->plan_kind;
    int64_t Br = cfg->Br, Bc = cfg->Bc;
    if (kind == SIM_PLAN_SAME) {
        /* The report's tiles: the same square for every loop order, so that
         * the view and the report count the same bytes, and 'a' keeps them. */
        sim_request req;
        memset(&req, 0, sizeof req);
        req.sh = *sh;
        req.run = cfg->run;
        req.run_pass[cfg->run.pass] = 1;
        for (int a = 0; a < sim_algo_count(); a++)
            req.run_algo[a] = SIM_ALGO_IF_SERVED;
        req.plan_kind = SIM_PLAN_SAME;
        info->same_tiles = sim_report_resolve_same(&req);
        kind = req.plan_kind;
        Br = req.Br;
        Bc = req.Bc;
        /* Split-KV takes its key blocks from B_c: where the square does not
         * give every split one, the run has its own best plan. */
        sim_plan p;
        if (info->same_tiles > 0 && cfg->run.splits > 1 &&
            sim_plan_choose(cfg->algo, sh, &cfg->run, kind, Br, Bc, &p, perr, sizeof perr) != 0) {
            info->same_tiles = -1;
            kind = SIM_PLAN_AUTO;
            Br = Bc = 0;
        }
    }
    if (sim_plan_choose(cfg->algo, sh, &cfg->run, kind, Br, Bc, &info->plan, perr,
                        sizeof perr) != 0) {
        sim_plan p;
        if (sim_plan_make(cfg->algo, sh, &cfg->run, Br ? Br : 1,
                          Bc ? Bc : 1, SIM_PLAN_USER, &p) == 0 && !p.fits) {
            info->plan = p;
            info->refused = 1;
            snprintf(info->refusal, sizeof info->refusal, "%s", perr);
            /* What the plan would have moved: the counters' totals. */
            if (sim_theory_counts(&p, sh, &info->final_counts) != 0)
                memset(&info->final_counts, 0, sizeof info->final_counts);
            setup_tensors(m);
            fill_refused(m);
            snprintf(err, errlen, "%s", perr);
            return VIZ_EREFUSED;
        }
        snprintf(err, errlen, "%s", perr);
        return VIZ_EUSAGE;
    }
    const sim_plan *p = &info->plan;
    if (p->Br > INT32_MAX || p->Bc > INT32_MAX) {
        snprintf(err, errlen, "block sizes too large for the view");
        return VIZ_EUSAGE;
    }
    if (sim_theory_counts(p, sh, &info->final_counts) != 0 ||
        sim_theory_steps(p, sh, &info->tile_steps) != 0) {
        snprintf(err, errlen, "N = %lld, d = %lld: the counts would overflow 64 bits",
                 (long long)sh->N, (long long)sh->d);
        return VIZ_EUSAGE;
    }
    setup_tensors(m);
    return VIZ_OK;
}

/* 2. Mode: compute when cheap, or when asked and not absurd. Sets
 * info->computed. Returns VIZ_OK, or VIZ_EUSAGE with err set. */
static int choose_mode(viz_model *m, const viz_config *cfg, char *err, size_t errlen)
{
    const sim_shape *sh = &cfg->sh;
    viz_info *info = &m->info;
    /* N N_k d multiply-adds, about four times as many for a backward run
     * (its forward first, then five products). */
    const uint64_t n2d = sat_mul(sat_mul(sat_mul((uint64_t)sh->N, (uint64_t)sim_shape_Nk(sh)),
                                         (uint64_t)sh->d),
                                 cfg->run.pass == SIM_BWD ? 4 : 1);
    int compute;
    if (cfg->mode == VIZ_MODE_COUNT) {
        compute = 0;
        snprintf(info->mode_note, sizeof info->mode_note,
                 "count-only (asked): counters and tiles, no statistics");
    } else if (cfg->mode == VIZ_MODE_COMPUTE || cfg->Q) {
        if (n2d > VIZ_MAX_COMPUTE_N2D) {
            snprintf(err, errlen, "computing N^2 d = %llu multiply-adds is too slow for "
                     "the view (at most 2^34); %s",
                     (unsigned long long)n2d,
                     cfg->Q ? "the view computes on --q/--k/--v inputs: use smaller files"
                            : "drop --compute to count only");
            return VIZ_EUSAGE;
        }
        compute = 1;
    } else if (n2d <= VIZ_AUTO_COMPUTE_N2D) {
        compute = 1;
    } else {
        compute = 0;
        snprintf(info->mode_note, sizeof info->mode_note,
                 "count-only: N^2 d = %.2g is slow to compute; --compute forces it",
                 (double)n2d);
    }
    info->computed = compute;
    return VIZ_OK;
}

/* The block grid is drawn for the loop orders whose steps name a block
 * (i, j) of Q_i against K_j, V_j: FA1 and FA2, forward and backward, not
 * split. Naive's S and P grids are that grid already; split-KV's blocks are
 * per split. */
static int has_blocks(const viz_info *info)
{
    return info->algo != SIM_NAIVE && sim_run_S(&info->run) == 1 && info->plan.Tr > 0 &&
           info->plan.Tc > 0;
}

/* 3. The size of the recording, bounded before anything runs. Upper
 * bounds: at most 5 lines per tile step (FA1) plus the outer lines; the
 * transfers are the closed form's; a snapshot at most twice per tile step
 * and three times per row block. *cells gets the tiles of the present
 * tensors. Returns VIZ_OK, or VIZ_EUSAGE with err set and a hint. */
static int check_log_size(const viz_model *m, uint64_t *cells_out, char *err, size_t errlen)
{
    const viz_config *cfg = &m->cfg;
    const sim_shape *sh = &cfg->sh;
    const viz_info *info = &m->info;
    const sim_plan *p = &info->plan;
    const int compute = info->computed;
    uint64_t ops = 0;
    for (int t = 0; t < SIM_TENSOR_COUNT; t++)
        ops = sat_add(ops, sat_add(info->final_counts.read_ops[t],
                                   info->final_counts.write_ops[t]));
    /* Split-KV adds lines 1 and 3 for every split and query block, and line 4
     * for every split in the merge, whether or not the split has keys. */
    const uint64_t T_rc = (uint64_t)(p->Tr + p->Tc) +
                          (uint64_t)sim_run_S(&p->run) * (uint64_t)p->Tr;
    uint64_t lines = sat_add(sat_mul(5, info->tile_steps), sat_add(sat_mul(4, T_rc), 8));
    uint64_t events = sat_add(ops, 6 * SIM_MAX_BUFFERS);
    uint64_t snaps = compute ? sat_add(sat_mul(2, info->tile_steps), sat_mul(3, T_rc)) : 0;
    /* A window holds its share of the events (a count-only run's: at most
     * VIZ_WINDOW_STEPS lines); the per-tile arrays are the whole grid's. */
    const uint64_t wlines = lines < m->window ? lines : m->window;
    const uint64_t wevents =
        wlines == lines ? events
                        : (uint64_t)((double)events * ((double)wlines / (double)lines)) +
                              6 * SIM_MAX_BUFFERS;
    uint64_t cells = 0;
    for (int t = 0; t < SIM_TENSOR_COUNT; t++)
        if (info->tensor[t].present)
            cells = sat_add(cells, sat_mul((uint64_t)info->tensor[t].grid_rows,
                                           (uint64_t)info->tensor[t].grid_cols));
    uint64_t est = sat_add(sat_add(sat_mul(wlines, sizeof(rec_step)),
                                   sat_mul(wevents, sizeof(rec_ev))),
                           sat_add(sat_mul(snaps, sizeof(rec_snap) + 4 *
                                           (2 * VIZ_STATS_MAX_ROWS + VIZ_OUT_MAX_COLS)),
                                   sat_mul(cells, VIZ_TILE_BYTES)));
    est = sat_add(est, sat_mul(wlines / VIZ_CHECKPOINT_STEPS + 1, sizeof(rec_cp)));
    if (wlines < lines && lines > VIZ_MAX_STEPS) {
        snprintf(err, errlen, "%s at N = %lld with B_r = %lld, B_c = %lld takes %llu tile "
                 "steps, up to %llu view steps; the view runs through them again at each "
                 "step outside the %llu it records (limit 2^27 steps)\n"
                 "  hint: use a smaller --N, larger blocks (--Br/--Bc or a larger --M), "
                 "or the report ('fasim --N %lld ...') for the counts",
                 sim_algo_name(cfg->algo), (long long)sh->N, (long long)p->Br,
                 (long long)p->Bc, (unsigned long long)info->tile_steps,
                 (unsigned long long)lines, (unsigned long long)wlines, (long long)sh->N);
        return VIZ_EUSAGE;
    }
    const uint64_t max_log = cfg->max_log_bytes ? cfg->max_log_bytes : VIZ_DEFAULT_MAX_LOG;
    if (est > max_log || lines > UINT32_MAX || wevents > UINT32_MAX) {
        char b1[32], b2[32];
        sim_format_bytes(b1, sizeof b1, est);
        sim_format_bytes(b2, sizeof b2, max_log);
        snprintf(err, errlen, "%s at N = %lld with B_r = %lld, B_c = %lld takes %llu tile "
                 "steps; recording them for the view would need about %s (limit %s)\n"
                 "  hint: use a smaller --N, larger blocks (--Br/--Bc or a larger --M), "
                 "or the report ('fasim --N %lld ...') for the counts",
                 sim_algo_name(cfg->algo), (long long)sh->N, (long long)p->Br,
                 (long long)p->Bc, (unsigned long long)info->tile_steps, b1, b2,
                 (long long)sh->N);
        return VIZ_EUSAGE;
    }
    *cells_out = cells;
    return VIZ_OK;
}


/* The per-tile first read and write steps, none yet; the per-tile counts,
 * zero; the first step of each block, none yet. Returns VIZ_OK or
 * VIZ_EFAIL. */
static int alloc_marks(viz_model *m)
{
    viz_info *info = &m->info;
    int rc = VIZ_OK;
    for (int t = 0; t < SIM_TENSOR_COUNT && rc == VIZ_OK; t++) {
        const viz_tensor_info *ti = &info->tensor[t];
        if (!ti->present)
            continue;
        size_t n = (size_t)(ti->grid_rows * ti->grid_cols);
        m->first_read[t] = malloc(n * sizeof(uint32_t));
        m->first_write[t] = malloc(n * sizeof(uint32_t));
        m->nread[t] = calloc(n, sizeof(uint32_t));
        m->nwrite[t] = calloc(n, sizeof(uint32_t));
        m->nread0[t] = calloc(n, sizeof(uint32_t));
        m->nwrite0[t] = calloc(n, sizeof(uint32_t));
        m->last_read[t] = malloc(n * sizeof(uint32_t));
        m->last_write[t] = malloc(n * sizeof(uint32_t));
        if (!m->first_read[t] || !m->first_write[t] || !m->nread[t] || !m->nwrite[t] ||
            !m->nread0[t] || !m->nwrite0[t] || !m->last_read[t] || !m->last_write[t])
            rc = VIZ_EFAIL;
        else {
            memset(m->first_read[t], 0xff, n * sizeof(uint32_t));
            memset(m->first_write[t], 0xff, n * sizeof(uint32_t));
        }
    }
    return rc;
}

/* Before a recording: no tile moved yet. (The first reads and writes are
 * the run's, the same at every recording of it.) */
static void reset_tile_counts(viz_model *m)
{
    for (int t = 0; t < SIM_TENSOR_COUNT; t++)
        if (m->nread[t]) {
            const size_t n = (size_t)(m->info.tensor[t].grid_rows *
                                      m->info.tensor[t].grid_cols);
            memset(m->nread[t], 0, n * sizeof(uint32_t));
            memset(m->nwrite[t], 0, n * sizeof(uint32_t));
            memset(m->last_read[t], 0xff, n * sizeof(uint32_t));
            memset(m->last_write[t], 0xff, n * sizeof(uint32_t));
        }
}

/* After a recording the per-tile counts start over from the window's first
 * step for viz_model_seek. */
static void counts_to_window_start(viz_model *m)
{
    for (int t = 0; t < SIM_TENSOR_COUNT; t++)
        if (m->nread[t]) {
            const size_t n = (size_t)(m->info.tensor[t].grid_rows *
                                      m->info.tensor[t].grid_cols);
            memcpy(m->nread[t], m->nread0[t], n * sizeof(uint32_t));
            memcpy(m->nwrite[t], m->nwrite0[t], n * sizeof(uint32_t));
        }
    m->counted = 0;
}

/* After the first recording the per-tile counts are the run's totals: keep
 * each tensor's largest (a renderer sizes its cells on them). */
static void keep_count_maxima(viz_model *m)
{
    for (int t = 0; t < SIM_TENSOR_COUNT; t++) {
        viz_tensor_info *ti = &m->info.tensor[t];
        if (!m->nread[t])
            continue;
        const size_t n = (size_t)(ti->grid_rows * ti->grid_cols);
        for (size_t k = 0; k < n; k++) {
            if (m->nread[t][k] > ti->max_reads)
                ti->max_reads = m->nread[t][k];
            if (m->nwrite[t][k] > ti->max_writes)
                ti->max_writes = m->nwrite[t][k];
        }
    }
}

/* The inputs of a compute-mode run: the caller's Q, K, V or the seeded
 * ones (owned), and for a backward run the seeded dO (owned). */
typedef struct {
    const float *Q, *K, *V;
    float *Qo, *Ko, *Vo, *dO;
} run_inputs;

/* Returns VIZ_OK, or VIZ_EFAIL (out of memory); free with free_inputs. */
static int make_inputs(const viz_config *cfg, run_inputs *ri)
{
    const sim_shape *sh = &cfg->sh;
    const size_t nd = (size_t)(sh->N * sh->d), nkd = (size_t)(sim_shape_Nk(sh) * sh->d);
    memset(ri, 0, sizeof *ri);
    if (cfg->Q && cfg->K && cfg->V) {
        ri->Q = cfg->Q;
        ri->K = cfg->K;
        ri->V = cfg->V;
    } else {
        ri->Q = ri->Qo = malloc(nd * sizeof *ri->Qo);
        ri->K = ri->Ko = malloc(nkd * sizeof *ri->Ko);
        ri->V = ri->Vo = malloc(nkd * sizeof *ri->Vo);
        if (!ri->Qo || !ri->Ko || !ri->Vo)
            return VIZ_EFAIL;
        sim_random_qkv(cfg->seed, sh->N, sim_shape_Nk(sh), sh->d, sh->dtype, ri->Qo, ri->Ko,
                       ri->Vo);
    }
    if (cfg->run.pass == SIM_BWD) {         /* the output gradient, as the report's */
        ri->dO = malloc(nd * sizeof *ri->dO);
        if (!ri->dO)
            return VIZ_EFAIL;
        sim_random_grad(cfg->seed, (int64_t)nd, sh->dtype, ri->dO);
    }
    return VIZ_OK;
}

static void free_inputs(run_inputs *ri)
{
    free(ri->Qo);
    free(ri->Ko);
    free(ri->Vo);
    free(ri->dO);
}

/* The blocks the mask leaves in its band: those a run with a block grid
 * visits. */
static uint64_t band_blocks(const viz_info *in)
{
    uint64_t n = 0;
    for (int64_t i = 0; i < in->plan.Tr; i++) {
        const sim_range js = sim_block_js(&in->sh, i, in->plan.Br, in->plan.Bc);
        for (int64_t j = js.lo; j <= js.hi; j++)
            n += (uint64_t)tile_visited(in, i, j);
    }
    return n;
}

/* 4. One recording of the run: the steps of the window [w0, w0 + window)
 * and the per-tile marks, handed to the model (the old window freed). The
 * first (first = 1) computes in compute mode and keeps the per-tile maxima;
 * a later one counts only (a windowed run is count-only). Returns VIZ_OK,
 * or VIZ_EFAIL with err set (the model then holds no window). */
static int record_run(viz_model *m, const viz_config *cfg, uint64_t w0, int first,
                      char *err, size_t errlen)
{
    const sim_shape *sh = &m->info.sh;
    viz_info *info = &m->info;
    recorder r;
    memset(&r, 0, sizeof r);
    r.m = m;
    r.steps.size = sizeof(rec_step);
    r.ev.size = sizeof(rec_ev);
    r.cps.size = sizeof(rec_cp);
    r.snaps.size = sizeof(rec_snap);
    r.pool.size = sizeof(float);
    r.mem_run = SIZE_MAX;
    r.m_buf = r.l_buf = r.o_buf = -1;
    r.snap_in_step = NONE32;
    float tmp[2 * VIZ_STATS_MAX_ROWS + VIZ_OUT_MAX_COLS];
    r.tmp = tmp;
    r.w0 = w0;
    r.w1 = m->window > UINT64_MAX - w0 ? UINT64_MAX : w0 + m->window;
    r.bi = r.bj = -1;
    r.by_row = r.by_col = r.in_band = 1;
    free_window(m);
    reset_tile_counts(m);
    run_inputs ri;
    memset(&ri, 0, sizeof ri);
    int rc = first && info->computed ? make_inputs(cfg, &ri) : VIZ_OK;
    if (rc != VIZ_OK) {
        snprintf(err, errlen, "out of memory for the view of N = %lld", (long long)sh->N);
    } else {
        sim_observer obs = { on_event, &r };
        sim_result res;
        const sim_inputs in = { ri.Q, ri.K, ri.V, ri.dO };
        if (sim_run_inputs(cfg->algo, sh, &info->plan, first && info->computed ? &in : NULL,
                           &obs, &res, err, errlen) != 0) {
            rc = VIZ_EFAIL;
        } else {
            info->measured = res.counts;
            info->sram_peak = res.sram_peak;
            info->theory_matches = sim_counts_equal(&res.counts, &info->final_counts);
            sim_result_free(&res);
            if (r.failed) {
                snprintf(err, errlen, "out of memory while recording the run");
                rc = VIZ_EFAIL;
            } else if (r.steps.n == 0) {
                snprintf(err, errlen, "internal: the run reached no pseudocode line");
                rc = VIZ_EFAIL;
            }
        }
    }
    free_inputs(&ri);
    /* Releases after the window's last step belong to a step not recorded. */
    if (r.nline > r.w1 && r.mem_run != SIZE_MAX)
        r.ev.n = r.mem_run;
    m->w0 = w0;
    m->steps = r.steps.p;
    m->nsteps = r.steps.n;
    m->ev = r.ev.p;
    m->nev = r.ev.n;
    m->cps = r.cps.p;
    m->ncps = r.cps.n;
    free(m->snaps);
    free(m->pool);
    m->snaps = r.snaps.p;
    m->nsnaps = r.snaps.n;
    m->pool = r.pool.p;
    if (rc == VIZ_OK && r.max_xfer > m->xfer_cap) {
        viz_transfer *x = realloc(m->xfer, r.max_xfer * sizeof *x);
        if (x) {
            m->xfer = x;
            m->xfer_cap = r.max_xfer;
        } else {
            snprintf(err, errlen, "out of memory");
            rc = VIZ_EFAIL;
        }
    }
    if (rc != VIZ_OK) {
        free_window(m);
        return rc;
    }
    if (first)
        keep_count_maxima(m);
    counts_to_window_start(m);
    rec_step *last = &m->steps[m->nsteps - 1];
    if (r.nline <= r.w1)
        last->snap_after = r.snap_in_step != NONE32 ? r.snap_in_step : last->snap_before;
    info->nsteps = r.nline;
    /* The block grid, where the visits go in one order over the band. */
    m->by_row = r.by_row;
    info->blocks = has_blocks(info) && (r.by_row || r.by_col) && r.in_band &&
                   r.nvisits == band_blocks(info);
    uint64_t cells = 0;
    for (int t = 0; t < SIM_TENSOR_COUNT; t++)
        if (info->tensor[t].present)
            cells += (uint64_t)(info->tensor[t].grid_rows * info->tensor[t].grid_cols);
    info->log_bytes = r.steps.cap * sizeof(rec_step) + r.ev.cap * sizeof(rec_ev) +
                      r.cps.cap * sizeof(rec_cp) + r.snaps.cap * sizeof(rec_snap) +
                      r.pool.cap * sizeof(float) + cells * VIZ_TILE_BYTES +
                      m->xfer_cap * sizeof *m->xfer;
    return VIZ_OK;
}

int viz_model_build(const viz_config *cfg, viz_model **out, char *err, size_t errlen)
{
    char dummy[8];
    if (!err || !errlen) {
        err = dummy;
        errlen = sizeof dummy;
    }
    err[0] = '\0';
    *out = NULL;
    int rc = config_check(cfg, err, errlen);
    if (rc != VIZ_OK)
        return rc;
    viz_model *m = calloc(1, sizeof *m);
    if (!m) {
        snprintf(err, errlen, "out of memory");
        return VIZ_EFAIL;
    }
    m->cfg = *cfg;
    m->cfg.Q = m->cfg.K = m->cfg.V = NULL;
    viz_info *info = &m->info;
    info->algo = cfg->algo;
    info->sh = cfg->sh;
    info->run = cfg->run;
    info->out_row = cfg->out_row > 0 ? cfg->out_row : 0;

    uint64_t cells = 0;
    rc = make_plan(m, err, errlen);
    if (rc == VIZ_EREFUSED) {
        *out = m;
        return rc;
    }
    if (rc == VIZ_OK)
        rc = choose_mode(m, cfg, err, errlen);
    /* Compute mode records the whole run: a step outside a window would
     * cost the whole run's arithmetic again. */
    m->window = info->computed       ? UINT64_MAX
                : cfg->window_steps ? cfg->window_steps
                                    : VIZ_WINDOW_STEPS;
    if (rc == VIZ_OK)
        rc = check_log_size(m, &cells, err, errlen);
    if (rc == VIZ_OK && alloc_marks(m) != VIZ_OK) {
        snprintf(err, errlen, "out of memory for the view of N = %lld", (long long)cfg->sh.N);
        rc = VIZ_EFAIL;
    }
    if (rc == VIZ_OK)
        rc = record_run(m, cfg, 0, 1, err, errlen);
    if (rc != VIZ_OK) {
        viz_model_free(m);
        return rc;
    }
    info->window_steps = m->window < info->nsteps ? m->window : info->nsteps;
    viz_model_seek(m, 0);
    *out = m;
    return VIZ_OK;
}

/* ---- seeking ------------------------------------------------------------------- */

static size_t step_end(const viz_model *m, uint64_t k)
{
    return k + 1 < m->nsteps ? m->steps[k + 1].ev : m->nev;
}

/* k: the step within the window. */
static void fill_stats(viz_model *m, uint64_t k)
{
    viz_stats *s = &m->st.stats;
    memset(s, 0, sizeof *s);
    const rec_step *st = &m->steps[k];
    s->available = m->info.computed;
    line_rules r = rules_for(&m->info, st->line);
    const unsigned view = line_view(&m->info, st->line);
    if (view & SIM_VIEW_BEFORE_IN_J)
        r.before_valid = st->j >= 0;          /* with j: accumulating */
    const sim_plan *p = &m->info.plan;
    const int64_t rows_per_block =
        ((view & SIM_VIEW_SOFTMAX) && p->softmax_passes == 1) ? p->Bs_r : p->Br;
    if ((!r.shown && !r.out_shown) || st->i < 0)
        return;
    s->shown = r.shown;
    s->out_shown = r.out_shown;
    s->row0 = (int64_t)st->i * rows_per_block;
    s->block_rows = m->info.sh.N - s->row0 < rows_per_block ? m->info.sh.N - s->row0
                                                            : rows_per_block;
    s->out_row = m->info.out_row < s->block_rows ? m->info.out_row : s->block_rows - 1;
    if (!s->available)
        return;
    const rec_snap *b = st->snap_before != NONE32 ? &m->snaps[st->snap_before] : NULL;
    const rec_snap *a = st->snap_after != NONE32 ? &m->snaps[st->snap_after] : NULL;
    s->before_valid = r.before_valid && b;
    s->after_valid = r.after_valid && a;
    s->m_is_L_before = r.L_before;
    s->m_is_L_after = r.L_after;
    s->out_normalised = r.norm_after;
    s->out_normalised_before = r.norm_before;
    int nm = (int)(s->block_rows < VIZ_STATS_MAX_ROWS ? s->block_rows : VIZ_STATS_MAX_ROWS);
    if (r.shown) {
        if ((s->before_valid && b->nm < nm) || (s->after_valid && a->nm < nm))
            nm = 0;     /* not resident (cannot happen for the rules above) */
        s->nrows = nm;
        for (int x = 0; x < nm; x++) {
            if (s->before_valid) {
                s->m_old[x] = m->pool[b->off + (size_t)x];
                s->l_old[x] = m->pool[b->off + (size_t)(b->nm + x)];
            }
            if (s->after_valid) {
                s->m_new[x] = m->pool[a->off + (size_t)x];
                s->l_new[x] = m->pool[a->off + (size_t)(a->nm + x)];
            }
        }
        s->alpha_shown = r.alpha && s->before_valid && s->after_valid;
        if (s->before_valid && s->after_valid && r.L_before == r.L_after) {
            for (int x = 0; x < nm; x++) {
                uint32_t u0, u1;
                memcpy(&u0, &s->m_old[x], 4);
                memcpy(&u1, &s->m_new[x], 4);
                s->changed[x] = u0 != u1;
                s->nchanged += s->changed[x];
            }
        }
        if (s->alpha_shown)
            for (int x = 0; x < nm; x++)
                s->alpha[x] = ref_exp(s->m_old[x] - ref_shift(s->m_new[x]));
    }
    if (r.out_shown) {
        int no = (int)(m->info.sh.d < VIZ_OUT_MAX_COLS ? m->info.sh.d : VIZ_OUT_MAX_COLS);
        s->out_cols = no;
        if (s->before_valid && b->no >= no)
            memcpy(s->out_old, &m->pool[b->off + 2u * b->nm], (size_t)no * sizeof(float));
        if (s->after_valid && a->no >= no)
            memcpy(s->out_new, &m->pool[a->off + 2u * a->nm], (size_t)no * sizeof(float));
    }
}

int viz_model_seek(viz_model *m, uint64_t step)
{
    if (!m || step >= m->info.nsteps)
        return -1;
    if (step < m->w0 || step - m->w0 >= m->nsteps) {
        /* Outside the window: record the one around the step, half of it
         * before, so that stepping back goes on within it. */
        const uint64_t half = m->window / 2;
        char err[256];
        if (record_run(m, &m->cfg, step > half ? step - half : 0, 0, err, sizeof err) !=
            VIZ_OK)
            return -1;
    }
    const uint64_t k = step - m->w0;
    viz_state *st = &m->st;
    const rec_cp *cp = &m->cps[k / VIZ_CHECKPOINT_STEPS];
    sim_counts c = cp->counts;
    uint8_t live[SIM_MAX_BUFFERS];
    memcpy(live, cp->live, sizeof live);
    int nlive = cp->nlive;
    uint64_t used = cp->used;
    unsigned flags[MAX_BUFTAB] = { 0 };
    int nx = 0;
    const size_t from = m->steps[(k / VIZ_CHECKPOINT_STEPS) * VIZ_CHECKPOINT_STEPS].ev;
    const size_t cur = m->steps[k].ev, to = step_end(m, k);
    for (size_t e = from; e < to; e++) {
        const rec_ev *x = &m->ev[e];
        const uint64_t n = (uint64_t)x->rows * (uint64_t)x->cols;
        switch (x->kind) {
        case SIM_EV_ALLOC:
            if (nlive < SIM_MAX_BUFFERS)
                live[nlive++] = x->buf;
            used += m->bufs[x->buf].bytes;
            break;
        case SIM_EV_FREE:
            for (int q = nlive - 1; q >= 0; q--)
                if (live[q] == x->buf) {
                    memmove(&live[q], &live[q + 1], (size_t)(nlive - q - 1));
                    nlive--;
                    break;
                }
            used -= m->bufs[x->buf].bytes;
            break;
        case SIM_EV_LOAD:
        case SIM_EV_STORE:
            if (x->kind == SIM_EV_LOAD) {
                c.read_elems[x->tensor] += n;
                c.read_ops[x->tensor]++;
            } else {
                c.write_elems[x->tensor] += n;
                c.write_ops[x->tensor]++;
            }
            if (e >= cur) {
                viz_transfer *t = &m->xfer[nx++];
                const viz_tensor_info *ti = &m->info.tensor[x->tensor];
                t->kind = (sim_event_kind)x->kind;
                t->tensor = (sim_tensor)x->tensor;
                t->r0 = x->r0;
                t->c0 = x->c0;
                t->rows = x->rows;
                t->cols = x->cols;
                tile_span(ti, t->r0, t->c0, t->rows, t->cols, &t->tr0, &t->tr1, &t->tc0,
                          &t->tc1);
                t->buf = m->bufs[x->buf].name;
                t->bytes = n * (uint64_t)ti->elem_bytes;
                flags[x->buf] |= x->kind == SIM_EV_LOAD ? VIZ_BUF_LOADED : VIZ_BUF_STORED;
            }
            break;
        default:
            break;
        }
    }
    /* The per-tile counts through this step's last event. */
    if (m->counted > to)
        counts_to_window_start(m);
    for (; m->counted < to; m->counted++)
        if (m->ev[m->counted].kind == SIM_EV_LOAD || m->ev[m->counted].kind == SIM_EV_STORE)
            tally(m, &m->ev[m->counted]);
    const rec_step *s = &m->steps[k];
    st->step = step;
    st->line = s->line;
    st->i = s->i;
    st->j = s->j;
    st->split = s->split;
    st->pass = s->pass;
    st->nxfer = nx;
    st->xfer = m->xfer;
    st->counts = c;
    st->sram_used = used;
    st->nbuf = nlive;
    uint64_t off = 0;
    for (int q = 0; q < nlive; q++) {
        const rec_buf *b = &m->bufs[live[q]];
        viz_sram_entry *e = &st->buf[q];
        memcpy(e->name, b->name, sizeof e->name);
        e->rows = b->rows;
        e->cols = b->cols;
        e->elem_bytes = b->elem_bytes;
        e->bytes = b->bytes;
        e->offset = off;
        e->flags = flags[live[q]];
        if (off + b->bytes > m->info.sh.M)
            e->flags |= VIZ_BUF_OVER;
        off += b->bytes;
    }
    fill_stats(m, k);
    return 0;
}

/* ---- queries -------------------------------------------------------------------- */

const viz_info *viz_model_info(const viz_model *m)
{
    return &m->info;
}

const viz_state *viz_model_state(const viz_model *m)
{
    return &m->st;
}

const viz_config *viz_model_config(const viz_model *m)
{
    return &m->cfg;
}

int viz_model_step_where(const viz_model *m, uint64_t step, int *line, int64_t *i,
                         int64_t *j)
{
    if (step < m->w0 || step - m->w0 >= m->nsteps)
        return -1;
    const uint64_t k = step - m->w0;
    if (line)
        *line = m->steps[k].line;
    if (i)
        *i = m->steps[k].i;
    if (j)
        *j = m->steps[k].j;
    return 0;
}

/* A search of the steps not recorded: a count-only run of the simulator
 * whose observer looks at its LINE events alone. */
typedef struct {
    uint64_t from, nline, found;
    int line;
    int64_t i, j;
} step_search;

static void on_search(void *ctx, const sim_event *e)
{
    step_search *q = ctx;
    if (e->kind != SIM_EV_LINE)
        return;
    const uint64_t k = q->nline++;
    if (q->found == UINT64_MAX && k >= q->from && e->line == q->line &&
        (q->i == VIZ_ANY || e->i == q->i) && (q->j == VIZ_ANY || e->j == q->j))
        q->found = k;
}

int viz_model_find_step(const viz_model *m, uint64_t from, int line, int64_t i, int64_t j,
                        uint64_t *step)
{
    const uint64_t w1 = m->w0 + m->nsteps;
    if (from >= m->w0) {
        for (uint64_t k = from; k < w1; k++) {
            const rec_step *s = &m->steps[k - m->w0];
            if (s->line == line && (i == VIZ_ANY || s->i == i) &&
                (j == VIZ_ANY || s->j == j)) {
                *step = k;
                return 0;
            }
        }
        if (w1 >= m->info.nsteps)
            return -1;
        from = from > w1 ? from : w1;
    }
    if (m->nsteps == 0 || from >= m->info.nsteps)
        return -1;
    /* The steps outside the window: run again (count-only: a windowed run
     * is). */
    step_search q = { from, 0, UINT64_MAX, line, i, j };
    sim_observer obs = { on_search, &q };
    sim_result res;
    if (sim_run_inputs(m->cfg.algo, &m->info.sh, &m->info.plan, NULL, &obs, &res, NULL, 0) != 0)
        return -1;
    sim_result_free(&res);
    if (q.found == UINT64_MAX)
        return -1;
    *step = q.found;
    return 0;
}

static int in_grid(const viz_model *m, sim_tensor t, int64_t tr, int64_t tc)
{
    if ((int)t < 0 || t >= SIM_TENSOR_COUNT || !m->info.tensor[t].present || !m->first_read[t])
        return 0;
    const viz_tensor_info *ti = &m->info.tensor[t];
    return tr >= 0 && tc >= 0 && tr < ti->grid_rows && tc < ti->grid_cols;
}

int viz_tile_current(const viz_model *m, sim_tensor t, int64_t *tr, int64_t *tc)
{
    if ((int)t < 0 || t >= SIM_TENSOR_COUNT || !m->info.tensor[t].present || m->nsteps == 0)
        return 0;
    const viz_state *st = &m->st;
    const viz_tensor_info *ti = &m->info.tensor[t];
    const unsigned v = line_view(&m->info, st->line);
    if ((v & SIM_VIEW_SOFTMAX) && m->info.plan.softmax_passes == 1)
        return 0;
    /* Naive's phases (S = Q K^T; the softmax; O = P V, and the backward's
     * five) name their blocks i, j too, but each holds only the tensors its
     * line moves. */
    if (m->info.algo == SIM_NAIVE && !(m->line_tensors[st->line] & (1u << t)))
        return 0;
    /* The forward pass only stores L, from m_i's buffer (line 13 turns m_i
     * into L_i): L has no buffer of its own to be in hand in. */
    if (t == SIM_L && m->info.run.pass == SIM_FWD)
        return 0;
    int64_t a = -1, c = 0;
    switch (t) {
    case SIM_K: case SIM_V: case SIM_dK: case SIM_dV:
        a = st->j;
        break;
    case SIM_S: case SIM_P: case SIM_dP: case SIM_dS:
        a = st->j >= 0 ? st->i : -1;
        c = st->j;
        break;
    default:               /* Q, O, dO, dQ, m, l, L, D; the partials O~ */
        a = ti->rows == m->info.sh.N ? st->i : -1;
        break;
    }
    if (a < 0 || a >= ti->grid_rows || c < 0 || c >= ti->grid_cols)
        return 0;
    *tr = a;
    *tc = c;
    return 1;
}

unsigned viz_tile_mark(const viz_model *m, sim_tensor t, int64_t tr, int64_t tc)
{
    if (!in_grid(m, t, tr, tc) || m->nsteps == 0)
        return 0;
    const int64_t cell = tr * m->info.tensor[t].grid_cols + tc;
    const uint64_t k = m->st.step;
    unsigned bits = 0;
    if (m->first_read[t][cell] <= k)
        bits |= VIZ_TILE_READ;
    if (m->first_write[t][cell] <= k)
        bits |= VIZ_TILE_WRITTEN;
    for (int x = 0; x < m->st.nxfer; x++) {
        const viz_transfer *v = &m->st.xfer[x];
        if (v->tensor == t && tr >= v->tr0 && tr < v->tr1 && tc >= v->tc0 && tc < v->tc1)
            bits |= v->kind == SIM_EV_LOAD ? VIZ_TILE_LOADING : VIZ_TILE_STORING;
    }
    int64_t ca, cc;
    if (viz_tile_current(m, t, &ca, &cc) && ca == tr && cc == tc)
        bits |= VIZ_TILE_CURRENT;
    return bits;
}

unsigned viz_tile_range_mark(const viz_model *m, sim_tensor t, int64_t tr0, int64_t tr1,
                             int64_t tc0, int64_t tc1)
{
    if ((int)t < 0 || t >= SIM_TENSOR_COUNT || !m->info.tensor[t].present ||
        !m->first_read[t] || m->nsteps == 0)
        return 0;
    const viz_tensor_info *ti = &m->info.tensor[t];
    if (tr0 < 0) tr0 = 0;
    if (tc0 < 0) tc0 = 0;
    if (tr1 > ti->grid_rows) tr1 = ti->grid_rows;
    if (tc1 > ti->grid_cols) tc1 = ti->grid_cols;
    const uint64_t k = m->st.step;
    unsigned bits = 0;
    for (int64_t a = tr0; a < tr1; a++)
        for (int64_t c = tc0; c < tc1; c++) {
            const int64_t cell = a * ti->grid_cols + c;
            if (m->first_read[t][cell] <= k)
                bits |= VIZ_TILE_READ;
            if (m->first_write[t][cell] <= k)
                bits |= VIZ_TILE_WRITTEN;
        }
    for (int x = 0; x < m->st.nxfer; x++) {
        const viz_transfer *v = &m->st.xfer[x];
        if (v->tensor == t && v->tr0 < tr1 && tr0 < v->tr1 && v->tc0 < tc1 && tc0 < v->tc1)
            bits |= v->kind == SIM_EV_LOAD ? VIZ_TILE_LOADING : VIZ_TILE_STORING;
    }
    int64_t ca, cc;
    if (viz_tile_current(m, t, &ca, &cc) && ca >= tr0 && ca < tr1 && cc >= tc0 && cc < tc1)
        bits |= VIZ_TILE_CURRENT;
    return bits;
}

void viz_tile_range_counts(const viz_model *m, sim_tensor t, int64_t tr0, int64_t tr1,
                           int64_t tc0, int64_t tc1, uint32_t *reads, uint32_t *writes)
{
    *reads = *writes = 0;
    if ((int)t < 0 || t >= SIM_TENSOR_COUNT || !m->nread[t] || m->nsteps == 0)
        return;
    const viz_tensor_info *ti = &m->info.tensor[t];
    if (tr0 < 0) tr0 = 0;
    if (tc0 < 0) tc0 = 0;
    if (tr1 > ti->grid_rows) tr1 = ti->grid_rows;
    if (tc1 > ti->grid_cols) tc1 = ti->grid_cols;
    for (int64_t a = tr0; a < tr1; a++)
        for (int64_t c = tc0; c < tc1; c++) {
            const int64_t cell = a * ti->grid_cols + c;
            if (m->nread[t][cell] > *reads)
                *reads = m->nread[t][cell];
            if (m->nwrite[t][cell] > *writes)
                *writes = m->nwrite[t][cell];
        }
}

unsigned viz_block_range(const viz_model *m, int64_t i0, int64_t i1, int64_t j0, int64_t j1)
{
    if (!m->info.blocks || m->nsteps == 0)
        return 0;
    const sim_plan *p = &m->info.plan;
    if (i0 < 0) i0 = 0;
    if (j0 < 0) j0 = 0;
    if (i1 > p->Tr) i1 = p->Tr;
    if (j1 > p->Tc) j1 = p->Tc;
    const viz_state *st = &m->st;
    /* The last block visited up to this step: the run visits the band's
     * blocks in one order (checked while recording), so the blocks before
     * it in that order are done and those after it to come. */
    const rec_step *s = &m->steps[st->step - m->w0];
    unsigned bits = 0;
    for (int64_t i = i0; i < i1; i++) {
        const sim_range js = sim_block_js(&m->info.sh, i, p->Br, p->Bc);
        for (int64_t j = j0; j < j1; j++) {
            const int done = s->bi >= 0 && (m->by_row ? i < s->bi || (i == s->bi && j <= s->bj)
                                                      : j < s->bj || (j == s->bj && i <= s->bi));
            if (i == st->i && j == st->j)
                bits |= VIZ_BLOCK_NOW;
            else if (j < js.lo || j > js.hi || !tile_visited(&m->info, i, j))
                bits |= VIZ_BLOCK_SKIPPED;
            else if (done)
                bits |= VIZ_BLOCK_DONE;
            else
                bits |= VIZ_BLOCK_TODO;
        }
    }
    return bits;
}

int viz_tile_describe(const viz_model *m, sim_tensor t, int64_t tr, int64_t tc, char *buf,
                      size_t len)
{
    if (!in_grid(m, t, tr, tc)) {
        snprintf(buf, len, "no such tile");
        return -1;
    }
    const viz_tensor_info *ti = &m->info.tensor[t];
    const int64_t r0 = tr * ti->tile_rows, c0 = tc * ti->tile_cols;
    const int64_t r1 = r0 + ti->tile_rows < ti->rows ? r0 + ti->tile_rows : ti->rows;
    const int64_t c1 = c0 + ti->tile_cols < ti->cols ? c0 + ti->tile_cols : ti->cols;
    /* The counts so far and the first moves are kept per tile; the last
     * move up to this step is in the window or, failing that, the last
     * before it. */
    uint64_t nr = 0, nw = 0, fr = 0, lr = 0, fw = 0, lw = 0;
    if (m->nsteps) {
        const int64_t cell = tr * ti->grid_cols + tc;
        nr = m->nread[t][cell];
        nw = m->nwrite[t][cell];
        fr = (uint64_t)m->first_read[t][cell] + 1;
        fw = (uint64_t)m->first_write[t][cell] + 1;
        lr = m->last_read[t][cell] != NONE32 ? (uint64_t)m->last_read[t][cell] + 1 : 0;
        lw = m->last_write[t][cell] != NONE32 ? (uint64_t)m->last_write[t][cell] + 1 : 0;
        for (uint64_t s = 0; s <= m->st.step - m->w0; s++) {
            for (size_t e = m->steps[s].ev; e < step_end(m, s); e++) {
                const rec_ev *x = &m->ev[e];
                if ((x->kind != SIM_EV_LOAD && x->kind != SIM_EV_STORE) || x->tensor != t)
                    continue;
                if (x->r0 >= r1 || x->r0 + x->rows <= r0 || x->c0 >= c1 ||
                    x->c0 + x->cols <= c0)
                    continue;
                if (x->kind == SIM_EV_LOAD)
                    lr = m->w0 + s + 1;
                else
                    lw = m->w0 + s + 1;
            }
        }
    }
    /* Numbered from 1, as the papers number blocks (K_1 .. K_Tc). */
    char what[160];
    if (ti->grid_cols > 1)
        snprintf(what, sizeof what, "%s tile (%lld,%lld) of %lldx%lld, rows [%lld:%lld), "
                 "cols [%lld:%lld)", ti->name, (long long)tr + 1, (long long)tc + 1,
                 (long long)ti->grid_rows, (long long)ti->grid_cols, (long long)r0,
                 (long long)r1, (long long)c0, (long long)c1);
    else
        snprintf(what, sizeof what, "%s tile %lld of %lld, rows [%lld:%lld)", ti->name,
                 (long long)tr + 1, (long long)ti->grid_rows, (long long)r0, (long long)r1);
    char rd[64] = "never read", wr[64] = "never written";
    if (nr)
        snprintf(rd, sizeof rd, "read %llux (steps %llu..%llu)", (unsigned long long)nr,
                 (unsigned long long)fr, (unsigned long long)lr);
    if (nw)
        snprintf(wr, sizeof wr, "written %llux (steps %llu..%llu)", (unsigned long long)nw,
                 (unsigned long long)fw, (unsigned long long)lw);
    snprintf(buf, len, "%s; %s, %s", what, rd, wr);
    return 0;
}

uint64_t viz_bytes_read(const viz_model *m, sim_tensor t)
{
    return m->st.counts.read_elems[t] * (uint64_t)m->info.tensor[t].elem_bytes;
}

uint64_t viz_bytes_written(const viz_model *m, sim_tensor t)
{
    return m->st.counts.write_elems[t] * (uint64_t)m->info.tensor[t].elem_bytes;
}

uint64_t viz_final_bytes_read(const viz_model *m, sim_tensor t)
{
    return m->info.final_counts.read_elems[t] * (uint64_t)m->info.tensor[t].elem_bytes;
}

uint64_t viz_final_bytes_written(const viz_model *m, sim_tensor t)
{
    return m->info.final_counts.write_elems[t] * (uint64_t)m->info.tensor[t].elem_bytes;
}

void viz_axis_cell(int64_t n, int64_t tile, int64_t cells, int64_t c, int64_t *t0,
                   int64_t *t1)
{
    if (cells < 1 || n < 1 || tile < 1) {
        *t0 = *t1 = 0;
        return;
    }
    /* Cell c shows elements [c n / cells, (c+1) n / cells), at least one. */
    /* c < cells (a screen axis) and n <= 2^30: the products fit in 64 bits. */
    int64_t e0 = c * n / cells;
    int64_t e1 = (c + 1) * n / cells;
    if (e1 <= e0)
        e1 = e0 + 1;
    *t0 = e0 / tile;
    *t1 = (e1 - 1) / tile + 1;
}
