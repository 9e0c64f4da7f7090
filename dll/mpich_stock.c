/*
 * mpich_stock.c - MPICH ch4 (4.0.2 to 5.0) as distributions build it, without
 * --enable-debuginfo (MPICH_GEN_CH4_STOCK, _5X): no debugger lists, and its
 * globals hidden.  Where the library's own debug symbols are found (its
 * debug package, debuginfod) they name the globals and the DWARF lays out
 * the types; otherwise a distribution's build that mqd knows
 * (mpich_defs/stock_builds.h: its build-id, where its globals are, its
 * types' layout) is used once the process's library is shown to be that
 * very binary (the build-id its memory holds).  Then the communicators
 * come from their object pools and the receive side from ch4's own
 * lists.  See mpich.h.
 */
#include "mpich.h"

#include <stdio.h>
#include <string.h>

/* ---------------------------------------------------------------- known builds */

/* A distribution's build (stock_builds.h): its version, device, pointer
 * size and byte order, its build-id (hex) and where the build-id note's
 * descriptor is, an exported symbol (anchor) and its address, all
 * link-time addresses of the library. */
struct mpich_stock_build {
    const char *name, *version, *device;
    int pointer_size, big_endian;
    const char *build_id;
    uint64_t build_id_at;
    const char *anchor;
    uint64_t anchor_at;
};

#define STOCK_NONE_(...)
enum stock_index {
#define MPICH_STOCK_BUILD(id, ...) STOCK_##id,
#define MPICH_STOCK_SYMBOL STOCK_NONE_
#define MPICH_STOCK_TYPE STOCK_NONE_
#define MPICH_STOCK_FIELD STOCK_NONE_
#include "mpich_defs/stock_builds.h"
#undef MPICH_STOCK_BUILD
    STOCK_COUNT
};

static const struct mpich_stock_build stock_builds[STOCK_COUNT + 1] = {
#define MPICH_STOCK_BUILD(id, ...) {__VA_ARGS__},
#include "mpich_defs/stock_builds.h"
#undef MPICH_STOCK_BUILD
    {NULL, NULL, NULL, 0, 0, NULL, 0, NULL, 0}};
#undef MPICH_STOCK_SYMBOL

/* A build's hidden globals (link-time addresses). */
static const struct {
    int build;
    const char *name;
    uint64_t at;
} stock_symbols[] = {
#define MPICH_STOCK_BUILD STOCK_NONE_
#define MPICH_STOCK_SYMBOL(id, name, at) {STOCK_##id, name, at},
#include "mpich_defs/stock_builds.h"
#undef MPICH_STOCK_SYMBOL
    {-1, NULL, 0}};
#undef MPICH_STOCK_TYPE
#undef MPICH_STOCK_FIELD

/* A build's types: each step "T:f" of every field path of mpich_defs.h
 * (field NULL: the size of T), as its DWARF lays them out. */
static const struct {
    int build;
    const char *type, *field;
    int value;
} stock_types[] = {
#define MPICH_STOCK_SYMBOL STOCK_NONE_
#define MPICH_STOCK_TYPE(id, type, size) {STOCK_##id, type, NULL, size},
#define MPICH_STOCK_FIELD(id, type, field, off) {STOCK_##id, type, field, off},
#include "mpich_defs/stock_builds.h"
#undef MPICH_STOCK_BUILD
#undef MPICH_STOCK_SYMBOL
#undef MPICH_STOCK_TYPE
#undef MPICH_STOCK_FIELD
    {-1, NULL, NULL, 0}};
#undef STOCK_NONE_

/* The step "type:field" (field NULL: type's size) of build ctx; -1 if its
 * DWARF had none. */
static int stock_type(const void *ctx, const char *type, const char *field)
{
    int build = (int)((const struct mpich_stock_build *)ctx - stock_builds);
    for (int i = 0; stock_types[i].type; i++)
        if (stock_types[i].build == build && strcmp(stock_types[i].type, type) == 0 &&
            (field ? stock_types[i].field && strcmp(stock_types[i].field, field) == 0
                   : !stock_types[i].field))
            return stock_types[i].value;
    return -1;
}

