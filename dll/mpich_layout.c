/*
 * mpich_layout.c - what the MPICH backend knows of MPICH's structures:
 * each field's class and the classes each generation needs, the offsets
 * and sizes found through the debugger's type callbacks (mqd_be_setup_image)
 * or, for a build without DWARF types, a known layout, and how much of
 * each structure to read.  See mpich.h.
 */
#include "mpich.h"

#include <stdio.h>
#include <string.h>

/* The classes of fields each generation needs in full. */
static const int gen_needs[] = {
    [MPICH_GEN_NONE] = 0,
    [MPICH_GEN_CH3_SENDQ] =
        CLASS_COMMON | CLASS_COMM_LIST | CLASS_CH3 | CLASS_SENDQ | CLASS_GROUP_LPIDS,
    [MPICH_GEN_CH3_DEBUGQ] = CLASS_COMMON | CLASS_COMM_LIST | CLASS_CH3 | CLASS_DEBUGQ,
    [MPICH_GEN_CH4_4X] = CLASS_COMMON | CLASS_COMM_LIST | CLASS_DEBUGQ | CLASS_GROUP_LPIDS,
    [MPICH_GEN_CH4_5X] = CLASS_COMMON | CLASS_COMM_LIST | CLASS_DEBUGQ | CLASS_GROUP_PMAP,
    [MPICH_GEN_CH4_MPIDIG] = CLASS_COMMON | CLASS_COMM_LIST | CLASS_SENDQ | CLASS_GROUP_LPIDS |
                             CLASS_MPIDIG | CLASS_MPIDIG_URECV,
    [MPICH_GEN_CH4_STOCK] =
        CLASS_COMMON | CLASS_GROUP_LPIDS | CLASS_MPIDIG | CLASS_STOCK | CLASS_POOLS,
    [MPICH_GEN_CH4_STOCK_5X] =
        CLASS_COMMON | CLASS_GROUP_PMAP | CLASS_MPIDIG | CLASS_STOCK | CLASS_POOLS,
};

/* What each generation reads when there: its needs and its optional classes
 * (CLASS_WORLDS joins any generation whose library has MPIR_Worlds). */
static const int gen_wants[] = {
    [MPICH_GEN_NONE] = CLASS_ALL & ~CLASS_LATE,
    [MPICH_GEN_CH3_SENDQ] = CLASS_COMMON | CLASS_COMM_LIST | CLASS_CH3 | CLASS_SENDQ |
                            CLASS_GROUP_LPIDS | CLASS_CH3_OPTIONAL | CLASS_REQUESTS |
                            CLASS_POOLS,
    [MPICH_GEN_CH3_DEBUGQ] = CLASS_COMMON | CLASS_COMM_LIST | CLASS_CH3 | CLASS_DEBUGQ |
                             CLASS_CH3_OPTIONAL | CLASS_REQUESTS | CLASS_POOLS,
    [MPICH_GEN_CH4_4X] = CLASS_COMMON | CLASS_COMM_LIST | CLASS_DEBUGQ | CLASS_GROUP_LPIDS |
                         CLASS_CH4_RANK_MAPS | CLASS_CH4_REQ | CLASS_MPIDIG_URECV |
                         CLASS_REQUESTS | CLASS_CH4_REQUESTS | CLASS_POOLS,
    [MPICH_GEN_CH4_5X] = CLASS_COMMON | CLASS_COMM_LIST | CLASS_DEBUGQ | CLASS_GROUP_PMAP |
                         CLASS_WORLDS | CLASS_CH4_REQ | CLASS_REQUESTS | CLASS_CH4_REQUESTS |
                         CLASS_POOLS,
    [MPICH_GEN_CH4_MPIDIG] = CLASS_COMMON | CLASS_COMM_LIST | CLASS_SENDQ | CLASS_GROUP_LPIDS |
                             CLASS_MPIDIG | CLASS_MPIDIG_URECV | CLASS_CH4_RANK_MAPS |
                             CLASS_CH4_REQ | CLASS_REQUESTS | CLASS_CH4_REQUESTS | CLASS_POOLS,
    [MPICH_GEN_CH4_STOCK] = CLASS_COMMON | CLASS_GROUP_LPIDS | CLASS_MPIDIG | CLASS_MPIDIG_URECV |
                            CLASS_STOCK | CLASS_STOCK_OPTIONAL | CLASS_POOLS |
                            CLASS_CH4_RANK_MAPS | CLASS_CH4_REQ | CLASS_REQUESTS |
                            CLASS_CH4_REQUESTS,
    [MPICH_GEN_CH4_STOCK_5X] = CLASS_COMMON | CLASS_GROUP_PMAP | CLASS_MPIDIG | CLASS_STOCK |
                               CLASS_STOCK_OPTIONAL | CLASS_POOLS | CLASS_WORLDS |
                               CLASS_CH4_REQ | CLASS_REQUESTS | CLASS_CH4_REQUESTS,
};

