/*
 * mpich_ranks.c - ranks and groups in MPICH: how a communicator names its
 * members (ch3's connection tables and process groups, groups of lpids or
 * lupids, 5.0's process maps and worlds, 4.x ch4's rank maps), turned into
 * global ranks or, in an MPI-2 job, the debugger's identities through the
 * keys that name processes across jobs (mpich_keys.c).  See mpich.h.
 */
#include "mpich.h"

#include <stdio.h>
#include <string.h>

/* ---------------------------------------------------------------- ch3 connections */

/* A map from a VC's address to its global rank, for one read of the
 * list: open addressing, at most half the slots filled. */
enum { VC_SLOTS = 512 };
struct mpich_rank_cache {
    int n;
    /* VC_SLOTS each once a VC is read (ch3 communicators other than the
     * world): 8 KB a process that most dumps never touch. */
    mqs_taddr_t *addr; /* 0: free (no VC is at 0) */
    long *global;
    /* Process groups' id strings, by the group's address. */
    int npg;
    mqs_taddr_t pg[8];
    char pg_id[8][PG_ID_MAX];
    int use_job; /* this process is in the debugger's job table (MPI-2) */
};

struct mpich_rank_cache *mpich__rank_cache_new(struct mqd_process *p)
{
    struct mpich_process *bp = mqd_process_backend(p);
    struct mpich_rank_cache *cache = mqd_malloc(sizeof *cache);
    if (!cache)
        return NULL;
    cache->n = cache->npg = 0;
    cache->addr = NULL;
    cache->global = NULL;
    cache->use_job = (bp->my_pg || bp->ns[0]) && mqd_job_identity(p, bp->key) >= 0;
    return cache;
}

void mpich__rank_cache_free(struct mpich_rank_cache *cache)
{
    if (cache) {
        mqd_free(cache->addr);
        mqd_free(cache->global);
    }
    mqd_free(cache);
}

/* The id string of process group pg: this process's own, as its key was
 * made (mpich_keys.c), or another's read once per read of the list. */
static int pg_name(struct mqd_process *p, struct mpich_rank_cache *c, mqs_taddr_t pg,
                   const char **name)
{
    const struct mpich_process *bp = mqd_process_backend(p);
    if (pg == bp->my_pg && bp->my_pg_id[0]) {
        *name = bp->my_pg_id;
        return mqs_ok;
    }
    for (int i = 0; i < c->npg; i++) {
        if (c->pg[i] == pg) {
            *name = c->pg_id[i];
            return mqs_ok;
        }
    }
    int slot = c->npg < 8 ? c->npg++ : 7;
    int rc = mpich__read_pg_id(p, pg, c->pg_id[slot], sizeof c->pg_id[slot]);
    c->pg[slot] = rc == mqs_ok ? pg : 0;
    *name = c->pg_id[slot];
    return rc;
}

/* Whether VCs are read with their groups (o: with CLASS_VCS's offsets). */
static int vc_groups(struct mqd_process *p, const int *o)
{
    return ((const struct mpich_process *)mqd_process_backend(p))->my_pg && o[F_VC_PG] >= 0 &&
           o[F_VC_PG_RANK] >= 0;
}

/* What vc_global reads of a VC: [*lo, *hi) from its address (the lpid,
 * and with process groups known its group and rank in it).  mqs_ok, or
 * MQD_ERR_BAD_LAYOUT if that is more than VC_READ_MAX bytes. */
enum { VC_READ_MAX = 64, VC_BLOCK_MAX = 1 << 22 };
static int vc_span(struct mqd_process *p, const int *o, int *lo, int *hi)
{
    *lo = o[F_VC_LPID];
    *hi = o[F_VC_LPID] + 4;
    if (vc_groups(p, o)) {
        const int more[] = {o[F_VC_PG], o[F_VC_PG_RANK]};
        const int len[] = {mqd_sizes(p)->pointer_size, 4};
        for (int i = 0; i < 2; i++) {
            *lo = more[i] < *lo ? more[i] : *lo;
            *hi = more[i] + len[i] > *hi ? more[i] + len[i] : *hi;
        }
    }
    return *hi - *lo > VC_READ_MAX ? MQD_ERR_BAD_LAYOUT : mqs_ok;
}

