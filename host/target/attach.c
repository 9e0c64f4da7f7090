/* attach.c - ptrace seize/interrupt of whole processes; detach on every path. */
#define _GNU_SOURCE
#include "target/attach.h"
#include "base/clock.h"
#include "target/proc.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/*
 * Every live attachment, for mqdh__detach_all_emergency(): the one piece of
 * state the library keeps outside a session, because a signal handler must
 * reach it.  Slots are claimed and released with atomic exchanges, so
 * sessions in several threads and a handler may use it at once; chunks
 * are added as needed (never freed) so no attachment goes unregistered.
 */
enum { LIVE_CHUNK = 256 };

struct live_chunk {
    _Atomic(struct mqdh__attach *) slot[LIVE_CHUNK];
    _Atomic(struct live_chunk *) next;
};

static struct live_chunk live;

static int register_live(struct mqdh__attach *a)
{
    for (;;) {
        struct live_chunk *c = &live, *last = &live;
        for (; c; last = c, c = atomic_load(&c->next)) {
            for (int i = 0; i < LIVE_CHUNK; i++) {
                struct mqdh__attach *none = NULL;
                if (atomic_compare_exchange_strong(&c->slot[i], &none, a))
                    return 0;
            }
        }
        struct live_chunk *more = calloc(1, sizeof *more), *tail = NULL;
        if (!more)
            return -1;
        atomic_store(&more->slot[0], a);
        if (atomic_compare_exchange_strong(&last->next, &tail, more))
            return 0;
        free(more); /* another thread added one: look again */
    }
}

static void unregister_live(struct mqdh__attach *a)
{
    for (struct live_chunk *c = &live; c; c = atomic_load(&c->next)) {
        for (int i = 0; i < LIVE_CHUNK; i++) {
            struct mqdh__attach *expect = a;
            if (atomic_compare_exchange_strong(&c->slot[i], &expect, NULL))
                return;
        }
    }
}

static int has_tid(const struct mqdh__attach *a, pid_t tid)
{
    for (int i = 0; i < a->nthreads; i++)
        if (a->threads[i].tid == tid)
            return 1;
    return 0;
}

/*
 * What Yama's ptrace_scope (Documentation/admin-guide/LSM/Yama.rst) means
 * for an attach, one entry per scope: the words for a seize it refused.
 */
static const char *const yama_words[] = {
    [1] = "Yama ptrace_scope is 1 (restricted): only a process's ancestors may trace it, "
          "unless the tracer has CAP_SYS_PTRACE; run as root, or set "
          "/proc/sys/kernel/yama/ptrace_scope to 0",
    [2] = "Yama ptrace_scope is 2 (admin-only): only a tracer with CAP_SYS_PTRACE may attach; "
          "run as root",
    [3] = "Yama ptrace_scope is 3 (no attach): ptrace is disabled until the next reboot; "
          "nothing can attach",
};

const char *mqdh__yama_words(int scope)
{
    if (scope < 1 || scope >= (int)(sizeof yama_words / sizeof yama_words[0]))
        return NULL;
    return yama_words[scope];
}

/* /proc/sys/kernel/yama/ptrace_scope, or -1 without Yama. */
static int yama_scope(void)
{
    FILE *f = fopen("/proc/sys/kernel/yama/ptrace_scope", "r");
    int scope = -1;
    if (f) {
        if (fscanf(f, "%d", &scope) != 1)
            scope = -1;
        fclose(f);
    }
    return scope;
}

/* Is this process an ancestor of pid (Yama's scope 1 lets it trace pid)? */
static int our_descendant(pid_t pid)
{
    pid_t me = getpid();
    for (int depth = 0; depth < 1024 && pid > 1; depth++)
        if ((pid = mqdh__proc_parent(pid)) == me)
            return 1;
    return 0;
}

