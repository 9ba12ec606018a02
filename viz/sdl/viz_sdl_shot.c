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
 * R, G, B bytes, w * 3 per row. NULL when out of memory. */
static uint8_t *surface_rgb(SDL_Surface *s)
{
    uint8_t *rgb = malloc((size_t)s->w * (size_t)s->h * 3);
    if (!rgb)
        return NULL;
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
    return rgb;
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
    if (w < VIZ_SDL_MIN_SIZE || h < VIZ_SDL_MIN_SIZE || w > VIZ_SDL_MAX_SIZE ||
        h > VIZ_SDL_MAX_SIZE) {
        snprintf(err, errlen, "screenshot size %d x %d: width and height must be in "
                 "%d..%d pixels", w, h, VIZ_SDL_MIN_SIZE, VIZ_SDL_MAX_SIZE);
        return VIZ_EUSAGE;
    }
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

    int rc = VIZ_EFAIL;
    SDL_Renderer *rend = NULL;
    viz_sdl_heat *heat = NULL;
    viz_sdl_font *font = NULL;
    uint8_t *rgb = NULL;
    SDL_Surface *surf = SDL_CreateRGBSurfaceWithFormat(0, w, h, 32, SDL_PIXELFORMAT_RGB888);
    if (!surf) {
        snprintf(err, errlen, "screenshot: cannot make a %d x %d surface: %s", w, h,
                 SDL_GetError());
        goto out;
    }
    rend = SDL_CreateSoftwareRenderer(surf);
    heat = viz_sdl_heat_new(o ? o->Q : NULL, o ? o->K : NULL);
    font = viz_sdl_font_open();     /* the window's face, sized the same way */
    if (!rend || !heat || !font) {
        snprintf(err, errlen, "screenshot: cannot make a software renderer: %s",
                 rend ? "out of memory" : SDL_GetError());
        goto out;
    }
    viz_sdl_heat_probe(heat, m);            /* leaves m at step */
    char inputs[96];
    if (o && o->Q)
        snprintf(inputs, sizeof inputs, "the caller's (.npy)");
    else
        snprintf(inputs, sizeof inputs, "seeded (seed %llu)",
                 (unsigned long long)viz_model_config(m)->seed);
    viz_sdl_ui ui = { .inputs = inputs, .theme = o ? o->theme : VIZ_SDL_THEME_LIGHT,
                      .font = font };
    viz_sdl_draw(rend, w, h, m, heat, &ui, NULL);
    SDL_RenderFlush(rend);

    if (kind == SHOT_PNG) {
        rgb = surface_rgb(surf);
        if (!rgb) {
            snprintf(err, errlen, "screenshot: out of memory");
            goto out;
        }
        if (viz_sdl_png_write(path, rgb, w, h, (size_t)w * 3, VIZ_SDL_PNG_COMPRESSED, err,
                              errlen) != 0)
            goto out;
    } else if (save_bmp(surf, path, err, errlen) != 0) {
        goto out;
    }
    rc = 0;
out:
    free(rgb);
    viz_sdl_heat_free(heat);
    viz_sdl_font_close(font);
    if (rend)
        SDL_DestroyRenderer(rend);
    SDL_FreeSurface(surf);
    return rc;
}