/* c's table of VCs, made on first need: 0, or -1 without memory for it
 * (each VC is then read again). */
static int vc_table(struct mpich_rank_cache *c)
{
    if (c->addr)
        return 0;
    c->global = mqd_malloc(VC_SLOTS * sizeof *c->global);
    c->addr = mqd_calloc(VC_SLOTS, sizeof *c->addr);
    if (c->global && c->addr)
        return 0;
    mqd_free(c->global);
    mqd_free(c->addr);
    c->global = NULL;
    c->addr = NULL;
    return -1;
}

/* vc's slot in c: its answer's, or the free one it would take. */
static unsigned vc_slot(const struct mpich_rank_cache *c, mqs_taddr_t vc)
{
    unsigned slot = (unsigned)(((uint64_t)vc * 0x9e3779b97f4a7c15u) >> 40) & (VC_SLOTS - 1);
    while (c->addr[slot] && c->addr[slot] != vc)
        slot = (slot + 1) & (VC_SLOTS - 1);
    return slot;
}

/*
 * ch3: the global rank of the process behind virtual connection vc.  With
 * process groups known, that is the identity the debugger gave the process
 * (MPI-2; -1 if it has none) or, with no job table, its rank in this
 * process's MPI_COMM_WORLD (-1 if in another group).  Without them, the
 * VC's lpid, which read_comms bounds by the world's size.  at: vc_span's
 * bytes of vc, read already (read_vcrt), or NULL to read them.
 */
static int vc_global(struct mqd_process *p, const int *o, struct mpich_rank_cache *c,
                     mqs_taddr_t vc, const unsigned char *at, long *global)
{
    struct mpich_process *bp = mqd_process_backend(p);
    unsigned slot = c->addr ? vc_slot(c, vc) : 0;
    if (c->addr && c->addr[slot]) {
        *global = c->global[slot];
        return mqs_ok;
    }
    int lo, hi, rc;
    unsigned char buf[VC_READ_MAX];
    if ((rc = vc_span(p, o, &lo, &hi)) != mqs_ok)
        return rc;
    if (!at && (rc = mqd_read(p, vc + (mqs_taddr_t)lo, buf, hi - lo)) != mqs_ok)
        return rc;
    if (!at)
        at = buf;
    *global = (long)mqd_int(p, at, o[F_VC_LPID] - lo, 4);
    if (vc_groups(p, o)) {
        mqs_taddr_t pg = mqd_ptr(p, at, o[F_VC_PG] - lo);
        long pg_rank = (long)mqd_int(p, at, o[F_VC_PG_RANK] - lo, 4);
        const char *name;
        if (c->use_job) {
            rc = pg_name(p, c, pg, &name);
            if (rc != mqs_ok && rc != MQD_ERR_BAD_LAYOUT)
                return rc;
            /* another group, whose id the debug information cannot place:
             * its process unknown */
            *global = rc == mqs_ok ? mpich__identity_of(p, name, pg_rank) : -1;
        } else if (pg != bp->my_pg) {
            *global = -1;
        }
    }
    if (vc_table(c) == 0 && c->n < VC_SLOTS / 2) {
        slot = vc_slot(c, vc);
        c->addr[slot] = vc;
        c->global[slot] = *global;
        c->n++;
    }
    return mqs_ok;
}

/*
 * The VCs of table (n pointers) that c does not know yet, read at once
 * when they lie together (a process group's VCs are one array): *block
 * holds vc_span's bytes of each from *first to *last (NULL, and each read
 * alone, if they are few, far apart, or the read fails).
 */