int mqdh__never_attached(pid_t pid, char *err, size_t errlen)
{
    struct mqdh__stat_line st;
    if (pid == 1) {
        snprintf(err, errlen, "process 1 is the system's init process, never an MPI rank: "
                 "not attached");
        return 1;
    }
    if (mqdh__proc_stat(pid, &st) != 0)
        return 0; /* let the seize say what is wrong */
    if (st.flags & MQDH__PF_KTHREAD) {
        snprintf(err, errlen, "process %d is a kernel thread, not a program", (int)pid);
        return 1;
    }
    if (st.state == 'Z' && mqdh__proc_status_field(pid, "Threads") > 1) {
        snprintf(err, errlen, "process %d's main thread has exited (its other threads run "
                 "on): ptrace cannot attach to it", (int)pid);
        return 1;
    }
    if (st.state == 'Z') {
        snprintf(err, errlen, "process %d is a zombie (it has exited; its parent has not "
                 "reaped it): nothing to dump", (int)pid);
        return 1;
    }
    if (st.state == 'X') {
        snprintf(err, errlen, "process %d has exited", (int)pid);
        return 1;
    }
    return 0;
}

/* Explain a refused PTRACE_SEIZE: the first reason that holds, the
 * kernel's order (ptrace_attach, __ptrace_may_access, then Yama). */
static void explain(pid_t pid, int e, char *err, size_t errlen)
{
    if (e == ESRCH) {
        snprintf(err, errlen, "process %d does not exist (or exited)", (int)pid);
        return;
    }
    if (e != EPERM) {
        snprintf(err, errlen, "cannot attach to process %d: %s", (int)pid, strerror(e));
        return;
    }
    if (mqdh__never_attached(pid, err, errlen)) /* it became one meanwhile */
        return;
    long tracer = mqdh__proc_status_field(pid, "TracerPid");
    if (tracer > 0 && tracer == (long)getpid()) {
        snprintf(err, errlen, "cannot attach to process %d: it is already traced by this "
                 "process (is it listed twice, under two names of this host?)", (int)pid);
        return;
    }
    if (tracer > 0) {
        snprintf(err, errlen, "cannot attach to process %d: it is already traced by process "
                 "%ld (a debugger?)", (int)pid, tracer);
        return;
    }
    int capable = mqdh__proc_capable(getpid(), 19 /* CAP_SYS_PTRACE */) == 1;
    int scope = yama_scope();
    const char *yama = mqdh__yama_words(scope);
    if (yama && (scope >= 3 || (!capable && !(scope == 1 && our_descendant(pid))))) {
        snprintf(err, errlen, "cannot attach to process %d: %s", (int)pid, yama);
        return;
    }
    uid_t ids[4], dir;
    if (!capable && mqdh__proc_uids(pid, ids) == 0) {
        uid_t me = geteuid(); /* the kernel's: the tracer's fsuid, its euid but for setfsuid */
        if (ids[0] != me || ids[1] != me || ids[2] != me) {
            snprintf(err, errlen, "cannot attach to process %d: it runs as user %lu and this "
                     "process as user %lu (ptrace needs the same user, or CAP_SYS_PTRACE)",
                     (int)pid, (unsigned long)(ids[0] != me ? ids[0] : ids[1] != me ? ids[1]
                                                                                 : ids[2]),
                     (unsigned long)me);
            return;
        }
        if (mqdh__proc_dump_owner(pid, &dir) == 0 && dir != ids[1]) {
            snprintf(err, errlen, "cannot attach to process %d: it is not dumpable (it runs "
                     "a setuid or setgid program, or made itself so): ptrace needs "
                     "CAP_SYS_PTRACE", (int)pid);
            return;
        }
    }
    if (capable) {
        snprintf(err, errlen, "cannot attach to process %d: permission denied, though this "
                 "process has CAP_SYS_PTRACE (does a security module, SELinux or AppArmor, "
                 "refuse it?)", (int)pid);
        return;
    }
    snprintf(err, errlen, "cannot attach to process %d: permission denied (another user's "
             "process, or a setuid one; ptrace needs the same user or CAP_SYS_PTRACE)",
             (int)pid);
}