static const char *const generation_names[] = {
    [MPICH_GEN_NONE] = "none",
    [MPICH_GEN_CH3_SENDQ] = "ch3 (MPICH 4.0.2 and older)",
    [MPICH_GEN_CH3_DEBUGQ] = "ch3 with debug queues (MPICH 4.0.3 and later)",
    [MPICH_GEN_CH4_4X] = "debug queues (MPICH 4.0.3 to 4.3)",
    [MPICH_GEN_CH4_5X] = "debug queues with process maps (MPICH 5.0)",
    [MPICH_GEN_CH4_MPIDIG] = "ch4 with its own receive lists (MPICH 4.0.2)",
    [MPICH_GEN_CH4_STOCK] = "ch4 without debugger support, its own receive lists (MPICH 4.x)",
    [MPICH_GEN_CH4_STOCK_5X] =
        "ch4 without debugger support, its own receive lists (MPICH 5.0)",
};

static const struct {
    const char *path;
    int cls;
} field_defs[F_COUNT] = {
#define F_DEF_(id, cls, path) [F_##id] = {path, CLASS_##cls},
    MPICH_FIELDS(F_DEF_)
#undef F_DEF_
};

int mpich__lacks(const int *off, const enum field_id *ids, int n)
{
    for (int i = 0; i < n; i++)
        if (off[ids[i]] < 0) {
            char msg[160];
            snprintf(msg, sizeof msg, "the debug information lacks %s", field_defs[ids[i]].path);
            mqd_debug(msg);
            return 1;
        }
    return 0;
}

const char *mpich__class_lacks(const struct mpich_image *b, int cls)
{
    for (int f = 0; f < F_COUNT; f++)
        if (b->off[f] < 0 && (field_defs[f].cls & cls) != 0)
            return field_defs[f].path;
    return NULL;
}

static const struct {
    const char *type;
    int cls;
} size_defs[S_COUNT] = {
#define S_DEF_(id, cls, type) [S_##id] = {type, CLASS_##cls},
    MPICH_SIZES(S_DEF_)
#undef S_DEF_
};

/*
 * Known layouts of real builds, generated from their DWARF (make layouts):
 * used when a libmpi.so has the symbols but its debug types are gone.
 */
struct mpich_known_layout {
    const char *version, *device;
    int pointer_size, big_endian, nfields, nsizes;
    int off[F_COUNT];
    int size[S_COUNT];
};

#define MPICH_LAYOUT_BEGIN(v, d, ps, be, nf, ns) {v, d, ps, be, nf, ns, {
#define MPICH_LAYOUT_FIELD(id, o) [F_##id] = (o),
#define MPICH_LAYOUT_SIZES }, {
#define MPICH_LAYOUT_SIZE(id, sz) [S_##id] = (sz),
#define MPICH_LAYOUT_END }},
static const struct mpich_known_layout known_layouts[] = {
#include "mpich_defs/layouts.h"
};
#undef MPICH_LAYOUT_BEGIN
#undef MPICH_LAYOUT_FIELD
#undef MPICH_LAYOUT_SIZES
#undef MPICH_LAYOUT_SIZE
#undef MPICH_LAYOUT_END

int mpich__gen_is_ch3(enum mpich_generation gen)
{
    return (gen_needs[gen] & CLASS_CH3) != 0;
}

int mpich__gen_is_ch4_4x(enum mpich_generation gen)
{
    return gen == MPICH_GEN_CH4_4X || gen == MPICH_GEN_CH4_MPIDIG || gen == MPICH_GEN_CH4_STOCK;
}

int mpich__mpidig_envelope(const int *off, enum field_id *src, enum field_id *tag)
{
    int urecv = off[F_REQ_AM_SOURCE] >= 0 && off[F_REQ_AM_TAG] >= 0;
    *src = urecv ? F_REQ_AM_SOURCE : F_REQ_ST_SOURCE;
    *tag = urecv ? F_REQ_AM_TAG : F_REQ_ST_TAG;
    return off[*src] >= 0 && off[*tag] >= 0;
}

int mpich__gen_is_5x(enum mpich_generation gen)
{
    return gen == MPICH_GEN_CH4_5X || gen == MPICH_GEN_CH4_STOCK_5X;
}

int mpich__gen_is_stock(enum mpich_generation gen)
{
    return (gen_needs[gen] & CLASS_STOCK) != 0;
}