static void vc_block(struct mqd_process *p, const int *o, const struct mpich_rank_cache *c,
                     const unsigned char *table, long n, unsigned char **block,
                     mqs_taddr_t *first, mqs_taddr_t *last)
{
    int ps = mqd_sizes(p)->pointer_size, lo, hi;
    mqs_taddr_t min = ~(mqs_taddr_t)0, max = 0;
    long unknown = 0;
    *block = NULL;
    for (long i = 0; i < n; i++) {
        mqs_taddr_t vc = mqd_ptr(p, table, (int)(i * ps));
        if (!vc || (c->addr && c->addr[vc_slot(c, vc)]))
            continue;
        unknown++;
        min = vc < min ? vc : min;
        max = vc > max ? vc : max;
    }
    if (unknown < 2 || vc_span(p, o, &lo, &hi) != mqs_ok)
        return;
    /* Together: no more than 4 KB a VC between the first and the last. */
    mqs_taddr_t len = max - min + (mqs_taddr_t)(hi - lo);
    if (max - min > (mqs_taddr_t)unknown * 4096 || len > VC_BLOCK_MAX)
        return;
    *block = mqd_malloc((size_t)len);
    if (*block && mqd_read(p, min + (mqs_taddr_t)lo, *block, (int)len) != mqs_ok) {
        mqd_free(*block);
        *block = NULL;
    }
    *first = min;
    *last = max;
}

/*
 * ch3: ranks of a virtual connection table -> lpids (*out of want).  MPICH
 * 4.0.2 can leave a table longer than its communicator (MPI_Comm_split
 * keeps the parent's size, the members first): the first want entries
 * count.  A shorter table is corrupt memory.  An intercommunicator's
 * local_vcrt is another communicator's table (the local communicator's,
 * from a split: longer, members first; or the world's): with lenient, a
 * shorter one leaves *out NULL (ranks unknown), and *longer says whether
 * the table had more entries than wanted, so that the caller checks the
 * result before trusting it.
 */
static int read_vcrt(struct mqd_process *p, struct mpich_rank_cache *cache, mqs_taddr_t vcrt,
                     long want, int lenient, long **out, int *longer)
{
    int ps = mqd_sizes(p)->pointer_size;
    unsigned char hdr[4];
    *out = NULL;
    *longer = 0;
    if (!vcrt || want <= 0)
        return mqs_ok;
    static const enum field_id need[] = {F_VCRT_SIZE, F_VCRT_TABLE, F_VC_LPID};
    const struct mpich_late *l = mpich__late(p, CLASS_VCS);
    if (!l)
        return MQD_ERR_NOMEM;
    if (mpich__lacks(l->off, need, NELEMS(need)))
        return mqs_ok; /* a build whose DWARF lacks them: the members unknown */
    const int *o = l->off;
    int rc = mqd_read(p, vcrt + (mqs_taddr_t)o[F_VCRT_SIZE], hdr, 4);
    if (rc != mqs_ok)
        return rc;
    long n = (long)mqd_int(p, hdr, 0, 4);
    if (lenient && n < want && n > 0)
        return mqs_ok;
    if (n < want || n > MQD_MAX_COMM_SIZE) {
        char msg[128];
        snprintf(msg, sizeof msg, "connection table 0x%llx has %ld entries, want %ld",
                 (unsigned long long)vcrt, n, want);
        mqd_debug(msg);
        return MQD_ERR_BAD_VALUE;
    }
    *longer = n > want;
    n = want;
    unsigned char *table = mqd_malloc((size_t)n * (size_t)ps);
    long *lpids = mqd_malloc((size_t)n * sizeof *lpids);
    if (!table || !lpids) {
        mqd_free(table);
        mqd_free(lpids);
        return MQD_ERR_NOMEM;
    }
    rc = mqd_read(p, vcrt + (mqs_taddr_t)o[F_VCRT_TABLE], table, (int)(n * ps));
    unsigned char *block = NULL;
    mqs_taddr_t first = 0, last = 0;
    if (rc == mqs_ok)
        vc_block(p, o, cache, table, n, &block, &first, &last);
    for (long i = 0; rc == mqs_ok && i < n; i++) {
        mqs_taddr_t vc = mqd_ptr(p, table, (int)(i * ps));
        const unsigned char *at =
            block && vc >= first && vc <= last ? block + (vc - first) : NULL;
        rc = vc ? vc_global(p, o, cache, vc, at, &lpids[i]) : MQD_ERR_BAD_VALUE;
    }
    mqd_free(block);
    mqd_free(table);
    if (rc != mqs_ok) {
        mqd_free(lpids);
        return rc;
    }
    *out = lpids;
    return mqs_ok;
}

