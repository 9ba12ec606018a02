/*
 * viz_text.c — see viz_text.h.
 */
#include "viz_text.h"

#include <string.h>

#include "viz_canvas.h"

static int print_canvas(FILE *out, const viz_canvas *c)
{
    for (int y = 0; y < c->h; y++) {
        const char *row = c->ch + (size_t)y * (size_t)c->w;
        int n = c->w;
        while (n > 0 && row[n - 1] == ' ')
            n--;
        if (n && fwrite(row, 1, (size_t)n, out) != (size_t)n)
            return -1;
        if (fputc('\n', out) == EOF)
            return -1;
    }
    return 0;
}

int viz_text_frame(FILE *out, const viz_model *m, int w, int h)
{
    viz_canvas c;
    if (viz_canvas_init(&c, w, h) != 0)
        return -1;
    viz_layout_draw(m, &c, NULL, NULL);
    int rc = print_canvas(out, &c);
    viz_canvas_free(&c);
    return rc;
}

static int separator(FILE *out, const viz_model *m, int w)
{
    const viz_info *in = viz_model_info(m);
    char head[128];
    if (in->refused)
        snprintf(head, sizeof head, "---- plan refused ");
    else
        snprintf(head, sizeof head, "---- step %llu of %llu ",
                 (unsigned long long)viz_model_state(m)->step + 1,
                 (unsigned long long)in->nsteps);
    int n = (int)strlen(head);
    if (fputs(head, out) == EOF)
        return -1;
    for (; n < w; n++)
        if (fputc('-', out) == EOF)
            return -1;
    return fputc('\n', out) == EOF ? -1 : 0;
}

int viz_text_frames(FILE *out, viz_model *m, uint64_t first, uint64_t count, int w, int h)
{
    viz_canvas c;
    if (viz_canvas_init(&c, w, h) != 0)
        return -1;
    const viz_info *in = viz_model_info(m);
    int rc = 0;
    if (in->refused) {
        viz_layout_draw(m, &c, NULL, NULL);
        rc = separator(out, m, w) || print_canvas(out, &c) ? -1 : 0;
    } else {
        for (uint64_t k = first; k < in->nsteps && k - first < count && rc == 0; k++) {
            viz_model_seek(m, k);
            viz_layout_draw(m, &c, NULL, NULL);
            rc = separator(out, m, w) || print_canvas(out, &c) ? -1 : 0;
        }
    }
    viz_canvas_free(&c);
    if (fflush(out) != 0 || ferror(out))
        rc = -1;
    return rc;
}
