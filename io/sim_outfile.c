/*
 * sim_outfile.c — files written whole or not at all (see sim_outfile.h).
 */
#define _POSIX_C_SOURCE 200809L
#define _DEFAULT_SOURCE            /* realpath, fchmod under -std=c11 */

#include "sim_outfile.h"

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

/* ---- temporaries removed when a signal ends the process ------------------------ */

/* A process writes one or two files at a time (--plot: the data and the
 * script), or renders one picture in a folder of its own (the picture, a
 * link and the folder); six slots leave room. A slot is in use while its first byte is
 * not 0; the handler reads only that, and unlink() is async-signal-safe. */
#define LIVE_SLOTS 6
static char live[LIVE_SLOTS][SIM_OUTFILE_PATH];

/* The signals whose default action ends the process. */
static const int ENDING[] = { SIGHUP, SIGINT, SIGQUIT, SIGTERM, SIGPIPE, SIGALRM,
                              SIGUSR1, SIGUSR2, SIGXCPU, SIGXFSZ, SIGVTALRM, SIGPROF };

/* A child writing into a guarded folder (gnuplot drawing), or 0. */
static volatile sig_atomic_t g_child;

static void on_ending_signal(int sig)
{
    /* The child first, so that it writes nothing after the files go. */
    const pid_t child = (pid_t)g_child;
    if (child > 0) {
        kill(child, SIGTERM);
        waitpid(child, NULL, 0);
    }
    for (int k = 0; k < LIVE_SLOTS; k++)       /* files first, then folders */
        if (live[k][0])
            unlink(live[k]);
    for (int k = 0; k < LIVE_SLOTS; k++)
        if (live[k][0])
            rmdir(live[k]);
    /* Then end as the signal would have: default action, raised again (it
     * is blocked while this handler runs and delivered when it returns). */
    signal(sig, SIG_DFL);
    raise(sig);
}

/* Install the handler for each ending signal still at its default action
 * (a view's curses handlers, or a caller's own, are left alone). */
static void guard_signals(void)
{
    static int done;
    if (done)
        return;
    done = 1;
    for (size_t k = 0; k < sizeof ENDING / sizeof ENDING[0]; k++) {
        struct sigaction old;
        if (sigaction(ENDING[k], NULL, &old) != 0 || old.sa_handler != SIG_DFL)
            continue;
        struct sigaction sa;
        memset(&sa, 0, sizeof sa);
        sa.sa_handler = on_ending_signal;
        sigemptyset(&sa.sa_mask);
        sigaction(ENDING[k], &sa, NULL);
    }
}

/* Hold the ending signals back (the old mask into *old). */
static void hold_signals(sigset_t *old)
{
    sigset_t ending;
    sigemptyset(&ending);
    for (size_t k = 0; k < sizeof ENDING / sizeof ENDING[0]; k++)
        sigaddset(&ending, ENDING[k]);
    sigprocmask(SIG_BLOCK, &ending, old);
}

static int live_add(const char *tmp)
{
    for (int k = 0; k < LIVE_SLOTS; k++)
        if (!live[k][0]) {
            /* The name before the flag byte, so the handler never sees half a path. */
            memcpy(live[k] + 1, tmp + 1, strlen(tmp));
            live[k][0] = tmp[0];
            return 0;
        }
    return -1;
}

static void live_remove(const char *tmp)
{
    for (int k = 0; k < LIVE_SLOTS; k++)
        if (live[k][0] && !strcmp(live[k], tmp))
            live[k][0] = '\0';
}

/* ---- the destination ------------------------------------------------------------ */

/* The folder of path, into dir. */
static int folder_of(const char *path, char *dir, size_t len)
{
    if (strlen(path) >= len)
        return ENAMETOOLONG;
    char copy[SIM_OUTFILE_PATH];
    strcpy(copy, path);
    const char *d = dirname(copy);
    if (strlen(d) >= len)
        return ENAMETOOLONG;
    strcpy(dir, d);
    return 0;
}

int sim_outfile_check(const char *path)
{
    struct stat st;
    if (!path || !*path)
        return ENOENT;
    if (stat(path, &st) == 0) {
        if (S_ISDIR(st.st_mode))
            return EISDIR;
        return access(path, W_OK) == 0 ? 0 : errno;
    }
    if (errno != ENOENT)
        return errno;
    char dir[SIM_OUTFILE_PATH];
    int e = folder_of(path, dir, sizeof dir);
    if (e)
        return e;
    if (stat(dir, &st) != 0)
        return errno;
    if (!S_ISDIR(st.st_mode))
        return ENOTDIR;
    return access(dir, W_OK | X_OK) == 0 ? 0 : errno;
}

/* Write path itself: a device or a FIFO, which a rename cannot replace. */
static int open_direct(sim_outfile *o, const char *path)
{
    o->f = fopen(path, "wb");
    if (!o->f)
        return errno;
    strcpy(o->path, path);
    o->tmp[0] = '\0';
    return 0;
}

