/* procstate.h - what /proc says of a test target's threads. */
#ifndef MQD_TESTS_PROCSTATE_H
#define MQD_TESTS_PROCSTATE_H

#include "joblaunch.h"

#include <stddef.h>
#include <sys/types.h>

/* State letter ('R', 'S', 't', ...) and TracerPid of one thread. */
char thread_state(pid_t pid, pid_t tid, long *tracer);

/* How many threads pid has (0 if it is gone). */
int count_threads(pid_t pid);

/*
 * Wait (bounded, 2 s) until a thread is untraced and in state want, and
 * return the state it ended in.  After a detach a thread passes through
 * other states (a group-stopped one is woken to stop again), so only the
 * settled state counts.
 */
char settled_state(pid_t pid, pid_t tid, char want, long *tracer);

/*
 * 0 when every thread of pid is untraced and not stopped (waiting up to
 * 2 s for that to settle); else -1 with the first offending thread in
 * why[len].
 */
int proc_released(pid_t pid, char *why, size_t len);

/* proc_released for every rank of job, then its mpiexec: 0, or -1 with
 * the first offender in why[len]. */
int job_released(const struct job *job, char *why, size_t len);

#endif