/* ---------------------------------------------------------------- spans */

/* How much of a structure (of type size[sz]) to read to cover fields ids
 * (struct mpich_span). */
static struct mpich_span span(const struct mpich_image *b, const enum field_id *ids, int n,
                              enum size_id sz)
{
    int max = 0;
    for (int i = 0; i < n; i++)
        if (b->off[ids[i]] >= 0 && b->off[ids[i]] + 8 > max)
            max = b->off[ids[i]] + 8;
    struct mpich_span sp = {max, b->size[sz] > 0 && b->size[sz] < max ? b->size[sz] : max};
    return sp;
}

int mpich__fields_fit(const int *off, const enum field_id *ids, int n, int width,
                      int len)
{
    for (int i = 0; i < n; i++)
        if (off[ids[i]] < 0 || off[ids[i]] > len - width)
            return 0;
    return 1;
}

int mpich__read_span(struct mqd_process *p, mqs_taddr_t addr, unsigned char *buf,
                     struct mpich_span sp)
{
    memset(buf + sp.read, 0, (size_t)(sp.len - sp.read));
    return mqd_read(p, addr, buf, sp.read);
}

static void set_spans(struct mpich_image *b)
{
    static const enum field_id comm_fields[] = {
        F_COMM_HANDLE, F_COMM_CTX,  F_COMM_RCTX,   F_COMM_RSIZE,  F_COMM_RANK, F_COMM_LSIZE,
        F_COMM_KIND,   F_COMM_NEXT, F_COMM_LGROUP, F_COMM_RGROUP, F_COMM_VCRT, F_COMM_LVCRT,
        F_COMM_NEXT_SCHED_TAG};
    static const enum field_id req_fields[] = {
        F_REQ_HANDLE,     F_REQ_KIND,     F_REQ_CC,         F_REQ_CC_PTR,
        F_REQ_NEXT,       F_REQ_MATCH_TAG,  F_REQ_MATCH_RANK,
        F_REQ_MATCH_CTX,  F_REQ_USER_BUF, F_REQ_USER_COUNT, F_REQ_DATATYPE,
        F_REQ_DATATYPE_PTR, F_REQ_RECV_SZ, F_REQ_TMPBUF,  F_REQ_ST_SOURCE,
        F_REQ_ST_TAG,     F_REQ_ST_COUNT_LO, F_REQ_ST_COUNT_HI, F_REQ_DEV_TYPE,
        F_REQ_AM_EXT,     F_REQ_AM_DATATYPE, F_REQ_PREQ_DATATYPE, F_REQ_OFI_DATATYPE,
        F_REQ_OFI_DIRECT_DATATYPE, F_REQ_DL_NEXT, F_REQ_AM_COUNT, F_REQ_AM_BUF,
        F_REQ_AM_SOURCE,  F_REQ_AM_TAG,   F_REQ_AM_CTX,     F_REQ_DEV_LOCAL, F_REQ_PREQ_COUNT,
        F_REQ_SELF_BUF,   F_REQ_SELF_COUNT, F_REQ_SELF_DATATYPE};
    static const enum field_id sendq_fields[] = {F_SENDQ_REQ, F_SENDQ_TAG, F_SENDQ_RANK,
                                                 F_SENDQ_CTX, F_SENDQ_NEXT};
    static const enum field_id dq_fields[] = {F_DQ_REQ, F_DQ_TAG, F_DQ_RANK, F_DQ_CTX,
                                              F_DQ_BUF, F_DQ_COUNT, F_DQ_NEXT};
    b->comm_span = span(b, comm_fields, NELEMS(comm_fields), S_SZ_COMM);
    if (b->off[F_COMM_NAME] >= 0 && b->off[F_COMM_NAME] + MQD_MAX_NAME > b->comm_span.len) {
        int end = b->off[F_COMM_NAME] + MQD_MAX_NAME, size = b->size[S_SZ_COMM];
        b->comm_span.len = end;
        b->comm_span.read = size > 0 && size < end ? size : end;
    }
    b->req_span = span(b, req_fields, NELEMS(req_fields), S_SZ_REQUEST);
    b->sendq_span = span(b, sendq_fields, NELEMS(sendq_fields), S_SZ_SENDQ);
    b->debugq_span = span(b, dq_fields, NELEMS(dq_fields), S_SZ_DEBUGQ);
}

/* MPIR_Context_id_t's bytes, unless the match parts end sooner (5.0 ch3
 * has no MPIR_Context_id_t: its int is then a guess the structure's size
 * corrects). */
