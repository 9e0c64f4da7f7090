/*
 * ompi_layout.c - what the Open MPI backend knows of Open MPI's
 * structures: each field's class, the offsets and sizes found through the
 * debugger's type callbacks (mqd_be_setup_image) or, for a build without
 * DWARF types, the known layout of that build once the process is shown
 * to be it, and how much of each structure to read.  See ompi.h.
 */
#include "ompi.h"

#include <stdio.h>
#include <string.h>

static const struct {
    const char *path;
    int cls;
} field_defs[F_COUNT] = {
#define F_DEF_(id, cls, path) [F_##id] = {path, CLASS_##cls},
    OMPI_FIELDS(F_DEF_)
#undef F_DEF_
};

static const struct {
    const char *type;
    int cls;
} size_defs[S_COUNT] = {
#define S_DEF_(id, cls, type) [S_##id] = {type, CLASS_##cls},
    OMPI_SIZES(S_DEF_)
#undef S_DEF_
};

/*
 * Known layouts of real builds, generated from their DWARF (make
 * ompi-layouts): a build whose libmpi has its symbols but not its debug
 * types (Debian's: the DWARF is in a separate debug-symbols package).
 */
struct ompi_known_layout {
    const char *version, *build;
    int pointer_size, big_endian, nfields, nsizes;
    int off[F_COUNT];
    int size[S_COUNT];
};

#define OMPI_LAYOUT_BEGIN(v, b, ps, be, nf, ns) {v, b, ps, be, nf, ns, {
#define OMPI_LAYOUT_FIELD(id, o) [F_##id] = (o),
#define OMPI_LAYOUT_SIZES }, {
#define OMPI_LAYOUT_SIZE(id, sz) [S_##id] = (sz),
#define OMPI_LAYOUT_END }},
static const struct ompi_known_layout known_layouts[] = {
#include "ompi_defs/layouts.h"
};
#undef OMPI_LAYOUT_BEGIN
#undef OMPI_LAYOUT_FIELD
#undef OMPI_LAYOUT_SIZES
#undef OMPI_LAYOUT_SIZE
#undef OMPI_LAYOUT_END

/* The classes whose objects' sizes a build's classes must show (ompi_defs.h). */
static const struct {
    const char *symbol;
    enum size_id size;
    int cls;
} class_sizes[] = {
#define C_DEF_(sym, id, cls) {sym, S_##id, CLASS_##cls},
    OMPI_CLASS_SIZES(C_DEF_)
#undef C_DEF_
};

/* ---------------------------------------------------------------- reading */

int ompi__read_span(struct mqd_process *p, mqs_taddr_t addr, unsigned char *buf,
                    struct ompi_span sp)
{
    memset(buf + sp.read, 0, (size_t)(sp.len - sp.read));
    return mqd_read(p, addr, buf, sp.read);
}

uint64_t ompi__u32(struct mqd_process *p, const unsigned char *buf, enum field_id f)
{
    return mqd_uint(p, buf, ompi__image(p)->off[f], 4);
}

int64_t ompi__i32(struct mqd_process *p, const unsigned char *buf, enum field_id f)
{
    return mqd_int(p, buf, ompi__image(p)->off[f], 4);
}

/* size_t and pointers: the target's pointer size on every platform Open MPI
 * supports (mqd_be_setup_process checks size_t's). */
uint64_t ompi__word(struct mqd_process *p, const unsigned char *buf, enum field_id f)
{
    return mqd_uint(p, buf, ompi__image(p)->off[f], mqd_sizes(p)->pointer_size);
}

/* ---------------------------------------------------------------- spans */

/* What to read of a structure of type sz holding fields at offs[n] (-1
 * unknown): up to 8 bytes past the last, never past the structure. */
static struct ompi_span span_of(const struct ompi_image *b, const int *offs, int n,
                                enum size_id sz)
{
    int max = 0;
    for (int i = 0; i < n; i++)
        if (offs[i] >= 0 && offs[i] + 8 > max)
            max = offs[i] + 8;
    struct ompi_span sp = {max, b->size[sz] > 0 && b->size[sz] < max ? b->size[sz] : max};
    return sp;
}

/* A base request's field f, in an ob1 request whose base is at `base`. */
static int in_req(const struct ompi_image *b, int base, enum field_id f)
{
    return base >= 0 && b->off[f] >= 0 ? base + b->off[f] : -1;
}