/* The global rank this process has in the tables vc_global builds: its
 * MPI-2 identity with a job table, else its rank (-1 unknown). */
static long self_global(struct mqd_process *p, const struct mpich_rank_cache *c)
{
    struct mpich_process *bp = mqd_process_backend(p);
    return c->use_job ? mqd_job_identity(p, bp->key) : mqd_process_global_rank(p);
}

/* ---------------------------------------------------------------- groups */

/*
 * Where a group's lpids are: a table (use_map) of esz-byte entries, each
 * with its 8-byte lpid eoff bytes in, or (5.0's MPIR_Pmap) offset, stride
 * and blocksize: rank r's lpid is offset + r / blocksize * stride + r %
 * blocksize, without blocksize offset + r * stride.
 */
struct lpid_map {
    int use_map, esz, eoff;
    mqs_taddr_t map;
    int64_t offset, stride, blocksize;
};

/* 5.0: the MPIR_Pmap of group. */
static int read_pmap(struct mqd_process *p, mqs_taddr_t group, struct lpid_map *m)
{
    const struct mpich_image *b = mpich__image(p);
    unsigned char pm[64];
    int u = b->off[F_PMAPS_U], len = b->size[S_SZ_PMAPS];
    int use = b->off[F_PMAPS_USE_MAP];
    if (len <= 0 || len > (int)sizeof pm || u < 0 || u + 16 > len || use < 0 || use >= len)
        return MQD_ERR_BAD_LAYOUT;
    int rc = mqd_read(p, group + (mqs_taddr_t)b->off[F_GROUP_PMAP], pm, len);
    if (rc != mqs_ok)
        return rc;
    m->use_map = pm[use] != 0;
    m->map = mqd_ptr(p, pm, u);
    m->offset = mqd_int(p, pm, u, 8);
    m->stride = mqd_int(p, pm, u + 8, 8);
    if (u + 24 <= len)
        m->blocksize = mqd_int(p, pm, u + 16, 8);
    return mqs_ok;
}

/* n lpids as m says, into lpids. */
static int map_lpids(struct mqd_process *p, const struct lpid_map *m, long n, long *lpids)
{
    if (!m->use_map) {
        /* Wrapping (unsigned) arithmetic: corrupt values make wrong
         * lpids, which name no world, never an overflow. */
        uint64_t o64 = (uint64_t)m->offset, s64 = (uint64_t)m->stride;
        for (long i = 0; i < n; i++) {
            uint64_t u = (uint64_t)i;
            lpids[i] = (long)(m->blocksize > 0 ? o64 + u / (uint64_t)m->blocksize * s64 +
                                                     u % (uint64_t)m->blocksize
                                               : o64 + u * s64);
        }
        return mqs_ok;
    }
    int rc, esz = m->esz, eoff = m->eoff;
    unsigned char *tbl = NULL;
    if (!m->map || esz <= 0 || esz > 64 || eoff < 0 || eoff + 8 > esz)
        rc = MQD_ERR_BAD_VALUE; /* the lpid (8 bytes) must lie in its entry */
    else if (!(tbl = mqd_malloc((size_t)n * (size_t)esz)))
        rc = MQD_ERR_NOMEM;
    else
        rc = mqd_read(p, m->map, tbl, (int)(n * esz));
    for (long i = 0; rc == mqs_ok && i < n; i++)
        lpids[i] = (long)mqd_int(p, tbl, (int)(i * esz) + eoff, 8);
    mqd_free(tbl);
    return rc;
}

/*
 * A group's members (*out of want) as lpids, or (5.0, *final set) as
 * global ranks.  4.x: the lrank_to_lpid table.  5.0: the MPIR_Pmap, an
 * lpid table or offset, stride and blocksize (struct lpid_map).
 */