int mpich__match_ctx_size(const struct mpich_image *b)
{
    int cs = b->size[S_SZ_CONTEXT_ID];
    if (b->size[S_SZ_MATCH_PARTS] > 0 && b->off[F_MATCH_CTX] >= 0 &&
        b->size[S_SZ_MATCH_PARTS] - b->off[F_MATCH_CTX] < cs)
        cs = b->size[S_SZ_MATCH_PARTS] - b->off[F_MATCH_CTX];
    return cs;
}

/* ---------------------------------------------------------------- classes */

/* The classes of fields whose every offset and size b has. */
static int known_classes(const struct mpich_image *b)
{
    int classes = CLASS_ALL;
    for (int f = 0; f < F_COUNT; f++)
        if (b->off[f] < 0)
            classes &= ~field_defs[f].cls;
    for (int s = 0; s < S_COUNT; s++)
        if (b->size[s] <= 0)
            classes &= ~size_defs[s].cls;
    return classes;
}

/*
 * Four structures whose DWARF is deep in libmpi's units, a walk of nearly
 * every unit for a debugger that indexes DWARF (most of a small job's
 * dump), placed from their declarations, unchanged since MPICH2:
 * src/mpi/debugger/dbginit.c's MPIR_Comm_list { int sequence_number;
 * MPIR_Comm *head; } (which MPICH's stub debugger, dbgstub.c, declares
 * again), 4.0.2's MPIR_Sendq { MPIR_Request *sreq; int tag, rank,
 * context_id; struct MPIR_Sendq *next, *prev; } (4.0.3's MPIR_Debugq is
 * in a header, early), src/mpid/common/sched/mpidu_sched.c's
 * MPIDU_Sched_state { struct MPIDU_Sched *head; } (head at 0, as any
 * structure's first member is) and ch3's MPIDI_Process_t { MPIDI_PG_t
 * *my_pg; int my_pg_rank; } (src/mpid/ch3/include/mpidimpl.h).  A
 * pointer's size and alignment are MPI_Aint's size on every platform MPICH
 * supports (mpich__check_layout holds the DLL to that).  Which are placed
 * so (DECLARED_*); none if MPI_Aint's size is not known (a stub debugger
 * without sizes): then the debugger is asked.
 */
enum { DECLARED_COMM_LIST = 1, DECLARED_SENDQ = 2, DECLARED_SCHED_STATE = 4,
       DECLARED_CH3_PROCESS = 8 };
static const char *const declared_types[] = {"MPIR_Comm_list", "MPIR_Sendq",
                                             "MPIDU_Sched_state", "MPIDI_Process_t"};

static int declared(mqs_image *image, const mqs_image_callbacks *cb, struct mqd_type_memo *memo,
                    struct mpich_image *b, int todo)
{
    int cls = todo & (CLASS_COMM_LIST | CLASS_SENDQ | CLASS_REQUESTS | CLASS_CH3_OPTIONAL);
    int ps = b->size[S_SZ_AINT];
    if (cls && ps <= 0 && cb->mqs_sizeof_fp) {
        mqs_type *t = mqd_find_type_memo(image, cb, memo, size_defs[S_SZ_AINT].type);
        ps = t ? cb->mqs_sizeof_fp(t) : -1;
    }
    if (!cls || (ps != 4 && ps != 8))
        return 0;
    if (cls & CLASS_COMM_LIST) {
        b->off[F_COMML_SEQ] = 0;
        b->off[F_COMML_HEAD] = ps;
    }
    if (cls & CLASS_SENDQ) {
        int next = (ps + 12 + ps - 1) / ps * ps;
        b->off[F_SENDQ_REQ] = 0;
        b->off[F_SENDQ_TAG] = ps;
        b->off[F_SENDQ_RANK] = ps + 4;
        b->off[F_SENDQ_CTX] = ps + 8;
        b->off[F_SENDQ_NEXT] = next;
        b->size[S_SZ_SENDQ] = next + 2 * ps;
    }
    if (cls & CLASS_REQUESTS)
        b->off[F_SCHEDS_HEAD] = 0;
    if (cls & CLASS_CH3_OPTIONAL) {
        b->off[F_PROC_MY_PG] = 0;
        b->off[F_PROC_MY_PG_RANK] = ps;
    }
    return (cls & CLASS_COMM_LIST ? DECLARED_COMM_LIST : 0) |
           (cls & CLASS_SENDQ ? DECLARED_SENDQ : 0) |
           (cls & CLASS_REQUESTS ? DECLARED_SCHED_STATE : 0) |
           (cls & CLASS_CH3_OPTIONAL ? DECLARED_CH3_PROCESS : 0);
}