static void set_request_span(struct ompi_image *b)
{
    static const enum field_id req[] = {F_REQ_TYPE,  F_REQ_COMPLETE, F_REQ_STATE,
                                        F_REQ_PERSISTENT, F_REQ_PML_COMPLETE, F_REQ_PML_TYPE,
                                        F_REQ_COMM,  F_REQ_DATATYPE, F_REQ_ADDR,
                                        F_REQ_COUNT, F_REQ_PEER,     F_REQ_TAG,
                                        F_REQ_SEQUENCE};
    int offs[2 * NELEMS(req) + 4], n = 0;
    for (int i = 0; i < NELEMS(req); i++) {
        offs[n++] = in_req(b, b->off[F_RECV_BASE], req[i]);
        offs[n++] = in_req(b, b->off[F_SEND_BASE], req[i]);
    }
    offs[n++] = in_req(b, b->off[F_SEND_SEND], F_SEND_BYTES);
    offs[n++] = in_req(b, b->off[F_SEND_SEND], F_SEND_MODE);
    offs[n++] = b->off[F_OBJ_CLASS];
    offs[n++] = b->off[F_ITEM_NEXT]; /* a request's list item is at its start */
    /* Both kinds are read with one span: never past the smaller. */
    enum size_id smaller = b->size[S_SZ_RECV_REQ] > 0 && b->size[S_SZ_SEND_REQ] > 0 &&
                                   b->size[S_SZ_SEND_REQ] < b->size[S_SZ_RECV_REQ]
                               ? S_SZ_SEND_REQ
                               : S_SZ_RECV_REQ;
    b->request = span_of(b, offs, n, smaller);
}

static void set_spans(struct ompi_image *b)
{
    const int *o = b->off;
    const int comm[] = {o[F_COMM_CID],   o[F_COMM_RANK],   o[F_COMM_FLAGS],
                        o[F_COMM_LGROUP], o[F_COMM_RGROUP], o[F_COMM_LOCAL_COMM],
                        o[F_COMM_PML],   o[F_COMM_NBC_TAG],
                        o[F_COMM_NAME] >= 0 ? o[F_COMM_NAME] + MQD_MAX_NAME - 8 : -1};
    const int group[] = {o[F_GROUP_SIZE], o[F_GROUP_MY_RANK], o[F_GROUP_PROCS]};
    const int list[] = {o[F_LIST_SENTINEL] >= 0 ? o[F_LIST_SENTINEL] + o[F_ITEM_NEXT] : -1,
                        o[F_LIST_LENGTH]};
    const int ob1c[] = {o[F_OB1_WILD], o[F_OB1_PROCS], o[F_OB1_NUM_PROCS]};
    const int ob1p[] = {o[F_OB1P_PROC], o[F_OB1P_SPECIFIC], o[F_OB1P_UNEXPECTED],
                        o[F_OB1P_CANT_MATCH]};
    const int frag[] = {o[F_ITEM_NEXT],      o[F_FRAG_HDR_TYPE],   o[F_FRAG_HDR_CTX],
                        o[F_FRAG_HDR_SRC],   o[F_FRAG_HDR_TAG],    o[F_FRAG_HDR_SEQ],
                        o[F_FRAG_MSG_LENGTH], o[F_FRAG_NUM_SEGMENTS],
                        o[F_FRAG_SEGMENTS] >= 0 && o[F_SEG_LEN] >= 0
                            ? o[F_FRAG_SEGMENTS] + o[F_SEG_LEN] : -1,
                        o[F_FRAG_SEGMENTS] >= 0 && o[F_SEG_ADDR] >= 0
                            ? o[F_FRAG_SEGMENTS] + o[F_SEG_ADDR] : -1};
    const int fl[] = {o[F_FL_NUM_ALLOCATED], o[F_FL_NUM_PER_ALLOC], o[F_FL_FRAG_SIZE],
                      o[F_FL_FRAG_ALIGNMENT], o[F_FL_FRAG_CLASS],
                      o[F_FL_ALLOCATIONS] >= 0 && o[F_LIST_SENTINEL] >= 0
                          ? o[F_FL_ALLOCATIONS] + o[F_LIST_SENTINEL] + o[F_ITEM_NEXT] : -1,
                      o[F_FL_ALLOCATIONS] >= 0 && o[F_LIST_LENGTH] >= 0
                          ? o[F_FL_ALLOCATIONS] + o[F_LIST_LENGTH] : -1};
    const int dt[] = {o[F_DT_SIZE], o[F_DT_NAME] >= 0 ? o[F_DT_NAME] + MQD_MAX_NAME - 8 : -1};
    b->comm = span_of(b, comm, NELEMS(comm), S_SZ_COMM);
    b->group = span_of(b, group, NELEMS(group), S_SZ_GROUP);
    b->list = span_of(b, list, NELEMS(list), S_SZ_LIST);
    b->ob1_comm = span_of(b, ob1c, NELEMS(ob1c), S_SZ_OB1_COMM);
    b->ob1_proc = span_of(b, ob1p, NELEMS(ob1p), S_SZ_OB1_PROC);
    b->frag = span_of(b, frag, NELEMS(frag), S_SZ_RECV_FRAG);
    b->free_list = span_of(b, fl, NELEMS(fl), S_SZ_FREE_LIST);
    b->datatype = span_of(b, dt, NELEMS(dt), S_SZ_DATATYPE);
    set_request_span(b);
    /* The header starts with hdr_type (the union's hdr_common). */
    b->match_hdr_len = o[F_FRAG_HDR_SEQ] >= 0 && o[F_FRAG_HDR_TYPE] >= 0
                           ? o[F_FRAG_HDR_SEQ] - o[F_FRAG_HDR_TYPE] + OMPI_OB1_HDR_SEQ_BYTES +
                                 (o[F_MATCH_HDR_PADDING] >= 0 ? OMPI_OB1_HDR_PADDING_BYTES : 0)
                           : -1;
}

