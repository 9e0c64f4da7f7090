/* synth.c - a synthetic MPICH target and a debugger over it; see synth.h. */
#define _GNU_SOURCE
#include "synth.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SYNTH_BASE 0x10000u

/* Bytes of target memory a synthetic target has (synth_memory_size). */
static uint64_t synth_size = 1u << 20;

void synth_memory_size(uint64_t bytes)
{
    synth_size = bytes;
}

struct field {
    char name[40];
    int off;
};

struct type {
    char name[48];
    int size, nfields;
    struct field f[24];
};

struct obj {
    struct synth *s;
    void *info;
};

/* What the debugq generation records per list entry (its requests hold no
 * envelope of their own). */
struct rec {
    uint64_t req;
    unsigned ctx;
    int rank, tag;
    long count;
};

/* A communicator as the recording rules need it: its contexts. */
struct scomm {
    unsigned ctx, rctx;
    uint64_t addr;
};

struct synth {
    int big_endian, ptr;
    enum synth_gen gen;
    int ncomms;
    struct scomm comms[64];
    uint64_t my_pg, foreign_pg; /* ch3 process groups (0: none) */
    int identity;               /* in the debugger's job */
    int world_rank;             /* the debugger's MPI-1 global rank (0 unless set) */
    int made_groups;            /* 4.x: communicators get groups (synth_made_groups) */
    int nrecs;
    struct rec recs[64];
    unsigned char *mem;
    uint64_t used;
    int ctx; /* bytes of a context id: 2, or 4 in 5.0 */
    /* SYNTH_CH4_STOCK: MPIDI_global, the communicator and request pools
     * (their allocators), the pending schedules, requests made so far. */
    uint64_t ch4_global, comm_mem, req_mem, scheds;
    int nreqs;
    uint32_t unsteady; /* synth_unsteady's state; 0: memory holds still */
    int ntypes, nsyms;
    struct type types[64];
    struct type *cur; /* synth_type_begin's, until synth_type_end */
    struct {
        char name[64];
        uint64_t addr;
    } syms[64];
    struct obj image, process;
    struct synth *image_of; /* synth_share_image: whose image the process has */
    char watch[64]; /* synth_watch_types: the part, and the lookups seen */
    int watched;
};

/* ---------------------------------------------------------------- layout */

static struct type *type_new(struct synth *s, const char *name)
{
    struct type *t = &s->types[s->ntypes++];
    memset(t, 0, sizeof *t);
    snprintf(t->name, sizeof t->name, "%s", name);
    return t;
}

/* Add a field of size bytes, aligned naturally (at most 8). */
static void add(struct type *t, const char *name, int size)
{
    int align = size >= 8 ? 8 : size >= 4 ? 4 : size >= 2 ? 2 : 1;
    t->size = (t->size + align - 1) / align * align;
    struct field *f = &t->f[t->nfields++];
    snprintf(f->name, sizeof f->name, "%s", name);
    f->off = t->size;
    t->size += size;
}

/* A name for the field at another's offset plus extra (a union member). */
static void alias(struct type *t, const char *name, const char *of, int extra)
{
    for (int i = 0; i < t->nfields; i++) {
        if (strcmp(t->f[i].name, of) == 0) {
            struct field *f = &t->f[t->nfields++];
            snprintf(f->name, sizeof f->name, "%s", name);
            f->off = t->f[i].off + extra;
            return;
        }
    }
    abort();
}

static void finish(struct type *t)
{
    t->size = (t->size + 7) / 8 * 8;
}

static const struct type *find_type(struct synth *s, const char *name)
{
    for (int i = 0; i < s->ntypes; i++)
        if (strcmp(s->types[i].name, name) == 0)
            return &s->types[i];
    return NULL;
}

int synth_sizeof(struct synth *s, const char *type)
{
    const struct type *t = find_type(s, type);
    if (!t) {
        fprintf(stderr, "synth: no type %s\n", type);
        abort();
    }
    return t->size;
}

int synth_off(struct synth *s, const char *type, const char *field)
{
    const struct type *t = find_type(s, type);
    for (int i = 0; t && i < t->nfields; i++)
        if (strcmp(t->f[i].name, field) == 0)
            return t->f[i].off;
    fprintf(stderr, "synth: no field %s.%s\n", type, field);
    abort();
}

void synth_drop_all_types(struct synth *s)
{
    for (int i = 0; i < s->ntypes; i++)
        s->types[i].name[0] = '\0';
}

void synth_drop_field(struct synth *s, const char *type, const char *field)
{
    struct type *t = (struct type *)find_type(s, type);
    for (int i = 0; t && i < t->nfields; i++)
        if (strcmp(t->f[i].name, field) == 0)
            t->f[i].name[0] = '\0';
}

void synth_drop_type(struct synth *s, const char *type)
{
    struct type *t = (struct type *)find_type(s, type);
    if (t)
        t->name[0] = '\0';
}

/* MPICH's types, laid out for this target's pointer size and generation.
 * The order of fields differs from MPICH's on purpose: the DLL must use
 * the offsets it is given, never assume any.  The debugq generation (MPICH
 * 4.0.3 and later, e.g. ch4) has none of ch3's device types. */
static int gen_ch3(enum synth_gen g)
{
    return g == SYNTH_CH3_402 || g == SYNTH_CH3_DQ || g == SYNTH_CH3_DQ_5;
}

static int gen_v5(enum synth_gen g)
{
    return g == SYNTH_DEBUGQ_5 || g == SYNTH_CH3_DQ_5 || g == SYNTH_CH4_STOCK_5;
}

static int gen_stock(enum synth_gen g)
{
    return g == SYNTH_CH4_STOCK || g == SYNTH_CH4_STOCK_5;
}

/* A request kind of 4.0.2's numbering as the generation numbers it: 4.1
 * on inserts ENQUEUE at 9 (mpir_request.h). */
static int gen_kind(enum synth_gen g, int kind)
{
    return gen_v5(g) && kind >= 9 ? kind + 1 : kind;
}

/* 4.0.2 ch4's request device part (src/mpid/ch4/include/mpidpre.h:
 * MPIDI_Devreq_t, MPIDIG_req_t, MPIDI_prequest_t, MPIDIG_req_ext_t); the
 * size of MPIDI_Devreq_t.  5.0's MPIDIG_req_t keeps a receive's context
 * alone in u.recv (its source and tag in the request's status). */
static int stock_request_types(struct synth *s)
{
    int p = s->ptr;
    struct type *t = type_new(s, "MPIDIG_req_ext_t");
    add(t, "next", p); add(t, "status", 8); finish(t);
    t = type_new(s, "MPIDIG_req_t");
    add(t, "count", p); add(t, "datatype", 4); add(t, "u", 12); add(t, "buffer", p);
    add(t, "req", p); finish(t);
    if (!gen_v5(s->gen)) {
        alias(t, "u.recv.tag", "u", 0); alias(t, "u.recv.source", "u", 4);
    }
    alias(t, "u.recv.context_id", "u", 8); alias(t, "u.send.dest", "u", 4);
    int am = t->size;
    t = type_new(s, "MPIDI_prequest_t"); /* 5.0: a context offset, not the context */
    add(t, "tag", 4); add(t, "rank", 4);
    add(t, gen_v5(s->gen) ? "context_offset" : "context_id", 2); add(t, "count", p);
    add(t, "datatype", 4); finish(t);
    int preq = t->size;
    t = type_new(s, "MPIDI_Devreq_t");
    add(t, "ch4.am", am > preq ? am : preq); add(t, "is_local", 4); finish(t);
    alias(t, "ch4.preq", "ch4.am", 0);
    return t->size;
}

/* 4.0.2 ch4's globals without debugger support: ch4's per-VCI lists
 * (src/mpid/ch4/src/ch4_types.h), the object allocators (src/include/
 * mpir_objects.h), the schedules (mpidu_sched.h). */
static void stock_global_types(struct synth *s)
{
    int p = s->ptr;
    struct type *t = type_new(s, "MPIDI_per_vci_t");
    add(t, "lock", 8); add(t, "unexp_list", p); add(t, "posted_list", p); add(t, "pad", 40);
    finish(t);
    int vci = t->size;
    t = type_new(s, "MPIDI_CH4_Global_t");
    add(t, "pname", 32); add(t, "per_vci", 4 * vci); add(t, "n_vcis", 4);
    if (gen_v5(s->gen)) /* 5.0: the reserved VCIs past n_vcis */
        add(t, "n_total_vcis", 4);
    finish(t);
    t = type_new(s, "MPIR_Object_alloc_t");
    add(t, "avail", p); add(t, "direct", p); add(t, "kind", 4); add(t, "indirect_size", 4);
    add(t, "indirect", p); add(t, "size", 4); add(t, "direct_size", 4); add(t, "pad", 64);
    finish(t);
    t = type_new(s, "MPIDU_Sched_recv");
    add(t, "buf", p); add(t, "src", 4); finish(t);
    t = type_new(s, "MPIDU_Sched_send");
    add(t, "buf", p); add(t, "count", p); add(t, "dest", 4); finish(t);
    t = type_new(s, "MPIDU_Sched_entry");
    add(t, "status", 4); add(t, "type", 4); add(t, "u", 3 * p); finish(t);
    t = type_new(s, "MPIDU_Sched");
    add(t, "size", p); add(t, "req", p); add(t, "tag", 4); add(t, "next", p); add(t, "prev", p);
    add(t, "idx", p); add(t, "entries", p); add(t, "num_entries", 4); finish(t);
    t = type_new(s, "MPIDU_Sched_state");
    add(t, "head", p); finish(t);
}