static int read_group(struct mqd_process *p, mqs_taddr_t group, long want, long **out,
                      int *final)
{
    const struct mpich_image *b = mpich__image(p);
    struct mpich_process *bp = mqd_process_backend(p);
    int pmap = mpich__gen_is_5x(bp->gen) || !(b->classes & CLASS_GROUP_LPIDS);
    unsigned char hdr[4];
    *out = NULL;
    *final = 0;
    if (!group || want <= 0)
        return mqs_ok; /* MPICH 4.x makes groups lazily: none yet */
    int rc = mqd_read(p, group + (mqs_taddr_t)b->off[F_GROUP_SIZE], hdr, 4);
    if (rc != mqs_ok)
        return rc;
    long n = (long)mqd_int(p, hdr, 0, 4);
    if (n != want || n > MQD_MAX_COMM_SIZE)
        return MQD_ERR_BAD_VALUE;
    long *lpids = mqd_malloc((size_t)n * sizeof *lpids);
    if (!lpids)
        return MQD_ERR_NOMEM;
    struct lpid_map m = {1, 8, 0, 0, 0, 1, 0};
    if (pmap) {
        rc = read_pmap(p, group, &m);
    } else {
        m.esz = b->size[S_SZ_PMAP];
        m.eoff = b->off[F_PMAP_LPID];
        rc = mqd_read_ptr(p, group + (mqs_taddr_t)b->off[F_GROUP_MAP], &m.map);
    }
    if (rc == mqs_ok)
        rc = map_lpids(p, &m, n, lpids);
    if (rc != mqs_ok) {
        mqd_free(lpids);
        return rc;
    }
    if (pmap) {
        char ns0[PG_ID_MAX] = "";
        int use_job = bp->key[0] && mqd_job_identity(p, bp->key) >= 0;
        for (long i = 0; i < n; i++)
            lpids[i] = mpich__lpid_global(p, (int64_t)lpids[i], use_job, ns0, sizeof ns0);
        *final = 1;
    }
    *out = lpids;
    return mqs_ok;
}

/*
 * 4.x ch4, a group's lupids (*v of n) to global ranks: address table 0's
 * lpid (this process's world; with use_job the identity its key names),
 * -1 for another table's process.
 */
static void lupids_to_globals(struct mqd_process *p, long *v, long n, int use_job)
{
    const struct mpich_process *bp = mqd_process_backend(p);
    for (long i = 0; v && i < n; i++) {
        unsigned long u = (unsigned long)v[i] & 0xffffffffUL;
        long lpid = (long)(u & ((1UL << MPICH_LUPID_LPID_BITS) - 1));
        if (v[i] < 0 || ((u >> MPICH_LUPID_LPID_BITS) & MPICH_LUPID_AVTID_MASK) != 0) {
            v[i] = -1;
        } else if (use_job) {
            v[i] = mpich__identity_of(p, bp->ns, lpid);
        } else {
            v[i] = lpid;
        }
    }
}

/* ---------------------------------------------------------------- ch4 rank maps */

/*
 * 4.x ch4: the members of a communicator without a group, from its rank
 * map at addr (MPIDI_rank_map_t, mpich_defs.h) as global ranks: the lpid
 * in address table 0 (this process's world; with use_job the identity its
 * key names), -1 for a process of another world (spawned or connected:
 * ch4 keeps no name of its world) or a map that says nothing (NONE).
 */
