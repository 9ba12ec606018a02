/*
 * viz_sdl_rec.c — `fasim view --record FILE`: a range of steps drawn as the
 * screenshot draws one (viz_sdl_offscreen: a software renderer, no display),
 * written as an animated GIF (giflib), numbered PNG or SVG frames, or an MP4
 * through ffmpeg.
 *
 * The GIF is made for slides: a fixed palette, so that the same frames give
 * the same bytes and a colour never shifts between frames, and after the
 * first frame only the rectangle that changed, its unchanged pixels
 * transparent (a step changes the counters, a few tiles and the current
 * line: most of the frame stays, and LZW packs the transparent runs).
 */
#define _POSIX_C_SOURCE 200809L
#include "viz_sdl.h"
#include "sim_outfile.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <SDL.h>

#ifdef FASIM_HAVE_GIF
#include <gif_lib.h>
#endif

#include "viz_sdl_draw.h"
#include "viz_sdl_png.h"

#define ERR(...) snprintf(err, errlen, __VA_ARGS__)

static int ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), k = strlen(suffix);
    return n > k && SDL_strcasecmp(s + n - k, suffix) == 0;
}

static int is_dir(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

/* ---- what FILE asks for ------------------------------------------------------ */

int viz_sdl_record_check(const viz_sdl_rec *r, viz_sdl_rec_kind *kind, char *err,
                         size_t errlen)
{
    const char *p = r->path;
    if (!p || !p[0]) {
        ERR("--record: no file name");
        return VIZ_EUSAGE;
    }
    const size_t n = strlen(p);
    const int folder = p[n - 1] == '/' || is_dir(p);
    if (!folder && r->frames_svg) {
        ERR("--record %s: --format svg writes frames into a folder: name one (a name "
            "ending in '/')", p);
        return VIZ_EUSAGE;
    }
    char probe[SIM_OUTFILE_PATH];
    if (folder) {
        *kind = r->frames_svg ? VIZ_SDL_REC_SVG : VIZ_SDL_REC_PNG;
        /* An existing folder must take new files; a missing one, its parent
         * must (the folder is made then). */
        int len = is_dir(p) ? snprintf(probe, sizeof probe, "%s/step-1.png", p)
                            : snprintf(probe, sizeof probe, "%.*s", (int)(n - 1), p);
        if (len < 0 || (size_t)len >= sizeof probe) {
            ERR("--record %s: the name is too long", p);
            return VIZ_EFAIL;
        }
    } else if (ends_with(p, ".gif")) {
        *kind = VIZ_SDL_REC_GIF;
        snprintf(probe, sizeof probe, "%s", p);
    } else if (ends_with(p, ".mp4")) {
        *kind = VIZ_SDL_REC_MP4;
        snprintf(probe, sizeof probe, "%s", p);
    } else {
        ERR("--record %s: unknown kind; the name must end in .gif or .mp4, or name a "
            "folder for numbered frames (a name ending in '/'; --format png or svg)", p);
        return VIZ_EUSAGE;
    }
    int e = sim_outfile_check(probe);
    if (e) {
        ERR("--record %s: cannot write: %s", p, strerror(e));
        return VIZ_EFAIL;
    }
#ifndef FASIM_HAVE_GIF
    if (*kind == VIZ_SDL_REC_GIF) {
        ERR("--record %s: built without giflib: install libgif-dev and rebuild, or record "
            "PNG frames into a folder", p);
        return VIZ_EFAIL;
    }
#endif
    char ffmpeg[SIM_OUTFILE_PATH];
    if (*kind == VIZ_SDL_REC_MP4 &&
        sim_outfile_find_program("ffmpeg", "FASIM_FFMPEG", ffmpeg, sizeof ffmpeg) != 0) {
        ERR("--record %s: an MP4 is made by ffmpeg, which is not installed (Debian: "
            "apt-get install ffmpeg); or record a .gif, or PNG frames into a folder", p);
        return VIZ_EFAIL;
    }
    return 0;
}

/* ---- the GIF's palette ---------------------------------------------------------- */

#ifdef FASIM_HAVE_GIF
/* Index 255 is left out of every colour: it marks the pixels a frame leaves
 * as the frame before (transparent). */
#define GIF_CLEAR 255
/* Slots of the exact colours' hash: twice the colours, so that a probe ends
 * at an empty slot. */
#define GIF_SLOTS 512

typedef struct {
    GifColorType col[256];
    int ncol;                   /* colours 0 .. ncol - 1 */
    uint32_t exact[GIF_SLOTS];  /* open addressing: 0xRRGGBB + 1, 0 empty */
    uint8_t exact_idx[GIF_SLOTS];
    uint8_t *near;              /* 2^18: 6 bits a channel -> index, 255 unknown */
} gif_palette;

static unsigned hash_rgb(uint32_t rgb)
{
    return (unsigned)((rgb * 2654435761u) >> 23);    /* 9 bits: GIF_SLOTS */
}

static int palette_find(const gif_palette *p, uint32_t rgb)
{
    for (unsigned h = hash_rgb(rgb);; h = (h + 1) & (GIF_SLOTS - 1)) {
        if (p->exact[h] == 0)
            return -1;
        if (p->exact[h] == rgb + 1)
            return p->exact_idx[h];
    }
}

static void palette_add(gif_palette *p, uint32_t rgb)
{
    if (p->ncol >= GIF_CLEAR || palette_find(p, rgb) >= 0)
        return;
    unsigned h = hash_rgb(rgb);
    while (p->exact[h])
        h = (h + 1) & (GIF_SLOTS - 1);
    p->exact[h] = rgb + 1;
    p->exact_idx[h] = (uint8_t)p->ncol;
    p->col[p->ncol++] = (GifColorType){ (uint8_t)(rgb >> 16), (uint8_t)(rgb >> 8),
                                        (uint8_t)rgb };
}

/* The theme's colours first (drawn exactly), then a 6 x 6 x 6 cube, then
 * greys for anti-aliased text up to index 254. Fixed for a theme: no frame
 * changes it. NULL when out of memory. */
static gif_palette *palette_make(viz_sdl_theme theme)
{
    gif_palette *p = calloc(1, sizeof *p);
    if (!p || !(p->near = malloc((size_t)1 << 18))) {
        free(p);
        return NULL;
    }
    memset(p->near, GIF_CLEAR, (size_t)1 << 18);
    const viz_sdl_palette *pal = viz_sdl_palette_of(theme);
    const uint32_t *c = (const uint32_t *)pal;
    for (size_t k = 0; k < sizeof *pal / sizeof *c; k++)
        palette_add(p, c[k]);
    for (int r = 0; r < 6; r++)
        for (int g = 0; g < 6; g++)
            for (int b = 0; b < 6; b++)
                palette_add(p, (uint32_t)(r * 51) << 16 | (uint32_t)(g * 51) << 8 |
                                   (uint32_t)(b * 51));
    const int left = GIF_CLEAR - p->ncol;
    for (int k = 1; k <= left; k++) {
        uint32_t v = (uint32_t)(255 * k / (left + 1));
        palette_add(p, v << 16 | v << 8 | v);
    }
    for (int k = p->ncol; k < 256; k++)
        p->col[k] = p->col[0];
    return p;
}

static void palette_free(gif_palette *p)
{
    if (p) {
        free(p->near);
        free(p);
    }
}

/* The palette index of a pixel: its own colour when the palette has it, else
 * the nearest colour (squared distance) to the centre of its 6-bit cell,
 * found once per cell. */
static uint8_t palette_index(gif_palette *p, uint8_t r, uint8_t g, uint8_t b)
{
    const uint32_t rgb = (uint32_t)r << 16 | (uint32_t)g << 8 | b;
    int k = palette_find(p, rgb);
    if (k >= 0)
        return (uint8_t)k;
    const size_t cell = (size_t)(r >> 2) << 12 | (size_t)(g >> 2) << 6 | (size_t)(b >> 2);
    if (p->near[cell] == GIF_CLEAR) {
        const int cr = (r & ~3) + 2, cg = (g & ~3) + 2, cb = (b & ~3) + 2;
        int best = 0;
        long bd = -1;
        for (int i = 0; i < p->ncol; i++) {
            long dr = cr - p->col[i].Red, dg = cg - p->col[i].Green, db = cb - p->col[i].Blue;
            long d = dr * dr + dg * dg + db * db;
            if (bd < 0 || d < bd) {
                bd = d;
                best = i;
            }
        }
        p->near[cell] = (uint8_t)best;
    }
    return p->near[cell];
}

/* ---- the GIF ---------------------------------------------------------------------- */

typedef struct {
    sim_outfile out;
    GifFileType *gif;
    gif_palette *pal;
    uint8_t *cur, *prev;        /* palette indices of this frame and the last */
    uint8_t *line;
    int w, h, delay;            /* delay: hundredths of a second */
    uint64_t nframes;
} gif_writer;

static int gif_out(GifFileType *g, const GifByteType *buf, int n)
{
    FILE *f = g->UserData;
    return (int)fwrite(buf, 1, (size_t)n, f);
}

static void gif_close(gif_writer *gw)
{
    int e;
    if (gw->gif)
        EGifCloseFile(gw->gif, &e);
    gw->gif = NULL;
    palette_free(gw->pal);
    free(gw->cur);
    free(gw->prev);
    free(gw->line);
}

static int gif_open(gif_writer *gw, const char *path, int w, int h, int fps,
                    viz_sdl_theme theme, char *err, size_t errlen)
{
    memset(gw, 0, sizeof *gw);
    gw->w = w;
    gw->h = h;
    gw->delay = (100 + fps / 2) / fps;
    const size_t px = (size_t)w * (size_t)h;
    gw->pal = palette_make(theme);
    gw->cur = malloc(px);
    gw->prev = malloc(px);
    gw->line = malloc((size_t)w);
    if (!gw->pal || !gw->cur || !gw->prev || !gw->line) {
        gif_close(gw);
        ERR("--record: out of memory");
        return VIZ_EFAIL;
    }
    int e = sim_outfile_open(&gw->out, path);
    if (e) {
        gif_close(gw);
        ERR("cannot write '%s': %s", path, strerror(e));
        return VIZ_EFAIL;
    }
    int gerr = 0;
    gw->gif = EGifOpen(gw->out.f, gif_out, &gerr);
    ColorMapObject *map = gw->gif ? GifMakeMapObject(256, gw->pal->col) : NULL;
    static const GifByteType loop[3] = { 1, 0, 0 };    /* NETSCAPE2.0: loop forever */
    int ok = map != NULL;
    if (ok) {
        EGifSetGifVersion(gw->gif, true);
        ok = EGifPutScreenDesc(gw->gif, w, h, 8, 0, map) == GIF_OK &&
             EGifPutExtensionLeader(gw->gif, APPLICATION_EXT_FUNC_CODE) == GIF_OK &&
             EGifPutExtensionBlock(gw->gif, 11, "NETSCAPE2.0") == GIF_OK &&
             EGifPutExtensionBlock(gw->gif, 3, loop) == GIF_OK &&
             EGifPutExtensionTrailer(gw->gif) == GIF_OK;
    }
    GifFreeMapObject(map);
    if (!ok) {
        ERR("cannot write '%s': %s", path,
            GifErrorString(gw->gif ? gw->gif->Error : gerr));
        gif_close(gw);
        sim_outfile_abort(&gw->out);
        return VIZ_EFAIL;
    }
    return 0;
}

/* One frame: the first whole, the others as the rectangle that changed,
 * the pixels in it that did not change transparent. */
static int gif_frame(gif_writer *gw, const uint8_t *rgb, char *err, size_t errlen)
{
    const int w = gw->w, h = gw->h;
    for (size_t k = 0, n = (size_t)w * (size_t)h; k < n; k++)
        gw->cur[k] = palette_index(gw->pal, rgb[3 * k], rgb[3 * k + 1], rgb[3 * k + 2]);
    int x0 = 0, y0 = 0, x1 = w - 1, y1 = h - 1;     /* inclusive */
    const int first = gw->nframes == 0;
    if (!first) {
        x0 = w;
        y0 = h;
        x1 = -1;
        y1 = -1;
        for (int y = 0; y < h; y++) {
            const uint8_t *a = gw->cur + (size_t)y * (size_t)w, *b = gw->prev + (size_t)y * (size_t)w;
            if (memcmp(a, b, (size_t)w) == 0)
                continue;
            y0 = y < y0 ? y : y0;
            y1 = y;
            for (int x = 0; x < w; x++)
                if (a[x] != b[x]) {
                    x0 = x < x0 ? x : x0;
                    x1 = x > x1 ? x : x1;
                }
        }
        if (x1 < 0)                 /* nothing changed: one transparent pixel */
            x0 = x1 = y0 = y1 = 0;
    }
    GraphicsControlBlock gcb = { .DisposalMode = DISPOSE_DO_NOT, .UserInputFlag = false,
                                 .DelayTime = gw->delay,
                                 .TransparentColor = first ? NO_TRANSPARENT_COLOR : GIF_CLEAR };
    GifByteType ext[4];
    size_t len = EGifGCBToExtension(&gcb, ext);
    const int fw = x1 - x0 + 1, fh = y1 - y0 + 1;
    int ok = EGifPutExtension(gw->gif, GRAPHICS_EXT_FUNC_CODE, (int)len, ext) == GIF_OK &&
             EGifPutImageDesc(gw->gif, x0, y0, fw, fh, false, NULL) == GIF_OK;
    for (int y = y0; ok && y <= y1; y++) {
        const uint8_t *a = gw->cur + (size_t)y * (size_t)w + x0;
        const uint8_t *b = gw->prev + (size_t)y * (size_t)w + x0;
        for (int x = 0; x < fw; x++)
            gw->line[x] = !first && a[x] == b[x] ? GIF_CLEAR : a[x];
        ok = EGifPutLine(gw->gif, gw->line, fw) == GIF_OK;
    }
    if (!ok) {
        ERR("cannot write '%s': %s", gw->out.path, GifErrorString(gw->gif->Error));
        return VIZ_EFAIL;
    }
    uint8_t *t = gw->prev;
    gw->prev = gw->cur;
    gw->cur = t;
    gw->nframes++;
    return 0;
}

/* Finish (ok) or give up: the file is whole or not there. */
static int gif_finish(gif_writer *gw, int ok, const char *path, char *err, size_t errlen)
{
    int gerr = 0;
    if (EGifCloseFile(gw->gif, &gerr) != GIF_OK && ok) {
        ERR("cannot write '%s': %s", path, GifErrorString(gerr));
        ok = 0;
    }
    gw->gif = NULL;
    gif_close(gw);
    if (!ok) {
        sim_outfile_abort(&gw->out);
        return VIZ_EFAIL;
    }
    int e = sim_outfile_commit(&gw->out);
    if (e) {
        ERR("cannot write '%s': %s", path, strerror(e));
        return VIZ_EFAIL;
    }
    return 0;
}
#endif /* FASIM_HAVE_GIF */

/* ---- the MP4: frames piped to ffmpeg ----------------------------------------------- */

typedef struct {
    sim_outfile out;            /* ffmpeg writes the temporary */
    FILE *pipe;
    pid_t pid;
    struct sigaction old_pipe;  /* SIGPIPE's action, restored at the end */
} mp4_writer;

static int mp4_open(mp4_writer *mw, const char *path, int w, int h, int fps, char *err,
                    size_t errlen)
{
    memset(mw, 0, sizeof *mw);
    char ffmpeg[SIM_OUTFILE_PATH];
    if (sim_outfile_find_program("ffmpeg", "FASIM_FFMPEG", ffmpeg, sizeof ffmpeg) != 0) {
        ERR("--record %s: ffmpeg is not installed", path);
        return VIZ_EFAIL;
    }
    int e = sim_outfile_open(&mw->out, path);
    if (e) {
        ERR("cannot write '%s': %s", path, strerror(e));
        return VIZ_EFAIL;
    }
    char size[32], rate[16];
    snprintf(size, sizeof size, "%dx%d", w, h);
    snprintf(rate, sizeof rate, "%d", fps);
    /* The temporary has no .mp4 to go by: the format is named. yuv420p, which
     * players expect, needs even sides: an odd one is padded by a pixel. */
    const char *dest = mw->out.tmp[0] ? mw->out.tmp : mw->out.path;
    int fd[2];
    if (pipe(fd) != 0) {
        ERR("--record: cannot start ffmpeg: %s", strerror(errno));
        sim_outfile_abort(&mw->out);
        return VIZ_EFAIL;
    }
    fflush(stdout);
    fflush(stderr);
    mw->pid = fork();
    if (mw->pid == 0) {
        dup2(fd[0], STDIN_FILENO);
        close(fd[0]);
        close(fd[1]);
        execl(ffmpeg, "ffmpeg", "-nostdin", "-hide_banner", "-loglevel", "error", "-y", "-f",
              "rawvideo", "-pixel_format", "rgb24", "-video_size", size, "-framerate", rate,
              "-i", "pipe:0", "-vf", "pad=ceil(iw/2)*2:ceil(ih/2)*2", "-pix_fmt", "yuv420p",
              "-f", "mp4", dest, (char *)NULL);
        _exit(127);
    }
    close(fd[0]);
    if (mw->pid < 0) {
        close(fd[1]);
        ERR("--record: cannot start ffmpeg: %s", strerror(errno));
        sim_outfile_abort(&mw->out);
        return VIZ_EFAIL;
    }
    sim_outfile_guard_child(mw->pid);
    /* ffmpeg ending early shows as a write error here, not as SIGPIPE. */
    struct sigaction ign;
    memset(&ign, 0, sizeof ign);
    ign.sa_handler = SIG_IGN;
    sigemptyset(&ign.sa_mask);
    sigaction(SIGPIPE, &ign, &mw->old_pipe);
    mw->pipe = fdopen(fd[1], "wb");
    if (!mw->pipe)
        close(fd[1]);
    return 0;
}

static int mp4_finish(mp4_writer *mw, int ok, const char *path, char *err, size_t errlen)
{
    if (mw->pipe && fclose(mw->pipe) != 0 && ok) {
        ERR("cannot write '%s': ffmpeg stopped reading the frames", path);
        ok = 0;
    }
    int st = 0;
    while (waitpid(mw->pid, &st, 0) < 0 && errno == EINTR)
        ;
    sim_outfile_guard_child(0);
    sigaction(SIGPIPE, &mw->old_pipe, NULL);
    if (ok && !(WIFEXITED(st) && WEXITSTATUS(st) == 0)) {
        ERR("cannot write '%s': ffmpeg failed (status %d)", path,
            WIFEXITED(st) ? WEXITSTATUS(st) : -1);
        ok = 0;
    }
    if (!ok) {
        sim_outfile_abort(&mw->out);
        return VIZ_EFAIL;
    }
    int e = sim_outfile_commit(&mw->out);
    if (e) {
        ERR("cannot write '%s': %s", path, strerror(e));
        return VIZ_EFAIL;
    }
    return 0;
}

/* ---- SVG frames ---------------------------------------------------------------------- */

/* m's current step as one SVG file, whole or not at all. */
static int svg_write(viz_sdl_offscreen *f, const viz_model *m, const char *path, char *err,
                     size_t errlen)
{
    sim_outfile out;
    int e = sim_outfile_open(&out, path);
    if (!e) {
        viz_sdl_offscreen_svg(f, m, out.f);
        if (ferror(out.f)) {
            e = EIO;
            sim_outfile_abort(&out);
        } else {
            e = sim_outfile_commit(&out);
        }
    }
    if (e) {
        ERR("cannot write '%s': %s", path, strerror(e));
        return VIZ_EFAIL;
    }
    return 0;
}

/* ---- the recording ----------------------------------------------------------------- */

static int digits(uint64_t v)
{
    int n = 1;
    while (v >= 10) {
        v /= 10;
        n++;
    }
    return n;
}

/* 1,234,567 */
static const char *grouped(char *buf, size_t len, uint64_t v)
{
    char raw[32];
    int n = snprintf(raw, sizeof raw, "%llu", (unsigned long long)v), o = 0;
    for (int k = 0; k < n && (size_t)o + 2 < len; k++) {
        if (k > 0 && (n - k) % 3 == 0)
            buf[o++] = ',';
        buf[o++] = raw[k];
    }
    buf[o] = '\0';
    return buf;
}

/* The range and the limits, before anything is drawn. */
static int record_range(const viz_model *m, const viz_sdl_rec *r, int w, int h,
                        uint64_t *count, char *err, size_t errlen)
{
    const viz_info *in = viz_model_info(m);
    if (in->nsteps == 0) {
        ERR("--record: the plan was refused, so the run has no steps to record");
        return VIZ_EUSAGE;
    }
    if (r->first >= in->nsteps) {
        ERR("--record: --step %llu: the run has steps 1..%llu",
            (unsigned long long)r->first + 1, (unsigned long long)in->nsteps);
        return VIZ_EUSAGE;
    }
    const uint64_t left = in->nsteps - r->first;
    *count = r->count && r->count < left ? r->count : left;
    char a[32], b[32], c[32];
    if (*count > VIZ_SDL_REC_MAX_FRAMES) {
        ERR("--record: %s frames (steps %llu..%llu), more than the limit of %s; record "
            "fewer steps: --step K --frames F (e.g. --frames %d)", grouped(a, sizeof a, *count),
            (unsigned long long)r->first + 1, (unsigned long long)(r->first + *count),
            grouped(b, sizeof b, VIZ_SDL_REC_MAX_FRAMES), VIZ_SDL_REC_MAX_FRAMES);
        return VIZ_EUSAGE;
    }
    const uint64_t frame = (uint64_t)w * (uint64_t)h * 3;
    if (*count * frame > VIZ_SDL_REC_MAX_BYTES) {
        ERR("--record: %s frames of %d x %d are %s bytes of pixels (3 a pixel), more "
            "than the limit of %s (4 GiB); record fewer steps (--step K --frames %llu "
            "at this size) or a smaller --size",
            grouped(a, sizeof a, *count), w, h, grouped(b, sizeof b, *count * frame),
            grouped(c, sizeof c, VIZ_SDL_REC_MAX_BYTES),
            (unsigned long long)(VIZ_SDL_REC_MAX_BYTES / frame));
        return VIZ_EUSAGE;
    }
    return 0;
}

int viz_sdl_record(viz_model *m, const viz_sdl_opts *o, const viz_sdl_rec *r, char *err,
                   size_t errlen)
{
    viz_sdl_rec_kind kind;
    int rc = viz_sdl_record_check(r, &kind, err, errlen);
    if (rc != 0)
        return rc;
    const int w = r->width ? r->width : VIZ_SDL_DEFAULT_W;
    const int h = r->height ? r->height : VIZ_SDL_DEFAULT_H;
    const int fps = r->fps > 0 ? r->fps : 4;
    uint64_t count;
    if ((rc = viz_sdl_check_size(w, h, "--record", err, errlen)) != 0 ||
        (rc = record_range(m, r, w, h, &count, err, errlen)) != 0)
        return rc;
    const char *path = r->path;
    char dir[SIM_OUTFILE_PATH];
    size_t n = strlen(path);
    if (kind == VIZ_SDL_REC_PNG || kind == VIZ_SDL_REC_SVG) {
        snprintf(dir, sizeof dir, "%.*s", (int)(path[n - 1] == '/' ? n - 1 : n), path);
        if (!is_dir(dir) && mkdir(dir, 0777) != 0) {
            ERR("--record %s: cannot make the folder: %s", path, strerror(errno));
            return VIZ_EFAIL;
        }
    }
    viz_model_seek(m, r->first);
    viz_sdl_offscreen f;
    char ferr[512];
    if (viz_sdl_offscreen_open(&f, m, o, w, h, ferr, sizeof ferr) != 0) {
        ERR("--record: %s", ferr);
        return VIZ_EFAIL;
    }
#ifdef FASIM_HAVE_GIF
    gif_writer gw;
#endif
    mp4_writer mw;
    rc = 0;
    if (kind == VIZ_SDL_REC_GIF) {
#ifdef FASIM_HAVE_GIF
        rc = gif_open(&gw, path, w, h, fps, o ? o->theme : VIZ_SDL_THEME_LIGHT, err, errlen);
#endif
    } else if (kind == VIZ_SDL_REC_MP4) {
        rc = mp4_open(&mw, path, w, h, fps, err, errlen);
    }
    if (rc != 0) {
        viz_sdl_offscreen_close(&f);
        return rc;
    }
    const int nd = digits(viz_model_info(m)->nsteps);
    for (uint64_t k = 0; k < count && rc == 0; k++) {
        viz_model_seek(m, r->first + k);
        const uint8_t *rgb = kind == VIZ_SDL_REC_SVG ? NULL : viz_sdl_offscreen_draw(&f, m);
        if (kind == VIZ_SDL_REC_GIF) {
#ifdef FASIM_HAVE_GIF
            rc = gif_frame(&gw, rgb, err, errlen);
#endif
        } else if (kind == VIZ_SDL_REC_MP4) {
            if (!mw.pipe || fwrite(rgb, 3, (size_t)w * (size_t)h, mw.pipe) !=
                                (size_t)w * (size_t)h) {
                ERR("cannot write '%s': ffmpeg stopped reading the frames", path);
                rc = VIZ_EFAIL;
            }
        } else {
            char name[SIM_OUTFILE_PATH + 64];
            snprintf(name, sizeof name, "%s/step-%0*llu.%s", dir, nd,
                     (unsigned long long)(r->first + k + 1),
                     kind == VIZ_SDL_REC_SVG ? "svg" : "png");
            rc = kind == VIZ_SDL_REC_SVG
                     ? svg_write(&f, m, name, err, errlen)
                     : viz_sdl_png_write(name, rgb, w, h, (size_t)w * 3,
                                         VIZ_SDL_PNG_COMPRESSED, err, errlen) != 0
                           ? VIZ_EFAIL
                           : 0;
        }
    }
    if (kind == VIZ_SDL_REC_GIF) {
#ifdef FASIM_HAVE_GIF
        int frc = gif_finish(&gw, rc == 0, path, err, errlen);
        rc = rc ? rc : frc;
#endif
    } else if (kind == VIZ_SDL_REC_MP4) {
        int frc = mp4_finish(&mw, rc == 0, path, err, errlen);
        rc = rc ? rc : frc;
    }
    viz_sdl_offscreen_close(&f);
    return rc;
}
