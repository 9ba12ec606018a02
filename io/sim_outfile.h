/*
 * sim_outfile.h — files written whole or not at all.
 *
 * Every file fasim writes (--out arrays, --plot data and scripts, the SDL
 * view's pictures) goes through here: the bytes go to a temporary file in
 * the destination's folder, which is flushed, synced and renamed over the
 * destination only when complete. A failure (a full disk, a refused run, an
 * error) leaves the destination as it was and no temporary behind; so does a
 * signal that ends the process (SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGPIPE,
 * ...: the temporaries are removed, then the process ends as the signal
 * would). Only SIGKILL, which nothing can catch, can leave a temporary,
 * named ".NAME.XXXXXX" beside the destination.
 *
 * A destination that exists and is not a regular file (a device such as
 * /dev/null or /dev/stdout, a FIFO) cannot be replaced: it is written
 * directly. A symbolic link is followed, so the file it points to is
 * replaced and the link stays. A directory is refused.
 *
 * Functions return 0, or an errno value (positive) that the caller words
 * in its own message; they never print.
 */
#ifndef FASIM_SIM_OUTFILE_H
#define FASIM_SIM_OUTFILE_H

#include <stdio.h>

#define SIM_OUTFILE_PATH 4096    /* PATH_MAX on Linux */

typedef struct {
    FILE *f;                        /* write the contents here */
    char path[SIM_OUTFILE_PATH];    /* the destination (a link's target) */
    char tmp[SIM_OUTFILE_PATH];     /* the temporary, or "" when written directly */
} sim_outfile;

/* Whether path could be written, creating nothing: it is not a directory,
 * and it (if it exists) or its folder (if not) is writable. */
int sim_outfile_check(const char *path);

/* Start writing path: a temporary beside it (or path itself, see above).
 * On failure nothing is created. */
int sim_outfile_open(sim_outfile *o, const char *path);

/* Finish: flush, sync and rename the temporary over the destination. On
 * failure the temporary is removed and the destination left as it was.
 * Either way o->f is closed. */
int sim_outfile_commit(sim_outfile *o);

/* Give up: close and remove the temporary; the destination is untouched. */
void sim_outfile_abort(sim_outfile *o);

/* A new folder from the template tmpl ("...XXXXXX", rewritten in place, as
 * mkdtemp does), guarded as below from the moment it exists. */
int sim_outfile_mkdtemp(char *tmpl);

/* For a temporary that another program writes (gnuplot's picture): remove
 * path if a signal ends the process (a folder is removed once empty), until
 * unguarded. Returns 0, or an errno value when the slots are full. */
int sim_outfile_guard(const char *path);
void sim_outfile_unguard(const char *path);

/* A child process writing into a guarded temporary (gnuplot drawing the
 * picture): a signal that ends this process ends it too, before the
 * temporaries are removed. 0: none. */
void sim_outfile_guard_child(long pid);

/* The program that writes a picture or a film for fasim (gnuplot, ffmpeg):
 * $ENV when set (empty means "not installed"; tests use it), else the first
 * executable NAME on $PATH (/usr/bin:/bin without one). Returns 0 with its
 * path in path, or -1. */
int sim_outfile_find_program(const char *name, const char *env, char *path, size_t len);

#endif /* FASIM_SIM_OUTFILE_H */
