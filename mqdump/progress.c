/*
 * progress.c - a long dump's progress on the terminal (progress.h).
 */
#define _GNU_SOURCE
#include "progress.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

/* Silent for the first second; then refreshed this often. */
enum { QUIET_MS = 1000, EVERY_MS = 250, MAX_AGENTS = 1 << 16 };

struct progress {
    int fd;       /* the terminal */
    pid_t *here;  /* the ranks on this host */
    int nhere;
    pid_t *agents; /* every child seen: an agent mqdump started */
    int nagents;
    int stopped_most; /* the most ranks seen stopped at once */
    int shown;        /* a line is on the terminal */
    struct timespec t0;
    pthread_t thread;
    pthread_mutex_t lock;
    pthread_cond_t wake;
    int stop;
};

static double since(const struct timespec *t0)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)(t.tv_sec - t0->tv_sec) + (double)(t.tv_nsec - t0->tv_nsec) / 1e9;
}

/* Is host h this one (as far as its name says: the library decides)? */
static int is_here(const char *h, const char *me)
{
    if (!h || strcasecmp(h, "localhost") == 0)
        return 1;
    size_t lh = strcspn(h, "."), lm = strcspn(me, ".");
    return lh == lm && lh > 0 && strncasecmp(h, me, lh) == 0;
}

/* Is pid stopped by this mqdump (ptrace: the thread that attached it is
 * the main one, whose id is the process's)? */
static int stopped_by_us(pid_t pid)
{
    char path[64], buf[2048];
    snprintf(path, sizeof path, "/proc/%d/status", (int)pid);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return 0;
    ssize_t n = read(fd, buf, sizeof buf - 1);
    close(fd);
    if (n <= 0)
        return 0;
    buf[n] = '\0';
    const char *t = strstr(buf, "\nTracerPid:");
    return t && strtol(t + 11, NULL, 10) == (long)getpid();
}

/* The children of every thread of this process into kids (at most max):
 * how many. */
static int children(pid_t *kids, int max)
{
    DIR *dir = opendir("/proc/self/task");
    if (!dir)
        return 0;
    int n = 0;
    struct dirent *e;
    while ((e = readdir(dir)) && n < max) {
        if (e->d_name[0] == '.')
            continue;
        char path[300];
        snprintf(path, sizeof path, "/proc/self/task/%s/children", e->d_name);
        FILE *f = fopen(path, "re");
        if (!f)
            continue;
        long k;
        while (n < max && fscanf(f, "%ld", &k) == 1)
            kids[n++] = (pid_t)k;
        fclose(f);
    }
    closedir(dir);
    return n;
}

static int listed(const pid_t *v, int n, pid_t pid)
{
    for (int i = 0; i < n; i++)
        if (v[i] == pid)
            return 1;
    return 0;
}

/* The line as it stands now, into line[len]. */
static void describe(struct progress *p, char *line, size_t len)
{
    int stopped = 0;
    for (int i = 0; i < p->nhere; i++)
        stopped += stopped_by_us(p->here[i]);
    if (stopped > p->stopped_most)
        p->stopped_most = stopped;
    size_t at = (size_t)snprintf(line, len, "mqdump: %.0f s:", since(&p->t0));
    if (p->nhere && at < len)
        at += (size_t)(stopped || !p->stopped_most
                           ? snprintf(line + at, len - at, " %d of %d ranks here stopped",
                                      stopped, p->nhere)
                           : snprintf(line + at, len - at, " ranks here read and let go"));
    pid_t kids[4096];
    int nkids = children(kids, 4096), running = 0;
    for (int i = 0; i < nkids; i++) {
        running++;
        if (!listed(p->agents, p->nagents, kids[i]) && p->nagents < MAX_AGENTS)
            p->agents[p->nagents++] = kids[i];
    }
    if (p->nagents && at < len)
        snprintf(line + at, len - at, "%s agents of other hosts: %d of %d answered",
                 p->nhere ? ";" : "", p->nagents - running, p->nagents);
}

static void show(struct progress *p)
{
    char line[200], out[224];
    describe(p, line, sizeof line);
    /* At the line's start, the rest of the line erased after it. */
    int n = snprintf(out, sizeof out, "\r%s\033[K", line);
    if (n > 0 && write(p->fd, out, (size_t)n) == n)
        p->shown = 1;
}

/* Sleep until `seconds` after t0, or a stop: 1 if stopped. */
static int wait_until(struct progress *p, double seconds)
{
    struct timespec until = p->t0;
    long ns = (long)((seconds - (long)seconds) * 1e9);
    until.tv_sec += (time_t)seconds + (until.tv_nsec + ns) / 1000000000L;
    until.tv_nsec = (until.tv_nsec + ns) % 1000000000L;
    pthread_mutex_lock(&p->lock);
    while (!p->stop &&
           pthread_cond_timedwait(&p->wake, &p->lock, &until) != ETIMEDOUT)
        ;
    int stop = p->stop;
    pthread_mutex_unlock(&p->lock);
    return stop;
}

static void *watch(void *arg)
{
    struct progress *p = arg;
    for (double t = QUIET_MS / 1000.0; !wait_until(p, t); t += EVERY_MS / 1000.0)
        show(p);
    return NULL;
}

struct progress *progress_start(const pid_t *pids, const char *const *hosts, int n)
{
    if (!isatty(2))
        return NULL;
    struct progress *p = calloc(1, sizeof *p);
    if (!p)
        return NULL;
    p->fd = fcntl(2, F_DUPFD_CLOEXEC, 3);
    p->here = malloc((size_t)(n > 0 ? n : 1) * sizeof *p->here);
    p->agents = malloc(MAX_AGENTS * sizeof *p->agents);
    char me[256] = "";
    gethostname(me, sizeof me - 1);
    for (int i = 0; p->here && i < n; i++)
        if (is_here(hosts ? hosts[i] : NULL, me))
            p->here[p->nhere++] = pids[i];
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    clock_gettime(CLOCK_MONOTONIC, &p->t0);
    int ok = p->fd >= 0 && p->here && p->agents && pthread_mutex_init(&p->lock, NULL) == 0 &&
             pthread_cond_init(&p->wake, &ca) == 0;
    pthread_condattr_destroy(&ca);
    /* The watcher takes no signal: mqdump's handlers run on the thread
     * that does the dump. */
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    ok = ok && pthread_create(&p->thread, NULL, watch, p) == 0;
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (!ok) {
        if (p->fd >= 0)
            close(p->fd);
        free(p->here);
        free(p->agents);
        free(p);
        return NULL;
    }
    return p;
}

void progress_stop(struct progress *p)
{
    if (!p)
        return;
    pthread_mutex_lock(&p->lock);
    p->stop = 1;
    pthread_cond_signal(&p->wake);
    pthread_mutex_unlock(&p->lock);
    pthread_join(p->thread, NULL);
    if (p->shown && write(p->fd, "\r\033[K", 4) != 4)
        p->shown = 0; /* the terminal is gone: nothing to clear */
    close(p->fd);
    pthread_mutex_destroy(&p->lock);
    pthread_cond_destroy(&p->wake);
    free(p->here);
    free(p->agents);
    free(p);
}
