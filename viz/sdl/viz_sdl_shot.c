/*
 * viz_sdl_shot.c — `--screenshot FILE`: one step drawn by a software
 * renderer on an SDL_Surface, saved as PNG (viz_sdl_png.c) or BMP.
 *
 * No SDL_Init, no video driver, no window: SDL_CreateSoftwareRenderer draws
 * into memory, so this works on machines without a display (CI, ssh) and
 * gives the same bytes on every run.
 */
#include "viz_sdl.h"
#include "sim_outfile.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <SDL.h>

#include "viz_sdl_draw.h"
#include "viz_sdl_png.h"

enum { SHOT_UNKNOWN, SHOT_PNG, SHOT_BMP };

static int shot_kind(const char *path)
{
    size_t n = strlen(path);
    if (n > 4 && SDL_strcasecmp(path + n - 4, ".png") == 0)
        return SHOT_PNG;
    if (n > 4 && SDL_strcasecmp(path + n - 4, ".bmp") == 0)
        return SHOT_BMP;
    return SHOT_UNKNOWN;
}

/* The surface's pixels (XRGB8888, 0x00RRGGBB in native order) as packed
 * R, G, B bytes, w * 3 per row, into rgb. */
static void surface_rgb(SDL_Surface *s, uint8_t *rgb)
{
    if (SDL_MUSTLOCK(s))
        SDL_LockSurface(s);
    for (int y = 0; y < s->h; y++) {
        const uint32_t *row = (const uint32_t *)((const uint8_t *)s->pixels + (size_t)y * (size_t)s->pitch);
        uint8_t *out = rgb + (size_t)y * (size_t)s->w * 3;
        for (int x = 0; x < s->w; x++) {
            out[3 * x + 0] = (uint8_t)(row[x] >> 16);
            out[3 * x + 1] = (uint8_t)(row[x] >> 8);
            out[3 * x + 2] = (uint8_t)row[x];
        }
    }
    if (SDL_MUSTLOCK(s))
        SDL_UnlockSurface(s);
}

/* BMP through SDL, but the file opened here so that a failure says why in
 * the C library's words. Returns 0 or -1 with err set; no partial file. */
static int save_bmp(SDL_Surface *s, const char *path, char *err, size_t errlen)
{
    /* Whole or not at all: SDL writes into the temporary, which replaces
     * path only when complete. */
    sim_outfile out;
    int e = sim_outfile_open(&out, path);
    if (e) {
        snprintf(err, errlen, "cannot write '%s': %s", path, strerror(e));
        return -1;
    }
    SDL_RWops *rw = SDL_RWFromFP(out.f, SDL_FALSE);     /* leaves out.f open */
    if (!rw || SDL_SaveBMP_RW(s, rw, 0) != 0) {
        snprintf(err, errlen, "cannot write '%s': %s", path, SDL_GetError());
        if (rw)
            SDL_RWclose(rw);
        sim_outfile_abort(&out);
        return -1;
    }
    SDL_RWclose(rw);
    if ((e = sim_outfile_commit(&out)) != 0) {
        snprintf(err, errlen, "cannot write '%s': %s", path, strerror(e));
        return -1;
    }
    return 0;
}

int viz_sdl_check_size(int w, int h, const char *what, char *err, size_t errlen)
{
    if (w < VIZ_SDL_MIN_SIZE || h < VIZ_SDL_MIN_SIZE || w > VIZ_SDL_MAX_SIZE ||
        h > VIZ_SDL_MAX_SIZE) {
        snprintf(err, errlen, "%s size %d x %d: width and height must be in "
                 "%d..%d pixels", what, w, h, VIZ_SDL_MIN_SIZE, VIZ_SDL_MAX_SIZE);
        return VIZ_EUSAGE;
    }
    return 0;
}

void viz_sdl_offscreen_close(viz_sdl_offscreen *f)
{
    free(f->rgb);
    viz_sdl_heat_free(f->heat);
    viz_sdl_font_close(f->font);
    if (f->rend)
        SDL_DestroyRenderer(f->rend);
    SDL_FreeSurface(f->surf);
    memset(f, 0, sizeof *f);
}

