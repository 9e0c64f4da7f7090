/*
 * mpich_keys.c - the keys that name MPICH processes across jobs (MPI-2):
 * "NAMESPACE#RANK" of a ch3 process group, a 4.x ch4 PMI name or a 5.0
 * world, and the identities the debugger gave them.  See mpich.h.
 */
#include "mpich.h"

#include <stdio.h>
#include <string.h>

/* ---------------------------------------------------------------- keys */

/* The MPI-2 key of rank `rank` of the world (ch3: the process group) named
 * ns, "NS#RANK": what every generation names a process by, into out. */
static void make_key(char out[MQD_MAX_KEY], const char *ns, long rank)
{
    /* snprintf's "%s#%d", by hand: one is made for every member of every
     * communicator a process has. */
    char digits[16];
    int r = (int)rank, k = 0;
    unsigned u = r < 0 ? 0u - (unsigned)r : (unsigned)r;
    do
        digits[k++] = (char)('0' + u % 10);
    while ((u /= 10) != 0);
    if (r < 0)
        digits[k++] = '-';
    size_t at = 0;
    while (at < MQD_MAX_KEY - 1 && ns[at])
        at++;
    memcpy(out, ns, at);
    if (at < MQD_MAX_KEY - 1)
        out[at++] = '#';
    while (k > 0 && at < MQD_MAX_KEY - 1)
        out[at++] = digits[--k];
    out[at] = '\0';
}

long mpich__identity_of(struct mqd_process *p, const char *ns, long rank)
{
    char key[MQD_MAX_KEY];
    long identity;
    /* By world and rank (job.c's index), unless the key would be cut
     * short (a name near MQD_MAX_KEY: then the key as registered). */
    if (strlen(ns) + 12 < MQD_MAX_KEY && mqd_job_identity_in(p, ns, rank, &identity))
        return identity;
    make_key(key, ns, rank);
    return mqd_job_identity(p, key);
}

void mpich__identities_of(struct mqd_process *p, const char *ns, long n, long *out)
{
    if (strlen(ns) + 12 < MQD_MAX_KEY && mqd_job_identities_in(p, ns, n, out))
        return;
    for (long r = 0; r < n; r++)
        out[r] = mpich__identity_of(p, ns, r);
}

/* This process's key, from its world's name ns and its world rank
 * (MPIR_Process.rank); 0, or -1 (no key) if the rank cannot be read. */
static int key_by_world_rank(struct mqd_process *p, struct mpich_process *bp, const char *ns)
{
    const struct mpich_image *b = mpich__image(p);
    unsigned char v[4];
    if (!bp->mpir_process || b->off[F_PROC_RANK] < 0 ||
        mqd_read(p, bp->mpir_process + (mqs_taddr_t)b->off[F_PROC_RANK], v, 4) != mqs_ok)
        return -1;
    make_key(bp->key, ns, (long)mqd_int(p, v, 0, 4));
    return 0;
}

int mpich__read_pg_id(struct mqd_process *p, mqs_taddr_t pg, char *out, int len)
{
    mqs_taddr_t id;
    int rc = mqd_read_ptr(p, pg + (mqs_taddr_t)mpich__image(p)->off[F_PG_ID], &id);
    if (rc == mqs_ok && !id)
        rc = MQD_ERR_BAD_VALUE;
    return rc == mqs_ok ? mqd_read_cstring(p, id, out, len) : rc;
}

/* The process groups' fields the key needs (a VC's, CLASS_VCS, are looked
 * up when VCs are read: mpich_ranks.c). */
static int process_group_known(const struct mpich_image *b)
{
    return b->off[F_PG_ID] >= 0 && b->off[F_PROC_MY_PG] >= 0 && b->off[F_PROC_MY_PG_RANK] >= 0;
}

/* ch3: this process's group and key, from the MPIDI_Process variable at
 * var.  Without them only MPI-1 global ranks are given (not an error). */
static void my_process_group(struct mqd_process *p, struct mpich_process *bp, mqs_taddr_t var)
{
    const struct mpich_image *b = mpich__image(p);
    mqs_taddr_t pg;
    unsigned char rbuf[4];
    if (mqd_read_ptr(p, var + (mqs_taddr_t)b->off[F_PROC_MY_PG], &pg) != mqs_ok || !pg ||
        mqd_read(p, var + (mqs_taddr_t)b->off[F_PROC_MY_PG_RANK], rbuf, 4) != mqs_ok)
        return;
    char name[PG_ID_MAX];
    if (mpich__read_pg_id(p, pg, name, sizeof name) != mqs_ok)
        return;
    make_key(bp->key, name, (long)mqd_int(p, rbuf, 0, 4));
    bp->my_pg = pg;
    bp->my_pg_rank = (long)mqd_int(p, rbuf, 0, 4);
}

