/*
 * attach.h - stop every thread of a process with ptrace, and let it go.
 *
 * PTRACE_SEIZE + PTRACE_INTERRUPT on each thread, repeated until no new
 * thread appears, so the queues are read in one consistent state.  A signal
 * that arrives while a thread is being stopped is kept and handed back on
 * detach; a process that was already stopped (group-stop) stays stopped.
 * Detach must follow on every path; mqdh_detach_all_emergency() is safe to
 * call from a signal handler and detaches whatever is still attached.
 */
#ifndef MQDH_ATTACH_H
#define MQDH_ATTACH_H

#include <stddef.h>
#include <sys/types.h>

#define MQDH_MAX_THREADS 1024

struct mqdh_attach {
    pid_t pid;
    int nthreads;
    pid_t tids[MQDH_MAX_THREADS];
    int pending_sig[MQDH_MAX_THREADS]; /* to re-deliver on detach; 0 if none */
    int attached;
};

/*
 * Attach to and stop every thread of pid.  Returns 0, or a negative errno
 * with a sentence in err saying why (permissions, Yama ptrace_scope, already
 * traced, no such process).  On failure nothing remains attached.
 */
int mqdh_attach(struct mqdh_attach *a, pid_t pid, char *err, size_t errlen);

/* Detach from every thread, re-delivering kept signals.  Idempotent. */
void mqdh_detach(struct mqdh_attach *a);

/*
 * Detach every attachment still registered; async-signal-safe.  ptrace
 * lets only the thread that attached detach: call it on that thread (a
 * program dumping from one thread: its signal handler).
 */
void mqdh_detach_all_emergency(void);

#endif