static void mpich_types(struct synth *s)
{
    int p = s->ptr, ch3 = gen_ch3(s->gen), v5 = gen_v5(s->gen);
    int ch4 = !ch3, old = s->gen == SYNTH_CH3_402, stock = gen_stock(s->gen);
    struct type *t;
    s->ctx = v5 ? 4 : 2;
    if (!v5) {
        t = type_new(s, "MPIR_Context_id_t"); t->size = 2;
    }
    t = type_new(s, "MPI_Aint"); t->size = p;
    if (!stock) { /* src/mpi/debugger/dbginit.c: only with debugger support */
        t = type_new(s, "MPIR_Comm_list");
        add(t, "sequence_number", 4); add(t, "head", p); finish(t);
    }
    int ch3comm = 0, devreq = 0;
    if (ch3) {
        t = type_new(s, "MPIDI_Rank_t"); t->size = 2;
        t = type_new(s, "MPIDI_CH3I_comm_t");
        add(t, "anysource_enabled", 4); add(t, "vcrt", p); add(t, "local_vcrt", p); finish(t);
        ch3comm = t->size;
        t = type_new(s, "MPIDI_VCRT");
        add(t, "handle", 4); add(t, "size", 4); add(t, "vcr_table", p); finish(t);
        t = type_new(s, "MPIDI_VC");
        add(t, "handle", 4); add(t, "pg", p); add(t, "pg_rank", 4); add(t, "lpid", 4); finish(t);
        t = type_new(s, "MPIDI_Message_match_parts_t");
        add(t, "tag", 4); add(t, "rank", 2); add(t, "context_id", 2); finish(t);
        t = type_new(s, "MPIDI_Message_match");
        add(t, "parts", 8); finish(t);
        t = type_new(s, "MPIDI_Request");
        add(t, "match", 8); add(t, "mask", 8); add(t, "user_buf", p); add(t, "user_count", p);
        add(t, "datatype", 4); add(t, "datatype_ptr", p); add(t, "tmpbuf", p);
        add(t, "recv_data_sz", p); finish(t);
        devreq = t->size;
        t = type_new(s, "MPIDI_PG_t");
        add(t, "handle", 4); add(t, "ref_count", 4); add(t, "next", p); add(t, "size", 4);
        add(t, "vct", p); add(t, "id", p); finish(t);
        t = type_new(s, "MPIDI_Process_t");
        add(t, "my_pg", p); add(t, "my_pg_rank", 4); finish(t);
    }
    if (stock) {
        devreq = stock_request_types(s);
        stock_global_types(s);
    } else if (old) {
        t = type_new(s, "MPIR_Sendq");
        add(t, "sreq", p); add(t, "tag", 4); add(t, "rank", 4); add(t, "context_id", 4);
        add(t, "next", p); add(t, "prev", p); finish(t);
    } else {
        t = type_new(s, "MPIR_Debugq");
        add(t, "next", p); add(t, "prev", p); add(t, "count", p); add(t, "buf", p);
        add(t, "context_id", 4); add(t, "req", p); add(t, "rank", 4); add(t, "tag", 4);
        finish(t);
    }
    int ch4comm = 0;
    if (ch4 && !v5) { /* src/mpid/ch4/include/mpidpre.h; dev.ch4 is anonymous */
        t = type_new(s, "MPIDI_rank_map_t");
        add(t, "size", 4); add(t, "avtid", 4); add(t, "irreg", 2 * p); add(t, "mode", 4);
        add(t, "reg", 12); finish(t);
        alias(t, "reg.stride.offset", "reg", 0); alias(t, "reg.stride.stride", "reg", 4);
        alias(t, "reg.stride.blocksize", "reg", 8);
        alias(t, "irreg.lut.lpid", "irreg", p); alias(t, "irreg.mlut.gpid", "irreg", p);
        int map = t->size;
        t = type_new(s, "MPIDI_Devcomm_t");
        add(t, "ch4.am", 3 * p); add(t, "ch4.local_map", map); add(t, "ch4.map", map);
        add(t, "ch4.csel_comm", p); finish(t);
        ch4comm = t->size;
    }
    t = type_new(s, "MPIR_Comm");
    add(t, "handle", 4); add(t, "ref_count", 4); add(t, "context_id", s->ctx);
    add(t, "recvcontext_id", s->ctx); add(t, "remote_size", 4); add(t, "rank", 4);
    add(t, "local_size", 4); add(t, "local_group", p); add(t, "remote_group", p);
    add(t, "comm_kind", 4); add(t, "name", 128); add(t, "comm_next", p);
    add(t, "next_sched_tag", 4);
    if (ch3)
        add(t, "dev", ch3comm);
    else if (ch4comm)
        add(t, "dev", ch4comm);
    finish(t);
    if (v5) { /* src/include/mpir_group.h: the union has no name to look up */
        t = type_new(s, "MPIR_Pmap");
        add(t, "size", 4); add(t, "use_map", 1); add(t, "u", 24); finish(t);
        int pmap = t->size;
        t = type_new(s, "MPIR_Group");
        add(t, "handle", 4); add(t, "ref_count", 4); add(t, "pmap", pmap); add(t, "size", 4);
        add(t, "rank", 4); finish(t);
        t = type_new(s, "MPIR_World");
        add(t, "num_procs", 4); add(t, "namespace", 128); finish(t);
    } else {
        t = type_new(s, "MPIR_Group");
        add(t, "handle", 4); add(t, "size", 4); add(t, "rank", 4); add(t, "lrank_to_lpid", p);
        finish(t);
        t = type_new(s, "MPII_Group_pmap_t");
        add(t, "lpid", 8); add(t, "next_lpid", 4); finish(t);
    }
    t = type_new(s, "MPIR_Process_t");
    add(t, "mpich_state", 4); add(t, "size", 4); add(t, "attrs.tag_ub", 4); add(t, "rank", 4);
    add(t, "comm_self", p); add(t, "comm_world", p); finish(t);
    t = type_new(s, "MPI_Status");
    add(t, "count_lo", 4); add(t, "count_hi_and_cancelled", 4); add(t, "MPI_SOURCE", 4);
    add(t, "MPI_TAG", 4); add(t, "MPI_ERROR", 4); t->size = 20;
    t = type_new(s, "MPIR_Request");
    add(t, "handle", 4); add(t, "ref_count", 4); add(t, "kind", 4); add(t, "cc_ptr", p);
    add(t, "cc", 4); add(t, "comm", p); add(t, "status", 20); add(t, "next", p);
    add(t, "prev", p);
    if (ch3 || stock)
        add(t, "dev", devreq);
    finish(t);
    t = type_new(s, "MPIR_Datatype");
    add(t, "handle", 4); add(t, "ref_count", 4); add(t, "size", p); add(t, "extent", p);
    finish(t);
}

/* ---------------------------------------------------------------- memory */

/* MPIR_Process: the world rank (5.0 names this process by it) and
 * MPI_TAG_UB, below MPIR_TAG_COLL_BIT (ch3 has 31 tag bits, ofi fewer). */
static uint64_t mpir_process(struct synth *s)
{
    uint64_t pr = synth_alloc(s, synth_sizeof(s, "MPIR_Process_t"));
    synth_put(s, pr + (uint64_t)synth_off(s, "MPIR_Process_t", "rank"), 1, 4);
    synth_put(s, pr + (uint64_t)synth_off(s, "MPIR_Process_t", "attrs.tag_ub"),
              gen_ch3(s->gen) ? 0x3fffffffu : 0x7ffffu, 4);
    synth_symbol(s, "MPIR_Process", pr);
    return pr;
}

static void put_string_sym(struct synth *s, const char *name, const char *value)
{
    uint64_t a = synth_alloc(s, (int)strlen(value) + 1);
    synth_put_bytes(s, a, value, (int)strlen(value) + 1);
    synth_symbol(s, name, a);
}

/* An object allocator (MPIR_Object_alloc_t) at a, of kind, objects of
 * size, ndirect of them at direct (their handles set, none in use, as
 * MPIR_Handle_direct_init leaves them), and an empty table of 4 blocks. */
static void allocator(struct synth *s, uint64_t a, unsigned kind, int size, int ndirect)
{
    const char *T = "MPIR_Object_alloc_t";
    uint64_t direct = ndirect ? synth_alloc(s, ndirect * size) : 0;
    synth_put(s, a + (uint64_t)synth_off(s, T, "kind"), kind, 4);
    synth_put(s, a + (uint64_t)synth_off(s, T, "size"), (uint64_t)size, 4);
    synth_put(s, a + (uint64_t)synth_off(s, T, "direct"), direct, s->ptr);
    synth_put(s, a + (uint64_t)synth_off(s, T, "direct_size"), (uint64_t)ndirect, 4);
    synth_put(s, a + (uint64_t)synth_off(s, T, "indirect"), synth_alloc(s, 4 * s->ptr), s->ptr);
    for (int i = 0; i < ndirect; i++)
        synth_put(s, direct + (uint64_t)(i * size), 2u << 30 | kind << 26 | (unsigned)i, 4);
}

