/* workers.c - the threads that set up and read a session's processes; see workers.h. */
#define _GNU_SOURCE
#include "job/workers.h"

#include "base/clock.h"
#include "base/dump.h"
#include "base/progress.h"
#include "protocol/callbacks.h"
#include "protocol/protocol.h"

#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

enum phase { PHASE_SETUP, PHASE_READ };

/*
 * How many workers set up and read the processes.  The interface does not
 * say a DLL may be called from two threads at once, so only mqd's own,
 * which is written to be, gets more than one unless the caller asks: then
 * one per MQDH__RANKS_PER_WORKER processes, up to one per online CPU.  A
 * rank after the first costs a worker a millisecond or two; a second
 * thread pays for itself only with dozens to share, and threads share one
 * heap (mqdump's) whose lock they would fight over (measured on a 64-rank
 * ring: the same wall time with one worker as with two, a third fewer
 * system calls).  Never more than there are processes.
 */
#define MQDH__RANKS_PER_WORKER 64

/* One worker whatever the DLLs and the processors: asked for, or too few
 * processes to share. */
static int one_worker(const struct session *s)
{
    return s->opt->jobs == 1 || (s->opt->jobs <= 0 && s->n <= MQDH__RANKS_PER_WORKER);
}

int mqdh__crew_size(const struct session *s)
{
    if (one_worker(s))
        return 1;
    int all_own = 1, want = s->opt->jobs;
    for (int i = 0; i < s->n; i++)
        if (s->targets[i].prepared && s->targets[i].out->dll_source != MQDH_DLL_OWN)
            all_own = 0;
    if (want <= 0) {
        int by_work = (s->n + MQDH__RANKS_PER_WORKER - 1) / MQDH__RANKS_PER_WORKER;
        /* The processors are counted (a file read) only if work wants more
         * than one worker. */
        long cpus = all_own && by_work > 1 ? sysconf(_SC_NPROCESSORS_ONLN) : 1;
        want = cpus > 0 ? (int)(cpus < 1024 ? cpus : 1024) : 1;
        if (by_work < want)
            want = by_work > 0 ? by_work : 1;
    }
    return want < s->n ? want : s->n > 0 ? s->n : 1;
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

static int phase_work(enum phase phase, struct target *p)
{
    return phase == PHASE_SETUP ? mqdh__proto_setup(p) : mqdh__proto_read(p);
}

/* Process i's phase, under the worker's guard g (if guarded). */
static void one(struct mqdh__crew *c, struct mqdh__guard *g, int guarded, enum phase phase, int i)
{
    struct target *p = &c->s->targets[i];
    if (phase == PHASE_SETUP ? !p->prepared || p->setup_run : !p->ready)
        return;
    if (phase == PHASE_SETUP)
        p->setup_run = 1;
    if (p->dll && !mqdh__dll_usable(p->dll)) {
        c->rcs[i] = give_up(p, MQDH__GUARD_NONE, g);
        return;
    }
    double t0 = mqdh__monotonic();
    /* What the pilot read, at this process's places, in one batch. */
    if (phase == PHASE_READ && i != c->pilot)
        mqdh__pages_fetch(&c->s->files->pages, &p->elf, &p->mem, MQDH__PAGES_READ);
    volatile int rc = MQDH_E_DLL;
    volatile enum mqdh__guard_why why = MQDH__GUARD_NONE;
    if (guarded)
        MQDH__GUARDED(g, rc, why, phase_work(phase, p));
    else
        rc = phase_work(phase, p);
    c->rcs[i] = why == MQDH__GUARD_NONE ? rc : give_up(p, why, g);
    p->out->stats.seconds += mqdh__monotonic() - t0;
    /* Set up: what it read for that (its library's globals, its key) goes
     * back to the heap too; the read's batch fetches what the read needs. */
    if (phase == PHASE_SETUP)
        mqdh__mem_flush(&p->mem);
    if (phase == PHASE_READ) {
        /* Read: its pages go back to the one heap now, for the next
         * process's (the heap stays the size of one process's pages,
         * not grown, and faulted in, for each).  What it missed is
         * kept: the pilot's is learnt from. */
        mqdh__mem_flush(&p->mem);
        mqdh__progress_step(MQDH__READ, 1, NULL);
    }
}

/* Take the next process and do the phase's work on it, until none is
 * left (the pilot's is done already). */
static void drain(struct mqdh__crew *c, struct mqdh__guard *g, int guarded, enum phase phase)
{
    for (;;) {
        int i = atomic_fetch_add(&c->next[phase], 1);
        if (i >= c->s->n)
            break;
        if (i != c->pilot)
            one(c, g, guarded, phase, i);
    }
}

/* Every worker set up its share; the calling thread (last) reads the
 * pilot, then lets the others read. */
static void gate(struct mqdh__crew *c, int caller)
{
    pthread_mutex_lock(&c->lock);
    c->arrived++;
    if (caller) {
        while (c->arrived < c->nworkers)
            pthread_cond_wait(&c->cond, &c->lock);
        pthread_mutex_unlock(&c->lock);
        if (c->pilot >= 0) {
            struct target *p = &c->s->targets[c->pilot];
            size_t from = p->mem.nmissed; /* what its read misses, and only that */
            one(c, &c->guard, c->guarded, PHASE_READ, c->pilot);
            mqdh__pages_learn(&c->s->files->pages, &p->elf, &p->mem, from, MQDH__PAGES_READ);
        }
        pthread_mutex_lock(&c->lock);
        c->pilot_read = 1;
        pthread_cond_broadcast(&c->cond);
    } else {
        /* Every waiter wakes: the caller waits for the count, the other
         * workers for the pilot, on one condition (a signal could wake a
         * worker and leave the caller waiting for ever). */
        pthread_cond_broadcast(&c->cond);
        while (!c->pilot_read)
            pthread_cond_wait(&c->cond, &c->lock);
    }
    pthread_mutex_unlock(&c->lock);
}

static void *worker(void *arg)
{
    struct mqdh__crew *c = arg;
    mqdh__callbacks_bind(c->s);
    mqdh__progress_bound = c->progress;
    struct mqdh__guard g;
    int guarded = mqdh__guard_init(&g, c->s->dll_timeout) == 0;
    drain(c, &g, guarded, PHASE_SETUP);
    gate(c, 0);
    drain(c, &g, guarded, PHASE_READ);
    if (guarded)
        mqdh__guard_fini(&g);
    mqdh__callbacks_bind(NULL); /* its answers go with it */
    return NULL;
}

void mqdh__crew_begin(struct mqdh__crew *c, struct session *s, int *rcs)
{
    *c = (struct mqdh__crew){.s = s, .rcs = rcs, .pilot = -1,
                             .progress = mqdh__progress_bound};
    atomic_init(&c->next[PHASE_SETUP], 0);
    atomic_init(&c->next[PHASE_READ], 0);
    pthread_mutex_init(&c->lock, NULL);
    pthread_cond_init(&c->cond, NULL);
    c->guarded = mqdh__guard_init(&c->guard, s->dll_timeout) == 0;
}

void mqdh__crew_pilot(struct mqdh__crew *c, int i)
{
    if (c->pilot >= 0 || !c->s->targets[i].prepared)
        return;
    c->pilot = i;
    one(c, &c->guard, c->guarded, PHASE_SETUP, i);
    /* What it read so far, for the others' first reads (pages.h). */
    mqdh__pages_learn(&c->s->files->pages, &c->s->targets[i].elf, &c->s->targets[i].mem, 0,
                      MQDH__PAGES_FIRST);
}

void mqdh__crew_early(struct mqdh__crew *c, int i)
{
    if (c->pilot >= 0 && one_worker(c->s))
        one(c, &c->guard, c->guarded, PHASE_SETUP, i);
}

void mqdh__crew_run(struct mqdh__crew *c)
{
    struct session *s = c->s;
    int more = s->workers - 1, started = 0;
    pthread_t *t = more > 0 ? calloc((size_t)more, sizeof *t) : NULL;
    for (int w = 0; t && w < more; w++, started++)
        if (pthread_create(&t[w], NULL, worker, c) != 0)
            break; /* fewer workers: the same work, done by those there are */
    pthread_mutex_lock(&c->lock);
    c->nworkers = started + 1; /* the gate waits for those there are */
    pthread_mutex_unlock(&c->lock);
    drain(c, &c->guard, c->guarded, PHASE_SETUP);
    gate(c, 1);
    drain(c, &c->guard, c->guarded, PHASE_READ);
    for (int w = 0; w < started; w++)
        pthread_join(t[w], NULL);
    free(t);
    s->workers = started + 1;
    if (c->guarded)
        mqdh__guard_fini(&c->guard);
    pthread_cond_destroy(&c->cond);
    pthread_mutex_destroy(&c->lock);
    mqdh__callbacks_bind(s);
}