static int read_rank_map(struct mqd_process *p, mqs_taddr_t addr, long want, int use_job,
                         long **out)
{
    const struct mpich_image *b = mpich__image(p);
    const struct mpich_process *bp = mqd_process_backend(p);
    const int *o = b->off;
    unsigned char m[128];
    int len = b->size[S_SZ_RMAP];
    *out = NULL;
    if (len <= 0 || len > (int)sizeof m || want <= 0 || want > MQD_MAX_COMM_SIZE)
        return MQD_ERR_BAD_LAYOUT;
    static const enum field_id ints[] = {F_RMAP_MODE,   F_RMAP_AVTID,  F_RMAP_SIZE,
                                         F_RMAP_OFFSET, F_RMAP_STRIDE, F_RMAP_BLOCK};
    static const enum field_id ptrs[] = {F_RMAP_LPID, F_RMAP_GPID};
    if (!mpich__fields_fit(b->off, ints, NELEMS(ints), 4, len) ||
        !mpich__fields_fit(b->off, ptrs, NELEMS(ptrs), mqd_sizes(p)->pointer_size, len))
        return MQD_ERR_BAD_LAYOUT;
    int rc = mqd_read(p, addr, m, len);
    if (rc != mqs_ok)
        return rc;
    long mode = (long)mqd_int(p, m, o[F_RMAP_MODE], 4);
    long avtid = (long)mqd_int(p, m, o[F_RMAP_AVTID], 4);
    long size = (long)mqd_int(p, m, o[F_RMAP_SIZE], 4);
    long offset = (long)mqd_int(p, m, o[F_RMAP_OFFSET], 4);
    long stride = (long)mqd_int(p, m, o[F_RMAP_STRIDE], 4);
    long block = (long)mqd_int(p, m, o[F_RMAP_BLOCK], 4);
    if (mode < MPICH_RMAP_DIRECT || mode > MPICH_RMAP_NONE || size != want)
        return MQD_ERR_BAD_VALUE;
    if (mode < MPICH_RMAP_MLUT && mode % 2 == 1)
        mode--; /* _INTRA: the same map, of an intracommunicator */
    long *v = mqd_malloc((size_t)want * sizeof *v);
    unsigned char *tbl = NULL;
    if (!v)
        return MQD_ERR_NOMEM;
    int esz = mode == MPICH_RMAP_MLUT ? 8 : 4; /* MPIDI_gpid_t {avtid, lpid}; lpid int */
    if (mode == MPICH_RMAP_LUT || mode == MPICH_RMAP_MLUT) {
        mqs_taddr_t t = mqd_ptr(p, m, o[mode == MPICH_RMAP_LUT ? F_RMAP_LPID : F_RMAP_GPID]);
        if (!t)
            rc = MQD_ERR_BAD_VALUE;
        else if (!(tbl = mqd_malloc((size_t)want * (size_t)esz)))
            rc = MQD_ERR_NOMEM;
        else
            rc = mqd_read(p, t, tbl, (int)(want * esz));
    } else if (mode == MPICH_RMAP_STRIDE_BLOCK && block <= 0) {
        rc = MQD_ERR_BAD_VALUE;
    }
    for (long r = 0; rc == mqs_ok && r < want; r++) {
        long world = avtid, lpid;
        switch (mode) {
        case MPICH_RMAP_DIRECT: lpid = r; break;
        case MPICH_RMAP_OFFSET: lpid = r + offset; break;
        case MPICH_RMAP_STRIDE: lpid = r * stride + offset; break;
        case MPICH_RMAP_STRIDE_BLOCK: lpid = r / block * (stride - block) + r + offset; break;
        case MPICH_RMAP_LUT: lpid = (long)mqd_int(p, tbl, (int)(r * 4), 4); break;
        case MPICH_RMAP_MLUT:
            world = (long)mqd_int(p, tbl, (int)(r * 8), 4);
            lpid = (long)mqd_int(p, tbl, (int)(r * 8) + 4, 4);
            break;
        default: lpid = -1; break; /* NONE */
        }
        v[r] = world == 0 && lpid >= 0 ? lpid : -1;
        if (use_job && v[r] >= 0)
            v[r] = mpich__identity_of(p, bp->ns, lpid);
    }
    mqd_free(tbl);
    if (rc != mqs_ok) {
        mqd_free(v);
        return rc;
    }
    *out = v;
    return mqs_ok;
}

/* 4.x, MPI_COMM_WORLD without a group yet (made lazily): its ranks are
 * the world's. */
static int world_identity(long n, long **out)
{
    long *v = mqd_malloc((size_t)n * sizeof *v);
    if (!v)
        return MQD_ERR_NOMEM;
    for (long i = 0; i < n; i++)
        v[i] = i;
    *out = v;
    return mqs_ok;
}

