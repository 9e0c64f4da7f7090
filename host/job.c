/*
 * job.c - the ranks of a job, from its launcher.
 *
 * A launcher with debugger support (hydra's mpiexec) describes the job in
 * MPIR_proctable, an array of MPIR_PROCDESC { char *host_name; char
 * *executable_name; int pid; } of MPIR_proctable_size entries; it is
 * stopped only while the table is read.  A launcher without it (a stripped
 * distribution mpiexec, a batch script, mqd-launch) has its ranks found
 * among its descendants: the processes with a rank in their environment.
 * Neither lists the processes the ranks start with MPI_Comm_spawn: they are
 * found among the launcher's descendants too (hydra runs them under a proxy
 * of its own and marks them PMI_SPAWNED), after the launched ranks.
 */
#define _GNU_SOURCE
#include "mqdhost.h"

#include "attach.h"
#include "image.h"
#include "memory.h"
#include "proc.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Is a an ancestor of b? */
static int is_ancestor(pid_t a, pid_t b)
{
    for (int depth = 0; depth < 1024 && b > 1; depth++) {
        b = mqdh_proc_parent(b);
        if (b == a)
            return 1;
    }
    return 0;
}

static int ranks_from_descendants(pid_t launcher, pid_t **pids, int **ranks, char ***hosts,
                                  int *n, char *err, size_t errlen)
{
    pid_t *desc;
    int ndesc, count = 0, rc;
    if ((rc = mqdh_proc_descendants(launcher, &desc, &ndesc)) != 0) {
        snprintf(err, errlen, "cannot list the processes under %d: %s", (int)launcher,
                 strerror(-rc));
        return MQDH_E_JOB;
    }
    /* Slot r holds the process with rank r; of a process and its
     * descendant with the same rank (a wrapper script and the program it
     * runs), the descendant. */
    int cap = 0;
    pid_t *by_rank = NULL;
    for (int i = 0; i < ndesc; i++) {
        pid_t spawner;
        int r = mqdh_proc_env_rank(desc[i]);
        if (r < 0 || mqdh_proc_world(desc[i], &spawner) != 0)
            continue; /* not an MPI process, or a spawned one (add_spawned) */
        if (r >= cap) {
            int nc = r + 1 > 2 * cap ? r + 1 : 2 * cap;
            pid_t *nb = realloc(by_rank, (size_t)nc * sizeof *nb);
            if (!nb) {
                free(by_rank);
                free(desc);
                snprintf(err, errlen, "out of memory");
                return MQDH_E_NOMEM;
            }
            memset(nb + cap, 0, (size_t)(nc - cap) * sizeof *nb);
            by_rank = nb;
            cap = nc;
        }
        if (by_rank[r] && !is_ancestor(by_rank[r], desc[i])) {
            if (is_ancestor(desc[i], by_rank[r]))
                continue;
            snprintf(err, errlen, "processes %d and %d under %d both have rank %d: more than "
                     "one job runs under this process; give its mpiexec, or the ranks with "
                     "--pid", (int)by_rank[r], (int)desc[i], (int)launcher, r);
            free(by_rank);
            free(desc);
            return MQDH_E_JOB;
        }
        by_rank[r] = desc[i];
        if (r + 1 > count)
            count = r + 1;
    }
    free(desc);
    if (count == 0) {
        snprintf(err, errlen, "process %d has no MPIR_proctable and no descendant with an MPI "
                 "rank in its environment: not an MPI launcher, or its job has not started",
                 (int)launcher);
        free(by_rank);
        return MQDH_E_JOB;
    }
    for (int r = 0; r < count; r++) {
        if (!by_rank[r]) {
            snprintf(err, errlen, "no process under %d has rank %d (ranks up to %d were "
                     "found): the job spans other hosts, or is still starting", (int)launcher,
                     r, count - 1);
            free(by_rank);
            return MQDH_E_JOB;
        }
    }
    char hostname[256] = "";
    gethostname(hostname, sizeof hostname - 1);
    *pids = by_rank;
    *ranks = calloc((size_t)count, sizeof **ranks);
    *hosts = calloc((size_t)count, sizeof **hosts);
    if (!*ranks || !*hosts) {
        mqdh_job_free(*pids, *ranks, *hosts, 0);
        *pids = NULL;
        *ranks = NULL;
        *hosts = NULL;
        snprintf(err, errlen, "out of memory");
        return MQDH_E_NOMEM;
    }
    for (int r = 0; r < count; r++) {
        (*ranks)[r] = r;
        (*hosts)[r] = hostname[0] ? strdup(hostname) : NULL;
    }
    *n = count;
    return MQDH_OK;
}

