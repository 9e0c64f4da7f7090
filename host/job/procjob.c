/*
 * procjob.c - a job's ranks from a /proc-shaped tree, for a launcher that
 * keeps no MPIR_proctable (procjob.h).
 *
 * Open MPI 5's mpirun execs PRRTE's prterun, which keeps no MPIR_proctable
 * unless the MPIR shim runs it.  On its own node prterun starts the ranks
 * itself; on every other node a prted daemon starts that node's.  PMIx
 * gives each rank PMIX_NAMESPACE ("prterun-HOST-PID@1": PRRTE numbers a
 * DVM's jobs after the '@', plm_base_jobid.c, so MPI_Comm_spawn's
 * children get "@2", ...) and PMIX_RANK (OpenPMIx PMIx_server_setup_fork)
 * and nothing that says the job's size: from one node's /proc, whether
 * other nodes hold more ranks cannot be told.
 */
#define _GNU_SOURCE
#include "job/procjob.h"

#include "mqdhost.h"
#include "target/proc.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A process of the tree and its parent. */
struct node {
    pid_t pid, parent;
};

static int cmp_node(const void *a, const void *b)
{
    pid_t x = ((const struct node *)a)->pid, y = ((const struct node *)b)->pid;
    return (x > y) - (x < y);
}

/* Every process of the tree at root with its parent, by pid, into *out of
 * *n.  0, or a negative errno. */
static int read_tree(const char *root, struct node **out, size_t *n)
{
    *out = NULL;
    *n = 0;
    DIR *d = opendir(root);
    if (!d)
        return -errno;
    size_t cap = 0;
    struct dirent *e;
    int rc = 0;
    while ((e = readdir(d))) {
        char *end;
        long v = strtol(e->d_name, &end, 10);
        if (*end || v <= 0 || v > 1L << 30)
            continue;
        size_t len;
        char *stat = mqdh__proc_read(root, (pid_t)v, "stat", &len);
        struct mqdh__stat_line st;
        int ok = stat && mqdh__text_stat(stat, &st) == 0;
        free(stat);
        if (!ok)
            continue; /* gone meanwhile */
        if (*n == cap) {
            size_t nc = cap ? cap * 2 : 256;
            struct node *nt = realloc(*out, nc * sizeof *nt);
            if (!nt) {
                rc = -ENOMEM;
                break;
            }
            *out = nt;
            cap = nc;
        }
        (*out)[(*n)++] = (struct node){(pid_t)v, st.ppid};
    }
    closedir(d);
    if (rc) {
        free(*out);
        *out = NULL;
        *n = 0;
        return rc;
    }
    if (*n)
        qsort(*out, *n, sizeof **out, cmp_node);
    return 0;
}

/* The parent of pid in the tree, or -1. */
static pid_t parent_in(const struct node *t, size_t n, pid_t pid)
{
    struct node key = {pid, 0};
    const struct node *hit = n ? bsearch(&key, t, n, sizeof *t, cmp_node) : NULL;
    return hit ? hit->parent : -1;
}

/* Does a descend from b?  (Bounded: a tree read while processes come and
 * go may loop.) */
static int descends(const struct node *t, size_t n, pid_t a, pid_t b)
{
    for (int depth = 0; depth < 1024 && a > 0; depth++)
        if ((a = parent_in(t, n, a)) == b)
            return 1;
    return 0;
}

/* A process with a rank under the launcher, as read. */
struct cand {
    pid_t pid;
    int rank, size;
    char ns[256]; /* PMIX_NAMESPACE, "" if none */
};

static int cmp_cand(const void *a, const void *b)
{
    const struct cand *x = a, *y = b;
    int c = strcmp(x->ns, y->ns);
    if (c)
        return c;
    if (x->rank != y->rank)
        return x->rank < y->rank ? -1 : 1;
    return (x->pid > y->pid) - (x->pid < y->pid);
}

