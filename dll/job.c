/*
 * job.c - MPI-2 identities: the job's table from the MPI library's own
 * name of a process (mqd_be_process_key) to the identity the debugger gave
 * it (mqs_set_process_identity), through which a backend names a peer the
 * way the debugger does (mqd_job_identity).  See handles.h.
 */
#include "handles.h"

#include <stdio.h>
#include <string.h>

struct mqd_job_entry {
    char key[MQD_MAX_KEY];
    int identity;
};

struct mqd_job {
    const mqs_job_callbacks *cb;
    int n, cap;
    struct mqd_job_entry *v; /* sorted by key: every peer of every process is looked up */
    unsigned generation;     /* moves whenever an entry is added or changed */
};

struct mqd_job *mqd__job_new(const mqs_job_callbacks *cb)
{
    struct mqd_job *j = mqd_calloc(1, sizeof *j);
    if (j)
        j->cb = cb;
    return j;
}

void mqd__job_free(struct mqd_job *job)
{
    if (job)
        mqd_free(job->v);
    mqd_free(job);
}

struct mqd_job *mqd__job_of(struct mqd_process *p)
{
    if (!mqd__mpi2() || !p->cb->mqs_get_process_job_fp)
        return NULL;
    mqs_job *job = p->cb->mqs_get_process_job_fp(p->process);
    return job ? (struct mqd_job *)mqd__basic()->mqs_get_job_info_fp(job) : NULL;
}

unsigned mqd__job_generation(const struct mqd_job *job)
{
    return job->generation;
}

/* Where key is in the job's table, or where it would go; *found says
 * which. */
static int job_find(const struct mqd_job *job, const char *key, int *found)
{
    int lo = 0, hi = job->n;
    while (lo < hi) {
        int mid = lo + (hi - lo) / 2, c = strcmp(job->v[mid].key, key);
        if (c == 0) {
            *found = 1;
            return mid;
        }
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    *found = 0;
    return lo;
}

long mqd_job_identity(struct mqd_process *p, const char *key)
{
    struct mqd_job *job = mqd__job_of(p);
    int found = 0, i = job && key[0] ? job_find(job, key, &found) : 0;
    return found ? job->v[i].identity : -1;
}

int mqd__job_register(struct mqd_job *job, const char *key, int identity)
{
    int found, at = job_find(job, key, &found);
    if (found) {
        if (job->v[at].identity != identity)
            job->generation++;
        job->v[at].identity = identity;
        return mqs_ok;
    }
    if (job->n == job->cap) {
        int nc = job->cap ? job->cap * 2 : 16;
        struct mqd_job_entry *nv = mqd_calloc((size_t)nc, sizeof *nv);
        if (!nv)
            return MQD_ERR_NOMEM;
        if (job->n)
            memcpy(nv, job->v, (size_t)job->n * sizeof *nv);
        mqd_free(job->v);
        job->v = nv;
        job->cap = nc;
    }
    memmove(&job->v[at + 1], &job->v[at], (size_t)(job->n - at) * sizeof job->v[0]);
    snprintf(job->v[at].key, MQD_MAX_KEY, "%s", key);
    job->v[at].identity = identity;
    job->n++;
    job->generation++;
    return mqs_ok;
}
