/* attach.c - ptrace seize/interrupt of whole processes; detach on every path. */
#define _GNU_SOURCE
#include "attach.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
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
 * Every live attachment, for mqdh_detach_all_emergency(): the one piece of
 * state the library keeps outside a session, because a signal handler must
 * reach it.  Slots are claimed and released with atomic exchanges, so
 * sessions in several threads and a handler may use it at once; chunks
 * are added as needed (never freed) so no attachment goes unregistered.
 */
enum { LIVE_CHUNK = 256 };

struct live_chunk {
    _Atomic(struct mqdh_attach *) slot[LIVE_CHUNK];
    _Atomic(struct live_chunk *) next;
};

static struct live_chunk live;

static int register_live(struct mqdh_attach *a)
{
    for (;;) {
        struct live_chunk *c = &live, *last = &live;
        for (; c; last = c, c = atomic_load(&c->next)) {
            for (int i = 0; i < LIVE_CHUNK; i++) {
                struct mqdh_attach *none = NULL;
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

static void unregister_live(struct mqdh_attach *a)
{
    for (struct live_chunk *c = &live; c; c = atomic_load(&c->next)) {
        for (int i = 0; i < LIVE_CHUNK; i++) {
            struct mqdh_attach *expect = a;
            if (atomic_compare_exchange_strong(&c->slot[i], &expect, NULL))
                return;
        }
    }
}

static int has_tid(const struct mqdh_attach *a, pid_t tid)
{
    for (int i = 0; i < a->nthreads; i++)
        if (a->tids[i] == tid)
            return 1;
    return 0;
}

static long read_status_field(pid_t pid, const char *field)
{
    char path[64], line[256];
    size_t flen = strlen(field);
    long v = -1;
    snprintf(path, sizeof path, "/proc/%d/status", (int)pid);
    FILE *f = fopen(path, "r");
    while (f && fgets(line, sizeof line, f)) {
        if (strncmp(line, field, flen) == 0 && line[flen] == ':') {
            v = strtol(line + flen + 1, NULL, 10);
            break;
        }
    }
    if (f)
        fclose(f);
    return v;
}

/* Explain a refused PTRACE_SEIZE. */
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
    long tracer = read_status_field(pid, "TracerPid");
    if (tracer > 0) {
        snprintf(err, errlen, "cannot attach to process %d: it is already traced by process "
                 "%ld (a debugger?)", (int)pid, tracer);
        return;
    }
    FILE *f = fopen("/proc/sys/kernel/yama/ptrace_scope", "r");
    int scope = -1;
    if (f) {
        if (fscanf(f, "%d", &scope) != 1)
            scope = -1;
        fclose(f);
    }
    if (scope >= 1 && geteuid() != 0) {
        snprintf(err, errlen, "cannot attach to process %d: Yama ptrace_scope is %d, which "
                 "allows tracing only descendants (or needs CAP_SYS_PTRACE); run as root or "
                 "set /proc/sys/kernel/yama/ptrace_scope to 0", (int)pid, scope);
        return;
    }
    snprintf(err, errlen, "cannot attach to process %d: permission denied (another user's "
             "process, or a setuid one; ptrace needs the same user or CAP_SYS_PTRACE)",
             (int)pid);
}

/* Wait up to about 5 s for tid to report a stop.  0, or -1 if it exited. */
static int wait_stopped(pid_t tid, int *pending_sig)
{
    struct timespec tick = {0, 1000 * 1000};
    for (int i = 0; i < 5000; i++) {
        int st;
        pid_t w = waitpid(tid, &st, __WALL | WNOHANG);
        if (w == tid) {
            if (WIFEXITED(st) || WIFSIGNALED(st))
                return -1;
            if (WIFSTOPPED(st)) {
                int sig = WSTOPSIG(st);
                int event = st >> 16;
                /* Signal-delivery-stop: keep the signal to re-deliver it. */
                if (event == 0 && sig != SIGTRAP)
                    *pending_sig = sig;
                return 0;
            }
        } else if (w < 0 && errno != EINTR) {
            return -1;
        }
        nanosleep(&tick, NULL);
    }
    return -1;
}

int mqdh_attach(struct mqdh_attach *a, pid_t pid, char *err, size_t errlen)
{
    char path[64];
    int changed = 1, rc = 0, refused = 0; /* refused: explain() says why */
    DIR *d = NULL;

    memset(a, 0, sizeof *a);
    a->pid = pid;
    if (register_live(a) != 0) {
        snprintf(err, errlen, "cannot attach to process %d: out of memory", (int)pid);
        return -ENOMEM;
    }
    a->attached = 1;
    /* Threads may be created until the ones that create them are stopped. */
    for (int round = 0; changed && round < 100; round++) {
        changed = 0;
        snprintf(path, sizeof path, "/proc/%d/task", (int)pid);
        if (!(d = opendir(path))) {
            rc = -(errno == ENOENT ? ESRCH : errno);
            refused = 1;
            goto out;
        }
        struct dirent *de;
        while ((de = readdir(d))) {
            char *end;
            long t = strtol(de->d_name, &end, 10);
            if (*end || t <= 0 || has_tid(a, (pid_t)t))
                continue;
            if (a->nthreads == MQDH_MAX_THREADS) {
                snprintf(err, errlen, "process %d has more than %d threads", (int)pid,
                         MQDH_MAX_THREADS);
                rc = -E2BIG;
                goto out;
            }
            if (ptrace(PTRACE_SEIZE, (pid_t)t, 0, 0) != 0) {
                if (errno == ESRCH && t != pid)
                    continue; /* a thread that just exited */
                rc = -errno;
                refused = 1;
                goto out;
            }
            int k = a->nthreads++;
            a->tids[k] = (pid_t)t;
            a->pending_sig[k] = 0;
            changed = 1;
            if (ptrace(PTRACE_INTERRUPT, (pid_t)t, 0, 0) != 0 ||
                wait_stopped((pid_t)t, &a->pending_sig[k]) != 0) {
                if (t == pid) {
                    snprintf(err, errlen, "process %d exited while being attached", (int)pid);
                    rc = -ESRCH;
                    goto out;
                }
                a->tids[k] = 0; /* thread gone: nothing to detach */
            }
        }
        closedir(d);
        d = NULL;
    }
out:
    if (d)
        closedir(d);
    if (rc) {
        mqdh_detach(a);
        if (refused) /* after the detach: TracerPid must not name us */
            explain(pid, -rc, err, errlen);
    }
    return rc;
}

void mqdh_detach(struct mqdh_attach *a)
{
    if (!a->attached)
        return;
    for (int i = 0; i < a->nthreads; i++) {
        if (a->tids[i] > 0)
            ptrace(PTRACE_DETACH, a->tids[i], 0, (void *)(long)a->pending_sig[i]);
        a->tids[i] = 0;
    }
    a->nthreads = 0;
    a->attached = 0;
    unregister_live(a);
}

void mqdh_detach_all_emergency(void)
{
    for (struct live_chunk *c = &live; c; c = atomic_load(&c->next)) {
        for (int i = 0; i < LIVE_CHUNK; i++) {
            struct mqdh_attach *a = atomic_exchange(&c->slot[i], NULL);
            if (!a)
                continue;
            for (int t = 0; t < a->nthreads; t++)
                if (a->tids[t] > 0)
                    ptrace(PTRACE_DETACH, a->tids[t], 0, (void *)(long)a->pending_sig[t]);
        }
    }
}