/* Is name (a type, or a field path "TYPE:field") of a type placed? */
static int is_placed(const char *name, int placed)
{
    for (int i = 0; i < NELEMS(declared_types); i++) {
        size_t n = strlen(declared_types[i]);
        if ((placed & (1 << i)) && strncmp(name, declared_types[i], n) == 0 &&
            (name[n] == ':' || name[n] == '\0'))
            return 1;
    }
    return 0;
}

/* The sizes and offsets of classes todo into size and off, but for those
 * of types placed from their declarations. */
static void look_up(mqs_image *image, const mqs_image_callbacks *cb, struct mqd_type_memo *memo,
                    int todo, int placed, int *off, int *size)
{
    for (int s = 0; s < S_COUNT; s++) {
        int scls = size_defs[s].cls ? size_defs[s].cls : CLASS_COMMON;
        if (!(todo & scls) || is_placed(size_defs[s].type, placed))
            continue;
        /* mqs_sizeof_fp may be NULL (MPICH's stub debugger): sizes unknown. */
        mqs_type *t =
            cb->mqs_sizeof_fp ? mqd_find_type_memo(image, cb, memo, size_defs[s].type) : NULL;
        size[s] = t ? cb->mqs_sizeof_fp(t) : -1;
    }
    for (int f = 0; f < F_COUNT; f++) {
        int fcls = field_defs[f].cls ? field_defs[f].cls : CLASS_COMMON;
        if ((todo & fcls) && !is_placed(field_defs[f].path, placed))
            off[f] = mqd_path_offset_memo(image, cb, memo, field_defs[f].path);
    }
}

/*
 * Look up the fields and sizes of classes cls not looked up yet (those of
 * CLASS_OPTIONAL with CLASS_COMMON), then which classes are known in full.
 * Asking only for what a generation reads matters: a type no file defines
 * costs a host that indexes DWARF a walk of every file's (libc's debug
 * file included).
 */
void mpich__probe(mqs_image *image, const mqs_image_callbacks *cb, struct mpich_image *b,
                  int cls)
{
    int todo = cls & ~b->probed;
    struct mqd_type_memo memo = {0};
    if (!todo || b->layout || b->layout_build)
        return;
    int placed = declared(image, cb, &memo, b, todo);
    look_up(image, cb, &memo, todo, placed, b->off, b->size);
    b->probed |= todo;
    b->classes = known_classes(b);
    b->from_dwarf = 0;
    for (int g = MPICH_GEN_CH3_SENDQ; g < NELEMS(gen_needs); g++)
        if ((gen_needs[g] & ~b->classes) == 0)
            b->from_dwarf = 1;
    if (b->from_dwarf)
        set_spans(b);
}

/*
 * The image's layout with the fields of late classes cls, which the
 * processes' setup does not look up: their DWARF is deep in libmpi (ch3's
 * MPIDI_VCRT and MPIDI_VC in its last units, MPIDU_Sched 5 MB into its
 * .debug_info: a scan a debugger that indexes DWARF pays on every dump),
 * and a hung job seldom needs them (a communicator other than the world
 * and self, a nonblocking collective pending).  Looked up by the first
 * process that needs them, on whatever thread reads it, while others of
 * the image may be read on others: so into a copy of the image's layout
 * with the late classes looked up so far, published as the newest (a
 * thread that loses the race frees its own and tries again); the older
 * ones stay until the image goes, for the processes reading them.  No
 * lock: a DLL call its debugger abandons (mqd's host does, after
 * --timeout) would leave one held.  NULL without memory.
 */
const struct mpich_late *mpich__late(struct mqd_process *p, int cls)
{
    struct mpich_image *b = mqd_image_backend(mqd_process_image(p));
    struct mpich_late *have = atomic_load_explicit(&b->late, memory_order_acquire);
    for (;;) {
        if (have && (have->classes & cls) == cls)
            return have;
        struct mpich_late *l = mqd_malloc(sizeof *l);
        if (!l)
            return NULL;
        memcpy(l->off, have ? have->off : b->off, sizeof l->off);
        memcpy(l->size, have ? have->size : b->size, sizeof l->size);
        l->classes = (have ? have->classes : 0) | cls;
        l->older = have;
        int todo = cls & ~(have ? have->classes : 0) & ~b->probed;
        if (todo && !b->layout && !b->layout_build) {
            struct mqd_type_memo memo = {0};
            look_up(mqd_process_mqs_image(p), mqd_image_cb(mqd_process_image(p)), &memo, todo,
                    0, l->off, l->size);
        }
        if (atomic_compare_exchange_strong_explicit(&b->late, &have, l, memory_order_acq_rel,
                                                    memory_order_acquire))
            return l;
        mqd_free(l); /* another thread published first: have is its */
    }
}

