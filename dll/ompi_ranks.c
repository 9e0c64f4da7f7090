/*
 * ompi_ranks.c - processes in Open MPI: a group's members (ompi_group_t's
 * array of ompi_proc_t pointers, or sentinels standing for processes not
 * made yet), each named by its process name (jobid, vpid), turned into
 * global ranks or, in an MPI-2 job, the debugger's identities through the
 * keys that name processes across jobs.  See ompi.h.
 */
#include "ompi.h"

#include <stdio.h>
#include <string.h>

/* ---------------------------------------------------------------- names */

/* The MPI-2 key of the process named (jobid, vpid): what the DLL files
 * every process under and looks every peer up by. */
#define WORLD_FORMAT "ompi-%08x" /* a job's keys' world: what comes before '#' */

static void make_key(char out[MQD_MAX_KEY], uint32_t jobid, uint32_t vpid)
{
    snprintf(out, MQD_MAX_KEY, WORLD_FORMAT "#%u", (unsigned)jobid, (unsigned)vpid);
}

/* The world of job jobid's keys. */
static void make_world(char out[MQD_MAX_KEY], uint32_t jobid)
{
    snprintf(out, MQD_MAX_KEY, WORLD_FORMAT, (unsigned)jobid);
}

/*
 * The name of the process a group's entry points at: a sentinel (bit 0
 * set) holds it within (ompi/proc/proc.h:413-446: on 64-bit targets the
 * local jobid in bits 1-15, the job family in 16-31, the vpid in 32-63,
 * ORTE_CONSTRUCT_JOBID, orte/util/name_fns.h:94-101; on 32-bit ones the
 * vpid above bit 0, of this process's job), else the ompi_proc_t's
 * proc_name.
 */
static int proc_name(struct mqd_process *p, const struct ompi_process *bp, mqs_taddr_t proc,
                     uint32_t *jobid, uint32_t *vpid)
{
    const struct ompi_image *b = ompi__image(p);
    if (proc & OMPI_PROC_SENTINEL) {
        uint64_t s = (uint64_t)proc;
        if (mqd_sizes(p)->pointer_size == 8) {
            *jobid = (uint32_t)(((s >> 16) & 0xffffu) << 16 | ((s >> 1) & 0x7fffu));
            *vpid = (uint32_t)(s >> 32);
        } else {
            if (!bp->has_name)
                return MQD_ERR_BAD_VALUE;
            *jobid = bp->jobid;
            *vpid = (uint32_t)(s >> 1);
        }
        return mqs_ok;
    }
    /* Both halves of the name in one read (they are adjacent, jobid then
     * vpid: opal/dss/dss_types.h:46-49). */
    int lo = b->off[F_PROC_JOBID] < b->off[F_PROC_VPID] ? b->off[F_PROC_JOBID]
                                                        : b->off[F_PROC_VPID];
    int hi = b->off[F_PROC_JOBID] ^ b->off[F_PROC_VPID] ^ lo;
    unsigned char v[16];
    if (hi - lo + 4 > (int)sizeof v)
        return MQD_ERR_BAD_LAYOUT;
    int rc = mqd_read(p, proc + (mqs_taddr_t)lo, v, hi - lo + 4);
    if (rc != mqs_ok)
        return rc;
    *jobid = (uint32_t)mqd_uint(p, v, b->off[F_PROC_JOBID] - lo, 4);
    *vpid = (uint32_t)mqd_uint(p, v, b->off[F_PROC_VPID] - lo, 4);
    return mqs_ok;
}

void ompi__read_own_name(struct mqd_process *p, struct ompi_process *bp)
{
    mqs_taddr_t proc;
    bp->has_name = 0;
    bp->key[0] = '\0';
    if (!bp->local_proc || mqd_read_ptr(p, bp->local_proc, &proc) != mqs_ok || !proc ||
        (proc & OMPI_PROC_SENTINEL) ||
        proc_name(p, bp, proc, &bp->jobid, &bp->vpid) != mqs_ok)
        return;
    bp->has_name = 1;
    make_key(bp->key, bp->jobid, bp->vpid);
}

int mqd_be_process_key(struct mqd_process *p, char *key, int len)
{
    const struct ompi_process *bp = mqd_process_backend(p);
    snprintf(key, (size_t)len, "%s", bp ? bp->key : "");
    return mqs_ok;
}

/* ---------------------------------------------------------------- the cache */

/* The global rank of each process seen in one read of the communicator
 * list, by its ompi_proc_t's address (open addressing; 0 is free). */
struct ompi_rank_cache {
    int n, cap;
    mqs_taddr_t *addr;
    long *global;
    int use_job; /* this process is in the debugger's job table (MPI-2) */
    /* The world of the last job a member was of ("" none yet): a group's
     * members are nearly all of one job, each looked up by its world and
     * vpid (job.c's index) where a key would be made and searched for. */
    uint32_t world_jobid;
    char world[MQD_MAX_KEY];
};

struct ompi_rank_cache *ompi__rank_cache_new(struct mqd_process *p)
{
    const struct ompi_process *bp = mqd_process_backend(p);
    struct ompi_rank_cache *c = mqd_calloc(1, sizeof *c);
    if (c && bp->has_name)
        c->use_job = mqd_job_identity(p, bp->key) >= 0;
    return c;
}

void ompi__rank_cache_free(struct ompi_rank_cache *c)
{
    if (!c)
        return;
    mqd_free(c->addr);
    mqd_free(c->global);
    mqd_free(c);
}