struct spawned {
    pid_t pid;
    int world, rank;
};

static int cmp_spawned(const void *a, const void *b)
{
    const struct spawned *x = a, *y = b;
    unsigned wx = (unsigned)x->world, wy = (unsigned)y->world; /* unnumbered (-2) last */
    if (wx != wy)
        return wx < wy ? -1 : 1;
    if (x->rank != y->rank)
        return x->rank - y->rank;
    return (x->pid > y->pid) - (x->pid < y->pid);
}

/*
 * Append to the job's n processes those its ranks spawned (MPI_Comm_spawn):
 * the launcher's descendants that hydra marks as spawned, by world and
 * rank.  No launcher table lists them.  Of a process and its descendant
 * with the same rank and world (a wrapper and the program it runs), the
 * descendant.  Returns MQDH_OK (none is not an error) or MQDH_E_NOMEM.
 */
static int add_spawned(pid_t launcher, pid_t **pids, int **ranks, char ***hosts, int *n)
{
    pid_t *desc;
    int ndesc;
    if (mqdh_proc_descendants(launcher, &desc, &ndesc) != 0 || ndesc == 0)
        return MQDH_OK; /* the launched ranks are still dumped */
    struct spawned *sp = calloc((size_t)ndesc, sizeof *sp);
    if (!sp) {
        free(desc);
        return MQDH_E_NOMEM;
    }
    int m = 0;
    for (int i = 0; i < ndesc; i++) {
        pid_t spawner;
        int w = mqdh_proc_world(desc[i], &spawner), r = mqdh_proc_env_rank(desc[i]);
        if (r >= 0 && (w > 0 || w == -2))
            sp[m++] = (struct spawned){desc[i], w == -2 ? -2 : w, r};
    }
    free(desc);
    int keep = 0;
    for (int i = 0; i < m; i++) {
        int wrapper = 0;
        for (int j = 0; j < m && !wrapper; j++)
            wrapper = j != i && sp[j].rank == sp[i].rank && sp[j].world == sp[i].world &&
                      is_ancestor(sp[i].pid, sp[j].pid);
        if (!wrapper)
            sp[keep++] = sp[i];
    }
    m = keep;
    if (m == 0) {
        free(sp);
        return MQDH_OK;
    }
    qsort(sp, (size_t)m, sizeof *sp, cmp_spawned);
    pid_t *np = realloc(*pids, (size_t)(*n + m) * sizeof *np);
    if (np)
        *pids = np;
    int *nr = np ? realloc(*ranks, (size_t)(*n + m) * sizeof *nr) : NULL;
    if (nr)
        *ranks = nr;
    char **nh = nr ? realloc(*hosts, (size_t)(*n + m) * sizeof *nh) : NULL;
    if (!nh) {
        free(sp);
        return MQDH_E_NOMEM;
    }
    *hosts = nh;
    char hostname[256] = "";
    gethostname(hostname, sizeof hostname - 1);
    for (int i = 0; i < m; i++) {
        (*pids)[*n] = sp[i].pid;
        (*ranks)[*n] = sp[i].rank;
        (*hosts)[*n] = hostname[0] ? strdup(hostname) : NULL;
        (*n)++;
    }
    free(sp);
    return MQDH_OK;
}