int sim_outfile_open(sim_outfile *o, const char *path)
{
    memset(o, 0, sizeof *o);
    int e = sim_outfile_check(path);
    if (e)
        return e;
    if (strlen(path) >= sizeof o->path)
        return ENAMETOOLONG;
    struct stat st;
    int exists = stat(path, &st) == 0;
    if (exists && !S_ISREG(st.st_mode))
        return open_direct(o, path);
    /* A link is replaced at its target, as writing through it would. */
    struct stat lst;
    if (lstat(path, &lst) == 0 && S_ISLNK(lst.st_mode)) {
        char *real = realpath(path, NULL);
        if (!real)
            return errno;
        int fits = strlen(real) < sizeof o->path;
        if (fits)
            strcpy(o->path, real);
        free(real);
        if (!fits)
            return ENAMETOOLONG;
    } else {
        strcpy(o->path, path);
    }
    /* ".NAME.XXXXXX" beside it: hidden, and named after what it will become
     * (the name cut to 200 bytes so the temporary's stays under NAME_MAX). */
    char dir[SIM_OUTFILE_PATH];
    if ((e = folder_of(o->path, dir, sizeof dir)) != 0)
        return e;
    const char *slash = strrchr(o->path, '/');
    const char *base = slash ? slash + 1 : o->path;
    int n = snprintf(o->tmp, sizeof o->tmp, "%s/.%.200s.XXXXXX", dir, base);
    if (n < 0 || (size_t)n >= sizeof o->tmp)
        return ENAMETOOLONG;
    guard_signals();
    /* Created and registered with the ending signals held back, so that no
     * signal finds it existing and unregistered. */
    sigset_t old;
    hold_signals(&old);
    int fd = mkstemp(o->tmp);
    e = fd < 0 ? errno : live_add(o->tmp) != 0 ? EMFILE : 0;
    if (fd >= 0 && e) {
        close(fd);
        unlink(o->tmp);
    }
    sigprocmask(SIG_SETMASK, &old, NULL);
    if (e)
        return e;
    /* The mode a plain fopen would give: the old file's, or 0666 less umask. */
    mode_t mode;
    if (exists) {
        mode = st.st_mode & 07777;
    } else {
        mode_t mask = umask(0);
        umask(mask);
        mode = 0666 & ~mask;
    }
    if (fchmod(fd, mode) != 0 || !(o->f = fdopen(fd, "wb"))) {
        e = errno;
        close(fd);
        unlink(o->tmp);
        live_remove(o->tmp);
        return e;
    }
    return 0;
}

int sim_outfile_commit(sim_outfile *o)
{
    int e = 0;
    if (fflush(o->f) != 0 || ferror(o->f))
        e = errno ? errno : EIO;
    if (!e && o->tmp[0] && fsync(fileno(o->f)) != 0)
        e = errno;
    if (fclose(o->f) != 0 && !e)
        e = errno;
    o->f = NULL;
    if (!o->tmp[0])
        return e;
    if (!e && rename(o->tmp, o->path) != 0)
        e = errno;
    if (e)
        unlink(o->tmp);
    live_remove(o->tmp);
    return e;
}

void sim_outfile_abort(sim_outfile *o)
{
    if (o->f)
        fclose(o->f);
    o->f = NULL;
    if (o->tmp[0]) {
        unlink(o->tmp);
        live_remove(o->tmp);
    }
}

int sim_outfile_mkdtemp(char *tmpl)
{
    /* Held back while it is made and registered, as a temporary file is. */
    guard_signals();
    sigset_t old;
    hold_signals(&old);
    int e = mkdtemp(tmpl) ? (live_add(tmpl) != 0 ? EMFILE : 0) : errno;
    if (e == EMFILE)
        rmdir(tmpl);
    sigprocmask(SIG_SETMASK, &old, NULL);
    return e;
}

int sim_outfile_guard(const char *path)
{
    if (strlen(path) >= SIM_OUTFILE_PATH)
        return ENAMETOOLONG;
    guard_signals();
    return live_add(path) == 0 ? 0 : EMFILE;
}

void sim_outfile_unguard(const char *path)
{
    live_remove(path);
}

void sim_outfile_guard_child(long pid)
{
    guard_signals();
    g_child = (sig_atomic_t)pid;
}

int sim_outfile_find_program(const char *name, const char *env, char *path, size_t len)
{
    const char *set = getenv(env);
    if (set) {
        if (!*set || access(set, X_OK) != 0 || strlen(set) >= len)
            return -1;
        snprintf(path, len, "%s", set);
        return 0;
    }
    const char *p = getenv("PATH");
    if (!p)
        p = "/usr/bin:/bin";
    const size_t nl = strlen(name);
    while (*p) {
        size_t n = strcspn(p, ":");
        if (n > 0 && n + nl + 2 <= len) {
            snprintf(path, len, "%.*s/%s", (int)n, p, name);
            if (access(path, X_OK) == 0)
                return 0;
        }
        p += n;
        if (*p == ':')
            p++;
    }
    return -1;
}
