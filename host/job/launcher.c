/*
 * launcher.c - the ranks of a job, from its launcher.
 *
 * A launcher with debugger support (hydra's mpiexec) describes the job in
 * MPIR_proctable, an array of MPIR_PROCDESC { char *host_name; char
 * *executable_name; int pid; } of MPIR_proctable_size entries; it is
 * stopped only while the table is read.  A launcher without it (a stripped
 * distribution mpiexec, a batch script, mqd-launch) has its ranks found
 * among its descendants: the processes with a rank in their environment
 * (procjob.c), and so does one whose table is empty.  Open MPI 5's prterun
 * is one of them: PRRTE keeps no table unless the MPIR shim runs it.
 * Neither lists the processes the ranks start with MPI_Comm_spawn: they are
 * found among the launcher's descendants too (hydra runs them under a proxy
 * of its own and marks them PMI_SPAWNED), after the launched ranks.
 */
#define _GNU_SOURCE
#include "mqdhost.h"

#include "target/attach.h"
#include "target/files.h"
#include "target/image.h"
#include "target/memory.h"
#include "target/proc.h"
#include "job/procjob.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Is a an ancestor of b? */
static int is_ancestor(pid_t a, pid_t b)
{
    for (int depth = 0; depth < 1024 && b > 1; depth++) {
        b = mqdh__proc_parent(b);
        if (b == a)
            return 1;
    }
    return 0;
}

/* An MPI process under the launcher, as its environment describes it. */
struct member {
    pid_t pid;
    int rank, world; /* world: -2 spawned by an unnumbered spawn */
};

static int cmp_member(const void *a, const void *b)
{
    const struct member *x = a, *y = b;
    unsigned wx = (unsigned)x->world, wy = (unsigned)y->world; /* unnumbered (-2) last */
    if (wx != wy)
        return wx < wy ? -1 : 1;
    if (x->rank != y->rank)
        return x->rank - y->rank;
    return (x->pid > y->pid) - (x->pid < y->pid);
}

/*
 * The MPI processes under launcher: its descendants with a rank in their
 * environment (each environment read once), by world (the launched one
 * first), rank and pid; but not the ranks the launcher's table lists
 * (listed[0..nlisted-1], its world 0) nor what descends from them.  Of a
 * process and its descendant with the same world and rank (a wrapper
 * script and the program it runs), only the descendant.  0, or a negative
 * errno.
 */
static int job_members(pid_t launcher, const pid_t *listed, int nlisted, struct member **out,
                       int *n)
{
    pid_t *desc;
    int ndesc, k = 0;
    *out = NULL;
    *n = 0;
    int rc = mqdh__proc_descendants_below(launcher, listed, nlisted, &desc, &ndesc);
    if (rc || ndesc == 0)
        return rc;
    struct member *m = malloc((size_t)ndesc * sizeof *m);
    char *wrapper = calloc((size_t)ndesc, 1);
    if (!m || !wrapper) {
        free(m);
        free(wrapper);
        free(desc);
        return -ENOMEM;
    }
    for (int i = 0; i < ndesc; i++) {
        int table = 0;
        for (int t = 0; t < nlisted && !table; t++)
            table = listed[t] == desc[i];
        int world, rank = table ? -1 : mqdh__proc_env_rank(desc[i], &world, NULL, NULL);
        if (rank >= 0 && world != -1)
            m[k++] = (struct member){desc[i], rank, world};
    }
    free(desc);
    qsort(m, (size_t)k, sizeof *m, cmp_member);
    for (int s = 0, e; s < k; s = e) {
        for (e = s + 1; e < k && m[e].world == m[s].world && m[e].rank == m[s].rank; e++)
            ;
        for (int i = s; i < e; i++)
            for (int j = s; j < e && !wrapper[i]; j++)
                wrapper[i] = j != i && is_ancestor(m[i].pid, m[j].pid);
    }
    int keep = 0;
    for (int i = 0; i < k; i++)
        if (!wrapper[i])
            m[keep++] = m[i];
    free(wrapper);
    *out = m;
    *n = keep;
    return 0;
}