/*
 * ch3 with process groups: MPI_COMM_WORLD's rank i is rank i of the
 * process's own group (MPID_Init fills the world's table with that
 * group's connections in order, their lpids 0 to n-1), so its n members
 * are known without reading a connection: i, or with a job table the
 * identity of rank i of that group.
 */
static int world_members(struct mqd_process *p, struct mpich_rank_cache *c, long n, long **out)
{
    const struct mpich_process *bp = mqd_process_backend(p);
    const char *name;
    int rc = world_identity(n, out);
    if (rc != mqs_ok || !c->use_job)
        return rc;
    if ((rc = pg_name(p, c, bp->my_pg, &name)) != mqs_ok) {
        mqd_free(*out);
        *out = NULL;
        return rc;
    }
    mpich__identities_of(p, name, n, *out);
    return mqs_ok;
}

/* ch3's MPI_COMM_SELF (*out, of 1): this process, as vc_global names it. */
static int self_member(struct mqd_process *p, struct mpich_rank_cache *c, long **out)
{
    const struct mpich_process *bp = mqd_process_backend(p);
    const char *name;
    int rc = c->use_job ? pg_name(p, c, bp->my_pg, &name) : mqs_ok;
    if (rc != mqs_ok)
        return rc;
    if (!(*out = mqd_malloc(sizeof **out)))
        return MQD_ERR_NOMEM;
    (*out)[0] = c->use_job ? mpich__identity_of(p, name, bp->my_pg_rank) : bp->my_pg_rank;
    return mqs_ok;
}

/* ---------------------------------------------------------------- members */

/*
 * What names the members of one side of a communicator (its peers, or an
 * intercommunicator's local group), chosen once per side by members_from.
 */
enum members_from {
    MEMBERS_UNKNOWN,     /* nothing: the side's ranks stay unknown */
    MEMBERS_CONNECTIONS, /* ch3's virtual connection table */
    MEMBERS_OWN_GROUP,   /* ch3's MPI_COMM_WORLD: its own process group's ranks in order */
    MEMBERS_SELF,        /* ch3's MPI_COMM_SELF: this process, its rank in its group */
    MEMBERS_GROUP,       /* the MPIR_Group, where MPICH has made it (4.x: lazily) */
    MEMBERS_RANK_MAP,    /* 4.x ch4's rank map in the communicator */
    MEMBERS_WORLD,       /* 4.x MPI_COMM_WORLD before its group: rank r is r */
};

/* One side of a communicator: its group (0 if none), the fields of its
 * connection table and rank map in MPIR_Comm, and its size. */
struct side {
    mqs_taddr_t group;
    enum field_id vcrt, map;
    long size;
    int lenient; /* its connection table may be another communicator's */
};

static int has_rank_maps(const struct mpich_image *b, const struct mpich_process *bp)
{
    return mpich__gen_is_ch4_4x(bp->gen) && (b->classes & CLASS_CH4_RANK_MAPS);
}

/*
 * In ch3 with its process groups known, the connection tables (they name
 * processes across jobs: MPI-2); else the side's group where MPICH has
 * made it (it does so lazily), else (ch3) the connection tables' lpids,
 * else (4.x ch4) the rank map; a world without any of them is itself.
 */
static enum members_from members_from(const struct mpich_image *b,
                                      const struct mpich_process *bp, mqs_taddr_t group,
                                      int world, int self)
{
    /* ch3 from 4.0.3 reads groups only through its tables: 5.0's are maps
     * of worlds, whose indexes ch3's tables do not use. */
    int groups = bp->gen != MPICH_GEN_CH3_DEBUGQ;
    if (world && bp->my_pg && mpich__gen_is_ch3(bp->gen))
        return MEMBERS_OWN_GROUP;
    if (self && bp->my_pg && mpich__gen_is_ch3(bp->gen))
        return MEMBERS_SELF; /* its table's one VC is this process's */
    if (bp->my_pg || (mpich__gen_is_ch3(bp->gen) && (!group || !groups)))
        return MEMBERS_CONNECTIONS;
    if (group)
        return MEMBERS_GROUP;
    if (has_rank_maps(b, bp))
        return MEMBERS_RANK_MAP;
    return world ? MEMBERS_WORLD : MEMBERS_UNKNOWN;
}