/* All four user ids of pid in the tree are uid?  1, 0, or -1 if gone. */
static int only_user(const char *root, pid_t pid, uid_t uid)
{
    uid_t ids[4];
    if (mqdh__proc_uids_at(root, pid, ids) != 0)
        return -1;
    for (int i = 0; i < 4; i++)
        if (ids[i] != uid)
            return 0;
    return 1;
}

/* Read pid's environment into *c: 1 if it has a rank and is not one hydra
 * marked spawned, 0 if not, -1 if it cannot be read. */
static int read_cand(const char *root, pid_t pid, struct cand *c)
{
    size_t n;
    char *env = mqdh__proc_read(root, pid, "environ", &n);
    if (!env)
        return -1;
    int spawned;
    c->pid = pid;
    c->rank = mqdh__text_env_rank(env, n, &spawned, &c->size);
    c->ns[0] = '\0';
    static const char var[] = "PMIX_NAMESPACE=";
    for (size_t i = 0; i < n; i += strlen(env + i) + 1)
        if (strncmp(env + i, var, sizeof var - 1) == 0) {
            /* The process's word: shown escaped, never used as a name. */
            mqdh_escape(c->ns, sizeof c->ns, env + i + sizeof var - 1);
            break;
        }
    free(env);
    return c->rank >= 0 && !spawned;
}

/* ranks r[0..k-1] (ascending) as "0-3, 6" into buf[len]. */
static void rank_list(const int *r, int k, char *buf, size_t len)
{
    size_t at = 0;
    buf[0] = '\0';
    for (int i = 0; i < k && at < len; i++) {
        int j = i;
        while (j + 1 < k && r[j + 1] == r[j] + 1)
            j++;
        int w = j > i ? snprintf(buf + at, len - at, "%s%d-%d", i ? ", " : "", r[i], r[j])
                      : snprintf(buf + at, len - at, "%s%d", i ? ", " : "", r[i]);
        at += w > 0 ? (size_t)w : 0;
        i = j;
    }
}

/* The daemons that start one node's ranks for a launcher elsewhere. */
static int is_node_daemon(const char *name)
{
    return strncmp(name, "hydra_pmi_proxy", 15) == 0 || strcmp(name, "orted") == 0 ||
           strcmp(name, "prted") == 0 || strcmp(name, "slurmstepd") == 0;
}

/* PRRTE's "BASE@N": N, and BASE's length in *base; -1 if ns is not one. */
static long prrte_job(const char *ns, size_t *base)
{
    const char *at = strrchr(ns, '@');
    char *end;
    if (!at || at == ns || !at[1])
        return -1;
    long v = strtol(at + 1, &end, 10);
    if (*end || v < 0)
        return -1;
    *base = (size_t)(at - ns);
    return v;
}

/* A namespace: where its candidates start in the sorted array, how many. */
struct space {
    int first, count;
    long job; /* PRRTE's job number */
};

static int cmp_space(const void *a, const void *b)
{
    long x = ((const struct space *)a)->job, y = ((const struct space *)b)->job;
    return (x > y) - (x < y);
}

/*
 * The namespaces of c[0..k-1] (sorted by namespace) into *sp of *nsp, the
 * launched job's first.  MQDH_OK, MQDH_E_JOB (err says why), MQDH_E_NOMEM.
 */
