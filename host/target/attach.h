/*
 * attach.h - stop every thread of a process with ptrace, and let it go.
 *
 * PTRACE_SEIZE + PTRACE_INTERRUPT on each thread, repeated until no new
 * thread appears, so the queues are read in one consistent state.  A
 * whole job is stopped at once: every thread of every process is seized
 * and interrupted before any stop is waited for, so the stops overlap
 * (a process only stops once the scheduler runs it, and on a busy node
 * that is what takes the time).  A signal
 * that arrives while a thread is being stopped is kept and handed back on
 * detach; a process that was already stopped (group-stop) stays stopped.
 * Detach must follow on every path; mqdh__detach_all_emergency() is safe to
 * call from a signal handler and detaches whatever is still attached.
 */
#ifndef MQDH__ATTACH_H
#define MQDH__ATTACH_H

#include <stddef.h>
#include <sys/types.h>

#define MQDH__MAX_THREADS 1024

/* A thread of an attachment, while the attachment is made. */
enum mqdh__thread_state {
    MQDH__T_STOPPING, /* seized and interrupted: its stop not collected yet */
    MQDH__T_STOPPED,
    MQDH__T_GONE,     /* exited (or no longer ours) before it stopped */
    MQDH__T_FORGOTTEN /* gone, and its tid cleared: nothing to detach */
};

struct mqdh__traced {
    pid_t tid;           /* 0: a thread gone, nothing to detach */
    int pending_sig;     /* to re-deliver on detach; 0 if none */
    unsigned char state; /* enum mqdh__thread_state */
};

#define MQDH__FEW_THREADS 4

struct mqdh__attach {
    pid_t pid;
    int nthreads, cap;
    /* few, or a larger array on the heap (a process of many threads): small
     * enough for a node's ranks to be set up without a page fault each. */
    struct mqdh__traced *threads;
    struct mqdh__traced few[MQDH__FEW_THREADS];
    int attached;
    /* While attaching: */
    int rc;      /* 0, or the negative errno it failed with */
    int refused; /* the kernel refused the seize: explain why */
    int rounds;  /* looks for new threads */
    int done;
    char why[320]; /* why it failed */
    /* Set by the caller, and kept: once every thread is stopped, read
     * the process's owners (its status) rather than its CPU time (its
     * stat), for a dump that reports no CPU time and checks the owners
     * again once stopped (owner.h).  Either file counts its threads. */
    int want_owners;
    /* Its /proc/PID/stat as read once every thread was stopped ("" if
     * it was not, or want_owners): the CPU time it had used, for the dump. */
    char stat[1024];
    /* With want_owners, its user ids (real, effective, saved, file
     * system) and its dump owner as read once every thread was stopped,
     * if owners_known. */
    int owners_known;
    uid_t ids[4], dump_owner;
    /* With want_owners: its /proc/PID/status as the owners' check before
     * the attach opened it (mqdh__admit), plus one (0: none), read again
     * once it is stopped and closed: one opening instead of two, and the
     * same process, whatever had its pid meanwhile. */
    int kept_status;
};

/*
 * Attach to and stop every thread of the n processes as[i]->pid (set by
 * the caller, with as[i]->want_owners; the rest of as[i] is overwritten) at once.  Each comes back
 * with rc 0 (stopped, attached), or a negative errno and a sentence in
 * why (permissions, Yama ptrace_scope, already traced, no such process,
 * exited meanwhile, did not stop within 5 seconds, started threads faster
 * than they could be stopped (100 looks); init, a kernel thread
 * or a zombie: mqdh__never_attached, init refused before any seize, the
 * others by the kernel, and then said in their own words); a process that
 * failed has nothing attached.  Returns how many failed.
 */
int mqdh__attach_all(struct mqdh__attach *const *as, int n);

/*
 * Attach to and stop every thread of pid.  Returns 0, or a negative errno
 * with a sentence in err saying why (permissions, Yama ptrace_scope, already
 * traced, no such process).  On failure nothing remains attached.
 */
int mqdh__attach(struct mqdh__attach *a, pid_t pid, char *err, size_t errlen);

/*
 * 1, with the reason in err[errlen], if pid is a process never to attach,
 * whoever asks: pid 1 (the system's init: never an MPI rank, and stopping
 * it stops the system's reaping), a kernel thread (no program to read), a
 * zombie (nothing left to read).  Read from /proc before any attach, so
 * that the reason is the true one, not the kernel's EPERM.  0 otherwise
 * (including when /proc says nothing of pid: the seize then says why).
 */
int mqdh__never_attached(pid_t pid, char *err, size_t errlen);

/*
 * The words for a seize that Yama refused under ptrace_scope scope (1
 * restricted, 2 admin-only, 3 no attach), as mqdh__attach gives them;
 * NULL for a scope that refuses nothing (0) or is unknown.  Internal:
 * shared with the tests, which cannot change the system's scope.
 */
const char *mqdh__yama_words(int scope);

/* Detach from every thread, re-delivering kept signals, and close its kept
 * status.  Idempotent. */
void mqdh__detach(struct mqdh__attach *a);

/*
 * Detach every attachment still registered; async-signal-safe.  ptrace
 * lets only the thread that attached detach: call it on that thread (a
 * program dumping from one thread: its signal handler).
 */
void mqdh__detach_all_emergency(void);

#endif