/* ---------------------------------------------------------------- identity */

/* The build-id bytes of hex (at most len) into out: how many. */
static int parse_hex(const char *hex, unsigned char *out, int len)
{
    int n = 0;
    for (; n < len && hex[2 * n] && hex[2 * n + 1]; n++) {
        unsigned v = 0;
        for (int k = 0; k < 2; k++) {
            char c = hex[2 * n + k];
            v = v * 16 + (unsigned)(c >= 'a' ? c - 'a' + 10 : c - '0');
        }
        out[n] = (unsigned char)v;
    }
    return n;
}

/*
 * Is the process's library build k?  Its anchor, an exported symbol, is
 * where k has it relative to the build-id note, and that note holds k's
 * build-id: the very binary k was made from.  *base: the library's load
 * bias.  1 yes, 0 no, or a read's error.
 */
static int is_build(struct mqd_process *p, const struct mpich_stock_build *k, uint64_t *base)
{
    mqs_image *image = mqd_process_mqs_image(p);
    const mqs_image_callbacks *cb = mqd_image_cb(mqd_process_image(p));
    unsigned char want[64], got[64];
    mqs_taddr_t anchor;
    int n = parse_hex(k->build_id, want, (int)sizeof want);
    if (cb->mqs_find_symbol_fp(image, (char *)k->anchor, &anchor) != mqs_ok ||
        anchor < k->anchor_at)
        return 0;
    *base = anchor - k->anchor_at;
    int rc = mqd_read(p, *base + k->build_id_at, got, n);
    if (rc != mqs_ok)
        return 0; /* not mapped there: not this binary */
    return memcmp(want, got, (size_t)n) == 0;
}

/* The known build of this process's library (version and device as it
 * says, this target's pointer size and byte order), or NULL; *base its
 * load bias. */
static const struct mpich_stock_build *which_build(struct mqd_process *p, const char *version,
                                                   const char *device, uint64_t *base)
{
    static const unsigned char one[2] = {0, 1};
    int be = mqd_uint(p, one, 0, 2) == 1, ps = mqd_sizes(p)->pointer_size;
    for (int i = 0; i < STOCK_COUNT; i++) {
        const struct mpich_stock_build *k = &stock_builds[i];
        if (strcmp(k->version, version) == 0 && strcmp(k->device, device) == 0 &&
            k->pointer_size == ps && k->big_endian == be && is_build(p, k, base))
            return k;
    }
    return NULL;
}

/* Symbol name of build k at load bias base; 0 if k has none. */
static mqs_taddr_t build_symbol(const struct mpich_stock_build *k, uint64_t base,
                                const char *name)
{
    int build = (int)(k - stock_builds);
    for (int i = 0; stock_symbols[i].name; i++)
        if (stock_symbols[i].build == build && strcmp(stock_symbols[i].name, name) == 0)
            return base + stock_symbols[i].at;
    return 0;
}

/* The globals a stock process is read through, by the library's own
 * symbols (its debug symbols found) into bp: 1 if the ones it needs are
 * all there. */
static int globals_by_name(struct mqd_process *p, struct mpich_process *bp)
{
    mqs_image *image = mqd_process_mqs_image(p);
    const mqs_image_callbacks *cb = mqd_image_cb(mqd_process_image(p));
#define SYM_(name, dst) (cb->mqs_find_symbol_fp(image, (char *)(name), (dst)) == mqs_ok)
    if (!SYM_(MPICH_SYM_SCHEDULES, &bp->schedules))
        bp->schedules = 0;
    if (!SYM_(MPICH_SYM_REQUEST_MEM, &bp->request_mem))
        bp->request_mem = 0;
    if (!SYM_(MPICH_SYM_WORLD_MODEL, &bp->world_model))
        bp->world_model = 0;
    return SYM_(MPICH_SYM_CH4_GLOBAL, &bp->ch4_global) &&
           SYM_(MPICH_SYM_PROCESS, &bp->mpir_process) && SYM_(MPICH_SYM_COMM_MEM, &bp->comm_mem);
#undef SYM_
}

/* The layout of known build k into b (the first process of the image), or
 * the one b has is k's. */