static int group_spaces(const struct cand *c, int k, pid_t launcher, struct space **sp,
                        int *nsp, char *err, size_t errlen)
{
    int ns = 0;
    *sp = malloc((size_t)k * sizeof **sp);
    if (!*sp)
        return MQDH_E_NOMEM;
    for (int i = 0; i < k; i++) {
        if (i == 0 || strcmp(c[i].ns, c[i - 1].ns) != 0)
            (*sp)[ns++] = (struct space){i, 0, 0};
        (*sp)[ns - 1].count++;
    }
    *nsp = ns;
    if (ns == 1)
        return MQDH_OK;
    size_t base0 = 0, base;
    for (int s = 0; s < ns; s++) {
        const char *name = c[(*sp)[s].first].ns;
        (*sp)[s].job = prrte_job(name, &base);
        if (s == 0)
            base0 = base;
        if ((*sp)[s].job < 0 || base != base0 || strncmp(name, c[0].ns, base) != 0) {
            snprintf(err, errlen, "the processes under %d belong to %d jobs (PMIx namespaces "
                     "\"%s\" and \"%s\", not one launcher's): give the launcher of one, or "
                     "its ranks with --pid", (int)launcher, ns, c[0].ns,
                     c[(*sp)[s ? s : 1].first].ns);
            return MQDH_E_JOB;
        }
    }
    qsort(*sp, (size_t)ns, sizeof **sp, cmp_space);
    return MQDH_OK;
}

/*
 * Check one namespace's candidates c[0..k-1] (by rank): no rank held
 * twice, sizes that agree.  *size: the job's size, -1 if not said.
 */
static int check_space(const struct cand *c, int k, pid_t launcher, int *size, char *err,
                       size_t errlen)
{
    *size = -1;
    for (int i = 0; i < k; i++) {
        if (i > 0 && c[i].rank == c[i - 1].rank) {
            snprintf(err, errlen, "processes %d and %d under %d both have rank %d%s%s%s: "
                     "more than one job runs under this process; give its launcher, or the "
                     "ranks with --pid", (int)c[i - 1].pid, (int)c[i].pid, (int)launcher,
                     c[i].rank, c[i].ns[0] ? " in PMIx namespace \"" : "", c[i].ns,
                     c[i].ns[0] ? "\"" : "");
            return MQDH_E_JOB;
        }
        if (c[i].size >= 0 && *size >= 0 && c[i].size != *size) {
            snprintf(err, errlen, "the ranks under %d disagree on the job's size (%d and %d "
                     "in their environment): more than one job runs under this process; "
                     "give its launcher, or the ranks with --pid", (int)launcher, *size,
                     c[i].size);
            return MQDH_E_JOB;
        }
        if (c[i].size >= 0)
            *size = c[i].size;
    }
    if (*size >= 0 && k > 0 && c[k - 1].rank >= *size) {
        snprintf(err, errlen, "process %d under %d has rank %d, but its environment gives the "
                 "job %d ranks", (int)c[k - 1].pid, (int)launcher, c[k - 1].rank, *size);
        return MQDH_E_JOB;
    }
    return MQDH_OK;
}

/* The ranks below expected (size, or one past the highest found) that c[0..k-1]
 * lacks, as a list into buf[len]: how many. */
static int missing_ranks(const struct cand *c, int k, int expected, char *buf, size_t len)
{
    int *miss = malloc((size_t)(expected > 0 ? expected : 1) * sizeof *miss), nm = 0;
    buf[0] = '\0';
    if (!miss) {
        snprintf(buf, len, "some");
        return expected - k;
    }
    for (int r = 0, i = 0; r < expected; r++) {
        while (i < k && c[i].rank < r)
            i++;
        if (i >= k || c[i].rank != r)
            miss[nm++] = r;
    }
    rank_list(miss, nm, buf, len);
    free(miss);
    return nm;
}

/* The note: how the launched ranks c[0..k-1] (of size, -1 unknown) were
 * found under launcher (named name), and what cannot be seen from here. */