/* SYNTH_CH4_STOCK's globals (synth.h), named as the library's debug
 * symbols name them; SYNTH_CH4_STOCK_5's with 5.0's worlds. */
static struct synth *stock_globals(struct synth *s)
{
    int v5 = gen_v5(s->gen);
    put_string_sym(s, "MPII_Version_device", v5 ? "ch4:ofi" : "ch4:ucx");
    put_string_sym(s, "MPII_Version_string", v5 ? "5.0.1" : "4.0.2");
    if (v5) {
        uint64_t w = synth_alloc(s, 2 * synth_sizeof(s, "MPIR_World"));
        synth_put_bytes(s, w + (uint64_t)synth_off(s, "MPIR_World", "namespace"), "kvs_5_0", 8);
        synth_symbol(s, "MPIR_Worlds", w);
    }
    uint64_t pr = mpir_process(s);
    synth_put(s, pr + (uint64_t)synth_off(s, "MPIR_Process_t", "size"), 4, 4);
    s->ch4_global = synth_alloc(s, synth_sizeof(s, "MPIDI_CH4_Global_t"));
    synth_vcis(s, 1);
    synth_symbol(s, "MPIDI_global", s->ch4_global);
    s->comm_mem = synth_alloc(s, synth_sizeof(s, "MPIR_Object_alloc_t"));
    allocator(s, s->comm_mem, 0x1, synth_sizeof(s, "MPIR_Comm"), 8);
    synth_symbol(s, "MPIR_Comm_mem", s->comm_mem);
    int asz = synth_sizeof(s, "MPIR_Object_alloc_t");
    s->req_mem = synth_alloc(s, 64 * asz);
    for (int pool = 0; pool < 64; pool++)
        allocator(s, s->req_mem + (uint64_t)(pool * asz), 0xb, synth_sizeof(s, "MPIR_Request"),
                  pool ? 0 : 8);
    synth_symbol(s, "MPIR_Request_mem", s->req_mem);
    s->scheds = synth_alloc(s, synth_sizeof(s, "MPIDU_Sched_state"));
    synth_symbol(s, "all_schedules", s->scheds);
    return s;
}

struct synth *synth_new(int big_endian, int ptr_size)
{
    return synth_new_gen(big_endian, ptr_size, SYNTH_CH3_402);
}

struct synth *synth_new_gen(int big_endian, int ptr_size, enum synth_gen gen)
{
    struct synth *s = calloc(1, sizeof *s);
    s->big_endian = big_endian;
    s->ptr = ptr_size;
    s->gen = gen;
    s->mem = calloc(1, synth_size);
    s->used = 64;
    s->image.s = s->process.s = s;
    mpich_types(s);
    if (gen_stock(gen))
        return stock_globals(s);
    /* The globals every MPICH process of this generation has. */
    synth_symbol(s, "MPIR_All_communicators", synth_alloc(s, synth_sizeof(s, "MPIR_Comm_list")));
    synth_symbol(s, "MPIR_Sendq_head", synth_alloc(s, ptr_size));
    if (gen_v5(gen)) {
        uint64_t w = synth_alloc(s, 2 * synth_sizeof(s, "MPIR_World"));
        synth_put_bytes(s, w + (uint64_t)synth_off(s, "MPIR_World", "namespace"), "kvs_5_0", 8);
        synth_symbol(s, "MPIR_Worlds", w);
    }
    /* MPIR_Process: the world rank (5.0 names this process by it) and
     * MPI_TAG_UB, below MPIR_TAG_COLL_BIT (ch3 has 31 tag bits, ofi fewer). */
    mpir_process(s);
    if (gen != SYNTH_CH3_402) { /* 4.0.2 is told by its types, without a device */
        const char *dev = gen_ch3(gen) ? "ch3:nemesis" : "ch4:ofi";
        uint64_t d = synth_alloc(s, (int)strlen(dev) + 1);
        synth_put_bytes(s, d, dev, (int)strlen(dev) + 1);
        synth_symbol(s, "MPII_Version_device", d);
        synth_symbol(s, "MPIR_Recvq_head", synth_alloc(s, ptr_size));
        synth_symbol(s, "MPIR_Unexpq_head", synth_alloc(s, ptr_size));
    }
    /* ch3's own lists; ch4 exports the same symbols (for its own use). */
    uint64_t posted = synth_alloc(s, ptr_size), unexp = synth_alloc(s, ptr_size);
    uint64_t posted_ptr = synth_alloc(s, ptr_size), unexp_ptr = synth_alloc(s, ptr_size);
    synth_put(s, posted_ptr, posted, ptr_size);
    synth_put(s, unexp_ptr, unexp, ptr_size);
    synth_symbol(s, "MPID_Recvq_posted_head_ptr", posted_ptr);
    synth_symbol(s, "MPID_Recvq_unexpected_head_ptr", unexp_ptr);
    return s;
}

struct synth *synth_new_blank(int big_endian, int ptr_size)
{
    struct synth *s = calloc(1, sizeof *s);
    s->big_endian = big_endian;
    s->ptr = ptr_size;
    s->gen = SYNTH_CH3_402; /* unused: no MPICH shape is built */
    s->mem = calloc(1, synth_size);
    s->used = 64;
    s->image.s = s->process.s = s;
    return s;
}

int synth_ptr_size(const struct synth *s)
{
    return s->ptr;
}

void synth_type_begin(struct synth *s, const char *name)
{
    if (s->ntypes >= (int)(sizeof s->types / sizeof s->types[0]))
        abort();
    s->cur = type_new(s, name);
}

void synth_type_field(struct synth *s, const char *field, int size)
{
    if (!s->cur || s->cur->nfields >= (int)(sizeof s->cur->f / sizeof s->cur->f[0]))
        abort();
    add(s->cur, field, size);
}

void synth_type_alias(struct synth *s, const char *field, const char *of, int extra)
{
    if (!s->cur || s->cur->nfields >= (int)(sizeof s->cur->f / sizeof s->cur->f[0]))
        abort();
    alias(s->cur, field, of, extra);
}

void synth_type_end(struct synth *s, int size)
{
    if (!s->cur)
        abort();
    if (size > 0)
        s->cur->size = size;
    else
        finish(s->cur);
    s->cur = NULL;
}

void synth_free(struct synth *s)
{
    if (s) {
        free(s->mem);
        free(s);
    }
}

uint64_t synth_alloc(struct synth *s, int size)
{
    s->used = (s->used + 15) / 16 * 16;
    uint64_t a = SYNTH_BASE + s->used;
    s->used += (uint64_t)(size > 0 ? size : 1);
    if (s->used > synth_size)
        abort();
    return a;
}

void synth_put(struct synth *s, uint64_t addr, uint64_t value, int size)
{
    unsigned char *d = s->mem + (addr - SYNTH_BASE);
    for (int i = 0; i < size; i++)
        d[s->big_endian ? size - 1 - i : i] = (unsigned char)(value >> (8 * i));
}

void synth_put_bytes(struct synth *s, uint64_t addr, const void *bytes, int n)
{
    memcpy(s->mem + (addr - SYNTH_BASE), bytes, (size_t)n);
}

/* The integer of size bytes at addr, in target order. */
static uint64_t rd(struct synth *s, uint64_t addr, int size)
{
    const unsigned char *m = s->mem + (addr - SYNTH_BASE);
    uint64_t v = 0;
    for (int k = 0; k < size; k++)
        v |= (uint64_t)m[s->big_endian ? size - 1 - k : k] << (8 * k);
    return v;
}

void synth_symbol(struct synth *s, const char *name, uint64_t addr)
{
    snprintf(s->syms[s->nsyms].name, sizeof s->syms[0].name, "%s", name);
    s->syms[s->nsyms++].addr = addr;
}

void synth_drop_symbol(struct synth *s, const char *name)
{
    for (int i = 0; i < s->nsyms; i++)
        if (strcmp(s->syms[i].name, name) == 0)
            s->syms[i--] = s->syms[--s->nsyms];
}

/* The address of symbol name; 0 if there is none. */
static uint64_t find_sym(struct synth *s, const char *name)
{
    for (int i = 0; i < s->nsyms; i++)
        if (strcmp(s->syms[i].name, name) == 0)
            return s->syms[i].addr;
    return 0;
}

static uint64_t sym(struct synth *s, const char *name)
{
    uint64_t a = find_sym(s, name);
    if (!a)
        abort();
    return a;
}

int synth_read_ptr(struct synth *s, const char *symbol, uint64_t *value)
{
    uint64_t addr = find_sym(s, symbol);
    if (!addr)
        return -1;
    const unsigned char *m = s->mem + (addr - SYNTH_BASE);
    *value = 0;
    for (int k = 0; k < s->ptr; k++)
        *value |= (uint64_t)m[s->big_endian ? s->ptr - 1 - k : k] << (8 * k);
    return 0;
}

/* ---------------------------------------------------------------- fuzzing */

unsigned char *synth_memory(struct synth *s, uint64_t *base, uint64_t *len)
{
    *base = SYNTH_BASE;
    *len = s->used;
    return s->mem;
}

