/*
 * session.c - one dump, from the processes' pids to the result: make the
 * session, stop every process first (one consistent state across the
 * job), set each up (protocol.c), read each, let every process go, then
 * destroy what the DLL hung on the session's objects, in the order the
 * specification gives.
 */
#define _GNU_SOURCE
#include "protocol/callbacks.h"
#include "protocol/choose.h"
#include "protocol/identity.h"
#include "protocol/images.h"
#include "protocol/protocol.h"
#include "target/debugfile.h"

#include "base/clock.h"
#include "base/dump.h"
#include "protocol/guard.h"
#include "job/cache.h"
#include "job/workers.h"
#include "job/hosts.h"
#include "job/owner.h"
#include "target/proc.h"
#include "base/progress.h"
#include "job/remote.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

static const char *const error_messages[] = {
#define MQDH__MSG_(name, value, msg) [value] = msg,
    MQDH_ERRORS(MQDH__MSG_)
#undef MQDH__MSG_
};

const char *mqdh_strerror(int code)
{
    if (code >= 0 && code < (int)(sizeof error_messages / sizeof error_messages[0]) &&
        error_messages[code])
        return error_messages[code];
    return "unknown mqdhost error";
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
        struct target *p = &s->targets[i];
        p->out->stats.bytes = p->mem.bytes_read;
        p->out->stats.syscalls = p->mem.syscalls;
        /* A DLL that crashed is not called again; a process it gave up
         * on keeps its state (the DLL may be mid-way through it). */
        int usable = p->dll && mqdh__dll_usable(p->dll);
        if (usable && p->info && !p->abandoned)
            p->dll->destroy_process_info(p->info);
        if (usable && p->own_image.info && !p->abandoned)
            p->dll->destroy_image_info(p->own_image.info);
        mqdh__mem_fini(&p->mem);
    }
    mqdh__images_end(s);
    if (s->job_dll && s->info && mqdh__dll_usable(s->job_dll))
        s->job_dll->destroy_job_info(s->info);
    for (int i = 0; i < s->n; i++)
        if (s->targets[i].elf_open)
            mqdh__image_close(&s->targets[i].elf);
    if (!s->files_kept)
        mqdh__files_free(s->files);
    mqdh__chosen_free(s);
    int held = 0;
    for (int i = 0; i < s->n; i++) {
        held += s->atts[i].attached != 0;
        mqdh__detach(&s->atts[i]);
    }
    mqdh__progress_step(MQDH__LET_GO, held, NULL);
    free(s->atts);
    free(s->targets);
    mqdh__callbacks_bind(NULL);
    pthread_mutex_destroy(&s->files_lock);
    pthread_mutex_destroy(&s->job_lock);
    pthread_mutex_destroy(&s->images_lock);
}

/* ---------------------------------------------------------------- one dump */

/* One dump of a list that names each process once (dump_listed): its
 * session, its result, and what is known of each process before it is
 * read. */
struct call {
    struct session s;
    struct mqdh_options o; /* the caller's, completed (s.opt) */
    struct mqdh_dump *d;
    struct mqdh__attach **local; /* the attachments of this host's processes admitted */
    int nlocal, nremote;
    int *remote;               /* per process: on another host */
    int *rcs;                  /* per process: how its set-up and reading went */
    struct mqdh__crew crew;    /* who sets them up and reads them */
    struct mqdh__remote *agents; /* the other hosts' agents; NULL: none started */
    int first_error;
    struct mqdh__progress progress; /* told to o.progress */
    unsigned long opened_before; /* files the cache had opened before (s.files_kept) */
};

/* The caller's options, as far as it knows them; the rest stays as
 * MQDH_OPTIONS_INIT has it. */
static void complete_options(struct mqdh_options *o, const struct mqdh_options *opt)
{
    *o = (struct mqdh_options)MQDH_OPTIONS_INIT;
    if (opt)
        memcpy((char *)o + sizeof o->size, (const char *)opt + sizeof o->size,
               (opt->size < sizeof *o ? opt->size : sizeof *o) - sizeof o->size);
}

/* The session's files: the cache's, if it has one free (mqdh_options.cache),
 * else its own.  NULL without memory. */
static struct mqdh__files *take_files(struct call *c)
{
    if ((c->s.files = mqdh__cache_take(c->o.cache)) != NULL) {
        c->s.files_kept = 1;
        c->opened_before = c->s.files->opened;
        return c->s.files;
    }
    return c->s.files = mqdh__files_new();
}

/* The session and the dump for n processes.  0, or -1 out of memory
 * (call_abandon frees what was made). */
