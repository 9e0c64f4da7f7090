/*
 * session.c - one dump, from the processes' pids to the result: make the
 * session, stop every process first (one consistent state across the
 * job), set each up (protocol.c), read each, let every process go, then
 * destroy what the DLL hung on the session's objects, in the order the
 * specification gives.
 */
#define _GNU_SOURCE
#include "session.h"
#include "where.h"
#include "guard.h"

#include "analyze.h"
#include "hosts.h"
#include "proc.h"

#include <errno.h>
#include <malloc.h>
#include <pwd.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

static const char *const error_messages[] = {
#define MQDH_MSG_(name, value, msg) [value] = msg,
    MQDH_ERRORS(MQDH_MSG_)
#undef MQDH_MSG_
};

const char *mqdh_strerror(int code)
{
    if (code >= 0 && code < (int)(sizeof error_messages / sizeof error_messages[0]) &&
        error_messages[code])
        return error_messages[code];
    return "unknown mqdhost error";
}

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* " (name)" for user uid into buf[len], or "" if it has no name here. */
static const char *user_name(uid_t uid, char *buf, size_t len)
{
    struct passwd pw, *found = NULL;
    char tmp[1024];
    buf[0] = '\0';
    if (getpwuid_r(uid, &pw, tmp, sizeof tmp, &found) == 0 && found && found->pw_name)
        snprintf(buf, len, " (%s)", found->pw_name);
    return buf;
}

/*
 * Is process a the user's whose processes the dump may touch (o->owner:
 * the launcher's)?  Every user id of it, and the owner of its files in
 * /proc (root once it is not dumpable), must be that user.  1 if so;
 * else 0 with a's error set.
 */
static int owners_process(struct mqdh__attach *a, const struct mqdh_options *o)
{
    uid_t ids[4], dir;
    char name[160], whose[64];
    if (mqdh__proc_uids(a->pid, ids) != 0 || mqdh__proc_dump_owner(a->pid, &dir) != 0) {
        a->rc = -ESRCH;
        snprintf(a->why, sizeof a->why, "process %d does not exist", (int)a->pid);
        return 0;
    }
    if (o->owner_pid > 0)
        snprintf(whose, sizeof whose, "the launcher %d", (int)o->owner_pid);
    else
        snprintf(whose, sizeof whose, "the job's launcher");
    int other = -1;
    for (int k = 0; k < 4 && other < 0; k++)
        if (ids[k] != o->owner)
            other = k;
    if (other < 0 && dir == o->owner)
        return 1;
    a->rc = -EPERM;
    if (other == 0) {
        snprintf(a->why, sizeof a->why, "process %d belongs to user %lu%s, but %s runs as user "
                 "%lu: a launcher's table names only its own user's processes; not attached",
                 (int)a->pid, (unsigned long)ids[0], user_name(ids[0], name, sizeof name),
                 whose, (unsigned long)o->owner);
        return 0;
    }
    if (other > 0) {
        snprintf(a->why, sizeof a->why, "process %d belongs to user %lu, but runs with the "
                 "privileges of user %lu%s (a setuid program?), and %s runs as user %lu: a "
                 "launcher's table names only its own user's processes; not attached",
                 (int)a->pid, (unsigned long)ids[0], (unsigned long)ids[other],
                 user_name(ids[other], name, sizeof name), whose, (unsigned long)o->owner);
        return 0;
    }
    snprintf(a->why, sizeof a->why, "process %d is not dumpable (it runs a setuid or setgid "
             "program, or made itself so): user %lu, as whom %s runs, could not trace it; "
             "not attached", (int)a->pid, (unsigned long)o->owner, whose);
    return 0;
}

/*
 * May process a be attached?  An agent dumps only its own user's
 * processes (root: anyone's): the pids it is given come from another
 * host.  And with o->owner_set, only the owner's, even as root (a
 * launcher's table names only its own user's processes).  1 if so; else 0
 * with the attachment's error set.
 */