static int layout_of_build(struct mqd_process *p, struct mpich_image *b,
                           const struct mpich_stock_build *k)
{
    if (!b->layout_build) {
        mpich__layout_from(b, stock_type, k);
        b->layout_build = k;
        b->from_dwarf = 0;
    } else if (b->layout_build != k) {
        mqd_process_explain(p, "this process runs %s, another of the same program %s", k->name,
                            b->layout_build->name);
        return MQD_ERR_BAD_LAYOUT;
    }
    return mqs_ok;
}

/* A known build's globals, at load bias base, into bp. */
static int globals_of_build(struct mqd_process *p, struct mpich_process *bp,
                            const struct mpich_stock_build *k, uint64_t base)
{
    bp->stock_build = k;
    bp->ch4_global = build_symbol(k, base, MPICH_SYM_CH4_GLOBAL);
    bp->mpir_process = build_symbol(k, base, MPICH_SYM_PROCESS);
    bp->comm_mem = build_symbol(k, base, MPICH_SYM_COMM_MEM);
    bp->request_mem = build_symbol(k, base, MPICH_SYM_REQUEST_MEM);
    bp->schedules = build_symbol(k, base, MPICH_SYM_SCHEDULES);
    if (bp->ch4_global && bp->mpir_process && bp->comm_mem)
        return mqs_ok;
    mqd_process_explain(p, "the known build %s lacks the address of %s", k->name,
                        !bp->ch4_global ? MPICH_SYM_CH4_GLOBAL
                        : !bp->mpir_process ? MPICH_SYM_PROCESS
                                            : MPICH_SYM_COMM_MEM);
    return MQD_ERR_NO_SYMBOL;
}

/*
 * A known build first (it costs a few reads, where looking types up in
 * DWARF that is not there costs a walk of every file's), shown to be the
 * very binary by its build-id; else the library's own debug symbols and
 * DWARF, where the debugger finds them (a debug package, debuginfod).
 */
int mpich__stock_find(struct mqd_process *p, struct mpich_process *bp, struct mpich_image *b,
                      const char *version, const char *device)
{
    uint64_t base = 0;
    const struct mpich_stock_build *k = which_build(p, version, device, &base);
    int rc;
    if (k) {
        if ((rc = globals_of_build(p, bp, k, base)) != mqs_ok ||
            (rc = layout_of_build(p, b, k)) != mqs_ok)
            return rc;
        char msg[200];
        snprintf(msg, sizeof msg, "no debugger queues: the known build %s (build-id %s)",
                 k->name, k->build_id);
        mqd_debug(msg);
        return mqs_ok;
    }
    mpich__probe_generation(mqd_process_mqs_image(p), mqd_image_cb(mqd_process_image(p)), b,
                            bp->gen, bp->worlds != 0);
    int named = !b->layout_build && globals_by_name(p, bp);
    if (named && (b->classes & CLASS_STOCK) && (b->classes & CLASS_MPIDIG))
        return mqs_ok; /* its debug symbols: the names and the DWARF */
    const char *lacks = mpich__class_lacks(b, CLASS_MPIDIG);
    if (named && (b->classes & CLASS_STOCK) && lacks) {
        /* Its debug symbols are there, but its own lists are not as 4.0.2
         * to 5.0.1 lay them out. */
        const char *last = strrchr(lacks, '/');
        mqd_process_explain(p, "this MPICH (%s, %s) was configured without --enable-debuginfo, "
                               "and its own receive lists are not laid out as mqd knows them "
                               "from MPICH 4.0.2 to 5.0 (no %s): use one built with it (Spack: "
                               "mpich+debug)",
                            version[0] ? version : "?", device[0] ? device : "?",
                            last ? last + 1 : lacks);
        return MQD_ERR_NO_DEBUG_QUEUES;
    }
    mqd_process_explain(p, "this MPICH was configured without --enable-debuginfo (%s, %s, not a "
                           "build mqd knows): install its debug symbols (Debian: "
                           "libmpich12-dbgsym; or DEBUGINFOD_URLS) or use one built with it "
                           "(Spack: mpich+debug)",
                        version[0] ? version : "?", device[0] ? device : "?");
    return MQD_ERR_NO_DEBUG_QUEUES;
}

