/*
 * mpich.c - the MPICH backend of mqd's debug DLL: where MPICH keeps its
 * communicators and queues, and how to read them (mpich_defs/mpich_defs.h
 * has the names).  The vendor-neutral rest is core.c.
 */
#include "core.h"
#include "mpich_defs/mpich_defs.h"

#include <stdio.h>
#include <string.h>

/* Classes of fields (mpich_defs.h), and the classes each generation needs. */
#define CLASS_A 0x01 /* all */
#define CLASS_C 0x02 /* ch3 device */
#define CLASS_S 0x04 /* MPIR_Sendq, 4.0.2 */
#define CLASS_Q 0x08 /* MPIR_Debugq, 4.0.3+ */
#define CLASS_G 0x10 /* 4.x groups */
#define CLASS_P 0x20 /* 5.0 groups */
#define CLASS_M 0x40  /* ch4 rank maps: optional, used when all there */
#define CLASS_H 0x80  /* ch3 process groups and match parts: optional */
#define CLASS_W 0x100 /* 5.0 worlds: optional */
#define CLASS_O 0x00  /* optional, any generation */
#define CLASS_ALL 0x1ff

static const int gen_needs[] = {
    [MPICH_GEN_NONE] = 0,
    [MPICH_GEN_CH3_402] = CLASS_A | CLASS_C | CLASS_S | CLASS_G,
    [MPICH_GEN_CH3_DQ] = CLASS_A | CLASS_C | CLASS_Q,
    [MPICH_GEN_DEBUGQ] = CLASS_A | CLASS_Q | CLASS_G,
    [MPICH_GEN_DEBUGQ_5] = CLASS_A | CLASS_Q | CLASS_P,
};

/* What each generation reads when there: its needs and its optional classes
 * (W joins any generation whose library has MPIR_Worlds). */
static const int gen_wants[] = {
    [MPICH_GEN_NONE] = CLASS_ALL,
    [MPICH_GEN_CH3_402] = CLASS_A | CLASS_C | CLASS_S | CLASS_G | CLASS_H,
    [MPICH_GEN_CH3_DQ] = CLASS_A | CLASS_C | CLASS_Q | CLASS_H,
    [MPICH_GEN_DEBUGQ] = CLASS_A | CLASS_Q | CLASS_G | CLASS_M,
    [MPICH_GEN_DEBUGQ_5] = CLASS_A | CLASS_Q | CLASS_P | CLASS_W,
};

enum field_id {
#define F_ENUM_(id, gen, path) F_##id,
    MPICH_FIELDS(F_ENUM_)
#undef F_ENUM_
    F_COUNT
};

enum size_id {
#define S_ENUM_(id, gen, type) S_##id,
    MPICH_SIZES(S_ENUM_)
#undef S_ENUM_
    S_COUNT
};