/* Room for more entries in the caller's three arrays of *n; MQDH_E_NOMEM. */
static int grow(pid_t **pids, int **ranks, char ***hosts, int n, int more)
{
    pid_t *np = realloc(*pids, (size_t)(n + more) * sizeof *np);
    if (np)
        *pids = np;
    int *nr = np ? realloc(*ranks, (size_t)(n + more) * sizeof *nr) : NULL;
    if (nr)
        *ranks = nr;
    char **nh = nr ? realloc(*hosts, (size_t)(n + more) * sizeof *nh) : NULL;
    if (nh)
        *hosts = nh;
    return nh ? MQDH_OK : MQDH_E_NOMEM;
}

/* Append members m[0..k-1], on this host, to the caller's arrays of *n. */
static int append(const struct member *m, int k, pid_t **pids, int **ranks, char ***hosts,
                  int *n)
{
    if (k == 0)
        return MQDH_OK;
    if (grow(pids, ranks, hosts, *n, k) != MQDH_OK)
        return MQDH_E_NOMEM;
    char hostname[256] = "";
    gethostname(hostname, sizeof hostname - 1);
    for (int i = 0; i < k; i++) {
        (*pids)[*n] = m[i].pid;
        (*ranks)[*n] = m[i].rank;
        (*hosts)[*n] = hostname[0] ? strdup(hostname) : NULL;
        (*n)++;
    }
    return MQDH_OK;
}

/*
 * The ranks in the launcher's MPIR_proctable (its address at table_sym,
 * its size at size_sym in the image im), read through mem: each entry's
 * pid and host, its index its rank.  MQDH_OK and the arrays of *n; else
 * MQDH_E_JOB (err says why) or MQDH_E_NOMEM, with them NULL.
 */
static int read_proctable(pid_t launcher, const struct mqdh__image *im, struct mqdh__mem *mem,
                          uint64_t table_sym, uint64_t size_sym, pid_t **pids, int **ranks,
                          char ***hosts, int *n, char *err, size_t errlen)
{
    uint64_t table, word;
    int32_t count = 0;
    int rc = MQDH_E_JOB;
    int wide = im->elf_class == 2, be = im->big_endian;
    if (mqdh__mem_read_word(mem, size_sym, 4, be, &word) != 0) {
        snprintf(err, errlen, "cannot read MPIR_proctable_size of process %d", (int)launcher);
        goto out;
    }
    count = (int32_t)(uint32_t)word;
    if (mqdh__mem_read_word(mem, table_sym, wide ? 8 : 4, be, &table) != 0) {
        snprintf(err, errlen, "cannot read MPIR_proctable of process %d", (int)launcher);
        goto out;
    }
    if (count == 0 || !table) {
        /* Empty: *n stays 0, and the caller looks in /proc. */
        snprintf(err, errlen, "process %d's MPIR_proctable is empty (size %d): the job has not "
                 "started its ranks yet", (int)launcher, (int)count);
        count = 0;
        rc = MQDH_OK;
        goto out;
    }
    if (count < 0 || count > 1 << 20) {
        snprintf(err, errlen, "process %d's MPIR_proctable has %d entries: the table is "
                 "corrupt", (int)launcher, (int)count);
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
        if (mqdh__mem_read(mem, table + (uint64_t)i * esize, e, esize) != 0) {
            snprintf(err, errlen, "cannot read MPIR_proctable[%d] of process %d", i,
                     (int)launcher);
            goto out;
        }
        host = mqdh__target_word(e, wide ? 8 : 4, be);
        pid = (int32_t)(uint32_t)mqdh__target_word(e + (wide ? 16 : 8), 4, be);
        (*pids)[i] = pid;
        (*ranks)[i] = i;
        if (pid <= 0) {
            snprintf(err, errlen, "MPIR_proctable[%d] of process %d holds pid %d: the table is "
                     "corrupt", i, (int)launcher, (int)pid);
            goto out;
        }
        /* A name that cannot be read, or is too long for one, is no host:
         * never NULL, which would mean this one (its pid attached here). */
        char name[256];
        if (host && mqdh__mem_read_string(mem, host, name, sizeof name) != 0)
            snprintf(name, sizeof name, "(MPIR_proctable[%d].host_name unreadable or over 255 "
                     "bytes)", i);
        if (host && !((*hosts)[i] = strdup(name))) {
            rc = MQDH_E_NOMEM;
            snprintf(err, errlen, "out of memory");
            goto out;
        }
    }
    *n = count;
    rc = MQDH_OK;
out:
    if (rc != MQDH_OK || count == 0) {
        mqdh_job_free(*pids, *ranks, *hosts, count > 0 ? count : 0);
        *pids = NULL;
        *ranks = NULL;
        *hosts = NULL;
    }
    return rc;
}

