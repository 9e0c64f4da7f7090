/*
 * meter.c - a long dump's progress on the terminal (meter.h).
 */
#define _GNU_SOURCE
#include "meter.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

/* Silent for the first second; then refreshed this often. */
enum { QUIET_MS = 1000, EVERY_MS = 250 };

struct progress {
    int fd;    /* the terminal */
    int shown; /* a line is on the terminal */
    struct timespec t0;
    pthread_t thread;
    pthread_mutex_t lock; /* guards what follows */
    pthread_cond_t wake;
    int stop;
    int told;               /* the library told a step */
    struct mqdh_progress p; /* the latest counts, fetch_name not kept */
    char fetch[160];        /* the file being fetched (escaped, its base name), or "" */
};

static double since(const struct timespec *t0)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)(t.tv_sec - t0->tv_sec) + (double)(t.tv_nsec - t0->tv_nsec) / 1e9;
}

void progress_note(void *arg, const struct mqdh_progress *p)
{
    struct progress *pr = arg;
    pthread_mutex_lock(&pr->lock);
    pr->told = 1;
    size_t size = p->size < sizeof pr->p ? p->size : sizeof pr->p;
    memset(&pr->p, 0, sizeof pr->p);
    memcpy(&pr->p, p, size);
    pr->p.fetch_name = NULL;
    if (pr->p.fetching <= 0)
        pr->fetch[0] = '\0';
    else if (size >= offsetof(struct mqdh_progress, fetch_name) + sizeof p->fetch_name &&
             p->fetch_name) {
        const char *base = strrchr(p->fetch_name, '/');
        /* A path as the target maps it: any byte, shown escaped. */
        mqdh_escape(pr->fetch, sizeof pr->fetch, base ? base + 1 : p->fetch_name);
    }
    pthread_mutex_unlock(&pr->lock);
}

/* The line as it stands now, into line[len]. */
static void describe(struct progress *pr, char *line, size_t len)
{
    pthread_mutex_lock(&pr->lock);
    const struct mqdh_progress *p = &pr->p;
    size_t at = (size_t)snprintf(line, len, "mqdump: %.0f s:", since(&pr->t0));
    if (!pr->told && at < len)
        at += (size_t)snprintf(line + at, len - at, " starting");
    const char *sep = "";
    if (p->to_stop && at < len) {
        at += (size_t)snprintf(line + at, len - at,
                               " ranks here: %d of %d stopped, %d unwound, %d read, %d let go",
                               p->stopped, p->to_stop, p->unwound, p->read, p->let_go);
        sep = ";";
    }
    if (p->agents && at < len) {
        at += (size_t)snprintf(line + at, len - at, "%s agents of other hosts: %d of %d answered",
                               sep, p->agents_answered, p->agents);
        sep = ";";
    }
    if (p->fetching > 0 && at < len)
        snprintf(line + at, len - at, "%s fetching %s through debuginfod (%d fetched)", sep,
                 pr->fetch[0] ? pr->fetch : "debug information", p->fetched);
    else if (p->fetched && at < len)
        snprintf(line + at, len - at, "%s %d debug file%s fetched", sep, p->fetched,
                 p->fetched == 1 ? "" : "s");
    pthread_mutex_unlock(&pr->lock);
}

static void show(struct progress *pr)
{
    char line[400], out[424];
    describe(pr, line, sizeof line);
    /* Within the terminal's width: a longer line would wrap, and \r would
     * not reach its start.  Cut at a whole character. */
    struct winsize ws;
    if (ioctl(pr->fd, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 1 && strlen(line) >= ws.ws_col) {
        size_t cut = (size_t)ws.ws_col - 1;
        while (cut > 0 && ((unsigned char)line[cut] & 0xC0) == 0x80)
            cut--;
        line[cut] = '\0';
    }
    /* At the line's start, the rest of the line erased after it. */
    int n = snprintf(out, sizeof out, "\r%s\033[K", line);
    if (n > 0 && (size_t)n < sizeof out && write(pr->fd, out, (size_t)n) == n)
        pr->shown = 1;
}

/* Sleep until `seconds` after t0, or a stop: 1 if stopped. */
static int wait_until(struct progress *pr, double seconds)
{
    struct timespec until = pr->t0;
    long ns = (long)((seconds - (long)seconds) * 1e9);
    until.tv_sec += (time_t)seconds + (until.tv_nsec + ns) / 1000000000L;
    until.tv_nsec = (until.tv_nsec + ns) % 1000000000L;
    pthread_mutex_lock(&pr->lock);
    while (!pr->stop && pthread_cond_timedwait(&pr->wake, &pr->lock, &until) != ETIMEDOUT)
        ;
    int stop = pr->stop;
    pthread_mutex_unlock(&pr->lock);
    return stop;
}

static void *watch(void *arg)
{
    struct progress *pr = arg;
    for (double t = QUIET_MS / 1000.0; !wait_until(pr, t); t += EVERY_MS / 1000.0)
        show(pr);
    return NULL;
}

struct progress *progress_start(void)
{
    if (!isatty(2))
        return NULL;
    struct progress *pr = calloc(1, sizeof *pr);
    if (!pr)
        return NULL;
    pr->fd = fcntl(2, F_DUPFD_CLOEXEC, 3);
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    clock_gettime(CLOCK_MONOTONIC, &pr->t0);
    int ok = pr->fd >= 0 && pthread_mutex_init(&pr->lock, NULL) == 0 &&
             pthread_cond_init(&pr->wake, &ca) == 0;
    pthread_condattr_destroy(&ca);
    /* The shower takes no signal: mqdump's handlers run on the thread
     * that does the dump. */
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    ok = ok && pthread_create(&pr->thread, NULL, watch, pr) == 0;
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (!ok) {
        if (pr->fd >= 0)
            close(pr->fd);
        free(pr);
        return NULL;
    }
    return pr;
}

void progress_stop(struct progress *pr)
{
    if (!pr)
        return;
    pthread_mutex_lock(&pr->lock);
    pr->stop = 1;
    pthread_cond_signal(&pr->wake);
    pthread_mutex_unlock(&pr->lock);
    pthread_join(pr->thread, NULL);
    if (pr->shown && write(pr->fd, "\r\033[K", 4) != 4)
        pr->shown = 0; /* the terminal is gone: nothing to clear */
    close(pr->fd);
    pthread_mutex_destroy(&pr->lock);
    pthread_cond_destroy(&pr->wake);
    free(pr);
}
