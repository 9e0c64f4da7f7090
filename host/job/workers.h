/*
 * workers.h - the threads that set up and read a session's processes.
 *
 * One crew per dump: the calling thread and s->workers - 1 threads made
 * once, each with one guard (guard.h) for the whole dump, taking the
 * processes one at a time through mqdh__proto_setup, then, once every
 * process is set up, through mqdh__proto_read; each result goes to its
 * process's own place, so the output does not depend on the number of
 * workers.  The first process set up and read is the pilot, alone on the
 * calling thread, before the others: what every process of the program
 * shares (the DWARF types the DLL asks for, the pages of the MPI
 * library's data a read touches) is learnt from it once, on the thread
 * whose heap is the process's main one.
 */
#ifndef MQDH__WORKERS_H
#define MQDH__WORKERS_H

#include "protocol/guard.h"
#include "protocol/objects.h"

#include <pthread.h>
#include <stdatomic.h>

struct mqdh__progress;

struct mqdh__crew {
    struct session *s;
    int *rcs;      /* per process: how its set-up and reading went */
    int pilot;     /* the process set up first, on the calling thread; -1 none yet */
    int pilot_read; /* the pilot is read: the others may be */
    atomic_int next[2]; /* the next process to take, per phase */
    pthread_mutex_t lock;
    pthread_cond_t cond;
    int arrived;   /* workers done setting up (under lock) */
    int nworkers;  /* the workers there are (under lock) */
    struct mqdh__progress *progress; /* the dump's, bound on each worker */
    struct mqdh__guard guard;        /* the calling thread's */
    int guarded;
};

/* The crew of s, its guard on the calling thread (s->dll_timeout set).
 * Each process's result goes to rcs[i]. */
void mqdh__crew_begin(struct mqdh__crew *c, struct session *s, int *rcs);

/* Set up prepared process i now, on the calling thread, as the pilot (the
 * first such call only; later ones do nothing). */
void mqdh__crew_pilot(struct mqdh__crew *c, int i);

/*
 * Set up prepared process i now, on the calling thread, if the pilot is
 * set up and the crew will have one worker (mqdh__crew_size): done right
 * after i is prepared, its pages go back to the heap before the next
 * process is, which then reuses their memory instead of faulting in its
 * own.  Otherwise (and for the pilot) nothing: mqdh__crew_run does it.
 */
void mqdh__crew_early(struct mqdh__crew *c, int i);

/* Set up and read every prepared process not done yet, on s->workers
 * threads (this one too), then end the crew. */
void mqdh__crew_run(struct mqdh__crew *c);

/* How many workers to set up and read the processes with (mqdh_options.jobs). */
int mqdh__crew_size(const struct session *s);

#endif