/* a failed with rc (why already said, or explain() says it): let it go. */
static void fail(struct mqdh__attach *a, int rc)
{
    a->rc = rc;
    a->done = 1;
    mqdh__detach(a);
    if (a->refused) /* after the detach: TracerPid must not name us */
        explain(a->pid, -rc, a->why, sizeof a->why);
}

/*
 * Room for twice the threads.  The new array is in place, copied, before
 * the old is freed: a fatal signal's handler may walk it at any moment
 * (mqdh__detach_all_emergency).
 */
static int grow_threads(struct mqdh__attach *a)
{
    struct mqdh__traced *more = malloc((size_t)a->cap * 2 * sizeof *more);
    if (!more)
        return -1;
    memcpy(more, a->threads, (size_t)a->nthreads * sizeof *more);
    struct mqdh__traced *old = a->threads;
    atomic_signal_fence(memory_order_seq_cst);
    a->threads = more;
    atomic_signal_fence(memory_order_seq_cst);
    a->cap *= 2;
    if (old != a->few)
        free(old);
    return 0;
}

/*
 * Has thread tid of pid ended?  The kernel refuses to seize a thread that
 * has (EPERM, as for a process it may not trace), until it is gone
 * (ESRCH): one of a program's threads that came and went while its
 * process was being attached is no refusal.
 */
static int thread_ended(pid_t pid, pid_t tid)
{
    char path[96], line[1024];
    struct mqdh__stat_line st;
    snprintf(path, sizeof path, "/proc/%d/task/%d/stat", (int)pid, (int)tid);
    if (mqdh__proc_file(path, line, sizeof line, MQDH__PROC_ONE) <= 0)
        return 1;
    return mqdh__text_stat(line, &st) == 0 && (st.state == 'Z' || st.state == 'X');
}

/*
 * Seize and interrupt thread t of a, without waiting for it to stop.
 * Returns 1, 0 if it has just exited (a thread other than the main one),
 * or -1 if a failed.
 */
static int seize_tid(struct mqdh__attach *a, pid_t t)
{
    if (a->nthreads == MQDH__MAX_THREADS) {
        snprintf(a->why, sizeof a->why, "process %d has more than %d threads", (int)a->pid,
                 MQDH__MAX_THREADS);
        fail(a, -E2BIG);
        return -1;
    }
    if (a->nthreads == a->cap && grow_threads(a) != 0) {
        snprintf(a->why, sizeof a->why, "cannot attach to process %d: out of memory",
                 (int)a->pid);
        fail(a, -ENOMEM);
        return -1;
    }
    if (ptrace(PTRACE_SEIZE, t, 0, 0) != 0) {
        int e = errno;
        if (t != a->pid && (e == ESRCH || (e == EPERM && thread_ended(a->pid, t))))
            return 0;
        a->refused = 1;
        fail(a, -e);
        return -1;
    }
    struct mqdh__traced *th = &a->threads[a->nthreads];
    *th = (struct mqdh__traced){.tid = t, .state = MQDH__T_STOPPING};
    a->nthreads++;
    if (ptrace(PTRACE_INTERRUPT, t, 0, 0) != 0)
        th->state = MQDH__T_GONE; /* before it could stop */
    return 1;
}

/*
 * Seize and interrupt the threads of a not seized yet, without waiting for
 * them to stop.  Returns how many were new, or -1 if a failed.
 */
static int seize_new(struct mqdh__attach *a)
{
    pid_t *tids;
    int n, rc = mqdh__proc_tasks(a->pid, &tids, &n);
    if (rc != 0) {
        a->refused = 1;
        fail(a, rc);
        return -1;
    }
    int added = 0;
    for (int i = 0; i < n; i++) {
        if (has_tid(a, tids[i]))
            continue;
        int r = seize_tid(a, tids[i]);
        if (r < 0) {
            free(tids);
            return -1;
        }
        added += r;
    }
    free(tids);
    return added;
}