int mpich__world_namespace(struct mqd_process *p, long idx, char *out, int len)
{
    const struct mpich_image *b = mpich__image(p);
    struct mpich_process *bp = mqd_process_backend(p);
    if (!bp->worlds || b->off[F_WORLD_NS] < 0 || b->size[S_SZ_WORLD] <= 0 || idx < 0 ||
        idx >= 4096)
        return MQD_ERR_BAD_VALUE;
    return mqd_read_cstring(p,
                            bp->worlds + (mqs_taddr_t)idx * (mqs_taddr_t)b->size[S_SZ_WORLD] +
                                (mqs_taddr_t)b->off[F_WORLD_NS],
                            out, len);
}

/* 5.0: this process's MPI-2 key, "NAMESPACE#RANK" of its own world (index
 * 0), the same string ch3 names it by.  Without it, MPI-1 ranks only. */
static void my_world_key(struct mqd_process *p, struct mpich_process *bp)
{
    char ns[PG_ID_MAX];
    if (mpich__world_namespace(p, 0, ns, sizeof ns) == mqs_ok && ns[0])
        key_by_world_rank(p, bp, ns);
}

/*
 * 4.x ch4: this process's MPI-2 key, from its world's name and its world
 * rank.  The name is MPIR_Process.world_id, the FNV-1a hash of the PMI
 * name that mpir_pmi.c takes at MPI_Init (HASH_FNV) and keeps past
 * MPI_Finalize, as "world-HASH"; or, without it, the PMI name itself,
 * which mpir_pmi.c keeps in a static (a char * under PMI-1 and PMI-2, the
 * nspace that starts a pmix_proc_t under PMIx) until MPI_Finalize frees it
 * (MPIR_pmi_finalize).  Every process of a job gets its name the same way
 * (the same build), so their keys agree.  Without either: MPI-1 ranks.
 */
static void my_pmi_key(struct mqd_process *p, struct mpich_process *bp, mqs_taddr_t var,
                       int inline_name)
{
    const struct mpich_image *b = mpich__image(p);
    mqs_taddr_t name = var;
    char ns[PG_ID_MAX];
    unsigned char v[4];
    if (bp->mpir_process && b->off[F_PROC_WORLD_ID] >= 0 &&
        mqd_read(p, bp->mpir_process + (mqs_taddr_t)b->off[F_PROC_WORLD_ID], v, 4) == mqs_ok &&
        mqd_uint(p, v, 0, 4) != 0) {
        snprintf(ns, sizeof ns, "world-%08x", (unsigned)mqd_uint(p, v, 0, 4));
    } else if (!var || (!inline_name && (mqd_read_ptr(p, var, &name) != mqs_ok || !name)) ||
               mqd_read_cstring(p, name, ns, sizeof ns) != mqs_ok || !ns[0]) {
        return;
    }
    if (key_by_world_rank(p, bp, ns) != 0)
        return;
    snprintf(bp->ns, sizeof bp->ns, "%s", ns);
}

void mpich__find_key_symbols(mqs_image *image, const mqs_image_callbacks *cb,
                             enum mpich_generation gen, struct mpich_key_symbols *ks)
{
    ks->ch3_process = 0;
    ks->pmi_name = 0;
    ks->pmix = 0;
    if (mpich__gen_is_ch4_4x(gen) &&
        cb->mqs_find_symbol_fp(image, (char *)MPICH_SYM_PMI1_KVS, &ks->pmi_name) != mqs_ok &&
        cb->mqs_find_symbol_fp(image, (char *)MPICH_SYM_PMI2_JOBID, &ks->pmi_name) != mqs_ok)
        ks->pmix =
            cb->mqs_find_symbol_fp(image, (char *)MPICH_SYM_PMIX_PROC, &ks->pmi_name) == mqs_ok;
    if (mpich__gen_is_ch3(gen) &&
        cb->mqs_find_symbol_fp(image, (char *)MPICH_SYM_CH3_PROCESS, &ks->ch3_process) != mqs_ok)
        ks->ch3_process = 0;
}

void mpich__read_own_key(struct mqd_process *p, struct mpich_process *bp,
                         const struct mpich_key_symbols *ks)
{
    if (mpich__gen_is_5x(bp->gen))
        my_world_key(p, bp);
    if (mpich__gen_is_ch4_4x(bp->gen))
        my_pmi_key(p, bp, ks->pmi_name, ks->pmix);
    if (ks->ch3_process && process_group_known(mpich__image(p))) {
        bp->ch3_process = ks->ch3_process;
        my_process_group(p, bp, ks->ch3_process);
    }
}

int mqd_be_process_key(struct mqd_process *p, char *key, int len)
{
    struct mpich_process *bp = mqd_process_backend(p);
    snprintf(key, (size_t)len, "%s", bp ? bp->key : "");
    return mqs_ok;
}
