/*
 * workers.c - the threads that set up and read a session's processes
 * (workers.h): each takes the next process, calls its DLL under the
 * --timeout guard, and gives up on a DLL that crashed or hung.
 */
#define _GNU_SOURCE
#include "job/workers.h"

#include "base/dump.h"
#include "base/progress.h"
#include "protocol/callbacks.h"
#include "protocol/guard.h"
#include "protocol/protocol.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/*
 * How many workers set up and read the processes.  The interface does not
 * say a DLL may be called from two threads at once, so only mqd's own,
 * which is written to be, gets more than one unless the caller asks: then
 * one per online CPU, and never more than there are processes.
 */
int mqdh__workers_count(const struct session *s)
{
    int all_own = 1, want = s->opt->jobs;
    for (int i = 0; i < s->n; i++)
        if (s->targets[i].prepared && s->targets[i].out->dll_source != MQDH_DLL_OWN)
            all_own = 0;
    if (want <= 0) {
        long cpus = sysconf(_SC_NPROCESSORS_ONLN);
        want = all_own ? (cpus > 0 ? (int)(cpus < 1024 ? cpus : 1024) : 1) : 1;
    }
    return want < s->n ? want : s->n > 0 ? s->n : 1;
}

struct pool {
    struct session *s;
    enum mqdh__phase phase;
    int *rcs;
    atomic_int next;
    struct mqdh__progress *progress; /* the dump's, bound on each worker */
};

/* Take the next process and do the phase's work on it, until none is
 * left.  Each process is one worker's, its result in its own place. */
static int phase_work(enum mqdh__phase phase, struct target *p)
{
    return phase == MQDH__PHASE_SETUP ? mqdh__proto_setup(p) : mqdh__proto_read(p);
}

/* A process whose DLL crashed, now or on another process, or ran out of
 * time (why), with the guard's account of it. */
static int give_up(struct target *p, enum mqdh__guard_why why, const struct mqdh__guard *g)
{
    char what[200];
    p->abandoned = 1;
    p->ready = 0;
    if (why == MQDH__GUARD_NONE && atomic_load(&p->dll->crashed)) {
        mqdh__process_error(p->out, "not read: the debug DLL %s crashed on another process",
                            p->dll->path);
        return MQDH_E_DLL_CRASHED;
    }
    if (why == MQDH__GUARD_NONE) {
        mqdh__process_error(p->out,
                            "not read: the debug DLL %s did not return in time on %d other "
                            "processes",
                            p->dll->path, MQDH__DLL_STUCK);
        return MQDH_E_DLL_TIMEOUT;
    }
    mqdh__guard_describe(g, what, sizeof what);
    /* Its own error, whatever the DLL said of it before. */
    free(p->out->error);
    p->out->error = NULL;
    if (why == MQDH__GUARD_CRASH) {
        mqdh__process_error(p->out, "the debug DLL %s %s; it is not called again", p->dll->path,
                            what);
        return MQDH_E_DLL_CRASHED;
    }
    atomic_fetch_add(&p->dll->timeouts, 1);
    mqdh__process_error(p->out, "the debug DLL %s %s (--timeout)", p->dll->path, what);
    return MQDH_E_DLL_TIMEOUT;
}

static void *work(void *arg)
{
    struct pool *pl = arg;
    mqdh__callbacks_bind(pl->s);
    mqdh__progress_bound = pl->progress;
    struct mqdh__guard g;
    int guarded = mqdh__guard_init(&g, pl->s->dll_timeout) == 0;
    for (;;) {
        int i = atomic_fetch_add(&pl->next, 1);
        if (i >= pl->s->n)
            break;
        struct target *p = &pl->s->targets[i];
        if (pl->phase == MQDH__PHASE_SETUP ? !p->prepared : !p->ready)
            continue;
        if (p->dll && !mqdh__dll_usable(p->dll)) {
            pl->rcs[i] = give_up(p, MQDH__GUARD_NONE, &g);
            continue;
        }
        double t0 = now();
        volatile int rc = MQDH_E_DLL;
        volatile enum mqdh__guard_why why = MQDH__GUARD_NONE;
        if (guarded)
            MQDH__GUARDED(&g, rc, why, phase_work(pl->phase, p));
        else
            rc = phase_work(pl->phase, p);
        pl->rcs[i] = why == MQDH__GUARD_NONE ? rc : give_up(p, why, &g);
        p->out->stats.seconds += now() - t0;
        if (pl->phase == MQDH__PHASE_READ)
            mqdh__progress_step(MQDH__READ, 1, NULL);
    }
    if (guarded)
        mqdh__guard_fini(&g);
    return NULL;
}

void mqdh__workers_run(struct session *s, enum mqdh__phase phase, int *rcs)
{
    struct pool pl = {.s = s, .phase = phase, .rcs = rcs, .progress = mqdh__progress_bound};
    atomic_init(&pl.next, 0);
    pthread_t *t = s->workers > 1 ? calloc((size_t)s->workers - 1, sizeof *t) : NULL;
    int started = 0;
    for (int w = 0; t && w < s->workers - 1; w++, started++)
        if (pthread_create(&t[w], NULL, work, &pl) != 0)
            break; /* fewer workers: the same work, done by those there are */
    work(&pl);
    for (int w = 0; w < started; w++)
        pthread_join(t[w], NULL);
    free(t);
    mqdh__callbacks_bind(s);
}