/* The ranks the launcher started: its MPIR_proctable, else its descendants. */
static int launched_ranks(pid_t launcher, pid_t **pids, int **ranks, char ***hosts, int *n,
                          char *err, size_t errlen)
{
    struct mqdh_attach att;
    struct mqdh_image img;
    struct mqdh_mem mem;
    uint64_t table_sym, size_sym, table;
    int32_t count = 0;
    int rc = MQDH_E_JOB;

    *pids = NULL;
    *ranks = NULL;
    *hosts = NULL;
    *n = 0;
    if (mqdh_attach(&att, launcher, err, errlen) != 0)
        return MQDH_E_ATTACH;
    mqdh_mem_init(&mem, launcher);
    if (mqdh_image_open_pid(&img, launcher, err, errlen) != 0) {
        mqdh_detach(&att);
        return MQDH_E_IMAGE;
    }
    if (mqdh_image_symbol(&img, "MPIR_proctable", 0, &table_sym, NULL) != 0 ||
        mqdh_image_symbol(&img, "MPIR_proctable_size", 0, &size_sym, NULL) != 0) {
        mqdh_image_close(&img);
        mqdh_mem_fini(&mem);
        mqdh_detach(&att);
        return ranks_from_descendants(launcher, pids, ranks, hosts, n, err, errlen);
    }
    int wide = img.elf_class == 2, be = img.big_endian;
    uint64_t word;
    if (mqdh_mem_read_word(&mem, size_sym, 4, be, &word) != 0) {
        snprintf(err, errlen, "cannot read MPIR_proctable_size of process %d", (int)launcher);
        goto out;
    }
    count = (int32_t)(uint32_t)word;
    if (mqdh_mem_read_word(&mem, table_sym, wide ? 8 : 4, be, &table) != 0) {
        snprintf(err, errlen, "cannot read MPIR_proctable of process %d", (int)launcher);
        goto out;
    }
    if (count <= 0 || count > 1 << 20 || !table) {
        snprintf(err, errlen, "process %d's MPIR_proctable is empty (size %d): the job has not "
                 "started its ranks yet", (int)launcher, (int)count);
        goto out;
    }
    size_t esize = wide ? 24 : 12;
    *pids = calloc((size_t)count, sizeof **pids);
    *ranks = calloc((size_t)count, sizeof **ranks);
    *hosts = calloc((size_t)count, sizeof **hosts);
    if (!*pids || !*ranks || !*hosts) {
        rc = MQDH_E_NOMEM;
        snprintf(err, errlen, "out of memory");
        goto out;
    }
    for (int i = 0; i < count; i++) {
        unsigned char e[24];
        uint64_t host;
        int32_t pid;
        if (mqdh_mem_read(&mem, table + (uint64_t)i * esize, e, esize) != 0) {
            snprintf(err, errlen, "cannot read MPIR_proctable[%d] of process %d", i,
                     (int)launcher);
            goto out;
        }
        host = mqdh_target_word(e, wide ? 8 : 4, be);
        pid = (int32_t)(uint32_t)mqdh_target_word(e + (wide ? 16 : 8), 4, be);
        (*pids)[i] = pid;
        (*ranks)[i] = i;
        if (pid <= 0) {
            snprintf(err, errlen, "MPIR_proctable[%d] of process %d holds pid %d: the table is "
                     "corrupt", i, (int)launcher, (int)pid);
            goto out;
        }
        char name[256];
        if (host && mqdh_mem_read_string(&mem, host, name, sizeof name) == 0)
            (*hosts)[i] = strdup(name);
    }
    *n = count;
    rc = MQDH_OK;
out:
    mqdh_image_close(&img);
    mqdh_mem_fini(&mem);
    mqdh_detach(&att);
    if (rc != MQDH_OK) {
        mqdh_job_free(*pids, *ranks, *hosts, count > 0 ? count : 0);
        *pids = NULL;
        *ranks = NULL;
        *hosts = NULL;
    }
    return rc;
}

int mqdh_job_ranks(pid_t launcher, pid_t **pids, int **ranks, char ***hosts, int *n, char *err,
                   size_t errlen)
{
    int rc = launched_ranks(launcher, pids, ranks, hosts, n, err, errlen);
    if (rc == MQDH_OK && (rc = add_spawned(launcher, pids, ranks, hosts, n)) != MQDH_OK) {
        snprintf(err, errlen, "out of memory");
        mqdh_job_free(*pids, *ranks, *hosts, *n);
        *pids = NULL;
        *ranks = NULL;
        *hosts = NULL;
        *n = 0;
    }
    return rc;
}

void mqdh_job_free(pid_t *pids, int *ranks, char **hosts, int n)
{
    if (hosts)
        for (int i = 0; i < n; i++)
            free(hosts[i]);
    free(hosts);
    free(pids);
    free(ranks);
}
