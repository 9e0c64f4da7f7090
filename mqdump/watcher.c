/*
 * watcher.c - mqdump --sentinel (watcher.h): beside a job that nobody
 * watches, look at it every few seconds until it ends or is hung.
 *
 * A look is a dump: the only way to tell a hung rank from a working one
 * when both burn a core (MPICH, Open MPI and most MPIs spin in their
 * progress loop while they wait) is where the CPU time went, inside the
 * MPI call or outside it, and whether the stacks and queues changed.
 * /proc alone says how much CPU, not where.  So each look stops the ranks
 * as a dump does, with the files they map kept from look to look
 * (mqdh_options.cache): after the first look, a look holds them stopped
 * for the time it takes to read their own state, milliseconds, measured
 * here (the library's progress calls: all stopped, let go) and said.
 * Between looks only /proc/PID/stat is read, to see the job end.  The
 * looks come at random times around the interval (0.5 to 1.5 of it), so
 * that a job that works in a rhythm is not always caught at the same
 * point of it.  What moved between two looks is the library's watch
 * (mqdh_watch_compare); whether the job is hung, its sentinel
 * (mqdh_sentinel_look).
 */
#define _GNU_SOURCE
#include "watcher.h"

#include "agent.h"
#include "common.h"

#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

/* Looks in a row that may fail (the dump made nothing) before the watch
 * gives up; looks of quiet that are a hang at the least (the sentinel's
 * floor, mqdh_sentinel_options.floor). */
enum { FAILED_LOOKS = 3, FLOOR_LOOKS = 6 };