/* ---------------------------------------------------------------- classes */

static int known_classes(const struct ompi_image *b)
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

/* Every field and size through the debugger's type callbacks. */
static void probe(mqs_image *image, const mqs_image_callbacks *cb, struct ompi_image *b)
{
    struct mqd_type_memo memo = {0};
    for (int f = 0; f < F_COUNT; f++)
        b->off[f] = mqd_path_offset_memo(image, cb, &memo, field_defs[f].path);
    for (int s = 0; s < S_COUNT; s++) {
        /* mqs_sizeof_fp may be NULL: sizes unknown. */
        mqs_type *t =
            cb->mqs_sizeof_fp ? mqd_find_type_memo(image, cb, &memo, size_defs[s].type) : NULL;
        b->size[s] = t ? cb->mqs_sizeof_fp(t) : -1;
    }
    b->classes = known_classes(b);
    b->from_dwarf = (b->classes & CLASS_ALL) == CLASS_ALL;
    b->lacks[0] = '\0';
    for (int f = 0; f < F_COUNT && !b->lacks[0]; f++)
        if (b->off[f] < 0 && field_defs[f].cls)
            snprintf(b->lacks, sizeof b->lacks, "%s", field_defs[f].path);
    for (int s = 0; s < S_COUNT && !b->lacks[0]; s++)
        if (b->size[s] <= 0 && size_defs[s].cls)
            snprintf(b->lacks, sizeof b->lacks, "the type %s", size_defs[s].type);
    if (b->from_dwarf)
        set_spans(b);
}

const char *ompi__pml_without_queues(const char *pml)
{
    if (strcmp(pml, "ucx") == 0)
        return "this Open MPI matches messages inside UCX (pml ucx): no queue to show (run "
               "with --mca pml ob1 to see them)";
    return "this Open MPI matches messages inside its MTL (pml cm: OFI, PSM2): no queue to "
           "show (run with --mca pml ob1 to see them)";
}

/*
 * The PML the image's plugins show, before any process is read: with
 * ob1's plugin unloaded (Open MPI closes the PMLs MPI_Init did not
 * select) and ucx's or cm's loaded, that one, whose matching keeps no
 * queue; NULL if the symbols do not tell (the process's selected
 * component will, mqd_be_setup_process).  Said for the image, it is said
 * once for a job of one program.
 */
static const char *image_pml(mqs_image *image, const mqs_image_callbacks *cb)
{
    mqs_taddr_t a;
    if (cb->mqs_find_symbol_fp(image, (char *)OMPI_SYM_PML_OB1, &a) == mqs_ok)
        return NULL;
    if (cb->mqs_find_symbol_fp(image, (char *)OMPI_SYM_PML_UCX, &a) == mqs_ok)
        return "ucx";
    if (cb->mqs_find_symbol_fp(image, (char *)OMPI_SYM_PML_CM, &a) == mqs_ok)
        return "cm";
    return NULL;
}