/* Its kept status closed (attach.h). */
static void drop_status(struct mqdh__attach *a)
{
    if (a->kept_status > 0)
        close(a->kept_status - 1);
    a->kept_status = 0;
}

/*
 * Every known thread of a stopped: does the process have no other?  Its
 * /proc/PID/stat, read once they are, counts them (and is kept: its CPU
 * time is what the dump reports, attach.h), so a process of one thread
 * needs no listing of its threads, and one of several a single listing;
 * or, with a->want_owners, its status, which counts them too and says
 * its owners.
 */
static int stat_counts_all(struct mqdh__attach *a)
{
    char path[64];
    long stopped = 0, threads;
    for (int k = 0; k < a->nthreads; k++)
        stopped += a->threads[k].state == MQDH__T_STOPPED;
    if (a->want_owners && a->kept_status) {
        a->owners_known =
            mqdh__proc_owners_fd(a->kept_status - 1, a->ids, &a->dump_owner, &threads) == 0;
        drop_status(a);
        if (!a->owners_known) {
            /* The process checked is gone: what has its pid now was not. */
            snprintf(a->why, sizeof a->why, "process %d exited while being attached",
                     (int)a->pid);
            fail(a, -ESRCH);
            return 0;
        }
        return threads == stopped;
    }
    if (a->want_owners) {
        a->owners_known = mqdh__proc_owners(a->pid, a->ids, &a->dump_owner, &threads) == 0;
        return a->owners_known && threads == stopped;
    }
    snprintf(path, sizeof path, "/proc/%d/stat", (int)a->pid);
    if (mqdh__proc_file(path, a->stat, sizeof a->stat, MQDH__PROC_ONE) <= 0) {
        a->stat[0] = '\0';
        return 0;
    }
    return mqdh__text_stat_threads(a->stat) == stopped;
}

/*
 * Collect the stops of a's threads that have reported one.  Returns 1 if
 * one did (or a thread went), 0 if none has yet; a->done once every
 * thread is stopped and no new one appeared.
 */
static int collect(struct mqdh__attach *a)
{
    int progress = 0, waiting = 0;
    for (int k = 0; k < a->nthreads; k++) {
        struct mqdh__traced *th = &a->threads[k];
        if (th->state != MQDH__T_STOPPING)
            continue;
        int st;
        pid_t w = waitpid(th->tid, &st, __WALL | WNOHANG);
        if (w == 0 || (w < 0 && errno == EINTR)) {
            waiting = 1;
            continue;
        }
        progress = 1;
        if (w == th->tid && WIFSTOPPED(st)) {
            int sig = WSTOPSIG(st), event = st >> 16;
            /* Signal-delivery-stop: keep the signal to re-deliver it. */
            if (event == 0 && sig != SIGTRAP)
                th->pending_sig = sig;
            th->state = MQDH__T_STOPPED;
            continue;
        }
        th->state = MQDH__T_GONE;
    }
    for (int k = 0; k < a->nthreads; k++) {
        struct mqdh__traced *th = &a->threads[k];
        if (th->state != MQDH__T_GONE)
            continue;
        if (th->tid == a->pid) {
            snprintf(a->why, sizeof a->why, "process %d exited while being attached",
                     (int)a->pid);
            fail(a, -ESRCH);
            return 1;
        }
        th->tid = 0;
        th->state = MQDH__T_FORGOTTEN;
    }
    if (waiting)
        return progress;
    /* Every known thread is stopped: none can create another now, but one
     * may have before it stopped.  The kernel's count says whether one
     * did, after a listing as before the first: a process of several
     * threads is listed once, not twice (an Open MPI rank runs three). */
    if (stat_counts_all(a)) {
        a->done = 1;
        return 1;
    }
    if (a->done)
        return 1; /* gone since its check (stat_counts_all) */
    a->owners_known = 0; /* read while a thread not known ran: read again */
    /* Listed and seized, the new ones are counted again once stopped: a
     * listing that adds none proves nothing (the threads it named may all
     * have ended, their successors running on). */
    if (++a->rounds > 100) {
        snprintf(a->why, sizeof a->why,
                 "process %d kept starting threads: not all of them could be stopped",
                 (int)a->pid);
        fail(a, -EAGAIN);
    } else {
        seize_new(a);
    }
    return 1;
}