void synth_patch_type(struct synth *s, unsigned which, unsigned field, int value)
{
    struct type *t = &s->types[which % (unsigned)s->ntypes];
    field %= (unsigned)t->nfields + 1;
    if (field == (unsigned)t->nfields)
        t->size = value;
    else
        t->f[field].off = value;
}

void synth_unsteady(struct synth *s, uint32_t seed)
{
    s->unsteady = seed;
}

void synth_patch_symbol(struct synth *s, unsigned which, uint64_t addr)
{
    if (s->nsyms)
        s->syms[which % (unsigned)s->nsyms].addr = addr;
}

/* ---------------------------------------------------------------- MPICH shapes */

#define PUT(addr, type, field, value, size) \
    synth_put(s, (addr) + (uint64_t)synth_off(s, type, field), (uint64_t)(value), size)

void synth_world_rank(struct synth *s, int rank)
{
    PUT(sym(s, "MPIR_Process"), "MPIR_Process_t", "rank", rank, 4);
    s->world_rank = rank;
}

void synth_made_groups(struct synth *s)
{
    s->made_groups = 1;
}

/* ch3: a connection table; an entry -(r + 1) is rank r of the foreign
 * process group, which ch3 gives an lpid after its own world's. */
static uint64_t vcrt(struct synth *s, int n, const int *world, uint64_t pg)
{
    int p = s->ptr;
    uint64_t v = synth_alloc(s, synth_sizeof(s, "MPIDI_VCRT") + n * p);
    PUT(v, "MPIDI_VCRT", "size", n, 4);
    for (int i = 0; i < n; i++) {
        uint64_t vc = synth_alloc(s, synth_sizeof(s, "MPIDI_VC"));
        int r = world ? world[i] : i, foreign = r < 0;
        if (foreign)
            r = -r - 1;
        PUT(vc, "MPIDI_VC", "lpid", foreign ? 0x100 + r : r, 4);
        PUT(vc, "MPIDI_VC", "pg", foreign ? s->foreign_pg : pg, p);
        PUT(vc, "MPIDI_VC", "pg_rank", r, 4);
        synth_put(s, v + (uint64_t)synth_off(s, "MPIDI_VCRT", "vcr_table") + (uint64_t)(i * p),
                  vc, p);
    }
    return v;
}

/* An object of pool (an allocator) for handle h (direct or indirect), its
 * reference count 1 (in use), blocks made as needed: of HANDLE_NUM_INDICES
 * (1024) communicators, as MPICH makes them, but of 64 requests (the DLL
 * reads one request by its handle, never a block's others). */
static uint64_t pool_object(struct synth *s, uint64_t pool, unsigned h)
{
    const char *T = "MPIR_Object_alloc_t";
    int size = (int)rd(s, pool + (uint64_t)synth_off(s, T, "size"), 4);
    uint64_t o;
    if (h >> 30 == 2) {
        if ((h & 0x3ffffffu) >= rd(s, pool + (uint64_t)synth_off(s, T, "direct_size"), 4))
            abort();
        o = rd(s, pool + (uint64_t)synth_off(s, T, "direct"), s->ptr) +
            (h & 0x3ffffffu) * (uint64_t)size;
    } else {
        unsigned blk = h >> 12 & 0xff, i = h & 0xfff, per = (h >> 26 & 0xf) == 1 ? 1024 : 64;
        uint64_t table = rd(s, pool + (uint64_t)synth_off(s, T, "indirect"), s->ptr);
        unsigned nblocks = (unsigned)rd(s, pool + (uint64_t)synth_off(s, T, "indirect_size"), 4);
        if (blk >= 4 || i >= per)
            abort();
        for (; nblocks <= blk; nblocks++) {
            uint64_t b = synth_alloc(s, (int)per * size);
            synth_put(s, table + (uint64_t)(nblocks * s->ptr), b, s->ptr);
            for (unsigned k = 0; k < per; k++) /* MPIR_Handle_indirect_init */
                synth_put(s, b + (uint64_t)(k * (unsigned)size),
                          (h & 0xfc000000u) | (h & 0x03f00000u) | nblocks << 12 | k, 4);
        }
        synth_put(s, pool + (uint64_t)synth_off(s, T, "indirect_size"), nblocks, 4);
        o = rd(s, table + (uint64_t)(blk * (unsigned)s->ptr), s->ptr) + i * (uint64_t)size;
    }
    synth_put(s, o, h, 4);
    synth_put(s, o + 4, 1, 4); /* ref_count, after the handle (MPIR_OBJECT_HEADER) */
    return o;
}

/* SYNTH_CH4_STOCK: where communicator handle lives: the world and self are
 * MPIR_Process's builtins, the others in the pool. */
static uint64_t stock_comm_object(struct synth *s, unsigned handle)
{
    if (handle >> 30 != 1)
        return pool_object(s, s->comm_mem, handle);
    uint64_t c = synth_alloc(s, synth_sizeof(s, "MPIR_Comm"));
    if (handle == 0x44000000u || handle == 0x44000001u)
        synth_put(s, sym(s, "MPIR_Process") +
                         (uint64_t)synth_off(s, "MPIR_Process_t",
                                             handle == 0x44000000u ? "comm_world" : "comm_self"),
                  c, s->ptr);
    return c;
}

static uint64_t comm_common(struct synth *s, unsigned handle, unsigned ctx, int lsize, int rank,
                            int rsize, int inter, const char *name)
{
    uint64_t c = gen_stock(s->gen) ? stock_comm_object(s, handle)
                                          : synth_alloc(s, synth_sizeof(s, "MPIR_Comm"));
    PUT(c, "MPIR_Comm", "ref_count", 1, 4);
    unsigned sctx = inter ? SYNTH_INTER_SEND(ctx) : ctx;
    if (s->ncomms == (int)(sizeof s->comms / sizeof s->comms[0]))
        abort();
    s->comms[s->ncomms++] = (struct scomm){sctx, ctx, c};
    PUT(c, "MPIR_Comm", "handle", handle, 4);
    PUT(c, "MPIR_Comm", "context_id", sctx, s->ctx);
    PUT(c, "MPIR_Comm", "recvcontext_id", ctx, s->ctx);
    PUT(c, "MPIR_Comm", "local_size", lsize, 4);
    PUT(c, "MPIR_Comm", "remote_size", rsize, 4);
    PUT(c, "MPIR_Comm", "rank", rank, 4);
    PUT(c, "MPIR_Comm", "comm_kind", inter, 4);
    PUT(c, "MPIR_Comm", "next_sched_tag", 287, 4); /* MPIR_FIRST_NBC_TAG: none started */
    if (name)
        synth_put_bytes(s, c + (uint64_t)synth_off(s, "MPIR_Comm", "name"), name,
                        (int)(strlen(name) < 128 ? strlen(name) : 128));
    return c;
}

/* An MPIR_Group of the world ranks world[n] (NULL: 0..n-1), an entry -(r
 * + 1) naming rank r of the other world: 5.0's MPIR_Pmap (lpid world index
 * << 32 | rank), else 4.x's lrank_to_lpid table (4.x ch4: lupids, the
 * address table above 24 bits). */
static uint64_t group(struct synth *s, int n, const int *world)
{
    if (gen_v5(s->gen)) { /* MPIR_Pmap: the world by stride, others mapped */
        uint64_t g = synth_alloc(s, synth_sizeof(s, "MPIR_Group"));
        uint64_t pm = g + (uint64_t)synth_off(s, "MPIR_Group", "pmap");
        uint64_t u = pm + (uint64_t)synth_off(s, "MPIR_Pmap", "u");
        PUT(g, "MPIR_Group", "size", n, 4);
        PUT(pm, "MPIR_Pmap", "size", n, 4);
        int plain = 1; /* ranks 0..n-1 of this world: offset 0, stride 1, blocksize 1 */
        for (int i = 0; world && i < n; i++)
            plain = plain && world[i] == i;
        if (plain) {
            synth_put(s, u + 8, 1, 8);
            synth_put(s, u + 16, 1, 8);
            return g;
        }
        uint64_t map = synth_alloc(s, n * 8);
        PUT(pm, "MPIR_Pmap", "use_map", 1, 1);
        synth_put(s, u, map, s->ptr);
        for (int i = 0; i < n; i++) /* world 0: the lpid is the world rank */
            synth_put(s, map + (uint64_t)(i * 8),
                      world[i] < 0 ? 1ull << 32 | (uint64_t)(-world[i] - 1) : (uint64_t)world[i],
                      8);
        return g;
    }
    int esz = synth_sizeof(s, "MPII_Group_pmap_t");
    uint64_t g = synth_alloc(s, synth_sizeof(s, "MPIR_Group"));
    uint64_t map = synth_alloc(s, n * esz);
    PUT(g, "MPIR_Group", "size", n, 4);
    PUT(g, "MPIR_Group", "lrank_to_lpid", map, s->ptr);
    for (int i = 0; i < n; i++) {
        int r = world ? world[i] : i;
        synth_put(s, map + (uint64_t)(i * esz + synth_off(s, "MPII_Group_pmap_t", "lpid")),
                  r < 0 ? 1u << 24 | (unsigned)(-r - 1) : (uint64_t)r, 8);
    }
    return g;
}

static int dev_off(struct synth *s, const char *field)
{
    return synth_off(s, "MPIR_Comm", "dev") + synth_off(s, "MPIDI_CH3I_comm_t", field);
}