static int call_begin(struct call *c, int n)
{
    size_t alloc = (size_t)(n ? n : 1);
    c->s = (struct session){.n = n, .opt = &c->o,
                            .files_lock = PTHREAD_MUTEX_INITIALIZER,
                            .job_lock = PTHREAD_MUTEX_INITIALIZER,
                            .images_lock = PTHREAD_MUTEX_INITIALIZER};
    c->first_error = MQDH_OK;
    struct mqdh_dump *d = c->d = calloc(1, sizeof *d);
    if (!d || !(d->procs = calloc(alloc, sizeof *d->procs)) ||
        !(d->stacks = calloc(alloc, sizeof *d->stacks)) ||
        !(d->cpu = calloc(alloc, sizeof *d->cpu)) ||
        !(d->requests = calloc(alloc, sizeof *d->requests)) ||
        !(c->s.targets = calloc(alloc, sizeof *c->s.targets)) ||
        !(c->s.atts = calloc(alloc, sizeof *c->s.atts)) || !take_files(c) ||
        !(c->local = calloc(alloc, sizeof *c->local)) ||
        !(c->rcs = calloc(alloc, sizeof *c->rcs)) ||
        !(c->remote = calloc(alloc, sizeof *c->remote)))
        return -1;
    d->version = MQDH_VERSION;
    d->nprocs = n;
    return 0;
}

/* What call_begin made, when the dump goes no further. */
static void call_abandon(struct call *c)
{
    free(c->local);
    free(c->rcs);
    free(c->remote);
    free(c->s.targets);
    for (int i = 0; c->s.atts && i < c->s.n; i++)
        mqdh__detach(&c->s.atts[i]); /* none attached: a status kept closed */
    free(c->s.atts);
    if (c->s.files_kept) /* back to the cache they came from */
        mqdh__cache_give_back(c->o.cache);
    else
        mqdh__files_free(c->s.files);
    mqdh_dump_free(c->d);
}

/* Why a's process, on host h (another host's), is not attached here. */
static void not_here(struct mqdh__attach *a, const char *h, const struct mqdh_options *o)
{
    a->rc = -EREMOTE;
    if (o->as_agent) {
        char me[256] = "?";
        gethostname(me, sizeof me - 1);
        snprintf(a->why, sizeof a->why,
                 "its host is %.100s, and the agent for it runs on %.100s: the remote "
                 "command reached another host", h, me);
    } else {
        snprintf(a->why, sizeof a->why,
                 "it runs on host %.100s, and mqdump attaches only to ranks on this host: "
                 "run it there (mqdump --pid %d)", h, (int)a->pid);
    }
}

/* Each process in its place: a pid means this process only on its own
 * host, so this host's are admitted (or not) to be attached here, the
 * others are left to their hosts' agents.  0, or -1 out of memory. */
static int place_processes(struct call *c, const pid_t *pids, const char *const *hosts)
{
    /* Every host name at once, in parallel and within a bound. */
    int *local = calloc((size_t)(c->s.n ? c->s.n : 1), sizeof *local);
    if (!local || (hosts && mqdh__hosts_local(hosts, c->s.n, MQDH__HOST_LOOKUP_SECONDS, local,
                                              NULL) != 0)) {
        free(local);
        return -1;
    }
    for (int i = 0; i < c->s.n; i++) {
        struct mqdh__attach *a = &c->s.atts[i];
        a->pid = pids[i];
        a->want_owners = c->o.no_cpu && c->o.owner_set; /* mqdh__readmit's, once */
        c->d->procs[i].pid = pids[i];
        if (hosts && hosts[i] && !(c->d->procs[i].host = strdup(hosts[i]))) {
            free(local);
            return -1;
        }
        const char *h = hosts ? hosts[i] : NULL;
        if (!h || local[i]) {
            if (mqdh__admit(a, &c->o))
                c->local[c->nlocal++] = a;
            continue;
        }
        c->remote[i] = 1;
        c->nremote++;
        not_here(a, h, &c->o);
    }
    free(local);
    mqdh__progress_step(MQDH__TO_STOP, c->nlocal, NULL);
    /* A job table would know only this host's processes: every host's
     * dump then names peers by their world ranks, alike. */
    c->s.no_job = c->o.as_agent || c->nremote > 0;
    return 0;
}

/* Each target tied to its place in the dump, its attachment and its
 * memory. */
static void bind_targets(struct call *c, const pid_t *pids)
{
    for (int i = 0; i < c->s.n; i++) {
        struct target *p = &c->s.targets[i];
        p->out = &c->d->procs[i];
        p->stack = &c->d->stacks[i];
        p->requests = &c->d->requests[i];
        p->own_image.owner = p;
        p->image = &p->own_image;
        p->session = &c->s;
        mqdh__mem_init(&p->mem, pids[i]);
        p->att = &c->s.atts[i];
    }
}