/*
 * The launched ranks from /proc (procjob.c), for a launcher whose
 * MPIR_proctable is missing or empty (why: which), on this host, appended
 * to the caller's arrays of *n; how the ranks were found into how[howlen].
 */
static int ranks_from_proc(pid_t launcher, const char *why, pid_t **pids, int **ranks,
                           char ***hosts, int *n, char *how, size_t howlen, char *err,
                           size_t errlen)
{
    struct mqdh__pj_job job;
    int rc = mqdh__pj_find("/proc", launcher, &job, err, errlen);
    if (rc != MQDH_OK)
        return rc;
    struct member *m = malloc((size_t)job.nranks * sizeof *m);
    if (!m) {
        mqdh__pj_free(&job);
        snprintf(err, errlen, "out of memory");
        return MQDH_E_NOMEM;
    }
    for (int i = 0; i < job.nranks; i++)
        m[i] = (struct member){job.ranks[i].pid, job.ranks[i].rank, job.ranks[i].world};
    rc = append(m, job.nranks, pids, ranks, hosts, n);
    free(m);
    if (rc != MQDH_OK)
        snprintf(err, errlen, "out of memory");
    else if (how)
        snprintf(how, howlen, "%s; %s", why, job.note);
    mqdh__pj_free(&job);
    return rc;
}

/* The ranks the launcher started: its MPIR_proctable, else (none, or an
 * empty one) from /proc. */
static int launched_ranks(pid_t launcher, pid_t **pids, int **ranks, char ***hosts, int *n,
                          char *how, size_t howlen, char *err, size_t errlen)
{
    struct mqdh__attach att;
    struct mqdh__image img;
    struct mqdh__mem mem;
    uint64_t table_sym, size_sym;

    *pids = NULL;
    *ranks = NULL;
    *hosts = NULL;
    *n = 0;
    if (mqdh__attach(&att, launcher, err, errlen) != 0)
        return MQDH_E_ATTACH;
    struct mqdh__files *files = mqdh__files_new();
    if (!files) {
        mqdh__detach(&att);
        snprintf(err, errlen, "out of memory");
        return MQDH_E_NOMEM;
    }
    mqdh__mem_init(&mem, launcher);
    /* Hydra's table is its executable's own: its libraries are opened
     * only when the executable has none (Open MPI's is libopen-rte's). */
    int table = 0, rc = MQDH_OK;
    for (int whole = 0; whole <= 1 && !table; whole++) {
        int opened = whole ? mqdh__image_open_pid(&img, launcher, files, err, errlen)
                           : mqdh__image_open_exe(&img, launcher, files, err, errlen);
        if (opened != 0) {
            if (whole)
                rc = MQDH_E_IMAGE;
            continue;
        }
        table = mqdh__image_symbol(&img, "MPIR_proctable", 0, &table_sym, NULL) == 0 &&
                mqdh__image_symbol(&img, "MPIR_proctable_size", 0, &size_sym, NULL) == 0;
        if (table)
            rc = read_proctable(launcher, &img, &mem, table_sym, size_sym, pids, ranks, hosts,
                                n, err, errlen);
        mqdh__image_close(&img);
    }
    mqdh__files_free(files);
    mqdh__mem_fini(&mem);
    mqdh__detach(&att);
    if (rc != MQDH_OK || *n > 0)
        return rc;
    char raw[64], name[160], why[400];
    if (mqdh__proc_name(launcher, raw, sizeof raw) != 0)
        snprintf(raw, sizeof raw, "process");
    mqdh_escape(name, sizeof name, raw); /* its own choice */
    if (!table)
        snprintf(why, sizeof why, "%s %d has no MPIR_proctable%s", name, (int)launcher,
                 strcmp(name, "prterun") == 0 || strcmp(name, "prted") == 0 ||
                         strcmp(name, "prte") == 0
                     ? " (PRRTE, Open MPI 5's runtime, keeps none unless the MPIR shim "
                       "runs it)"
                     : "");
    else
        snprintf(why, sizeof why, "%s %d's MPIR_proctable is empty", name, (int)launcher);
    char tabled[512], found[1024];
    snprintf(tabled, sizeof tabled, "%s", err); /* the empty table's message */
    rc = ranks_from_proc(launcher, why, pids, ranks, hosts, n, how, howlen, err, errlen);
    if (rc == MQDH_E_JOB && table) {
        snprintf(found, sizeof found, "%s", err);
        snprintf(err, errlen, "%s; and in /proc: %s", tabled, found);
    }
    return rc;
}