void mpich__layout_from(struct mpich_image *b, mqd_step_fn step, const void *ctx)
{
    for (int f = 0; f < F_COUNT; f++)
        b->off[f] = mqd_path_offset_by(step, ctx, field_defs[f].path);
    for (int s = 0; s < S_COUNT; s++)
        b->size[s] = step(ctx, size_defs[s].type, NULL);
    b->probed = CLASS_ALL;
    b->classes = known_classes(b);
    set_spans(b);
}

void mpich__probe_generation(mqs_image *image, const mqs_image_callbacks *cb,
                             struct mpich_image *b, enum mpich_generation gen, int worlds)
{
    mpich__probe(image, cb, b, gen_wants[gen] | (worlds ? CLASS_WORLDS : 0));
}

/*
 * What the DWARF lacks, for the messages of a build without it: the first
 * thing missing from 4.0.2's ch3 classes, and from 4.0.3 and later's if
 * that is something else.
 */
static void name_lacks(struct mpich_image *b)
{
    const char *missing[32] = {NULL};
    for (int f = 0; f < F_COUNT; f++) {
        int k = field_defs[f].cls ? __builtin_ctz((unsigned)field_defs[f].cls) : 0;
        if (b->off[f] < 0 && field_defs[f].cls && !missing[k])
            missing[k] = field_defs[f].path;
    }
    for (int s = 0; s < S_COUNT; s++) {
        int k = size_defs[s].cls ? __builtin_ctz((unsigned)size_defs[s].cls) : 0;
        if (b->size[s] <= 0 && size_defs[s].cls && !missing[k])
            missing[k] = size_defs[s].type;
    }
    const char *old = NULL, *dq = NULL;
    for (int k = 0; k < NELEMS(missing); k++) {
        if (!old && missing[k] && ((gen_needs[MPICH_GEN_CH3_SENDQ] >> k) & 1))
            old = missing[k];
        if (!dq && missing[k] && ((gen_needs[MPICH_GEN_CH4_5X] >> k) & 1))
            dq = missing[k];
    }
    if (old && dq && strcmp(old, dq) != 0)
        snprintf(b->lacks, sizeof b->lacks, "%s (and, for MPICH 4.0.3 and later, %s)", old, dq);
    else
        snprintf(b->lacks, sizeof b->lacks, "%s", old ? old : dq ? dq : "?");
}

/* ---------------------------------------------------------------- image */

/*
 * The generation an image's symbols announce, as mqd_be_setup_process
 * decides it from a process's (MPICH_GEN_NONE: they do not tell); *worlds:
 * whether the library has 5.0's MPIR_Worlds.  ch3's MPIDI_Process tells
 * ch3 from ch4 here, where the device string cannot be read.
 */
static enum mpich_generation image_generation(mqs_image *image, const mqs_image_callbacks *cb,
                                              int *worlds)
{
    mqs_taddr_t a;
#define HAS_(name) (cb->mqs_find_symbol_fp(image, (char *)(name), &a) == mqs_ok)
    int debugq = HAS_(MPICH_SYM_RECVQ) && HAS_(MPICH_SYM_UNEXPQ);
    int ch3_lists = HAS_(MPICH_SYM_POSTED_PTR) && HAS_(MPICH_SYM_UNEXPECTED_PTR);
    int ch3 = HAS_(MPICH_SYM_CH3_PROCESS);
    *worlds = HAS_(MPICH_SYM_WORLDS);
#undef HAS_
    if (debugq && ch3_lists && ch3)
        return MPICH_GEN_CH3_DEBUGQ;
    if (debugq)
        return *worlds ? MPICH_GEN_CH4_5X : MPICH_GEN_CH4_4X;
    if (ch3_lists) /* ch4 4.0.2 exports them too, for MPIDIG's lists */
        return ch3 ? MPICH_GEN_CH3_SENDQ : MPICH_GEN_CH4_MPIDIG;
    return MPICH_GEN_NONE;
}

/*
 * An MPICH without the communicator list (MPIR_All_communicators, only
 * with --enable-debuginfo) keeps no queues for debuggers.  Every MPICH has
 * its version strings: with them, it is one whose ch4 device's own lists
 * may be read (MPICH_GEN_CH4_STOCK), where a known build or its DWARF
 * says how: the first process tells (mpich__stock_find), since only its
 * memory shows which build it is.  mqs_ok (b->stock 1), or why not.
 */
