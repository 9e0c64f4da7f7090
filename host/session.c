/*
 * session.c - one dump, from the processes' pids to the result: make the
 * session, stop every process first (one consistent state across the
 * job), set each up (protocol.c), read each, let every process go, then
 * destroy what the DLL hung on the session's objects, in the order the
 * specification gives.
 */
#define _GNU_SOURCE
#include "session.h"

#include "analyze.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

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

static int first(int *first_error, int rc)
{
    if (rc != MQDH_OK && !*first_error)
        *first_error = rc;
    return rc;
}

/* Let everything go, then free what the DLL hung on the session's objects:
 * the processes' and images' information, then the job's (after every
 * process's, as the specification orders), then the images, whose types
 * may point into one another's DWARF. */
static void session_end(struct session *s)
{
    for (int i = 0; i < s->n; i++) {
        struct hproc *p = &s->procs[i];
        mqdh_detach(&p->att);
        p->out->stats.bytes = p->mem.bytes_read;
        p->out->stats.syscalls = p->mem.syscalls;
        if (p->dll && p->info)
            p->dll->destroy_process_info(p->info);
        if (p->dll && p->image.info)
            p->dll->destroy_image_info(p->image.info);
        mqdh_mem_fini(&p->mem);
    }
    if (s->job_dll && s->info)
        s->job_dll->destroy_job_info(s->info);
    for (int i = 0; i < s->n; i++)
        if (s->procs[i].have_img)
            mqdh_image_close(&s->procs[i].img);
    mqdh_files_free(s->files);
    free(s->procs);
    mqdh_callbacks_bind(NULL);
}

int mqdh_dump_processes(const pid_t *pids, const int *ranks, const char *const *hosts, int n,
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
    struct session s = {.n = n, .opt = &o};
    struct mqdh_attach **atts = NULL;
    struct mqdh_dump *d = calloc(1, sizeof *d);
    if (!d || !(d->procs = calloc(alloc, sizeof *d->procs)) ||
        !(s.procs = calloc(alloc, sizeof *s.procs)) || !(s.files = mqdh_files_new()) ||
        !(atts = calloc(alloc, sizeof *atts)))
        goto nomem;
    d->version = MQDH_VERSION;
    d->nprocs = n;
    for (int i = 0; i < n; i++)
        d->procs[i].pid = pids[i];
    if (mqdh_name_processes(d->procs, ranks, n) != MQDH_OK)
        goto nomem;
    mqdh_callbacks_bind(&s);
    int first_error = MQDH_OK;
    /* Stop everything first, all at once: one consistent state across the
     * job. */
    for (int i = 0; i < n; i++) {
        struct hproc *p = &s.procs[i];
        p->out = &d->procs[i];
        p->image.proc = p;
        p->session = &s;
        p->out->host = hosts && hosts[i] ? strdup(hosts[i]) : NULL;
        mqdh_mem_init(&p->mem, pids[i]);
        p->att.pid = pids[i];
        atts[i] = &p->att;
    }
    mqdh_attach_all(atts, n);
    for (int i = 0; i < n; i++) {
        struct hproc *p = &s.procs[i];
        if (p->att.rc) {
            mqdh_proc_error(p, "%s", p->att.why);
            first(&first_error, MQDH_E_ATTACH);
        }
    }
    for (int i = 0; i < n; i++) {
        struct hproc *p = &s.procs[i];
        if (p->out->error)
            continue;
        double t0 = now();
        first(&first_error, mqdh_proto_setup(p));
        p->out->stats.seconds = now() - t0;
    }
    for (int i = 0; i < n; i++) {
        struct hproc *p = &s.procs[i];
        if (!p->ready)
            continue;
        double t0 = now();
        first(&first_error, mqdh_proto_read(p));
        p->out->stats.seconds += now() - t0;
    }
    session_end(&s);
    free(atts);
    mqdh_dump_index(d); /* without it (no memory), look-ups scan */
    *out = d;
    return first_error;
nomem:
    free(atts);
    free(s.procs);
    mqdh_files_free(s.files);
    mqdh_dump_free(d);
    return MQDH_E_NOMEM;
}

void mqdh_release_all(void)
{
    mqdh_detach_all_emergency();
}

void mqdh_dump_free(struct mqdh_dump *d)
{
    if (!d)
        return;
    for (int i = 0; i < d->nprocs; i++) {
        struct mqdh_process *p = &d->procs[i];
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
    }
    free(d->procs);
    mqdh_index_free(d->index);
    free(d);
}

int mqdh_dll_check(const char *path, char *version, size_t versionlen, int *mpi2, char *err,
                   size_t errlen)
{
    struct mqdh_dll *dll;
    int rc = mqdh_dll_load(path, &mqdh_basic_callbacks, &dll, err, errlen);
    if (rc != MQDH_OK)
        return rc;
    if (version)
        snprintf(version, versionlen, "%s", dll->version);
    if (mpi2)
        *mpi2 = dll->mpi2;
    return MQDH_OK;
}