static int admit(struct mqdh__attach *a, const struct mqdh_options *o)
{
    uid_t uid;
    if (o->as_agent && geteuid() != 0) {
        if (mqdh__proc_uid(a->pid, &uid) != 0) {
            a->rc = -ESRCH;
            snprintf(a->why, sizeof a->why, "process %d does not exist", (int)a->pid);
            return 0;
        }
        if (uid != getuid()) {
            a->rc = -EPERM;
            snprintf(a->why, sizeof a->why,
                     "process %d belongs to user %lu, and the agent runs as user %lu: an agent "
                     "dumps only its own user's processes", (int)a->pid, (unsigned long)uid,
                     (unsigned long)getuid());
            return 0;
        }
    }
    return !o->owner_set || owners_process(a, o);
}

/*
 * Once the processes are stopped, the owner's rule again: a process could
 * have run a setuid program between its check and its stop; stopped, its
 * ids hold still.  One that fails it now is let go, unread.
 */
static void readmit(struct mqdh__attach *const *atts, int n, const struct mqdh_options *o)
{
    for (int i = 0; o->owner_set && i < n; i++)
        if (atts[i]->rc == 0 && !owners_process(atts[i], o))
            mqdh__detach(atts[i]); /* its rc and why stay */
}

static int first(int *first_error, int rc)
{
    if (rc != MQDH_OK && !*first_error)
        *first_error = rc;
    return rc;
}

/*
 * Free what the DLL hung on the session's objects: the processes' and
 * images' information, then the job's (after every process's, as the
 * specification orders), then the images, whose types may point into one
 * another's DWARF; and let everything go, last.  Once a rank runs again it
 * competes with this thread for the CPU (a node's ranks spin in MPI's
 * progress loop on every core): the less left to do then, the better.
 */
static void session_end(struct session *s)
{
    for (int i = 0; i < s->n; i++) {
        struct hproc *p = &s->procs[i];
        p->out->stats.bytes = p->mem.bytes_read;
        p->out->stats.syscalls = p->mem.syscalls;
        /* A DLL that crashed is not called again; a process it gave up
         * on keeps its state (the DLL may be mid-way through it). */
        int usable = p->dll && mqdh__dll_usable(p->dll);
        if (usable && p->info && !p->abandoned)
            p->dll->destroy_process_info(p->info);
        if (usable && p->image.info && !p->abandoned)
            p->dll->destroy_image_info(p->image.info);
        mqdh__mem_fini(&p->mem);
    }
    if (s->job_dll && s->info && mqdh__dll_usable(s->job_dll))
        s->job_dll->destroy_job_info(s->info);
    for (int i = 0; i < s->n; i++)
        if (s->procs[i].have_img)
            mqdh__image_close(&s->procs[i].img);
    mqdh__files_free(s->files);
    malloc_trim(0); /* exiting then frees little: less to do once they run */
    for (int i = 0; i < s->n; i++)
        mqdh__detach(&s->atts[i]);
    free(s->atts);
    free(s->procs);
    mqdh__callbacks_bind(NULL);
    pthread_mutex_destroy(&s->files_lock);
    pthread_mutex_destroy(&s->job_lock);
}

/*
 * How many workers set up and read the processes.  The interface does not
 * say a DLL may be called from two threads at once, so only mqd's own,
 * which is written to be, gets more than one unless the caller asks: then
 * one per online CPU, and never more than there are processes.
 */
static int workers(const struct session *s)
{
    int all_own = 1, want = s->opt->jobs;
    for (int i = 0; i < s->n; i++)
        if (s->procs[i].prepared && s->procs[i].out->dll_source != MQDH_DLL_OWN)
            all_own = 0;
    if (want <= 0) {
        long cpus = sysconf(_SC_NPROCESSORS_ONLN);
        want = all_own ? (cpus > 0 ? (int)(cpus < 1024 ? cpus : 1024) : 1) : 1;
    }
    return want < s->n ? want : s->n > 0 ? s->n : 1;
}

enum phase { PHASE_SETUP, PHASE_READ };

struct pool {
    struct session *s;
    enum phase phase;
    int *rcs;
    atomic_int next;
};

/* Take the next process and do the phase's work on it, until none is
 * left.  Each process is one worker's, its result in its own place. */
static int phase_work(enum phase phase, struct hproc *p)
{
    return phase == PHASE_SETUP ? mqdh__proto_setup(p) : mqdh__proto_read(p);
}

/* A process whose DLL crashed, now or on another process, or ran out of
 * time (why), with the guard's account of it. */
