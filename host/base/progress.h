/*
 * progress.h - a dump's progress told to the caller (mqdh_options.progress;
 * progress.c), for session.c, remote.c and files.c.  The counts, one
 * set a dump; a step changes them and calls the caller's function with
 * them, under a lock: never two calls at once, whichever thread of the
 * dump takes the step.
 */
#ifndef MQDH__PROGRESS_H
#define MQDH__PROGRESS_H

#include "mqdhost.h"

#include <pthread.h>

struct mqdh__progress {
    void (*fn)(void *arg, const struct mqdh_progress *p); /* NULL: nothing is told */
    void *arg;
    pthread_mutex_t lock;
    struct mqdh_progress now;
};

/* What a step changes: a count, by one unless said. */
enum mqdh__step {
    MQDH__TO_STOP,       /* by: the processes of this host to stop */
    MQDH__STOPPED,       /* by: how many were stopped */
    MQDH__UNWOUND,
    MQDH__READ,
    MQDH__LET_GO,        /* by: how many were let go */
    MQDH__AGENTS,        /* by: the agents to start */
    MQDH__AGENT_STARTED,
    MQDH__AGENT_OVER,    /* answered, out of time, or could not start */
    MQDH__FETCH_BEGIN,   /* name: the file whose debug information is fetched */
    MQDH__FETCH_END
};

/*
 * The dump's progress on this thread (session.c binds it on the thread
 * that runs the dump and on each worker; NULL: none).
 */
extern _Thread_local struct mqdh__progress *mqdh__progress_bound;

/* Take a step of the dump bound to this thread: 1 if the caller's
 * function was told, 0 if there is none. */
int mqdh__progress_step(enum mqdh__step step, int by, const char *name);

#endif