const char *mpich__stock_name(const struct mpich_process *bp)
{
    return bp->stock_build ? bp->stock_build->name : NULL;
}

/* ---------------------------------------------------------------- communicators */

/* Room for one more address in *v (*n of *cap). */
static int push_addr(mqs_taddr_t **v, int *n, int *cap, mqs_taddr_t a)
{
    if (*n == *cap) {
        int nc = *cap ? *cap * 2 : 16;
        if (nc > MQD_MAX_LIST)
            return MQD_ERR_TOO_LONG;
        mqs_taddr_t *nv = mqd_malloc((size_t)nc * sizeof *nv);
        if (!nv)
            return MQD_ERR_NOMEM;
        if (*n)
            memcpy(nv, *v, (size_t)*n * sizeof *nv);
        mqd_free(*v);
        *v = nv;
        *cap = nc;
    }
    (*v)[(*n)++] = a;
    return mqs_ok;
}

/* Is the communicator object at addr in use as the one of handle h?  An
 * object in use has a reference (mpir_objects.h:422); a freed one keeps
 * its handle (mpir_handlemem.h:387-435) with none left. */
static int comm_in_use(struct mqd_process *p, mqs_taddr_t addr, unsigned h, int *in_use)
{
    const int *o = mpich__image(p)->off;
    unsigned char v[4];
    int rc = mqd_read(p, addr + (mqs_taddr_t)o[F_COMM_HANDLE], v, 4);
    *in_use = 0;
    if (rc != mqs_ok || (unsigned)mqd_uint(p, v, 0, 4) != h)
        return rc;
    if ((rc = mqd_read(p, addr + (mqs_taddr_t)o[F_COMM_REFCOUNT], v, 4)) != mqs_ok)
        return rc;
    *in_use = mqd_int(p, v, 0, 4) > 0;
    return mqs_ok;
}

/* The communicators of pool (MPIR_Comm_mem) in use, appended to *v. */
static int pool_comms(struct mqd_process *p, const struct mpich_pool *pool, mqs_taddr_t **v,
                      int *n, int *cap)
{
    unsigned kind = MPICH_OBJECT_COMM << 26;
    int rc = mqs_ok, in_use;
    for (long i = 0; rc == mqs_ok && pool->direct && i < pool->ndirect; i++) {
        mqs_taddr_t a = pool->direct + (mqs_taddr_t)i * (mqs_taddr_t)pool->size;
        unsigned h = MPICH_HANDLE_KIND_DIRECT << 30 | kind | (unsigned)i;
        if ((rc = comm_in_use(p, a, h, &in_use)) == mqs_ok && in_use)
            rc = push_addr(v, n, cap, a);
    }
    for (long blk = 0; rc == mqs_ok && blk < pool->nblocks; blk++) {
        mqs_taddr_t block;
        if ((rc = mpich__pool_block(p, pool, blk, &block)) != mqs_ok)
            break;
        for (long i = 0; rc == mqs_ok && i < MPICH_HANDLE_NUM_INDICES; i++) {
            mqs_taddr_t a = block + (mqs_taddr_t)i * (mqs_taddr_t)pool->size;
            unsigned h =
                MPICH_HANDLE_KIND_INDIRECT << 30 | kind | (unsigned)blk << 12 | (unsigned)i;
            if ((rc = comm_in_use(p, a, h, &in_use)) == mqs_ok && in_use)
                rc = push_addr(v, n, cap, a);
        }
    }
    return rc;
}