/* What /proc says of each process (its rank, world and identity), and
 * the error of each that was not attached.  0, or -1 if the processes
 * could not be named (out of memory): then none is prepared. */
static int name_processes(struct call *c, const int *ranks)
{
    long t = c->o.table_ranks;
    int tabled = t > 0 && ranks ? (int)(t < c->s.n ? t : c->s.n) : 0;
    int named = mqdh__name_processes(c->d->procs, ranks, c->remote, c->s.n, tabled) == MQDH_OK;
    if (!named)
        c->first_error = MQDH_E_NOMEM;
    for (int i = 0; i < c->s.n; i++) {
        struct target *p = &c->s.targets[i];
        if (p->att->rc) {
            mqdh__process_error(p->out, "%s", p->att->why);
            if (!c->agents || !c->remote[i])
                first(&c->first_error, MQDH_E_ATTACH);
        }
    }
    return named ? 0 : -1;
}

/* The CPU time target i, stopped, has used (the dump's cpu[i], left
 * unknown if the caller wants none): with its stack, what tells two dumps
 * apart which threads ran between them. */
static void read_cpu(struct call *c, int i)
{
    const struct mqdh__attach *a = c->s.targets[i].att;
    if (c->s.opt->no_cpu)
        return;
    int n = a->nthreads;
    pid_t *tids = malloc((size_t)(n ? n : 1) * sizeof *tids);
    if (tids) {
        for (int k = 0; k < n; k++)
            tids[k] = a->threads[k].tid;
    }
    if (!tids || mqdh__proc_cpu(a->pid, a->stat, tids, n, &c->d->cpu[i]) != MQDH_OK)
        first(&c->first_error, MQDH_E_NOMEM);
    free(tids);
}

/* On this thread, which attached them, one target after another
 * (mqdh__proto_prepare), the first one prepared set up at once (the
 * crew's pilot), the others too if the crew will have one worker
 * (mqdh__crew_early); and each one's CPU time. */
static void prepare_targets(struct call *c)
{
    for (int i = 0; i < c->s.n; i++) {
        struct target *p = &c->s.targets[i];
        if (p->att->attached)
            read_cpu(c, i);
        if (p->out->error)
            continue;
        double t0 = mqdh__monotonic();
        c->rcs[i] = mqdh__proto_prepare(p);
        p->out->stats.seconds = mqdh__monotonic() - t0;
        mqdh__progress_step(MQDH__UNWOUND, 1, NULL);
        mqdh__crew_pilot(&c->crew, i);
        mqdh__crew_early(&c->crew, i);
    }
}

/* Set up and read every prepared target, on the session's workers; then
 * end the session (every process let go), and merge what the agents
 * return.  The dump, indexed. */
static struct mqdh_dump *read_targets(struct call *c)
{
    struct session *s = &c->s;
    s->workers = mqdh__crew_size(s);
    mqdh__crew_run(&c->crew);
    for (int i = 0; i < s->n; i++)
        first(&c->first_error, c->rcs[i]);
    c->d->workers = s->workers;
    c->d->files = (unsigned)(s->files->opened - c->opened_before);
    session_end(s);
    if (s->files_kept)
        mqdh__cache_give_back(c->o.cache);
    free(c->local);
    free(c->rcs);
    free(c->remote);
    if (c->agents)
        first(&c->first_error, mqdh__remote_finish(c->agents, c->d));
    mqdh_dump_index(c->d); /* without it (no memory), look-ups scan */
    return c->d;
}

/* What debuginfod will be asked for, fetched while the ranks still run;
 * from then on the ranks are stopped (debugfile.h). */
static void prefetch(struct call *c)
{
    pid_t *pids = malloc((size_t)(c->nlocal ? c->nlocal : 1) * sizeof *pids);
    for (int i = 0; pids && i < c->nlocal; i++)
        pids[i] = c->local[i]->pid;
    if (pids)
        mqdh__files_prefetch(c->s.files, pids, c->nlocal);
    free(pids);
    mqdh__debug_ranks_stopped(c->s.files);
}

/* Dump pids[0..n-1], each process listed once (mqdh_dump_processes, which
 * checked the arguments). */