/* 4.x ch4: the rank map at addr, in the simplest mode that describes
 * world (NULL: ranks 0..n-1 of this world; negative entries: processes
 * of address table 1, a spawned world). */
static void rank_map(struct synth *s, uint64_t addr, int n, const int *world, int intra)
{
#define RM(field, v) synth_put(s, addr + (uint64_t)synth_off(s, "MPIDI_rank_map_t", field), \
                               (uint64_t)(int64_t)(v), 4)
    int foreign = 0, stride = n > 1 && world ? world[1] - world[0] : 1, linear = 1;
    for (int i = 0; world && i < n; i++) {
        foreign |= world[i] < 0;
        linear = linear && world[i] == world[0] + i * stride;
    }
    int off = world ? world[0] : 0;
    RM("size", n);
    if (foreign) { /* MLUT: {avtid, lpid} per rank */
        uint64_t t = synth_alloc(s, n * 8);
        for (int i = 0; i < n; i++) {
            synth_put(s, t + (uint64_t)(8 * i), world[i] < 0 ? 1 : 0, 4);
            synth_put(s, t + (uint64_t)(8 * i + 4), (uint64_t)(world[i] < 0 ? -world[i] - 1 : world[i]), 4);
        }
        RM("mode", 10);
        synth_put(s, addr + (uint64_t)synth_off(s, "MPIDI_rank_map_t", "irreg.mlut.gpid"), t, s->ptr);
    } else if (linear && stride == 1) { /* DIRECT, or OFFSET */
        RM("mode", (off ? 2 : 0) + intra);
        RM("reg.stride.offset", off);
    } else if (linear && stride > 1) { /* STRIDE */
        RM("mode", 4 + intra);
        RM("reg.stride.offset", off);
        RM("reg.stride.stride", stride);
        RM("reg.stride.blocksize", 1);
    } else { /* LUT */
        uint64_t t = synth_alloc(s, n * 4);
        for (int i = 0; i < n; i++)
            synth_put(s, t + (uint64_t)(4 * i), (uint64_t)world[i], 4);
        RM("mode", 8 + intra);
        synth_put(s, addr + (uint64_t)synth_off(s, "MPIDI_rank_map_t", "irreg.lut.lpid"), t, s->ptr);
    }
#undef RM
}

static int ch4_map_off(struct synth *s, const char *which)
{
    return synth_off(s, "MPIR_Comm", "dev") + synth_off(s, "MPIDI_Devcomm_t", which);
}

uint64_t synth_comm(struct synth *s, unsigned handle, unsigned ctx, int size, int rank,
                    const char *name, const int *world_ranks)
{
    uint64_t c = comm_common(s, handle, ctx, size, rank, size, 0, name);
    /* 5.0 always has groups; 4.x makes them lazily (none here); ch3 names
     * its peers in its connection tables, 4.x ch4 in its rank maps. */
    if (gen_v5(s->gen) || s->made_groups)
        PUT(c, "MPIR_Comm", "local_group", group(s, size, world_ranks), s->ptr);
    if (gen_ch3(s->gen))
        synth_put(s, c + (uint64_t)dev_off(s, "vcrt"), vcrt(s, size, world_ranks, s->my_pg), s->ptr);
    else if (!gen_v5(s->gen))
        rank_map(s, c + (uint64_t)ch4_map_off(s, "ch4.map"), size, world_ranks, 1);
    return c;
}

uint64_t synth_intercomm(struct synth *s, unsigned handle, unsigned ctx, int lsize, int rank,
                         int rsize, const char *name, const int *remote_world)
{
    uint64_t c = comm_common(s, handle, ctx, lsize, rank, rsize, 1, name);
    if (gen_v5(s->gen) || s->made_groups) {
        PUT(c, "MPIR_Comm", "remote_group", group(s, rsize, remote_world), s->ptr);
        PUT(c, "MPIR_Comm", "local_group", group(s, lsize, NULL), s->ptr);
    }
    if (!gen_ch3(s->gen)) {
        if (!gen_v5(s->gen)) {
            rank_map(s, c + (uint64_t)ch4_map_off(s, "ch4.map"), rsize, remote_world, 0);
            rank_map(s, c + (uint64_t)ch4_map_off(s, "ch4.local_map"), lsize, NULL, 0);
        }
        return c;
    }
    synth_put(s, c + (uint64_t)dev_off(s, "vcrt"), vcrt(s, rsize, remote_world, s->foreign_pg ? s->foreign_pg : s->my_pg), s->ptr);
    synth_put(s, c + (uint64_t)dev_off(s, "local_vcrt"), vcrt(s, lsize, NULL, s->my_pg), s->ptr);
    return c;
}

static uint64_t process_group(struct synth *s, const char *id)
{
    uint64_t pg = synth_alloc(s, synth_sizeof(s, "MPIDI_PG_t"));
    uint64_t str = synth_alloc(s, (int)strlen(id) + 1);
    synth_put_bytes(s, str, id, (int)strlen(id) + 1);
    PUT(pg, "MPIDI_PG_t", "id", str, s->ptr);
    return pg;
}

/* World idx's namespace (5.0's MPIR_Worlds, made with two). */
static void world_namespace(struct synth *s, int idx, const char *id)
{
    uint64_t w = sym(s, "MPIR_Worlds") + (uint64_t)(idx * synth_sizeof(s, "MPIR_World"));
    char ns[128] = "";
    snprintf(ns, sizeof ns, "%s", id);
    synth_put_bytes(s, w + (uint64_t)synth_off(s, "MPIR_World", "namespace"), ns, sizeof ns);
}

void synth_process_group(struct synth *s, const char *id, int rank)
{
    synth_world_rank(s, rank);
    if (gen_v5(s->gen))
        world_namespace(s, 0, id);
    if (s->gen == SYNTH_DEBUGQ || gen_ch3(s->gen)) { /* PMI-1's static char *pmi_kvs_name */
        uint64_t var = synth_alloc(s, s->ptr), str = synth_alloc(s, (int)strlen(id) + 1);
        synth_put_bytes(s, str, id, (int)strlen(id) + 1);
        synth_put(s, var, str, s->ptr);
        synth_symbol(s, "pmi_kvs_name", var);
    }
    if (!gen_ch3(s->gen))
        return;
    s->my_pg = process_group(s, id);
    uint64_t var = synth_alloc(s, synth_sizeof(s, "MPIDI_Process_t"));
    PUT(var, "MPIDI_Process_t", "my_pg", s->my_pg, s->ptr);
    PUT(var, "MPIDI_Process_t", "my_pg_rank", rank, 4);
    synth_symbol(s, "MPIDI_Process", var);
}

void synth_finalizing(struct synth *s, int state, int world_size)
{
    uint64_t var = find_sym(s, "MPIR_debug_state");
    if (!var) {
        var = synth_alloc(s, 4);
        synth_symbol(s, "MPIR_debug_state", var);
    }
    synth_put(s, var, (uint64_t)state, 4);
    uint64_t proc = find_sym(s, "MPIDI_Process");
    if (world_size < 0 && proc) /* MPIDI_PG_Finalize has run */
        PUT(proc, "MPIDI_Process_t", "my_pg", 0, s->ptr);
    else if (s->my_pg)
        PUT(s->my_pg, "MPIDI_PG_t", "size", (uint64_t)world_size, 4);
}

void synth_foreign_group(struct synth *s, const char *id)
{
    if (gen_v5(s->gen))
        world_namespace(s, 1, id);
    if (gen_ch3(s->gen))
        s->foreign_pg = process_group(s, id);
}

void synth_comm_list(struct synth *s, const uint64_t *comms, int n, int seq)
{
    if (gen_stock(s->gen)) /* no list: the pool is where they are */
        return;
    uint64_t list = sym(s, "MPIR_All_communicators");
    PUT(list, "MPIR_Comm_list", "sequence_number", seq, 4);
    PUT(list, "MPIR_Comm_list", "head", n ? comms[n - 1] : 0, s->ptr);
    for (int i = n - 1; i >= 0; i--) /* newest (last given) first */
        PUT(comms[i], "MPIR_Comm", "comm_next", i ? comms[i - 1] : 0, s->ptr);
}

static int req_dev(struct synth *s, const char *field)
{
    return synth_off(s, "MPIR_Request", "dev") + synth_off(s, "MPIDI_Request", field);
}

static int match_off(struct synth *s, const char *part)
{
    return req_dev(s, "match") + synth_off(s, "MPIDI_Message_match", "parts") +
           synth_off(s, "MPIDI_Message_match_parts_t", part);
}

/* debugq: what an entry for request req will say. */
static void remember(struct synth *s, uint64_t req, unsigned ctx, int rank, int tag, long count)
{
    if (s->nrecs == (int)(sizeof s->recs / sizeof s->recs[0]))
        abort();
    s->recs[s->nrecs++] = (struct rec){req, ctx, rank, tag, count};
}

static const struct rec *recalled(struct synth *s, uint64_t req)
{
    for (int i = 0; i < s->nrecs; i++)
        if (s->recs[i].req == req)
            return &s->recs[i];
    abort();
}

/* The plain receive context MPICH's debug queues record for a send or
 * posted receive on wire context ctx (the collective offset dropped, an
 * intercommunicator's send context traded for its receive context). */