int viz_sdl_offscreen_open(viz_sdl_offscreen *f, viz_model *m, const viz_sdl_opts *o, int w,
                           int h, char *err, size_t errlen)
{
    memset(f, 0, sizeof *f);
    f->w = w;
    f->h = h;
    f->surf = SDL_CreateRGBSurfaceWithFormat(0, w, h, 32, SDL_PIXELFORMAT_RGB888);
    if (!f->surf) {
        snprintf(err, errlen, "cannot make a %d x %d surface: %s", w, h, SDL_GetError());
        return VIZ_EFAIL;
    }
    f->rend = SDL_CreateSoftwareRenderer(f->surf);
    f->heat = viz_sdl_heat_new(o ? o->Q : NULL, o ? o->K : NULL);
    f->font = viz_sdl_font_open();     /* the window's face, sized the same way */
    f->rgb = malloc((size_t)w * (size_t)h * 3);
    if (!f->rend || !f->heat || !f->font || !f->rgb) {
        snprintf(err, errlen, "cannot make a software renderer: %s",
                 f->rend ? "out of memory" : SDL_GetError());
        viz_sdl_offscreen_close(f);
        return VIZ_EFAIL;
    }
    viz_sdl_heat_probe(f->heat, m);            /* leaves m at its step */
    if (o && o->Q)
        snprintf(f->inputs, sizeof f->inputs, "the caller's (.npy)");
    else
        snprintf(f->inputs, sizeof f->inputs, "seeded (seed %llu)",
                 (unsigned long long)viz_model_config(m)->seed);
    f->ui = (viz_sdl_ui){ .inputs = f->inputs, .theme = o ? o->theme : VIZ_SDL_THEME_LIGHT,
                          .font = f->font };
    return 0;
}

const uint8_t *viz_sdl_offscreen_draw(viz_sdl_offscreen *f, const viz_model *m)
{
    viz_sdl_draw(f->rend, f->w, f->h, m, f->heat, &f->ui, NULL);
    SDL_RenderFlush(f->rend);
    surface_rgb(f->surf, f->rgb);
    return f->rgb;
}

void viz_sdl_offscreen_svg(viz_sdl_offscreen *f, const viz_model *m, FILE *out)
{
    f->ui.svg = out;
    viz_sdl_draw(NULL, f->w, f->h, m, f->heat, &f->ui, NULL);
    f->ui.svg = NULL;
}

int viz_sdl_screenshot(viz_model *m, const viz_sdl_opts *o, uint64_t step,
                       const char *path, int width, int height, char *err,
                       size_t errlen)
{
    if (!m || !path || !path[0]) {
        snprintf(err, errlen, "screenshot: no model or no file name");
        return VIZ_EUSAGE;
    }
    const int kind = shot_kind(path);
    if (kind == SHOT_UNKNOWN) {
        snprintf(err, errlen, "screenshot '%s': unknown image type; the file name must "
                 "end in .png or .bmp", path);
        return VIZ_EUSAGE;
    }
    const int w = width ? width : VIZ_SDL_DEFAULT_W;
    const int h = height ? height : VIZ_SDL_DEFAULT_H;
    if (viz_sdl_check_size(w, h, "screenshot", err, errlen) != 0)
        return VIZ_EUSAGE;
    if (viz_sdl_seek_step(m, step, err, errlen) != 0)
        return VIZ_EUSAGE;

    viz_sdl_offscreen f;
    char ferr[512];
    if (viz_sdl_offscreen_open(&f, m, o, w, h, ferr, sizeof ferr) != 0) {
        snprintf(err, errlen, "screenshot: %s", ferr);
        return VIZ_EFAIL;
    }
    const uint8_t *rgb = viz_sdl_offscreen_draw(&f, m);
    int rc = 0;
    if (kind == SHOT_PNG)
        rc = viz_sdl_png_write(path, rgb, w, h, (size_t)w * 3, VIZ_SDL_PNG_COMPRESSED, err,
                               errlen) != 0 ? VIZ_EFAIL : 0;
    else if (save_bmp(f.surf, path, err, errlen) != 0)
        rc = VIZ_EFAIL;
    viz_sdl_offscreen_close(&f);
    return rc;
}

int viz_sdl_seek_step(viz_model *m, uint64_t step, char *err, size_t errlen)
{
    const viz_info *in = viz_model_info(m);
    if (in->nsteps == 0) {
        if (step != 0) {
            snprintf(err, errlen, "step %llu: the plan was refused, so the run has no "
                     "steps; only the refusal (step 1) can be drawn",
                     (unsigned long long)step + 1);
            return VIZ_EUSAGE;
        }
    } else if (viz_model_seek(m, step) != 0) {
        snprintf(err, errlen, "step %llu is out of range: the run has steps 1..%llu",
                 (unsigned long long)step + 1, (unsigned long long)in->nsteps);
        return VIZ_EUSAGE;
    }
    return 0;
}
