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
    const struct mpich_late *l = mpich__late(p, CLASS_PGS);
    if (!l)
        return MQD_ERR_NOMEM;
    if (l->off[F_PG_ID] < 0)
        return MQD_ERR_BAD_LAYOUT;
    mqs_taddr_t id;
    int rc = mqd_read_ptr(p, pg + (mqs_taddr_t)l->off[F_PG_ID], &id);
    if (rc == mqs_ok && !id)
        rc = MQD_ERR_BAD_VALUE;
    return rc == mqs_ok ? mqd_read_cstring(p, id, out, len) : rc;
}

/*
 * The PMI name at var (the static char * of PMI-1 or PMI-2, or with
 * inline_name PMIx's pmix_proc_t, the name its first member) into out: 0,
 * or -1 if there is none (var 0, a NULL pointer, an empty or unreadable
 * string).
 */
static int read_pmi_name(struct mqd_process *p, mqs_taddr_t var, int inline_name, char *out,
                         int len)
{
    mqs_taddr_t name = var;
    if (!var || (!inline_name && (mqd_read_ptr(p, var, &name) != mqs_ok || !name)) ||
        mqd_read_cstring(p, name, out, len) != mqs_ok || !out[0])
        return -1;
    return 0;
}

/* Whether s is printable ASCII, as every PMI's names are. */
static int printable(const char *s)
{
    for (; *s; s++)
        if (*s < 0x20 || *s > 0x7e)
            return 0;
    return 1;
}

/*
 * ch3: this process's group, its rank there and its key, from the
 * MPIDI_Process variable ks->ch3_process.  The group's id is the PMI name
 * (src/mpid/ch3/src/mpid_init.c, init_pg: pg_id =
 * MPL_strdup(MPIR_pmi_job_id()), 4.0 to 5.0), which src/util/mpir_pmi.c
 * keeps in the static at ks->pmi_name until MPIDI_PG_Finalize frees it
 * (MPIR_pmi_finalize), just before it clears my_pg (mpidi_pg.c): with
 * my_pg set, the id is read from there, without asking the debugger for
 * MPIDI_PG_t, whose DWARF is deep in ch3's units.  Without a PMI name (a
 * build with another PMI, or none: the group "0"), or with one that is
 * not printable (freed in that window), the group's own id is read.
 * Without them only MPI-1 global ranks are given (not an error).
 */
static void my_process_group(struct mqd_process *p, struct mpich_process *bp,
                             const struct mpich_key_symbols *ks)
{
    const struct mpich_image *b = mpich__image(p);
    mqs_taddr_t pg, var = ks->ch3_process;
    unsigned char rbuf[4];
    if (mqd_read_ptr(p, var + (mqs_taddr_t)b->off[F_PROC_MY_PG], &pg) != mqs_ok || !pg ||
        mqd_read(p, var + (mqs_taddr_t)b->off[F_PROC_MY_PG_RANK], rbuf, 4) != mqs_ok)
        return;
    char name[PG_ID_MAX];
    if ((read_pmi_name(p, ks->pmi_name, ks->pmix, name, sizeof name) != 0 || !printable(name)) &&
        mpich__read_pg_id(p, pg, name, sizeof name) != mqs_ok)
        return;
    make_key(bp->key, name, (long)mqd_int(p, rbuf, 0, 4));
    bp->my_pg = pg;
    bp->my_pg_rank = (long)mqd_int(p, rbuf, 0, 4);
    snprintf(bp->my_pg_id, sizeof bp->my_pg_id, "%s", name);
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
    char ns[PG_ID_MAX];
    unsigned char v[4];
    if (bp->mpir_process && b->off[F_PROC_WORLD_ID] >= 0 &&
        mqd_read(p, bp->mpir_process + (mqs_taddr_t)b->off[F_PROC_WORLD_ID], v, 4) == mqs_ok &&
        mqd_uint(p, v, 0, 4) != 0)
        snprintf(ns, sizeof ns, "world-%08x", (unsigned)mqd_uint(p, v, 0, 4));
    else if (read_pmi_name(p, var, inline_name, ns, sizeof ns) != 0)
        return;
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
    if ((mpich__gen_is_ch4_4x(gen) || mpich__gen_is_ch3(gen)) &&
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
    const struct mpich_image *b = mpich__image(p);
    if (mpich__gen_is_5x(bp->gen))
        my_world_key(p, bp);
    if (mpich__gen_is_ch4_4x(bp->gen))
        my_pmi_key(p, bp, ks->pmi_name, ks->pmix);
    if (ks->ch3_process && b->off[F_PROC_MY_PG] >= 0 && b->off[F_PROC_MY_PG_RANK] >= 0) {
        bp->ch3_process = ks->ch3_process;
        my_process_group(p, bp, ks);
    }
}

/*
 * 5.0: lpid (world index << 32 | world rank, src/include/mpir_group.h) to
 * a global rank: with a job table the identity its key names ("NAMESPACE
 * #RANK", the namespace from MPIR_Worlds), else the world rank in this
 * process's own world (index 0) and -1 in any other.  ns0 (nslen bytes):
 * world 0's namespace once read ("" until then).
 */
long mpich__lpid_global(struct mqd_process *p, int64_t lpid, int use_job, char *ns0,
                         size_t nslen)
{
    if (lpid < 0) /* MPIR_LPID_DYNAMIC_MASK: a connection being made */
        return -1;
    long idx = (long)(lpid >> 32), rank = (long)(lpid & 0xffffffff);
    if (!use_job)
        return idx == 0 ? rank : -1;
    char ns[PG_ID_MAX];
    if (idx == 0 && !ns0[0] && mpich__world_namespace(p, 0, ns0, (int)nslen) != mqs_ok)
        ns0[0] = '\0';
    if (idx == 0)
        snprintf(ns, sizeof ns, "%s", ns0);
    else if (mpich__world_namespace(p, idx, ns, sizeof ns) != mqs_ok)
        return -1;
    return ns[0] ? mpich__identity_of(p, ns, rank) : -1;
}

int mqd_be_process_key(struct mqd_process *p, char *key, int len)
{
    struct mpich_process *bp = mqd_process_backend(p);
    snprintf(key, (size_t)len, "%s", bp ? bp->key : "");
    return mqs_ok;
}