int mqdh_job_ranks_how(pid_t launcher, pid_t **pids, int **ranks, char ***hosts, int *n,
                       char *how, size_t howlen, char *err, size_t errlen)
{
    if (how && howlen)
        how[0] = '\0';
    /* The spawned processes, which no table lists, from the launcher's
     * descendants either way: the ones the table lists are not read again. */
    struct member *m = NULL;
    int nm = 0;
    int rc = launched_ranks(launcher, pids, ranks, hosts, n, how, howlen, err, errlen);
    if (rc == MQDH_OK)
        (void)job_members(launcher, *pids, *n, &m, &nm); /* none if they cannot be listed */
    if (rc == MQDH_OK) {
        int first = 0; /* the spawned: after world 0 */
        while (first < nm && m[first].world == 0)
            first++;
        if ((rc = append(m + first, nm - first, pids, ranks, hosts, n)) != MQDH_OK)
            snprintf(err, errlen, "out of memory");
    }
    free(m);
    if (rc != MQDH_OK) {
        mqdh_job_free(*pids, *ranks, *hosts, *n);
        *pids = NULL;
        *ranks = NULL;
        *hosts = NULL;
        *n = 0;
        if (how && howlen)
            how[0] = '\0';
    }
    return rc;
}

int mqdh_job_ranks(pid_t launcher, pid_t **pids, int **ranks, char ***hosts, int *n, char *err,
                   size_t errlen)
{
    return mqdh_job_ranks_how(launcher, pids, ranks, hosts, n, NULL, 0, err, errlen);
}