/* The members of side s of the communicator at addr (its MPIR_Comm read
 * into buf), from where `from` says, into *out (NULL: unknown). */
static int read_side(struct mqd_process *p, struct mpich_rank_cache *cache, mqs_taddr_t addr,
                     const unsigned char *buf, enum members_from from, const struct side *s,
                     long **out, int *final, int *longer)
{
    const struct mpich_image *b = mpich__image(p);
    const struct mpich_process *bp = mqd_process_backend(p);
    int rc;
    switch (from) {
    case MEMBERS_OWN_GROUP:
        return world_members(p, cache, s->size, out);
    case MEMBERS_SELF:
        return self_member(p, cache, out);
    case MEMBERS_CONNECTIONS:
        return read_vcrt(p, cache, mqd_ptr(p, buf, b->off[s->vcrt]), s->size, s->lenient, out,
                         longer);
    case MEMBERS_GROUP:
        rc = read_group(p, s->group, s->size, out, final);
        /* 4.x ch4's groups hold lupids; its rank maps give world ranks. */
        if (rc == mqs_ok && mpich__gen_is_ch4_4x(bp->gen))
            lupids_to_globals(p, *out, s->size, cache->use_job);
        return rc;
    case MEMBERS_RANK_MAP:
        return read_rank_map(p, addr + (mqs_taddr_t)b->off[s->map], s->size, cache->use_job,
                             out);
    case MEMBERS_WORLD:
        return world_identity(s->size, out);
    case MEMBERS_UNKNOWN:
        break;
    }
    return mqs_ok;
}

int mpich__read_members(struct mqd_process *p, struct mpich_rank_cache *cache, mqs_taddr_t addr,
                        const unsigned char *buf, struct mqd_comm *c)
{
    const struct mpich_image *b = mpich__image(p);
    const struct mpich_process *bp = mqd_process_backend(p);
    mqs_taddr_t rgroup = mqd_ptr(p, buf, b->off[F_COMM_RGROUP]);
    mqs_taddr_t lgroup = mqd_ptr(p, buf, b->off[F_COMM_LGROUP]);
    int final = 0, longer = 0, unused;
    const struct side peers = {c->inter ? rgroup : lgroup, F_COMM_VCRT, F_COMM_MAP,
                               c->remote_size, 0};
    int is_world = !c->inter && c->handle == MPICH_COMM_WORLD_HANDLE;
    int is_self = !c->inter && c->handle == MPICH_COMM_SELF_HANDLE && c->remote_size == 1;
    int rc = read_side(p, cache, addr, buf, members_from(b, bp, peers.group, is_world, is_self),
                       &peers, &c->peer_global, &final, &unused);
    c->globals_final =
        bp->my_pg != 0 || final || (mpich__gen_is_ch4_4x(bp->gen) && cache->use_job);
    if (rc != mqs_ok || !c->inter)
        return rc;
    const struct side local = {lgroup, F_COMM_LVCRT, F_COMM_LMAP, c->size, 1};
    enum members_from from = members_from(b, bp, lgroup, 0, 0);
    rc = read_side(p, cache, addr, buf, from, &local, &c->local_global, &unused, &longer);
    /* 4.x ch4: a local group that cannot be read gives way to the rank map
     * (the peers' does not: its failure is the communicator's). */
    if (rc != mqs_ok && from == MEMBERS_GROUP && has_rank_maps(b, bp))
        rc = read_side(p, cache, addr, buf, MEMBERS_RANK_MAP, &local, &c->local_global,
                       &unused, &longer);
    /* A table borrowed from another communicator is this one's local
     * group only if this process is where its rank says. */
    long self = self_global(p, cache);
    if (rc == mqs_ok && c->local_global &&
        (self >= 0 ? c->local_global[c->local_rank] != self : longer)) {
        mqd_free(c->local_global);
        c->local_global = NULL;
    }
    return rc;
}