/* The attachment whose thread tid is, or NULL. */
static struct mqdh__attach *owner_of(struct mqdh__attach *const *as, int n, pid_t tid)
{
    for (int i = 0; i < n; i++)
        for (int k = 0; !as[i]->done && k < as[i]->nthreads; k++)
            if (as[i]->threads[k].tid == tid)
                return as[i];
    return NULL;
}

/* Every attachment's collect(): 1 if any made progress, and how many are
 * left in *left. */
static int sweep(struct mqdh__attach *const *as, int n, int *left)
{
    int progress = 0;
    *left = 0;
    for (int i = 0; i < n; i++) {
        if (as[i]->done)
            continue;
        progress |= collect(as[i]);
        *left += !as[i]->done;
    }
    return progress;
}

/* Those not stopped within the time: failed, saying so. */
static void too_late(struct mqdh__attach *const *as, int n)
{
    for (int i = 0; i < n; i++)
        if (!as[i]->done) {
            snprintf(as[i]->why, sizeof as[i]->why,
                     "process %d did not stop within 5 seconds (a thread in an "
                     "uninterruptible sleep?)", (int)as[i]->pid);
            fail(as[i], -ETIMEDOUT);
        }
}

/*
 * Collect the stops as they come, within 5 seconds.  The kernel tells a
 * tracer each stop with SIGCHLD, naming the thread: so this thread, with
 * SIGCHLD blocked, waits for one (sigtimedwait) and collects that thread
 * alone, one wait4 a thread.  SIGCHLDs do not queue (two stops may tell
 * one) and another thread may take one: when none comes within the nap
 * (1 ms, doubling to 8), it collects them all.  A SIGCHLD taken here is
 * raised again after if the program handles it.
 */
static void collect_stops(struct mqdh__attach *const *as, int n)
{
    sigset_t chld, old;
    sigemptyset(&chld);
    sigaddset(&chld, SIGCHLD);
    pthread_sigmask(SIG_BLOCK, &chld, &old);
    int took = 0, left;
    double deadline = mqdh__monotonic() + 5.0;
    long nap = 1000000;
    sweep(as, n, &left);
    while (left) {
        struct timespec ts = {0, nap};
        siginfo_t si;
        struct mqdh__attach *a;
        if (sigtimedwait(&chld, &si, &ts) == SIGCHLD) {
            took = 1;
            if ((a = owner_of(as, n, si.si_pid)) && collect(a))
                left -= a->done;
        } else if (sweep(as, n, &left)) {
            nap = 1000000;
        } else {
            nap = nap < 8000000 ? nap * 2 : 8000000;
        }
        if (left && mqdh__monotonic() > deadline) {
            too_late(as, n);
            break;
        }
    }
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    struct sigaction sa;
    if (took && !sigismember(&old, SIGCHLD) && sigaction(SIGCHLD, NULL, &sa) == 0 &&
        (sa.sa_flags & SA_SIGINFO ? sa.sa_sigaction != NULL
                                  : sa.sa_handler != SIG_DFL && sa.sa_handler != SIG_IGN))
        kill(getpid(), SIGCHLD);
}