static unsigned plain_context(struct synth *s, unsigned ctx, int send)
{
    unsigned base = ctx & ~1u;
    for (int i = 0; send && i < s->ncomms; i++)
        if (s->comms[i].ctx == base)
            return s->comms[i].rctx;
    return base;
}

/* debugq: link entries for reqs (oldest first) newest first at head; the
 * entries of sends and posted receives (plain) under the plain context. */
static void debugq(struct synth *s, const char *head, const uint64_t *reqs, int n, int plain,
                   int send)
{
    uint64_t prev = 0;
    for (int i = 0; i < n; i++) {
        const struct rec *r = recalled(s, reqs[i]);
        uint64_t e = synth_alloc(s, synth_sizeof(s, "MPIR_Debugq"));
        PUT(e, "MPIR_Debugq", "req", r->req, s->ptr);
        PUT(e, "MPIR_Debugq", "context_id", plain ? plain_context(s, r->ctx, send) : r->ctx, 4);
        PUT(e, "MPIR_Debugq", "rank", (int64_t)r->rank, 4);
        PUT(e, "MPIR_Debugq", "tag", (int64_t)r->tag, 4);
        PUT(e, "MPIR_Debugq", "count", r->count, s->ptr);
        PUT(e, "MPIR_Debugq", "buf", r->count ? 0x7000 : 0, s->ptr);
        PUT(e, "MPIR_Debugq", "next", prev, s->ptr);
        if (prev)
            PUT(prev, "MPIR_Debugq", "prev", e, s->ptr);
        prev = e;
    }
    synth_put(s, sym(s, head), prev, s->ptr);
}

/* SYNTH_CH4_STOCK: an offset in a request's MPIDIG_req_t (ch4.am). */
static int am_off(struct synth *s, const char *field)
{
    return synth_off(s, "MPIR_Request", "dev") + synth_off(s, "MPIDI_Devreq_t", "ch4.am") +
           synth_off(s, "MPIDIG_req_t", field);
}

/* SYNTH_CH4_STOCK: the communicator of context ctx (a send's, else a
 * receive's, the collective bit aside); 0 if none. */
static uint64_t comm_of_context(struct synth *s, unsigned ctx, int send)
{
    for (int i = 0; i < s->ncomms; i++)
        if ((send ? s->comms[i].ctx : s->comms[i].rctx) == (ctx & ~1u))
            return s->comms[i].addr;
    return 0;
}

/* SYNTH_CH4_STOCK: a request of kind from pool 0's blocks (handles
 * 0xec000000 + n), in use, an active-message one (its MPIDIG_req_ext_t). */
static uint64_t stock_request(struct synth *s, int kind, int cc)
{
    uint64_t r = pool_object(s, s->req_mem, 0xec000000u | (unsigned)(s->nreqs / 64) << 12 |
                                                (unsigned)(s->nreqs % 64));
    s->nreqs++;
    PUT(r, "MPIR_Request", "kind", gen_kind(s->gen, kind), 4);
    PUT(r, "MPIR_Request", "cc", cc, 4);
    synth_put(s, r + (uint64_t)am_off(s, "req"),
              synth_alloc(s, synth_sizeof(s, "MPIDIG_req_ext_t")), s->ptr);
    return r;
}

uint64_t synth_recv(struct synth *s, unsigned ctx, int rank, int tag, long count,
                    unsigned datatype, int cc, long recv_sz)
{
    int stock = gen_stock(s->gen);
    uint64_t r = stock ? stock_request(s, 2, cc) : synth_alloc(s, synth_sizeof(s, "MPIR_Request"));
    if (!stock)
        PUT(r, "MPIR_Request", "handle", 0xac000000u, 4);
    PUT(r, "MPIR_Request", "kind", 2, 4);
    PUT(r, "MPIR_Request", "cc", cc, 4);
    /* The status, as MPICH sets it on a completed receive (its source and
     * tag as asked here) and ch4 on an unexpected message (its size). */
    uint64_t st = r + (uint64_t)synth_off(s, "MPIR_Request", "status");
    PUT(st, "MPI_Status", "count_lo", (uint64_t)recv_sz & 0xffffffffu, 4);
    PUT(st, "MPI_Status", "count_hi_and_cancelled", ((uint64_t)recv_sz >> 32) << 1, 4);
    PUT(st, "MPI_Status", "MPI_SOURCE", (uint64_t)(int64_t)(cc == 0 ? rank : -1), 4);
    PUT(st, "MPI_Status", "MPI_TAG", (uint64_t)(int64_t)(cc == 0 ? tag : -1), 4);
    if (stock && gen_v5(s->gen)) { /* 5.0: the envelope in the status */
        PUT(st, "MPI_Status", "MPI_SOURCE", (uint64_t)(int64_t)rank, 4);
        PUT(st, "MPI_Status", "MPI_TAG", (uint64_t)(int64_t)tag, 4);
    } else if (stock) { /* MPIDIG_prepare_recv_req (mpidig_recv.h) */
        synth_put(s, r + (uint64_t)am_off(s, "u.recv.source"), (uint64_t)(int64_t)rank, 4);
        synth_put(s, r + (uint64_t)am_off(s, "u.recv.tag"), (uint64_t)(int64_t)tag, 4);
    }
    if (stock) {
        synth_put(s, r + (uint64_t)am_off(s, "u.recv.context_id"), ctx, s->ctx);
        synth_put(s, r + (uint64_t)am_off(s, "count"), (uint64_t)count, s->ptr);
        synth_put(s, r + (uint64_t)am_off(s, "datatype"), datatype, 4);
        synth_put(s, r + (uint64_t)am_off(s, "buffer"), 0x7000, s->ptr);
        PUT(r, "MPIR_Request", "comm", comm_of_context(s, ctx, 0), s->ptr);
        return r;
    }
    if (!gen_ch3(s->gen)) { /* the envelope lives in the list entry */
        remember(s, r, ctx, rank, tag, count);
        return r;
    }
    synth_put(s, r + (uint64_t)match_off(s, "tag"), (uint64_t)(int64_t)tag, 4);
    synth_put(s, r + (uint64_t)match_off(s, "rank"), (uint64_t)(int64_t)rank, 2);
    synth_put(s, r + (uint64_t)match_off(s, "context_id"), ctx, 2);
    synth_put(s, r + (uint64_t)req_dev(s, "user_count"), (uint64_t)count, s->ptr);
    synth_put(s, r + (uint64_t)req_dev(s, "datatype"), datatype, 4);
    synth_put(s, r + (uint64_t)req_dev(s, "user_buf"), 0x7000, s->ptr);
    synth_put(s, r + (uint64_t)req_dev(s, "recv_data_sz"), (uint64_t)recv_sz, s->ptr);
    return r;
}

unsigned synth_datatype(struct synth *s, int index, long size)
{
    uint64_t direct = find_sym(s, "MPIR_Datatype_direct");
    int dsz = synth_sizeof(s, "MPIR_Datatype");
    if (!direct) {
        direct = synth_alloc(s, 8 * dsz);
        synth_symbol(s, "MPIR_Datatype_direct", direct);
    }
    unsigned h = 0x8c000000u | (unsigned)index;
    uint64_t dt = direct + (uint64_t)index * (uint64_t)dsz;
    PUT(dt, "MPIR_Datatype", "handle", h, 4);
    PUT(dt, "MPIR_Datatype", "ref_count", 1, 4);
    PUT(dt, "MPIR_Datatype", "size", (uint64_t)size, s->ptr);
    return h;
}

/* SYNTH_CH4_STOCK: MPIDIG's list of VCI 0, oldest first; an unexpected
 * message's request as create_unexp_rreq makes it (mpidig_pt2pt_callbacks.c:
 * 221-250): unmatched (cc 1), MPI_BYTE of its size, its extension's
 * status saying whether the data is here (cc 0 given) or only the
 * rendezvous envelope. */
static void stock_list(struct synth *s, int unexpected, const uint64_t *reqs, int n)
{
    uint64_t head = s->ch4_global + (uint64_t)synth_off(s, "MPIDI_CH4_Global_t", "per_vci") +
                    (uint64_t)synth_off(s, "MPIDI_per_vci_t", unexpected ? "unexp_list"
                                                                        : "posted_list");
    synth_put(s, head, n ? reqs[0] : 0, s->ptr);
    for (int i = 0; i < n; i++) {
        PUT(reqs[i], "MPIR_Request", "next", i + 1 < n ? reqs[i + 1] : 0, s->ptr);
        if (!unexpected)
            continue;
        uint64_t st = reqs[i] + (uint64_t)synth_off(s, "MPIR_Request", "status");
        uint64_t bytes = rd(s, st + (uint64_t)synth_off(s, "MPI_Status", "count_lo"), 4);
        int eager = rd(s, reqs[i] + (uint64_t)synth_off(s, "MPIR_Request", "cc"), 4) == 0;
        uint64_t ext = rd(s, reqs[i] + (uint64_t)am_off(s, "req"), s->ptr);
        PUT(reqs[i], "MPIR_Request", "cc", 1, 4);
        PUT(reqs[i], "MPIR_Request", "comm", 0, s->ptr);
        synth_put(s, reqs[i] + (uint64_t)am_off(s, "count"), bytes, s->ptr);
        synth_put(s, reqs[i] + (uint64_t)am_off(s, "datatype"), 0x4c00010du, 4);
        synth_put(s, ext + (uint64_t)synth_off(s, "MPIDIG_req_ext_t", "status"),
                  eager ? 0x4u : 0x84u, 8);
    }
}

