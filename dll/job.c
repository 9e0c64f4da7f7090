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

/*
 * The keys of the form "WORLD#RANK" again, by world and rank: a backend
 * names every member of every communicator by its world and rank (MPICH),
 * N processes of an N-rank job N*N times, and a table lookup there is an
 * array index where the key would be built and searched for.  Filled as
 * keys are registered, which the debugger does before it reads a queue
 * (reads only look).
 */
struct mqd_job_world {
    char name[MQD_MAX_KEY];
    long n;        /* ranks with room in identity */
    int *identity; /* by rank, -1 none */
};

struct mqd_job {
    const mqs_job_callbacks *cb;
    int n, cap;
    struct mqd_job_entry *v; /* sorted by key: every peer of every process is looked up */
    unsigned generation;     /* moves whenever an entry is added or changed */
    int nworlds, worlds_cap, worlds_broken; /* broken: out of memory, the table alone */
    struct mqd_job_world *worlds;
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
    if (job) {
        mqd_free(job->v);
        for (int i = 0; i < job->nworlds; i++)
            mqd_free(job->worlds[i].identity);
        mqd_free(job->worlds);
    }
    mqd_free(job);
}

/* The world called name (len bytes), or NULL. */
static struct mqd_job_world *world_named(const struct mqd_job *job, const char *name, size_t len)
{
    for (int i = 0; i < job->nworlds; i++)
        if (strncmp(job->worlds[i].name, name, len) == 0 && !job->worlds[i].name[len])
            return &job->worlds[i];
    return NULL;
}

/* Rank r of world ns has identity: into the index, if key is ns#r. */
static void index_key(struct mqd_job *job, const char *key, int identity)
{
    const char *hash = strrchr(key, '#');
    long r = 0;
    if (!hash || hash == key || !hash[1] || job->worlds_broken)
        return;
    if (hash[1] == '0' && hash[2])
        return; /* not a rank as keys write one: the table alone has it */
    for (const char *d = hash + 1; *d; d++) {
        if (*d < '0' || *d > '9' || r > MQD_MAX_COMM_SIZE)
            return;
        r = r * 10 + (*d - '0');
    }
    if (r > MQD_MAX_COMM_SIZE)
        return;
    size_t len = (size_t)(hash - key);
    struct mqd_job_world *w = world_named(job, key, len);
    if (!w) {
        if (job->nworlds == job->worlds_cap) {
            int nc = job->worlds_cap ? job->worlds_cap * 2 : 4;
            struct mqd_job_world *nw = mqd_calloc((size_t)nc, sizeof *nw);
            if (!nw) {
                job->worlds_broken = 1;
                return;
            }
            if (job->nworlds)
                memcpy(nw, job->worlds, (size_t)job->nworlds * sizeof *nw);
            mqd_free(job->worlds);
            job->worlds = nw;
            job->worlds_cap = nc;
        }
        w = &job->worlds[job->nworlds++];
        memset(w, 0, sizeof *w);
        memcpy(w->name, key, len);
    }
    if (r >= w->n) {
        long nn = w->n ? w->n : 64;
        while (nn <= r)
            nn *= 2;
        int *ni = mqd_malloc((size_t)nn * sizeof *ni);
        if (!ni) {
            job->worlds_broken = 1;
            return;
        }
        for (long i = 0; i < nn; i++)
            ni[i] = i < w->n ? w->identity[i] : -1;
        mqd_free(w->identity);
        w->identity = ni;
        w->n = nn;
    }
    w->identity[r] = identity;
}

struct mqd_job *mqd__job_of(struct mqd_process *p)
{
    /* Found once: a process's job is the same for all its life (the
     * debugger destroys the job's information after every process's), and
     * each member of each communicator asks (two callbacks a time). */
    if (p->job || !mqd__mpi2() || !p->cb->mqs_get_process_job_fp)
        return p->job;
    mqs_job *job = p->cb->mqs_get_process_job_fp(p->process);
    p->job = job ? (struct mqd_job *)mqd__basic()->mqs_get_job_info_fp(job) : NULL;
    return p->job;
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

int mqd_job_identity_in(struct mqd_process *p, const char *world, long rank, long *identity)
{
    struct mqd_job *job = mqd__job_of(p);
    if (!job) {
        *identity = -1;
        return 1;
    }
    const struct mqd_job_world *w;
    if (job->worlds_broken || rank < 0 || rank > MQD_MAX_COMM_SIZE ||
        !(w = world_named(job, world, strlen(world))))
        return 0;
    *identity = rank < w->n ? w->identity[rank] : -1;
    return 1;
}

int mqd_job_identities_in(struct mqd_process *p, const char *world, long n, long *out)
{
    struct mqd_job *job = mqd__job_of(p);
    const struct mqd_job_world *w = NULL;
    if (job && (job->worlds_broken || n > MQD_MAX_COMM_SIZE + 1L ||
                !(w = world_named(job, world, strlen(world)))))
        return 0;
    for (long r = 0; r < n; r++)
        out[r] = w && r < w->n ? w->identity[r] : -1;
    return 1;
}

int mqd__job_register(struct mqd_job *job, const char *key, int identity)
{
    int found, at = job_find(job, key, &found);
    if (found) {
        if (job->v[at].identity != identity)
            job->generation++;
        job->v[at].identity = identity;
        index_key(job, job->v[at].key, identity);
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
    index_key(job, job->v[at].key, identity);
    return mqs_ok;
}
