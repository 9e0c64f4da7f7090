/*
 * workers.h - the threads that set up and read a session's processes
 * (workers.c), for session.c.
 */
#ifndef MQDH__WORKERS_H
#define MQDH__WORKERS_H

#include "protocol/objects.h"

enum mqdh__phase { MQDH__PHASE_SETUP, MQDH__PHASE_READ };

/*
 * How many workers set up and read the processes of s.  The interface
 * does not say a DLL may be called from two threads at once, so only
 * mqd's own, which is written to be, gets more than one unless the
 * caller asks: then one per online CPU, and never more than there are
 * processes.
 */
int mqdh__workers_count(const struct session *s);

/* One phase over every process of s, on s->workers threads (the caller's
 * too); each process's result in rcs[i]. */
void mqdh__workers_run(struct session *s, enum mqdh__phase phase, int *rcs);

#endif