static int without_debugger_lists(mqs_image *image, struct mqd_image *im,
                                  const mqs_image_callbacks *cb, struct mpich_image *b)
{
    mqs_taddr_t addr;
    if (cb->mqs_find_symbol_fp(image, (char *)MPICH_SYM_DEVICE, &addr) != mqs_ok) {
        mqd_image_explain(im, "no symbol " MPICH_SYM_COMM_LIST " nor " MPICH_SYM_DEVICE
                              ": not an MPICH program");
        return MQD_ERR_NO_DEBUG_QUEUES;
    }
    b->stock = 1;
    return mqs_ok;
}

int mqd_be_setup_image(mqs_image *image, struct mqd_image *im, void **backend)
{
    const mqs_image_callbacks *cb = mqd_image_cb(im);
    *backend = NULL;
    struct mpich_image *b = mqd_calloc(1, sizeof *b);
    if (!b)
        return MQD_ERR_NOMEM;
    for (int f = 0; f < F_COUNT; f++)
        b->off[f] = -1;
    for (int s = 0; s < S_COUNT; s++)
        b->size[s] = -1;
    atomic_init(&b->late, NULL);
    mqs_taddr_t addr;
    if (cb->mqs_find_symbol_fp(image, (char *)MPICH_SYM_COMM_LIST, &addr) != mqs_ok) {
        int rc = without_debugger_lists(image, im, cb, b);
        if (rc != mqs_ok) {
            mqd_free(b);
            return rc;
        }
        *backend = b;
        return mqs_ok;
    }
    int worlds;
    enum mpich_generation g = image_generation(image, cb, &worlds);
    mpich__probe_generation(image, cb, b, g, worlds);
    if (!b->from_dwarf) /* the symbols misled, or there are no DWARF types */
        mpich__probe(image, cb, b, CLASS_ALL & ~CLASS_LATE);
    if (!b->from_dwarf) {
        /* Perhaps a build without DWARF whose layout is known: the first
         * process tells (mpich__choose_layout). */
        name_lacks(b);
        if (NELEMS(known_layouts) == 0) {
            mqd_image_explain(im, "the debug information lacks %s: is libmpi.so built with "
                                  "-g, or its debug file installed?", b->lacks);
            mqd_free(b);
            return MQD_ERR_NO_TYPE;
        }
    }
    *backend = b;
    return mqs_ok;
}

void mqd_be_destroy_image(void *backend)
{
    struct mpich_image *b = backend;
    struct mpich_late *l = b ? atomic_load_explicit(&b->late, memory_order_relaxed) : NULL;
    while (l) {
        struct mpich_late *older = l->older;
        mqd_free(l);
        l = older;
    }
    mqd_free(backend);
}

/* ---------------------------------------------------------------- process */

/*
 * Does known layout k fit this image: the same pointer size and byte
 * order, and every offset and size the debugger did resolve (a host may
 * know some types and not others) the same as k's?
 */
static int layout_fits(const struct mpich_image *b, const struct mpich_known_layout *k, int ps,
                       int be)
{
    if (k->pointer_size != ps || k->big_endian != be || k->nfields != F_COUNT ||
        k->nsizes != S_COUNT)
        return 0;
    for (int f = 0; f < F_COUNT; f++)
        if (b->off[f] >= 0 && b->off[f] != k->off[f])
            return 0;
    for (int s = 0; s < S_COUNT; s++)
        if (b->size[s] > 0 && b->size[s] != k->size[s])
            return 0;
    return 1;
}

/*
 * The known layout of this MPICH build, named by its version and device
 * strings (read from the process), pointer size and byte order.  A
 * debugger that cannot find those symbols (MPICH's stub debugger knows
 * only libtvmpich's) gets the one known layout that fits what it did
 * resolve, if exactly one does.  Either way mqd_be_read_comms then checks
 * the layout against MPI_COMM_WORLD and the debugger's rank.  Every
 * process of the image must come to the same layout.
 */