static void write_note(struct mqdh__pj_job *out, const struct cand *c, int k, int size,
                       pid_t launcher, const char *name, int daemon, int others, int extra)
{
    int *r = malloc((size_t)k * sizeof *r);
    char list[256] = "", ns[300] = "";
    if (r) {
        for (int i = 0; i < k; i++)
            r[i] = c[i].rank;
        rank_list(r, k, list, sizeof list);
        free(r);
    }
    if (c[0].ns[0])
        snprintf(ns, sizeof ns, ", PMIx namespace \"%s\"", c[0].ns);
    int at = snprintf(out->note, sizeof out->note, "ranks from /proc: %d process%s under %s "
                      "%d with rank %s in their environment%s", k, k == 1 ? "" : "es", name,
                      (int)launcher, list, ns);
    size_t left = at > 0 && (size_t)at < sizeof out->note ? sizeof out->note - (size_t)at : 0;
    char *p = out->note + (sizeof out->note - left);
    int w = 0;
    if (daemon && (size < 0 || k < size))
        w = snprintf(p, left, "; a node daemon's ranks are this node's share of the job%s%s: "
                     "the others run under the daemons (or the launcher) of other nodes, "
                     "whose queues this dump does not see; run mqdump there too",
                     size >= 0 ? " of " : "", size >= 0 ? "its size" : "");
    else if (size < 0)
        w = snprintf(p, left, "; their environment does not give the job's size, so ranks on "
                     "other nodes (under their prted or orted daemons) cannot be seen from "
                     "here: on each other node run mqdump --job with its daemon's pid "
                     "(mqdump --list there names it)");
    if (w > 0 && (size_t)w < left) {
        left -= (size_t)w;
        p += w;
    }
    if (others > 0 && left > 0) {
        w = snprintf(p, left, "; %d process%s under it run%s as another user: not read",
                     others, others == 1 ? "" : "es", others == 1 ? "s" : "");
        if (w > 0 && (size_t)w < left) {
            left -= (size_t)w;
            p += w;
        }
    }
    if (extra > 0 && left > 0)
        snprintf(p, left, "; %d process%s of later PMIx namespaces (MPI_Comm_spawn) after them",
                 extra, extra == 1 ? "" : "es");
}

/* The candidates under launcher in the tree, wrappers dropped, sorted by
 * namespace and rank, into *out of *k; *others: processes of another user.
 * 0, or a negative errno. */
static int read_cands(const char *root, pid_t launcher, uid_t owner, struct cand **out, int *k,
                      int *others)
{
    struct node *t;
    size_t n;
    *out = NULL;
    *k = 0;
    *others = 0;
    int rc = read_tree(root, &t, &n);
    if (rc)
        return rc;
    struct cand *c = malloc((n ? n : 1) * sizeof *c);
    if (!c) {
        free(t);
        return -ENOMEM;
    }
    int m = 0;
    for (size_t i = 0; i < n; i++) {
        if (!descends(t, n, t[i].pid, launcher))
            continue;
        int mine = only_user(root, t[i].pid, owner);
        if (mine == 0)
            (*others)++;
        if (mine == 1 && read_cand(root, t[i].pid, &c[m]) == 1)
            m++;
    }
    qsort(c, (size_t)m, sizeof *c, cmp_cand);
    /* Of a wrapper and the program it runs (same namespace and rank): the
     * program. */
    int keep = 0;
    for (int s = 0, e; s < m; s = e) {
        for (e = s + 1; e < m && c[e].rank == c[s].rank && !strcmp(c[e].ns, c[s].ns); e++)
            ;
        for (int i = s; i < e; i++) {
            int wrapper = 0;
            for (int j = s; j < e && !wrapper; j++)
                wrapper = j != i && descends(t, n, c[j].pid, c[i].pid);
            if (!wrapper)
                c[keep++] = c[i];
        }
    }
    free(t);
    *out = c;
    *k = keep;
    return 0;
}

/* The launched ranks, checked against the job's size: MQDH_OK, or
 * MQDH_E_JOB with err saying which are missing and why that matters. */