void synth_recv_list(struct synth *s, int unexpected, const uint64_t *reqs, int n)
{
    if (gen_stock(s->gen)) {
        stock_list(s, unexpected, reqs, n);
        return;
    }
    if (!gen_ch3(s->gen)) {
        /* ch4: an unexpected message's request keeps cc 1 until matched;
         * its entry has the wire context, a posted receive's the plain. */
        for (int i = 0; unexpected && i < n; i++) {
            PUT(reqs[i], "MPIR_Request", "cc", 1, 4);
            uint64_t st = reqs[i] + (uint64_t)synth_off(s, "MPIR_Request", "status");
            const struct rec *r = recalled(s, reqs[i]);
            PUT(st, "MPI_Status", "MPI_SOURCE", (uint64_t)(int64_t)r->rank, 4);
            PUT(st, "MPI_Status", "MPI_TAG", (uint64_t)(int64_t)r->tag, 4);
        }
        debugq(s, unexpected ? "MPIR_Unexpq_head" : "MPIR_Recvq_head", reqs, n, !unexpected, 0);
        return;
    }
    /* ch3 from 4.0.3 on never enters a blocking MPI_Recv in MPIR_Recvq_head
     * (mpid_recv.c): its own lists are all there is. */
    uint64_t head = 0;
    if (synth_read_ptr(s, unexpected ? "MPID_Recvq_unexpected_head_ptr"
                                     : "MPID_Recvq_posted_head_ptr", &head) != 0)
        abort();
    synth_put(s, head, n ? reqs[0] : 0, s->ptr);
    for (int i = 0; i < n; i++) /* oldest first, as MPI matches */
        PUT(reqs[i], "MPIR_Request", "next", i + 1 < n ? reqs[i + 1] : 0, s->ptr);
}

uint64_t synth_send_req(struct synth *s, long count, unsigned datatype, int cc)
{
    if (gen_stock(s->gen)) { /* a shared-memory send (ch4_send.h: is_local 1) */
        uint64_t r = stock_request(s, 1, cc);
        synth_put(s, r + (uint64_t)am_off(s, "count"), (uint64_t)count, s->ptr);
        synth_put(s, r + (uint64_t)am_off(s, "datatype"), datatype, 4);
        synth_put(s, r + (uint64_t)am_off(s, "buffer"), 0x8000, s->ptr);
        synth_put(s, r + (uint64_t)synth_off(s, "MPIR_Request", "dev") +
                         (uint64_t)synth_off(s, "MPIDI_Devreq_t", "is_local"), 1, 4);
        return r;
    }
    uint64_t r = synth_alloc(s, synth_sizeof(s, "MPIR_Request"));
    PUT(r, "MPIR_Request", "handle", 0xac000001u, 4);
    PUT(r, "MPIR_Request", "kind", 1, 4);
    PUT(r, "MPIR_Request", "cc", cc, 4);
    if (s->gen != SYNTH_CH3_402)
        remember(s, r, 0, 0, 0, count); /* the envelope comes with synth_sendq */
    if (!gen_ch3(s->gen))
        return r;
    synth_put(s, r + (uint64_t)req_dev(s, "user_count"), (uint64_t)count, s->ptr);
    synth_put(s, r + (uint64_t)req_dev(s, "datatype"), datatype, 4);
    synth_put(s, r + (uint64_t)req_dev(s, "user_buf"), 0x8000, s->ptr);
    return r;
}

void synth_sendq(struct synth *s, const uint64_t *reqs, const int *ranks, const int *tags,
                 const unsigned *ctxs, int n)
{
    if (gen_stock(s->gen)) { /* no queue: the requests alone, with no tag */
        for (int i = 0; i < n; i++) {
            synth_send_dest(s, reqs[i], ranks[i]);
            PUT(reqs[i], "MPIR_Request", "comm", comm_of_context(s, ctxs[i], 1), s->ptr);
        }
        return;
    }
    if (s->gen != SYNTH_CH3_402) {
        for (int i = 0; i < n; i++) {
            struct rec *r = (struct rec *)recalled(s, reqs[i]);
            r->ctx = ctxs[i];
            r->rank = ranks[i];
            r->tag = tags[i];
            if (gen_ch3(s->gen)) /* ch3 keeps the wire context in the request */
                synth_put(s, reqs[i] + (uint64_t)match_off(s, "context_id"), ctxs[i], 2);
        }
        debugq(s, "MPIR_Sendq_head", reqs, n, 1, 1);
        return;
    }
    uint64_t prev = 0;
    for (int i = 0; i < n; i++) { /* each new entry goes to the head */
        uint64_t e = synth_alloc(s, synth_sizeof(s, "MPIR_Sendq"));
        PUT(e, "MPIR_Sendq", "sreq", reqs[i], s->ptr);
        PUT(e, "MPIR_Sendq", "rank", ranks[i], 4);
        PUT(e, "MPIR_Sendq", "tag", tags[i], 4);
        PUT(e, "MPIR_Sendq", "context_id", ctxs[i], 4);
        PUT(e, "MPIR_Sendq", "next", prev, s->ptr);
        prev = e;
    }
    synth_put(s, sym(s, "MPIR_Sendq_head"), prev, s->ptr);
}

uint64_t synth_persistent_send(struct synth *s, uint64_t comm, unsigned ctx, int dest, int tag)
{
    uint64_t r = stock_request(s, 3, 1);
    int preq = synth_off(s, "MPIR_Request", "dev") + synth_off(s, "MPIDI_Devreq_t", "ch4.preq");
    synth_put(s, r + (uint64_t)(preq + synth_off(s, "MPIDI_prequest_t", "rank")),
              (uint64_t)dest, 4);
    synth_put(s, r + (uint64_t)(preq + synth_off(s, "MPIDI_prequest_t", "tag")), (uint64_t)tag,
              4);
    if (!gen_v5(s->gen))
        synth_put(s, r + (uint64_t)(preq + synth_off(s, "MPIDI_prequest_t", "context_id")), ctx,
                  2);
    PUT(r, "MPIR_Request", "comm", comm, s->ptr);
    return r;
}

void synth_send_dest(struct synth *s, uint64_t req, int dest)
{
    synth_put(s, req + (uint64_t)am_off(s, "u.send.dest"), (uint64_t)(int64_t)dest, 4);
}

void synth_comm_free(struct synth *s, uint64_t comm)
{
    PUT(comm, "MPIR_Comm", "ref_count", 0, 4);
}

void synth_stock_finalized(struct synth *s, uint64_t world)
{
    if (!gen_v5(s->gen)) { /* 4.0.2: the world's reference gone */
        synth_comm_free(s, world);
        return;
    }
    /* MPIR_finalize_builtin_comms forgets the builtins; MPII_Finalize
     * marks the world model finalized; ch4 has no VCI left. */
    uint64_t pr = sym(s, "MPIR_Process");
    PUT(pr, "MPIR_Process_t", "comm_world", 0, s->ptr);
    PUT(pr, "MPIR_Process_t", "comm_self", 0, s->ptr);
    synth_comm_free(s, world);
    uint64_t state = synth_alloc(s, 4);
    synth_put(s, state, 2, 4);
    synth_symbol(s, "MPIR_world_model_state", state);
    synth_vcis(s, 0);
}

unsigned synth_request_handle(struct synth *s, uint64_t req)
{
    return (unsigned)rd(s, req + (uint64_t)synth_off(s, "MPIR_Request", "handle"), 4);
}

uint64_t synth_nbc(struct synth *s, uint64_t comm, int tag, int peer, int done)
{
    uint64_t r = stock_request(s, 10, done ? 0 : 1); /* MPIDU_Sched_start (mpidu_sched.c) */
    PUT(r, "MPIR_Request", "comm", comm, s->ptr);
    uint64_t next = comm + (uint64_t)synth_off(s, "MPIR_Comm", "next_sched_tag");
    if ((int)rd(s, next, 4) <= tag) /* MPIDU_Sched_next_tag: the comm counts on */
        synth_put(s, next, (uint64_t)tag + 1, 4);
    if (done)
        return r;
    uint64_t sc = synth_alloc(s, synth_sizeof(s, "MPIDU_Sched"));
    PUT(sc, "MPIDU_Sched", "tag", tag, 4);
    PUT(sc, "MPIDU_Sched", "req", r, s->ptr);
    /* Its entries: a send to peer, done; a receive from it, started. */
    int esz = synth_sizeof(s, "MPIDU_Sched_entry");
    uint64_t e = synth_alloc(s, 2 * esz), u = (uint64_t)synth_off(s, "MPIDU_Sched_entry", "u");
    PUT(e, "MPIDU_Sched_entry", "type", 1, 4);
    PUT(e, "MPIDU_Sched_entry", "status", 2, 4);
    synth_put(s, e + u + (uint64_t)synth_off(s, "MPIDU_Sched_send", "dest"), (uint64_t)peer, 4);
    PUT(e + (uint64_t)esz, "MPIDU_Sched_entry", "type", 2, 4);
    PUT(e + (uint64_t)esz, "MPIDU_Sched_entry", "status", 1, 4);
    synth_put(s, e + (uint64_t)esz + u + (uint64_t)synth_off(s, "MPIDU_Sched_recv", "src"),
              (uint64_t)peer, 4);
    PUT(sc, "MPIDU_Sched", "entries", e, s->ptr);
    PUT(sc, "MPIDU_Sched", "num_entries", 2, 4);
    uint64_t head = rd(s, s->scheds, s->ptr); /* DL_APPEND: last of the list */
    if (!head) {
        synth_put(s, s->scheds, sc, s->ptr);
        return r;
    }
    while (rd(s, head + (uint64_t)synth_off(s, "MPIDU_Sched", "next"), s->ptr))
        head = rd(s, head + (uint64_t)synth_off(s, "MPIDU_Sched", "next"), s->ptr);
    PUT(head, "MPIDU_Sched", "next", sc, s->ptr);
    return r;
}