static unsigned slot_of(mqs_taddr_t a, int cap)
{
    return (unsigned)((a >> 3) * 2654435761u) & (unsigned)(cap - 1);
}

/* Where proc is (or would go) in c: its slot; *found says which. */
static int cache_find(const struct ompi_rank_cache *c, mqs_taddr_t proc, int *found)
{
    unsigned h = slot_of(proc, c->cap);
    while (c->addr[h] && c->addr[h] != proc)
        h = (h + 1) & (unsigned)(c->cap - 1);
    *found = c->addr[h] == proc;
    return (int)h;
}

/* Room for one more entry (the table kept at most half full). */
static int cache_grow(struct ompi_rank_cache *c)
{
    if ((c->n + 1) * 2 <= c->cap)
        return mqs_ok;
    int cap = c->cap ? c->cap * 2 : 64;
    mqs_taddr_t *addr = mqd_calloc((size_t)cap, sizeof *addr);
    long *global = mqd_calloc((size_t)cap, sizeof *global);
    if (!addr || !global) {
        mqd_free(addr);
        mqd_free(global);
        return MQD_ERR_NOMEM;
    }
    struct ompi_rank_cache old = *c;
    c->addr = addr;
    c->global = global;
    c->cap = cap;
    for (int i = 0; i < old.cap; i++) {
        int found, at;
        if (!old.addr[i])
            continue;
        at = cache_find(c, old.addr[i], &found);
        c->addr[at] = old.addr[i];
        c->global[at] = old.global[i];
    }
    mqd_free(old.addr);
    mqd_free(old.global);
    return mqs_ok;
}

/*
 * The global rank of the process at proc (an ompi_proc_t, or a sentinel):
 * in an MPI-2 job the identity the debugger gave the process of that name
 * (-1 if none), else its vpid if it is of this process's job (its rank in
 * MPI_COMM_WORLD: orterun numbers a job's processes by their vpid), -1 if
 * of another.
 */
static int global_of(struct mqd_process *p, struct ompi_rank_cache *c, mqs_taddr_t proc,
                     long *global)
{
    const struct ompi_process *bp = mqd_process_backend(p);
    int found, rc = cache_grow(c);
    if (rc != mqs_ok)
        return rc;
    int at = cache_find(c, proc, &found);
    if (found) {
        *global = c->global[at];
        return mqs_ok;
    }
    uint32_t jobid, vpid;
    if ((rc = proc_name(p, bp, proc, &jobid, &vpid)) != mqs_ok)
        return rc;
    if (c->use_job) {
        if (!c->world[0] || c->world_jobid != jobid) {
            make_world(c->world, jobid);
            c->world_jobid = jobid;
        }
        if (!mqd_job_identity_in(p, c->world, (long)vpid, global)) {
            char key[MQD_MAX_KEY];
            make_key(key, jobid, vpid);
            *global = mqd_job_identity(p, key);
        }
    } else {
        *global = bp->has_name && jobid == bp->jobid && vpid < (uint32_t)MQD_MAX_COMM_SIZE
                      ? (long)vpid
                      : -1;
    }
    c->addr[at] = proc;
    c->global[at] = *global;
    c->n++;
    return mqs_ok;
}

/* ---------------------------------------------------------------- groups */

/* The n members' proc pointers from the array at procs, in chunks, each
 * turned into its global rank into out[0..n-1]. */
static int read_members(struct mqd_process *p, struct ompi_rank_cache *c, mqs_taddr_t procs,
                        long *out, long n)
{
    enum { CHUNK = 256 };
    int ps = mqd_sizes(p)->pointer_size;
    unsigned char buf[CHUNK * 8];
    for (long first = 0; first < n; first += CHUNK) {
        long k = n - first < CHUNK ? n - first : CHUNK;
        int rc = mqd_read(p, procs + (mqs_taddr_t)(first * ps), buf, (int)(k * ps));
        if (rc != mqs_ok)
            return rc;
        for (long i = 0; i < k; i++) {
            mqs_taddr_t proc = mqd_ptr(p, buf, (int)(i * ps));
            if (!proc)
                return MQD_ERR_BAD_VALUE;
            if ((rc = global_of(p, c, proc, &out[first + i])) != mqs_ok)
                return rc;
        }
    }
    return mqs_ok;
}

int ompi__read_group(struct mqd_process *p, struct ompi_rank_cache *c, mqs_taddr_t group,
                     long **out, long *n)
{
    const struct ompi_image *b = ompi__image(p);
    unsigned char buf[512];
    *out = NULL;
    *n = 0;
    if (!group || b->group.len > (int)sizeof buf)
        return MQD_ERR_BAD_VALUE;
    int rc = ompi__read_span(p, group, buf, b->group);
    if (rc != mqs_ok)
        return rc;
    long size = (long)ompi__i32(p, buf, F_GROUP_SIZE);
    mqs_taddr_t procs = ompi__word(p, buf, F_GROUP_PROCS);
    if (size < 0 || size > MQD_MAX_COMM_SIZE || (size > 0 && !procs))
        return MQD_ERR_BAD_VALUE;
    long *g = mqd_malloc((size_t)(size ? size : 1) * sizeof *g);
    if (!g)
        return MQD_ERR_NOMEM;
    if ((rc = read_members(p, c, procs, g, size)) != mqs_ok) {
        mqd_free(g);
        return rc;
    }
    *out = g;
    *n = size;
    return mqs_ok;
}