static int check_complete(const struct cand *c, int k, int size, pid_t launcher,
                          const char *name, int daemon, int others, char *err, size_t errlen)
{
    int expected = size >= 0 ? size : c[k - 1].rank + 1;
    if (daemon || k == expected)
        return MQDH_OK;
    char miss[256];
    missing_ranks(c, k, expected, miss, sizeof miss);
    snprintf(err, errlen, "no process under %s %d has rank %s (ranks up to %d were found%s%s): "
             "the job spans other nodes, or is still starting; without an MPIR_proctable, "
             "ranks on other nodes cannot be found from this one: on each node run mqdump "
             "--job with the pid of the daemon (prted, orted) that started its ranks, or give "
             "the ranks with --pid", name, (int)launcher, miss, c[k - 1].rank,
             size >= 0 ? ", of the job's size its environment gives" : "",
             others ? "; its processes of another user, or running a setuid program, were "
                      "not read" : "");
    return MQDH_E_JOB;
}

int mqdh__pj_find(const char *root, pid_t launcher, struct mqdh__pj_job *out, char *err,
                  size_t errlen)
{
    memset(out, 0, sizeof *out);
    char name[64] = "process";
    size_t len;
    long uid[1];
    char *st = mqdh__proc_read(root, launcher, "status", &len);
    int known = st && mqdh__text_status_numbers(st, "Uid", uid, 1) == 1;
    free(st);
    if (!known) {
        snprintf(err, errlen, "process %d does not exist", (int)launcher);
        return MQDH_E_JOB;
    }
    char *comm = mqdh__proc_read(root, launcher, "comm", &len);
    if (comm && comm[0]) {
        comm[strcspn(comm, "\n")] = '\0';
        mqdh_escape(name, sizeof name, comm);
    }
    free(comm);
    int daemon = is_node_daemon(name);

    struct cand *c;
    int k, others;
    int rc = read_cands(root, launcher, (uid_t)uid[0], &c, &k, &others);
    if (rc) {
        snprintf(err, errlen, "cannot list the processes under %d: %s", (int)launcher,
                 strerror(-rc));
        return rc == -ENOMEM ? MQDH_E_NOMEM : MQDH_E_JOB;
    }
    struct space *sp = NULL;
    int nsp = 0, size = -1;
    if (k == 0) {
        snprintf(err, errlen, "no descendant of %s %d has an MPI rank in its environment%s: "
                 "not an MPI launcher, or its job has not started", name, (int)launcher,
                 others ? " (its other users' processes were not read)" : "");
        rc = MQDH_E_JOB;
        goto out;
    }
    if ((rc = group_spaces(c, k, launcher, &sp, &nsp, err, errlen)) != MQDH_OK)
        goto out;
    for (int s = 0; s < nsp && rc == MQDH_OK; s++) {
        int sz;
        rc = check_space(c + sp[s].first, sp[s].count, launcher, &sz, err, errlen);
        if (s == 0)
            size = sz;
    }
    if (rc != MQDH_OK ||
        (rc = check_complete(c + sp[0].first, sp[0].count, size, launcher, name, daemon, others,
                             err, errlen)) != MQDH_OK)
        goto out;
    if (!(out->ranks = malloc((size_t)k * sizeof *out->ranks))) {
        rc = MQDH_E_NOMEM;
        goto out;
    }
    for (int s = 0; s < nsp; s++)
        for (int i = 0; i < sp[s].count; i++) {
            const struct cand *x = &c[sp[s].first + i];
            out->ranks[out->nranks++] = (struct mqdh__pj_rank){x->pid, x->rank, s};
        }
    out->nlaunched = sp[0].count;
    write_note(out, c + sp[0].first, sp[0].count, size, launcher, name, daemon, others,
               k - sp[0].count);
out:
    if (rc != MQDH_OK && rc != MQDH_E_NOMEM)
        rc = MQDH_E_JOB;
    if (rc == MQDH_E_NOMEM)
        snprintf(err, errlen, "out of memory");
    free(sp);
    free(c);
    return rc;
}

void mqdh__pj_free(struct mqdh__pj_job *job)
{
    if (job) {
        free(job->ranks);
        job->ranks = NULL;
        job->nranks = job->nlaunched = 0;
    }
}