void synth_vcis(struct synth *s, int n)
{
    /* 5.0: communicators hash to n_vcis, all n_total_vcis have lists */
    PUT(s->ch4_global, "MPIDI_CH4_Global_t", "n_vcis", gen_v5(s->gen) && n > 1 ? 1 : n, 4);
    if (gen_v5(s->gen))
        PUT(s->ch4_global, "MPIDI_CH4_Global_t", "n_total_vcis", n, 4);
}

/* ---------------------------------------------------------------- callbacks */

static long fail_at, calls, live;
static struct synth *job_members[8];
static int njob_members;

void synth_join_job(struct synth *s, int identity)
{
    s->identity = identity;
    if (njob_members < 8)
        job_members[njob_members++] = s;
}

void synth_leave_jobs(void)
{
    njob_members = 0;
}

void synth_fail_malloc_at(long n)
{
    fail_at = n ? calls + n : 0;
}

long synth_malloc_calls(void)
{
    return calls;
}

long synth_live_blocks(void)
{
    return live;
}

static void *cb_malloc(size_t n)
{
    calls++;
    if (fail_at && calls == fail_at)
        return NULL;
    void *p = malloc(n);
    if (p)
        live++;
    return p;
}

static void cb_free(void *p)
{
    if (p)
        live--;
    free(p);
}

static char last_dprints[256];

static void cb_dprints(const char *m)
{
    snprintf(last_dprints, sizeof last_dprints, "%s", m ? m : "");
}

const char *synth_last_dprints(void)
{
    return last_dprints;
}

static char *cb_errorstring(int code)
{
    (void)code;
    return (char *)"synthetic debugger error";
}

static void put_image_info(mqs_image *i, mqs_image_info *info)
{
    ((struct obj *)i)->info = info;
}
static mqs_image_info *get_image_info(mqs_image *i)
{
    return ((struct obj *)i)->info;
}
static void put_process_info(mqs_process *p, mqs_process_info *info)
{
    ((struct obj *)p)->info = info;
}
static mqs_process_info *get_process_info(mqs_process *p)
{
    return ((struct obj *)p)->info;
}
static mqs_job_info *job_info;
static void put_job_info(mqs_job *j, mqs_job_info *info)
{
    (void)j;
    job_info = info;
}
static mqs_job_info *get_job_info(mqs_job *j)
{
    (void)j;
    return job_info;
}

static enum synth_host_kind host_kind;

void synth_host_kind(enum synth_host_kind k)
{
    host_kind = k;
}

static void get_type_sizes(mqs_process *proc, mqs_target_type_sizes *ts)
{
    struct synth *s = ((struct obj *)proc)->s;
    int ptr = host_kind == SYNTH_HOST_OTHER_SIZES ? 12 - s->ptr : s->ptr;
    ts->short_size = 2;
    ts->int_size = 4;
    ts->long_size = ptr;
    ts->long_long_size = 8;
    ts->pointer_size = ptr;
}

static int find_symbol(mqs_image *i, char *name, mqs_taddr_t *addr)
{
    uint64_t a = find_sym(((struct obj *)i)->s, name); /* never 0: memory starts higher */
    if (!a)
        return 1001;
    *addr = a;
    return mqs_ok;
}

static int find_function(mqs_image *i, char *name, mqs_lang_code l, mqs_taddr_t *addr)
{
    (void)l;
    return find_symbol(i, name, addr);
}

/* MPICH's structs known by their tag only: "typedef struct X {...} X_t". */
static int tag_only(const char *name)
{
    return strcmp(name, "MPIDI_VC") == 0 || strcmp(name, "MPIDI_VCRT") == 0;
}

static mqs_type *cb_find_type(mqs_image *i, char *name, mqs_lang_code l)
{
    (void)l;
    struct synth *s = ((struct obj *)i)->s;
    if (s->watch[0] && strstr(name, s->watch))
        s->watched++, fprintf(stderr, "WATCH %s\n", name);
    if (host_kind != SYNTH_HOST_GDB)
        return (mqs_type *)find_type(s, name);
    /* gdb: "struct TAG" for any struct; a bare name only if it is a
     * typedef; TAG_t for the tag-only ones. */
    if (strncmp(name, "struct ", 7) == 0)
        return strlen(name + 7) > 2 && strcmp(name + strlen(name) - 2, "_t") == 0
                   ? NULL
                   : (mqs_type *)find_type(s, name + 7);
    size_t n = strlen(name);
    if (n > 2 && strcmp(name + n - 2, "_t") == 0) {
        char tag[64];
        snprintf(tag, sizeof tag, "%.*s", (int)(n - 2), name);
        if (tag_only(tag))
            return (mqs_type *)find_type(s, tag);
    }
    return tag_only(name) ? NULL : (mqs_type *)find_type(s, name);
}

void synth_watch_types(struct synth *s, const char *part)
{
    snprintf(s->watch, sizeof s->watch, "%s", part ? part : "");
    s->watched = 0;
}

int synth_types_watched(const struct synth *s)
{
    return s->watched;
}

static int field_offset(mqs_type *t, char *field)
{
    const struct type *ty = (const struct type *)t;
    for (int i = 0; i < ty->nfields; i++)
        if (strcmp(ty->f[i].name, field) == 0)
            return ty->f[i].off;
    return -1;
}

static int cb_sizeof(mqs_type *t)
{
    return ((const struct type *)t)->size;
}

static int global_rank(mqs_process *p)
{
    return ((struct obj *)p)->s->world_rank;
}

static mqs_image *get_image(mqs_process *p)
{
    struct synth *s = ((struct obj *)p)->s;
    return (mqs_image *)&(s->image_of ? s->image_of : s)->image;
}

void synth_share_image(struct synth *s, struct synth *owner)
{
    s->image_of = owner;
}

uint64_t synth_symbol_at(struct synth *s, const char *name)
{
    return find_sym(s, name);
}

static int fetch(mqs_process *p, mqs_taddr_t addr, int size, void *buf)
{
    struct synth *s = ((struct obj *)p)->s;
    if (size < 0 || addr < SYNTH_BASE || addr - SYNTH_BASE > s->used ||
        (uint64_t)size > s->used - (addr - SYNTH_BASE))
        return 1002;
    memcpy(buf, s->mem + (addr - SYNTH_BASE), (size_t)size);
    if (s->unsteady) { /* the target moves on: one byte changes after each read */
        s->unsteady ^= s->unsteady << 13;
        s->unsteady ^= s->unsteady >> 17;
        s->unsteady ^= s->unsteady << 5;
        s->mem[s->unsteady % s->used] ^= (unsigned char)(s->unsteady >> 24 | 1);
    }
    return mqs_ok;
}

static void to_host(mqs_process *p, const void *in, void *out, int size)
{
    struct synth *s = ((struct obj *)p)->s;
    unsigned char tmp[16];
    const unsigned char *src = in;
    if (size > 16)
        size = 16;
    /* This host is little-endian (x86-64, the project's machines). */
    for (int i = 0; i < size; i++)
        tmp[i] = s->big_endian ? src[size - 1 - i] : src[i];
    memcpy(out, tmp, (size_t)size);
}

static mqs_job *get_process_job(mqs_process *p)
{
    (void)p;
    return (mqs_job *)&job_info;
}

static int get_process_identity(mqs_process *p)
{
    return ((struct obj *)p)->s->identity;
}

static mqs_process *get_process(mqs_job *j, int identity)
{
    (void)j;
    for (int i = 0; i < njob_members; i++)
        if (job_members[i]->identity == identity)
            return (mqs_process *)&job_members[i]->process;
    return NULL;
}

static const struct synth_host host = {
    {cb_malloc, cb_free, cb_dprints, cb_errorstring, put_image_info, get_image_info,
     put_process_info, get_process_info, put_job_info, get_job_info},
    {get_type_sizes, find_function, find_symbol, cb_find_type, field_offset, cb_sizeof},
    {global_rank, get_image, fetch, to_host, get_process_job, get_process_identity},
    {get_process},
};

const struct synth_host *synth_callbacks(void)
{
    return &host;
}

mqs_image *synth_image(struct synth *s)
{
    return (mqs_image *)&s->image;
}

mqs_process *synth_process(struct synth *s)
{
    return (mqs_process *)&s->process;
}