int mqdh__attach_all(struct mqdh__attach *const *as, int n)
{
    int failed = 0;
    for (int i = 0; i < n; i++) {
        struct mqdh__attach *a = as[i];
        pid_t pid = a->pid;
        int owners = a->want_owners, kept = owners ? a->kept_status : 0;
        if (!owners && a->kept_status > 0)
            close(a->kept_status - 1);
        memset(a, 0, sizeof *a);
        a->pid = pid;
        a->want_owners = owners;
        a->kept_status = kept;
        a->threads = a->few;
        a->cap = MQDH__FEW_THREADS;
        /* Never stopped, even for a moment: init is refused here; what
         * else can only be refused (a kernel thread, a zombie) the kernel
         * refuses, and explain() says why in its own words. */
        if (pid == 1 && mqdh__never_attached(pid, a->why, sizeof a->why)) {
            a->rc = -EPERM;
            a->done = 1;
            continue;
        }
        if (register_live(a) != 0) {
            snprintf(a->why, sizeof a->why, "cannot attach to process %d: out of memory",
                     (int)pid);
            a->rc = -ENOMEM;
            a->done = 1;
            continue;
        }
        a->attached = 1;
        /* The main thread alone first: a rank spinning in MPI's progress
         * loop stops the sooner, and stops competing for the CPU; its
         * other threads (collect) once /proc lists them. */
        seize_tid(a, pid);
    }
    collect_stops(as, n);
    for (int i = 0; i < n; i++) {
        failed += as[i]->rc != 0;
        drop_status(as[i]); /* one that failed, or stopped without its read */
    }
    return failed;
}

int mqdh__attach(struct mqdh__attach *a, pid_t pid, char *err, size_t errlen)
{
    a->pid = pid;
    a->want_owners = 0;
    mqdh__attach_all(&a, 1);
    if (a->rc)
        snprintf(err, errlen, "%s", a->why);
    return a->rc;
}

/*
 * Let thread tid go.  A thread killed while attached (its job ended
 * during the look) cannot be detached: it is dying or a zombie, and its
 * parent can reap it only once its tracer has collected its end.  So it
 * is waited for here, briefly (a process that outlives the dump - a
 * sentinel, a debugger - must not hold its job's ranks as zombies); a
 * thread that stops again (a new signal) is detached again.
 */
static void let_go(pid_t tid, int sig)
{
    long nap = 1000; /* ns, doubling to 1 ms: 50 ms in all at most */
    for (double waited = 0; waited < 50e6;) {
        if (ptrace(PTRACE_DETACH, tid, 0, (void *)(long)sig) == 0 || errno != ESRCH)
            return;
        int st;
        pid_t w = waitpid(tid, &st, __WALL | WNOHANG);
        if (w < 0 || (w == tid && (WIFEXITED(st) || WIFSIGNALED(st))))
            return; /* not ours any more, or its end collected: its parent reaps it */
        if (w == 0) { /* running on (not in a stop) or still dying */
            if (kill(tid, 0) != 0 && errno == ESRCH)
                return;
            struct timespec ts = {0, nap};
            nanosleep(&ts, NULL);
            waited += (double)nap;
            nap = nap < 500000 ? nap * 2 : 1000000;
        }
        /* It stopped again: a signal's delivery stop passes the signal on. */
        sig = w == tid && WIFSTOPPED(st) && (st >> 16) == 0 ? WSTOPSIG(st) : 0;
    }
}

void mqdh__detach(struct mqdh__attach *a)
{
    drop_status(a);
    if (!a->attached)
        return;
    for (int i = 0; i < a->nthreads; i++) {
        if (a->threads[i].tid > 0)
            let_go(a->threads[i].tid, a->threads[i].pending_sig);
        a->threads[i].tid = 0;
    }
    a->nthreads = 0;
    a->attached = 0;
    unregister_live(a);
    if (a->threads != a->few)
        free(a->threads);
    a->threads = a->few;
    a->cap = MQDH__FEW_THREADS;
}

void mqdh__detach_all_emergency(void)
{
    for (struct live_chunk *c = &live; c; c = atomic_load(&c->next)) {
        for (int i = 0; i < LIVE_CHUNK; i++) {
            struct mqdh__attach *a = atomic_exchange(&c->slot[i], NULL);
            if (!a)
                continue;
            for (int t = 0; t < a->nthreads; t++)
                if (a->threads[t].tid > 0)
                    ptrace(PTRACE_DETACH, a->threads[t].tid, 0,
                           (void *)(long)a->threads[t].pending_sig);
        }
    }
}