int mqdh_job_owner(pid_t launcher, uid_t *uid, char *err, size_t errlen)
{
    if (launcher <= 0 || mqdh__proc_uid(launcher, uid) != 0) {
        snprintf(err, errlen, "process %d does not exist", (int)launcher);
        return MQDH_E_JOB;
    }
    return MQDH_OK;
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

/* ---------------------------------------------------------------- listing */

/* Launchers a user would name with --job, by command name.  PRRTE's prted
 * is one: with no MPIR_proctable in prterun, a node's ranks are found
 * under its own daemon (procjob.c), whose parent is nothing of the job's. */
static int is_launcher(const char *name)
{
    static const char *const names[] = {"mpiexec", "mpiexec.hydra", "mpiexec.mpich",
                                        "mpirun",  "mpirun.mpich",  "orterun",
                                        "prterun", "prte",          "prted",
                                        "srun",    "mqd-launch"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (strcmp(name, names[i]) == 0)
            return 1;
    return 0;
}

/* Process managers' per-node daemons, whose parent launched the job. */
static int is_proxy(const char *name)
{
    return strncmp(name, "hydra_pmi_proxy", 15) == 0 || strcmp(name, "orted") == 0 ||
           strcmp(name, "slurmstepd") == 0;
}

/* The launcher of MPI process pid (see mqdh_list_jobs); *depth is how far
 * below init pid is, to tell a wrapper from the program it runs. */
static pid_t launcher_of(pid_t pid, int *depth)
{
    pid_t launcher = -1, proxy_parent = -1, up = pid;
    char name[64];
    *depth = 0;
    for (int d = 0; d < 1024 && (up = mqdh__proc_parent(up)) > 1; d++) {
        (*depth)++;
        if (mqdh__proc_name(up, name, sizeof name) != 0)
            continue;
        if (is_launcher(name) && launcher < 0)
            launcher = up; /* the nearest: the mpiexec that holds MPIR_proctable */
        else if (proxy_parent < 0 && is_proxy(name))
            proxy_parent = mqdh__proc_parent(up);
    }
    if (launcher > 0)
        return launcher;
    return proxy_parent > 1 ? proxy_parent : mqdh__proc_parent(pid);
}

struct seen {
    pid_t pid, launcher;
    int rank, world, depth;
};

static int cmp_seen(const void *a, const void *b)
{
    const struct seen *x = a, *y = b;
    if (x->launcher != y->launcher)
        return x->launcher < y->launcher ? -1 : 1;
    if (x->world != y->world)
        return x->world - y->world;
    if (x->rank != y->rank)
        return x->rank - y->rank;
    return y->depth - x->depth; /* the program under its wrappers first */
}

int mqdh_list_jobs(struct mqdh_job_info **out, int *nout)
{
    *out = NULL;
    *nout = 0;
    pid_t *all = NULL;
    int nall = 0;
    if (mqdh__proc_descendants(1, &all, &nall) != 0)
        return MQDH_E_NOMEM;
    struct seen *s = calloc((size_t)nall + 1, sizeof *s);
    if (!s) {
        free(all);
        return MQDH_E_NOMEM;
    }
    int n = 0;
    for (int i = 0; i < nall; i++) {
        int world, rank = mqdh__proc_env_rank(all[i], &world, NULL, NULL);
        if (rank < 0)
            continue;
        s[n].pid = all[i];
        s[n].rank = rank;
        s[n].world = world;
        s[n].launcher = launcher_of(all[i], &s[n].depth);
        if (s[n].launcher > 1)
            n++;
    }
    free(all);
    qsort(s, (size_t)n, sizeof *s, cmp_seen);
    struct mqdh_job_info *jobs = calloc((size_t)n + 1, sizeof *jobs);
    int nj = 0, rc = MQDH_OK;
    for (int i = 0; jobs && i < n;) {
        struct mqdh_job_info *j = &jobs[nj++];
        j->launcher = s[i].launcher;
        j->launcher_cmd = mqdh__proc_cmdline(j->launcher);
        char exe[64], path[4096];
        snprintf(exe, sizeof exe, "/proc/%d/exe", (int)s[i].pid);
        ssize_t len = readlink(exe, path, sizeof path - 1);
        if (len > 0) {
            path[len] = '\0';
            j->program = strdup(path);
        } else {
            j->program = mqdh__proc_cmdline(s[i].pid);
        }
        char dir[32];
        struct stat st;
        snprintf(dir, sizeof dir, "/proc/%d", (int)j->launcher);
        j->uid = stat(dir, &st) == 0 ? st.st_uid : (uid_t)-1;
        int k = i;
        for (; k < n && s[k].launcher == j->launcher; k++) /* one per world and rank */
            if (k == i || s[k].world != s[k - 1].world || s[k].rank != s[k - 1].rank)
                j->nranks++;
        i = k;
    }
    free(s);
    if (!jobs) {
        rc = MQDH_E_NOMEM;
        nj = 0;
    }
    *out = jobs;
    *nout = nj;
    return rc;
}

void mqdh_jobs_free(struct mqdh_job_info *jobs, int n)
{
    for (int i = 0; jobs && i < n; i++) {
        free(jobs[i].launcher_cmd);
        free(jobs[i].program);
    }
    free(jobs);
}