int mqd_be_setup_image(mqs_image *image, struct mqd_image *im, void **backend)
{
    const mqs_image_callbacks *cb = mqd_image_cb(im);
    mqs_taddr_t addr;
    const char *pml;
    *backend = NULL;
    if (cb->mqs_find_symbol_fp(image, (char *)OMPI_SYM_COMM_LIST, &addr) != mqs_ok) {
        mqd_image_explain(im, "no symbol " OMPI_SYM_COMM_LIST ": not an Open MPI program");
        return MQD_ERR_NO_DEBUG_QUEUES;
    }
    if ((pml = image_pml(image, cb)) != NULL) {
        mqd_image_explain(im, "%s", ompi__pml_without_queues(pml));
        return MQD_ERR_NO_DEBUG_QUEUES;
    }
    struct ompi_image *b = mqd_calloc(1, sizeof *b);
    if (!b)
        return MQD_ERR_NOMEM;
    probe(image, cb, b);
    if (!b->from_dwarf && NELEMS(known_layouts) == 0) {
        mqd_image_explain(im, "the debug information lacks %s: is libmpi built with -g, "
                              "or its debug file installed?", b->lacks);
        mqd_free(b);
        return MQD_ERR_NO_TYPE;
    }
    *backend = b;
    return mqs_ok;
}

void mqd_be_destroy_image(void *backend)
{
    mqd_free(backend);
}

/* ---------------------------------------------------------------- known layouts */

/* Does k agree with every offset and size the debugger did resolve (a
 * host may know some types and not others)? */