static int give_up(struct hproc *p, enum mqdh_guard_why why, const struct mqdh_guard *g)
{
    char what[200];
    p->abandoned = 1;
    p->ready = 0;
    if (why == MQDH_GUARD_NONE && atomic_load(&p->dll->crashed)) {
        mqdh__proc_error(p, "not read: the debug DLL %s crashed on another process", p->dll->path);
        return MQDH_E_DLL_CRASHED;
    }
    if (why == MQDH_GUARD_NONE) {
        mqdh__proc_error(p, "not read: the debug DLL %s did not return in time on %d other "
                           "processes", p->dll->path, MQDH_DLL_STUCK);
        return MQDH_E_DLL_TIMEOUT;
    }
    mqdh__guard_describe(g, what, sizeof what);
    /* Its own error, whatever the DLL said of it before. */
    free(p->out->error);
    p->out->error = NULL;
    if (why == MQDH_GUARD_CRASH) {
        mqdh__proc_error(p, "the debug DLL %s %s; it is not called again", p->dll->path, what);
        return MQDH_E_DLL_CRASHED;
    }
    atomic_fetch_add(&p->dll->timeouts, 1);
    mqdh__proc_error(p, "the debug DLL %s %s (--timeout)", p->dll->path, what);
    return MQDH_E_DLL_TIMEOUT;
}

static void *work(void *arg)
{
    struct pool *pl = arg;
    mqdh__callbacks_bind(pl->s);
    struct mqdh_guard g;
    int guarded = mqdh__guard_init(&g, pl->s->dll_timeout) == 0;
    for (;;) {
        int i = atomic_fetch_add(&pl->next, 1);
        if (i >= pl->s->n)
            break;
        struct hproc *p = &pl->s->procs[i];
        if (pl->phase == PHASE_SETUP ? !p->prepared : !p->ready)
            continue;
        if (p->dll && !mqdh__dll_usable(p->dll)) {
            pl->rcs[i] = give_up(p, MQDH_GUARD_NONE, &g);
            continue;
        }
        double t0 = now();
        volatile int rc = MQDH_E_DLL;
        volatile enum mqdh_guard_why why = MQDH_GUARD_NONE;
        if (guarded)
            MQDH_GUARDED(&g, rc, why, phase_work(pl->phase, p));
        else
            rc = phase_work(pl->phase, p);
        pl->rcs[i] = why == MQDH_GUARD_NONE ? rc : give_up(p, why, &g);
        p->out->stats.seconds += now() - t0;
    }
    if (guarded)
        mqdh__guard_fini(&g);
    return NULL;
}