/* How often the job's end is looked for between looks, seconds. */
#define END_CHECK 0.25

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* "mqdump: ..." and a newline to descriptor fd. */
__attribute__((format(printf, 2, 3))) static void say_to(int fd, const char *fmt, ...)
{
    char line[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    dprintf(fd, "mqdump: %s\n", line);
}

/* Is pid there and not a zombie (a launcher its parent has not reaped
 * yet, a batch script waiting on mqdump, is over)? */
static int alive(pid_t pid)
{
    char path[64], buf[512];
    snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
    FILE *f = fopen(path, "r");
    if (!f)
        return 0;
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = '\0';
    const char *close = strrchr(buf, ')');
    return close && close[1] == ' ' && close[2] != 'Z' && close[2] != 'X';
}

/* Is the job still there: its launcher, or (--pid) any of its processes? */
static int job_there(const struct command *c, const pid_t *pids, int n)
{
    if (c->job)
        return alive(c->job);
    for (int i = 0; i < n; i++)
        if (alive(pids[i]))
            return 1;
    return 0;
}

/* Sleep seconds, looking for the job's end every END_CHECK: 1 if it is
 * still there after, 0 as soon as it is not. */
static int wait_watching(const struct command *c, const pid_t *pids, int n, double seconds)
{
    for (double end = now() + seconds;;) {
        if (!job_there(c, pids, n))
            return 0;
        double left = end - now();
        if (left <= 0)
            return 1;
        double step = left < END_CHECK ? left : END_CHECK;
        struct timespec ts = {(time_t)step, (long)((step - (double)(time_t)step) * 1e9)};
        nanosleep(&ts, NULL);
    }
}

/* ---------------------------------------------------------------- finding the job */

int sentinel_job_starting(const struct command *c)
{
    return wait_watching(c, NULL, 0, c->interval);
}

/* The jobs of this user (any user's, as root) into *mine: how many, the
 * first one's launcher in *launcher; -1 if /proc cannot be read. */
static int my_jobs(pid_t *launcher, char *names, size_t len)
{
    struct mqdh_job_info *jobs = NULL;
    int n = 0, mine = 0;
    if (mqdh_list_jobs(&jobs, &n) != MQDH_OK)
        return -1;
    names[0] = '\0';
    for (int i = 0; i < n; i++) {
        if (geteuid() != 0 && jobs[i].uid != geteuid())
            continue;
        if (mine++ == 0)
            *launcher = jobs[i].launcher;
        size_t at = strlen(names);
        snprintf(names + at, len - at, "%s%d", at ? ", " : "", (int)jobs[i].launcher);
    }
    mqdh_jobs_free(jobs, n);
    return mine;
}

int sentinel_find_job(struct command *c)
{
    pid_t parent = getppid();
    int said = 0;
    for (;;) {
        char names[512];
        pid_t launcher = 0;
        int n = my_jobs(&launcher, names, sizeof names);
        if (n < 0) {
            fprintf(stderr, "mqdump: cannot read /proc: %s\n", mqdh_strerror(MQDH_E_NOMEM));
            return EXIT_FATAL;
        }
        if (n == 1) {
            c->job = launcher;
            return 0;
        }
        if (n > 1) {
            fprintf(stderr, "mqdump: --sentinel: %d MPI jobs on this node (launchers %s): "
                            "give the one to watch with --job\n", n, names);
            return EXIT_FATAL;
        }
        if (!said++ && !c->quiet)
            fprintf(stderr, "mqdump: --sentinel: no MPI job on this node yet; waiting for "
                            "one\n");
        if (getppid() != parent) {
            fprintf(stderr, "mqdump: --sentinel: no MPI job appeared before the process "
                            "that started mqdump ended\n");
            return EXIT_FATAL;
        }
        struct timespec ts = {(time_t)c->interval,
                              (long)((c->interval - (double)(time_t)c->interval) * 1e9)};
        nanosleep(&ts, NULL);
    }
}

/* ---------------------------------------------------------------- the looks */

/* The time a look held the processes stopped, from the library's
 * progress calls: all of this host's stopped, then let go. */
struct stop_clock {
    double stopped, let_go;
};

static void clock_progress(void *arg, const struct mqdh_progress *p)
{
    struct stop_clock *sc = arg;
    if (!sc->stopped && p->to_stop > 0 && p->stopped >= p->to_stop)
        sc->stopped = now();
    if (!sc->let_go && p->let_go > 0)
        sc->let_go = now();
}

/* The CPU time of d's processes whose time is known in both d and first
 * (the first look), in seconds since that look. */
static double job_cpu_since(const struct mqdh_dump *first, const struct mqdh_dump *d)
{
    double s = 0;
    for (int i = 0; first->cpu && d->cpu && i < d->nprocs && i < first->nprocs; i++)
        if (first->cpu[i].known && d->cpu[i].known && d->cpu[i].ns >= first->cpu[i].ns &&
            first->procs[i].pid == d->procs[i].pid)
            s += (double)(d->cpu[i].ns - first->cpu[i].ns) / 1e9;
    return s;
}

/* Why no process of the first look could be looked at, or NULL if one
 * could. */
static const char *unseen(const struct mqdh_dump *d)
{
    for (int i = 0; i < d->nprocs; i++)
        if (process_unwound(d, i))
            return NULL;
    return d->nprocs && d->procs[0].error ? d->procs[0].error : "no process to look at";
}

/* The state of one watch. */
struct watch {
    struct command *c;
    const pid_t *pids;
    const int *ranks;
    const char *const *hosts;
    int n, say;
    struct mqdh_sentinel *sentinel;
    struct mqdh_dump *first, *last; /* the first look (for the job's CPU time), the last */
    double t_first, t_last, stopped_sum;
    struct own_cost cpu0;
    int failed; /* looks in a row that made no dump */
};

/* One look at time t: 0 and *d, or -1 (*d NULL) when the dump made
 * nothing.  The time it held the processes stopped is counted. */
static int look(struct watch *w, struct mqdh_dump **d)
{
    struct stop_clock sc = {0, 0};
    w->c->o.progress = clock_progress;
    w->c->o.progress_arg = &sc;
    mqdh_dump_processes(w->pids, w->ranks, w->hosts, w->n, &w->c->o, d);
    w->c->o.progress = NULL;
    w->c->o.progress_arg = NULL;
    if (!*d)
        return -1;
    double held = sc.stopped && sc.let_go > sc.stopped ? sc.let_go - sc.stopped : 0;
    struct watch_report *r = w->c->sentinel_report;
    w->stopped_sum += held;
    if (held > r->stopped_max)
        r->stopped_max = held;
    return 0;
}

/* What the looks so far cost, into the report. */
static void account(struct watch *w, double t)
{
    struct watch_report *r = w->c->sentinel_report;
    struct own_cost cpu = own_cost();
    r->seconds = t - w->t_first;
    r->stopped_mean = r->state.looks ? w->stopped_sum / r->state.looks : 0;
    r->own_cpu = cpu.user + cpu.system - w->cpu0.user - w->cpu0.system;
    r->job_cpu = w->first && w->last ? job_cpu_since(w->first, w->last) : 0;
}

/* The next look's time: interval times a random factor from 0.5 to 1.5. */
static double next_wait(const struct command *c)
{
    return c->interval * (0.5 + (double)random() / 2147483648.0);
}

/* Look at the time t, and tell the sentinel.  The look kept as the last;
 * its comparison with the one before in c->watched.  0, or -1 if the
 * look made nothing. */
static int look_and_tell(struct watch *w, double t)
{
    struct mqdh_dump *d = NULL;
    if (look(w, &d) != 0)
        return -1;
    struct mqdh_watch *cmp = NULL;
    if (w->last && mqdh_watch_compare(w->last, d, w->c->interval, t - w->t_last, &cmp) != MQDH_OK)
        cmp = NULL; /* out of memory: taken as a move (nothing claimed) */
    w->t_last = t;
    mqdh_sentinel_look(w->sentinel, t, cmp, &w->c->sentinel_report->state);
    mqdh_watch_free(w->c->watched);
    w->c->watched = cmp;
    if (!w->first)
        w->first = d;
    else if (w->last != w->first)
        mqdh_dump_free(w->last);
    w->last = d;
    return 0;
}

static const char *rule_words(const struct mqdh_sentinel_state *s, char *buf, size_t len)
{
    switch (s->rule) {
    case MQDH_SENTINEL_RULE_FLOOR: snprintf(buf, len, "the floor, %d looks", FLOOR_LOOKS); break;
    case MQDH_SENTINEL_RULE_LONGEST:
        snprintf(buf, len, "4 times the longest quiet time seen while it moved, %.1f s",
                 s->longest_quiet);
        break;
    case MQDH_SENTINEL_RULE_ODDS:
        snprintf(buf, len, "so long a job moving at %.0f%% of looks is quiet less than once "
                           "in a thousand", 100 * s->moving_share);
        break;
    case MQDH_SENTINEL_RULE_BOUND: snprintf(buf, len, "--hung-after"); break;
    }
    return buf;
}

/* The last lines on stderr: how the watch ended, what it learned, what
 * it cost. */
static void say_end(const struct watch *w)
{
    const struct watch_report *r = w->c->sentinel_report;
    char why[160];
    if (r->end == WATCH_ENDED)
        say_to(w->say, "the job ended by itself after %.1f s watched, never hung (the longest "
                       "quiet time %.1f s; a hang would have been %.1f s: %s)",
               r->seconds, r->state.longest_quiet, r->state.threshold,
               rule_words(&r->state, why, sizeof why));
    if (r->state.looks == 0)
        return;
    char share[64] = "";
    if (r->job_cpu > 0)
        snprintf(share, sizeof share, ", %.2f%% of the job's %.1f s", 100 * r->own_cpu / r->job_cpu,
                 r->job_cpu);
    say_to(w->say, "%d looks in %.1f s, each holding the processes stopped %.1f ms on average "
                   "(%.1f ms at most); mqdump's CPU time %.3f s%s",
           r->state.looks, r->seconds, 1e3 * r->stopped_mean, 1e3 * r->stopped_max, r->own_cpu,
           share);
}

/* The watch's first look: the one that says whether the job can be
 * watched at all.  WATCH_HUNG to go on, else how it ended. */
static enum watch_end first_look(struct watch *w)
{
    w->t_first = now();
    if (look_and_tell(w, w->t_first) != 0)
        return job_there(w->c, w->pids, w->n) ? WATCH_FAILED : WATCH_ENDED;
    const char *why = unseen(w->last);
    if (why && job_there(w->c, w->pids, w->n)) {
        char e[600];
        mqdh_escape(e, sizeof e, why);
        say_to(w->say, "--sentinel: the job cannot be watched: %s", e);
        return WATCH_FAILED;
    }
    if (w->c->quiet)
        return WATCH_HUNG;
    char when[200];
    double least = FLOOR_LOOKS * w->c->interval, most = w->c->hung_after;
    if (most > 0 && most <= least)
        snprintf(when, sizeof when, "%g s (--hung-after)", most);
    else
        snprintf(when, sizeof when, "%g s at the least, longer if the job is seen quiet longer "
                                    "while it works%s", least, most > 0 ? ", at most" : "");
    if (most > least)
        snprintf(when + strlen(when), sizeof when - strlen(when), " %g s (--hung-after)", most);
    say_to(w->say, "watching %d processes of %s %d, a look every %g s on average: hung once "
                   "nothing moves for %s", w->n, w->c->job ? "job" : "pid",
           w->c->job ? (int)w->c->job : (int)w->pids[0], w->c->interval, when);
    return WATCH_HUNG;
}

/* Looks until the end: how it ended. */
static enum watch_end watch_on(struct watch *w)
{
    enum watch_end end = first_look(w);
    if (end != WATCH_HUNG)
        return end;
    for (;;) {
        if (!wait_watching(w->c, w->pids, w->n, next_wait(w->c)))
            return WATCH_ENDED;
        double t = now();
        if (look_and_tell(w, t) != 0) {
            if (!job_there(w->c, w->pids, w->n))
                return WATCH_ENDED;
            if (++w->failed >= FAILED_LOOKS) {
                say_to(w->say, "--sentinel: %d looks in a row made no dump", FAILED_LOOKS);
                return WATCH_FAILED;
            }
            continue;
        }
        w->failed = 0;
        account(w, t);
        if (w->c->sentinel_report->state.says == MQDH_SENTINEL_HUNG)
            return WATCH_HUNG;
    }
}

enum watch_end sentinel_looks(struct command *c, const pid_t *pids, const int *ranks,
                              const char *const *hosts, int n, int say, struct mqdh_dump **out)
{
    *out = NULL;
    struct watch w = {.c = c, .pids = pids, .ranks = ranks, .hosts = hosts, .n = n, .say = say,
                      .cpu0 = own_cost()};
    struct mqdh_sentinel_options so = MQDH_SENTINEL_OPTIONS_INIT;
    so.interval = c->interval;
    so.floor = FLOOR_LOOKS * c->interval;
    so.bound = c->hung_after;
    srandom((unsigned)getpid() ^ (unsigned)time(NULL));
    if (!(c->sentinel_report = calloc(1, sizeof *c->sentinel_report)) ||
        mqdh_cache_new(&c->o.cache) != MQDH_OK ||
        mqdh_sentinel_new(&so, &w.sentinel) != MQDH_OK) {
        say_to(say, "--sentinel: out of memory");
        if (c->sentinel_report)
            c->sentinel_report->end = WATCH_FAILED;
        return WATCH_FAILED;
    }
    enum watch_end end = watch_on(&w);
    c->sentinel_report->end = end;
    account(&w, now());
    if (end == WATCH_HUNG) {
        *out = w.last;
        if (w.first == w.last)
            w.first = NULL;
        w.last = NULL;
    }
    say_end(&w);
    if (w.last != w.first)
        mqdh_dump_free(w.last);
    mqdh_dump_free(w.first);
    mqdh_sentinel_free(w.sentinel);
    mqdh_cache_free(c->o.cache);
    c->o.cache = NULL;
    return end;
}

/* ---------------------------------------------------------------- the explanation */

void sentinel_text(const struct command *c)
{
    const struct watch_report *r = c->sentinel_report;
    char why[160];
    printf("Hung: nothing moved for %.1f s (mqdump --sentinel: %d looks over %.1f s, the job "
           "seen moving at %d of them; a hang after %.1f s of quiet: %s)\n",
           r->state.quiet, r->state.looks, r->seconds, r->state.moves, r->state.threshold,
           rule_words(&r->state, why, sizeof why));
}

/* ---------------------------------------------------------------- --signal */

static const struct {
    const char *name;
    int number;
} signals[] = {
    {"TERM", SIGTERM}, {"INT", SIGINT},   {"KILL", SIGKILL}, {"HUP", SIGHUP},
    {"QUIT", SIGQUIT}, {"ABRT", SIGABRT}, {"USR1", SIGUSR1}, {"USR2", SIGUSR2},
};

int signal_number(const char *s)
{
    if (strncasecmp(s, "SIG", 3) == 0)
        s += 3;
    for (size_t i = 0; i < sizeof signals / sizeof signals[0]; i++)
        if (strcasecmp(s, signals[i].name) == 0)
            return signals[i].number;
    char *end;
    long v = strtol(s, &end, 10);
    return end != s && !*end && v >= 1 && v < NSIG ? (int)v : 0;
}

int sentinel_signal(const struct command *c, const pid_t *pids, int n)
{
    const char *name = sigabbrev_np(c->signal);
    if (c->job) {
        if (kill(c->job, c->signal) != 0) {
            fprintf(stderr, "mqdump: --signal: cannot send SIG%s to the launcher %d: %s\n",
                    name ? name : "?", (int)c->job, strerror(errno));
            return -1;
        }
        fprintf(stderr, "mqdump: sent SIG%s to the launcher, pid %d\n", name ? name : "?",
                (int)c->job);
        return 0;
    }
    int sent = 0;
    for (int i = 0; i < n; i++)
        sent += alive(pids[i]) && kill(pids[i], c->signal) == 0;
    fprintf(stderr, "mqdump: sent SIG%s to %d of %d processes\n", name ? name : "?", sent, n);
    return sent ? 0 : -1;
}