int mpich__stock_comms(struct mqd_process *p, mqs_taddr_t **out, int *nout, int *world_gone)
{
    const struct mpich_image *b = mpich__image(p);
    const struct mpich_process *bp = mqd_process_backend(p);
    mqs_taddr_t world = 0, self = 0, *v = NULL;
    int n = 0, cap = 0, in_use = 0;
    struct mpich_pool pool;
    *out = NULL;
    *nout = 0;
    *world_gone = 0;
    /* MPI_COMM_WORLD and MPI_COMM_SELF are MPIR_Comm_builtin[0] and [1],
     * outside the pool (builtin_comms.c:20-51). */
    int rc = mqd_read_ptr(p, bp->mpir_process + (mqs_taddr_t)b->off[F_PROC_COMM_WORLD], &world);
    if (rc == mqs_ok)
        rc = mqd_read_ptr(p, bp->mpir_process + (mqs_taddr_t)b->off[F_PROC_COMM_SELF], &self);
    if (rc == mqs_ok && world)
        rc = comm_in_use(p, world, MPICH_COMM_WORLD_HANDLE, &in_use);
    if (rc == mqs_ok && world && !in_use) { /* MPI_Finalize has freed it (or not yet made) */
        *world_gone = 1;
        return mqs_ok;
    }
    /* Then MPIR_finalize_builtin_comms forgets it (5.0.1 builtin_comms.c:
     * 135-139; 4.0.2 alike) and MPII_Finalize marks the world model
     * finalized at its end (mpir_init.c:478-480, mpi_init.h:81-95): known
     * where the library's debug symbols name it (not in a known build). */
    unsigned char state[4];
    if (rc == mqs_ok && !world && bp->world_model &&
        (rc = mqd_read(p, bp->world_model, state, 4)) == mqs_ok &&
        mqd_int(p, state, 0, 4) == MPICH_WORLD_MODEL_FINALIZED) {
        *world_gone = 1;
        return mqs_ok;
    }
    if (rc == mqs_ok && world)
        rc = push_addr(&v, &n, &cap, world);
    if (rc == mqs_ok && self && (rc = comm_in_use(p, self, MPICH_COMM_SELF_HANDLE, &in_use)) ==
                                    mqs_ok && in_use)
        rc = push_addr(&v, &n, &cap, self);
    if (rc == mqs_ok)
        rc = mpich__read_pool(p, bp->comm_mem, &pool);
    if (rc == mqs_ok && (pool.kind != MPICH_OBJECT_COMM || pool.size != b->size[S_SZ_COMM]))
        rc = MQD_ERR_BAD_VALUE;
    if (rc == mqs_ok)
        rc = pool_comms(p, &pool, &v, &n, &cap);
    if (rc != mqs_ok) {
        mqd_free(v);
        return rc;
    }
    *out = v;
    *nout = n;
    return mqs_ok;
}

/* ---------------------------------------------------------------- lists */

int mpich__stock_heads(struct mqd_process *p, int queue, mqs_taddr_t *heads, int *n)
{
    const struct mpich_image *b = mpich__image(p);
    const struct mpich_process *bp = mqd_process_backend(p);
    const int *o = b->off;
    unsigned char v[4];
    *n = 0;
    /* 5.0's n_total_vcis counts the reserved VCIs (MPIX streams) past the
     * n_vcis every communicator hashes to (5.0.1 ch4_types.h:289-291). */
    int total = o[F_CH4G_NTOTAL_VCIS] >= 0;
    int rc = mqd_read(p, bp->ch4_global + (mqs_taddr_t)o[total ? F_CH4G_NTOTAL_VCIS
                                                              : F_CH4G_NVCIS], v, 4);
    if (rc != mqs_ok)
        return rc;
    long nvcis = (long)mqd_int(p, v, 0, 4);
    if (nvcis == 0 && bp->finalized) /* MPI_Finalize has freed them: none */
        return mqs_ok;
    /* MPIDI_global.n_vcis: MPIDI_CH4_MAX_VCIS at most (ch4_init.c) */
    if (nvcis < 1 || nvcis > MPICH_CH4_MAX_VCIS)
        return MQD_ERR_BAD_VALUE;
    for (long i = 0; i < nvcis; i++)
        heads[(*n)++] = bp->ch4_global + (mqs_taddr_t)o[F_CH4G_PER_VCI] +
                        (mqs_taddr_t)i * (mqs_taddr_t)b->size[S_SZ_PER_VCI] +
                        (mqs_taddr_t)o[queue == mqs_pending_receives ? F_VCI_POSTED : F_VCI_UNEXP];
    return mqs_ok;
}