static const struct {
    const char *path;
    int cls;
} field_defs[F_COUNT] = {
#define F_DEF_(id, cls, path) [F_##id] = {path, CLASS_##cls},
    MPICH_FIELDS(F_DEF_)
#undef F_DEF_
};

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
struct known_layout {
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
static const struct known_layout known_layouts[] = {
#include "mpich_defs/layouts.h"
};
#undef MPICH_LAYOUT_BEGIN
#undef MPICH_LAYOUT_FIELD
#undef MPICH_LAYOUT_SIZES
#undef MPICH_LAYOUT_SIZE
#undef MPICH_LAYOUT_END

/* A structure as read: len bytes of buffer, room for every field used
 * (and 8 bytes past the last), of which the first read come from the
 * target (never past the structure's end: the next page may be unmapped).
 * Type answers that put a field past its structure's end (a corrupt
 * libmpi.so, a debugger's wrong sizes) leave len > read: such a field
 * reads as 0, never from outside the buffer. */
struct span {
    int len, read;
};

/* Per image: every offset and size, -1 where the debug info has none. */
struct be_image {
    int off[F_COUNT];
    int size[S_COUNT];
    /* How much of each structure to read: past the last field used. */
    struct span comm_span, req_span, sendq_span, debugq_span;
    /* No usable DWARF (from_dwarf 0): the first process chooses a known
     * layout; lacks says what the DWARF missed. */
    int from_dwarf;
    int classes; /* CLASS_* bits the debug information has in full */
    int probed;  /* CLASS_* bits looked up (optional fields: with the first) */
    const struct known_layout *layout;
    char lacks[256];
};

/* Per process: the symbols, and the generation they show. */
struct be_process {
    enum mpich_generation gen;
    mqs_taddr_t comm_list, sendq, posted_ptr, unexpected_ptr, recvq, unexpq, dt_direct;
    /* ch3 process groups (0 if unknown): this process's, and the key that
     * names it in an MPI-2 job ("PG-ID#RANK"). */
    mqs_taddr_t my_pg;
    char key[MQD_MAX_KEY];
    /* ch3: MPIDI_Process and MPIR_debug_state (0 if absent), for a process
     * in MPI_Finalize; finalized: the last read of the communicators found
     * them freed and gave the world that the queues still hold. */
    mqs_taddr_t ch3_process, debug_state;
    int finalized;
    /* 5.0: MPIR_Worlds and MPIR_Process (0 if absent). */
    mqs_taddr_t worlds, mpir_process;
    /* 4.x ch4: the PMI name of this process's world ("" if unknown); the
     * key is then "NAMESPACE#RANK" and rank maps' table 0 is that world. */
    char ns[MQD_MAX_KEY - 12]; /* PG_ID_MAX: room for "#RANK" */
    /* MPI_TAG_UB (MPIR_Process.attrs.tag_ub; 0 if unknown): a tag beyond it
     * is MPI's own (MPIR_TAG_COLL_BIT, src/include/mpir_tags.h). */
    long tag_ub;
};

/* ch3's generations read its own lists, tables and process groups. */
static int gen_is_ch3(enum mpich_generation gen)
{
    return (gen_needs[gen] & CLASS_C) != 0;
}

static const char *const generation_names[] = {
    [MPICH_GEN_NONE] = "none",
    [MPICH_GEN_CH3_402] = "ch3 (MPICH 4.0.2 and older)",
    [MPICH_GEN_CH3_DQ] = "ch3 with debug queues (MPICH 4.0.3 and later)",
    [MPICH_GEN_DEBUGQ] = "debug queues (MPICH 4.0.3 to 4.3)",
    [MPICH_GEN_DEBUGQ_5] = "debug queues with process maps (MPICH 5.0)",
};

const char *mqd_be_version(void)
{
    return "mqd message queue DLL for MPICH (4.0.2 ch3; 4.0.3+ ch3 and ch4; 5.0) 0.2";
}

const char *mqd_be_spawn_breakpoint(void)
{
    return MPICH_SPAWN_BREAKPOINT;
}

/* ---------------------------------------------------------------- image */

/*
 * A type by name, as every kind of debugger can resolve it.  Hosts differ:
 * one that indexes DWARF finds a struct by its tag ("MPIDI_VC") and by its
 * typedef ("MPIDI_VC_t"); one that evaluates C type names as gdb does
 * knows the typedef or "struct MPIDI_VC", never the bare tag; MPICH's stub
 * debugger knows only the names libtvmpich asks for.  So try the name as
 * written, then "struct NAME", then the other half of MPICH's "typedef
 * struct X {...} X_t" convention (X_t for X, X and struct X for X_t).
 */
static mqs_type *find_type(mqs_image *image, const mqs_image_callbacks *cb, const char *name)
{
    char alt[4][160];
    size_t len = strlen(name);
    int n = 0;
    if (!cb->mqs_find_type_fp || len + 8 > sizeof alt[0])
        return NULL;
    snprintf(alt[n++], sizeof alt[0], "%s", name);
    snprintf(alt[n++], sizeof alt[0], "struct %s", name);
    if (len > 2 && strcmp(name + len - 2, "_t") == 0) {
        snprintf(alt[n++], sizeof alt[0], "%.*s", (int)(len - 2), name);
        snprintf(alt[n++], sizeof alt[0], "struct %.*s", (int)(len - 2), name);
    } else {
        snprintf(alt[n++], sizeof alt[0], "%s_t", name);
    }
    for (int i = 0; i < n; i++) {
        mqs_type *t = cb->mqs_find_type_fp(image, alt[i], mqs_lang_c);
        if (t)
            return t;
    }
    return NULL;
}

/* The offset of one field path ("T1:f1/T2:f2"), or -1. */
static int path_offset(mqs_image *image, const mqs_image_callbacks *cb, const char *path)
{
    int total = 0;
    char buf[256];
    if (!cb->mqs_field_offset_fp)
        return -1;
    snprintf(buf, sizeof buf, "%s", path);
    for (char *step = buf; step && *step;) {
        char *next = strchr(step, '/');
        if (next)
            *next++ = '\0';
        char *colon = strchr(step, ':');
        if (!colon)
            return -1;
        *colon = '\0';
        mqs_type *t = find_type(image, cb, step);
        if (!t)
            return -1;
        int off = cb->mqs_field_offset_fp(t, colon + 1);
        if (off < 0 || off > MQD_MAX_OFFSET - total)
            return -1; /* none, or no structure of MPICH's is that big */
        total += off;
        step = next;
    }
    return total;
}

#define NELEMS(a) ((int)(sizeof(a) / sizeof((a)[0])))

/* How much of a structure (of type size[sz]) to read to cover fields ids
 * (struct span). */
static struct span span(const struct be_image *b, const enum field_id *ids, int n,
                        enum size_id sz)
{
    int max = 0;
    for (int i = 0; i < n; i++)
        if (b->off[ids[i]] >= 0 && b->off[ids[i]] + 8 > max)
            max = b->off[ids[i]] + 8;
    struct span sp = {max, b->size[sz] > 0 && b->size[sz] < max ? b->size[sz] : max};
    return sp;
}

/* Whether fields ids, of width bytes each, all lie in len bytes. */
static int fields_fit(const struct be_image *b, const enum field_id *ids, int n, int width,
                      int len)
{
    for (int i = 0; i < n; i++)
        if (b->off[ids[i]] < 0 || b->off[ids[i]] > len - width)
            return 0;
    return 1;
}

/* One structure at addr into buf (sp.len bytes), as struct span says. */
static int read_span(struct mqd_process *p, mqs_taddr_t addr, unsigned char *buf,
                     struct span sp)
{
    memset(buf + sp.read, 0, (size_t)(sp.len - sp.read));
    return mqd_read(p, addr, buf, sp.read);
}

static void set_spans(struct be_image *b)
{
    static const enum field_id comm_fields[] = {
        F_COMM_HANDLE, F_COMM_CTX,  F_COMM_RCTX,   F_COMM_RSIZE,  F_COMM_RANK, F_COMM_LSIZE,
        F_COMM_KIND,   F_COMM_NEXT, F_COMM_LGROUP, F_COMM_RGROUP, F_COMM_VCRT, F_COMM_LVCRT};
    static const enum field_id req_fields[] = {
        F_REQ_HANDLE,     F_REQ_KIND,     F_REQ_CC,         F_REQ_CC_PTR,
        F_REQ_NEXT,       F_REQ_MATCH_TAG,  F_REQ_MATCH_RANK,
        F_REQ_MATCH_CTX,  F_REQ_USER_BUF, F_REQ_USER_COUNT, F_REQ_DATATYPE,
        F_REQ_DATATYPE_PTR, F_REQ_RECV_SZ, F_REQ_TMPBUF,  F_REQ_ST_SOURCE,
        F_REQ_ST_TAG,     F_REQ_ST_COUNT_LO, F_REQ_ST_COUNT_HI};
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

/* Bytes of ch3's match context: MPIR_Context_id_t's, unless the match
 * parts end sooner (5.0 ch3 has no MPIR_Context_id_t: its int is then a
 * guess the structure's size corrects). */
static int match_ctx_size(const struct be_image *b)
{
    int cs = b->size[S_SZ_CONTEXT_ID];
    if (b->size[S_SZ_MATCH_PARTS] > 0 && b->off[F_MATCH_CTX] >= 0 &&
        b->size[S_SZ_MATCH_PARTS] - b->off[F_MATCH_CTX] < cs)
        cs = b->size[S_SZ_MATCH_PARTS] - b->off[F_MATCH_CTX];
    return cs;
}

/* The classes of fields whose every offset and size b has. */
static int known_classes(const struct be_image *b)
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
 * Look up the fields and sizes of classes cls not looked up yet (those of
 * class O with A), then which classes are known in full.  Asking only for
 * what a generation reads matters: a type no file defines costs a host
 * that indexes DWARF a walk of every file's (libc's debug file included).
 */
static void probe(mqs_image *image, const mqs_image_callbacks *cb, struct be_image *b, int cls)
{
    int todo = cls & ~b->probed;
    if (!todo || b->layout)
        return;
    for (int f = 0; f < F_COUNT; f++)
        if (todo & (field_defs[f].cls ? field_defs[f].cls : CLASS_A))
            b->off[f] = path_offset(image, cb, field_defs[f].path);
    for (int s = 0; s < S_COUNT; s++) {
        if (!(todo & (size_defs[s].cls ? size_defs[s].cls : CLASS_A)))
            continue;
        /* mqs_sizeof_fp may be NULL (MPICH's stub debugger): sizes unknown. */
        mqs_type *t = cb->mqs_sizeof_fp ? find_type(image, cb, size_defs[s].type) : NULL;
        b->size[s] = t ? cb->mqs_sizeof_fp(t) : -1;
    }
    b->probed |= todo;
    b->classes = known_classes(b);
    b->from_dwarf = 0;
    for (int g = MPICH_GEN_CH3_402; g < NELEMS(gen_needs); g++)
        if ((gen_needs[g] & ~b->classes) == 0)
            b->from_dwarf = 1;
    if (b->from_dwarf)
        set_spans(b);
}

/*
 * What the DWARF lacks, for the messages of a build without it: the first
 * thing missing from 4.0.2's ch3 classes, and from 4.0.3 and later's if
 * that is something else.
 */
static void name_lacks(struct be_image *b)
{
    const char *missing[16] = {NULL};
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
    for (int k = 0; k < 16; k++) {
        if (!old && missing[k] && ((gen_needs[MPICH_GEN_CH3_402] >> k) & 1))
            old = missing[k];
        if (!dq && missing[k] && ((gen_needs[MPICH_GEN_DEBUGQ_5] >> k) & 1))
            dq = missing[k];
    }
    if (old && dq && strcmp(old, dq) != 0)
        snprintf(b->lacks, sizeof b->lacks, "%s (and, for MPICH 4.0.3 and later, %s)", old, dq);
    else
        snprintf(b->lacks, sizeof b->lacks, "%s", old ? old : dq ? dq : "?");
}

/*
 * The generation an image's symbols announce, as setup_process decides it
 * from a process's (MPICH_GEN_NONE: they do not tell); *worlds: whether
 * the library has 5.0's MPIR_Worlds.  ch3's MPIDI_Process tells ch3 from
 * ch4 here, where the device string cannot be read.
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
        return MPICH_GEN_CH3_DQ;
    if (debugq)
        return *worlds ? MPICH_GEN_DEBUGQ_5 : MPICH_GEN_DEBUGQ;
    return ch3_lists ? MPICH_GEN_CH3_402 : MPICH_GEN_NONE;
}

int mqd_be_setup_image(mqs_image *image, struct mqd_image *im, void **backend)
{
    const mqs_image_callbacks *cb = mqd_image_cb(im);
    *backend = NULL;
    /* Without the communicator list there is nothing MPICH-like here. */
    mqs_taddr_t addr;
    if (cb->mqs_find_symbol_fp(image, (char *)MPICH_SYM_COMM_LIST, &addr) != mqs_ok) {
        mqd_image_explain(im, "no symbol " MPICH_SYM_COMM_LIST ": not an MPICH program, or "
                              "an MPICH configured without --enable-debuginfo");
        return MQD_ERR_NO_DEBUG_QUEUES;
    }
    struct be_image *b = mqd_calloc(1, sizeof *b);
    if (!b)
        return MQD_ERR_NOMEM;
    for (int f = 0; f < F_COUNT; f++)
        b->off[f] = -1;
    for (int s = 0; s < S_COUNT; s++)
        b->size[s] = -1;
    int worlds;
    enum mpich_generation g = image_generation(image, cb, &worlds);
    probe(image, cb, b, gen_wants[g] | (worlds ? CLASS_W : 0));
    if (!b->from_dwarf) /* the symbols misled, or there are no DWARF types */
        probe(image, cb, b, CLASS_ALL);
    if (!b->from_dwarf) {
        /* Perhaps a build without DWARF whose layout is known: the first
         * process tells (choose_layout). */
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
    mqd_free(backend);
}

/* ---------------------------------------------------------------- process */

static const struct be_image *bimg(struct mqd_process *p)
{
    return mqd_image_backend(mqd_process_image(p));
}

/*
 * Does known layout k fit this image: the same pointer size and byte
 * order, and every offset and size the debugger did resolve (a host may
 * know some types and not others) the same as k's?
 */
static int layout_fits(const struct be_image *b, const struct known_layout *k, int ps, int be)
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
 * No usable DWARF types: take the known layout of this MPICH build, named
 * by its version and device strings (read from the process), pointer size
 * and byte order.  A debugger that cannot find those symbols (MPICH's stub
 * debugger knows only libtvmpich's) gets the one known layout that fits
 * what it did resolve, if exactly one does.  Either way read_comms then
 * checks the layout against MPI_COMM_WORLD and the debugger's rank.  Every
 * process of the image must come to the same layout.
 */
static int choose_layout(struct mqd_process *p, struct be_image *b)
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
    const struct known_layout *found = NULL;
    int nfit = 0;
    for (int i = 0; i < NELEMS(known_layouts); i++) {
        const struct known_layout *k = &known_layouts[i];
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

static int process_group_known(const struct be_image *b)
{
    return b->off[F_VC_PG] >= 0 && b->off[F_VC_PG_RANK] >= 0 && b->off[F_PG_ID] >= 0 &&
           b->off[F_PROC_MY_PG] >= 0 && b->off[F_PROC_MY_PG_RANK] >= 0;
}

/* The id string of ch3 process group pg ("kvs_..."). */
enum { PG_ID_MAX = MQD_MAX_KEY - 12 }; /* room for "#RANK" in a key */

/* The MPI-2 key of rank `rank` of the world (ch3: the process group) named
 * ns, "NS#RANK": what every generation names a process by, into out. */
static void make_key(char out[MQD_MAX_KEY], const char *ns, long rank)
{
    snprintf(out, MQD_MAX_KEY, "%s#%d", ns, (int)rank);
}

/* The identity the debugger gave that process; -1 if none. */
static long identity_of(struct mqd_process *p, const char *ns, long rank)
{
    char key[MQD_MAX_KEY];
    make_key(key, ns, rank);
    return mqd_job_identity(p, key);
}

/* This process's key, from its world's name ns and its world rank
 * (MPIR_Process.rank); 0, or -1 (no key) if the rank cannot be read. */
static int key_by_world_rank(struct mqd_process *p, struct be_process *bp, const char *ns)
{
    const struct be_image *b = bimg(p);
    unsigned char v[4];
    if (!bp->mpir_process || b->off[F_PROC_RANK] < 0 ||
        mqd_read(p, bp->mpir_process + (mqs_taddr_t)b->off[F_PROC_RANK], v, 4) != mqs_ok)
        return -1;
    make_key(bp->key, ns, (long)mqd_int(p, v, 0, 4));
    return 0;
}
static int read_pg_id(struct mqd_process *p, mqs_taddr_t pg, char *out, int len)
{
    mqs_taddr_t id;
    int rc = mqd_read_ptr(p, pg + (mqs_taddr_t)bimg(p)->off[F_PG_ID], &id);
    if (rc == mqs_ok && !id)
        rc = MQD_ERR_BAD_VALUE;
    return rc == mqs_ok ? mqd_read_cstring(p, id, out, len) : rc;
}

/* ch3: this process's group and key, from the MPIDI_Process variable at
 * var.  Without them only MPI-1 global ranks are given (not an error). */
static void my_process_group(struct mqd_process *p, struct be_process *bp, mqs_taddr_t var)
{
    const struct be_image *b = bimg(p);
    mqs_taddr_t pg;
    unsigned char rbuf[4];
    if (mqd_read_ptr(p, var + (mqs_taddr_t)b->off[F_PROC_MY_PG], &pg) != mqs_ok || !pg ||
        mqd_read(p, var + (mqs_taddr_t)b->off[F_PROC_MY_PG_RANK], rbuf, 4) != mqs_ok)
        return;
    char name[PG_ID_MAX];
    if (read_pg_id(p, pg, name, sizeof name) != mqs_ok)
        return;
    make_key(bp->key, name, (long)mqd_int(p, rbuf, 0, 4));
    bp->my_pg = pg;
}

/* The PMI namespace of world idx (5.0's MPIR_Worlds) into out. */
static int world_namespace(struct mqd_process *p, long idx, char *out, int len)
{
    const struct be_image *b = bimg(p);
    struct be_process *bp = mqd_process_backend(p);
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
static void my_world_key(struct mqd_process *p, struct be_process *bp)
{
    char ns[PG_ID_MAX];
    if (world_namespace(p, 0, ns, sizeof ns) == mqs_ok && ns[0])
        key_by_world_rank(p, bp, ns);
}

/*
 * 4.x ch4: this process's MPI-2 key, from the PMI name of its world that
 * src/util/mpir_pmi.c keeps in a static (a char * under PMI-1 and PMI-2,
 * the nspace that starts a pmix_proc_t under PMIx) and its world rank: the
 * key ch3 and 5.0 give for the same process.  A library stripped of its
 * local symbols has none: MPI-1 ranks only.
 */
static void my_pmi_key(struct mqd_process *p, struct be_process *bp, mqs_taddr_t var,
                       int inline_name)
{
    mqs_taddr_t name = var;
    char ns[PG_ID_MAX];
    if (!var || (!inline_name && (mqd_read_ptr(p, var, &name) != mqs_ok || !name)) ||
        mqd_read_cstring(p, name, ns, sizeof ns) != mqs_ok || !ns[0] ||
        key_by_world_rank(p, bp, ns) != 0)
        return;
    snprintf(bp->ns, sizeof bp->ns, "%s", ns);
}

int mqd_be_process_key(struct mqd_process *p, char *key, int len)
{
    struct be_process *bp = mqd_process_backend(p);
    snprintf(key, (size_t)len, "%s", bp ? bp->key : "");
    return mqs_ok;
}

int mqd_be_setup_process(mqs_process *process, struct mqd_process *p, void **backend)
{
    struct mqd_image *im = mqd_process_image(p);
    const mqs_image_callbacks *cb = mqd_image_cb(im);
    /* An image's processes set up one at a time (mqd's host gives each
     * its own image): what they learn of the image is kept in it. */
    struct be_image *b = mqd_image_backend(im);
    (void)process;
    *backend = NULL;
    struct be_process *bp = mqd_calloc(1, sizeof *bp);
    if (!bp)
        return MQD_ERR_NOMEM;
    mqs_image *image = mqd_process_mqs_image(p); /* the process's own (ASLR) */
#define SYM_(name, dst) (cb->mqs_find_symbol_fp(image, (char *)(name), (dst)) == mqs_ok)
    int have_list = SYM_(MPICH_SYM_COMM_LIST, &bp->comm_list);
    int have_sendq = SYM_(MPICH_SYM_SENDQ, &bp->sendq);
    if (!SYM_(MPICH_SYM_DATATYPE_DIRECT, &bp->dt_direct))
        bp->dt_direct = 0;
    int debugq = SYM_(MPICH_SYM_RECVQ, &bp->recvq) && SYM_(MPICH_SYM_UNEXPQ, &bp->unexpq);
    int ch3_lists = SYM_(MPICH_SYM_POSTED_PTR, &bp->posted_ptr) &&
                    SYM_(MPICH_SYM_UNEXPECTED_PTR, &bp->unexpected_ptr);
    mqs_taddr_t daddr;
    char device[64] = "";
    if (SYM_(MPICH_SYM_DEVICE, &daddr) &&
        mqd_read_cstring(p, daddr, device, sizeof device) != mqs_ok)
        device[0] = '\0';
    if (!SYM_(MPICH_SYM_WORLDS, &bp->worlds))
        bp->worlds = 0;
    if (!SYM_(MPICH_SYM_PROCESS, &bp->mpir_process))
        bp->mpir_process = 0;
    if (!SYM_(MPICH_SYM_DEBUG_STATE, &bp->debug_state))
        bp->debug_state = 0;
#undef SYM_
    /*
     * The generation.  ch4 exports MPID_Recvq_posted_head_ptr too, so the
     * device decides (MPII_Version_device, "ch3:nemesis", "ch4:ofi"); a
     * library without that string is ch3 if its DWARF has ch3's types.
     * 4.0.3+ ch3 keeps receives in its own lists (see mpich_defs.h).
     */
    if (!device[0])
        probe(image, cb, b, CLASS_C);
    int ch3 = device[0] ? strncmp(device, "ch3", 3) == 0 : (b->classes & CLASS_C) != 0;
    if (debugq && !(b->classes & (CLASS_P | CLASS_G)))
        probe(image, cb, b, CLASS_P | CLASS_G);
    if (debugq && ch3 && ch3_lists)
        bp->gen = MPICH_GEN_CH3_DQ;
    else if (debugq)
        bp->gen = (b->classes & CLASS_P) || !(b->classes & CLASS_G) ? MPICH_GEN_DEBUGQ_5
                                                                    : MPICH_GEN_DEBUGQ;
    else if (ch3_lists)
        bp->gen = MPICH_GEN_CH3_402;
    const char *why = NULL;
    if (!have_list || !have_sendq)
        why = "no " MPICH_SYM_COMM_LIST " or " MPICH_SYM_SENDQ;
    else if (bp->gen == MPICH_GEN_NONE)
        why = "neither " MPICH_SYM_RECVQ "/" MPICH_SYM_UNEXPQ " (MPICH 4.0.3 and later) nor "
              MPICH_SYM_POSTED_PTR " (ch3, MPICH 4.0.2)";
    if (why) {
        mqd_process_explain(p, "%s: this MPICH keeps no message queues for debuggers "
                               "(configure it with --enable-debuginfo)", why);
        mqd_free(bp);
        return MQD_ERR_NO_DEBUG_QUEUES;
    }
    /* All this generation reads, if the image's symbols announced another. */
    probe(image, cb, b, gen_wants[bp->gen] | (bp->worlds ? CLASS_W : 0));
    mqs_taddr_t ch3_process = 0, pmi_name = 0; /* read once the layout is known */
    int pmix = 0;
    if (bp->gen == MPICH_GEN_DEBUGQ &&
        cb->mqs_find_symbol_fp(image, (char *)MPICH_SYM_PMI1_KVS, &pmi_name) != mqs_ok &&
        cb->mqs_find_symbol_fp(image, (char *)MPICH_SYM_PMI2_JOBID, &pmi_name) != mqs_ok)
        pmix = cb->mqs_find_symbol_fp(image, (char *)MPICH_SYM_PMIX_PROC, &pmi_name) == mqs_ok;
    if (gen_is_ch3(bp->gen) &&
        cb->mqs_find_symbol_fp(image, (char *)MPICH_SYM_CH3_PROCESS, &ch3_process) != mqs_ok)
        ch3_process = 0;
    if (!b->from_dwarf) {
        int rc = choose_layout(p, b);
        if (rc != mqs_ok) {
            mqd_free(bp);
            return rc;
        }
    }
    /* A debugger describing another target (its type sizes): MPI_Aint is
     * pointer-sized on every platform MPICH supports. */
    int ps = mqd_sizes(p)->pointer_size;
    if (b->size[S_SZ_AINT] > 0 && b->size[S_SZ_AINT] != ps) {
        mqd_process_explain(p, "the debugger says pointers are %d bytes, but MPI_Aint is %d "
                               "in the debug information: its type sizes are another "
                               "target's", ps, b->size[S_SZ_AINT]);
        mqd_free(bp);
        return MQD_ERR_BAD_LAYOUT;
    }
    /* Every field this generation reads must be known. */
    int g = gen_needs[bp->gen];
    for (int f = 0; f < F_COUNT; f++) {
        if ((field_defs[f].cls & g) && b->off[f] < 0) {
            mqd_process_explain(p, "the debug information lacks %s, which MPICH's %s "
                                   "generation needs", field_defs[f].path,
                                generation_names[bp->gen]);
            mqd_free(bp);
            return MQD_ERR_NO_TYPE;
        }
    }
    for (int s = 0; s < S_COUNT; s++) {
        if ((size_defs[s].cls & g) && b->size[s] <= 0) {
            mqd_process_explain(p, "the debug information lacks the type %s",
                                size_defs[s].type);
            mqd_free(bp);
            return MQD_ERR_NO_TYPE;
        }
    }
    /* 5.0 has no MPIR_Context_id_t: its contexts are int. */
    if (b->size[S_SZ_CONTEXT_ID] <= 0)
        b->size[S_SZ_CONTEXT_ID] = mqd_sizes(p)->int_size;
    *backend = bp;
    unsigned char ub[4];
    if (bp->mpir_process && b->off[F_PROC_TAG_UB] >= 0 &&
        mqd_read(p, bp->mpir_process + (mqs_taddr_t)b->off[F_PROC_TAG_UB], ub, 4) == mqs_ok &&
        mqd_int(p, ub, 0, 4) > 0)
        bp->tag_ub = (long)mqd_int(p, ub, 0, 4);
    if (bp->gen == MPICH_GEN_DEBUGQ_5)
        my_world_key(p, bp);
    if (bp->gen == MPICH_GEN_DEBUGQ)
        my_pmi_key(p, bp, pmi_name, pmix);
    if (ch3_process && process_group_known(b)) {
        bp->ch3_process = ch3_process;
        my_process_group(p, bp, ch3_process);
    }
    return mqs_ok;
}

void mqd_be_destroy_process(void *backend)
{
    mqd_free(backend);
}

/* ---------------------------------------------------------------- communicators */

int mqd_be_comms_changed(struct mqd_process *p, uint64_t *stamp, int *changed)
{
    const struct be_image *b = bimg(p);
    struct be_process *bp = mqd_process_backend(p);
    unsigned char buf[8];
    int rc = mqd_read(p, bp->comm_list + (mqs_taddr_t)b->off[F_COMML_SEQ], buf, 4);
    if (rc != mqs_ok)
        return rc;
    uint64_t seq = mqd_uint(p, buf, 0, 4) + 1; /* +1: never 0, the initial stamp */
    *changed = seq != *stamp;
    *stamp = seq;
    return mqs_ok;
}

/* A small map from a VC's address to its global rank, for one read of
 * the list. */
struct lpid_cache {
    int n;
    mqs_taddr_t addr[256];
    long global[256];
    /* Process groups' id strings, by the group's address. */
    int npg;
    mqs_taddr_t pg[8];
    char pg_id[8][PG_ID_MAX];
    int use_job; /* this process is in the debugger's job table (MPI-2) */
};

/* The id string of process group pg (cached per read of the list). */
static int pg_name(struct mqd_process *p, struct lpid_cache *c, mqs_taddr_t pg,
                   const char **name)
{
    for (int i = 0; i < c->npg; i++) {
        if (c->pg[i] == pg) {
            *name = c->pg_id[i];
            return mqs_ok;
        }
    }
    int slot = c->npg < 8 ? c->npg++ : 7;
    int rc = read_pg_id(p, pg, c->pg_id[slot], sizeof c->pg_id[slot]);
    c->pg[slot] = rc == mqs_ok ? pg : 0;
    *name = c->pg_id[slot];
    return rc;
}

/*
 * ch3: the global rank of the process behind virtual connection vc.  With
 * process groups known, that is the identity the debugger gave the process
 * (MPI-2; -1 if it has none) or, with no job table, its rank in this
 * process's MPI_COMM_WORLD (-1 if in another group).  Without them, the
 * VC's lpid, which read_comms bounds by the world's size.
 */
static int vc_global(struct mqd_process *p, struct lpid_cache *c, mqs_taddr_t vc, long *global)
{
    const struct be_image *b = bimg(p);
    struct be_process *bp = mqd_process_backend(p);
    for (int i = 0; i < c->n; i++) {
        if (c->addr[i] == vc) {
            *global = c->global[i];
            return mqs_ok;
        }
    }
    /* lpid, and with groups known pg and pg_rank: one read over all. */
    int lo = b->off[F_VC_LPID], hi = b->off[F_VC_LPID] + 4;
    if (bp->my_pg) {
        const int more[] = {b->off[F_VC_PG], b->off[F_VC_PG_RANK]};
        const int len[] = {mqd_sizes(p)->pointer_size, 4};
        for (int i = 0; i < 2; i++) {
            lo = more[i] < lo ? more[i] : lo;
            hi = more[i] + len[i] > hi ? more[i] + len[i] : hi;
        }
    }
    unsigned char buf[64];
    if (hi - lo > (int)sizeof buf)
        return MQD_ERR_BAD_LAYOUT;
    int rc = mqd_read(p, vc + (mqs_taddr_t)lo, buf, hi - lo);
    if (rc != mqs_ok)
        return rc;
    *global = (long)mqd_int(p, buf, b->off[F_VC_LPID] - lo, 4);
    if (bp->my_pg) {
        mqs_taddr_t pg = mqd_ptr(p, buf, b->off[F_VC_PG] - lo);
        const char *name;
        if ((rc = pg_name(p, c, pg, &name)) != mqs_ok)
            return rc;
        if (c->use_job)
            *global = identity_of(p, name, (long)mqd_int(p, buf, b->off[F_VC_PG_RANK] - lo, 4));
        else if (pg != bp->my_pg)
            *global = -1;
    }
    if (c->n < 256) {
        c->addr[c->n] = vc;
        c->global[c->n++] = *global;
    }
    return mqs_ok;
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
static int read_vcrt(struct mqd_process *p, struct lpid_cache *cache, mqs_taddr_t vcrt,
                     long want, int lenient, long **out, int *longer)
{
    const struct be_image *b = bimg(p);
    int ps = mqd_sizes(p)->pointer_size;
    unsigned char hdr[4];
    *out = NULL;
    if (longer)
        *longer = 0;
    if (!vcrt || want <= 0)
        return mqs_ok;
    int rc = mqd_read(p, vcrt + (mqs_taddr_t)b->off[F_VCRT_SIZE], hdr, 4);
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
    if (longer)
        *longer = n > want;
    n = want;
    unsigned char *table = mqd_malloc((size_t)n * (size_t)ps);
    long *lpids = mqd_malloc((size_t)n * sizeof *lpids);
    if (!table || !lpids) {
        mqd_free(table);
        mqd_free(lpids);
        return MQD_ERR_NOMEM;
    }
    rc = mqd_read(p, vcrt + (mqs_taddr_t)b->off[F_VCRT_TABLE], table, (int)(n * ps));
    for (long i = 0; rc == mqs_ok && i < n; i++) {
        mqs_taddr_t vc = mqd_ptr(p, table, (int)(i * ps));
        rc = vc ? vc_global(p, cache, vc, &lpids[i]) : MQD_ERR_BAD_VALUE;
    }
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
static long self_global(struct mqd_process *p, const struct lpid_cache *c)
{
    struct be_process *bp = mqd_process_backend(p);
    return c->use_job ? mqd_job_identity(p, bp->key) : mqd_process_global_rank(p);
}

/*
 * 5.0: lpid (world index << 32 | world rank, src/include/mpir_group.h) to
 * a global rank: with a job table the identity its key names ("NAMESPACE
 * #RANK", the namespace from MPIR_Worlds), else the world rank in this
 * process's own world (index 0) and -1 in any other.
 */
static long lpid_global(struct mqd_process *p, int64_t lpid, int use_job, char *ns0,
                        size_t nslen)
{
    if (lpid < 0) /* MPIR_LPID_DYNAMIC_MASK: a connection being made */
        return -1;
    long idx = (long)(lpid >> 32), rank = (long)(lpid & 0xffffffff);
    if (!use_job)
        return idx == 0 ? rank : -1;
    char ns[PG_ID_MAX];
    if (idx == 0 && !ns0[0] && world_namespace(p, 0, ns0, (int)nslen) != mqs_ok)
        ns0[0] = '\0';
    if (idx == 0)
        snprintf(ns, sizeof ns, "%s", ns0);
    else if (world_namespace(p, idx, ns, sizeof ns) != mqs_ok)
        return -1;
    return ns[0] ? identity_of(p, ns, rank) : -1;
}

/*
 * A group's members (*out of want) as lpids, or (5.0, *final set) as
 * global ranks.  4.x: the lrank_to_lpid table.  5.0: the MPIR_Pmap, an
 * lpid table (use_map) or offset, stride and blocksize (rank r is offset
 * + r / blocksize * stride + r % blocksize; without blocksize, offset + r
 * * stride).
 */
static int read_group(struct mqd_process *p, mqs_taddr_t group, long want, long **out,
                      int *final)
{
    const struct be_image *b = bimg(p);
    struct be_process *bp = mqd_process_backend(p);
    int pmap = bp->gen == MPICH_GEN_DEBUGQ_5 || !(b->classes & CLASS_G);
    unsigned char hdr[4], pm[64];
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
    int esz = pmap ? 8 : b->size[S_SZ_PMAP], eoff = pmap ? 0 : b->off[F_PMAP_LPID];
    mqs_taddr_t map;
    int use_map = 1;
    int64_t offset = 0, stride = 1, blocksize = 0;
    if (pmap) {
        int u = b->off[F_PMAPS_U], len = b->size[S_SZ_PMAPS];
        int use = b->off[F_PMAPS_USE_MAP];
        if (len <= 0 || len > (int)sizeof pm || u < 0 || u + 16 > len || use < 0 || use >= len) {
            mqd_free(lpids);
            return MQD_ERR_BAD_LAYOUT;
        }
        if ((rc = mqd_read(p, group + (mqs_taddr_t)b->off[F_GROUP_PMAP], pm, len)) != mqs_ok) {
            mqd_free(lpids);
            return rc;
        }
        use_map = pm[use] != 0;
        map = mqd_ptr(p, pm, u);
        offset = mqd_int(p, pm, u, 8);
        stride = mqd_int(p, pm, u + 8, 8);
        if (u + 24 <= len)
            blocksize = mqd_int(p, pm, u + 16, 8);
    } else {
        if ((rc = mqd_read_ptr(p, group + (mqs_taddr_t)b->off[F_GROUP_MAP], &map)) != mqs_ok) {
            mqd_free(lpids);
            return rc;
        }
    }
    if (use_map) {
        unsigned char *tbl = NULL;
        if (!map || esz <= 0 || esz > 64 || eoff < 0 || eoff + 8 > esz)
            rc = MQD_ERR_BAD_VALUE; /* the lpid (8 bytes) must lie in its entry */
        else if (!(tbl = mqd_malloc((size_t)n * (size_t)esz)))
            rc = MQD_ERR_NOMEM;
        else
            rc = mqd_read(p, map, tbl, (int)(n * esz));
        for (long i = 0; rc == mqs_ok && i < n; i++)
            lpids[i] = (long)mqd_int(p, tbl, (int)(i * esz) + eoff, 8);
        mqd_free(tbl);
    } else {
        /* Wrapping (unsigned) arithmetic: corrupt values make wrong
         * lpids, which name no world, never an overflow. */
        uint64_t o64 = (uint64_t)offset, s64 = (uint64_t)stride;
        for (long i = 0; i < n; i++) {
            uint64_t u = (uint64_t)i;
            lpids[i] = (long)(blocksize > 0 ? o64 + u / (uint64_t)blocksize * s64 +
                                                  u % (uint64_t)blocksize
                                            : o64 + u * s64);
        }
    }
    if (rc != mqs_ok) {
        mqd_free(lpids);
        return rc;
    }
    if (pmap) {
        char ns0[PG_ID_MAX] = "";
        int use_job = bp->key[0] && mqd_job_identity(p, bp->key) >= 0;
        for (long i = 0; i < n; i++)
            lpids[i] = lpid_global(p, (int64_t)lpids[i], use_job, ns0, sizeof ns0);
        *final = 1;
    }
    *out = lpids;
    return mqs_ok;
}

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
    const struct be_image *b = bimg(p);
    const int *o = b->off;
    unsigned char m[128];
    int len = b->size[S_SZ_RMAP];
    *out = NULL;
    if (len <= 0 || len > (int)sizeof m || want <= 0 || want > MQD_MAX_COMM_SIZE)
        return MQD_ERR_BAD_LAYOUT;
    static const enum field_id ints[] = {F_RMAP_MODE,   F_RMAP_AVTID,  F_RMAP_SIZE,
                                         F_RMAP_OFFSET, F_RMAP_STRIDE, F_RMAP_BLOCK};
    static const enum field_id ptrs[] = {F_RMAP_LPID, F_RMAP_GPID};
    if (!fields_fit(b, ints, NELEMS(ints), 4, len) ||
        !fields_fit(b, ptrs, NELEMS(ptrs), mqd_sizes(p)->pointer_size, len))
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
            v[r] = identity_of(p, ((const struct be_process *)mqd_process_backend(p))->ns, lpid);
    }
    mqd_free(tbl);
    if (rc != mqs_ok) {
        mqd_free(v);
        return rc;
    }
    *out = v;
    return mqs_ok;
}

/*
 * 4.x ch4, a group's lupids (*v of n) to global ranks: address table 0's
 * lpid (this process's world; with use_job the identity its key names),
 * -1 for another table's process.
 */
static void lupids_to_globals(struct mqd_process *p, long *v, long n, int use_job)
{
    for (long i = 0; v && i < n; i++) {
        unsigned long u = (unsigned long)v[i] & 0xffffffffUL;
        long lpid = (long)(u & ((1UL << MPICH_LUPID_LPID_BITS) - 1));
        if (v[i] < 0 || ((u >> MPICH_LUPID_LPID_BITS) & MPICH_LUPID_AVTID_MASK) != 0) {
            v[i] = -1;
        } else if (use_job) {
            v[i] = identity_of(p, ((const struct be_process *)mqd_process_backend(p))->ns, lpid);
        } else {
            v[i] = lpid;
        }
    }
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

static int comm_is_internal(unsigned handle, uint64_t ctx)
{
    return handle == MPICH_ICOMM_WORLD_HANDLE || (ctx & MPICH_CONTEXT_SUBCOMM_MASK) ||
           (ctx & MPICH_CONTEXT_LOCALCOMM_MASK);
}

/* Read one communicator at addr into c; *next gets its successor. */
static int read_comm(struct mqd_process *p, struct lpid_cache *cache, mqs_taddr_t addr,
                     struct mqd_comm *c, mqs_taddr_t *next, unsigned *handle)
{
    const struct be_image *b = bimg(p);
    struct be_process *bp = mqd_process_backend(p);
    int cs = b->size[S_SZ_CONTEXT_ID];
    unsigned char *buf = mqd_malloc((size_t)b->comm_span.len);
    if (!buf)
        return MQD_ERR_NOMEM;
    int rc = read_span(p, addr, buf, b->comm_span);
    if (rc != mqs_ok) {
        mqd_free(buf);
        return rc;
    }
    const int *o = b->off;
    memset(c, 0, sizeof *c);
    c->addr = addr;
    *handle = (unsigned)mqd_uint(p, buf, o[F_COMM_HANDLE], 4);
    c->handle = *handle;
    c->has_handle = 1;
    *next = mqd_ptr(p, buf, o[F_COMM_NEXT]);
    c->send_context = mqd_uint(p, buf, o[F_COMM_CTX], cs);
    c->recv_context = mqd_uint(p, buf, o[F_COMM_RCTX], cs);
    int inter = mqd_uint(p, buf, o[F_COMM_KIND], 4) == 1;
    c->local_rank = (long)mqd_int(p, buf, o[F_COMM_RANK], 4);
    c->size = (long)mqd_int(p, buf, o[F_COMM_LSIZE], 4);
    c->remote_size = (int)mqd_int(p, buf, o[F_COMM_RSIZE], 4);
    if (!inter)
        c->remote_size = (int)c->size;
    c->internal = comm_is_internal(*handle, c->recv_context);
    /* MPII_Comm_init puts a communicator on the list with local_size -1,
     * before its size, rank and context are set: not there yet. */
    if (c->size == -1 && !c->internal) {
        char msg[96];
        snprintf(msg, sizeof msg, "communicator 0x%llx is being built: skipped",
                 (unsigned long long)addr);
        mqd_debug(msg);
        c->internal = 1;
    }
    if (c->internal) { /* not shown: only its link matters */
        mqd_free(buf);
        return mqs_ok;
    }
    if (c->size <= 0 || c->size > MQD_MAX_COMM_SIZE || c->remote_size <= 0 ||
        c->remote_size > MQD_MAX_COMM_SIZE || c->local_rank < 0 || c->local_rank >= c->size) {
        char msg[160];
        snprintf(msg, sizeof msg, "communicator 0x%llx: size %ld, remote size %d, rank %ld",
                 (unsigned long long)addr, c->size, c->remote_size, c->local_rank);
        mqd_debug(msg);
        mqd_free(buf);
        return MQD_ERR_BAD_VALUE;
    }
    /* The name, in full up to 63 bytes, terminated; a descriptive one if none. */
    memcpy(c->name, buf + o[F_COMM_NAME], MQD_MAX_NAME - 1);
    c->name[MQD_MAX_NAME - 1] = '\0';
    for (char *s = c->name; *s; s++)
        if ((unsigned char)*s < 0x20 || (unsigned char)*s >= 0x7f)
            *s = '?';
    /* An unnamed one by its context ids, which (unlike its handle) every
     * member has the same (MPICH agrees on them collectively; the two
     * sides of an intercommunicator swap send and receive): the debugger
     * can tell it is one communicator across processes.  Disjoint groups
     * of one MPI_Comm_split share them: the group tells those apart. */
    if (!c->name[0] && inter) {
        uint64_t lo = c->send_context < c->recv_context ? c->send_context : c->recv_context;
        uint64_t hi = c->send_context ^ c->recv_context ^ lo;
        mqd_set_text(c->name, "unnamed intercommunicator, contexts 0x%llx/0x%llx",
                     (unsigned long long)lo, (unsigned long long)hi);
    } else if (!c->name[0]) {
        mqd_set_text(c->name, "unnamed communicator, context 0x%llx",
                     (unsigned long long)c->recv_context);
    }
    /* Ranks to global ranks: in ch3 with its process groups known, through
     * the connection tables (they name processes across jobs: MPI-2);
     * else from the communicator's groups where MPICH has made them (it
     * does so lazily), else (ch3) from the connection tables' lpids. */
    mqs_taddr_t rgroup = mqd_ptr(p, buf, o[F_COMM_RGROUP]);
    mqs_taddr_t lgroup = mqd_ptr(p, buf, o[F_COMM_LGROUP]);
    mqs_taddr_t peers = inter ? rgroup : lgroup;
    int ch3 = gen_is_ch3(bp->gen);
    /* ch3 from 4.0.3 reads groups only through its tables: 5.0's are maps
     * of worlds, whose indexes ch3's tables do not use. */
    int groups = bp->gen != MPICH_GEN_CH3_DQ;
    /* 4.x ch4 without a group (made lazily): the device's rank map. */
    int rank_maps = bp->gen == MPICH_GEN_DEBUGQ && (b->classes & CLASS_M);
    int final = 0;
    c->globals_final = bp->my_pg != 0;
    if (bp->my_pg || (ch3 && (!peers || !groups)))
        rc = read_vcrt(p, cache, mqd_ptr(p, buf, o[F_COMM_VCRT]), c->remote_size, 0,
                       &c->peer_global, NULL);
    else if (peers)
        rc = read_group(p, peers, c->remote_size, &c->peer_global, &final);
    else if (rank_maps)
        rc = read_rank_map(p, addr + (mqs_taddr_t)o[F_COMM_MAP], c->remote_size,
                           cache->use_job, &c->peer_global);
    else if (!inter && *handle == MPICH_COMM_WORLD_HANDLE)
        rc = world_identity(c->size, &c->peer_global);
    /* 4.x ch4's groups hold lupids; its rank maps give world ranks. */
    int lupids = bp->gen == MPICH_GEN_DEBUGQ;
    if (rc == mqs_ok && lupids && peers)
        lupids_to_globals(p, c->peer_global, c->remote_size, cache->use_job);
    c->globals_final |= final || (lupids && cache->use_job);
    c->inter = inter;
    if (rc == mqs_ok && inter) {
        int longer = 0;
        if (bp->my_pg || (ch3 && (!lgroup || !groups)))
            rc = read_vcrt(p, cache, mqd_ptr(p, buf, o[F_COMM_LVCRT]), c->size, 1,
                           &c->local_global, &longer);
        else if (lgroup)
            rc = read_group(p, lgroup, c->size, &c->local_global, &final);
        if (rc == mqs_ok && lupids && lgroup)
            lupids_to_globals(p, c->local_global, c->size, cache->use_job);
        else if (rank_maps)
            rc = read_rank_map(p, addr + (mqs_taddr_t)o[F_COMM_LMAP], c->size,
                               cache->use_job, &c->local_global);
        /* A table borrowed from another communicator is this one's local
         * group only if this process is where its rank says. */
        long self = self_global(p, cache);
        if (rc == mqs_ok && c->local_global &&
            (self >= 0 ? c->local_global[c->local_rank] != self : longer)) {
            mqd_free(c->local_global);
            c->local_global = NULL;
        }
    }
    mqd_free(buf);
    return rc;
}

/*
 * ch3, a process in MPI_Finalize: MPII_Finalize has marked the debugger
 * state aborting (MPIR_Debugger_set_aborting(NULL), src/mpi/init/
 * mpir_init.c) and freed the communicators, but MPID_Finalize still waits
 * in MPIDI_CH3U_VC_WaitForClose for its peers to close their connections
 * (src/mpid/ch3/src/mpid_finalize.c), with ch3's receive queues and its
 * process group intact until MPIDI_PG_Finalize.  What the queues still
 * hold is MPI_COMM_WORLD's (context 0) and its collectives' (1): give that
 * world, rank for rank the process group's.  *made is 0 when the process
 * is not in that state or its group is gone (no communicators, no error).
 */
static int finalized_world(struct mqd_process *p, struct mqd_comm **out, int *made)
{
    const struct be_image *b = bimg(p);
    struct be_process *bp = mqd_process_backend(p);
    unsigned char v[4];
    mqs_taddr_t pg;
    *made = 0;
    if (!gen_is_ch3(bp->gen) || !bp->ch3_process || !bp->debug_state || b->off[F_PG_SIZE] < 0)
        return mqs_ok;
    int rc = mqd_read(p, bp->debug_state, v, 4);
    if (rc != mqs_ok || mqd_int(p, v, 0, 4) != MPICH_DEBUG_ABORTING)
        return rc;
    if ((rc = mqd_read_ptr(p, bp->ch3_process + (mqs_taddr_t)b->off[F_PROC_MY_PG], &pg)) !=
            mqs_ok ||
        !pg)
        return rc; /* MPIDI_PG_Finalize has run: nothing is left */
    if ((rc = mqd_read(p, pg + (mqs_taddr_t)b->off[F_PG_SIZE], v, 4)) != mqs_ok)
        return rc;
    long size = (long)mqd_int(p, v, 0, 4);
    if ((rc = mqd_read(p, bp->ch3_process + (mqs_taddr_t)b->off[F_PROC_MY_PG_RANK], v, 4)) !=
        mqs_ok)
        return rc;
    long rank = (long)mqd_int(p, v, 0, 4);
    char id[PG_ID_MAX];
    if (size <= 0 || size > MQD_MAX_COMM_SIZE || rank < 0 || rank >= size)
        return MQD_ERR_BAD_VALUE;
    if ((rc = read_pg_id(p, pg, id, sizeof id)) != mqs_ok)
        return rc;
    struct mqd_comm *c = mqd_calloc(1, sizeof *c);
    long *globals = mqd_malloc((size_t)size * sizeof *globals);
    long *local = mqd_malloc((size_t)size * sizeof *local);
    if (!c || !globals || !local) {
        mqd_free(c);
        mqd_free(globals);
        mqd_free(local);
        return MQD_ERR_NOMEM;
    }
    int use_job = mqd_job_identity(p, bp->key) >= 0;
    for (long r = 0; r < size; r++)
        globals[r] = use_job ? identity_of(p, id, r) : r;
    memcpy(local, globals, (size_t)size * sizeof *local);
    c->addr = pg; /* the world is gone: its process group stands for it */
    c->world = 1;
    c->local_rank = rank;
    c->size = c->remote_size = size;
    snprintf(c->name, sizeof c->name, "MPI_COMM_WORLD");
    c->send_context = c->recv_context = 0;
    c->peer_global = globals;
    c->local_global = local;
    c->globals_final = 1;
    c->has_handle = 1;
    c->handle = MPICH_COMM_WORLD_HANDLE;
    *out = c;
    *made = 1;
    return mqs_ok;
}

int mqd_be_read_comms(struct mqd_process *p, struct mqd_comm **out, int *nout)
{
    const struct be_image *b = bimg(p);
    struct be_process *bp = mqd_process_backend(p);
    mqs_taddr_t node;
    *out = NULL;
    *nout = 0;
    int rc = mqd_read_ptr(p, bp->comm_list + (mqs_taddr_t)b->off[F_COMML_HEAD], &node);
    if (rc != mqs_ok)
        return rc;
    bp->finalized = 0;
    if (!node) {
        rc = finalized_world(p, out, &bp->finalized);
        *nout = bp->finalized;
        return rc;
    }
    struct lpid_cache *cache = mqd_calloc(1, sizeof *cache);
    if (cache && (bp->my_pg || bp->ns[0]))
        cache->use_job = mqd_job_identity(p, bp->key) >= 0;
    struct mqd_walk walk;
    mqd_walk_init(&walk);
    struct mqd_comm *all = NULL;
    int n = 0, cap = 0;
    int world = -1;
    while (rc == mqs_ok && node) {
        if (!cache) {
            rc = MQD_ERR_NOMEM;
            break;
        }
        if ((rc = mqd_walk_visit(&walk, node)) != mqs_ok)
            break;
        if (n == cap) {
            int nc = cap ? cap * 2 : 16;
            struct mqd_comm *na = mqd_calloc((size_t)nc, sizeof *na);
            if (!na) {
                rc = MQD_ERR_NOMEM;
                break;
            }
            if (n)
                memcpy(na, all, (size_t)n * sizeof *na);
            mqd_free(all);
            all = na;
            cap = nc;
        }
        unsigned handle;
        mqs_taddr_t next;
        rc = read_comm(p, cache, node, &all[n], &next, &handle);
        if (rc != mqs_ok) {
            /* Free what read_comm allocated before failing. */
            mqd_free(all[n].peer_global);
            mqd_free(all[n].local_global);
            break;
        }
        if (handle == MPICH_COMM_WORLD_HANDLE)
            world = n;
        n++;
        node = next;
    }
    mqd_walk_fini(&walk);
    mqd_free(cache);
    /* A known layout (no DWARF) must read cleanly and show MPI_COMM_WORLD
     * by its name, with this process at the rank the debugger knows; else
     * the layout does not fit (rather than "memory is corrupt"). */
    if (b->layout && rc != MQD_ERR_NOMEM && (rc != mqs_ok || n > 0)) {
        long known = mqd_process_global_rank(p);
        if (rc != mqs_ok || world < 0 || strcmp(all[world].name, "MPI_COMM_WORLD") != 0 ||
            (known >= 0 && all[world].local_rank != known))
            rc = MQD_ERR_LAYOUT_MISFIT;
    }
    if (rc != mqs_ok) {
        mqd_comms_free(all, n);
        return rc;
    }
    if (world >= 0)
        all[world].world = 1;
    /* Oldest first: MPICH adds each new communicator at the head. */
    for (int i = 0; i < n / 2; i++) {
        struct mqd_comm t = all[i];
        all[i] = all[n - 1 - i];
        all[n - 1 - i] = t;
    }
    *out = all;
    *nout = n;
    return mqs_ok;
}

int mqd_be_op_in_comm(const struct mqd_comm *comm, int queue, const struct mqd_raw_op *op)
{
    uint64_t key = queue == mqs_pending_sends && !op->recv_keyed ? comm->send_context
                                                                  : comm->recv_context;
    if (op->context == key)
        return op->internal ? 2 : 1;
    /* MPI's own traffic for a collective on this communicator: its
     * collective context, or that of a node-level sub-communicator MPICH
     * made of it (MPIR_Barrier_intra_smp and friends run on those). */
    uint64_t internal = MPICH_CONTEXT_COLL_BIT | MPICH_CONTEXT_SUBCOMM_MASK;
    if (!(key & (internal | MPICH_CONTEXT_LOCALCOMM_MASK)) && op->context != key &&
        (op->context & ~(uint64_t)internal) == key)
        return 2;
    return 0;
}

/* ---------------------------------------------------------------- requests */

static const char *datatype_name(unsigned handle)
{
    switch (handle) {
#define DT_CASE_(h, name) case h: return name;
        MPICH_DATATYPE_NAMES(DT_CASE_)
#undef DT_CASE_
    }
    return NULL;
}

/* The size of one element of datatype handle, or -1 if unknown. */
static long datatype_size(struct mqd_process *p, unsigned handle, mqs_taddr_t dt_ptr)
{
    const struct be_image *b = bimg(p);
    struct be_process *bp = mqd_process_backend(p);
    unsigned kind = MPICH_HANDLE_KIND(handle);
    if (kind == MPICH_HANDLE_KIND_BUILTIN)
        return (long)MPICH_BUILTIN_TYPE_SIZE(handle);
    mqs_taddr_t addr = dt_ptr;
    if (!addr && kind == MPICH_HANDLE_KIND_DIRECT && bp->dt_direct &&
        MPICH_HANDLE_INDEX(handle) < 4096)
        addr = bp->dt_direct + (mqs_taddr_t)MPICH_HANDLE_INDEX(handle) *
                                   (mqs_taddr_t)b->size[S_SZ_DATATYPE];
    if (!addr)
        return -1;
    unsigned char buf[8];
    int as = b->size[S_SZ_AINT];
    if (mqd_read(p, addr + (mqs_taddr_t)b->off[F_DT_SIZE], buf, as) != mqs_ok)
        return -1;
    int64_t s = mqd_int(p, buf, 0, as);
    return s >= 0 && s < ((int64_t)1 << 40) ? (long)s : -1;
}

/* r's first line: what and count elements of datatype dt; a datatype
 * without a name goes by its handle, which is this process's (an address
 * line, as the request's). */
static void describe_type(struct mqd_raw_op *r, const char *what, long count, unsigned dt)
{
    const char *name = datatype_name(dt);
    if (name) {
        mqd_set_text(r->op.extra_text[0], "%s: %ld x %s", what, count, name);
    } else {
        mqd_set_text(r->op.extra_text[0], "%s: %ld x datatype 0x%x", what, count, dt);
        r->text_address |= MQD_OP_TEXT_ADDRESS(0);
    }
}

/* A request's length in bytes from its count and datatype; -1 unknown. */
static long byte_length(struct mqd_process *p, long count, unsigned dt, mqs_taddr_t dt_ptr)
{
    long size = datatype_size(p, dt, dt_ptr);
    if (size < 0 || count < 0)
        return -1;
    if (size && count > ((long)1 << 50) / size)
        return -1;
    return count * size;
}

/* One ch3 request from the posted (queue 1) or unexpected (2) list. */

/*
 * The completion counter of the request at req (its bytes in buf).  A
 * started persistent request counts on its real request's: MPID_Startall
 * points cc_ptr there (ch3 src/mpid/ch3/src/mpid_startall.c, ch4's
 * MPIDIG_mpi_startall), and its own cc says nothing.  Without cc_ptr in
 * the layout, the request's own.
 */
static int req_cc(struct mqd_process *p, mqs_taddr_t req, const unsigned char *buf, long *cc)
{
    const int *o = bimg(p)->off;
    *cc = (long)mqd_int(p, buf, o[F_REQ_CC], 4);
    if (o[F_REQ_CC_PTR] < 0)
        return mqs_ok;
    mqs_taddr_t at = mqd_ptr(p, buf, o[F_REQ_CC_PTR]);
    if (!at || at == req + (mqs_taddr_t)o[F_REQ_CC])
        return mqs_ok;
    unsigned char v[4];
    int rc = mqd_read(p, at, v, 4);
    if (rc == mqs_ok)
        *cc = (long)mqd_int(p, v, 0, 4);
    return rc;
}

/*
 * What a request's status says (its bytes in buf): source, tag and byte
 * count (MPIR_STATUS_SET_COUNT: count_lo, and count_hi_and_cancelled's
 * upper bits).  MPICH sets it when a receive completes, and ch4 on an
 * unexpected message when it arrives.  0 if the layout lacks it.
 */
static int req_status(struct mqd_process *p, const unsigned char *buf, long *source, long *tag,
                      long *bytes)
{
    const int *o = bimg(p)->off;
    if (o[F_REQ_ST_SOURCE] < 0 || o[F_REQ_ST_TAG] < 0 || o[F_REQ_ST_COUNT_LO] < 0 ||
        o[F_REQ_ST_COUNT_HI] < 0)
        return 0;
    *source = (long)mqd_int(p, buf, o[F_REQ_ST_SOURCE], 4);
    *tag = (long)mqd_int(p, buf, o[F_REQ_ST_TAG], 4);
    uint64_t lo = mqd_uint(p, buf, o[F_REQ_ST_COUNT_LO], 4);
    uint64_t hi = mqd_uint(p, buf, o[F_REQ_ST_COUNT_HI], 4) >> 1;
    uint64_t n = lo | hi << 32;
    *bytes = n < ((uint64_t)1 << 50) ? (long)n : -1;
    return 1;
}

/* A completed receive (cc 0): what it matched, from its status. */
static void completed_receive(struct mqd_process *p, const unsigned char *buf,
                              mqs_pending_operation *op)
{
    long source, tag, bytes;
    if (op->status != mqs_st_complete || !req_status(p, buf, &source, &tag, &bytes))
        return;
    if (source < 0 || tag < 0) /* MPI_PROC_NULL, or never set */
        return;
    op->actual_local_rank = source;
    op->actual_tag = tag;
    op->actual_length = bytes;
}

/* The request behind r: its address, and a line naming it and its handle
 * (an address line: it differs between processes in the same state). */
static void request_line(struct mqd_raw_op *r, mqs_taddr_t addr, unsigned handle)
{
    r->request = addr;
    r->text_address |= MQD_OP_TEXT_ADDRESS(1);
    mqd_set_text(r->op.extra_text[1], "request 0x%llx (handle 0x%x)", (unsigned long long)addr,
                 handle);
}

static int ch3_request(struct mqd_process *p, mqs_taddr_t addr, int queue,
                       struct mqd_raw_op *r, mqs_taddr_t *next)
{
    const struct be_image *b = bimg(p);
    const int *o = b->off;
    int as = b->size[S_SZ_AINT], ps = mqd_sizes(p)->pointer_size;
    unsigned char *buf = mqd_malloc((size_t)b->req_span.len);
    if (!buf)
        return MQD_ERR_NOMEM;
    int rc = read_span(p, addr, buf, b->req_span);
    if (rc != mqs_ok) {
        mqd_free(buf);
        return rc;
    }
    memset(r, 0, sizeof *r);
    *next = mqd_ptr(p, buf, o[F_REQ_NEXT]);
    r->context = mqd_uint(p, buf, o[F_REQ_MATCH_CTX], match_ctx_size(b));
    long rank = (long)mqd_int(p, buf, o[F_REQ_MATCH_RANK], b->size[S_SZ_RANK]);
    long tag = (long)mqd_int(p, buf, o[F_REQ_MATCH_TAG], 4);
    long cc;
    if ((rc = req_cc(p, addr, buf, &cc)) != mqs_ok) {
        mqd_free(buf);
        return rc;
    }
    unsigned handle = (unsigned)mqd_uint(p, buf, o[F_REQ_HANDLE], 4);
    mqs_pending_operation *op = &r->op;
    if (queue == mqs_pending_receives) {
        long count = (long)mqd_int(p, buf, o[F_REQ_USER_COUNT], as);
        unsigned dt = (unsigned)mqd_uint(p, buf, o[F_REQ_DATATYPE], 4);
        op->status = cc == 0 ? mqs_st_complete : mqs_st_pending;
        op->desired_local_rank = rank == MPICH_ANY_SOURCE ? -1 : rank;
        op->tag_wild = tag == MPICH_ANY_TAG;
        op->desired_tag = op->tag_wild ? -1 : tag;
        op->desired_length = byte_length(p, count, dt, mqd_ptr(p, buf, o[F_REQ_DATATYPE_PTR]));
        op->buffer = mqd_ptr(p, buf, o[F_REQ_USER_BUF]);
        op->actual_local_rank = op->actual_tag = op->actual_length = -1;
        completed_receive(p, buf, op);
        describe_type(r, "receive", count, dt);
    } else {
        long size = (long)mqd_int(p, buf, o[F_REQ_RECV_SZ], ps);
        /* Unexpected: what arrived.  Complete when all its data is here
         * (eager); pending when only the envelope is (rendezvous). */
        op->status = cc == 0 ? mqs_st_complete : mqs_st_pending;
        op->desired_local_rank = op->actual_local_rank = rank;
        op->desired_tag = op->actual_tag = tag;
        op->desired_length = op->actual_length = size;
        op->system_buffer = 1;
        op->buffer = mqd_ptr(p, buf, o[F_REQ_TMPBUF]);
        mqd_set_text(op->extra_text[0], "unexpected %s message",
                     cc == 0 ? "eager (data here)" : "rendezvous (envelope only)");
    }
    request_line(r, addr, handle);
    mqd_free(buf);
    return mqs_ok;
}

/* A list of ch3 requests, through the variable that points at its head. */
static int ch3_request_list(struct mqd_process *p, mqs_taddr_t head_ptr_sym, int queue,
                            struct mqd_ops *out)
{
    mqs_taddr_t head_var, node;
    int rc = mqd_read_ptr(p, head_ptr_sym, &head_var);
    if (rc != mqs_ok || (rc = mqd_read_ptr(p, head_var, &node)) != mqs_ok)
        return rc;
    struct mqd_walk walk;
    mqd_walk_init(&walk);
    while (rc == mqs_ok && node) {
        struct mqd_raw_op r;
        mqs_taddr_t next;
        if ((rc = mqd_walk_visit(&walk, node)) != mqs_ok)
            break;
        if ((rc = ch3_request(p, node, queue, &r, &next)) != mqs_ok)
            break;
        rc = mqd_ops_push(out, &r);
        node = next;
    }
    mqd_walk_fini(&walk);
    return rc;
}

/* The request behind a send entry: status, buffer, length. */
static int send_request(struct mqd_process *p, mqs_taddr_t req, long count_hint, int use_hint,
                        struct mqd_raw_op *r)
{
    const struct be_image *b = bimg(p);
    const int *o = b->off;
    int as = b->size[S_SZ_AINT];
    mqs_pending_operation *op = &r->op;
    if (!req)
        return MQD_ERR_BAD_VALUE;
    unsigned char *buf = mqd_malloc((size_t)b->req_span.len);
    if (!buf)
        return MQD_ERR_NOMEM;
    int rc = read_span(p, req, buf, b->req_span);
    if (rc != mqs_ok) {
        mqd_free(buf);
        return rc;
    }
    long cc;
    if ((rc = req_cc(p, req, buf, &cc)) != mqs_ok) {
        mqd_free(buf);
        return rc;
    }
    unsigned kind = (unsigned)mqd_uint(p, buf, o[F_REQ_KIND], 4);
    unsigned handle = (unsigned)mqd_uint(p, buf, o[F_REQ_HANDLE], 4);
    if (r->recv_keyed && o[F_REQ_MATCH_CTX] >= 0) {
        r->context = mqd_uint(p, buf, o[F_REQ_MATCH_CTX], match_ctx_size(b));
        r->recv_keyed = 0;
    }
    op->status = cc == 0 ? mqs_st_complete : mqs_st_pending;
    if (o[F_REQ_USER_COUNT] >= 0 && o[F_REQ_DATATYPE] >= 0) {
        long count = use_hint ? count_hint : (long)mqd_int(p, buf, o[F_REQ_USER_COUNT], as);
        unsigned dt = (unsigned)mqd_uint(p, buf, o[F_REQ_DATATYPE], 4);
        mqs_taddr_t dtp = o[F_REQ_DATATYPE_PTR] >= 0 ? mqd_ptr(p, buf, o[F_REQ_DATATYPE_PTR]) : 0;
        op->desired_length = byte_length(p, count, dt, dtp);
        if (!op->buffer && o[F_REQ_USER_BUF] >= 0)
            op->buffer = mqd_ptr(p, buf, o[F_REQ_USER_BUF]);
        describe_type(r,
                      kind == MPICH_REQ_PREQUEST_SEND ? "persistent send" : "send", count, dt);
    } else {
        op->desired_length = -1;
        mqd_set_text(op->extra_text[0], "%s: %ld elements",
                     kind == MPICH_REQ_PREQUEST_SEND ? "persistent send" : "send", count_hint);
    }
    request_line(r, req, handle);
    op->actual_local_rank = op->desired_local_rank;
    op->actual_tag = op->desired_tag;
    op->actual_length = op->desired_length;
    mqd_free(buf);
    return mqs_ok;
}

static int ch3_sendq(struct mqd_process *p, struct mqd_ops *out)
{
    const struct be_image *b = bimg(p);
    struct be_process *bp = mqd_process_backend(p);
    const int *o = b->off;
    mqs_taddr_t node;
    int rc = mqd_read_ptr(p, bp->sendq, &node);
    if (rc != mqs_ok)
        return rc;
    unsigned char *buf = mqd_malloc((size_t)b->sendq_span.len);
    if (!buf)
        return MQD_ERR_NOMEM;
    struct mqd_walk walk;
    mqd_walk_init(&walk);
    while (rc == mqs_ok && node) {
        if ((rc = mqd_walk_visit(&walk, node)) != mqs_ok ||
            (rc = read_span(p, node, buf, b->sendq_span)) != mqs_ok)
            break;
        struct mqd_raw_op r;
        memset(&r, 0, sizeof r);
        r.context = mqd_uint(p, buf, o[F_SENDQ_CTX], 4);
        r.op.desired_local_rank = (long)mqd_int(p, buf, o[F_SENDQ_RANK], 4);
        r.op.desired_tag = (long)mqd_int(p, buf, o[F_SENDQ_TAG], 4);
        rc = send_request(p, mqd_ptr(p, buf, o[F_SENDQ_REQ]), 0, 0, &r);
        if (rc == mqs_ok)
            rc = mqd_ops_push(out, &r);
        node = mqd_ptr(p, buf, o[F_SENDQ_NEXT]);
    }
    mqd_walk_fini(&walk);
    mqd_free(buf);
    if (rc == mqs_ok)
        mqd_ops_reverse(out); /* newest first in MPICH: show in posting order */
    return rc;
}

/* MPICH 4.0.3+: a flat MPIR_Debugq list, newest first. */
static int debugq_list(struct mqd_process *p, mqs_taddr_t head_sym, int queue,
                       struct mqd_ops *out)
{
    const struct be_image *b = bimg(p);
    const struct be_process *bp = mqd_process_backend(p);
    const int *o = b->off;
    int as = b->size[S_SZ_AINT];
    mqs_taddr_t node;
    int rc = mqd_read_ptr(p, head_sym, &node);
    if (rc != mqs_ok)
        return rc;
    unsigned char *buf = mqd_malloc((size_t)b->debugq_span.len);
    unsigned char *req = mqd_malloc((size_t)b->req_span.len);
    if (!buf || !req) {
        mqd_free(buf);
        mqd_free(req);
        return MQD_ERR_NOMEM;
    }
    struct mqd_walk walk;
    mqd_walk_init(&walk);
    while (rc == mqs_ok && node) {
        if ((rc = mqd_walk_visit(&walk, node)) != mqs_ok ||
            (rc = read_span(p, node, buf, b->debugq_span)) != mqs_ok)
            break;
        struct mqd_raw_op r;
        memset(&r, 0, sizeof r);
        mqs_pending_operation *op = &r.op;
        r.context = mqd_uint(p, buf, o[F_DQ_CTX], 4);
        long rank = (long)mqd_int(p, buf, o[F_DQ_RANK], 4);
        long tag = (long)mqd_int(p, buf, o[F_DQ_TAG], 4);
        long count = (long)mqd_int(p, buf, o[F_DQ_COUNT], as);
        mqs_taddr_t raddr = mqd_ptr(p, buf, o[F_DQ_REQ]);
        op->buffer = mqd_ptr(p, buf, o[F_DQ_BUF]);
        /* Beyond MPI_TAG_UB: a collective's (MPIR_TAG_COLL_BIT), whatever
         * the context says; ch4 enters sends and receives under the plain
         * context (mpich_defs.h), so this is all it shows of collectives. */
        r.internal = bp->tag_ub > 0 && tag > bp->tag_ub;
        if (queue == mqs_pending_sends) {
            op->desired_local_rank = rank;
            op->desired_tag = tag;
            /* Entered under the receive context (mpich_defs.h); ch3's
             * request has the send context with the collective offset. */
            r.recv_keyed = 1;
            rc = send_request(p, raddr, count, 1, &r);
        } else if (!raddr || (rc = read_span(p, raddr, req, b->req_span)) == mqs_ok) {
            long cc = 1;
            if (raddr && (rc = req_cc(p, raddr, req, &cc)) != mqs_ok)
                break;
            unsigned handle = raddr ? (unsigned)mqd_uint(p, req, o[F_REQ_HANDLE], 4) : 0;
            op->status = cc == 0 ? mqs_st_complete : mqs_st_pending;
            if (queue == mqs_pending_receives) {
                op->desired_local_rank = rank == MPICH_ANY_SOURCE ? -1 : rank;
                op->tag_wild = tag == MPICH_ANY_TAG;
                op->desired_tag = op->tag_wild ? -1 : tag;
                /* MPIR_Debugq records the element count, not the datatype:
                 * the length in bytes is not known here. */
                op->desired_length = -1;
                op->actual_local_rank = op->actual_tag = op->actual_length = -1;
                if (raddr)
                    completed_receive(p, req, op);
                mqd_set_text(op->extra_text[0], "receive: %ld elements", count);
            } else {
                /* ch4 (MPIDIG's create_unexp_rreq): the size is in the
                 * status; cc stays 1 until a receive matches it, so whether
                 * its data is here is not recorded. */
                long source, stag, bytes;
                if (!raddr || !req_status(p, req, &source, &stag, &bytes))
                    bytes = -1;
                op->status = mqs_st_pending;
                op->desired_local_rank = op->actual_local_rank = rank;
                op->desired_tag = op->actual_tag = tag;
                op->desired_length = op->actual_length = bytes;
                op->system_buffer = 1;
                mqd_set_text(op->extra_text[0], "unexpected message (whether its data is "
                                                "here is not recorded)");
            }
            request_line(&r, raddr, handle);
        }
        if (rc == mqs_ok)
            rc = mqd_ops_push(out, &r);
        node = mqd_ptr(p, buf, o[F_DQ_NEXT]);
    }
    mqd_walk_fini(&walk);
    mqd_free(buf);
    mqd_free(req);
    if (rc == mqs_ok)
        mqd_ops_reverse(out); /* newest first in MPICH: show in matching order */
    return rc;
}

int mqd_be_read_queue(struct mqd_process *p, int queue, struct mqd_ops *out)
{
    struct be_process *bp = mqd_process_backend(p);
    if (gen_is_ch3(bp->gen)) {
        int rc;
        if (queue == mqs_pending_sends)
            rc = bp->gen == MPICH_GEN_CH3_402 ? ch3_sendq(p, out)
                                               : debugq_list(p, bp->sendq, queue, out);
        else
            rc = ch3_request_list(p, queue == mqs_pending_receives ? bp->posted_ptr
                                                                   : bp->unexpected_ptr,
                                  queue, out);
        /* In MPI_Finalize (finalized_world): left behind for good. */
        for (int i = 0; rc == mqs_ok && bp->finalized && i < out->n; i++)
            mqd_add_text(&out->v[i].op, "left behind: MPI_Finalize has freed the communicator");
        return rc;
    }
    return debugq_list(p, queue == mqs_pending_sends      ? bp->sendq
                          : queue == mqs_pending_receives ? bp->recvq
                                                          : bp->unexpq,
                       queue, out);
}