/* One phase over every process, on s->workers threads (this one too). */
static void run(struct session *s, enum phase phase, int *rcs)
{
    struct pool pl = {.s = s, .phase = phase, .rcs = rcs};
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

/* Dump pids[0..n-1], each process listed once (mqdh_dump_processes). */
static int dump_listed(const pid_t *pids, const int *ranks, const char *const *hosts, int n,
                       const struct mqdh_options *opt, struct mqdh_dump **out)
{
    *out = NULL;
    struct mqdh_options o = MQDH_OPTIONS_INIT;
    if (n < 0 || (n > 0 && !pids) || (opt && opt->size < sizeof opt->size))
        return MQDH_E_USAGE;
    if (opt) /* what the caller knows of; the rest stays as MQDH_OPTIONS_INIT has it */
        memcpy((char *)&o + sizeof o.size, (const char *)opt + sizeof o.size,
               (opt->size < sizeof o ? opt->size : sizeof o) - sizeof o.size);
    size_t alloc = (size_t)(n ? n : 1);
    struct session s = {.n = n, .opt = &o,
                        .files_lock = PTHREAD_MUTEX_INITIALIZER,
                        .job_lock = PTHREAD_MUTEX_INITIALIZER};
    struct mqdh__attach **atts = NULL;
    int *rcs = NULL, *remote = NULL;
    struct mqdh_remote *rem = NULL;
    struct mqdh_dump *d = calloc(1, sizeof *d);
    if (!d || !(d->procs = calloc(alloc, sizeof *d->procs)) ||
        !(d->stacks = calloc(alloc, sizeof *d->stacks)) ||
        !(s.procs = calloc(alloc, sizeof *s.procs)) || !(s.atts = calloc(alloc, sizeof *s.atts)) ||
        !(s.files = mqdh__files_new()) ||
        !(atts = calloc(alloc, sizeof *atts)) || !(rcs = calloc(alloc, sizeof *rcs)))
        goto nomem;
    d->version = MQDH_VERSION;
    d->nprocs = n;
    /* Stop everything first, all at once: one consistent state across the
     * job.  Until the ranks stop, this thread gets the CPU a moment at a
     * time (they spin in MPI's progress loop): do nothing else before.
     * Other hosts' ranks go to their agents, started first: they connect
     * while this host's ranks are read. */
    if (!(remote = calloc(alloc, sizeof *remote)))
        goto nomem;
    int nlocal = 0, nremote = 0;
    const char *last = NULL;
    int last_local = 1;
    for (int i = 0; i < n; i++) {
        s.atts[i].pid = pids[i];
        d->procs[i].pid = pids[i];
        if (hosts && hosts[i] && !(d->procs[i].host = strdup(hosts[i])))
            goto nomem;
        /* A pid means this process only on its own host. */
        const char *h = hosts ? hosts[i] : NULL;
        if (h && (!last || strcmp(h, last) != 0)) {
            last = h;
            last_local = mqdh__host_is_local(h);
        }
        if (!h || last_local) {
            if (admit(&s.atts[i], &o))
                atts[nlocal++] = &s.atts[i];
            continue;
        }
        remote[i] = 1;
        nremote++;
        s.atts[i].rc = -EREMOTE;
        if (o.as_agent) {
            char me[256] = "?";
            gethostname(me, sizeof me - 1);
            snprintf(s.atts[i].why, sizeof s.atts[i].why,
                     "its host is %.100s, and the agent for it runs on %.100s: the remote "
                     "command reached another host", h, me);
        } else {
            snprintf(s.atts[i].why, sizeof s.atts[i].why,
                     "it runs on host %.100s, and mqdump attaches only to ranks on this host: "
                     "run it there (mqdump --pid %d)", h, (int)pids[i]);
        }
    }
    /* A job table would know only this host's processes: every host's
     * dump then names peers by their world ranks, alike. */
    s.no_job = o.as_agent || nremote > 0;
    if (nremote && !o.local_only && !o.as_agent) {
        int rc = mqdh__remote_start(&o, d->procs, ranks, remote, n, &rem);
        if (rc != MQDH_OK)
            goto nomem;
    }
    mqdh__attach_all(atts, nlocal);
    readmit(atts, nlocal, &o);
    mqdh__callbacks_bind(&s);
    int first_error = MQDH_OK;
    for (int i = 0; i < n; i++) {
        struct hproc *p = &s.procs[i];
        p->out = &d->procs[i];
        p->stack = &d->stacks[i];
        p->image.proc = p;
        p->session = &s;
        mqdh__mem_init(&p->mem, pids[i]);
        p->att = &s.atts[i];
    }
    /* Then what /proc says of each (it costs system calls that would each
     * have waited their turn behind the ranks). */
    int named = mqdh__name_processes(d->procs, ranks, remote, n) == MQDH_OK;
    if (!named)
        first_error = MQDH_E_NOMEM;
    for (int i = 0; i < n; i++) {
        struct hproc *p = &s.procs[i];
        if (p->att->rc) {
            mqdh__proc_error(p, "%s", p->att->why);
            if (!rem || !remote[i])
                first(&first_error, MQDH_E_ATTACH);
        }
    }
    for (int i = 0; named && i < n; i++) {
        struct hproc *p = &s.procs[i];
        if (p->out->error)
            continue;
        double t0 = now();
        rcs[i] = mqdh__proto_prepare(p);
        p->out->stats.seconds = now() - t0;
    }
    s.dll_timeout = o.dll_timeout < 0 ? 0 : o.dll_timeout == 0 ? 30 : o.dll_timeout;
    s.workers = workers(&s);
    run(&s, PHASE_SETUP, rcs);
    run(&s, PHASE_READ, rcs);
    for (int i = 0; i < n; i++)
        first(&first_error, rcs[i]);
    d->workers = s.workers;
    d->files = (unsigned)s.files->opened;
    session_end(&s);
    free(atts);
    free(rcs);
    free(remote);
    if (rem)
        first(&first_error, mqdh__remote_finish(rem, d));
    mqdh_dump_index(d); /* without it (no memory), look-ups scan */
    *out = d;
    return first_error;
nomem:
    free(atts);
    free(rcs);
    free(remote);
    free(s.procs);
    free(s.atts);
    mqdh__files_free(s.files);
    mqdh_dump_free(d);
    return MQDH_E_NOMEM;
}

/* ---------------------------------------------------------------- repeats */

/* An entry of the caller's list, for finding the repeated ones. */
struct listed {
    pid_t pid;
    const char *host; /* NULL: this host */
    int index;
};

static int cmp_listed(const void *a, const void *b)
{
    const struct listed *x = a, *y = b;
    if (x->pid != y->pid)
        return x->pid < y->pid ? -1 : 1;
    if (!x->host != !y->host)
        return x->host ? 1 : -1;
    int c = x->host ? strcasecmp(x->host, y->host) : 0;
    if (c)
        return c;
    return (x->index > y->index) - (x->index < y->index);
}

/*
 * first_of[i]: the index of the first entry that lists the same process as
 * entry i (i itself for a first), by pid and host; a host that names this
 * one as NULL, "localhost" or its host name counts as this host (other
 * spellings, looked up, are told apart only later, when the second
 * attach finds the process traced already).  *nfirst: how many firsts.
 * MQDH_OK or MQDH_E_NOMEM.
 */
static int find_repeats(const pid_t *pids, const char *const *hosts, int n, int *first_of,
                        int *nfirst)
{
    struct listed *l = malloc((size_t)(n ? n : 1) * sizeof *l);
    if (!l)
        return MQDH_E_NOMEM;
    char me[256] = "";
    gethostname(me, sizeof me - 1);
    for (int i = 0; i < n; i++) {
        const char *h = hosts ? hosts[i] : NULL;
        if (h && (!*h || strcasecmp(h, "localhost") == 0 || (me[0] && strcasecmp(h, me) == 0)))
            h = NULL;
        l[i] = (struct listed){pids[i], h, i};
    }
    qsort(l, (size_t)n, sizeof *l, cmp_listed);
    *nfirst = 0;
    for (int s = 0, e; s < n; s = e) {
        for (e = s + 1; e < n && l[e].pid == l[s].pid && !l[e].host == !l[s].host &&
                        (!l[s].host || strcasecmp(l[e].host, l[s].host) == 0); e++)
            ;
        for (int k = s; k < e; k++)
            first_of[l[k].index] = l[s].index; /* the lowest index: they sort by it */
        (*nfirst)++;
    }
    free(l);
    return MQDH_OK;
}

/*
 * Spread d, a dump of the first entries only (in order), over the whole
 * list of n: each repeat is in its place, with its error.  MQDH_OK or
 * MQDH_E_NOMEM (d as it was).
 */
static int spread(struct mqdh_dump *d, const int *first_of, const pid_t *pids,
                  const char *const *hosts, int n)
{
    struct mqdh_process *procs = calloc((size_t)n, sizeof *procs);
    struct mqdh_stack *stacks = d->stacks ? calloc((size_t)n, sizeof *stacks) : NULL;
    if (!procs || (d->stacks && !stacks))
        goto nomem;
    for (int i = 0; i < n; i++) {
        struct mqdh_process *p = &procs[i];
        if (first_of[i] != i) {
            p->pid = pids[i];
            p->rank = p->world = p->identity = -1;
            if ((hosts && hosts[i] && !(p->host = strdup(hosts[i]))) ||
                asprintf(&p->error, "process %d is listed twice: dumped once, as entry %d",
                         (int)pids[i], first_of[i]) < 0) {
                p->error = NULL;
                goto nomem;
            }
        }
    }
    for (int i = 0, k = 0; i < n; i++) {
        if (first_of[i] != i)
            continue;
        procs[i] = d->procs[k];
        if (stacks)
            stacks[i] = d->stacks[k];
        k++;
    }
    free(d->procs);
    free(d->stacks);
    d->procs = procs;
    d->stacks = stacks;
    d->nprocs = n;
    mqdh_dump_index(d); /* without it (no memory), look-ups scan */
    return MQDH_OK;
nomem:
    for (int i = 0; procs && i < n; i++)
        if (first_of[i] != i)
            mqdh__process_clear(&procs[i]);
    free(procs);
    free(stacks);
    return MQDH_E_NOMEM;
}

int mqdh_dump_processes(const pid_t *pids, const int *ranks, const char *const *hosts, int n,
                        const struct mqdh_options *opt, struct mqdh_dump **out)
{
    *out = NULL;
    if (n < 0 || (n > 0 && !pids))
        return MQDH_E_USAGE;
    int *first_of = malloc((size_t)(n ? n : 1) * sizeof *first_of), nfirst = n;
    if (!first_of || find_repeats(pids, hosts, n, first_of, &nfirst) != MQDH_OK) {
        free(first_of);
        return MQDH_E_NOMEM;
    }
    if (nfirst == n) {
        free(first_of);
        return dump_listed(pids, ranks, hosts, n, opt, out);
    }
    /* Each process once: the first entries, in order. */
    pid_t *fp = malloc((size_t)nfirst * sizeof *fp);
    int *fr = ranks ? malloc((size_t)nfirst * sizeof *fr) : NULL;
    const char **fh = hosts ? malloc((size_t)nfirst * sizeof *fh) : NULL;
    int rc = MQDH_E_NOMEM;
    if (fp && (!ranks || fr) && (!hosts || fh)) {
        for (int i = 0, k = 0; i < n; i++) {
            if (first_of[i] != i)
                continue;
            fp[k] = pids[i];
            if (fr)
                fr[k] = ranks[i];
            if (fh)
                fh[k] = hosts[i];
            k++;
        }
        rc = dump_listed(fp, fr, fh, nfirst, opt, out);
        if (*out && spread(*out, first_of, pids, hosts, n) != MQDH_OK) {
            mqdh_dump_free(*out);
            *out = NULL;
            rc = MQDH_E_NOMEM;
        } else if (*out && rc == MQDH_OK) {
            rc = MQDH_E_ATTACH; /* a repeat: not dumped as itself */
        }
    }
    free(fp);
    free(fr);
    free(fh);
    free(first_of);
    return rc;
}

void mqdh_release_all(void)
{
    mqdh__detach_all_emergency();
    mqdh__remote_kill_all(); /* each agent lets its host's ranks go */
}

void mqdh__process_clear(struct mqdh_process *p)
{
    for (int c = 0; c < p->ncomms; c++) {
        for (int q = 0; q < MQDH_NQUEUES; q++) {
            free(p->comms[c].queues[q].ops);
            free(p->comms[c].queues[q].error);
        }
        free(p->comms[c].group);
        free(p->comms[c].group_error);
    }
    free(p->comms);
    free(p->host);
    free(p->image);
    free(p->dll);
    free(p->dll_why);
    free(p->error);
    free(p->where_call);
    free(p->where_function);
    free(p->where_file);
    free(p->where_error);
    free(p->where_args_why);
    memset(p, 0, sizeof *p);
}

void mqdh_dump_free(struct mqdh_dump *d)
{
    if (!d)
        return;
    for (int i = 0; i < d->nprocs; i++) {
        mqdh__process_clear(&d->procs[i]);
        if (d->stacks)
            mqdh__stack_clear(&d->stacks[i]);
    }
    free(d->procs);
    free(d->stacks);
    mqdh__index_free(d->index);
    free(d);
}

int mqdh_dll_check(const char *path, char *version, size_t versionlen, int *mpi2, char *err,
                   size_t errlen)
{
    return mqdh_dll_check_trusting(path, 0, version, versionlen, mpi2, err, errlen);
}

int mqdh_dll_check_trusting(const char *path, int trust, char *version, size_t versionlen,
                            int *mpi2, char *err, size_t errlen)
{
    struct mqdh_dll *dll;
    int rc = mqdh__dll_load_as(path, trust ? MQDH_DLL_TRUST_ANY : MQDH_DLL_TRUST_GIVEN,
                              &mqdh__basic_callbacks, &dll, err, errlen);
    if (rc != MQDH_OK)
        return rc;
    if (version)
        snprintf(version, versionlen, "%s", dll->version);
    if (mpi2)
        *mpi2 = dll->mpi2;
    return MQDH_OK;
}