static int dump_listed(const pid_t *pids, const int *ranks, const char *const *hosts, int n,
                       const struct mqdh_options *opt, struct mqdh_dump **out)
{
    struct call c = {0};
    complete_options(&c.o, opt);
    /* Told from this thread and the workers (run binds it on each). */
    c.progress = (struct mqdh__progress){.fn = c.o.progress, .arg = c.o.progress_arg,
                                         .lock = PTHREAD_MUTEX_INITIALIZER,
                                         .now = {.size = sizeof(struct mqdh_progress)}};
    struct mqdh__progress *outer = mqdh__progress_bound;
    mqdh__progress_bound = &c.progress;
    /* Stop everything first, all at once: one consistent state across the
     * job.  Until the ranks stop, this thread gets the CPU a moment at a
     * time (they spin in MPI's progress loop): do nothing else before.
     * Other hosts' ranks go to their agents, started first: they connect
     * while this host's ranks are read. */
    if (call_begin(&c, n) != 0 || place_processes(&c, pids, hosts) != 0 ||
        (c.nremote && !c.o.local_only && !c.o.as_agent &&
         mqdh__remote_start(&c.o, c.d->procs, ranks, c.remote, n, &c.agents) != MQDH_OK)) {
        call_abandon(&c);
        mqdh__progress_bound = outer;
        return MQDH_E_NOMEM;
    }
    prefetch(&c);
    mqdh__attach_all(c.local, c.nlocal);
    mqdh__readmit(c.local, c.nlocal, &c.o);
    int stopped = 0; /* and kept: the ones readmit refused are let go at once */
    for (int i = 0; i < c.nlocal; i++)
        stopped += c.local[i]->attached != 0;
    mqdh__progress_step(MQDH__STOPPED, stopped, NULL);
    mqdh__callbacks_bind(&c.s);
    bind_targets(&c, pids);
    /* Then what /proc says of each (it costs system calls that would each
     * have waited their turn behind the ranks), and the rest. */
    c.s.dll_timeout = c.o.dll_timeout < 0 ? 0 : c.o.dll_timeout == 0 ? 30 : c.o.dll_timeout;
    mqdh__crew_begin(&c.crew, &c.s, c.rcs);
    if (name_processes(&c, ranks) == 0)
        prepare_targets(&c);
    *out = read_targets(&c);
    mqdh__progress_bound = outer;
    return c.first_error;
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
    struct mqdh_cpu *cpu = d->cpu ? calloc((size_t)n, sizeof *cpu) : NULL;
    struct mqdh_requests *req = d->requests ? calloc((size_t)n, sizeof *req) : NULL;
    if (!procs || (d->stacks && !stacks) || (d->cpu && !cpu) || (d->requests && !req))
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
        if (cpu)
            cpu[i] = d->cpu[k];
        if (req)
            req[i] = d->requests[k];
        k++;
    }
    free(d->procs);
    free(d->stacks);
    free(d->cpu);
    free(d->requests);
    d->procs = procs;
    d->stacks = stacks;
    d->cpu = cpu;
    d->requests = req;
    d->nprocs = n;
    mqdh_dump_index(d); /* without it (no memory), look-ups scan */
    return MQDH_OK;
nomem:
    for (int i = 0; procs && i < n; i++)
        if (first_of[i] != i)
            mqdh__process_clear(&procs[i]);
    free(procs);
    free(stacks);
    free(cpu);
    free(req);
    return MQDH_E_NOMEM;
}

int mqdh_dump_processes(const pid_t *pids, const int *ranks, const char *const *hosts, int n,
                        const struct mqdh_options *opt, struct mqdh_dump **out)
{
    *out = NULL;
    if (n < 0 || (n > 0 && !pids) || (opt && opt->size < sizeof opt->size))
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
        /* Which entries were the table's is lost: every environment read. */
        struct mqdh_options o;
        complete_options(&o, opt);
        o.table_ranks = 0;
        rc = dump_listed(fp, fr, fh, nfirst, &o, out);
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

int mqdh_dll_check(const char *path, char *version, size_t versionlen, int *mpi2, char *err,
                   size_t errlen)
{
    return mqdh_dll_check_trusting(path, 0, version, versionlen, mpi2, err, errlen);
}

int mqdh_dll_check_trusting(const char *path, int trust, char *version, size_t versionlen,
                            int *mpi2, char *err, size_t errlen)
{
    struct mqdh__dll *dll;
    int rc = mqdh__dll_load_as(path, trust ? MQDH__DLL_TRUST_ANY : MQDH__DLL_TRUST_GIVEN,
                              &mqdh__basic_callbacks, &dll, err, errlen);
    if (rc != MQDH_OK)
        return rc;
    if (version)
        snprintf(version, versionlen, "%s", dll->version);
    if (mpi2)
        *mpi2 = dll->mpi2;
    return MQDH_OK;
}