int mpich__choose_layout(struct mqd_process *p, struct mpich_image *b)
{
    mqs_image *image = mqd_process_mqs_image(p);
    const mqs_image_callbacks *cb = mqd_image_cb(mqd_process_image(p));
    mqs_taddr_t vaddr, daddr;
    char version[32] = "", device[64] = "";
    static const unsigned char one[2] = {0, 1};
    int big_endian = mqd_uint(p, one, 0, 2) == 1, ps = mqd_sizes(p)->pointer_size;
    int named = cb->mqs_find_symbol_fp(image, (char *)MPICH_SYM_VERSION, &vaddr) == mqs_ok &&
                cb->mqs_find_symbol_fp(image, (char *)MPICH_SYM_DEVICE, &daddr) == mqs_ok;
    if (named) {
        int rc = mqd_read_cstring(p, vaddr, version, sizeof version);
        if (rc == mqs_ok)
            rc = mqd_read_cstring(p, daddr, device, sizeof device);
        if (rc != mqs_ok)
            return rc;
    }
    const struct mpich_known_layout *found = NULL;
    int nfit = 0;
    for (int i = 0; i < NELEMS(known_layouts); i++) {
        const struct mpich_known_layout *k = &known_layouts[i];
        if (!named && b->layout == k) { /* an earlier process chose it */
            found = k;
            nfit = 1;
            break;
        }
        /* Once chosen, b->off is that layout's own: compare by name only. */
        if ((!b->layout && !layout_fits(b, k, ps, big_endian)) ||
            (named && (strcmp(k->version, version) != 0 || strcmp(k->device, device) != 0)))
            continue;
        if (!found)
            found = k;
        nfit++;
    }
    if (named && !found) {
        mqd_process_explain(p, "the debug information lacks %s, and the DLL knows no layout "
                               "for MPICH %s (%s, %d-bit %s-endian) that fits what it has: "
                               "install libmpi's debug information", b->lacks, version, device,
                            ps * 8, big_endian ? "big" : "little");
        return MQD_ERR_NO_TYPE;
    }
    if (!named && nfit != 1) {
        mqd_process_explain(p, "the debug information lacks %s, and without the symbols %s "
                               "and %s the DLL cannot tell which known layout applies (%d "
                               "fit)", b->lacks, MPICH_SYM_VERSION, MPICH_SYM_DEVICE, nfit);
        return MQD_ERR_NO_TYPE;
    }
    if (named && b->layout && b->layout != found) {
        mqd_process_explain(p, "this process runs MPICH %s (%s), another of the same program "
                               "%s (%s)", version, device, b->layout->version,
                            b->layout->device);
        return MQD_ERR_BAD_LAYOUT;
    }
    if (!b->layout) {
        b->layout = found;
        memcpy(b->off, found->off, sizeof b->off);
        memcpy(b->size, found->size, sizeof b->size);
        b->classes = known_classes(b);
        set_spans(b);
        char msg[200];
        snprintf(msg, sizeof msg, "no DWARF types: using the known layout of MPICH %s (%s)%s",
                 found->version, found->device,
                 named ? "" : ", the only one that fits what the debugger resolved");
        mqd_debug(msg);
    }
    return mqs_ok;
}

int mpich__check_layout(struct mqd_process *p, struct mpich_image *b, enum mpich_generation gen)
{
    /* A debugger describing another target (its type sizes): MPI_Aint is
     * pointer-sized on every platform MPICH supports. */
    int ps = mqd_sizes(p)->pointer_size;
    if (b->size[S_SZ_AINT] > 0 && b->size[S_SZ_AINT] != ps) {
        mqd_process_explain(p, "the debugger says pointers are %d bytes, but MPI_Aint is %d "
                               "in the debug information: its type sizes are another "
                               "target's", ps, b->size[S_SZ_AINT]);
        return MQD_ERR_BAD_LAYOUT;
    }
    /* Every field this generation reads must be known. */
    int g = gen_needs[gen];
    for (int f = 0; f < F_COUNT; f++) {
        if ((field_defs[f].cls & g) && b->off[f] < 0) {
            mqd_process_explain(p, "the debug information lacks %s, which MPICH's %s "
                                   "generation needs", field_defs[f].path,
                                generation_names[gen]);
            return MQD_ERR_NO_TYPE;
        }
    }
    for (int s = 0; s < S_COUNT; s++) {
        if ((size_defs[s].cls & g) && b->size[s] <= 0) {
            mqd_process_explain(p, "the debug information lacks the type %s",
                                size_defs[s].type);
            return MQD_ERR_NO_TYPE;
        }
    }
    /* MPIDIG matches a receive on u.recv's source and tag to 4.2, on its
     * status from 4.3 (mpich_defs.h). */
    enum field_id src, tag;
    if (mpich__gen_is_stock(gen) && !mpich__mpidig_envelope(b->off, &src, &tag)) {
        mqd_process_explain(p, "the debug information lacks both %s and %s, one of which MPICH's "
                               "%s generation needs", field_defs[F_REQ_AM_SOURCE].path,
                            field_defs[F_REQ_ST_SOURCE].path, generation_names[gen]);
        return MQD_ERR_NO_TYPE;
    }
    /* 5.0 has no MPIR_Context_id_t: its contexts are int. */
    if (b->size[S_SZ_CONTEXT_ID] <= 0)
        b->size[S_SZ_CONTEXT_ID] = mqd_sizes(p)->int_size;
    return mqs_ok;
}