static int layout_fits(const struct ompi_image *b, const struct ompi_known_layout *k)
{
    if (k->nfields != F_COUNT || k->nsizes != S_COUNT)
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
 * Is the process the build k was made from?  Every class of
 * OMPI_CLASS_SIZES of classes cls, a static opal_class_t that the build
 * exports, must say in its cls_sizeof (its objects' size) what k says of
 * that type.  mqs_ok, or MQD_ERR_LAYOUT_MISFIT with why in why[len].
 */
static int classes_fit(struct mqd_process *p, const struct ompi_known_layout *k, int cls,
                       char *why, int len)
{
    mqs_image *image = mqd_process_mqs_image(p);
    const mqs_image_callbacks *cb = mqd_image_cb(mqd_process_image(p));
    int ps = mqd_sizes(p)->pointer_size;
    for (int i = 0; i < NELEMS(class_sizes); i++) {
        mqs_taddr_t at;
        unsigned char v[8];
        if (!(class_sizes[i].cls & cls))
            continue;
        if (cb->mqs_find_symbol_fp(image, (char *)class_sizes[i].symbol, &at) != mqs_ok) {
            snprintf(why, (size_t)len, "it has no %s", class_sizes[i].symbol);
            return MQD_ERR_LAYOUT_MISFIT;
        }
        int rc = mqd_read(p, at + (mqs_taddr_t)k->off[F_CLASS_SIZEOF], v, ps);
        if (rc != mqs_ok)
            return rc;
        uint64_t size = mqd_uint(p, v, 0, ps);
        if (size != (uint64_t)k->size[class_sizes[i].size]) {
            snprintf(why, (size_t)len, "its %s objects are %llu bytes, %d in that build",
                     class_sizes[i].symbol, (unsigned long long)size,
                     k->size[class_sizes[i].size]);
            return MQD_ERR_LAYOUT_MISFIT;
        }
    }
    return mqs_ok;
}

/* The first known layout of this version, pointer size and byte order
 * that fits what the debugger resolved and whose classes the process's
 * are; why[len] says why none is. */
static const struct ompi_known_layout *find_layout(struct mqd_process *p,
                                                   const struct ompi_image *b,
                                                   const char *version, char *why, int len)
{
    static const unsigned char one[2] = {0, 1};
    int big_endian = mqd_uint(p, one, 0, 2) == 1, ps = mqd_sizes(p)->pointer_size;
    snprintf(why, (size_t)len, "the DLL knows no layout of Open MPI %s (%d-bit %s-endian)",
             version, ps * 8, big_endian ? "big" : "little");
    for (int i = 0; i < NELEMS(known_layouts); i++) {
        const struct ompi_known_layout *k = &known_layouts[i];
        char misfit[160];
        if (strcmp(k->version, version) != 0 || k->pointer_size != ps ||
            k->big_endian != big_endian || !layout_fits(b, k))
            continue;
        if (classes_fit(p, k, CLASS_COMMON, misfit, sizeof misfit) == mqs_ok)
            return k;
        snprintf(why, (size_t)len, "this Open MPI %s is not the build the DLL knows (%s): %s",
                 version, k->build, misfit);
    }
    return NULL;
}

int ompi__choose_layout(struct mqd_process *p, struct ompi_image *b)
{
    mqs_image *image = mqd_process_mqs_image(p);
    const mqs_image_callbacks *cb = mqd_image_cb(mqd_process_image(p));
    mqs_taddr_t vaddr;
    char version[32] = "", why[256];
    if (cb->mqs_find_symbol_fp(image, (char *)OMPI_SYM_VERSION, &vaddr) != mqs_ok) {
        mqd_process_explain(p, "the debug information lacks %s, and without the symbol "
                               OMPI_SYM_VERSION " the DLL cannot tell which build this is: "
                               "install libmpi's debug information", b->lacks);
        return MQD_ERR_NO_TYPE;
    }
    int rc = mqd_read_cstring(p, vaddr, version, sizeof version);
    if (rc != mqs_ok)
        return rc;
    const struct ompi_known_layout *k = find_layout(p, b, version, why, sizeof why);
    if (!k) {
        mqd_process_explain(p, "the debug information lacks %s, and %s: install libmpi's "
                               "debug information (Debian: libopenmpi3-dbgsym, or "
                               "debuginfod)", b->lacks, why);
        return MQD_ERR_NO_TYPE;
    }
    if (b->layout && b->layout != k) {
        mqd_process_explain(p, "this process runs the Open MPI build %s, another of the same "
                               "program %s", k->build, b->layout->build);
        return MQD_ERR_BAD_LAYOUT;
    }
    if (!b->layout) {
        b->layout = k;
        memcpy(b->off, k->off, sizeof b->off);
        memcpy(b->size, k->size, sizeof b->size);
        b->classes = known_classes(b);
        set_spans(b);
        char msg[200];
        snprintf(msg, sizeof msg, "no DWARF types: using the known layout of Open MPI %s (%s)",
                 k->version, k->build);
        mqd_debug(msg);
    }
    return mqs_ok;
}

int ompi__check_ob1_classes(struct mqd_process *p, const struct ompi_image *b)
{
    char why[160];
    if (!b->layout)
        return mqs_ok;
    int rc = classes_fit(p, b->layout, CLASS_OB1, why, sizeof why);
    if (rc == MQD_ERR_LAYOUT_MISFIT)
        mqd_process_explain(p, "the debug information lacks %s, and this Open MPI's pml ob1 "
                               "is not the build the DLL knows (%s): %s: install libmpi's "
                               "debug information (Debian: libopenmpi3-dbgsym, or debuginfod)",
                            b->lacks, b->layout->build, why);
    return rc;
}

int ompi__check_layout(struct mqd_process *p, struct ompi_image *b, int cls)
{
    for (int f = 0; f < F_COUNT; f++) {
        if ((field_defs[f].cls & cls) && b->off[f] < 0) {
            mqd_process_explain(p, "the debug information lacks %s", field_defs[f].path);
            return MQD_ERR_NO_TYPE;
        }
    }
    for (int s = 0; s < S_COUNT; s++) {
        if ((size_defs[s].cls & cls) && b->size[s] <= 0) {
            mqd_process_explain(p, "the debug information lacks the type %s",
                                size_defs[s].type);
            return MQD_ERR_NO_TYPE;
        }
    }
    /* Open MPI's size_t fields are read as pointer-sized words. */
    if (b->size[S_SZ_LIST] > 0 && b->off[F_LIST_LENGTH] >= 0 &&
        b->size[S_SZ_LIST] - b->off[F_LIST_LENGTH] < mqd_sizes(p)->pointer_size) {
        mqd_process_explain(p, "the debugger's pointer size (%d) does not fit opal_list_t: "
                               "its type sizes are another target's",
                            mqd_sizes(p)->pointer_size);
        return MQD_ERR_BAD_LAYOUT;
    }
    return mqs_ok;
}
