/*
 * viz_canvas.c — see viz_canvas.h.
 */
#include "viz_canvas.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int viz_canvas_init(viz_canvas *c, int w, int h)
{
    memset(c, 0, sizeof *c);
    if (w < 1 || h < 1)
        return -1;
    c->ch = malloc((size_t)w * (size_t)h);
    c->style = malloc((size_t)w * (size_t)h);
    if (!c->ch || !c->style) {
        viz_canvas_free(c);
        return -1;
    }
    c->w = w;
    c->h = h;
    viz_canvas_clear(c);
    return 0;
}

void viz_canvas_free(viz_canvas *c)
{
    free(c->ch);
    free(c->style);
    memset(c, 0, sizeof *c);
}

void viz_canvas_clear(viz_canvas *c)
{
    memset(c->ch, ' ', (size_t)c->w * (size_t)c->h);
    memset(c->style, VIZ_ST_NORMAL, (size_t)c->w * (size_t)c->h);
}

int viz_canvas_text(viz_canvas *c, int x, int y, int maxw, viz_style st, const char *s)
{
    if (y < 0 || y >= c->h || x >= c->w)
        return 0;
    int lim = c->w - x;
    if (maxw >= 0 && maxw < lim)
        lim = maxw;
    int n = 0;
    for (; s[n] && n < lim; n++) {
        int xx = x + n;
        if (xx < 0)
            continue;
        unsigned char ch = (unsigned char)s[n];
        c->ch[(size_t)y * (size_t)c->w + (size_t)xx] = (ch >= 32 && ch < 127) ? (char)ch : '?';
        c->style[(size_t)y * (size_t)c->w + (size_t)xx] = (unsigned char)st;
    }
    return n;
}

int viz_canvas_printf(viz_canvas *c, int x, int y, int maxw, viz_style st,
                      const char *fmt, ...)
{
    char buf[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    return viz_canvas_text(c, x, y, maxw, st, buf);
}

void viz_canvas_fill(viz_canvas *c, int x, int y, int n, char ch, viz_style st)
{
    if (y < 0 || y >= c->h)
        return;
    for (int k = 0; k < n; k++) {
        int xx = x + k;
        if (xx < 0 || xx >= c->w)
            continue;
        c->ch[(size_t)y * (size_t)c->w + (size_t)xx] = ch;
        c->style[(size_t)y * (size_t)c->w + (size_t)xx] = (unsigned char)st;
    }
}

void viz_canvas_box(viz_canvas *c, const char *const *lines, int n)
{
    int w = 0;
    for (int k = 0; k < n; k++)
        if ((int)strlen(lines[k]) > w)
            w = (int)strlen(lines[k]);
    w += 4;
    int x0 = (c->w - w) / 2, y0 = (c->h - n - 2) / 2;
    x0 = x0 < 0 ? 0 : x0;
    y0 = y0 < 0 ? 0 : y0;
    viz_canvas_fill(c, x0, y0, w, '-', VIZ_ST_HEAD);
    for (int k = 0; k < n; k++) {
        viz_canvas_fill(c, x0, y0 + 1 + k, w, ' ', VIZ_ST_NORMAL);
        viz_canvas_text(c, x0, y0 + 1 + k, 1, VIZ_ST_HEAD, "|");
        viz_canvas_text(c, x0 + 2, y0 + 1 + k, w - 4, k == 0 ? VIZ_ST_HEAD : VIZ_ST_NORMAL,
                        lines[k]);
        viz_canvas_text(c, x0 + w - 1, y0 + 1 + k, 1, VIZ_ST_HEAD, "|");
    }
    viz_canvas_fill(c, x0, y0 + 1 + n, w, '-', VIZ_ST_HEAD);
}
